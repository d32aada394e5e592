"""Exercise 1: uniq while planning.

Task: In plan mode only commands that read may run, and `uniq -c notes.md` is refused, because
`uniq` is not in the table `READ_ONLY`. Let it run, with the options `-c`, `-d` and `-u`. But
`uniq` takes a second path, and writes it: `uniq notes.md out.txt` replaces out.txt. A uniq
with more than one path must still be refused, and so must any other option.

Hint: One entry in `READ_ONLY`; then, in `reads_inside`, where the arguments are known, count
uniq's.
"""

from pathlib import Path

from course.check import (
    FakeClient,
    expect_equal,
    load,
    new_session,
    reply,
    result,
    run,
    scratch,
    text,
    tool_use,
)

CODE = Path(__file__).resolve().parent.parent / "code.py"
NOTES = "a\na\nb\n"
DENIED = ("deny", "Denied: plan mode is on, and bash may change things. Only reading tools and "
                  "read-only bash run now. Finish the plan and submit it with exit_plan_mode.")


def check(code):
    chapter = load(code)
    call = tool_use("toolu_1", "bash", {"command": "uniq -c notes.md"})
    client = FakeClient(reply(text("Counting."), call), reply(text("Two a, one b.")))
    with scratch({"notes.md": NOTES}) as work:
        session = new_session(chapter, client, work, plan_mode=True)
        chapter.run_turn(session, "count the lines")

        def decide(command):
            return chapter.check_permission(session, "bash", {"command": command})

        expect_equal(session.messages[2]["content"],
                     [result("toolu_1", "      2 a\n      1 b\n[exit code: 0]")],
                     "In plan mode, uniq -c notes.md is still refused: list uniq in READ_ONLY.")
        for command in ("uniq notes.md", "uniq -d notes.md", "uniq -cu notes.md", "uniq"):
            expect_equal(decide(command), ("allow", "changes nothing"),
                         f"In plan mode, {command!r} only reads, but it is refused.")
        for command in ("uniq notes.md out.txt", "uniq -c notes.md out.txt",
                        "uniq -- notes.md out.txt", "uniq -f 1 notes.md", "uniq --co notes.md",
                        "uniq /etc/hostname", "uniq notes.md > out.txt"):
            expect_equal(decide(command), DENIED,
                         f"In plan mode, {command!r} is no longer refused; it can write a file "
                         "or read outside the workdir.")
        made = sorted(path.name for path in work.iterdir())
    expect_equal(made, ["notes.md"], "A command in plan mode left a file behind.")


def test_exercise():
    run(check, CODE)
