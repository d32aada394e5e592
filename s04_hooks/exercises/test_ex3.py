"""Exercise 3: A hook that changes the call.

Task: Let a PreToolUse hook answer `{"updated_input": {...}}`: the call then runs with that
input instead of the model's. The new input is checked as the model's is: against the schema
(a problem is the result, as `A PreToolUse hook changed the input, and it does not fit: bash
needs the field 'command'.`), and by the permission check, so that rewriting a call cannot get
around a deny rule, and a question shows the call that will really run. The history keeps the
model's own tool_use, and PostToolUse hooks see the new input.

Hint: `run_hooks` builds one outcome from all the hooks: carry `updated_input` in it (only when
a hook gave one). In `run_tool`, use it before `check_permission`, and ask with a copy of the
block that holds the new input.
"""

import json
from pathlib import Path

from course.check import (
    FakeClient,
    answers,
    assistant,
    expect,
    expect_equal,
    load,
    new_session,
    reply,
    result,
    run,
    scratch,
    screen,
    text,
    tool_use,
    user,
)

CODE = Path(__file__).resolve().parent.parent / "code.py"
REWRITES = {  # what the hook turns each call into
    "cat notes.md": {"command": "head -n 1 notes.md"},
    "ls": {"command": "rm -f keep.txt"},
    "pwd": {"cmd": "ls"},
    "a.txt": {"path": "b.txt", "content": "b\n"},
}
DENIED = ("The user denied this call. Do not try it again as it is; ask the user, "
          "or find another way.")


def rewrite(event):
    given = event["tool_input"]
    new = REWRITES.get(given.get("command", given.get("path")))
    return {"updated_input": new} if new else None


def check(code):
    chapter = load(code)
    calls = [tool_use("toolu_1", "bash", {"command": "cat notes.md"}),
             tool_use("toolu_2", "bash", {"command": "ls"}),
             tool_use("toolu_3", "bash", {"command": "pwd"}),
             tool_use("toolu_4", "write_file", {"path": "a.txt", "content": "a\n"})]
    client = FakeClient(reply(text("Working."), *calls), reply(text("Done.")))
    seen_after = []
    files = {"notes.md": "# Notes\nmore\n", "keep.txt": "keep\n",
             ".agent/settings.json": json.dumps({"permissions": {"deny": ["bash(rm*)"]}})}
    with scratch(files) as work, answers() as keyboard, screen() as shown:
        session = new_session(chapter, client, work, settings=chapter.load_settings(work))
        chapter.add_hook(session, "PreToolUse", rewrite)
        chapter.add_hook(session, "PostToolUse", lambda event: seen_after.append(event))
        chapter.run_turn(session, "work")
        left = sorted(path.name for path in work.iterdir())
    results = session.messages[2]["content"]
    expect_equal(results[0], result("toolu_1", "# Notes\n[exit code: 0]"),
                 "The hook's updated_input is not what runs: cat notes.md should run as "
                 "head -n 1 notes.md.")
    expect_equal(results[1], result("toolu_2", "Denied by the rule 'bash(rm*)' in "
                                    ".agent/settings.json.", is_error=True),
                 "A call the hook rewrote into rm -f keep.txt is not denied by the rule bash(rm*): "
                 "check the permission of the new input.")
    expect_equal(results[2], result("toolu_3", "A PreToolUse hook changed the input, and it does "
                                    "not fit: bash needs the field 'command'.", is_error=True),
                 "A new input that does not fit the schema is not refused as it should be.")
    expect_equal(results[3], result("toolu_4", DENIED, is_error=True),
                 "The write_file the hook rewrote should ask, and EOF denies it.")
    expect("  ? allow write_file: b.txt" in shown.text.splitlines(),
           "The question does not show the call that would run (write_file: b.txt).")
    expect_equal(len(keyboard.asked), 1, "There should be one question, for the write_file.")
    expect_equal(left, [".agent", "keep.txt", "notes.md"],
                 "A denied call still changed the workdir.")
    expect_equal(session.messages[1], assistant(text("Working."), *calls),
                 "The history should keep the model's own tool_use blocks.")
    expect_equal([event["tool_input"] for event in seen_after], [REWRITES["cat notes.md"]],
                 "PostToolUse hooks do not see the input that ran.")
    expect_equal(session.messages[-1], assistant(text("Done.")), "The turn did not end.")
    expect_equal(session.messages[2], user(*results), "The turn has an extra result.")


def test_exercise():
    run(check, CODE)
