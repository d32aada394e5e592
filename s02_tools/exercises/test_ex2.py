"""Exercise 2: Add a tool.

Task: Add a tool `count_lines` with one field, `path` (a string, required), that answers
`notes.md has 3 lines.` (`1 line`, and `0 lines` for an empty file), counting lines as
read_file does. Its schema goes at the end of `FILE_TOOLS`, its function
`count_lines(session, path)` starts with `resolve_path(session.workdir, path)`, and it joins the
dispatch map in the `TOOL_HANDLERS.update(...)` at the end of THE FILE TOOLS. The rest comes
with the loop: `../x` is refused by the guard, and `{"path": "notes.md", "lines": 2}` gets
`count_lines has no field 'lines'. Its fields: path.` without your function running. A file
that is not there gets `Cannot read nope.txt: No such file or directory.`

Hint: `read_file` shows how to read a file and count its lines; copy its error handling.
"""

from pathlib import Path

from course.check import (
    FakeClient,
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
TOOL_NAMES = ["bash", "read_file", "write_file", "edit_file", "glob", "count_lines"]
CALLS = [  # (input, the result's content, is_error)
    ({"path": "notes.md"}, "notes.md has 3 lines.", False),
    ({"path": "one.txt"}, "one.txt has 1 line.", False),
    ({"path": "empty.txt"}, "empty.txt has 0 lines.", False),
    ({"path": "../x"}, "Refused: '../x' contains '..'. Paths stay inside the working directory.",
     True),
    ({"path": "notes.md", "lines": 2}, "count_lines has no field 'lines'. Its fields: path.", True),
    ({"path": "nope.txt"}, "Cannot read nope.txt: No such file or directory.", True),
]


def is_text(value):
    return isinstance(value, str) and value.strip() != ""


def check(code):
    chapter = load(code)
    names = [tool["name"] for tool in chapter.TOOLS]
    expect_equal(names, TOOL_NAMES, "The tools sent to the model do not end with count_lines yet.")
    tool = chapter.TOOLS[-1]
    schema = tool["input_schema"]
    described = schema.get("properties", {}).get("path", {})
    expect(is_text(tool.get("description")), "count_lines has no description for the model.")
    path_field = {"type": "string", "description": "..."}
    expect_equal({**schema, "properties": {"path": {**described, "description": "..."}}},
                 {"type": "object", "properties": {"path": path_field}, "required": ["path"]},
                 "The schema of count_lines is not one required string field, path, "
                 "with a description.")
    expect(is_text(described.get("description")), "The field path of count_lines has no "
           "description.")
    calls = [tool_use(f"toolu_{n}", "count_lines", given) for n, (given, _, _) in
             enumerate(CALLS, 1)]
    client = FakeClient(reply(text("Counting."), *calls), reply(text("Done.")))
    files = {"notes.md": "a\nb\nc\n", "one.txt": "x", "empty.txt": ""}
    with scratch(files) as work:
        session = new_session(chapter, client, work)
        chapter.run_turn(session, "count")
    results = [result(f"toolu_{n}", content, is_error)
               for n, (_, content, is_error) in enumerate(CALLS, 1)]
    for got, wanted, (given, _, _) in zip(session.messages[2]["content"], results, CALLS,
                                          strict=False):
        expect_equal(got, wanted, f"count_lines with {given} does not answer as it should.")
    expect_equal(session.messages[2], user(*results), "The turn's results are not one result "
                 "for each call, in order.")
    expect_equal(client.calls[0]["tools"], chapter.TOOLS, "The request does not send the tools.")


def test_exercise():
    run(check, CODE)
