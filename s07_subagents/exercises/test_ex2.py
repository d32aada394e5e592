"""Exercise 2: find, when it only finds.

Task: `find . -name greet.py` only prints names, so a model that plans may want it, but in plan
mode it is refused: `find` is not in `READ_ONLY`, and its words are not options of the usual
kind (`-name` is one word, not the letters n, a, m, e). Let find count as a command that only
reads when its words are folders first (paths inside the workdir), then only the tests
`-name NAME`, `-type f` or `-type d`, and `-maxdepth N`. Any other word still refuses it:
`-delete`, `-exec`, `-fprint FILE` (it writes), `-L` (it follows symlinks out), `-newer`.

Hint: A small function of its own, called at the start of `reads_inside` for find; `path_inside`
checks the folders.
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
FINDING = ["find", "find .", "find src", "find . -type f", "find . -maxdepth 1 -name greet.py",
           "find src -type d -name src", "find . -name greet.py | wc -l"]
CHANGING = ["find . -delete", "find . -name greet.py -delete", "find . -fprint out.txt",
            "find -L .", "find . -name", "find . -type l", "find . -newer greet.py",
            "find /etc -name passwd", "find .. -name greet.py", "find . -name x > out.txt",
            "find . -exec cat greet.py +", "find . -nam greet.py"]
DENIED = ("deny", "Denied: plan mode is on, and bash may change things. Only reading tools and "
                  "read-only bash run now. Finish the plan and submit it with exit_plan_mode.")


def check(code):
    chapter = load(code)
    call = tool_use("toolu_1", "bash", {"command": "find . -name greet.py"})
    client = FakeClient(reply(text("Where is it?"), call), reply(text("In the top folder.")))
    with scratch({"greet.py": "print('hi')\n", "src/notes.md": "x\n"}) as work:
        session = new_session(chapter, client, work, plan_mode=True)
        chapter.run_turn(session, "where is greet.py")

        def decide(command):
            return chapter.check_permission(session, "bash", {"command": command})

        expect_equal(session.messages[2]["content"],
                     [result("toolu_1", "./greet.py\n[exit code: 0]")],
                     "In plan mode, find . -name greet.py is still refused: let find count as "
                     "reading when it only finds.")
        for command in FINDING:
            expect_equal(decide(command), ("allow", "changes nothing"),
                         f"In plan mode, {command!r} only finds, but it is refused.")
        for command in CHANGING:
            expect_equal(decide(command), DENIED,
                         f"In plan mode, {command!r} can change things or look outside the "
                         "workdir, but it is allowed.")
        session.plan_mode = False
        expect_equal(decide("find . -delete")[0], "ask",
                     "Out of plan mode, find . -delete should still ask.")


def test_exercise():
    run(check, CODE)
