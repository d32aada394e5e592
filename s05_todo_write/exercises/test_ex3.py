"""Exercise 3: Remind the model of its list.

Task: The reminder says `Update your todos.` but not what the list holds, and after a long
stretch of work the model may have lost track. When the list is not empty, follow the
reminder's block, in the same user turn, with a second text block that holds the list as
`/todos` shows it, between tags: `<todos>`, a newline, the list, a newline, `</todos>`. With an
empty list the reminder comes alone, as before. The reminder block itself stays as it is, so
that what matches it (the scenario's `when`) still does.

Hint: `todo_reminder` returns the blocks to add; `render_todos` writes the list.
"""

from pathlib import Path

from course.check import (
    FakeClient,
    assistant,
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
REMINDER = text("<reminder>Update your todos.</reminder>")
LIST = [{"content": "Read a.txt", "status": "in_progress", "activeForm": "Reading a.txt"},
        {"content": "Report", "status": "pending"}]
RENDERED = "[>] Reading a.txt\n[ ] Report\n(0/2 completed)"


def read(number):
    return tool_use(f"toolu_{number}", "read_file", {"path": "a.txt"})


def read_result(number):
    return result(f"toolu_{number}", "     1\ta")


def check(code):
    chapter = load(code)
    calls = [tool_use("toolu_1", "todo_write", {"todos": LIST})] + [read(n) for n in (2, 3, 4)]
    client = FakeClient(*(reply(call) for call in calls), reply(text("Done.")))
    with scratch({"a.txt": "a\n"}) as work:
        session = new_session(chapter, client, work)
        chapter.run_turn(session, "go")
    history = [user(text("go")), assistant(calls[0]), user(result("toolu_1", RENDERED)),
               assistant(calls[1]), user(read_result(2)), assistant(calls[2]),
               user(read_result(3)), assistant(calls[3]),
               user(read_result(4), REMINDER, text(f"<todos>\n{RENDERED}\n</todos>")),
               assistant(text("Done."))]
    expect_equal(session.messages, history, "The reminder does not come with the list: after "
                 "the reminder's block, add <todos>, the list and </todos> in one text block.")
    expect_equal(client.calls[-1]["messages"], history[:-1],
                 "The last request does not send the reminder and the list.")
    client = FakeClient(*(reply(read(n)) for n in (1, 2, 3)), reply(text("Done.")))
    with scratch({"a.txt": "a\n"}) as work:
        session = new_session(chapter, client, work)
        chapter.run_turn(session, "go")
    expect_equal(session.messages[-2], user(read_result(3), REMINDER),
                 "With an empty list, the reminder should come alone, as before.")


def test_exercise():
    run(check, CODE)
