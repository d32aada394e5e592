"""Exercise 1: One more command that only reads.

Task: `sha256sum notes.md` only reads, yet in `default` mode it asks, because the table
`READ_ONLY` does not list it. Let it run without a question. The other rules of
`is_read_only` still hold: `sha256sum /etc/hostname` (a path outside the workdir) and
`sha256sum notes.md > sums.txt` (a redirection) still ask.

Hint: One entry in one table, in PERMISSIONS, with no options. Then look at why the other two
still ask."""

import hashlib
from pathlib import Path

from course.check import (
    FakeClient,
    answers,
    expect_equal,
    load,
    new_session,
    reply,
    result,
    run,
    scratch,
    text,
    tool_use,
    user,
)

CODE = Path(__file__).resolve().parent.parent / "code.py"
DENIED = ("The user denied this call. Do not try it again as it is; ask the user, "
          "or find another way.")
NOTES = "# Notes\n"


def check(code):
    chapter = load(code)
    commands = ["sha256sum notes.md", "sha256sum /etc/hostname", "sha256sum notes.md > sums.txt"]
    calls = [tool_use(f"toolu_{n}", "bash", {"command": c}) for n, c in enumerate(commands, 1)]
    client = FakeClient(reply(text("Hashing."), *calls), reply(text("Done.")))
    with scratch({"notes.md": NOTES}) as work, answers() as keyboard:  # each question: EOF, no
        session = new_session(chapter, client, work)
        chapter.run_turn(session, "hash it")
        made = sorted(path.name for path in work.iterdir())
    digest = hashlib.sha256(NOTES.encode()).hexdigest()
    expect_equal(session.messages[2]["content"][0],
                 result("toolu_1", f"{digest}  notes.md\n[exit code: 0]"),
                 "sha256sum notes.md still asks before it runs: list sha256sum as a command "
                 "that only reads.")
    expect_equal(session.messages[2], user(result("toolu_1", f"{digest}  notes.md\n"
                                                  "[exit code: 0]"),
                                           result("toolu_2", DENIED, is_error=True),
                                           result("toolu_3", DENIED, is_error=True)),
                 "sha256sum with a path outside the workdir, or with a redirection, no longer "
                 "asks.")
    expect_equal(len(keyboard.asked), 2, "There should be two questions: for /etc/hostname and "
                 "for the redirection.")
    expect_equal(made, ["notes.md"], "A command the user denied left a file behind.")


def test_exercise():
    run(check, CODE)
