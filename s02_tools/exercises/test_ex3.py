"""Exercise 3: Search the files.

Task: Add a tool `grep` with the fields `pattern` (a Python regular expression, required) and
`path` (a file or a folder, optional, default `.`). It answers one line per matching line, as
`src/b.py:3: def two():` (the path as glob shows it, the line number from 1, the line), files in
the order of their paths. A folder is searched through, like `**/*` in glob, skipping what a
link leads outside to; a path goes through the guard like every file tool's. At most
`GLOB_LIMIT` lines, then `(5 more matches not shown)`. No match: `No lines match 'zzz'.`
A pattern that is not a regex: `Bad regex '(': missing ), unterminated subpattern at
position 0.` A path that is not there: `Cannot search nope: there is no such file or folder.`

Hint: `glob_files` shows how to walk a folder safely; `re.compile` raises `re.error`.
"""

import os
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
)

CODE = Path(__file__).resolve().parent.parent / "code.py"
TOOL_NAMES = ["bash", "read_file", "write_file", "edit_file", "glob", "grep"]
FILES = {
    "work/src/a.py": "def one():\n    return 1\n",
    "work/src/b.py": "import os\n\ndef two():\n    pass\n",
    "work/notes.md": "Define the words.\n",
    "work/many.txt": "".join(f"hit {n}\n" for n in range(1, 106)),
    "outside/secret.py": "def secret():\n",
}
MANY = "\n".join(f"many.txt:{n}: hit {n}" for n in range(1, 101))
CALLS = [  # (input, the result's content, is_error)
    ({"pattern": r"def \w+"}, "src/a.py:1: def one():\nsrc/b.py:3: def two():", False),
    ({"pattern": "import", "path": "src"}, "src/b.py:1: import os", False),
    ({"pattern": "return", "path": "src/a.py"}, "src/a.py:2:     return 1", False),
    ({"pattern": "hit", "path": "many.txt"}, MANY + "\n(5 more matches not shown)", False),
    ({"pattern": "zzz"}, "No lines match 'zzz'.", False),
    ({"pattern": "("}, "Bad regex '(': missing ), unterminated subpattern at position 0.", True),
    ({"pattern": "x", "path": "../outside"},
     "Refused: '../outside' contains '..'. Paths stay inside the working directory.", True),
    ({"pattern": "x", "path": "nope"}, "Cannot search nope: there is no such file or folder.",
     True),
]


def is_text(value):
    return isinstance(value, str) and value.strip() != ""


def check(code):
    chapter = load(code)
    names = [tool["name"] for tool in chapter.TOOLS]
    expect_equal(names, TOOL_NAMES, "The tools sent to the model do not end with grep yet.")
    tool = chapter.TOOLS[-1]
    schema = tool["input_schema"]
    fields = schema.get("properties", {})
    expect(is_text(tool.get("description")), "grep has no description for the model.")
    expect(all(is_text(field.get("description")) for field in fields.values()),
           "A field of grep has no description.")
    expect_equal({**schema, "properties": {key: field["type"] for key, field in fields.items()}},
                 {"type": "object", "properties": {"pattern": "string", "path": "string"},
                  "required": ["pattern"]},
                 "The schema of grep is not a required string pattern and an optional string "
                 "path.")
    calls = [tool_use(f"toolu_{n}", "grep", given) for n, (given, _, _) in enumerate(CALLS, 1)]
    client = FakeClient(reply(text("Searching."), *calls), reply(text("Done.")))
    with scratch(FILES) as root:
        os.symlink(root / "outside" / "secret.py", root / "work" / "leak.py")
        session = new_session(chapter, client, root / "work")
        chapter.run_turn(session, "search")
    results = session.messages[2]["content"]
    for n, (given, content, is_error) in enumerate(CALLS, 1):
        expect_equal(results[n - 1] if len(results) >= n else None,
                     result(f"toolu_{n}", content, is_error),
                     f"grep with {given} does not answer as it should.")
    expect_equal(len(results), len(CALLS), "The turn has more results than calls.")


def test_exercise():
    run(check, CODE)
