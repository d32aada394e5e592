"""Exercise 3: The files it had read.

Task: A summary may leave out the files read. Just before the user's last prompt, the new
history's user message gets the text block `Files read before the summary: a.txt, src/b.py`:
the paths of the old history's read_file calls as the model wrote them, in the order first
read, each once. With none read, no block.

Hint: `compacted_history` runs while `session.messages` is still the old history.
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
    screen,
    text,
    tool_use,
    user,
)

CODE = Path(__file__).resolve().parent.parent / "code.py"
PROMPT = "Tidy a.txt."


def new_history(chapter, messages):
    """The texts of the new history's one message, after /compact on these messages."""
    with scratch() as work:
        session = new_session(chapter, FakeClient(reply(text("S."))), work, prompt=PROMPT)
        session.messages = messages
        with screen():
            chapter.summarise(session, "manual")
    return [block["text"] for block in session.messages[0]["content"]][1:]


def check(code):
    chapter = load(code)
    prompt = f"The user's last prompt, which the work is for:\n\n{PROMPT}"
    messages = [
        user(text(PROMPT)),
        assistant(tool_use("t1", "read_file", {"path": "a.txt"}),
                  tool_use("t2", "bash", {"command": "cat c.txt"})),
        user(result("t1", "a"), result("t2", "c")),
        assistant(tool_use("t3", "read_file", {"path": "src/b.py", "offset": 2}),
                  tool_use("t4", "read_file", {"path": "a.txt"})),
        user(result("t3", "b"), result("t4", "a")),
        assistant(text("Read.")),
    ]
    expect_equal(new_history(chapter, messages),
                 ["Files read before the summary: a.txt, src/b.py", prompt],
                 "After a summary, the new history should name the files read_file read, each "
                 "once, in the order first read, just before the user's last prompt.")
    expect_equal(new_history(chapter, messages[:1] + messages[-1:]), [prompt],
                 "When no file was read, the new history gets no list of files.")


def test_exercise():
    run(check, CODE)
