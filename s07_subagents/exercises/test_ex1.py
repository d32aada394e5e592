"""Exercise 1: A subagent that only explores.

Task: When the description's first word is `explore` (in any case: `Explore the app`), the
subagent is read-only, whatever the parent's mode: it is not offered `write_file` or
`edit_file`, and a changing call of its own (a write, an edit, a `touch`) is refused without a
question, with the result `Denied: an explore subagent only reads, and NAME may change things.
Read only, and end with your report.` Reading runs as before. Any other description runs as
now, and the parent's mode does not change.

Hint: `offered_tools` and `subagent_refuses` decide for a subagent (`session.subagent` is its
`Subagent`: `description`, `hidden`); `plan_mode_allows` tells a call that changes nothing from
one that may.
"""

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
)

CODE = Path(__file__).resolve().parent.parent / "code.py"
FILES = {"app/greet.py": "def greet(name):\n    return f'Hello, {name}.'\n"}


def denied(name):
    return (f"Denied: an explore subagent only reads, and {name} may change things. Read only, "
            "and end with your report.")


def delegate(chapter, work, description):
    """One prompt whose agent call has this description; the subagent tries to write, edit,
    touch and list. (the requests, the session, the questions asked)"""
    calls = [tool_use("toolu_w", "write_file", {"path": "notes.txt", "content": "x"}),
             tool_use("toolu_e", "edit_file", {"path": "app/greet.py", "old_string": "Hello",
                                               "new_string": "Hi"}),
             tool_use("toolu_t", "bash", {"command": "touch made.txt"}),
             tool_use("toolu_l", "bash", {"command": "ls app"})]
    client = FakeClient(
        reply(tool_use("toolu_a", "agent", {"description": description,
                                            "prompt": "Where is greet defined?"})),
        reply(text("Looking."), *calls), reply(text("In app/greet.py.")), reply(text("Done.")))
    session = new_session(chapter, client, work)
    with answers() as keyboard:  # a question gets no answer, which is a no
        chapter.run_turn(session, "Find greet.")
    return client.calls, session, keyboard.asked


def check(code):
    chapter = load(code)
    every = [tool["name"] for tool in chapter.TOOLS if tool["name"] not in
             chapter.SUBAGENT_HIDDEN]
    with scratch(FILES) as work:
        requests, session, asked = delegate(chapter, work, "Explore the app")
        expect_equal([tool["name"] for tool in requests[1]["tools"]],
                     [name for name in every if name not in ("write_file", "edit_file")],
                     "An explore subagent is still offered the tools that change files.")
        expect_equal(requests[2]["messages"][-1]["content"], [
            result("toolu_w", denied("write_file"), is_error=True),
            result("toolu_e", denied("edit_file"), is_error=True),
            result("toolu_t", denied("bash"), is_error=True),
            result("toolu_l", "greet.py\n[exit code: 0]")],
            "An explore subagent's changing calls are not refused as the task says (its ls "
            "should still run).")
        expect_equal(asked, [], "An explore subagent's changing call asked the user; it is "
                     "refused without a question.")
        expect_equal(sorted(path.name for path in work.iterdir()), ["app"],
                     "An explore subagent changed the workdir.")
        expect_equal(session.plan_mode, False, "The parent's mode changed.")
    with scratch(FILES) as work:
        requests, _, _ = delegate(chapter, work, "Find greet, then explore")
        expect_equal([tool["name"] for tool in requests[1]["tools"]], every,
                     "A subagent whose description does not start with explore is read-only "
                     "too; only the first word decides.")


def test_exercise():
    run(check, CODE)
