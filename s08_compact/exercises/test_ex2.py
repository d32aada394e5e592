"""Exercise 2: What fills the context.

Task: Give `/context` a last line that names the three biggest tool results not yet cleared,
biggest first (of two the same size, the older first), each as its call is shown, with its size
in characters: `biggest results: read_file: big.txt (12,000 characters), bash: cat log (3,400),
glob: *.py (120)`; fewer if there are fewer; with none, `biggest results: none`.

Hint: `history_counts` walks the results; `call_summary` shows a call.
"""

from pathlib import Path

from course.check import (
    FakeClient,
    assistant,
    expect_equal,
    load,
    new_session,
    result,
    run,
    scratch,
    screen,
    text,
    tool_use,
    user,
)

CODE = Path(__file__).resolve().parent.parent / "code.py"
CLEARED = ("[Cleared to save context: the result of read_file: old.txt, 90,000 characters. "
           "Call the tool again if you need it.]")


def last_line(chapter, messages):
    with scratch() as work:
        session = new_session(chapter, FakeClient(), work)
        session.messages = messages
        with screen() as shown:
            chapter.command_context(session, "")
    return shown.text.splitlines()[-1]


def check(code):
    chapter = load(code)
    messages = [
        user(text("Look around.")),
        assistant(tool_use("t1", "read_file", {"path": "old.txt"}),
                  tool_use("t2", "glob", {"pattern": "*.py"})),
        user(result("t1", CLEARED), result("t2", "g" * 120)),
        assistant(tool_use("t3", "bash", {"command": "cat log"}),
                  tool_use("t4", "read_file", {"path": "small.txt"})),
        user(result("t3", "b" * 3400), result("t4", "s" * 120)),
        assistant(tool_use("t5", "read_file", {"path": "big.txt"})),
        user(result("t5", "B" * 12_000)),
    ]
    expect_equal(last_line(chapter, messages),
                 "biggest results: read_file: big.txt (12,000 characters), bash: cat log "
                 "(3,400), glob: *.py (120)",
                 "/context should end with the three biggest results not cleared, biggest "
                 "first (of two the same size, the older first).")
    expect_equal(last_line(chapter, messages[:3]),
                 "biggest results: glob: *.py (120 characters)",
                 "With one result not cleared, /context names that one.")
    expect_equal(last_line(chapter, messages[:1]), "biggest results: none",
                 "With no result, /context says `biggest results: none`.")


def test_exercise():
    run(check, CODE)
