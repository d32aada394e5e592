"""Exercise 2: No reminder when the work is done.

Task: Once every item of the list is completed, reminding the model to update it is noise.
Change the reminder's policy: while the list is not empty and every item in it is completed,
tool rounds are not counted, so no reminder comes, until a todo_write brings an item that is
not completed. An empty list is reminded about as before (three rounds without an update),
and so is a list with an open item.

Hint: The count is kept in `todo_reminder`; it is one condition more.
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
DONE = [{"content": "Fix the bug", "status": "completed"},
        {"content": "Run the tests", "status": "completed"}]
OPEN = [{"content": "Fix the bug", "status": "completed"},
        {"content": "Run the tests", "status": "pending"}]


def read(number):
    return tool_use(f"toolu_{number}", "read_file", {"path": "a.txt"})


def turn(chapter, todos):
    """A todo_write of `todos`, four rounds of reading, then an answer: the history."""
    calls = [tool_use("toolu_1", "todo_write", {"todos": todos})] + [read(n) for n in (2, 3, 4, 5)]
    client = FakeClient(*(reply(call) for call in calls), reply(text("Done.")))
    with scratch({"a.txt": "a\n"}) as work:
        session = new_session(chapter, client, work)
        chapter.run_turn(session, "go")
    return session.messages


def expected(todos, rendered, reminded):
    history = [user(text("go")), assistant(tool_use("toolu_1", "todo_write", {"todos": todos})),
               user(result("toolu_1", rendered))]
    for n in (2, 3, 4, 5):
        history += [assistant(read(n)),
                    user(result(f"toolu_{n}", "     1\ta"), *([REMINDER] if n == reminded else []))]
    return history + [assistant(text("Done."))]


def check(code):
    chapter = load(code)
    expect_equal(turn(chapter, DONE),
                 expected(DONE, "[x] Fix the bug\n[x] Run the tests\n(2/2 completed)", None),
                 "With every item completed, the reminder still comes after three rounds: "
                 "do not count rounds then.")
    expect_equal(turn(chapter, OPEN),
                 expected(OPEN, "[x] Fix the bug\n[ ] Run the tests\n(1/2 completed)", 4),
                 "With an item still pending, the reminder no longer comes on the third round "
                 "after the update.")
    expect_equal(turn(chapter, []), expected([], "(0/0 completed)", 4),
                 "With an empty list, the reminder no longer comes on the third round.")


def test_exercise():
    run(check, CODE)
