"""s04_hooks: the user's own code at the four fixed points of the loop.

Python hooks (add_hook) and command hooks (settings.json, command_hook) run on
every chapter from s04 on; the done-when run and the command-line check of bad
hook settings run the s04 program itself as a learner does.
"""

import copy
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

import support
from support import (
    FakeClient,
    assistant,
    ctrl_c_delivered,
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

CHAPTERS = [name for name in support.PRESENT if name >= "s04"]
EVENTS = "UserPromptSubmit, PreToolUse, PostToolUse, Stop"


def events(chapter):
    """The hook events of a chapter: s04's, SubagentStop from s07 on, PreCompact from s08 on."""
    return (EVENTS + (", SubagentStop" if chapter.CHAPTER >= "s07" else "")
            + (", PreCompact" if chapter.CHAPTER >= "s08" else ""))


def recorder(decision=None):
    """A Python hook that keeps every event it sees and returns `decision` (or calls it)."""
    def hook(event):
        hook.events.append(event)
        return decision(event) if callable(decision) else copy.deepcopy(decision)
    hook.events = []
    return hook


def with_command_hooks(chapter, session, hooks):
    """Write {"hooks": hooks} to the workdir's settings file and load it as make_session does."""
    path = chapter.settings_path(session.workdir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}))
    session.settings = chapter.load_settings(session.workdir)
    chapter.load_command_hooks(session)
    return path


def test_hook_text_marks_the_words_of_a_hook(chapter):
    assert chapter.hook_text("Stop", "Run the tests.") == '<hook event="Stop">Run the tests.</hook>'
    assert chapter.HOOK_EVENTS == tuple(events(chapter).split(", "))


# ---- UserPromptSubmit ---------------------------------------------------------------

def test_user_prompt_submit_block_sends_nothing(chapter, tmp_path, capsys):
    earlier = [user(text("earlier")), assistant(text("Earlier answer."))]
    client = FakeClient()
    session = new_session(chapter, client, tmp_path, messages=copy.deepcopy(earlier))
    hook = recorder({"decision": "block", "reason": "No keys in prompts."})
    chapter.add_hook(session, "UserPromptSubmit", hook)

    assert chapter.run_turn(session, "my key is sk-1") is False

    assert client.calls == []
    assert session.messages == earlier
    assert hook.events == [
        {"hook_event_name": "UserPromptSubmit", "cwd": str(tmp_path), "prompt": "my key is sk-1"}
    ]
    assert (
        capsys.readouterr().out
        == "[A UserPromptSubmit hook blocked this prompt: No keys in prompts.]\n"
    )


def test_user_prompt_submit_context_follows_the_prompt(chapter, tmp_path):
    client = FakeClient(reply(text("Hello.")))
    session = new_session(chapter, client, tmp_path)
    chapter.add_hook(session, "UserPromptSubmit", recorder({"context": "Today is Monday."}))
    chapter.add_hook(session, "UserPromptSubmit", recorder(None))
    chapter.add_hook(session, "UserPromptSubmit", recorder({"context": "Branch: main"}))

    assert chapter.run_turn(session, "hi") is True

    sent = [
        user(
            text("hi"), text('<hook event="UserPromptSubmit">Today is Monday.\nBranch: main</hook>')
        )
    ]
    assert client.calls == [request(chapter, session, sent)]
    assert session.messages == sent + [assistant(text("Hello."))]


# ---- PreToolUse --------------------------------------------------------------

def test_pre_tool_use_block_beats_bypass_mode(chapter, tmp_path, answers):
    asked = answers()
    calls = [tool_use("toolu_1", "write_file", {"path": "a.txt", "content": "a"}),
             tool_use("toolu_2", "bash", {"command": "echo hi"})]
    client = FakeClient(reply(text("Working."), *calls), reply(text("Writes are frozen, then.")))
    session = new_session(
        chapter,
        client,
        tmp_path,
        mode="bypass",
        settings={"permissions": {"allow": ["write_file"]}},
    )
    blocker = recorder({"decision": "block", "reason": "Writes are frozen."})
    on_bash = recorder(None)
    never = recorder(None)
    chapter.add_hook(session, "PreToolUse", blocker, matcher="write_file|edit_file")
    chapter.add_hook(session, "PreToolUse", on_bash, matcher="bash")
    chapter.add_hook(
        session, "PreToolUse", never, matcher="write"
    )  # a matcher must match the whole name

    chapter.run_turn(session, "go")

    first = [user(text("go"))]
    second = first + [assistant(text("Working."), *calls), user(
        result("toolu_1", "Blocked by a PreToolUse hook: Writes are frozen.", is_error=True),
        result("toolu_2", "hi\n[exit code: 0]"))]
    assert client.calls == [request(chapter, session, first), request(chapter, session, second)]
    assert session.messages == second + [assistant(text("Writes are frozen, then."))]
    cwd = str(tmp_path)
    assert blocker.events == [
        {
            "hook_event_name": "PreToolUse",
            "cwd": cwd,
            "tool_name": "write_file",
            "tool_input": {"path": "a.txt", "content": "a"},
        }
    ]
    assert on_bash.events == [{"hook_event_name": "PreToolUse", "cwd": cwd, "tool_name": "bash",
                               "tool_input": {"command": "echo hi"}}]
    assert never.events == []
    assert asked.prompts == []
    assert os.listdir(tmp_path) == []


def test_pre_tool_use_allow_spares_the_question(chapter, tmp_path, answers):
    asked = answers()
    call = tool_use("toolu_1", "write_file", {"path": "a.txt", "content": "a"})
    client = FakeClient(reply(call), reply(text("Written.")))
    session = new_session(chapter, client, tmp_path)  # default mode would ask
    chapter.add_hook(session, "PreToolUse", recorder({"decision": "allow"}), matcher="write_file")

    chapter.run_turn(session, "go")

    first = [user(text("go"))]
    second = first + [assistant(call), user(result("toolu_1", "Created a.txt (1 characters)."))]
    assert client.calls == [request(chapter, session, first), request(chapter, session, second)]
    assert session.messages == second + [assistant(text("Written."))]
    assert asked.prompts == []
    assert (tmp_path / "a.txt").read_text() == "a"


@pytest.mark.parametrize("command", ["sort -o.git/config notes.txt",
                                     "sort -o.agent/settings.json notes.txt"])
def test_pre_tool_use_allow_never_spares_a_glued_file_that_gives_power(chapter, tmp_path,
                                                                       answers, command):
    asked = answers("n")
    (tmp_path / "notes.txt").write_text("b\na\n")
    call = tool_use("toolu_1", "bash", {"command": command})
    client = FakeClient(reply(call), reply(text("Asked.")))
    session = new_session(chapter, client, tmp_path, mode="bypass")
    chapter.add_hook(session, "PreToolUse", recorder({"decision": "allow"}), matcher="bash")

    chapter.run_turn(session, "go")

    assert asked.prompts == ["    [y] yes  [n] no: "]
    assert session.messages[2] == user(result(
        "toolu_1", "The user denied this call. Do not try it again as it is; ask the user, or "
                   "find another way.", is_error=True))
    assert sorted(os.listdir(tmp_path)) == ["notes.txt"]


def test_pre_tool_use_allow_never_lifts_a_deny(chapter, tmp_path, answers, monkeypatch):
    # Harmless even if the guard were broken: no process can start in this test.
    monkeypatch.setattr(chapter.subprocess, "Popen", support.no_process)
    asked = answers()
    calls = [tool_use("toolu_1", "write_file", {"path": "secret.txt", "content": "s"}),
             tool_use("toolu_2", "bash", {"command": "rm -rf /"})]
    client = FakeClient(reply(*calls), reply(text("Denied twice.")))
    session = new_session(chapter, client, tmp_path, mode="bypass",
                          settings={"permissions": {"deny": ["write_file(secret*)"]}})
    hook = recorder({"decision": "allow"})
    chapter.add_hook(session, "PreToolUse", hook)

    chapter.run_turn(session, "go")

    first = [user(text("go"))]
    second = first + [
        assistant(*calls),
        user(
            result(
                "toolu_1",
                "Denied by the rule 'write_file(secret*)' in .agent/settings.json.",
                is_error=True,
            ),
            result(
                "toolu_2",
                "Denied: this command deletes the root or home folder. It is never allowed, in any "
                "mode.",
                is_error=True,
            ),
        ),
    ]
    assert client.calls == [request(chapter, session, first), request(chapter, session, second)]
    assert session.messages == second + [assistant(text("Denied twice."))]
    assert [event["tool_name"] for event in hook.events] == ["write_file", "bash"]
    assert asked.prompts == []
    assert os.listdir(tmp_path) == []


def test_ctrl_c_in_a_pre_tool_use_hook_ends_the_turn_with_a_valid_history(
    chapter, tmp_path, capsys
):
    def interrupt(event):
        raise KeyboardInterrupt

    calls = [
        tool_use("toolu_1", "bash", {"command": "echo one"}),
        tool_use("toolu_2", "bash", {"command": "echo two"}),
    ]
    client = FakeClient(reply(*calls))
    session = new_session(chapter, client, tmp_path)
    chapter.add_hook(session, "PreToolUse", interrupt)

    assert chapter.run_turn(session, "go") is False

    first = [user(text("go"))]
    assert client.calls == [request(chapter, session, first)]
    assert session.messages == first + [assistant(*calls), user(
        result("toolu_1", "Interrupted by the user.", is_error=True),
        result("toolu_2", "Interrupted by the user.", is_error=True))]
    assert capsys.readouterr().out == "  > bash: echo one\n[Interrupted.]\n"


def test_ctrl_c_in_a_user_prompt_submit_hook_cancels_the_turn(chapter, tmp_path, capsys):
    def interrupt(event):
        raise KeyboardInterrupt
    earlier = [user(text("earlier")), assistant(text("Earlier answer."))]
    client = FakeClient()
    session = new_session(chapter, client, tmp_path, messages=copy.deepcopy(earlier))
    chapter.add_hook(session, "UserPromptSubmit", interrupt)

    assert chapter.run_turn(session, "go") is False

    assert client.calls == []
    assert session.messages == earlier
    assert capsys.readouterr().out == "[Interrupted.]\n"


# ---- PostToolUse -------------------------------------------------------------

@pytest.mark.parametrize("decision", [
    {"context": "Remember to run the tests."},
    {"decision": "block", "reason": "Remember to run the tests."},
], ids=["context", "block-reason"])
def test_post_tool_use_feedback_is_added_to_the_result(chapter, tmp_path, decision):
    call = tool_use("toolu_1", "write_file", {"path": "a.txt", "content": "a"})
    client = FakeClient(reply(call), reply(text("Noted.")))
    session = new_session(chapter, client, tmp_path, mode="accept_edits")
    hook = recorder(decision)
    chapter.add_hook(session, "PostToolUse", hook, matcher="write_file")
    chapter.add_hook(
        session, "PostToolUse", recorder({"context": "not for writes"}), matcher="bash"
    )

    chapter.run_turn(session, "go")

    first = [user(text("go"))]
    second = first + [
        assistant(call),
        user(
            result(
                "toolu_1",
                'Created a.txt (1 characters).\n<hook event="PostToolUse">Remember to run the '
                'tests.</hook>',
            )
        ),
    ]
    assert client.calls == [request(chapter, session, first), request(chapter, session, second)]
    assert session.messages == second + [assistant(text("Noted."))]
    assert hook.events == [
        {
            "hook_event_name": "PostToolUse",
            "cwd": str(tmp_path),
            "tool_name": "write_file",
            "tool_input": {"path": "a.txt", "content": "a"},
            "tool_response": "Created a.txt (1 characters).",
        }
    ]
    assert (tmp_path / "a.txt").read_text() == "a"  # feedback, not an undo


def test_the_example_hook_reports_a_python_file_that_no_longer_parses(chapter, tmp_path):
    broken = "def subtract(a, b:\n    return a - b\n"
    try:
        compile(broken, "calc.py", "exec")
    except SyntaxError as error:
        problem = f"{error.msg} (line {error.lineno})"
    calls = [tool_use("toolu_1", "write_file", {"path": "calc.py", "content": broken}),
             tool_use("toolu_2", "write_file", {"path": "ok.py", "content": "x = 1\n"}),
             tool_use("toolu_3", "write_file", {"path": "notes.md", "content": "def (\n"})]
    client = FakeClient(reply(*calls), reply(text("I will fix calc.py.")))
    session = new_session(chapter, client, tmp_path, mode="accept_edits")
    chapter.add_hook(
        session, "PostToolUse", chapter.check_python_syntax, matcher="write_file|edit_file"
    )

    chapter.run_turn(session, "go")

    first = [user(text("go"))]
    second = first + [
        assistant(*calls),
        user(
            result(
                "toolu_1",
                "Created calc.py (36 characters).\n"
                f'<hook event="PostToolUse">calc.py no longer parses: {problem}. Fix it '
                f'first.</hook>',
            ),
            result("toolu_2", "Created ok.py (6 characters)."),
            result("toolu_3", "Created notes.md (6 characters)."),
        ),
    ]
    assert client.calls == [request(chapter, session, first), request(chapter, session, second)]
    assert session.messages == second + [assistant(text("I will fix calc.py."))]


# ---- Stop ------------------------------------------------------------------------

def test_stop_block_sends_the_model_back_to_work(chapter, tmp_path, capsys):
    client = FakeClient(reply(text("Done.")), reply(text("Tests pass. Done.")))
    session = new_session(chapter, client, tmp_path)
    hook = recorder(lambda event: None if event["stop_hook_active"] else
                    {"decision": "block", "reason": "Run the tests first."})
    chapter.add_hook(session, "Stop", hook)

    assert chapter.run_turn(session, "go") is True

    first = [user(text("go"))]
    second = first + [
        assistant(text("Done.")),
        user(text('<hook event="Stop">Run the tests first.</hook>')),
    ]
    assert client.calls == [request(chapter, session, first), request(chapter, session, second)]
    assert session.messages == second + [assistant(text("Tests pass. Done."))]
    cwd = str(tmp_path)
    assert hook.events == [
        {"hook_event_name": "Stop", "cwd": cwd, "stop_hook_active": False, "last_message": "Done."},
        {
            "hook_event_name": "Stop",
            "cwd": cwd,
            "stop_hook_active": True,
            "last_message": "Tests pass. Done.",
        },
    ]
    assert capsys.readouterr().out == (
        "Done.\n[A Stop hook sends the model back to work: Run the tests first.]\nTests pass. "
        "Done.\n"
    )


def test_a_stop_hook_that_always_blocks_is_stopped_by_the_guard(chapter, tmp_path, capsys):
    assert chapter.STOP_HOOK_LIMIT == 3
    client = FakeClient(*(reply(text(f"Done {n}.")) for n in range(1, 9)))
    session = new_session(chapter, client, tmp_path)
    hook = recorder({"decision": "block", "reason": "Not yet."})
    chapter.add_hook(session, "Stop", hook)

    assert chapter.run_turn(session, "go") is True

    back = user(text('<hook event="Stop">Not yet.</hook>'))
    histories = [[user(text("go"))]]
    for n in range(1, 4):
        histories.append(histories[-1] + [assistant(text(f"Done {n}.")), back])
    assert client.calls == [
        request(chapter, session, messages) for messages in histories
    ]  # 1 + 3 calls
    assert session.messages == histories[-1] + [assistant(text("Done 4."))]
    assert [event["stop_hook_active"] for event in hook.events] == [False, True, True, True]
    assert capsys.readouterr().out == (
        "Done 1.\n[A Stop hook sends the model back to work: Not yet.]\n"
        "Done 2.\n[A Stop hook sends the model back to work: Not yet.]\n"
        "Done 3.\n[A Stop hook sends the model back to work: Not yet.]\n"
        "Done 4.\n[A Stop hook asked again; after 3 times in a row the turn ends anyway.]\n"
    )

    chapter.run_turn(session, "again")  # the count starts over with each turn

    histories = [histories[-1] + [assistant(text("Done 4.")), user(text("again"))]]
    for n in range(5, 8):
        histories.append(histories[-1] + [assistant(text(f"Done {n}.")), back])
    assert client.calls[4:] == [request(chapter, session, messages) for messages in histories]
    assert session.messages == histories[-1] + [assistant(text("Done 8."))]
    assert client.replies == []


# ---- command hooks -------------------------------------------------------------

def shell_error(command):
    """What this machine's /bin/sh says on stderr for the command."""
    return subprocess.run(command, shell=True, capture_output=True, text=True).stderr.strip()


ECHO_RAN = ["    hi", "    [exit code: 0]"]

COMMAND_HOOK_CASES = {
    "exit 0, no output": ({"command": "cat > /dev/null"}, None, ECHO_RAN),
    "exit 0, a JSON block": (
        {"command": """cat > /dev/null; echo '{"decision": "block", "reason": "JSON says no."}'"""},
        "Blocked by a PreToolUse hook: JSON says no.",
        None,
    ),
    "exit 0, JSON null": ({"command": "echo null"}, None, ECHO_RAN),
    "exit 2, stderr is the reason": (
        {"command": "echo 'Not with echo.' >&2; exit 2"},
        "Blocked by a PreToolUse hook: Not with echo.",
        None,
    ),
    "exit 2, no stderr": (
        {"command": "exit 2"},
        "Blocked by a PreToolUse hook: blocked by a hook",
        None,
    ),
    "exit 1": (
        {"command": "echo oops >&2; exit 1"},
        None,
        ["  hook error (PreToolUse, echo oops >&2; exit 1): exit code 1: oops", *ECHO_RAN],
    ),
    "exit 1, nothing printed": (
        {"command": "cat > /dev/null; exit 1"},
        None,
        ["  hook error (PreToolUse, cat > /dev/null; exit 1): exit code 1: it printed nothing "
         "to say why", *ECHO_RAN],
    ),
    "timeout": (
        # (a short timeout: nothing has to happen in it, and the test waits it out each time)
        {"command": "sleep 2", "timeout": 0.05},
        None,
        ["  hook error (PreToolUse, sleep 2): timed out after 0.05 seconds", *ECHO_RAN],
    ),
    "output not JSON": (
        {"command": "echo not json"},
        None,
        [
            "  hook error (PreToolUse, echo not json): exit code 0, but its output is not JSON: "
            "'not json'",
            *ECHO_RAN,
        ],
    ),
    "JSON that is no decision": (
        {"command": """echo '{"decision": "maybe"}'"""},
        None,
        [
            "  hook error (PreToolUse, echo '{\"decision\": \"maybe\"}'): a decision must be None "
            "or a dict "
            "with decision block or allow, not {'decision': 'maybe'}",
            *ECHO_RAN,
        ],
    ),
    "missing command": (
        {"command": "no-such-hook-command-s04"},
        None,
        [
            "  hook error (PreToolUse, no-such-hook-command-s04): exit code 127: {missing}",
            *ECHO_RAN,
        ],
    ),
}


@pytest.mark.parametrize("case", COMMAND_HOOK_CASES)
def test_a_command_hook_exit_code_and_output_decide(chapter, tmp_path, capsys, case):
    entry, blocked, shown = COMMAND_HOOK_CASES[case]
    call = tool_use("toolu_1", "bash", {"command": "echo hi"})
    client = FakeClient(reply(call), reply(text("Done.")))
    session = new_session(chapter, client, tmp_path)
    with_command_hooks(chapter, session, {"PreToolUse": [{"matcher": "bash", **entry}]})

    started = time.monotonic()
    chapter.run_turn(session, "go")
    took = time.monotonic() - started

    outcome = (
        result("toolu_1", blocked, is_error=True)
        if blocked
        else result("toolu_1", "hi\n[exit code: 0]")
    )
    first = [user(text("go"))]
    second = first + [assistant(call), user(outcome)]
    assert client.calls == [request(chapter, session, first), request(chapter, session, second)]
    assert session.messages == second + [assistant(text("Done."))]
    if case == "missing command":
        shown = [line.replace("{missing}", shell_error(entry["command"])) for line in shown]
    shown = ["    error: " + blocked] if blocked else shown
    assert capsys.readouterr().out.splitlines() == ["  > bash: echo hi", *shown, "Done."]
    if case == "timeout":
        assert took < 1.5  # stopped at its timeout, not after the 2 seconds it wanted


def test_a_command_hook_json_allow_spares_the_question(chapter, tmp_path, answers):
    asked = answers()
    call = tool_use("toolu_1", "write_file", {"path": "a.txt", "content": "a"})
    client = FakeClient(reply(call), reply(text("Written.")))
    session = new_session(chapter, client, tmp_path)
    with_command_hooks(chapter, session, {"PreToolUse": [
        {"matcher": "write_file", "command": """echo '{"decision": "allow"}'"""}]})

    chapter.run_turn(session, "go")

    assert session.messages == [
        user(text("go")),
        assistant(call),
        user(result("toolu_1", "Created a.txt (1 characters).")),
        assistant(text("Written.")),
    ]
    assert asked.prompts == []


def test_command_hooks_get_the_event_as_json_on_stdin(chapter, tmp_path):
    (tmp_path / "a.txt").write_text("hello\n")
    call = tool_use("toolu_1", "read_file", {"path": "a.txt"})
    client = FakeClient(reply(text("Reading."), call), reply(text("Done.")))
    session = new_session(chapter, client, tmp_path)
    with_command_hooks(chapter, session, {
        "UserPromptSubmit": [{"command": "cat > prompt.json"}],
        "PreToolUse": [{"command": "cat > pre.json"}],
        "PostToolUse": [{"matcher": "read_file", "command": "cat > post.json"}],
        "Stop": [{"command": "cat > stop.json", "timeout": 5}],
    })

    chapter.run_turn(session, "go")

    first = [user(text("go"))]
    second = first + [assistant(text("Reading."), call), user(result("toolu_1", "     1\thello"))]
    assert client.calls == [request(chapter, session, first), request(chapter, session, second)]
    assert session.messages == second + [assistant(text("Done."))]
    cwd = json.dumps(str(tmp_path))
    assert {
        name: (tmp_path / name).read_text()
        for name in ("prompt.json", "pre.json", "post.json", "stop.json")
    } == {
        "prompt.json": f'{{"hook_event_name": "UserPromptSubmit", "cwd": {cwd}, "prompt": "go"}}',
        "pre.json": f'{{"hook_event_name": "PreToolUse", "cwd": {cwd}, "tool_name": "read_file", '
        '"tool_input": {"path": "a.txt"}}',
        "post.json": f'{{"hook_event_name": "PostToolUse", "cwd": {cwd}, "tool_name": "read_file", '
        '"tool_input": {"path": "a.txt"}, "tool_response": "     1\\thello"}',
        "stop.json": f'{{"hook_event_name": "Stop", "cwd": {cwd}, "stop_hook_active": false, '
        '"last_message": "Done."}',
    }
    assert [(hook.event, hook.matcher, hook.label) for hook in session.hooks] == [
        ("UserPromptSubmit", "*", "cat > prompt.json"), ("PreToolUse", "*", "cat > pre.json"),
        ("PostToolUse", "read_file", "cat > post.json"), ("Stop", "*", "cat > stop.json")]


def test_a_command_hook_runs_in_the_workdir_without_the_key(chapter, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-for-hooks")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "token-not-for-hooks")
    monkeypatch.setenv("HOOK_PROBE", "seen")
    session = new_session(chapter, FakeClient(), tmp_path)
    chapter.add_hook(
        session, "UserPromptSubmit", chapter.command_hook("pwd > where.txt; env > env.txt")
    )

    assert chapter.run_hooks(session, "UserPromptSubmit", prompt="x") == {
        "decision": None,
        "reason": "",
        "context": "",
    }

    assert (tmp_path / "where.txt").read_text() == f"{tmp_path}\n"
    names = {
        line.partition("=")[0]: line.partition("=")[2]
        for line in (tmp_path / "env.txt").read_text().splitlines()
    }
    assert (
        names.get("HOOK_PROBE"),
        names.get("ANTHROPIC_API_KEY"),
        names.get("ANTHROPIC_AUTH_TOKEN"),
    ) == ("seen", None, None)


def test_command_hook_decisions_directly(chapter, tmp_path):
    event = {
        "hook_event_name": "Stop",
        "cwd": str(tmp_path),
        "stop_hook_active": False,
        "last_message": "x",
    }
    assert chapter.command_hook("cat > /dev/null")(event) is None
    assert chapter.command_hook("""echo '{"context": "c"}'""")(event) == {"context": "c"}
    assert chapter.command_hook("echo '  Why.  ' >&2; exit 2")(event) == {
        "decision": "block",
        "reason": "Why.",
    }
    with pytest.raises(chapter.HookError) as raised:
        chapter.command_hook("echo bad >&2; exit 3")(event)
    assert str(raised.value) == "exit code 3: bad"
    assert chapter.HOOK_TIMEOUT == 10


def _alive(pid):
    """True while the process runs (a zombie, or no such process, counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="needs /proc to see whether a process runs"
)
def test_a_timed_out_command_hook_leaves_nothing_running(chapter, tmp_path):
    hook = chapter.command_hook("sleep 30 & echo $! > child.pid; wait", timeout=0.3)
    with pytest.raises(chapter.HookError):
        hook({"hook_event_name": "Stop", "cwd": str(tmp_path)})
    child = int((tmp_path / "child.pid").read_text())
    try:
        deadline = time.monotonic() + 0.5  # a killed process may take a moment to go
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _alive(child) is False
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)  # the one process this test started, by its id


def test_a_ctrl_c_that_stopped_a_command_hook_before_the_harness_could_is_a_ctrl_c(
        chapter, tmp_path, monkeypatch):
    # As in run_bash: the terminal's Ctrl-C can reach the hook's process as it starts, before it
    # has a group of its own (here it is stopped and reaped inside Popen(), and the Ctrl-C comes
    # as the hook waits for it). The hook ends as a Ctrl-C, not as a ProcessLookupError from
    # stopping a group that is not there.
    signalled = []

    class StoppedPopen(subprocess.Popen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.kill()
            self.wait()

        def communicate(self, *args, **kwargs):
            if not signalled:
                signalled.append(True)
                os.kill(os.getpid(), signal.SIGINT)
            return super().communicate(*args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", StoppedPopen)
    hook = chapter.command_hook("sleep 5")
    with ctrl_c_delivered(), pytest.raises(KeyboardInterrupt):
        hook({"hook_event_name": "Stop", "cwd": str(tmp_path)})


# ---- bad hook settings ---------------------------------------------------------

ENTRY_SHAPE = 'each {} hook must be {{"command": "...", "matcher": "...", "timeout": N}}'
BAD_HOOKS = [
    ([], '"hooks" must be an object of events'),
    ("Stop", '"hooks" must be an object of events'),
    (
        {"PreToolCall": [{"command": "true"}]},
        "unknown hook event 'PreToolCall'; the events are: {events}",
    ),
    ({"stop": [{"command": "true"}]}, "unknown hook event 'stop'; the events are: {events}"),
    ({"Stop": [{"matcher": "*"}]}, ENTRY_SHAPE.format("Stop")),
    ({"Stop": [{"command": 5}]}, ENTRY_SHAPE.format("Stop")),
    ({"Stop": [{"command": "true", "cmd": "true"}]}, ENTRY_SHAPE.format("Stop")),
    ({"Stop": {"command": "true"}}, ENTRY_SHAPE.format("Stop")),
    ({"PostToolUse": ["true"]}, ENTRY_SHAPE.format("PostToolUse")),
    (
        {"PreToolUse": [{"matcher": "[", "command": "true"}]},
        "the matcher '[' of a PreToolUse hook is not a regex",
    ),
    (
        {"PreToolUse": [{"matcher": "bash(", "command": "true"}]},
        "the matcher 'bash(' of a PreToolUse hook is not a regex",
    ),
    (
        {"PreToolUse": [{"matcher": 5, "command": "true"}]},
        "the matcher 5 of a PreToolUse hook is not a regex",
    ),
    (
        {"Stop": [{"command": "true", "timeout": 0}]},
        "the timeout of a Stop hook must be a positive number",
    ),
    (
        {"Stop": [{"command": "true", "timeout": -1}]},
        "the timeout of a Stop hook must be a positive number",
    ),
    (
        {"Stop": [{"command": "true", "timeout": "5"}]},
        "the timeout of a Stop hook must be a positive number",
    ),
    (
        {"Stop": [{"command": "true", "timeout": True}]},
        "the timeout of a Stop hook must be a positive number",
    ),
    (
        {"Stop": [{"command": "true", "timeout": None}]},
        "the timeout of a Stop hook must be a positive number",
    ),
]


def test_bad_hook_settings_raise_naming_the_file(chapter, tmp_path):
    raised = []
    for hooks, _ in BAD_HOOKS:
        session = new_session(chapter, FakeClient(), tmp_path)
        try:
            with_command_hooks(chapter, session, hooks)
            raised.append(None)
        except chapter.SettingsError as error:
            raised.append(str(error))
    path = tmp_path / ".agent" / "settings.json"
    assert raised == [f"{path}: {problem.replace('{events}', events(chapter))}"
                      for _, problem in BAD_HOOKS]


def test_add_hook_refuses_an_unknown_event_and_a_bad_regex(chapter, tmp_path):
    session = new_session(chapter, FakeClient(), tmp_path)
    with pytest.raises(ValueError) as raised:
        chapter.add_hook(session, "Start", recorder())
    assert str(raised.value) == (
        f"unknown hook event 'Start'; the events are: {events(chapter)}")
    with pytest.raises(re.error) as raised:
        chapter.add_hook(session, "PreToolUse", recorder(), matcher="[")
    assert str(raised.value) == "unterminated character set at position 0"
    assert session.hooks == []


@pytest.mark.slow
def test_the_program_stops_with_one_line_on_bad_hook_settings(tmp_path):
    path = tmp_path / ".agent" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"hooks": {"BeforeTool": [{"command": "true"}]}}))

    done = run_chapter("s04_hooks", "--offline", "--workdir", str(tmp_path), "x")

    assert (done.returncode, done.stdout) == (2, "")
    assert (
        done.stderr
        == f"s04_hooks: {path}: unknown hook event 'BeforeTool'; the events are: {EVENTS}\n"
    )


# ---- done when: a command hook blocks a call in an offline run ---------------------------

HOOK_SCRIPT = {
    "prompt": "fetch the style guide",
    "turns": [
        {"content": [{"type": "tool_use", "name": "bash", "input": {"command": "echo ready"}}]},
        {"content": [{"type": "text", "text": "Fetching."},
                     {"type": "tool_use", "name": "bash", "input": {"command": "curl -s https://example.com/style.md"}}]},
        {"content": [{"type": "text", "text": "Blocked, so I will do without it."}]},
    ],
}
NO_NETWORK = "No network here: a PreToolUse hook blocks curl."


@pytest.mark.slow
def test_done_when_a_command_hook_blocks_a_bash_call(tmp_path):
    workdir, script, trace = tmp_path / "w", tmp_path / "script.json", tmp_path / "trace.jsonl"
    (workdir / ".agent").mkdir(parents=True)
    script.write_text(json.dumps(HOOK_SCRIPT))
    hook = f"""grep -q '"command": "[^"]*curl' && {{ echo '{NO_NETWORK}' >&2; exit 2; }}; exit 0"""
    (workdir / ".agent" / "settings.json").write_text(json.dumps(
        {"hooks": {"PreToolUse": [{"matcher": "bash", "command": hook}]}}))

    done = run_chapter(
        "s04_hooks",
        "--offline",
        "--mode",
        "bypass",
        "--workdir",
        str(workdir),
        "--script",
        str(script),
        "--trace",
        str(trace),
        "fetch the style guide",
    )

    assert (done.returncode, done.stderr) == (0, "")
    assert [call["request"]["messages"][-1] for call in read_trace(trace)] == [
        user(text("fetch the style guide")),
        user(result("toolu_01", "ready\n[exit code: 0]")),
        user(result("toolu_02", f"Blocked by a PreToolUse hook: {NO_NETWORK}", is_error=True)),
    ]
    assert "hooks: PostToolUse[write_file|edit_file], PreToolUse[bash]" in done.stdout.splitlines()
    assert done.stdout.splitlines()[-7:] == [
        "  > bash: echo ready",
        "    ready",
        "    [exit code: 0]",
        "Fetching.",
        "  > bash: curl -s https://example.com/style.md",
        "    error: Blocked by a PreToolUse hook: " + NO_NETWORK,
        "Blocked, so I will do without it.",
    ]
