"""Exercise 1: git grep while planning.

Task: In plan mode only commands that read may run, and `git grep -n greet` is refused,
because `grep` is not among the git subcommands that `is_read_only` knows. Let it run. But
`git grep` has an option that runs a program: `-O` (`--open-files-in-pager`) opens the matching
files in a pager that you name, such as `-Ovim`. A call with that option must still be refused.

Hint: One word in `READ_ONLY_GIT`, and the option (both spellings) in `WRITING_OPTIONS`.
"""

import subprocess
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
GREET = "def greet(name):\n    return f'Hello, {name}'\n"


def denied():
    return ("deny", "Denied: plan mode is on, and bash may change things. Only reading tools and "
                    "read-only bash run now. Finish the plan and submit it with exit_plan_mode.")


def check(code):
    chapter = load(code)
    call = tool_use("toolu_1", "bash", {"command": "git grep -n greet"})
    client = FakeClient(reply(text("Searching."), call), reply(text("Found it.")))
    with scratch({"greet.py": GREET}) as work:
        for git in (["git", "init", "-q"], ["git", "add", "greet.py"]):
            subprocess.run(git, cwd=work, check=True, capture_output=True)
        session = new_session(chapter, client, work, plan_mode=True)
        chapter.run_turn(session, "find greet")

        def decide(command):
            return chapter.check_permission(session, "bash", {"command": command})

        expect_equal(session.messages[2]["content"],
                     [result("toolu_1", "greet.py:1:def greet(name):\n[exit code: 0]")],
                     "In plan mode, git grep -n greet is still refused: let it count as a "
                     "command that only reads.")
        for command in ("git grep -Ovim greet", "git grep -O greet", "git push",
                        "git grep --open-files-in-pager=less greet", "git grep x > out"):
            expect_equal(decide(command), denied(),
                         f"In plan mode, {command!r} is no longer refused; it can run a program "
                         "or change things.")
        expect_equal(decide("git log --oneline"), ("allow", "changes nothing"),
                     "In plan mode, git log --oneline no longer runs.")


def test_exercise():
    run(check, CODE)
