"""Exercise 3: One rule for both edit tools.

Task: A rule names one tool, so protecting `src/` takes `write_file(src/*)` and
`edit_file(src/*)`. Add a rule form `edits(PATTERN)` that covers both: in `deny`, `ask` or
`allow`, it matches a call of write_file or edit_file whose path matches, as a rule of either
tool would, and nothing else (not bash, not read_file). A settings file with it loads; one with
an unknown name, such as `edit(src/*)`, is still refused. A denial names the rule:
`Denied by the rule 'edits(src/*)' in .agent/settings.json.`

Hint: `parse_rule` accepts tool names only, and `matching_rule` compares the rule's tool with
the call's: a small table, `{"edits": EDIT_TOOLS}`, serves both.
"""

import json
from pathlib import Path

from course.check import (
    FakeClient,
    Missing,
    answers,
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
SETTINGS = {"permissions": {"allow": ["edits(docs/*)"], "deny": ["edits(src/*)"]}}
DENY = ("deny", "Denied by the rule 'edits(src/*)' in .agent/settings.json.")


def check(code):
    chapter = load(code)
    files = {".agent/settings.json": json.dumps(SETTINGS), "src/greet.py": "print('hi')\n",
             "docs/a.md": "# A\n"}
    with scratch(files) as work:
        try:
            settings = chapter.load_settings(work)
        except chapter.SettingsError as error:
            raise Missing(f"A settings file with edits(...) rules does not load yet: {error}.")\
                from None
        expect_equal(settings, SETTINGS, "load_settings changed the rules it read.")
        session = new_session(chapter, FakeClient(), work, settings=settings)

        def decide(name, **tool_input):
            return chapter.check_permission(session, name, tool_input)

        expect_equal(decide("write_file", path="src/new.py", content="x"), DENY,
                     "The rule edits(src/*) does not deny write_file of src/new.py.")
        expect_equal(decide("edit_file", path="src/greet.py", old_string="hi", new_string="yo"),
                     DENY, "The rule edits(src/*) does not deny edit_file of src/greet.py.")
        expect_equal(decide("write_file", path="docs/b.md", content="x")[0], "allow",
                     "The rule edits(docs/*) does not allow write_file of docs/b.md.")
        expect_equal(decide("edit_file", path="docs/a.md", old_string="A", new_string="B")[0],
                     "allow", "The rule edits(docs/*) does not allow edit_file of docs/a.md.")
        expect_equal(decide("read_file", path="src/greet.py")[0], "allow",
                     "The rule edits(src/*) now stops read_file, which edits nothing.")
        expect_equal(decide("bash", command="touch docs/b.md")[0], "ask",
                     "The rule edits(docs/*) now allows bash; it covers the file tools only.")
        expect_equal(decide("write_file", path="notes.md", content="x")[0], "ask",
                     "write_file of notes.md, which no rule covers, no longer asks.")
        try:
            chapter.check_settings({"permissions": {"allow": ["edit(src/*)"]}})
            unknown_refused = False
        except chapter.SettingsError:
            unknown_refused = True
        expect(unknown_refused, "A rule with an unknown name, edit(src/*), is no longer refused.")
    calls = [tool_use("toolu_1", "write_file", {"path": "docs/b.md", "content": "# B\n"}),
             tool_use("toolu_2", "write_file", {"path": "src/new.py", "content": "x = 1\n"})]
    client = FakeClient(reply(text("Writing."), *calls), reply(text("Done.")))
    with scratch(files) as work, answers() as keyboard:
        session = new_session(chapter, client, work, settings=chapter.load_settings(work))
        chapter.run_turn(session, "write them")
        written = sorted(path.relative_to(work).as_posix() for path in work.rglob("*.*")
                         if ".agent" not in path.parts)
    expect_equal(session.messages[2]["content"],
                 [result("toolu_1", "Created docs/b.md (4 characters)."),
                  result("toolu_2", DENY[1], is_error=True)],
                 "In a turn, the edits(...) rules do not allow docs/b.md and deny src/new.py.")
    expect_equal((keyboard.asked, written), ([], ["docs/a.md", "docs/b.md", "src/greet.py"]),
                 "The turn asked a question, or wrote what was denied.")


def test_exercise():
    run(check, CODE)
