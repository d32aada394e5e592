"""Exercise 1: A hook that keeps the secrets.

Task: Write a Python hook for PreToolUse, `protect_env(event)`, in HOOKS beside
`check_python_syntax`. It blocks any call that names the `.env` file (a string in the call's
`tool_input` that contains `.env`), with the reason
`.env holds the secrets; the agent does not touch it.`, and returns None for every other call.
The loop does the rest: the model gets `Blocked by a PreToolUse hook: ...`, even in `bypass`
mode. To see it in a run, register it in `make_session` beside the example hook; the check
registers it itself, with `add_hook(session, "PreToolUse", protect_env)`.

Hint: The event is a dict: `event["tool_input"]` holds the call's fields.
"""

from pathlib import Path

from course.check import (
    FakeClient,
    expect_equal,
    load,
    need,
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
BLOCKED = ("Blocked by a PreToolUse hook: .env holds the secrets; the agent does not touch it.")
CALLS = [  # (tool, input, the result's content, is_error)
    ("read_file", {"path": ".env"}, BLOCKED, True),
    ("bash", {"command": "cat .env | head -n 1"}, BLOCKED, True),
    ("write_file", {"path": "config/.env", "content": "KEY=x\n"}, BLOCKED, True),
    ("read_file", {"path": "notes.md"}, "     1\t# Notes", False),
    ("bash", {"command": "echo fine"}, "fine\n[exit code: 0]", False),
]


def check(code):
    chapter = load(code)
    (protect_env,) = need(chapter, "protect_env")
    calls = [tool_use(f"toolu_{n}", name, given) for n, (name, given, _, _) in
             enumerate(CALLS, 1)]
    client = FakeClient(reply(text("Looking."), *calls), reply(text("Done.")))
    files = {".env": "KEY=secret\n", "notes.md": "# Notes\n"}
    with scratch(files) as work:
        session = new_session(chapter, client, work, mode="bypass")
        chapter.add_hook(session, "PreToolUse", protect_env)
        chapter.run_turn(session, "look")
        made = sorted(path.relative_to(work).as_posix() for path in work.rglob("*"))
    results = [result(f"toolu_{n}", content, is_error)
               for n, (_, _, content, is_error) in enumerate(CALLS, 1)]
    for got, wanted, (name, given, _, _) in zip(session.messages[2]["content"], results, CALLS,
                                                strict=False):
        expect_equal(got, wanted, f"The call {name} {given} does not end as it should with "
                     "protect_env registered.")
    expect_equal(session.messages[2], user(*results), "The turn's results are not one for each "
                 "call, in order.")
    expect_equal(made, [".env", "notes.md"], "A blocked write_file still wrote a file.")
    event = {"hook_event_name": "PreToolUse", "cwd": "/tmp", "tool_name": "glob",
             "tool_input": {"pattern": "*.md"}}
    expect_equal(protect_env(event), None, "protect_env should return None for a call that "
                 "does not name .env.")


def test_exercise():
    run(check, CODE)
