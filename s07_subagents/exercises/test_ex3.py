"""Exercise 3: The subagent's last text.

Task: A subagent that stops without an answer (at its call limit, on an API error) loses what it
found. When it fails after writing some text, its `is_error` result ends with a blank line and
`Its last text: ` followed by the last text block it wrote. A subagent that wrote no text fails
as now, and one that answers gives its answer as now.

Hint: In `agent`, `child.messages` is still there when `run_subagent` raises ToolError: catch it,
find the last text, and raise again with more.
"""

from pathlib import Path

from course.check import (
    FakeClient,
    Missing,
    expect,
    expect_equal,
    load,
    new_session,
    reply,
    run,
    scratch,
    text,
    tool_use,
)

CODE = Path(__file__).resolve().parent.parent / "code.py"
CALL = tool_use("toolu_a", "agent", {"description": "Find greet",
                                     "prompt": "Where is greet defined?"})


def ls(number):
    return tool_use(f"toolu_{number}", "bash", {"command": "ls"})


def agent_result(chapter, *child_replies, max_calls=3):
    """The tool_result of the agent call, when the subagent's replies are these: with
    max_calls 3, the subagent may make two calls, and the parent none after it."""
    client = FakeClient(reply(CALL), *child_replies, reply(text("Done.")))
    with scratch({"greet.py": "def greet():\n    pass\n"}) as work:
        session = new_session(chapter, client, work, max_calls=max_calls)
        chapter.run_turn(session, "Find greet.")
    found = [block for message in session.messages if message["role"] == "user"
             for block in message["content"] if block.get("tool_use_id") == "toolu_a"]
    if len(found) != 1:
        raise Missing(f"The agent call got {len(found)} results; it should get one.")
    return found[0]


def check(code):
    chapter = load(code)
    stopped = agent_result(chapter, reply(text("greet.py holds it."), ls(1)),
                           reply(text("Line 1, I think."), ls(2)))
    expect(stopped.get("is_error") is True and stopped["content"].startswith(
        'The subagent "Find greet" stopped without an answer'),
           "A subagent at its call limit should still give an is_error result that says so; "
           f"it gave {stopped['content'][:120]!r}.")
    reason = stopped["content"].split("\n\nIts last text: ")[0]
    expect_equal(stopped["content"][len(reason):], "\n\nIts last text: Line 1, I think.",
                 "A subagent that stops at its call limit should pass on the last text it "
                 "wrote, after the reason and the trailer.")
    silent = agent_result(chapter, reply(ls(1)), reply(ls(2)))
    expect("Its last text" not in silent["content"],
           "A subagent that wrote no text has no last text to pass on; its result says "
           f"{silent['content']!r}.")
    answered = agent_result(chapter, reply(text("Looking."), ls(1)),
                            reply(text("In greet.py, line 1.")), max_calls=4)
    expect(answered.get("is_error") is None and answered["content"].startswith(
        "In greet.py, line 1.\n\n[subagent") and "Its last text" not in answered["content"],
           f"A subagent that answers gives its answer as before; it gave {answered!r}.")


def test_exercise():
    run(check, CODE)
