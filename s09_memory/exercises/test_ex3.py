"""Exercise 3: The rules of the folder it reads in.

Task: An AGENTS.md below the workdir is not read at the start. Claude Code reads a subfolder's
file when a tool first touches a file there; do that for read_file. When read_file reads a file
whose folder is below the workdir and holds an AGENTS.md this conversation has not had, the
tool result gets a blank line and that file marked as the memory block marks it,
`<file path="ABSOLUTE PATH">TEXT</file>` (TEXT without its last newline, on lines of its own),
and its path and size join `session.memory`, so that /memory lists it and a second read does
not add it again. Only that folder's own AGENTS.md, not the ones between it and the workdir.

Hint: a handler of your own for read_file in the MEMORY section can call `read_file` and add
to what it returns; `TOOL_HANDLERS` maps the tool's name to its handler.
"""

from pathlib import Path

from course.check import (
    FakeClient,
    expect_equal,
    load,
    new_session,
    reply,
    run,
    scratch,
    screen,
    text,
    tool_use,
)

CODE = Path(__file__).resolve().parent.parent / "code.py"


def check(code):
    chapter = load(code)
    files = {"AGENTS.md": "Top.\n", "notes/AGENTS.md": "Field notes: never edit them.\n",
             "notes/garden.txt": "robin\n", "notes/park.txt": "wren\n", "top.txt": "top\n"}
    with scratch(files) as work:
        client = FakeClient(
            reply(tool_use("t1", "read_file", {"path": "notes/garden.txt"}),
                  tool_use("t2", "read_file", {"path": "notes/park.txt"}),
                  tool_use("t3", "read_file", {"path": "top.txt"})),
            reply(text("Read.")))
        session = new_session(chapter, client, work, tool_environment={"HOME": str(work / "h")})
        with screen():
            chapter.run_turn(session, "Read the notes.")
        results = [block["content"] for block in client.calls[1]["messages"][2]["content"]]
        rules = work / "notes/AGENTS.md"
        expect_equal(results, [
            f'     1\trobin\n\n<file path="{rules}">\nField notes: never edit them.\n</file>',
            "     1\twren", "     1\ttop"],
            "The first read in notes/ should end with a blank line and notes/AGENTS.md marked "
            "with its path; later reads there, and reads in the workdir itself, add nothing.")
        expect_equal(session.memory, [(work / "AGENTS.md", 5), (rules, 30)],
                     "session.memory should list notes/AGENTS.md after the workdir's file.")


def test_exercise():
    run(check, CODE)
