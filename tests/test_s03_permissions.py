"""s03_permissions: one decision point before every tool call.

The permission tests run on every chapter from s03 on (the behaviour is carried
forward unchanged); the done-when runs and the command-line checks of a bad
settings file run the s03 program itself as a learner does.
"""

import json
import os
from pathlib import Path

import pytest

import support
from support import (
    FakeClient,
    assistant,
    load_chapter,
    new_session,
    read_trace,
    reply,
    request,
    result,
    run_chapter,
    text,
    tool_use,
    user,
)

CHAPTERS = support.chapters_that_change("PERMISSIONS", "THE PERMISSION MECHANICS")

ASK = "    [y] yes  [a] always (saved to .agent/settings.json)  [n] no: "
ASK_ONCE = "    [y] yes  [n] no: "  # for a chain, and for a call that changes the settings
NO_ALWAYS = "    [a] always is not offered: this is not one plain command.\n"
USER_DENIED = (
    "The user denied this call. Do not try it again as it is; ask the user, or find another way."
)
ROOT_DENIED = (
    "Denied: this command deletes the root or home folder. It is never allowed, in any mode."
)
MODE_LINE = "mode: {}   (modes: default, accept_edits, bypass)\n"


def write_settings(workdir, settings):
    path = Path(workdir) / ".agent" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2) + "\n")
    return path


# ---- the decision in a whole turn -------------------------------------------

def test_a_read_only_command_runs_without_asking(chapter, tmp_path, answers):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    asked = answers()
    call = tool_use("toolu_1", "bash", {"command": "wc -l a.txt"})
    client = FakeClient(reply(text("Counting."), call), reply(text("2 lines.")))
    session = new_session(chapter, client, tmp_path)

    assert chapter.run_turn(session, "count") is True

    first = [user(text("count"))]
    second = first + [
        assistant(text("Counting."), call),
        user(result("toolu_1", "2 a.txt\n[exit code: 0]")),
    ]
    assert client.calls == [request(chapter, session, first), request(chapter, session, second)]
    assert session.messages == second + [assistant(text("2 lines."))]
    assert asked.prompts == []


def test_ask_and_yes_runs_the_call(chapter, tmp_path, answers, capsys):
    asked = answers("y")
    call = tool_use("toolu_1", "write_file", {"path": "hello.txt", "content": "Hello\n"})
    client = FakeClient(reply(text("Writing it."), call), reply(text("Done.")))
    session = new_session(chapter, client, tmp_path)

    assert chapter.run_turn(session, "write hello.txt") is True

    first = [user(text("write hello.txt"))]
    second = first + [assistant(text("Writing it."), call),
                      user(result("toolu_1", "Created hello.txt (6 characters)."))]
    assert client.calls == [request(chapter, session, first), request(chapter, session, second)]
    assert session.messages == second + [assistant(text("Done."))]
    assert asked.prompts == [ASK]
    assert (tmp_path / "hello.txt").read_text() == "Hello\n"
    assert capsys.readouterr().out == (
        "Writing it.\n"
        "  > write_file: hello.txt\n"
        "  ? allow write_file: hello.txt\n"
        "    content: (6 characters)\n"
        "    | Hello\n"
        "y\n"  # a piped answer is echoed, so the transcript reads like a session
        "    Created hello.txt (6 characters).\n"
        "Done.\n"
    )
    assert not (tmp_path / ".agent").exists()  # "y" allows once and saves nothing


@pytest.mark.parametrize("answer, echoed", [
    ("n", "n\n"), ("no", "no\n"), ("NO", "NO\n"), ("", "\n"), ("   ", "   \n"), (None, "\n"),
], ids=["n", "no", "NO", "empty", "blank", "EOF"])
def test_ask_and_no_empty_or_eof_denies(chapter, tmp_path, answers, capsys, answer, echoed):
    asked = answers(answer)
    call = tool_use("toolu_1", "write_file", {"path": "hello.txt", "content": "Hello\n"})
    client = FakeClient(reply(text("Writing it."), call), reply(text("Understood.")))
    session = new_session(chapter, client, tmp_path)

    assert chapter.run_turn(session, "write hello.txt") is True

    first = [user(text("write hello.txt"))]
    second = first + [
        assistant(text("Writing it."), call),
        user(result("toolu_1", USER_DENIED, is_error=True)),
    ]
    assert client.calls == [request(chapter, session, first), request(chapter, session, second)]
    assert session.messages == second + [assistant(text("Understood."))]
    assert asked.prompts == [ASK]
    assert os.listdir(tmp_path) == []
    assert capsys.readouterr().out == (
        "Writing it.\n"
        "  > write_file: hello.txt\n"
        "  ? allow write_file: hello.txt\n"
        "    content: (6 characters)\n"
        "    | Hello\n"
        + echoed +
        "    error: " + USER_DENIED + "\n"
        "Understood.\n"
    )


def test_ask_and_always_saves_an_allow_rule_and_keeps_the_rest(chapter, tmp_path, answers, capsys):
    path = write_settings(
        tmp_path, {"permissions": {"ask": ["bash(git push*)"], "deny": ["bash(rm*)"]}}
    )
    asked = answers("a")
    call = tool_use("toolu_1", "write_file", {"path": "hello.txt", "content": "Hello\n"})
    again = tool_use("toolu_2", "write_file", {"path": "hello.txt", "content": "Hi\n"})
    client = FakeClient(reply(text("Writing it."), call), reply(text("Done.")),
                        reply(text("Again."), again), reply(text("Done again.")))
    session = new_session(chapter, client, tmp_path, settings=chapter.load_settings(tmp_path))

    chapter.run_turn(session, "write hello.txt")

    assert path.read_text() == (
        '{\n'
        '  "permissions": {\n'
        '    "ask": [\n'
        '      "bash(git push*)"\n'
        '    ],\n'
        '    "deny": [\n'
        '      "bash(rm*)"\n'
        '    ],\n'
        '    "allow": [\n'
        '      "write_file(hello.txt)"\n'
        '    ]\n'
        '  }\n'
        '}\n'
    )
    assert os.listdir(tmp_path / ".agent") == [
        "settings.json"
    ]  # written atomically: no temporary file left
    saved = {
        "permissions": {"ask": ["bash(git push*)"], "deny": ["bash(rm*)"],
                        "allow": ["write_file(hello.txt)"]},
    }
    assert session.settings == saved
    assert chapter.load_settings(tmp_path) == saved
    assert capsys.readouterr().out == (
        "Writing it.\n"
        "  > write_file: hello.txt\n"
        "  ? allow write_file: hello.txt\n"
        "    content: (6 characters)\n"
        "    | Hello\n"
        "a\n"
        "    saved: allow write_file(hello.txt)\n"
        "    Created hello.txt (6 characters).\n"
        "Done.\n"
    )

    chapter.run_turn(session, "once more")  # the saved rule now allows it without a question

    first = [user(text("write hello.txt"))]
    second = first + [
        assistant(text("Writing it."), call),
        user(result("toolu_1", "Created hello.txt (6 characters).")),
    ]
    third = second + [assistant(text("Done.")), user(text("once more"))]
    fourth = third + [
        assistant(text("Again."), again),
        user(result("toolu_2", "Overwrote hello.txt (3 characters).")),
    ]
    assert client.calls == [
        request(chapter, session, messages) for messages in (first, second, third, fourth)
    ]
    assert session.messages == fourth + [assistant(text("Done again."))]
    assert asked.prompts == [ASK]
    assert (tmp_path / "hello.txt").read_text() == "Hi\n"


def test_always_escapes_glob_characters_in_the_saved_rule(chapter, tmp_path, answers):
    answers("a", "y")
    calls = [tool_use("toolu_1", "write_file", {"path": "notes[1].md", "content": "a"}),
             tool_use("toolu_2", "write_file", {"path": "notes[1].md", "content": "b"}),
             tool_use("toolu_3", "write_file", {"path": "notes1.md", "content": "c"})]
    client = FakeClient(reply(*calls), reply(text("Done.")))
    session = new_session(chapter, client, tmp_path)

    chapter.run_turn(session, "notes")

    # "notes[1].md" as a pattern would match "notes1.md": the saved rule matches the one name only.
    assert chapter.load_settings(tmp_path) == {
        "permissions": {"allow": ["write_file(notes[[]1].md)"]}
    }
    assert session.messages[-2] == user(result("toolu_1", "Created notes[1].md (1 characters)."),
                                        result("toolu_2", "Overwrote notes[1].md (1 characters)."),
                                        result("toolu_3", "Created notes1.md (1 characters)."))


def test_always_saves_the_path_as_the_tool_touches_it(chapter, tmp_path, answers):
    asked = answers("a")
    calls = [
        tool_use(
            "toolu_1", "write_file", {"path": str(tmp_path / "docs" / "a.md"), "content": "a"}
        ),
        tool_use("toolu_2", "write_file", {"path": "./docs/a.md", "content": "b"}),
    ]
    client = FakeClient(reply(*calls), reply(text("Done.")))
    session = new_session(chapter, client, tmp_path)

    chapter.run_turn(session, "docs")

    assert chapter.load_settings(tmp_path) == {"permissions": {"allow": ["write_file(docs/a.md)"]}}
    assert session.messages[-2] == user(result("toolu_1", "Created docs/a.md (1 characters)."),
                                        result("toolu_2", "Overwrote docs/a.md (1 characters)."))
    assert asked.prompts == [ASK]


@pytest.mark.parametrize("command, ran", [
    ("echo one\necho two", "one\ntwo\n[exit code: 0]"),
    ("echo one; touch two.txt", "one\n[exit code: 0]"),
    ("echo one > two.txt", "(no output)\n[exit code: 0]"),
])
def test_always_is_not_offered_for_a_chain_so_a_asks_again_and_nothing_is_saved(
        chapter, tmp_path, answers, capsys, command, ran):
    (tmp_path / "a.txt").write_text("hello\n")
    asked = answers("a", "y")
    calls = [
        tool_use("toolu_1", "bash", {"command": command}),
        tool_use("toolu_2", "read_file", {"path": "a.txt"}),
    ]
    client = FakeClient(reply(*calls), reply(text("Done.")))
    session = new_session(chapter, client, tmp_path)

    chapter.run_turn(session, "go")

    first = [user(text("go"))]
    second = first + [
        assistant(*calls),
        user(result("toolu_1", ran), result("toolu_2", "     1\thello")),
    ]
    assert client.calls == [request(chapter, session, first), request(chapter, session, second)]
    assert session.messages == second + [assistant(text("Done."))]
    assert asked.prompts == [ASK_ONCE, ASK_ONCE]
    assert (session.settings, chapter.load_settings(tmp_path)) == (
        {},
        {},
    )  # no allow rule covers a chain
    out = capsys.readouterr().out
    assert out[out.index(NO_ALWAYS):].splitlines()[:4] == [
        NO_ALWAYS.rstrip("\n"), "a", "    Please answer y, yes or n.", "y"]


def test_always_never_writes_a_rule_the_settings_cannot_read_back(chapter, tmp_path, answers):
    (tmp_path / "a.txt").write_text("hello\n")
    answers("a")
    calls = [tool_use("toolu_1", "write_file", {"path": "odd\nname.txt", "content": "x"}),
             tool_use("toolu_2", "read_file", {"path": "a.txt"})]
    client = FakeClient(reply(*calls), reply(text("Done.")))
    session = new_session(chapter, client, tmp_path)

    chapter.run_turn(session, "go")

    assert session.messages[-2] == user(result("toolu_1", "Created odd\nname.txt (1 characters)."),
                                        result("toolu_2", "     1\thello"))
    assert chapter.load_settings(tmp_path) == {}


# ---- the modes ---------------------------------------------------------------

@pytest.mark.parametrize("mode, answered, write_result, bash_result", [
    ("default", ["y", "y"], "Created new.txt (3 characters).", "(no output)\n[exit code: 0]"),
    ("default", ["n", "y"], None, "(no output)\n[exit code: 0]"),
    ("accept_edits", ["n"], "Created new.txt (3 characters).", None),
    ("bypass", [], "Created new.txt (3 characters).", "(no output)\n[exit code: 0]"),
])
def test_each_mode_decides_what_asks(
    chapter, tmp_path, answers, mode, answered, write_result, bash_result
):
    asked = answers(*answered)
    calls = [tool_use("toolu_1", "write_file", {"path": "new.txt", "content": "new"}),
             tool_use("toolu_2", "bash", {"command": "touch made.txt"}),
             tool_use("toolu_3", "glob", {"pattern": "*.txt"})]
    client = FakeClient(reply(text("Working."), *calls), reply(text("Done.")))
    session = new_session(chapter, client, tmp_path, mode=mode)

    chapter.run_turn(session, "go")

    made = sorted(
        name for name, done in (("new.txt", write_result), ("made.txt", bash_result)) if done
    )
    results = [
        result("toolu_1", write_result)
        if write_result
        else result("toolu_1", USER_DENIED, is_error=True),
        result("toolu_2", bash_result)
        if bash_result
        else result("toolu_2", USER_DENIED, is_error=True),
        result("toolu_3", "\n".join(made)),
    ]  # glob reads: it never asks
    first = [user(text("go"))]
    second = first + [assistant(text("Working."), *calls), user(*results)]
    assert client.calls == [request(chapter, session, first), request(chapter, session, second)]
    assert session.messages == second + [assistant(text("Done."))]
    assert asked.prompts == [ASK] * len(answered)
    assert sorted(os.listdir(tmp_path)) == made


def test_check_permission_table(chapter, tmp_path):
    def decide(mode, name, tool_input):
        session = new_session(chapter, FakeClient(), tmp_path, mode=mode)
        return chapter.check_permission(session, name, tool_input)

    write = {"path": "a.txt", "content": "x"}
    edit = {"path": "a.txt", "old_string": "x", "new_string": "y"}
    table = [
        ("default", "read_file", {"path": "a.txt"}, ("allow", "changes nothing")),
        ("default", "glob", {"pattern": "**/*"}, ("allow", "changes nothing")),
        ("default", "bash", {"command": "grep -n x a.txt"}, ("allow", "changes nothing")),
        ("default", "bash", {"command": "git status"}, ("ask", "default mode asks before this")),
        ("default", "bash", {"command": "touch a"}, ("ask", "default mode asks before this")),
        ("default", "write_file", write, ("ask", "default mode asks before this")),
        ("default", "edit_file", edit, ("ask", "default mode asks before this")),
        ("accept_edits", "read_file", {"path": "a.txt"}, ("allow", "changes nothing")),
        ("accept_edits", "write_file", write, ("allow", "accept_edits mode")),
        ("accept_edits", "edit_file", edit, ("allow", "accept_edits mode")),
        ("accept_edits", "bash", {"command": "ls"}, ("allow", "changes nothing")),
        (
            "accept_edits",
            "bash",
            {"command": "touch a"},
            ("ask", "accept_edits mode asks before this"),
        ),
        ("bypass", "bash", {"command": "touch a"}, ("allow", "bypass mode")),
        ("bypass", "write_file", write, ("allow", "bypass mode")),
        ("bypass", "read_file", {"path": "a.txt"}, ("allow", "bypass mode")),
    ]
    assert [decide(mode, name, tool_input) for mode, name, tool_input, _ in table] == [
        row[3] for row in table
    ]


# ---- rules and their precedence ---------------------------------------------------

RULES = {"permissions": {
    "allow": ["write_file", "bash(git status*)", "bash(touch *)"],
    "ask": ["write_file(*.md)", "read_file(private/*)"],
    "deny": ["write_file(secret*)", "bash(rm*)"],
}}


@pytest.mark.parametrize("mode", ["default", "accept_edits", "bypass"])
def test_rules_deny_beats_ask_beats_allow_in_every_mode(chapter, tmp_path, mode):
    session = new_session(chapter, FakeClient(), tmp_path, mode=mode, settings=RULES)

    def decide(name, **tool_input):
        return chapter.check_permission(session, name, tool_input)

    assert decide("write_file", path="secret.md", content="x") == (
        "deny", "Denied by the rule 'write_file(secret*)' in .agent/settings.json.")
    assert decide("write_file", path="notes.md", content="x") == ("ask", "rule 'write_file(*.md)'")
    assert decide("write_file", path="./docs/../notes.md", content="x") == (
        "ask",
        "rule 'write_file(*.md)'",
    )
    assert decide("write_file", path="a.txt", content="x") == ("allow", "rule 'write_file'")
    assert decide("read_file", path="private/key.txt") == ("ask", "rule 'read_file(private/*)'")
    assert decide("bash", command="touch a.txt") == ("allow", "rule 'bash(touch *)'")
    assert decide("bash", command="rm -f a.txt") == (
        "deny",
        "Denied by the rule 'bash(rm*)' in .agent/settings.json.",
    )


def test_rules_in_a_whole_turn(chapter, tmp_path, answers):
    asked = answers("y")
    calls = [tool_use("toolu_1", "write_file", {"path": "secret.md", "content": "s"}),
             tool_use("toolu_2", "write_file", {"path": "notes.md", "content": "n"}),
             tool_use("toolu_3", "write_file", {"path": "a.txt", "content": "a"})]
    client = FakeClient(reply(*calls), reply(text("Done.")))
    session = new_session(chapter, client, tmp_path, mode="bypass", settings=RULES)

    chapter.run_turn(session, "write")

    first = [user(text("write"))]
    second = first + [
        assistant(*calls),
        user(
            result(
                "toolu_1",
                "Denied by the rule 'write_file(secret*)' in .agent/settings.json.",
                is_error=True,
            ),
            result("toolu_2", "Created notes.md (1 characters)."),
            result("toolu_3", "Created a.txt (1 characters)."),
        ),
    ]
    assert client.calls == [request(chapter, session, first), request(chapter, session, second)]
    assert session.messages == second + [assistant(text("Done."))]
    assert asked.prompts == [ASK]  # only the ask rule asked, even in bypass mode
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "notes.md"]


MADE_UP = ("ask", "it changes a file the shell names for it: with $, ` or a glob, "
                  "it may be .git, .env or another file that gives power")
BASH_RULE_CASES = {
    "git status": ("allow", "rule 'bash(git status*)'"),
    "git status; rm x": ("deny", "Denied by the rule 'bash(rm*)' in .agent/settings.json."),
    "ls; rm x": ("deny", "Denied by the rule 'bash(rm*)' in .agent/settings.json."),
    "ls && rm -rf build": ("deny", "Denied by the rule 'bash(rm*)' in .agent/settings.json."),
    "ls | rm x": ("deny", "Denied by the rule 'bash(rm*)' in .agent/settings.json."),
    "ls\nrm x": ("deny", "Denied by the rule 'bash(rm*)' in .agent/settings.json."),
    "echo rm": ("allow", "changes nothing"),
    "touch a.txt": ("allow", "rule 'bash(touch *)'"),
    "git status; touch x": ("ask", "default mode asks before this"),
    "touch a.txt; touch b.txt": ("ask", "default mode asks before this"),
    "touch a.txt && curl http://x": ("ask", "default mode asks before this"),
    "touch a.txt | sh": ("ask", "default mode asks before this"),
    "git status > out.txt": ("ask", "default mode asks before this"),
    "touch $(cat list)": MADE_UP,
    "touch `cat list`": MADE_UP,
    "touch a.txt &": ("ask", "default mode asks before this"),
}


def test_bash_rules_chains_fall_through_to_the_mode(chapter, tmp_path):
    session = new_session(
        chapter,
        FakeClient(),
        tmp_path,
        settings={
            "permissions": {"allow": ["bash(git status*)", "bash(touch *)"], "deny": ["bash(rm*)"]}
        },
    )
    assert {command: chapter.check_permission(session, "bash", {"command": command})
            for command in BASH_RULE_CASES} == BASH_RULE_CASES


def test_an_allow_rule_does_not_cover_a_chain_in_a_turn(chapter, tmp_path, answers):
    (tmp_path / "x").write_text("keep")
    asked = answers("n")
    call = tool_use("toolu_1", "bash", {"command": "git status; rm x"})
    client = FakeClient(reply(call), reply(text("OK.")))
    session = new_session(
        chapter, client, tmp_path, settings={"permissions": {"allow": ["bash(git status*)"]}}
    )

    chapter.run_turn(session, "status")

    first = [user(text("status"))]
    second = first + [assistant(call), user(result("toolu_1", USER_DENIED, is_error=True))]
    assert client.calls == [request(chapter, session, first), request(chapter, session, second)]
    assert session.messages == second + [assistant(text("OK."))]
    assert asked.prompts == [ASK_ONCE]
    assert (tmp_path / "x").read_text() == "keep"


@pytest.mark.parametrize("how", ["absolute", "dot", "symlink"])
def test_a_deny_rule_on_a_path_holds_for_every_spelling_of_it(chapter, tmp_path, how):
    (tmp_path / "secret.txt").write_text("keep")
    if how == "symlink":
        (tmp_path / "alias.txt").symlink_to("secret.txt")
    path = {
        "absolute": str(tmp_path / "secret.txt"),
        "dot": "./secret.txt",
        "symlink": "alias.txt",
    }[how]
    call = tool_use("toolu_1", "write_file", {"path": path, "content": "gone"})
    client = FakeClient(reply(call), reply(text("OK.")))
    session = new_session(chapter, client, tmp_path, mode="bypass",
                          settings={"permissions": {"deny": ["write_file(secret.txt)"]}})

    chapter.run_turn(session, "write")

    assert session.messages[-2] == user(
        result(
            "toolu_1",
            "Denied by the rule 'write_file(secret.txt)' in .agent/settings.json.",
            is_error=True,
        )
    )
    assert (tmp_path / "secret.txt").read_text() == "keep"


# ---- the hard deny list ------------------------------------------------------------

def test_the_hard_deny_list_holds_in_bypass_mode_and_over_an_allow_rule(
        chapter, tmp_path, answers, monkeypatch):
    # Harmless even if the guard were broken: no process can start in this test.
    monkeypatch.setattr(chapter.subprocess, "Popen", support.no_process)
    asked = answers()
    call = tool_use("toolu_1", "bash", {"command": "rm -rf /"})
    client = FakeClient(reply(text("Cleaning up."), call), reply(text("Refused, fine.")))
    session = new_session(
        chapter, client, tmp_path, mode="bypass", settings={"permissions": {"allow": ["bash"]}}
    )

    chapter.run_turn(session, "clean")

    first = [user(text("clean"))]
    second = first + [
        assistant(text("Cleaning up."), call),
        user(result("toolu_1", ROOT_DENIED, is_error=True)),
    ]
    assert client.calls == [request(chapter, session, first), request(chapter, session, second)]
    assert session.messages == second + [assistant(text("Refused, fine."))]
    assert asked.prompts == []


HARD_DENIED = {
    "rm -rf /": "deletes the root or home folder",
    "rm -rf ~": "deletes the root or home folder",
    "sudo rm -r -f $HOME": "deletes the root or home folder",
    "rm -rf /*": "deletes the root or home folder",
    "mkfs.ext4 /dev/sda1": "formats a disk",
    "dd if=/dev/zero of=/dev/sda": "overwrites a device",
    "cat x > /dev/nvme0n1": "overwrites a device",
    ":(){ :|:& };:": "is a fork bomb",
    "sudo shutdown -h now": "stops the machine",
    "chmod -R 777 /": "opens up the whole file system",
}


@pytest.mark.parametrize("mode", ["default", "accept_edits", "bypass"])
def test_the_hard_deny_list_in_every_mode_over_any_allow_rule(chapter, tmp_path, mode):
    allow_all = {
        "permissions": {"allow": ["bash", *(f"bash({command})" for command in HARD_DENIED)]}
    }
    session = new_session(chapter, FakeClient(), tmp_path, mode=mode, settings=allow_all)
    assert {
        command: chapter.check_permission(session, "bash", {"command": command})
        for command in HARD_DENIED
    } == {
        command: ("deny", f"Denied: this command {why}. It is never allowed, in any mode.")
        for command, why in HARD_DENIED.items()
    }


# ---- the read-only classifier ------------------------------------------------------

READ_ONLY = [
    "ls",
    "ls -la src",
    "ls -l -- src",
    "pwd",
    "cat notes.md",
    "cat -n notes.md src/a.py",
    "cat -",
    "head -n 5 notes.md",
    "head -n5 notes.md",
    "head --lines=5 notes.md",
    "tail -n +2 notes.md",
    "wc -l notes.md",
    "grep -n x notes.md",
    "grep -rn TODO .",
    "grep -e -x -- notes.md",
    "grep -f notes.md src/a.py",
    "grep 'a b' notes.md",
    "grep \"a b\" 'notes.md'",
    "sort notes.md",
    "sort -u -k 2 notes.md",
    "cut -d, -f1 notes.md",
    "diff -u notes.md src/a.py",
    "echo hello",
    "echo /etc/passwd",
    "uname -a",
    "whoami",
    "true",
    "ls && pwd",
    "ls || echo none",
    "whoami; uname -a",
    "cat notes.md | grep s03 | wc -l",
    "sort -u notes.md | head -n 3",
]

NOT_READ_ONLY = [
    # redirections, substitutions, background jobs, more than one line, bad chains
    "cat a > b",
    "echo hi >> notes.md",
    "ls 2> errors.txt",
    "cat < notes.md",
    "echo $(rm x)",
    "echo `rm x`",
    "cat <(rm x)",
    "sleep 100 &",
    "ls & rm x",
    "ls\nrm x",
    "ls\r",
    "ls;",
    "ls ;; pwd",
    "ls |& cat",
    "(ls)",
    "{ ls; }",
    "! ls",
    "ls # a comment",
    "echo 'unbalanced",
    "echo 'a;b'",
    # characters the shell expands, and characters that are not plain
    "ls *",
    "cat .?/.?/etc/passwd",
    "cat [n]otes.md",
    "cat ~/notes.md",
    "cat $HOME/notes.md",
    "cat \\notes.md",
    "cat\tnotes.md",
    "cat notes.md\u00a0",
    "echo \u2800",
    # commands and options outside the allowlist, shortenings too
    "ls; rm x",
    "ls && rm x",
    "ls || rm x",
    "git log | sh",
    "ls | xargs rm",
    "git status",
    "git log --oneline -5",
    "find . -name x",
    "rm x",
    "touch x",
    "tee out.txt",
    "python3 -c 'print(1)'",
    "FOO=1 ls",
    "/bin/ls",
    "ls -R",
    "ls -L src",
    "ls --al",
    "grep -R x .",
    "grep -r --dereference-recursive x .",
    "grep --line x notes.md",
    "sort -o out.txt notes.md",
    "sort -uo out.txt notes.md",
    "sort --o=out.txt notes.md",
    "sort --output=out.txt notes.md",
    "sort -S 1 --compress-prog=sh notes.md",
    "file --comp x",
    "tail -f notes.md",
    "head -5 notes.md",
    "echo -e x",
    "wc --lines=1 notes.md",
    "head -n",
    # paths outside the workdir, as arguments or as options' values
    "cat /etc/passwd",
    "cat ../notes.md",
    "cat src/../../x",
    "cat ''",
    "diff notes.md /etc/passwd",
    "grep -f/etc/hostname x",
    "grep -f /etc/hostname x",
    "grep --file=../x y",
    "grep x -- /etc/passwd",
    "cat -- ../x",
]


def test_the_read_only_classifier(chapter, tmp_path):
    (tmp_path / "src").mkdir()
    assert {command: chapter.is_read_only(command, tmp_path)
            for command in READ_ONLY + NOT_READ_ONLY} == {
        **{command: True for command in READ_ONLY}, **{command: False for command in NOT_READ_ONLY}}
    assert (len(READ_ONLY), len(NOT_READ_ONLY)) == (32, 70)


def test_a_symlink_that_leads_out_is_not_read_only_wherever_it_is_named(chapter, tmp_path):
    (tmp_path / "out").symlink_to("/etc")
    (tmp_path / "hostname").symlink_to("/etc/hostname")
    commands = ["cat hostname", "cat out/hostname", "ls out", "grep -f hostname x",
                "grep -rn x out", "diff hostname hostname", "sort -u out/passwd"]
    assert {command: chapter.is_read_only(command, tmp_path) for command in commands} == (
        dict.fromkeys(commands, False))
    assert chapter.is_read_only("ls -l", tmp_path) is True  # it lists the links, not their folders


# ---- settings files --------------------------------------------------------------

def test_no_settings_file_means_no_rules(chapter, tmp_path):
    assert chapter.load_settings(tmp_path) == {}


def test_an_unknown_key_at_the_top_of_settings_is_named_and_stops_the_program(chapter, tmp_path):
    # a typo drops every rule in it: "permisions" once let rm run unasked
    path = write_settings(tmp_path, {"permisions": {"deny": ["bash(rm*)"]}})
    keys = ", ".join(chapter.SETTINGS_KEYS)
    with pytest.raises(chapter.SettingsError) as caught:
        chapter.load_settings(tmp_path)
    assert str(caught.value) == f"{path}: unknown key 'permisions'; the keys are: {keys}"
    assert keys == ("permissions, hooks" if chapter.CHAPTER >= "s04" else "permissions") + (
        ", approvedMcpServers" if chapter.CHAPTER >= "s11" else "")  # the servers said yes to


def test_a_good_settings_file_is_loaded_as_it_is(chapter, tmp_path):
    settings = {
        "permissions": {
            "allow": ["read_file", "bash(git *)"],
            "ask": [],
            "deny": ["edit_file(*.lock)"],
        },
    }
    write_settings(tmp_path, settings)
    assert chapter.load_settings(tmp_path) == settings


BAD_SETTINGS = [
    ('{"permissions": ', "not valid JSON (Expecting value at line 1, column 17)"),
    (
        '{"permissions": {"allow": ["bash",]}}',
        "not valid JSON (Expecting value at line 1, column 35)",
    ),
    ("[]", "the file must hold a JSON object"),
    ('"allow everything"', "the file must hold a JSON object"),
    (
        '{"permissions": ["bash"]}',
        '"permissions" must be an object with "deny", "ask" and "allow" lists',
    ),
    (
        '{"permissions": {"allowed": []}}',
        "\"permissions\" has an unknown key 'allowed'; the keys are deny, ask, allow",
    ),
    ('{"permissions": {"allow": "bash"}}', '"permissions.allow" must be a list of rules'),
    ('{"permissions": {"deny": {"bash": true}}}', '"permissions.deny" must be a list of rules'),
    (
        '{"permissions": {"allow": [3]}}',
        "cannot parse the rule 3: write a tool name, or tool(pattern)",
    ),
    (
        '{"permissions": {"ask": ["Bash(ls)"]}}',
        "cannot parse the rule 'Bash(ls)': write a tool name, or tool(pattern)",
    ),
    (
        '{"permissions": {"ask": ["bash()"]}}',
        "cannot parse the rule 'bash()': write a tool name, or tool(pattern)",
    ),
    (
        '{"permissions": {"deny": ["shell(rm*)"]}}',
        "the rule 'shell(rm*)' names no tool; the tools are: {tools}",
    ),
    (
        '{"permissions": {"allow": ["read"]}}',
        "the rule 'read' names no tool; the tools are: {tools}",
    ),
]


def test_a_bad_settings_file_raises_naming_the_file_and_the_problem(chapter, tmp_path):
    path = tmp_path / ".agent" / "settings.json"
    path.parent.mkdir()
    tools = ", ".join(chapter.TOOL_HANDLERS)
    raised = {}
    for content, _ in BAD_SETTINGS:
        path.write_text(content)
        try:
            chapter.load_settings(tmp_path)
        except chapter.SettingsError as error:
            raised[content] = str(error)
    assert raised == {
        content: f"{path}: " + problem.replace("{tools}", tools)
        for content, problem in BAD_SETTINGS
    }


def test_a_settings_file_that_is_not_utf8(chapter, tmp_path):
    path = tmp_path / ".agent" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(b'{"permissions": "\xff"}')
    with pytest.raises(chapter.SettingsError) as raised:
        chapter.load_settings(tmp_path)
    assert str(raised.value) == f"{path}: not UTF-8 text"


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, content, problem",
    [
        (
            "s03_permissions",
            '{"permissions": {"allow": ["bash",]}}',
            "not valid JSON (Expecting value at line 1, column 35)",
        ),
        (
            CHAPTERS[-1],
            '{"permissions": {"deny": ["shell(rm*)"]}}',
            "the rule 'shell(rm*)' names no tool; the tools are: {tools}",
        ),
    ],
)
def test_the_program_stops_with_one_line_on_a_bad_settings_file(tmp_path, name, content, problem):
    path = tmp_path / ".agent" / "settings.json"
    path.parent.mkdir()
    path.write_text(content)
    tools = ", ".join(load_chapter(name).TOOL_HANDLERS)

    done = run_chapter(name, "--offline", "--workdir", str(tmp_path), "x")

    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"{name}: {path}: {problem.replace('{tools}', tools)}\n"
    assert os.listdir(tmp_path) == [".agent"]


# ---- /mode ---------------------------------------------------------------------------

def test_mode_command_shows_and_switches(chapter, tmp_path, capsys):
    session = new_session(chapter, FakeClient(), tmp_path)

    chapter.run_command(session, "/mode")
    assert (session.mode, capsys.readouterr().out) == ("default", MODE_LINE.format("default"))

    chapter.run_command(session, "/mode accept_edits")
    assert (session.mode, capsys.readouterr().out) == (
        "accept_edits",
        MODE_LINE.format("accept_edits"),
    )

    chapter.command_mode(session, "bypass")
    assert (session.mode, capsys.readouterr().out) == ("bypass", MODE_LINE.format("bypass"))

    chapter.run_command(session, "/mode  default ")
    assert (session.mode, capsys.readouterr().out) == ("default", MODE_LINE.format("default"))

    chapter.run_command(session, "/mode yolo")
    assert (session.mode, capsys.readouterr().out) == (
        "default", "unknown mode 'yolo'; the modes are: default, accept_edits, bypass\n")

    chapter.run_command(session, "/nope")
    assert (
        capsys.readouterr().out
        == f"unknown command /nope; the commands are: {', '.join(chapter.COMMANDS)}\n"
    )
    assert "/mode" in chapter.COMMANDS


def test_mode_in_the_repl_changes_what_asks(chapter, tmp_path, answers, capsys):
    asked = answers("/mode accept_edits", "write it", "q")
    call = tool_use("toolu_1", "write_file", {"path": "a.txt", "content": "a"})
    client = FakeClient(reply(call), reply(text("Written.")))
    session = new_session(chapter, client, tmp_path)

    assert chapter.repl(session) == 0

    first = [user(text("write it"))]
    second = first + [assistant(call), user(result("toolu_1", "Created a.txt (1 characters)."))]
    assert client.calls == [request(chapter, session, first), request(chapter, session, second)]
    assert session.messages == second + [assistant(text("Written."))]
    prompt = f"{chapter.PROMPT_LABEL} >> "
    assert asked.prompts == [prompt] * 3  # no permission question: accept_edits writes
    assert capsys.readouterr().out == (
        "/mode accept_edits\n"
        + MODE_LINE.format("accept_edits") +
        "write it\n"
        "  > write_file: a.txt\n"
        "    Created a.txt (1 characters).\n"
        "Written.\n"
        "q\n"
    )


# ---- done when: a piped answer decides, offline, as a learner runs it ---------------

HELLO_SCRIPT = {
    "prompt": "write hello.txt",
    "turns": [
        {
            "content": [
                {"type": "text", "text": "Writing."},
                {
                    "type": "tool_use",
                    "name": "write_file",
                    "input": {"path": "hello.txt", "content": "Hello!\n"},
                },
            ]
        },
        {"content": [{"type": "text", "text": "Finished."}]},
    ],
}


@pytest.mark.slow
@pytest.mark.parametrize("answer, tool_result, file", [
    ("n\n", result("toolu_01", USER_DENIED, is_error=True), None),
    ("y\n", result("toolu_01", "Created hello.txt (7 characters)."), "Hello!\n"),
])
def test_done_when_the_piped_answer_decides(tmp_path, answer, tool_result, file):
    workdir, script, trace = tmp_path / "w", tmp_path / "script.json", tmp_path / "trace.jsonl"
    workdir.mkdir()
    script.write_text(json.dumps(HELLO_SCRIPT))

    done = run_chapter(
        "s03_permissions",
        "--offline",
        "--workdir",
        str(workdir),
        "--script",
        str(script),
        "--trace",
        str(trace),
        "write hello.txt",
        stdin=answer,
    )

    assert (done.returncode, done.stderr) == (0, "")
    calls = read_trace(trace)
    assert [call["request"]["messages"][-1] for call in calls] == [
        user(text("write hello.txt")), user(tool_result)]
    hello = workdir / "hello.txt"
    assert (hello.read_text() if hello.exists() else None) == file
    assert os.listdir(workdir) == (["hello.txt"] if file else [])
    assert done.stdout.splitlines()[-8:] == [
        "Writing.",
        "  > write_file: hello.txt",
        "  ? allow write_file: hello.txt",
        "    content: (7 characters)",
        "    | Hello!",
        ASK + answer.strip(),  # input() shows its prompt; a piped answer is echoed after it
        "    "
        + ("error: " + USER_DENIED if tool_result.get("is_error") else tool_result["content"]),
        "Finished.",
    ]
