"""s03 on: the permission question shows the whole call, and the settings are the user's.

A model that wants to get something past the user has four ways to make one line
lie (a hidden second line, a long line, the wrong field first, terminal control
bytes) and one way around the question (writing its own allow rules or hooks into
.agent/settings.json). Each is a scenario here: the exact question, nothing runs
after n, and after y exactly the shown call runs.
"""

import json

import pytest

import support
from support import (
    FakeClient,
    assistant,
    load_chapter,
    new_session,
    reply,
    request,
    result,
    text,
    tool_use,
    user,
)

CHAPTERS = support.chapters_that_change("PERMISSIONS", "THE PERMISSION MECHANICS")

ASK = "    [y] yes  [a] always (saved to .agent/settings.json)  [n] no: "
ASK_ONCE = "    [y] yes  [n] no: "
USER_DENIED = (
    "The user denied this call. Do not try it again as it is; ask the user, or find another way."
)
SETTINGS_LINE = (
    "    This call changes .agent/settings.json: the file that sets what the agent may do."
)
NO_ALWAYS = "    [a] always is not offered: this is not one plain command."
SETTINGS = {"permissions": {"deny": ["bash(rm*)"]}}


def one_call(chapter, workdir, call, **extra):
    """A session whose model makes one call, then says "Done."."""
    client = FakeClient(reply(call), reply(text("Done.")))
    return client, new_session(chapter, client, workdir, **extra)


def question(out):
    """The lines from the question to the answer line (the piped answer is echoed)."""
    lines = out.splitlines()
    start = next(number for number, line in enumerate(lines) if line.startswith("  ? allow "))
    return lines[start:]


# ---- 1. a hidden second line ------------------------------------------------------

@pytest.mark.parametrize("answer", ["y", "n"])
def test_a_command_of_two_lines_is_shown_whole_and_marked_as_several(
    chapter, tmp_path, keyboard, capsys, answer
):
    keyboard.feed(answer)
    call = tool_use("toolu_1", "bash", {"command": "echo one\ntouch two.txt"})
    client, session = one_call(chapter, tmp_path, call)

    chapter.run_turn(session, "go")

    ran = (
        result("toolu_1", "one\n[exit code: 0]")
        if answer == "y"
        else result("toolu_1", USER_DENIED, is_error=True)
    )
    assert session.messages == [
        user(text("go")),
        assistant(call),
        user(ran),
        assistant(text("Done.")),
    ]
    assert (tmp_path / "two.txt").exists() == (answer == "y")
    assert keyboard.asked == [ASK_ONCE]
    assert question(capsys.readouterr().out)[:5] == [
        "  ? allow bash: 2 lines, and every one of them runs:",
        "    | echo one",
        "    | touch two.txt",
        NO_ALWAYS,
        answer,
    ]


# ---- 2. a long line ------------------------------------------------------------------

def test_a_command_of_500_characters_is_shown_whole(chapter, tmp_path, keyboard, capsys):
    keyboard.feed("y")
    command = "touch long.txt  # and a tail: " + "x" * 470
    call = tool_use("toolu_1", "bash", {"command": command})
    client, session = one_call(chapter, tmp_path, call)

    chapter.run_turn(session, "go")

    assert len(command) == 500
    assert question(capsys.readouterr().out)[:3] == [f"  ? allow bash: {command}", NO_ALWAYS, "y"]
    assert (tmp_path / "long.txt").exists()


# ---- 3. the wrong field first ---------------------------------------------------------

def test_write_file_with_content_before_path_shows_the_path_first(
    chapter, tmp_path, keyboard, capsys
):
    keyboard.feed("n")
    call = tool_use("toolu_1", "write_file", {"content": "harmless words\n", "path": "notes.md"})
    client, session = one_call(chapter, tmp_path, call)

    chapter.run_turn(session, "go")

    assert question(capsys.readouterr().out)[:4] == [
        "  ? allow write_file: notes.md",
        "    content: (15 characters)",
        "    | harmless words",
        "n",
    ]
    assert list(tmp_path.iterdir()) == []


def test_a_20_line_content_is_previewed_and_cut_with_its_count(chapter, tmp_path, keyboard, capsys):
    keyboard.feed("y")
    content = "".join(f"line {number}\n" for number in range(1, 21))
    call = tool_use("toolu_1", "write_file", {"path": "long.txt", "content": content})
    client, session = one_call(chapter, tmp_path, call)

    chapter.run_turn(session, "go")

    assert question(capsys.readouterr().out)[:10] == [
        "  ? allow write_file: long.txt",
        f"    content: ({len(content)} characters)",
        "    | line 1",
        "    | line 2",
        "    | line 3",
        "    | line 4",
        "    | line 5",
        "    | line 6",
        "    … (14 more lines)",
        "y",
    ]
    assert (tmp_path / "long.txt").read_text() == content


def test_edit_file_shows_the_path_then_both_texts_and_replace_all(
    chapter, tmp_path, keyboard, capsys
):
    (tmp_path / "a.py").write_text("x = 1\n")
    keyboard.feed("y")
    call = tool_use("toolu_1", "edit_file", {"replace_all": True, "new_string": "x = 2",
                                             "old_string": "x = 1", "path": "a.py"})
    client, session = one_call(chapter, tmp_path, call)

    chapter.run_turn(session, "go")

    assert question(capsys.readouterr().out)[:7] == [
        "  ? allow edit_file: a.py",
        "    old_string: (5 characters)",
        "    | x = 1",
        "    new_string: (5 characters)",
        "    | x = 2",
        "    replace_all: true",
        "y",
    ]
    assert (tmp_path / "a.py").read_text() == "x = 2\n"


# ---- 4. terminal control bytes -----------------------------------------------------------

def test_control_characters_in_a_command_and_a_path_reach_the_screen_escaped(
    chapter, tmp_path, keyboard, capsys
):
    keyboard.feed("n", "n")
    calls = [tool_use("toolu_1", "bash", {"command": "touch a.txt\r\x1b[2K\x1b[1A ls"}),
             tool_use("toolu_2", "write_file", {"path": "b\x1b[31m.txt\t", "content": "x\x07"})]
    client = FakeClient(reply(*calls), reply(text("Done.")))
    session = new_session(chapter, client, tmp_path)

    chapter.run_turn(session, "go")

    out = capsys.readouterr().out
    assert [char for char in out if not char.isprintable() and char != "\n"] == []
    assert [line for line in out.splitlines() if line.startswith("  ? allow ")] == [
        "  ? allow bash: touch a.txt\\r\\x1b[2K\\x1b[1A ls",
        "  ? allow write_file: b\\x1b[31m.txt\\t",
    ]
    assert "    | x\\x07" in out.splitlines()
    assert list(tmp_path.iterdir()) == []


# ---- 5. the model cannot grant itself permissions -------------------------------------------

SELF_GRANTS = {
    "write_file": {
        "path": ".agent/settings.json",
        "content": '{"permissions": {"allow": ["bash(*)"]}}\n',
    },
    "edit_file": {
        "path": "./.agent/settings.json",
        "old_string": '"deny"',
        "new_string": '"allow"',
    },
    "bash": {"command": "echo '{}' > .agent/settings.json"},
}


@pytest.mark.parametrize("mode", ["accept_edits", "bypass"])
@pytest.mark.parametrize("tool", list(SELF_GRANTS))
def test_a_change_to_the_settings_asks_in_every_mode_and_n_leaves_the_file_as_it_was(
        chapter, tmp_path, keyboard, capsys, mode, tool):
    path = tmp_path / ".agent" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(SETTINGS))
    before = path.read_bytes()
    keyboard.feed("n")
    call = tool_use("toolu_1", tool, SELF_GRANTS[tool])
    client, session = one_call(chapter, tmp_path, call, mode=mode, settings=json.loads(before))

    chapter.run_turn(session, "go")

    assert chapter.check_permission(session, tool, SELF_GRANTS[tool]) == (
        "ask", "it changes .agent/settings.json: the file that sets what the agent may do")
    assert path.read_bytes() == before
    assert keyboard.asked == [ASK_ONCE]
    assert SETTINGS_LINE in capsys.readouterr().out.splitlines()
    assert session.messages[2] == user(result("toolu_1", USER_DENIED, is_error=True))


def test_an_allow_rule_does_not_spare_the_question_about_the_settings(chapter, tmp_path, keyboard):
    keyboard.feed("y")
    call = tool_use("toolu_1", "write_file", SELF_GRANTS["write_file"])
    client, session = one_call(chapter, tmp_path, call, mode="bypass",
                               settings={"permissions": {"allow": ["write_file(*)"]}})

    chapter.run_turn(session, "go")

    assert keyboard.asked == [ASK_ONCE]
    assert (tmp_path / ".agent" / "settings.json").read_text() == SELF_GRANTS["write_file"][
        "content"
    ]


def test_a_deny_rule_still_denies_a_change_to_the_settings(chapter, tmp_path, keyboard):
    session = new_session(chapter, FakeClient(), tmp_path,
                          settings={"permissions": {"deny": ["write_file(.agent/*)"]}})
    assert chapter.check_permission(session, "write_file", SELF_GRANTS["write_file"]) == (
        "deny", "Denied by the rule 'write_file(.agent/*)' in .agent/settings.json.")


def test_reading_the_settings_is_not_a_change(chapter, tmp_path):
    session = new_session(chapter, FakeClient(), tmp_path)
    assert [
        chapter.check_permission(session, "bash", {"command": command})[0]
        for command in (
            "cat .agent/settings.json",
            "echo x > .agent/settings.json",
            "tee .agent/settings.json",
            "cp x .agent/settings.json",
            "sed -i s/a/b/ .agent/settings.json",
        )
    ] == ["allow", "ask", "ask", "ask", "ask"]


def test_an_allow_rule_written_by_someone_else_meanwhile_is_not_adopted(
    chapter, tmp_path, keyboard, capsys
):
    path = tmp_path / ".agent" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(SETTINGS))
    session = new_session(chapter, FakeClient(), tmp_path, settings=chapter.load_settings(tmp_path))
    # Another process adds a rule to the file during the session.
    path.write_text(json.dumps({"permissions": {"deny": ["bash(rm*)"], "allow": ["bash(*)"]}}))
    keyboard.feed("a")
    call = tool_use("toolu_1", "write_file", {"path": "hello.txt", "content": "Hello\n"})
    session.client = FakeClient(reply(call), reply(text("Done.")))

    chapter.run_turn(session, "go")

    assert session.settings == {
        "permissions": {"deny": ["bash(rm*)"], "allow": ["write_file(hello.txt)"]}
    }
    assert chapter.load_settings(tmp_path) == {
        "permissions": {"deny": ["bash(rm*)"], "allow": ["bash(*)", "write_file(hello.txt)"]}}
    assert chapter.check_permission(session, "bash", {"command": "touch x"}) == (
        "ask", f"{session.mode} mode asks before this")
    assert (
        f"    note: {path} changed during this session; those changes are not used until the next "
        f"start"
        in capsys.readouterr().out.splitlines()
    )


# ---- the answers ------------------------------------------------------------------------------

@pytest.mark.parametrize("answer", ["y", "yes", "Y", " yes "])
def test_y_and_yes_allow_once(chapter, tmp_path, keyboard, answer):
    keyboard.feed(answer)
    call = tool_use("toolu_1", "write_file", {"path": "a.txt", "content": "a"})
    client, session = one_call(chapter, tmp_path, call)
    chapter.run_turn(session, "go")
    assert session.messages[2] == user(result("toolu_1", "Created a.txt (1 characters)."))
    assert not (tmp_path / ".agent").exists()


@pytest.mark.parametrize("answer", ["a", "always", "ALWAYS"])
def test_a_and_always_save_a_rule(chapter, tmp_path, keyboard, answer):
    keyboard.feed(answer)
    call = tool_use("toolu_1", "write_file", {"path": "a.txt", "content": "a"})
    client, session = one_call(chapter, tmp_path, call)
    chapter.run_turn(session, "go")
    assert chapter.load_settings(tmp_path) == {"permissions": {"allow": ["write_file(a.txt)"]}}


def test_an_answer_that_is_none_of_the_choices_asks_again_then_counts_as_no(
    chapter, tmp_path, keyboard, capsys
):
    keyboard.feed("maybe", "sure", "ok")
    call = tool_use("toolu_1", "write_file", {"path": "a.txt", "content": "a"})
    client, session = one_call(chapter, tmp_path, call)

    chapter.run_turn(session, "go")

    assert keyboard.asked == [ASK] * 3
    assert session.messages[2] == user(result("toolu_1", USER_DENIED, is_error=True))
    assert question(capsys.readouterr().out)[3:9] == [
        "maybe", "    Please answer y, yes, a, always or n.",
        "sure", "    Please answer y, yes, a, always or n.",
        "ok", "    Please answer y, yes, a, always or n.",
    ]
    assert list(tmp_path.iterdir()) == []


def test_an_answer_that_is_none_of_the_choices_then_yes_allows(chapter, tmp_path, keyboard):
    keyboard.feed("maybe", "y")
    call = tool_use("toolu_1", "write_file", {"path": "a.txt", "content": "a"})
    client, session = one_call(chapter, tmp_path, call)
    chapter.run_turn(session, "go")
    assert keyboard.asked == [ASK] * 2
    assert (tmp_path / "a.txt").read_text() == "a"


def test_eof_at_the_question_is_no_at_once(chapter, tmp_path, keyboard):
    call = tool_use("toolu_1", "write_file", {"path": "a.txt", "content": "a"})
    client, session = one_call(chapter, tmp_path, call)
    chapter.run_turn(session, "go")
    assert keyboard.asked == [ASK]
    assert client.calls[1] == request(
        chapter,
        session,
        [user(text("go")), assistant(call), user(result("toolu_1", USER_DENIED, is_error=True))],
    )


# ---- nothing the model wrote reaches the terminal raw, in any chapter -------------------------

ESC_TEXT = "red\x1b[31m\rover\x1b[2J"
ESCAPED = "red\\x1b[31m\\rover\\x1b[2J"


def raw_controls(out):
    return [char for char in out if not char.isprintable() and char != "\n"]


@pytest.mark.parametrize("name", support.PRESENT)
def test_the_models_text_and_a_tool_preview_reach_the_screen_escaped(
    name, tmp_path, keyboard, capsys
):
    chapter = load_chapter(name)
    call = tool_use("toolu_1", "bash", {"command": "printf 'out\\033[2J\\n'"})
    client = FakeClient(reply(text(ESC_TEXT), call), reply(text("Done.")))
    session = new_session(
        chapter, client, tmp_path, **({"mode": "bypass"} if name >= "s03" else {})
    )

    chapter.run_turn(session, "go")

    out = capsys.readouterr().out
    assert raw_controls(out) == []
    assert out.splitlines()[:4] == [ESCAPED, "  > bash: printf 'out\\033[2J\\n'", "    out\\x1b[2J",
                                    "    [exit code: 0]"]


@pytest.mark.parametrize("name", [name for name in support.PRESENT if name >= "s04"])
def test_a_hooks_message_reaches_the_screen_escaped_and_a_hook_cannot_answer_for_the_user(
        name, tmp_path, keyboard, capsys):
    chapter = load_chapter(name)
    keyboard.feed("n")
    calls = [tool_use("toolu_1", "bash", {"command": "ls"}),
             tool_use("toolu_2", "write_file", SELF_GRANTS["write_file"])]
    client = FakeClient(reply(*calls), reply(text("Done.")))
    session = new_session(chapter, client, tmp_path)
    chapter.add_hook(
        session, "PreToolUse", lambda event: {"decision": "block", "reason": ESC_TEXT}, "bash"
    )
    chapter.add_hook(session, "PreToolUse", lambda event: {"decision": "allow"}, "write_file")

    chapter.run_turn(session, "go")

    out = capsys.readouterr().out
    assert raw_controls(out) == []
    assert f"    error: Blocked by a PreToolUse hook: {ESCAPED}" in out.splitlines()
    assert keyboard.asked == [ASK_ONCE]  # the hook's allow does not answer the settings question
    assert not (tmp_path / ".agent").exists()


@pytest.mark.parametrize("name", [name for name in support.PRESENT if name >= "s05"])
def test_a_todo_item_reaches_the_screen_escaped(name, tmp_path, keyboard, capsys):
    chapter = load_chapter(name)
    todos = [{"content": ESC_TEXT, "status": "in_progress"}]
    client = FakeClient(
        reply(tool_use("toolu_1", "todo_write", {"todos": todos})), reply(text("Done."))
    )
    session = new_session(chapter, client, tmp_path)

    chapter.run_turn(session, "go")
    chapter.command_todos(session, "")

    out = capsys.readouterr().out
    assert raw_controls(out) == []
    assert out.splitlines()[-2:] == [f"[>] {ESCAPED}", "(0/1 completed)"]


@pytest.mark.parametrize("name", [name for name in support.PRESENT if name >= "s06"])
def test_a_plan_reaches_the_screen_escaped(name, tmp_path, keyboard, capsys):
    chapter = load_chapter(name)
    keyboard.feed("n")
    calls = [tool_use("toolu_1", "exit_plan_mode", {"plan": f"# Plan\n{ESC_TEXT}"})]
    client = FakeClient(reply(*calls))
    session = new_session(chapter, client, tmp_path)
    chapter.enter_plan(session)

    chapter.run_turn(session, "go")

    out = capsys.readouterr().out
    assert raw_controls(out) == []
    assert f"    {ESCAPED}" in out.splitlines()
