"""Exercise 1: No item twice.

Task: A list that holds the same step twice (`Run the tests` pending and completed, say) leaves
the model unsure which one counts. Make `todo_write` refuse it, naming the first two items
with the same content (after trimming): `Items 1 and 3 have the same content: 'Run the
tests'.` As for every refused list, the old list stays, and the call does not count as an
update for the reminder.

Hint: In `validate_todos`, once each item passed its own checks, look for a content seen before.
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
OLD = [{"content": "Old item", "status": "pending"}]
TWICE = [{"content": "Run the tests", "status": "completed"},
         {"content": "Fix the bug", "status": "in_progress"},
         {"content": " Run the tests ", "status": "pending"}]
GOOD = [{"content": "Run the tests", "status": "completed"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"}]


def check(code):
    chapter = load(code)
    client = FakeClient(reply(tool_use("toolu_1", "todo_write", {"todos": TWICE})),
                        reply(tool_use("toolu_2", "todo_write", {"todos": GOOD})),
                        reply(text("Done.")))
    with scratch() as work:
        session = new_session(chapter, client, work, todos=[dict(item) for item in OLD])
        chapter.run_turn(session, "plan")
    expect_equal(session.messages[2]["content"],
                 [result("toolu_1", "Items 1 and 3 have the same content: 'Run the tests'.",
                         is_error=True)],
                 "todo_write still accepts a list with the same item twice: make it refuse it.")
    expect_equal(session.messages[4]["content"],
                 [result("toolu_2", "[x] Run the tests\n[>] Fixing the bug\n(1/2 completed)")],
                 "A list without an item twice is no longer accepted as before.")
    expect_equal(session.todos, GOOD, "The list after the good todo_write is not that list.")
    expect_equal(session.rounds_since_todo, 0, "The good todo_write did not reset the count.")
    with scratch() as work:
        session = new_session(chapter, FakeClient(), work, todos=[dict(item) for item in OLD])
        refused = chapter.run_tool(session, tool_use("toolu_1", "todo_write", {"todos": TWICE}))
    expect_equal((refused.get("is_error"), session.todos), (True, OLD),
                 "A refused list replaced the old one.")


def test_exercise():
    run(check, CODE)
