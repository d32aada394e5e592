"""Robustness: what every chapter must survive, whatever the model, the user or the network does.

1. Random conversations (hypothesis). A fake model says anything: text, tool calls to
   known and unknown tools with good and broken inputs, several calls in one turn, every
   stop reason, API errors and Ctrl-C instead of a reply. The user answers questions at
   random; from s04 random Python hooks join in. For every case: nothing escapes
   run_turn, every request is one the API accepts, nothing outside the workdir changes,
   and (s06) plan mode changes nothing but .agent/plans/.
2. Attacks: a table of hostile paths through every file tool (the workspace guard), and
   every kind of change tried in plan mode against bypass mode, allow rules and hooks.
3. Ctrl-C in a tool, in a running command, in the model call, at a question.
4. API errors through the real SDK: one line for the user, a clean history, the REPL goes on.
5. Secrets: the API key reaches no tool (no trace, no screen: tests/test_chapters.py).
6. Properties of the file tools: edits and writes change exactly what was asked.
7. Bugs found by these tests, now fixed: each test names the chapter the bug was born in.

Profiles: `fast` (the default: 25 examples per chapter and property, always the same ones)
and `deep` (HYPOTHESIS_PROFILE=deep: 500 examples per chapter and property, new ones each run).
The machinery (request checker, sandbox, strategies) is in robustness_support.py.
"""

import copy
import functools
import io
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import tracemalloc
from contextlib import nullcontext, redirect_stdout
from pathlib import Path
from unittest.mock import patch

import anthropic
import anthropic._base_client
import httpx2
import pytest
from anthropic.types import Message
from hypothesis import HealthCheck, Phase, assume, find, given, settings
from hypothesis import strategies as st

from robustness_support import (
    ANSWERS,
    HOOK_OUTCOMES,
    PLAN_MODE_FIELD,
    SECRET,
    EndlessClient,
    PlanModeWatch,
    SafetyNet,
    Sandbox,
    answering,
    ask_inputs,
    error_body,
    has_plan_mode,
    hook_returning,
    model_events,
    prompts,
    replies_for,
    request_problems,
    run_one_tool,
    tool_names_by_id,
    tool_results,
    tool_use_blocks,
    tree,
)
from support import (
    PRESENT,
    ROOT,
    assistant,
    chapters_that_change,
    clean_env,
    ctrl_c_delivered,
    load_chapter,
    new_session,
    read_trace,
    reply,
    run_chapter,
    text,
    tool_use,
    user,
)

settings.register_profile("fast", max_examples=25, deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("deep", max_examples=500, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
PROFILE = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))

# The properties share one module per chapter across their examples (loading one
# takes a while); they patch it only inside `with` blocks. Other tests load a fresh one.
shared_chapter = functools.cache(load_chapter)
# The file tools' own properties: where their sections change, and the newest chapter.
FILE_CHAPTERS = chapters_that_change("THE WORKSPACE GUARD", "THE FILE TOOLS")


def no_problems(calls):
    """What request_problems says for each call, so that a failure shows which call and why."""
    return [request_problems(call) for call in calls]


def leaked_secrets(calls):
    """tool_results of file tools (not bash, which may read anything) that hold the secret."""
    leaks = []
    for call in calls:
        names = tool_names_by_id(call["messages"])
        leaks += [
            result
            for result in tool_results(call["messages"])
            if names.get(result["tool_use_id"]) != "bash" and SECRET in str(result["content"])
        ]
    return leaks


# ======================================================================
# 1. RANDOM CONVERSATIONS
# ======================================================================

START_IN_PLAN_MODE = st.sampled_from([True, True, False])
USAGE = st.integers(0, 4000)


_hooks = {}


def hooks_for(events, outcomes):
    """Up to three (event, what the hook returns) pairs: one strategy per chapter and list of
    outcomes (built once: a strategy is checked on its first draw)."""
    key = (tuple(events), id(outcomes))
    if key not in _hooks:  # the list is kept with its strategy, so that its id stays its own
        _hooks[key] = outcomes, st.lists(
            st.tuples(st.sampled_from(events), st.sampled_from(outcomes)), max_size=3
        )
    return _hooks[key][1]


def play(chapter, data, box, answers, hook_outcomes=HOOK_OUTCOMES):
    """Play a random session: random prompts, a random model, random answers and,
    from s04, random Python hooks (never command hooks: they would run a shell).

    Ends with one more prompt when the model has nothing left to say, so the
    history each turn leaves behind is checked too: it must take a new prompt.
    """
    events = data.draw(model_events(chapter.TOOLS), label="model")
    replies = replies_for(events, box)
    if hasattr(chapter, "summarise"):  # s08: replies that say how full the context is
        for answer in replies:
            if isinstance(answer, Message):
                answer.usage.input_tokens = data.draw(USAGE, label="usage")
    client = EndlessClient(*replies)
    session = new_session(chapter, client, box.work)
    if has_plan_mode(chapter):
        setattr(
            session,
            PLAN_MODE_FIELD,
            data.draw(START_IN_PLAN_MODE, label="start in plan mode"),
        )
    if hasattr(chapter, "summarise"):  # s08: thresholds low enough to clear and summarise often
        session.clear_at, session.compact_at = data.draw(st.sampled_from(
            [(1800, 2400), (2200, 3500), (chapter.CLEAR_AT, chapter.COMPACT_AT)]),
            label="--clear-at and --compact-at")
    if hasattr(chapter, "add_hook"):
        hooks = hooks_for(chapter.HOOK_EVENTS, hook_outcomes)
        for event, outcome in data.draw(hooks, label="hooks"):
            chapter.add_hook(session, event, hook_returning(outcome))
    with patch("builtins.input", answering(data, answers)), redirect_stdout(io.StringIO()):
        for prompt in data.draw(prompts, label="prompts"):
            assert chapter.run_turn(session, prompt) in (True, False)
        client.replies.clear()
        assert chapter.run_turn(session, "And now?") in (True, False)
    return client


@pytest.mark.parametrize("name", PRESENT)
@PROFILE
@given(data=st.data())
def test_random_conversations_keep_every_promise(name, data):
    chapter = shared_chapter(name)
    watch = PlanModeWatch(chapter) if has_plan_mode(chapter) else nullcontext()
    with Sandbox() as box, SafetyNet() as net, watch:
        before = box.outside()
        client = play(chapter, data, box, ANSWERS)  # 1. nothing escaped run_turn
        after = box.outside()

    assert no_problems(client.calls) == [[] for _ in client.calls]  # 2. every request is valid
    assert after == before  # 3. nothing outside the workdir changed
    assert leaked_secrets(client.calls) == []
    assert net.stopped == []  # the dangerous commands were refused by the chapter itself
    if has_plan_mode(chapter):
        assert watch.broken == []  # 4. plan mode changed nothing but .agent/plans/


ASKING_CHAPTERS = [name for name in PRESENT if hasattr(shared_chapter(name), "ASK_TOOL")]


@pytest.mark.parametrize("name", ASKING_CHAPTERS)
def test_random_conversations_include_questions_the_user_is_asked(name):
    """The model of the random conversations sends ask_user_question calls that pass its
    checks, so the user is really asked (and answers at random): not only ones refused."""
    chapter = shared_chapter(name)
    schema = chapter.ASK_TOOL["input_schema"]

    def is_asked(block):
        if block["name"] != "ask_user_question":
            return False
        if chapter.input_problem("ask_user_question", schema, block["input"]):
            return False
        try:
            chapter.validate_questions(block["input"]["questions"])
        except chapter.ToolError:
            return False
        return True

    # The blocks the model of the random conversations sends: the first that asks, unshrunk.
    found = find(tool_use_blocks(chapter.TOOLS), is_asked, settings=settings(
        database=None, derandomize=True, max_examples=2000, phases=[Phase.generate]))
    assert is_asked(found)



@functools.cache
def one_or_two_questions(schema):
    """One or two ask_user_question inputs for this schema (given as JSON): built once."""
    return st.lists(ask_inputs(json.loads(schema)), min_size=1, max_size=2)


@pytest.mark.parametrize("name", ASKING_CHAPTERS)
@PROFILE
@given(data=st.data())
def test_random_questions_and_answers_never_cancel_the_turn_and_change_nothing(name, data):
    """ask_user_question on its own, at random: good and broken questions, one or two calls in
    a turn, any permission mode, in plan mode or not, answered with numbers, words, empty
    lines and EOF (Ctrl-C cancels the turn: tests/test_s06_ask_user_question.py). The turn
    always goes on to the next model call, a result is an error
    exactly when the input is broken, every request is valid, and no file changes."""
    chapter = shared_chapter(name)
    schema = chapter.ASK_TOOL["input_schema"]
    calls = data.draw(one_or_two_questions(json.dumps(schema)), label="questions")
    blocks = [tool_use(f"toolu_{n}", "ask_user_question", value) for n, value in enumerate(calls)]
    client = EndlessClient(reply(*blocks))
    with Sandbox() as box, PlanModeWatch(chapter) as watch:
        session = new_session(chapter, client, box.work,
                              mode=data.draw(st.sampled_from(chapter.MODES), label="mode"),
                              plan_mode=data.draw(st.booleans(), label="plan mode"))
        before = tree(box.work)
        with (patch("builtins.input", answering(data, ANSWERS)),
              redirect_stdout(io.StringIO())):
            finished = chapter.run_turn(session, "ask me")
        after = tree(box.work)

    def broken(value):
        if chapter.input_problem("ask_user_question", schema, value):
            return True
        try:
            chapter.validate_questions(value["questions"])
        except chapter.ToolError:
            return True
        return False

    results = tool_results(session.messages)
    assert (finished, len(client.calls)) == (True, 2)
    assert [result.get("is_error", False) for result in results] == [broken(v) for v in calls]
    assert no_problems(client.calls) == [[], []]
    assert (after, watch.broken) == (before, [])

# ======================================================================
# 2. ATTACKS: THE WORKSPACE GUARD, PLAN MODE
# ======================================================================
# Every path is tried with read_file, write_file, edit_file and glob. REFUSED paths must
# give an is_error result from every tool. HARMLESS ones are odd names that stay inside
# the workdir on this system (a backslash is no separator on POSIX): a tool may use them.
# For all: the secret never shows up and nothing outside the workdir changes.

REFUSED, HARMLESS = "refused", "harmless"

ATTACKS = [
    ("dotdot at the start", "../secret.txt", REFUSED),
    ("dot then dotdot", "./../secret.txt", REFUSED),
    ("dotdot in the middle", "sub/../../secret.txt", REFUSED),
    ("dotdot that would stay inside", "sub/../notes.txt", REFUSED),  # any '..' part is refused
    ("bare dotdot", "..", REFUSED),
    ("dotdot and a slash", "../", REFUSED),
    ("into the sentinel folder", "../sentinel_dir/inside.txt", REFUSED),
    ("dot segments then dotdot", "sub/./../../secret.txt", REFUSED),
    ("dotdot and a long name", "../" + "a" * 300, REFUSED),
    ("absolute path outside", "{parent}/secret.txt", REFUSED),
    ("absolute path with dotdot", "{work}/../secret.txt", REFUSED),
    ("absolute path with two slashes", "/{parent}/secret.txt", REFUSED),
    ("absolute path through /proc/self/root", "/proc/self/root{parent}/secret.txt", REFUSED),
    ("absolute path through a symlink in the workdir", "{work}/link_out/secret.txt", REFUSED),
    ("tilde", "~", REFUSED),
    ("tilde and a file", "~/secret.txt", REFUSED),
    ("NUL byte", "notes.txt\0../secret.txt", REFUSED),
    ("only a NUL byte", "\0", REFUSED),
    ("symlink to the parent folder", "link_out/secret.txt", REFUSED),
    ("the symlink to the parent itself", "link_out", REFUSED),
    ("symlink to a file outside", "link_secret", REFUSED),
    ("relative symlink out", "link_rel", REFUSED),
    ("chain of symlinks out", "chain1", REFUSED),
    ("dangling symlink out", "dangling_out", REFUSED),
    ("symlink two levels up in a subfolder", "sub/link_up/secret.txt", REFUSED),
    ("empty string", "", REFUSED),
    ("spaces", "   ", REFUSED),
    ("tab and newline", "\t\n", REFUSED),
    (
        "symlink loop",
        "loop_a",
        HARMLESS,
    ),  # refused on Python 3.11; newer ones resolve loops quietly
    ("backslashes", "..\\secret.txt", HARMLESS),
    ("backslashes in the middle", "sub\\..\\..\\secret.txt", HARMLESS),
    ("one-dot leaders that look like dots", "\u2024\u2024/secret.txt", HARMLESS),
    ("fullwidth dots", "\uff0e\uff0e/secret.txt", HARMLESS),
    ("division slash", "..\u2215secret.txt", HARMLESS),
    ("URL-encoded dots", "%2e%2e/secret.txt", HARMLESS),
    ("a space before dotdot", " ../secret.txt", HARMLESS),
    ("a very long name", "a" * 5000, HARMLESS),
    ("glob class for dots", "[.][.]/secret.txt", HARMLESS),
    ("hidden-name glob", ".*/secret.txt", HARMLESS),
]


def file_tool_inputs(path):
    return {
        "read_file": {"path": path},
        "write_file": {"path": path, "content": "PWNED"},
        "edit_file": {"path": path, "old_string": "TOP-SECRET", "new_string": "PWNED"},
        "glob": {"pattern": path},
    }


def listed_outside(box, result):
    """Paths a glob result lists that lead out of the workdir."""
    if result.get("is_error") or result["content"].startswith("No files match"):
        return []
    listed = [line for line in result["content"].splitlines() if not line.startswith("(")]
    return [line for line in listed if not (box.work / line).resolve().is_relative_to(box.work)]


@pytest.mark.parametrize("what, path, expected", ATTACKS, ids=[attack[0] for attack in ATTACKS])
@pytest.mark.parametrize("name", FILE_CHAPTERS)
def test_the_workspace_guard_holds(name, what, path, expected):
    chapter = shared_chapter(name)
    with Sandbox() as box:
        path = path.format(parent=box.parent, work=box.work)
        before = box.outside()
        results = {
            tool: run_one_tool(chapter, box.work, tool, tool_input)
            for tool, tool_input in file_tool_inputs(path).items()
        }
        after = box.outside()

        if expected == REFUSED:
            assert {
                tool: result.get("is_error") for tool, result in results.items()
            } == dict.fromkeys(results, True)
        assert [tool for tool, result in results.items() if SECRET in result["content"]] == []
        assert listed_outside(box, results["glob"]) == []
        assert after == before


# Plan mode (s06) against its strongest opponents: bypass mode, allow rules for every
# tool, a PreToolUse hook that allows everything, and a user who says yes to all.

PLAN_CHAPTERS = [name for name in PRESENT if has_plan_mode(shared_chapter(name))]
CHANGING_CALLS = [
    ("write_file", {"path": "new.txt", "content": "x"}),
    ("write_file", {"path": ".agent/settings.json", "content": "{}"}),
    ("edit_file", {"path": "notes.txt", "old_string": "line two", "new_string": "LINE TWO"}),
    ("bash", {"command": "printf x > made-by-bash.txt"}),
    ("bash", {"command": "touch made-by-touch.txt"}),
    ("bash", {"command": "mkdir made-dir"}),
    ("bash", {"command": "sort -o sorted.txt notes.txt"}),
    ("bash", {"command": "find . -name notes.txt -delete"}),
    ("bash", {"command": "git init"}),
    ("bash", {"command": "ls; touch after-ls.txt"}),
    ("bash", {"command": "echo $(touch in-substitution.txt)"}),
]


@pytest.mark.parametrize(
    "tool, tool_input", CHANGING_CALLS, ids=[str(call[1]) for call in CHANGING_CALLS]
)
@pytest.mark.parametrize("name", PLAN_CHAPTERS)
def test_plan_mode_refuses_every_change(name, tool, tool_input):
    chapter = shared_chapter(name)
    with Sandbox() as box, PlanModeWatch(chapter) as watch:
        everything = [f"{t['name']}" for t in chapter.TOOLS] + [
            f"{t['name']}(*)" for t in chapter.TOOLS if t["name"] in chapter.CALL_SUBJECT
        ]
        client = EndlessClient(reply(tool_use("toolu_1", tool, tool_input)))
        session = new_session(
            chapter,
            client,
            box.work,
            mode="bypass",
            plan_mode=True,
            settings={"permissions": {"allow": everything}},
        )
        chapter.add_hook(session, "PreToolUse", hook_returning({"decision": "allow"}))
        with patch("builtins.input", lambda prompt="": "y"), redirect_stdout(io.StringIO()):
            chapter.run_turn(session, "change it")
        result = tool_results(session.messages)[0]

    assert (result.get("is_error"), watch.broken) == (True, [])


@pytest.mark.parametrize("name", PLAN_CHAPTERS)
def test_an_approved_plan_writes_only_the_plan_file(name):
    chapter = shared_chapter(name)
    with Sandbox() as box, PlanModeWatch(chapter) as watch:
        client = EndlessClient(reply(tool_use("toolu_1", "exit_plan_mode", {"plan": "1. Do it."})))
        session = new_session(chapter, client, box.work, plan_mode=True)
        with patch("builtins.input", lambda prompt="": "y"), redirect_stdout(io.StringIO()):
            chapter.run_turn(session, "plan it")
        plans = [plan.read_text() for plan in (box.work / ".agent" / "plans").iterdir()]

    assert (watch.broken, getattr(session, PLAN_MODE_FIELD)) == ([], False)
    assert plans == ["1. Do it.\n"]


# ======================================================================
# 3. CTRL-C
# ======================================================================


@pytest.mark.parametrize("name", PRESENT)
def test_ctrl_c_in_a_tool_answers_every_call_and_the_next_prompt_works(name, tmp_path):
    chapter = load_chapter(name)
    calls = [
        tool_use(f"toolu_{n}", "bash", {"command": f"echo {word}"})
        for n, word in enumerate(["one", "two", "three"], 1)
    ]
    client = EndlessClient(reply(text("Three commands."), *calls), reply(text("Going on.")))
    session = new_session(chapter, client, tmp_path)
    real_run_bash = chapter.run_bash

    def run_bash(session, command):
        if command == "echo two":
            raise KeyboardInterrupt
        return real_run_bash(session, command)

    with (
        patch.object(chapter, "run_bash", run_bash),
        patch("builtins.input", lambda prompt="": "y"),
    ):
        assert chapter.run_turn(session, "run them") is False
        interrupted = copy.deepcopy(session.messages)
        assert chapter.run_turn(session, "go on") is True

    assert interrupted[:2] == [user(text("run them")), assistant(text("Three commands."), *calls)]
    results = interrupted[2]["content"]
    assert [(r["tool_use_id"], r.get("is_error", False)) for r in results] == [
        ("toolu_1", False),
        ("toolu_2", True),
        ("toolu_3", True),
    ]
    assert client.calls[-1]["messages"] == interrupted[:2] + [user(*results, text("go on"))]
    assert no_problems(client.calls) == [[], []]


@pytest.mark.parametrize("name", PRESENT)
def test_ctrl_c_while_a_command_runs_stops_it(name, tmp_path):
    """A real Ctrl-C (SIGINT to this process) while `sleep 20` runs: the command is
    killed at once, the turn ends with a valid history, and nothing waits 20 seconds."""
    chapter = load_chapter(name)
    started, timers = [], []

    class CtrlCSoonAfterStart(subprocess.Popen):
        def __init__(self, *args, **options):
            super().__init__(*args, **options)
            started.append(self)
            timers.append(threading.Timer(0.02, os.kill, (os.getpid(), signal.SIGINT)))
            timers[-1].start()

    client = EndlessClient(reply(tool_use("toolu_1", "bash", {"command": "sleep 20"})))
    session = new_session(chapter, client, tmp_path)
    try:
        with (
            ctrl_c_delivered(),
            patch.object(subprocess, "Popen", CtrlCSoonAfterStart),
            patch("builtins.input", lambda prompt="": "y"),
            redirect_stdout(io.StringIO()),
        ):
            assert chapter.run_turn(session, "wait") is False
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C escaped run_turn")
    finally:
        for timer in timers:
            timer.cancel()
    assert chapter.run_turn(session, "next") is True

    assert [process.returncode for process in started] == [
        -signal.SIGKILL
    ]  # killed, not waited for
    assert [(r["tool_use_id"], r.get("is_error")) for r in tool_results(session.messages)] == [
        ("toolu_1", True)
    ]
    assert no_problems(client.calls) == [[], []]


@pytest.mark.parametrize("name", PRESENT)
def test_ctrl_c_in_the_first_model_call_forgets_the_prompt(name, tmp_path):
    chapter = load_chapter(name)
    client = EndlessClient(KeyboardInterrupt(), reply(text("Hello.")))
    session = new_session(chapter, client, tmp_path)

    assert chapter.run_turn(session, "hi") is False
    assert session.messages == []
    assert chapter.run_turn(session, "hi again") is True
    assert client.calls[-1]["messages"] == [user(text("hi again"))]


@pytest.mark.parametrize("name", PRESENT)
def test_ctrl_c_in_a_later_model_call_keeps_the_tool_round(name, tmp_path):
    chapter = load_chapter(name)
    call = tool_use("toolu_1", "bash", {"command": "echo hi"})
    client = EndlessClient(reply(call), KeyboardInterrupt(), reply(text("Hello.")))
    session = new_session(chapter, client, tmp_path)

    with patch("builtins.input", lambda prompt="": "y"):
        assert chapter.run_turn(session, "hi") is False
    kept = copy.deepcopy(session.messages)
    assert kept[:2] == [user(text("hi")), assistant(call)]
    assert [r["tool_use_id"] for r in kept[2]["content"]] == ["toolu_1"]
    assert chapter.run_turn(session, "go on") is True
    assert client.calls[-1]["messages"] == kept[:2] + [user(*kept[2]["content"], text("go on"))]
    assert no_problems(client.calls) == [[], [], []]


ONE_IN_FOUR = st.sampled_from([False, False, False, True])
CTRL_C_ANSWERS = ANSWERS + [KeyboardInterrupt]
CTRL_C_HOOK_OUTCOMES = HOOK_OUTCOMES + [KeyboardInterrupt]


@pytest.mark.parametrize("name", PRESENT)
@PROFILE
@given(data=st.data())
def test_ctrl_c_anywhere_in_a_tool_or_at_a_question_leaves_a_valid_history(name, data):
    """The random conversations again, and now and then Ctrl-C: in the model call, in a
    tool (bash and every handler of TOOL_HANDLERS), or at a question to the user."""
    chapter = shared_chapter(name)

    def sometimes_ctrl_c(tool):
        def interrupted(*args, **options):
            if data.draw(ONE_IN_FOUR, label="Ctrl-C in the tool"):
                raise KeyboardInterrupt
            return tool(*args, **options)

        return interrupted

    handlers = getattr(chapter, "TOOL_HANDLERS", {})
    wrapped = {
        tool: sometimes_ctrl_c(handler) for tool, handler in handlers.items() if tool != "bash"
    }
    with (
        Sandbox() as box,
        SafetyNet(),
        patch.object(chapter, "run_bash", sometimes_ctrl_c(chapter.run_bash)),
        patch.dict(handlers, wrapped),
    ):
        client = play(chapter, data, box, CTRL_C_ANSWERS, CTRL_C_HOOK_OUTCOMES)

    assert no_problems(client.calls) == [[] for _ in client.calls]


# ======================================================================
# 4. API ERRORS THROUGH THE REAL SDK
# ======================================================================

OK_MESSAGE = {
    "id": "msg_ok",
    "type": "message",
    "role": "assistant",
    "model": "test-model",
    "content": [{"type": "text", "text": "Hi."}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}


def refuse_connection(request):
    raise httpx2.ConnectError("connection refused", request=request)


FAILURES = {  # what the server does to the first prompt
    "400": lambda request: httpx2.Response(400, json=error_body(400)),
    "401": lambda request: httpx2.Response(401, json=error_body(401)),
    "429": lambda request: httpx2.Response(429, json=error_body(429)),
    "500": lambda request: httpx2.Response(500, json=error_body(500)),
    "529": lambda request: httpx2.Response(529, json=error_body(529)),
    "connection": refuse_connection,
}
RETRIED = {"429", "500", "529", "connection"}  # what the SDK tries again


def last_prompt(body):
    return body["messages"][-1]["content"][0].get("text")


def printed_by_the_turn(screen, typed):
    """The lines a turn printed; the echo of the typed line (stdin is not a terminal) left out."""
    lines = screen.splitlines()
    return lines[1:] if lines[:1] == [typed] else lines


def drive_repl(
    chapter, tmp_path, monkeypatch, capsys, retries, fail, lines=("hello", "again", "q")
):
    """repl(session) over the real SDK: `fail` answers the prompt "hello", the rest get OK_MESSAGE.

    Returns the REPL's exit code, the JSON bodies sent, what was on the screen
    before each prompt, and the session.
    """
    monkeypatch.setattr(
        anthropic._base_client.SyncAPIClient, "_calculate_retry_timeout", lambda *args: 0
    )
    bodies, screens, typed = [], [], iter(lines)

    def server(request):
        bodies.append(json.loads(request.content))
        return (
            fail(request)
            if last_prompt(bodies[-1]) == "hello"
            else httpx2.Response(200, json=OK_MESSAGE)
        )

    def fake_input(prompt=""):
        screens.append(capsys.readouterr().out)
        return next(typed)

    monkeypatch.setattr("builtins.input", fake_input)
    with httpx2.Client(transport=httpx2.MockTransport(server)) as http:
        client = anthropic.Anthropic(
            api_key="test-key", base_url="http://127.0.0.1:9", max_retries=retries, http_client=http
        )
        session = new_session(chapter, client, tmp_path)
        code = chapter.repl(session)
    return code, bodies, screens, session


@pytest.mark.parametrize("retries", [0, 2])
@pytest.mark.parametrize("failure", list(FAILURES))
@pytest.mark.parametrize("name", PRESENT)
def test_an_api_error_is_one_line_and_the_repl_goes_on(
    name, failure, retries, tmp_path, monkeypatch, capsys
):
    code, bodies, screens, session = drive_repl(
        shared_chapter(name), tmp_path, monkeypatch, capsys, retries, FAILURES[failure]
    )

    assert code == 0
    tries = retries + 1 if failure in RETRIED else 1
    assert [last_prompt(body) for body in bodies] == ["hello"] * tries + ["again"]
    assert [line.startswith("API error:") for line in printed_by_the_turn(screens[1], "hello")] == [
        True
    ]
    assert bodies[-1]["messages"] == [user(text("again"))]  # the failed prompt was rolled back
    assert session.messages == [user(text("again")), assistant(text("Hi."))]


# ======================================================================
# 5. SECRETS
# ======================================================================
# Each chapter runs as a learner runs it (support.run_chapter), offline, with a key in
# its environment: once its own scenario with --trace, once a tiny script that runs
# `env` through bash. The key must show up in no trace line, not on the screen, and not
# in the tool result.

KEY = "sk-ant-test-SECRET123"
SHOW_ENV = {
    "prompt": "show the environment",
    "turns": [
        {
            "content": [
                {
                    "type": "tool_use",
                    "name": "bash",
                    "input": {"command": "env; echo \"key=[$ANTHROPIC_API_KEY]\""},
                }
            ]
        },
        {"content": [{"type": "text", "text": "That was the environment."}]},
    ],
}


def run_with_a_key(name, folder, script, prompt):
    """Run the chapter offline with KEY in its environment; return (process, trace records, trace
    text)."""
    shutil.copytree(ROOT / name / "workspace", folder / "work")
    trace = folder / "trace.jsonl"
    process = run_chapter(
        name,
        "--offline",
        "--script",
        str(script),
        "--trace",
        str(trace),
        "--workdir",
        str(folder / "work"),
        prompt,
        stdin="y\n" * 20,
        env=clean_env(ANTHROPIC_API_KEY=KEY),
    )
    # the model's calls (from s11, the trace also has a line for each message of an MCP server)
    calls = [record for record in read_trace(trace) if "mcp" not in record]
    return process, calls, trace.read_text()


def places_with_the_key(process, trace_text):
    return [
        where
        for where, seen in [
            ("stdout", process.stdout),
            ("stderr", process.stderr),
            ("trace", trace_text),
        ]
        if KEY in seen or "SECRET123" in seen
    ]


# The key reaching no trace and no screen in a whole scenario run: tests/test_chapters.py
# (test_the_key_reaches_no_trace_and_no_screen), whose one-shot run of each scenario has the key.


@pytest.mark.slow
@pytest.mark.parametrize("name", PRESENT)
def test_the_key_reaches_no_tool(name, tmp_path):
    script = tmp_path / "show-env.json"
    script.write_text(json.dumps(SHOW_ENV))
    process, records, trace_text = run_with_a_key(name, tmp_path, script, SHOW_ENV["prompt"])
    env_output = tool_results(records[1]["request"]["messages"])[0]["content"]

    assert ("PATH=" in env_output, "key=[]" in env_output) == (
        True,
        True,
    )  # env ran; the variable was empty
    assert places_with_the_key(process, trace_text) == []


# ======================================================================
# 6. PROPERTIES OF THE FILE TOOLS
# ======================================================================

file_text = st.text(st.characters(codec="utf-8"), max_size=60)  # \r\n, \r, \u2028 and all


@pytest.mark.parametrize("name", FILE_CHAPTERS)
@PROFILE
@given(before=file_text, middle=file_text.filter(bool), after=file_text, new=file_text)
def test_edit_file_replaces_exactly_the_text_asked_for(name, before, middle, after, new):
    chapter = shared_chapter(name)
    original = before + middle + after
    assume(
        original.count(middle) == 1 and middle != new
    )  # edit_file is for a unique old_string that changes
    with tempfile.TemporaryDirectory() as workdir:
        (Path(workdir) / "file.txt").write_bytes(original.encode())
        result = run_one_tool(
            chapter,
            workdir,
            "edit_file",
            {"path": "file.txt", "old_string": middle, "new_string": new},
        )
        assert (result.get("is_error", False), (Path(workdir) / "file.txt").read_bytes()) == (
            False,
            (before + new + after).encode(),
        )


@pytest.mark.parametrize("name", FILE_CHAPTERS)
@PROFILE
@given(content=file_text)
def test_write_file_writes_exactly_the_content(name, content):
    chapter = shared_chapter(name)
    with tempfile.TemporaryDirectory() as workdir:
        result = run_one_tool(
            chapter, workdir, "write_file", {"path": "deep/er/file.txt", "content": content}
        )
        assert (
            result.get("is_error", False),
            (Path(workdir) / "deep/er/file.txt").read_bytes(),
        ) == (False, content.encode())


@pytest.mark.parametrize("name", FILE_CHAPTERS)
def test_edit_file_keeps_the_line_endings(name, tmp_path):
    (tmp_path / "dos.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    run_one_tool(
        load_chapter(name),
        tmp_path,
        "edit_file",
        {"path": "dos.txt", "old_string": "two\r\nthree", "new_string": "2\r\n3"},
    )
    assert (tmp_path / "dos.txt").read_bytes() == b"one\r\n2\r\n3\r\n"


@pytest.mark.parametrize("name", FILE_CHAPTERS)
def test_the_file_tools_keep_the_usual_file_modes(name, tmp_path):
    chapter = load_chapter(name)
    script = tmp_path / "run.sh"
    script.write_text("echo hi\n")
    script.chmod(0o755)
    umask = os.umask(0o022)
    os.umask(umask)

    run_one_tool(
        chapter, tmp_path, "edit_file", {"path": "run.sh", "old_string": "hi", "new_string": "ho"}
    )
    run_one_tool(chapter, tmp_path, "write_file", {"path": "new.txt", "content": "x"})
    assert (
        oct(script.stat().st_mode & 0o777),
        oct((tmp_path / "new.txt").stat().st_mode & 0o777),
    ) == (oct(0o755), oct(0o666 & ~umask))


PERMISSION_CHAPTERS = [name for name in PRESENT if hasattr(shared_chapter(name), "ask_permission")]


@pytest.mark.parametrize("path", ["", "two\nlines.txt"], ids=["empty path", "newline in the path"])
@pytest.mark.parametrize("name", PERMISSION_CHAPTERS)
def test_always_never_saves_a_rule_that_breaks_the_settings(name, path, tmp_path):
    """Answering 'a' for a path that makes no valid rule ("write_file()") must not leave a
    settings file that breaks every later tool call and the next start. (Found by these
    tests; fixed in s03 before they were done: remember_rule checks the rule first.)"""
    chapter = load_chapter(name)
    (tmp_path / "notes.txt").write_text("hello\n")
    client = EndlessClient(
        reply(tool_use("toolu_1", "write_file", {"path": path, "content": "x"})),
        reply(tool_use("toolu_2", "read_file", {"path": "notes.txt"})),
    )
    session = new_session(chapter, client, tmp_path)
    with patch("builtins.input", lambda prompt="": "a"), redirect_stdout(io.StringIO()):
        chapter.run_turn(session, "write it")

    read = tool_results(session.messages)[1]
    assert (read.get("is_error", False), read["content"]) == (False, "     1\thello")
    chapter.load_settings(tmp_path)  # what the next start does: it must not raise


# ======================================================================
# 7. BUGS FOUND BY THESE TESTS
# ======================================================================
# Each test says what should happen. They were xfail(strict=True) while the bug was
# there; the chapters have been fixed since, so they guard against its return. The
# comment names the chapter the code was born in; later chapters carried it over.


# Bug found by these tests (born in s01, since fixed): an empty or blank text block in a reply is
# copied into the history, and the API refuses the next request (text content blocks must be
# non-empty)
@pytest.mark.parametrize("blank", ["", " \n"])
@pytest.mark.parametrize("name", PRESENT)
def test_a_blank_text_block_from_the_model_is_not_sent_back(name, blank, tmp_path):
    chapter = load_chapter(name)
    client = EndlessClient(reply(text(blank), tool_use("toolu_1", "bash", {"command": "true"})))
    session = new_session(chapter, client, tmp_path)
    with patch("builtins.input", lambda prompt="": "y"):
        chapter.run_turn(session, "go")
    assert no_problems(client.calls) == [[], []]


# Bug found by these tests (born in s01, since fixed): Ctrl-C between storing the assistant turn and
# running its tools (here: while its text is printed) leaves tool_use blocks with no tool_result
@pytest.mark.parametrize("name", PRESENT)
def test_ctrl_c_while_the_reply_is_printed_leaves_a_valid_history(name, tmp_path):
    chapter = load_chapter(name)
    client = EndlessClient(
        reply(text("Let me look."), tool_use("toolu_1", "bash", {"command": "echo hi"}))
    )
    session = new_session(chapter, client, tmp_path)
    real_show = chapter.show

    def show(value, *args, **options):
        if value == "Let me look.":
            raise KeyboardInterrupt
        return real_show(value, *args, **options)

    with patch.object(chapter, "show", show), patch("builtins.input", lambda prompt="": "y"):
        chapter.run_turn(session, "look")
        chapter.run_turn(session, "go on")
    assert no_problems(client.calls[1:]) == [[]]


def proxy_traceback(request):
    message = "Traceback (most recent call last):\n  File \"proxy.py\", line 1\nKeyError: 'model'"
    return httpx2.Response(
        500, json={"type": "error", "error": {"type": "api_error", "message": message}}
    )


# Bug found by these tests (born in s01, since fixed): describe_api_error puts the server's message
# as it is on the screen; a message of several lines (a proxy's traceback) prints several lines
@pytest.mark.parametrize("name", PRESENT)
def test_an_api_error_is_one_line_even_when_the_message_has_several(
    name, tmp_path, monkeypatch, capsys
):
    code, bodies, screens, session = drive_repl(
        shared_chapter(name), tmp_path, monkeypatch, capsys, 0, proxy_traceback
    )
    assert [line.startswith("API error:") for line in printed_by_the_turn(screens[1], "hello")] == [
        True
    ]


NOT_A_MESSAGE = {
    "JSON of another API": lambda request: httpx2.Response(200, json={"choices": []}),
    "an HTML page": lambda request: httpx2.Response(
        200, text="<html>Sign in</html>", headers={"content-type": "text/html"}
    ),
}


# Bug found by these tests (born in s01, since fixed): a 200 reply that is not a Message
# (ANTHROPIC_BASE_URL pointing at the wrong server) raises TypeError/AttributeError out of run_turn
# and ends the REPL
@pytest.mark.parametrize("reply_kind", list(NOT_A_MESSAGE))
@pytest.mark.parametrize("name", PRESENT)
def test_a_reply_that_is_not_a_message_is_an_api_error(
    name, reply_kind, tmp_path, monkeypatch, capsys
):
    code, bodies, screens, session = drive_repl(
        shared_chapter(name), tmp_path, monkeypatch, capsys, 0, NOT_A_MESSAGE[reply_kind]
    )
    assert code == 0
    assert [line.startswith("API error:") for line in printed_by_the_turn(screens[1], "hello")] == [
        True
    ]
    assert session.messages == [user(text("again")), assistant(text("Hi."))]


# Bug found by these tests (born in s01, since fixed): main() sends a one-shot PROMPT of spaces as
# it is, a blank text block the API refuses (the REPL strips and skips blank lines; main does not)
@pytest.mark.parametrize("name", PRESENT)
def test_a_blank_one_shot_prompt_is_not_sent(name, tmp_path, monkeypatch):
    chapter = load_chapter(name)
    client = EndlessClient()
    monkeypatch.setattr(chapter, "ScriptedModel", lambda script: client)
    monkeypatch.setattr("builtins.input", lambda prompt="": (_ for _ in ()).throw(EOFError))
    with redirect_stdout(io.StringIO()):
        chapter.main(["--offline", "--workdir", str(tmp_path), "   "])
    assert no_problems(client.calls) == [[] for _ in client.calls]


# Bug found by these tests (born in s02, since fixed): write_file('.') makes its temporary file
# beside the workdir, in the folder above it, before the rename fails
@pytest.mark.parametrize("name", FILE_CHAPTERS)
def test_write_file_on_the_workdir_makes_nothing_outside_it_even_for_a_moment(name):
    chapter = load_chapter(name)
    folders = []
    real_mkstemp = tempfile.mkstemp

    def mkstemp(*args, dir=None, **options):
        folders.append(Path(dir).resolve())
        return real_mkstemp(*args, dir=dir, **options)

    with Sandbox() as box, patch.object(tempfile, "mkstemp", mkstemp):
        result = run_one_tool(chapter, box.work, "write_file", {"path": ".", "content": "x"})
        assert result.get("is_error") is True
        assert [folder for folder in folders if not folder.is_relative_to(box.work)] == []


# Bug found by these tests (born in s02, since fixed): some odd inputs crash inside the tool (glob
# '.' IndexError, glob './' AttributeError, write_file with a name over 255 bytes OSError from
# exists()) and reach the model as 'The tool failed: ...' instead of a clear refusal
@pytest.mark.parametrize(
    "tool, tool_input",
    [
        ("glob", {"pattern": "."}),
        ("glob", {"pattern": "./"}),
        ("write_file", {"path": "a" * 300, "content": "x"}),
    ],
    ids=["glob dot", "glob dot slash", "write_file long name"],
)
@pytest.mark.parametrize("name", FILE_CHAPTERS)
def test_odd_input_gets_a_clear_refusal_not_a_crash(name, tool, tool_input, tmp_path):
    result = run_one_tool(load_chapter(name), tmp_path, tool, tool_input)
    assert (result.get("is_error"), result["content"].startswith("The tool failed")) == (
        True,
        False,
    )


# Bug found by these tests (born in s01, since fixed): run_bash keeps all of a command's output in
# memory before it cuts it to OUTPUT_LIMIT; `cat /dev/urandom` (read-only, so it runs unasked from
# s03) can fill the memory within BASH_TIMEOUT
@pytest.mark.parametrize("name", PRESENT)
def test_a_flood_of_output_is_cut_while_it_arrives(name, tmp_path):
    chapter = load_chapter(name)
    tracemalloc.start()
    try:
        output = chapter.run_bash(new_session(chapter, None, tmp_path),
                                  "head -c 8000000 /dev/zero | tr '\\0' x")  # 8 MB of x
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert ("[output cut" in output, peak < 2_000_000) == (True, True)


# Bug found by these tests (born in s02, since fixed): read_file cuts by lines, not characters: one
# long line (a minified file) comes back whole, and a tool_result too big for the context window
# stays in the history, so every later request fails
@pytest.mark.parametrize("name", FILE_CHAPTERS)
def test_read_file_returns_a_bounded_amount_of_text(name, tmp_path):
    (tmp_path / "bundle.min.js").write_text("x" * 300_000 + "\n")
    result = run_one_tool(load_chapter(name), tmp_path, "read_file", {"path": "bundle.min.js"})
    assert len(result["content"]) < 100_000


# Bug found by these tests (born in s03, since fixed): is_read_only finds the writing option -C of
# `file` only at the start of an argument, not in a group of short options: `file -bC -m magic`
# writes magic.mgc without asking, and in plan mode (s06) too
@pytest.mark.skipif(shutil.which("file") is None, reason="needs the `file` command")
@pytest.mark.parametrize("name", PERMISSION_CHAPTERS)
def test_a_command_that_writes_never_passes_as_read_only(name, tmp_path):
    chapter = load_chapter(name)
    (tmp_path / "magic").write_text("0 string hi HI\n")
    session_extra = {PLAN_MODE_FIELD: True} if has_plan_mode(chapter) else {}
    client = EndlessClient(reply(tool_use("toolu_1", "bash", {"command": "file -bC -m magic"})))
    session = new_session(chapter, client, tmp_path, **session_extra)
    with patch("builtins.input", lambda prompt="": "n"), redirect_stdout(io.StringIO()):
        chapter.run_turn(session, "look")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["magic"]
