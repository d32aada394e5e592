"""s11_mcp: servers from .mcp.json, asked before they start; the handshake, the offered tools,
a call and its result, over the real protocol; the guard; every way a server can fail; and no
process left behind.

The server is course/mcp_probe.py, which writes down every line it hears: a harness that skips
the handshake, sends other arguments, calls before the question or past a deny rule or a hook
fails a test that reads that log. A harness that leaves a server running fails the tests that
look for its pid. Two servers no one here wrote, one built with the official MCP Python SDK and
mcp-server-git from the registry, answer through the chapter in the last tests.
"""

import io
import json
import os
import select
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import course.mcp_probe as probe
from support import (
    ROOT,
    FakeClient,
    assistant,
    ctrl_c_delivered,
    golden,
    load_chapter,
    new_session,
    read_trace,
    reply,
    result,
    run_chapter,
    text,
    tool_use,
    user,
)

CHAPTERS = ["s11_mcp"]
PROBE = ROOT / "course" / "mcp_probe.py"
CLIENT_INFO = {"name": "build-an-agent", "version": "s11_mcp"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
HANDSHAKE = [INITIALIZE, INITIALIZED, LIST]
# What the model is offered: each of the probe's tools, under its mcp__ name, with its schema.
PROBE_TOOLS = [{"name": f"mcp__probe__{tool['name']}", "description": tool["description"],
                "input_schema": tool["inputSchema"]} for tool in probe.TOOLS]
START = "    [y] yes  [a] always (saved to .agent/settings.json)  [n] no: "


def call(ident, name, arguments):
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}


@pytest.fixture
def s11():
    chapter = load_chapter("s11_mcp")
    yield chapter
    for session in getattr(chapter, "sessions_made", []):  # a failed test leaves none running
        chapter.stop_servers(session)


@pytest.fixture
def project(tmp_path):
    """A workdir whose .mcp.json names the probe, run by this interpreter, logging to probe.log."""
    workdir = tmp_path.resolve()
    write_servers(workdir, probe=probe_entry(workdir))
    return workdir


def probe_entry(workdir, log="probe.log"):
    return {"command": sys.executable, "args": [str(PROBE), str(workdir / log)]}


def write_servers(workdir, **servers):
    (workdir / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")


def heard(workdir, log="probe.log"):
    """Every message the probe read, in order (its log's first line is its pid)."""
    lines = (workdir / log).read_text(encoding="utf-8").splitlines()[1:]
    return [json.loads(line) for line in lines]


def pid_of(workdir, log="probe.log"):
    return int((workdir / log).read_text(encoding="utf-8").splitlines()[0])


def running(pid):
    """Is that process still there (and not a zombie that only waits to be reaped)?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not status.exists() or "\nState:\tZ" not in status.read_text()


def started(s11, workdir, client, **extra):
    """A session whose servers have started (the answers are the test's)."""
    session = new_session(s11, client, workdir, **extra)
    s11.sessions_made = [*getattr(s11, "sessions_made", []), session]
    s11.start_servers(session)
    return session


def one_call(s11, workdir, answers, name, arguments, *lines, **extra):
    """Start the probe (yes), then a turn whose one call is `name`; its tool_result."""
    answers("y", *lines)
    client = FakeClient(reply(tool_use("toolu_1", f"mcp__probe__{name}", arguments)),
                        reply(text("Done.")))
    session = started(s11, workdir, client, **extra)
    s11.run_turn(session, "Go.")
    return session, client.calls[1]["messages"][-1]["content"][0]


# ======================================================================
# The handshake, the offered tools, a call and its result
# ======================================================================

def test_a_call_reaches_the_server_with_its_arguments_and_its_text_comes_back(
        s11, project, answers, capsys):
    asked = answers("y", "y")
    arguments = {"text": "héllo\nthere"}
    client = FakeClient(reply(tool_use("toolu_1", "mcp__probe__echo", arguments)),
                        reply(text("Done.")))
    session = started(s11, project, client)
    assert heard(project) == HANDSHAKE  # in this order, before any request to the model

    assert s11.run_turn(session, "Echo it.") is True

    tools = golden("s11_mcp")["tools"] + PROBE_TOOLS
    assert [request["tools"] for request in client.calls] == [tools, tools]
    assert heard(project) == [*HANDSHAKE, call(3, "echo", arguments)]
    assert client.calls[1]["messages"][1:] == [
        assistant(tool_use("toolu_1", "mcp__probe__echo", arguments)),
        user(result("toolu_1", "echo: héllo\nthere")),
    ]
    assert asked.prompts == [START, "    [y] yes  [a] always (saved to .agent/settings.json)  "
                                    "[n] no: "]
    log = project / ".agent" / "mcp-logs" / "probe.log"
    assert capsys.readouterr().out.splitlines() == [
        f"  ? start the MCP server probe from .mcp.json: {session.servers['probe'].command_line}",
        "y",
        f"mcp: probe: {len(probe.TOOLS)} tools   (/mcp lists them and the log)",
        "  > mcp__probe__echo: héllo … (1 more line)",
        "  ? allow mcp__probe__echo",
        "    text: (11 characters)",
        "    | héllo",
        "    | there",
        "    Its server says this tool only reads (readOnlyHint): a hint, not checked.",
        "y",
        "    echo: héllo",
        "    there",
        "Done.",
    ]
    assert log.exists()
    pid = pid_of(project)
    s11.stop_servers(session)
    assert not running(pid)
    offered = [tool["name"] for tool in golden("s11_mcp")["tools"]]
    assert [tool["name"] for tool in s11.TOOLS] == offered


def test_is_error_becomes_is_error_and_other_content_is_one_line(s11, project, answers):
    answers("y", "y", "y", "y")
    client = FakeClient(
        reply(tool_use("toolu_1", "mcp__probe__fail", {"text": "no such row"}),
              tool_use("toolu_2", "mcp__probe__picture", {}),
              tool_use("toolu_3", "mcp__probe__big", {"size": s11.MCP_OUTPUT_LIMIT + 5})),
        reply(text("Done.")))
    session = started(s11, project, client)

    s11.run_turn(session, "Go.")

    cut = (f"{'x' * s11.MCP_OUTPUT_LIMIT}\n[Cut: the server sent 100,005 characters of text; "
           "the first 100,000 are kept.]")
    assert client.calls[1]["messages"][-1] == user(
        result("toolu_1", "failed: no such row", is_error=True),
        result("toolu_2", "a transparent pixel\n[Left out: 1 image (content that is not text; "
                          "this harness passes on text only).]"),
        result("toolu_3", cut),
    )


# ======================================================================
# Asked before it starts; the guard before each call
# ======================================================================

def test_a_declined_server_is_not_started_and_its_tools_are_not_offered(s11, project, answers,
                                                                         capsys):
    answers("n")
    client = FakeClient(reply(text("Done.")))
    session = started(s11, project, client)
    s11.run_turn(session, "Go.")

    assert not (project / "probe.log").exists()  # the program never ran
    assert client.calls[0]["tools"] == golden("s11_mcp")["tools"]
    assert session.servers["probe"].state == "declined"
    assert capsys.readouterr().out.splitlines()[-2:] == [
        "mcp: probe not started (declined): its tools are not offered", "Done."]


def test_always_is_saved_with_the_exact_command_and_a_changed_command_asks_again(
        s11, project, answers):
    answers("a")
    first = started(s11, project, FakeClient())
    command = first.servers["probe"].command_line
    settings = json.loads((project / ".agent/settings.json").read_text())
    assert settings == {"approvedMcpServers": {"probe": command}}
    s11.stop_servers(first)

    answers()  # no question: the same command was approved
    second = started(s11, project, FakeClient(), settings=settings)
    assert second.servers["probe"].state == "running"
    s11.stop_servers(second)

    write_servers(project, probe=probe_entry(project, "other.log"))
    asked = answers("n")
    third = started(s11, project, FakeClient(), settings=settings)
    assert (asked.prompts, third.servers["probe"].state) == ([START], "declined")


def test_a_call_asks_first_and_a_no_never_reaches_the_server(s11, project, answers):
    session, answer = one_call(s11, project, answers, "echo", {"text": "hi"}, "n")
    assert answer["is_error"] is True
    assert heard(project) == HANDSHAKE


@pytest.mark.parametrize("rules", [
    {"deny": ["mcp__probe__echo"]},
    {"deny": ["mcp__probe__echo"], "allow": ["mcp__probe__echo"]},
])
def test_a_deny_rule_stops_the_call_before_the_server_hears_it(s11, project, answers, rules):
    settings = {"permissions": rules}
    session, answer = one_call(s11, project, answers, "echo", {"text": "hi"}, settings=settings)
    assert answer == result("toolu_1", "Denied by the rule 'mcp__probe__echo' in "
                                       ".agent/settings.json.", is_error=True)
    assert heard(project) == HANDSHAKE


def test_an_allow_rule_lets_it_run_without_a_question(s11, project, answers):
    settings = {"permissions": {"allow": ["mcp__probe__echo"]}}
    session, answer = one_call(s11, project, answers, "echo", {"text": "hi"}, settings=settings)
    assert answer == result("toolu_1", "echo: hi")


def test_a_pre_tool_use_hook_matching_the_mcp_name_blocks_before_the_server_hears_it(
        s11, project, answers):
    answers("y")
    client = FakeClient(reply(tool_use("toolu_1", "mcp__probe__echo", {"text": "hi"})),
                        reply(text("Done.")))
    session = new_session(s11, client, project)
    s11.sessions_made = [session]
    seen = []
    s11.add_hook(session, "PreToolUse", lambda event: seen.append(event["tool_name"]) or {
        "decision": "block", "reason": "not today"}, matcher="mcp__probe__.*")
    s11.start_servers(session)
    s11.run_turn(session, "Go.")

    assert client.calls[1]["messages"][-1] == user(
        result("toolu_1", "Blocked by a PreToolUse hook: not today", is_error=True))
    assert (seen, heard(project)) == (["mcp__probe__echo"], HANDSHAKE)


def test_plan_mode_offers_no_mcp_tool_and_refuses_one_called_anyway(s11, project, answers):
    answers("y")
    client = FakeClient(reply(tool_use("toolu_1", "mcp__probe__echo", {"text": "hi"})),
                        reply(text("Done.")))
    session = started(s11, project, client, plan_mode=True)
    s11.run_turn(session, "Go.")

    assert client.calls[0]["tools"] == [tool for tool in golden("s11_mcp")["tools"]
                                        if tool["name"] not in s11.PLAN_MODE_HIDDEN]
    assert client.calls[1]["messages"][-1]["content"][0]["is_error"] is True
    assert heard(project) == HANDSHAKE


def test_the_subagent_gets_the_same_tools_under_the_same_question(s11, project, answers,
                                                                 capsys):
    asked = answers("y", "y")
    task = {"description": "Echo a word", "prompt": "Echo hi."}
    client = FakeClient(reply(tool_use("toolu_1", "agent", task)),
                        reply(tool_use("toolu_2", "mcp__probe__echo", {"text": "hi"})),
                        reply(text("It said: echo: hi")), reply(text("Done.")))
    session = started(s11, project, client)
    s11.run_turn(session, "Go.")

    child_tools = [tool["name"] for tool in client.calls[1]["tools"]]
    assert [name for name in child_tools if name.startswith("mcp__")] == [
        tool["name"] for tool in PROBE_TOOLS]
    assert client.calls[2]["messages"][-1] == user(result("toolu_2", "echo: hi"))
    assert heard(project) == [*HANDSHAKE, call(3, "echo", {"text": "hi"})]
    out = capsys.readouterr().out
    assert '\n  ? subagent "Echo a word" asks: allow mcp__probe__echo\n' in out
    assert len(asked.prompts) == 2


def test_the_server_gets_the_tools_environment_and_never_the_key(s11, project, answers,
                                                                 monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-never-this")
    answers("y", "y", "y")
    client = FakeClient(reply(tool_use("toolu_1", "mcp__probe__env", {"name": "ANTHROPIC_API_KEY"}),
                              tool_use("toolu_2", "mcp__probe__env", {"name": "HOME"})),
                        reply(text("Done.")))
    session = started(s11, project, client, tool_environment={"HOME": str(project)})
    s11.run_turn(session, "Go.")
    assert client.calls[1]["messages"][-1] == user(result("toolu_1", "(not set)"),
                                                   result("toolu_2", str(project)))


# ======================================================================
# A server that fails: one line, an is_error result, the session goes on
# ======================================================================

@pytest.mark.parametrize(("tool", "said", "state"), [
    ("crash", "the MCP server probe exited (code 3); its stderr is in {log}", "exited (code 3)"),
    ("garbage", "the MCP server probe sent a line that is not JSON: this is not JSON; it is "
                "stopped, and its tools now fail", "stopped: it sent a line that is not JSON: "
                                                   "this is not JSON"),
    ("stray", "the MCP server probe answered the id 9999, which it was never sent (it was "
              "asked 3); it is stopped, and its tools now fail",
     "stopped: it answered the id 9999, which it was never sent (it was asked 3)"),
])
def test_a_crash_a_malformed_line_or_an_unknown_id_is_an_error_result_and_the_session_goes_on(
        s11, project, answers, tool, said, state):
    answers("y", "y", "y")
    client = FakeClient(reply(tool_use("toolu_1", f"mcp__probe__{tool}", {})),
                        reply(tool_use("toolu_2", "mcp__probe__echo", {"text": "hi"})),
                        reply(text("Done.")))
    session = started(s11, project, client)
    pid = pid_of(project)

    assert s11.run_turn(session, "Go.") is True

    log = project / ".agent" / "mcp-logs" / "probe.log"
    assert client.calls[1]["messages"][-1] == user(
        result("toolu_1", said.format(log=log), is_error=True))
    assert client.calls[2]["messages"][-1] == user(result(
        "toolu_2", f"the MCP server probe is {state}; /mcp shows its state", is_error=True))
    assert not running(pid)


def test_a_server_that_does_not_answer_in_time_is_an_error_and_the_request_is_cancelled(
        s11, project, answers):
    s11.MCP_TIMEOUT = 0.5
    session, answer = one_call(s11, project, answers, "hang", {}, "y")
    assert answer == result("toolu_1", "probe did not answer tools/call within 0.5 seconds",
                            is_error=True)
    assert session.servers["probe"].state == "running"  # a slow tool is not a broken server
    s11.stop_servers(session)  # its log is whole once it has ended
    assert heard(project)[3:] == [call(3, "hang", {}), {
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 3, "reason": "timed out"}}]


def test_ctrl_c_during_a_call_cancels_the_turn_and_the_end_of_the_session_ends_the_server(
        s11, project, answers, tmp_path):
    answers("y", "y")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"prompt": "Go.", "turns": [
        {"content": [{"type": "tool_use", "name": "mcp__probe__hang", "input": {}}]},
        {"content": [{"type": "text", "text": "Done."}]}]}))
    s11.sessions_made = []
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    with ctrl_c_delivered():
        timer.start()
        code = s11.main(["--script", str(script), "--workdir", str(project), "Go."])
    timer.cancel()

    assert code == 1
    assert heard(project)[-1] == {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                  "params": {"requestId": 3, "reason": "interrupted by the user"}}
    assert not running(pid_of(project))


# ======================================================================
# .mcp.json: a bad entry is one line, and the others start
# ======================================================================

def test_a_bad_entry_is_one_line_and_the_others_start(s11, project, answers, capsys):
    write_servers(project, probe=probe_entry(project), web={"type": "http", "url": "http://x"},
                  **{"a__b": {"command": "x"}, "nocmd": {"args": []}})
    answers("y")
    session = started(s11, project, FakeClient())

    assert list(session.servers) == ["probe"]
    assert capsys.readouterr().out.splitlines()[:3] == [
        "mcp: .mcp.json: the server 'web' is left out: its type is 'http', and this harness "
        "starts stdio servers only",
        "mcp: .mcp.json: the server 'a__b' is left out: a name is at most 20 letters, digits, "
        "\"-\" and single \"_\": it becomes part of each tool's name",
        "mcp: .mcp.json: the server 'nocmd' is left out: \"command\", \"args\" and \"env\" hold "
        "strings (no NUL)",
    ]


@pytest.mark.parametrize(("content", "line"), [
    ("{", "mcp: .mcp.json is not valid JSON (Expecting property name enclosed in double quotes: "
          "line 1 column 2 (char 1))"),
    ("[]", 'mcp: .mcp.json must hold {"mcpServers": {"NAME": {"command": ...}}}'),
])
def test_a_broken_mcp_json_is_one_line_and_nothing_starts(s11, tmp_path, answers, capsys,
                                                          content, line):
    (tmp_path / ".mcp.json").write_text(content)
    answers()
    session = started(s11, tmp_path.resolve(), FakeClient())
    assert (session.servers, capsys.readouterr().out) == ({}, line + "\n")


def test_a_program_that_cannot_run_is_one_line(s11, tmp_path, answers, capsys):
    write_servers(tmp_path, gone={"command": str(tmp_path / "no-such-program")})
    answers("y")
    session = started(s11, tmp_path.resolve(), FakeClient())
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"mcp: gone failed: cannot run '{tmp_path / 'no-such-program'}': No such file or "
        "directory")
    assert session.servers["gone"].state == "failed to start"


def test_mcp_json_is_a_file_that_gives_power(s11, project):
    session = new_session(s11, FakeClient(), project, mode="bypass")
    decision, why = s11.check_permission(
        session, "write_file", {"path": ".mcp.json", "content": "{}"})
    assert (decision, why) == ("ask", "it changes .mcp.json: the next session offers to start "
                                      "the programs it names")


# ======================================================================
# Seen: the banner, /mcp, the trace
# ======================================================================

def test_the_trace_has_each_message_beside_the_model_calls(s11, project, answers):
    trace = project / "trace.jsonl"
    session, answer = one_call(s11, project, answers, "echo", {"text": "hi"}, "y", trace=trace)
    s11.stop_servers(session)
    lines = read_trace(trace)
    served = [line for line in lines if "mcp" in line]
    answer_of = [line["receive"] for line in served if "receive" in line]
    assert served == [
        {"mcp": "probe", "send": INITIALIZE}, {"mcp": "probe", "receive": answer_of[0]},
        {"mcp": "probe", "send": INITIALIZED}, {"mcp": "probe", "send": LIST},
        {"mcp": "probe", "receive": {"jsonrpc": "2.0", "id": 2, "result": {"tools": probe.TOOLS}}},
        {"mcp": "probe", "send": call(3, "echo", {"text": "hi"})},
        {"mcp": "probe", "receive": {"jsonrpc": "2.0", "id": 3, "result": {
            "content": [{"type": "text", "text": "echo: hi"}]}}},
        {"mcp": "probe", "exited": 0},
    ]
    # the model's calls come between: after tools/list, around the tools/call
    assert [sorted(line)[0] if "mcp" in line else "model" for line in lines][4:8] == [
        "mcp", "model", "mcp", "mcp"]


def test_the_banner_and_slash_mcp(s11, project, answers, capsys):
    session = new_session(s11, FakeClient(), project)
    s11.sessions_made = [session]
    assert s11.mcp_banner(session) == ("mcp: .mcp.json names probe: each starts at the first "
                                       "prompt, if you say yes   (/mcp lists them)")
    answers("y")
    s11.start_servers(session)
    capsys.readouterr()
    s11.command_mcp(session, "")
    command = session.servers["probe"].command_line
    log = project / ".agent" / "mcp-logs" / "probe.log"
    assert capsys.readouterr().out.splitlines() == [
        f"probe: running   {command}",
        "  mcp__probe__echo   (its server says it only reads: not checked)",
        *[f"  mcp__probe__{tool['name']}" for tool in probe.TOOLS[1:]],
        f"  stderr: {log}",
    ]


def test_a_run_as_the_learner_runs_it_leaves_no_server_behind(project, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"prompt": "Go.", "turns": [
        {"content": [{"type": "tool_use", "name": "mcp__probe__echo", "input": {"text": "hi"}}]},
        {"content": [{"type": "text", "text": "Done."}]}]}))
    run = run_chapter("s11_mcp", "--script", script, "--workdir", project, "Go.",
                      stdin="y\ny\n")
    assert (run.returncode, run.stderr) == (0, "")
    assert "    echo: hi\n" in run.stdout
    assert heard(project) == [*HANDSHAKE, call(3, "echo", {"text": "hi"})]
    assert not running(pid_of(project))


# ======================================================================
# Servers no one here wrote: the official SDK's, and mcp-server-git
# ======================================================================

SDK_SERVER = '''
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("sdk")


@server.tool()
def add(a: int, b: int) -> str:
    """Add two whole numbers."""
    return str(a + b)


@server.tool()
def refuse(reason: str) -> str:
    """Fail, saying why."""
    raise ToolError(reason)


server.run()
'''


def test_a_server_built_with_the_sdk_and_mcp_server_git_answer_through_the_chapter(
        s11, tmp_path, answers):
    pytest.importorskip("mcp_server_git")
    workdir = tmp_path.resolve()
    (workdir / "sdk_server.py").write_text(SDK_SERVER)
    subprocess.run(["git", "init", "-q", str(workdir / "repo")], check=True)
    (workdir / "repo" / "notes.txt").write_text("new\n")
    write_servers(workdir, sdk={"command": sys.executable, "args": ["sdk_server.py"]},
                  git={"command": sys.executable,
                       "args": ["-m", "mcp_server_git", "--repository", "repo"]})
    answers("y", "y", "y", "y", "y")
    s11.MCP_STOP_WAIT = 0.2  # they end slowly on EOF: SIGTERM sooner
    client = FakeClient(
        reply(tool_use("toolu_1", "mcp__sdk__add", {"a": 2, "b": 40}),
              tool_use("toolu_2", "mcp__sdk__refuse", {"reason": "not today"}),
              tool_use("toolu_3", "mcp__git__git_status", {"repo_path": "repo"})),
        reply(text("Done.")))
    session = started(s11, workdir, client)
    s11.run_turn(session, "Go.")

    offered = {tool["name"]: tool for tool in client.calls[0]["tools"]}
    assert offered["mcp__sdk__add"]["input_schema"] == {
        "properties": {"a": {"title": "A", "type": "integer"},
                       "b": {"title": "B", "type": "integer"}},
        "required": ["a", "b"], "type": "object", "title": "addArguments"}
    assert "mcp__git__git_status" in offered
    status = subprocess.run(["git", "status"], cwd=workdir / "repo", capture_output=True,
                            text=True, check=True).stdout
    results = client.calls[1]["messages"][-1]["content"]
    assert results[0] == result("toolu_1", "42")
    assert results[1] == result("toolu_2", "Error executing tool refuse: not today", is_error=True)
    assert results[2] == result("toolu_3", f"Repository status:\n{status.rstrip()}")
    processes = [server.process.pid for server in session.servers.values()]
    s11.stop_servers(session)
    assert [running(pid) for pid in processes] == [False, False]


# ======================================================================
# Hostile servers (the red team's): each is one line, and nothing is left running
# ======================================================================

# A server in a few lines: it answers initialize, then does what its mode says.
HOSTILE = '''import json, os, subprocess, sys, time
mode, out = sys.argv[1], sys.stdout
def send(ident, result):
    out.write(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}) + "\\n")
    out.flush()
ident = json.loads(sys.stdin.readline())["id"]
if mode == "list id":
    send([ident], {})
send(ident, {"protocolVersion": "2025-06-18", "capabilities": {}})
sys.stdin.readline()
if mode == "stderr":
    sys.stderr.write("x" * int(sys.argv[2]))
    sys.stderr.flush()
if mode == "pages":  # a page of tools for each size in argv[2] ("600,401"), linked by cursors
    sizes = [int(size) for size in sys.argv[2].split(",")]
    for page, size in enumerate(sizes):
        first, more = sum(sizes[:page]), {"nextCursor": str(page)} if page < len(sizes) - 1 else {}
        send(json.loads(sys.stdin.readline())["id"], {**more, "tools": [
            {"name": f"t{first + n}", "inputSchema": {"type": "object"}} for n in range(size)]})
    sys.exit(sys.stdin.read() and 0)
if mode == "closes stdout":
    os.close(1); time.sleep(5)
if mode in ("grandchild", "own session"):  # its own session: out of its process group
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"],
                             start_new_session=mode == "own session")
    open("child.pid", "w").write(str(child.pid))
ident = json.loads(sys.stdin.readline())["id"]
schema = {"type": "object"}
send(ident, {"nextCursor": "again" if mode == "same cursor" else None, "tools": [
    {"name": "odd", "inputSchema": schema, "annotations": ["readOnlyHint"]},
    {"name": "bad", "inputSchema": {**schema, "properties": [1], "required": 5}}]})
while mode == "reads no more":
    time.sleep(5)
while mode == "same cursor":
    send(json.loads(sys.stdin.readline())["id"], {"nextCursor": "again", "tools": []})
while sys.stdin.readline():
    pass
'''


def hostile(s11, workdir, answers, mode, *args):
    (workdir / "hostile.py").write_text(HOSTILE, encoding="utf-8")
    write_servers(workdir, h={"command": sys.executable, "args": ["hostile.py", mode, *args]})
    answers("y")
    s11.MCP_STOP_WAIT = 0.2
    return started(s11, workdir, FakeClient())


@pytest.mark.parametrize(("mode", "line", "state"), [
    ("list id", "mcp: h failed: the MCP server h answered the id [1], which it was never sent "
     "(it was asked 1); it is stopped, and its tools now fail",
     "stopped: it answered the id [1], which it was never sent (it was asked 1)"),
    ("closes stdout", "mcp: h failed: the MCP server h closed its stdout; it is stopped, and "
     "its tools now fail", "stopped: it closed its stdout"),
    ("same cursor", "mcp: h failed: h sent a list of tools that does not end", "failed"),
])
def test_a_broken_handshake_is_one_line_and_the_server_is_stopped(
        s11, tmp_path, answers, capsys, mode, line, state):
    session = hostile(s11, tmp_path, answers, mode)
    assert capsys.readouterr().out.splitlines()[-1] == line
    assert session.servers["h"].state == state
    assert session.servers["h"].process is None


def test_odd_annotations_are_no_hint_and_a_schema_the_guard_cannot_read_is_left_out(
        s11, tmp_path, answers, capsys):
    session = hostile(s11, tmp_path, answers, "two tools")
    assert capsys.readouterr().out.splitlines()[-2:] == [
        "mcp: h: bad is left out: its inputSchema is not a JSON Schema of type object",
        "mcp: h: 1 tools   (/mcp lists them and the log)"]
    assert session.servers["h"].tools == ["mcp__h__odd"]
    assert s11.MCP_READ_ONLY == set()


def test_a_long_error_message_is_cut(s11, project, answers):
    answers("y")
    session = started(s11, project, FakeClient())
    s11.MCP_ERROR_LIMIT = 20
    with pytest.raises(s11.ToolError) as error:
        session.servers["probe"].request(session, "tools/call", {"name": "x" * 50})
    assert str(error.value) == ("probe answered tools/call with the error -32602: "
                                "no tool xxxxxxxxxxxx… (38 more characters)")


def test_a_server_that_reads_no_more_fails_within_the_time_limit(s11, tmp_path, answers):
    session = hostile(s11, tmp_path, answers, "reads no more")
    s11.MCP_TIMEOUT = 0.5
    with pytest.raises(s11.ToolError) as error:  # more than a pipe holds
        session.servers["h"].request(session, "tools/call", {"name": "odd", "arguments": {
            "text": "x" * 300_000}})
    assert str(error.value) == ("the MCP server h read nothing of its stdin for 0.5 seconds; "
                                "it is stopped, and its tools now fail")


def test_what_a_server_started_ends_with_it(s11, tmp_path, answers):
    session = hostile(s11, tmp_path, answers, "grandchild")
    child = os.pidfd_open(int((tmp_path / "child.pid").read_text()))  # readable once it ends
    try:
        stopping = threading.Thread(target=s11.stop_servers, args=(session,), daemon=True)
        stopping.start()  # the server exits as its stdin closes; its child lived on, and held
        stopping.join(10)  # its stdout open: the harness waited for it
        # SIGKILL is delivered on its own time: wait for the child's end, never past 10 s
        assert (stopping.is_alive(), select.select([child], [], [], 10)[0]) == (False, [child])
    finally:
        os.close(child)


def test_a_child_in_its_own_session_holding_the_servers_output_hangs_nothing(s11, tmp_path,
                                                                              answers, capsys):
    """A child that left the server's process group (setsid) outlives killpg, and holds the
    server's stdout and stderr open: closing stdout waited for the reader thread, blocked in a
    read that ends only when the child does (30 s here; for ever for a daemon)."""
    session = hostile(s11, tmp_path, answers, "own session")
    child, server = int((tmp_path / "child.pid").read_text()), session.servers["h"]
    try:
        stopping = threading.Thread(target=s11.stop_servers, args=(session,), daemon=True)
        stopping.start()
        stopping.join(10)
        assert (stopping.is_alive(), server.state) == (False, "ended with the session")
        assert capsys.readouterr().out.splitlines()[-1] == (
            "[h left a process running, outside its process group, that holds its output open: "
            "the harness cannot stop it.]")
    finally:
        os.kill(child, signal.SIGKILL)


@pytest.mark.parametrize(("pages", "offered", "left_out"), [
    ("999", 999, None), ("1000", 1000, None),
    ("1001", 1000, "h lists 1,001 tools: the first 1,000 are kept, 1 left out"),
    ("600,399", 999, None), ("600,400", 1000, None),
    ("600,401", 1000, "h lists 1,001 tools: the first 1,000 are kept, 1 left out"),
    ("1000,5", 1000, "h lists 1,000 tools and more pages: the first 1,000 are kept, the rest "
                     "left out"),
])
def test_a_server_offers_at_most_a_thousand_tools_over_all_its_pages_and_a_line_says_how_many_not(
        s11, tmp_path, answers, capsys, pages, offered, left_out):
    session = hostile(s11, tmp_path, answers, "pages", pages)
    server = session.servers["h"]
    names = [f"mcp__h__t{n}" for n in range(offered)]
    assert (server.tools, [tool["name"] for tool in s11.TOOLS][-offered:]) == (names, names)
    said = [f"mcp: {left_out}"] if left_out else []
    assert capsys.readouterr().out.splitlines()[-1 - len(said):] == [
        *said, f"mcp: h: {offered} tools   (/mcp lists them and the log)"]
    s11.command_mcp(session, "")
    assert capsys.readouterr().out.splitlines()[offered + 1:] == [
        *([f"  {left_out}"] if left_out else []), f"  stderr: {server.log}"]


LOG_CUT = "[Cut: this log keeps the last 64,000 bytes of its stderr.]\n"


@pytest.mark.parametrize(("size", "kept"), [
    (63_999, "x" * 63_999), (64_000, "x" * 64_000), (64_001, LOG_CUT + "x" * 64_000)])
def test_a_server_log_keeps_the_last_64_000_bytes_of_its_stderr_and_says_it_was_cut(
        s11, tmp_path, answers, size, kept):
    session = hostile(s11, tmp_path, answers, "stderr", str(size))
    log = session.servers["h"].log
    s11.stop_servers(session)
    assert log.read_text() == kept


@pytest.mark.parametrize(("before", "written", "kept"), [
    ("a" * 63_999, b"b", "a" * 63_999 + "b"),
    ("a" * 64_000, b"", "a" * 64_000),
    ("a" * 64_000, b"b", LOG_CUT + "a" * 63_999 + "b"),
    (LOG_CUT + "a" * 64_000, b"bc", LOG_CUT + "a" * 63_998 + "bc"),
    ("a" * 100_000, b"b", LOG_CUT + "a" * 63_999 + "b"),
])
def test_the_log_of_an_earlier_start_counts_toward_the_limit(s11, tmp_path, before, written,
                                                            kept):
    path = tmp_path / "h.log"
    path.write_text(before)
    s11.keep_log(io.BytesIO(written), os.open(path, os.O_RDWR))
    assert path.read_text() == kept
