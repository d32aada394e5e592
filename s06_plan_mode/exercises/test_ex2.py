"""Exercise 2: git branch, when it only lists.

Task: `git branch` lists the branches, so a model that plans may want it; but `git branch
new-idea` makes a branch, and `-d`, `-D`, `-m`, `-c` or `--set-upstream-to` change them. Let
`git branch` count as a command that only reads when it only lists: with no argument, or only
with the options `-a`, `--all`, `-r`, `--remotes`, `-v`, `-vv`, `--verbose` and
`--show-current`, or with `--list` (or `-l`) followed by patterns. Any other form is refused
in plan mode, as it asks in default mode.

Hint: Add `branch` to `READ_ONLY_GIT`, then, in `is_read_only`, a test of its arguments in a
small function of its own.
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
LISTING = ["git branch", "git branch -a", "git branch --all -v", "git branch -r",
           "git branch --remotes --verbose", "git branch -vv", "git branch --show-current",
           "git branch --list 'feat*'", "git branch -l 'fix-*' 'main'", "git branch -a --list x"]
CHANGING = ["git branch new-idea", "git branch -d old", "git branch -D old", "git branch -m a b",
            "git branch -M b", "git branch -c a b", "git branch --set-upstream-to=origin/main",
            "git branch --delete old", "git branch -f main HEAD~1", "git branch --list x > out"]
DENIED = ("deny", "Denied: plan mode is on, and bash may change things. Only reading tools and "
                  "read-only bash run now. Finish the plan and submit it with exit_plan_mode.")


def check(code):
    chapter = load(code)
    call = tool_use("toolu_1", "bash", {"command": "git branch --show-current"})
    client = FakeClient(reply(text("Which branch?"), call), reply(text("main.")))
    with scratch({"a.txt": "a\n"}) as work:
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=work, check=True,
                       capture_output=True)
        session = new_session(chapter, client, work, plan_mode=True)
        chapter.run_turn(session, "which branch")

        def decide(command):
            return chapter.check_permission(session, "bash", {"command": command})

        expect_equal(session.messages[2]["content"],
                     [result("toolu_1", "main\n[exit code: 0]")],
                     "In plan mode, git branch --show-current is still refused: let git branch "
                     "count as reading when it only lists.")
        for command in LISTING:
            expect_equal(decide(command), ("allow", "changes nothing"),
                         f"In plan mode, {command!r} only lists, but it is refused.")
        for command in CHANGING:
            expect_equal(decide(command), DENIED,
                         f"In plan mode, {command!r} changes the branches, but it is allowed.")
        session.plan_mode = False
        expect_equal(decide("git branch new-idea")[0], "ask",
                     "Out of plan mode, git branch new-idea should still ask.")


def test_exercise():
    run(check, CODE)
