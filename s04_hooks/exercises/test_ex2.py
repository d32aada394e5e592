"""Exercise 2: A hook for a new event: PostToolUseFailure.

Task: PostToolUse runs only after a tool succeeded. Add the event `PostToolUseFailure` (after
PostToolUse in `HOOK_EVENTS`): it runs when a tool that started fails, that is when its
handler raises a ToolError, with the event fields `tool_name`, `tool_input` and `error` (the
message). A context it returns is added to the error result as PostToolUse adds one:
`Cannot read missing.txt: No such file or directory.` then, on a line of its own,
`<hook event="PostToolUseFailure">...</hook>`. A call that never ran (denied, blocked, bad
input) is no failure of the tool: no event. Settings files may use the new event too.

Hint: In `run_tool`, catch the ToolError around the handler's call only, and raise it again
with the hook's words added.
"""

from pathlib import Path

from course.check import (
    FakeClient,
    Missing,
    answers,
    expect,
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
MISSING = "Cannot read missing.txt: No such file or directory."
HINT = "Use glob to find the file first."
DENIED = ("The user denied this call. Do not try it again as it is; ask the user, "
          "or find another way.")


def check(code):
    chapter = load(code)
    expect_equal(chapter.HOOK_EVENTS,
                 ("UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop"),
                 "HOOK_EVENTS does not list PostToolUseFailure after PostToolUse yet.")
    seen = []

    def every_failure(event):
        seen.append(event)

    def hint(event):
        return {"context": HINT}

    calls = [tool_use("toolu_1", "read_file", {"path": "missing.txt"}),
             tool_use("toolu_2", "read_file", {"path": "a.txt"}),
             tool_use("toolu_3", "write_file", {"path": "b.txt", "content": "b\n"}),
             tool_use("toolu_4", "bash", {"command": "false"})]
    client = FakeClient(reply(text("Trying."), *calls), reply(text("Done.")))
    with scratch({"a.txt": "a\n"}) as work, answers():  # the question for b.txt: EOF, no
        session = new_session(chapter, client, work)
        try:
            chapter.add_hook(session, "PostToolUseFailure", every_failure)
            chapter.add_hook(session, "PostToolUseFailure", hint, matcher="read_file")
        except ValueError as error:
            raise Missing(f"add_hook refuses the event PostToolUseFailure: {error}.") from None
        chapter.run_turn(session, "try")
    expect_equal(session.messages[2]["content"][0],
                 result("toolu_1", f'{MISSING}\n<hook event="PostToolUseFailure">{HINT}</hook>',
                        is_error=True),
                 "The failed read_file does not end with the PostToolUseFailure hook's context.")
    expect_equal(session.messages[2],
                 user(session.messages[2]["content"][0], result("toolu_2", "     1\ta"),
                      result("toolu_3", DENIED, is_error=True),
                      result("toolu_4", "(no output)\n[exit code: 1]")),
                 "The other calls of the turn do not end as they did before.")
    event = {"hook_event_name": "PostToolUseFailure", "cwd": str(work), "tool_name": "read_file",
             "tool_input": {"path": "missing.txt"}, "error": MISSING}
    expect_equal(seen, [event], "PostToolUseFailure hooks should see one event, for the "
                 "read_file that failed: not for the denied call, nor for a command that exits 1.")
    session.settings = {"hooks": {"PostToolUseFailure": [{"command": "true"}]}}
    try:
        chapter.load_command_hooks(session)
    except chapter.SettingsError as error:
        raise Missing(f"A settings file cannot use PostToolUseFailure yet: {error}.") from None
    expect(session.hooks[-1].event == "PostToolUseFailure",
           "The PostToolUseFailure hook of the settings was not added.")


def test_exercise():
    run(check, CODE)
