"""The question cannot be pushed off the screen, and the > line shows what the call acts on.

Runs of white space and of characters that show as blank or as nothing (U+2800, U+3164,
zero-width and other format characters) are one marker with a count; so is a run of blank
lines; a CR is always shown, since sh runs it; a command longer than a question shows is not
offered [a], and the question says its length. The > line (born in s01) shows the field the
call acts on, whatever the order of the model's JSON.
"""

import pytest

import support
from support import FakeClient, load_chapter, new_session, reply, text, tool_use

# The question is asked in PERMISSIONS, and shown by its mechanics.
CHAPTERS = support.chapters_that_change("PERMISSIONS", "THE PERMISSION MECHANICS")
FILE_CHAPTERS = [name for name in support.PRESENT if name >= "s02"]

ASK = "    [y] yes  [a] always (saved to .agent/settings.json)  [n] no: "
ASK_ONCE = "    [y] yes  [n] no: "
NO_ALWAYS = "    [a] always is not offered: this is not one plain command."


def too_long(length):
    return (f"    [a] always is not offered: the command is {length} characters long, and a "
            "question shows 1000 at most.")


def asked(chapter, tmp_path, keyboard, capsys, tool_input, name="bash"):
    """Ask about one call, answered n: the lines from the > line to the answer, and the
    questions asked."""
    keyboard.feed("n")
    client = FakeClient(reply(tool_use("toolu_1", name, tool_input)), reply(text("Done.")))
    chapter.run_turn(new_session(chapter, client, tmp_path), "go")
    lines = capsys.readouterr().out.splitlines()
    return lines[:lines.index("n") + 1], keyboard.asked


def test_6000_spaces_are_one_marker_and_the_long_command_is_not_offered_always(
    chapter, tmp_path, keyboard, capsys
):
    command = "touch x" + " " * 6000 + "y"
    assert asked(chapter, tmp_path, keyboard, capsys, {"command": command}) == ([
        "  > bash: touch x⟨6000 spaces⟩y",
        "  ? allow bash: touch x⟨6000 spaces⟩y",
        too_long(6008),
        "n",
    ], [ASK_ONCE])


def test_characters_that_show_as_blank_or_nothing_are_escaped_and_counted(
    chapter, tmp_path, keyboard, capsys
):
    command = "touch \u2800" + "\u3164" * 300 + "x \u200bq\u200b\u200c\u200d\u2060r\u202es"
    shown = ("touch ⟨301 blank characters: \\u2800, \\u3164⟩x \\u200bq⟨4 blank characters: "
             "\\u200b, \\u200c, \\u200d, …⟩r\\u202es")
    assert asked(chapter, tmp_path, keyboard, capsys, {"command": command}) == (
        [f"  > bash: {shown}", f"  ? allow bash: {shown}", NO_ALWAYS, "n"], [ASK_ONCE]
    )


def test_300_blank_lines_in_a_command_are_one_line_of_the_question(
    chapter, tmp_path, keyboard, capsys
):
    command = "echo one\n" + "\n" * 300 + "   \n\t\ntouch two"
    assert asked(chapter, tmp_path, keyboard, capsys, {"command": command}) == ([
        "  > bash: echo one … (303 more lines)",
        "  ? allow bash: 304 lines, and every one of them runs:",
        "    | echo one",
        "    | ⟨302 blank lines⟩",
        "    | touch two",
        NO_ALWAYS,
        "n",
    ], [ASK_ONCE])


def test_a_cr_before_a_newline_is_shown(chapter, tmp_path, keyboard, capsys):
    assert asked(chapter, tmp_path, keyboard, capsys, {"command": "cd sub\r\ntouch x"}) == ([
        "  > bash: cd sub\\r … (1 more line)",
        "  ? allow bash: 2 lines, and every one of them runs:",
        "    | cd sub\\r",
        "    | touch x",
        NO_ALWAYS,
        "n",
    ], [ASK_ONCE])


def test_a_command_longer_than_the_question_is_cut_says_its_length_and_has_no_always(
    chapter, tmp_path, keyboard, capsys
):
    command = "touch " + "a" * 1200
    lines, questions = asked(chapter, tmp_path, keyboard, capsys, {"command": command})
    assert (lines[1:], questions) == ([
        f"  ? allow bash: {command[:1000]}… (206 more characters)",
        too_long(1206),
        "n",
    ], [ASK_ONCE])


def test_a_command_of_many_lines_shows_twenty_of_them_and_counts_the_rest(
    chapter, tmp_path, keyboard, capsys
):
    command = "".join(f"touch {number}\n" for number in range(1, 301))
    lines, questions = asked(chapter, tmp_path, keyboard, capsys, {"command": command})
    assert (lines[1:], questions) == ([
        "  ? allow bash: 300 lines, and every one of them runs:",
        *[f"    | touch {number}" for number in range(1, 21)],
        "    … (280 more lines, not shown)",
        NO_ALWAYS,
        "n",
    ], [ASK_ONCE])


def test_a_write_shows_its_path_first_on_both_lines_and_its_content_collapsed(
    chapter, tmp_path, keyboard, capsys
):
    content = "README.md\n" + "\n" * 300 + "KEY=1\r\n"
    tool_input = {"content": content, "path": ".env"}
    assert asked(chapter, tmp_path, keyboard, capsys, tool_input, name="write_file") == ([
        "  > write_file: .env",
        "  ? allow write_file: .env",
        "    content: (317 characters)",
        "    | README.md",
        "    | ⟨300 blank lines⟩",
        "    | KEY=1\\r",
        "    This call changes .env: the next start reads the API key and the endpoint from it.",
        "n",
    ], [ASK_ONCE])


# ---- the > line, in every chapter ----------------------------------------------------------

@pytest.mark.parametrize("name", support.PRESENT)
def test_the_call_line_shows_the_command_with_its_blanks_counted_and_its_cr(name):
    chapter = load_chapter(name)
    commands = ["touch x" + " " * 6000 + "y", "cd sub\r\ntouch x", "rm \u2800" * 2 + "\u3164" * 9]
    assert [chapter.call_summary(tool_use("toolu_1", "bash", {"command": command}))
            for command in commands] == [
        "bash: touch x⟨6000 spaces⟩y",
        "bash: cd sub\\r … (1 more line)",
        "bash: rm \\u2800rm ⟨10 blank characters: \\u2800, \\u3164⟩",
    ]


@pytest.mark.parametrize("name", FILE_CHAPTERS)
def test_the_call_line_shows_the_field_the_call_acts_on_not_the_first_of_the_json(name):
    chapter = load_chapter(name)
    calls = [
        ("write_file", {"content": "README.md\nmore", "path": ".env"}),
        ("edit_file", {"new_string": "a", "old_string": "b", "path": "notes.md"}),
        ("read_file", {"limit": 3, "path": "a.txt"}),
        ("glob", {"pattern": "**/*.py"}),
        ("bash", {"x": 1}),
    ]
    assert [chapter.call_summary(tool_use("toolu_1", tool, tool_input))
            for tool, tool_input in calls] == [
        "write_file: .env", "edit_file: notes.md", "read_file: a.txt", "glob: **/*.py",
        "bash: [1 field]",
    ]
