"""Stage s11: tools that live in another program, an MCP server over stdio.

Its contract is its lesson's section "Build it yourself"; each check is named by the rule
it judges.

The checker ships its own server, course/mcp_probe.py (the standard library only), beside the
workdir, and names it in the workdir's .mcp.json, run by the checker's own Python. The probe
writes down every line it hears, so the checks read the exact handshake and calls from its log;
with --linger it does not exit when its stdin ends, so only a program that ends it leaves no
process behind."""

import json
import os
import shutil
import signal
import sys
from pathlib import Path

from course.stages import Exchange, Fail, cut
from course.stages.common import YES, check, text, use

PROBE = Path(__file__).resolve().parent.parent / "mcp_probe.py"
LOG = "probe.log"  # beside the workdir: ../probe.log


def ship_probe(root, draw):
    """The probe beside the workdir, and the workdir's .mcp.json that names it."""
    shutil.copy(PROBE, root / "probe.py")
    servers = {draw.fill("<<server>>"): {
        "command": sys.executable, "args": [str(root / "probe.py"), str(root / LOG), "--linger"]}}
    (root / "work" / ".mcp.json").write_text(json.dumps({"mcpServers": servers}),
                                             encoding="utf-8")


def probe_tools():
    """The probe's tools, as its tools/list gives them."""
    namespace = {}
    exec(compile(PROBE.read_text(encoding="utf-8"), str(PROBE), "exec"), namespace)  # noqa: S102
    return namespace["TOOLS"]


def name(tool):
    return f"mcp__<<server>>__{tool}"


DENY = {".agent/settings.json": json.dumps({"permissions": {"deny": [name("picture")]}})}
MCP = Exchange("mcp", "Ask <<server>> (<<prompt>>).", [
    [text("Asking the server."), use("echo", name("echo"), text="<<said>>"),
     use("fail", name("fail"), text="<<why>>")],
    [text("Done: <<final>>")],
], stdin=YES, setup=ship_probe)
DECLINED = Exchange("mcp_declined", "Ask <<server>> (<<prompt>>).", [[text("Done: <<final>>")]],
                    stdin="n\n" * 10, setup=ship_probe)
# y to start the server, n to echo's question, then y: picture is denied by a rule, which
# decides without a question (a program that asks instead gets a y, and the server hears it).
ASKED = Exchange("mcp_asked", "Ask <<server>> (<<prompt>>).", [
    [use("echo", name("echo"), text="<<said>>"), use("denied", name("picture"))],
    [text("Done: <<final>>")],
], stdin="y\nn\n" + "y\n" * 10, files=DENY, setup=ship_probe)


def heard(run):
    """The messages the probe read, in order; [] if it never ran."""
    said = run.file(f"../{LOG}")
    if said is None:
        return []
    messages = []
    for line in said.splitlines()[1:]:
        try:
            messages.append(json.loads(line))
        except ValueError:
            messages.append({"not JSON": line})
    return messages


def calls(run, tool=None):
    return [message for message in heard(run) if message.get("method") == "tools/call"
            and (tool is None or (message.get("params") or {}).get("name") == tool)]


def started(run):
    if run.file(f"../{LOG}") is None:
        raise Fail(f"The server {run.v('<<server>>')} never started: the workdir's .mcp.json "
                   f"names it, {cut(run.file('.mcp.json'), 200)}, and the answer on stdin was "
                   "y. Read .mcp.json, ask, then start its command with its args. "
                   f"{run.ending()}")


@check(MCP, "the handshake: initialize (protocolVersion, capabilities, clientInfo), then "
       "notifications/initialized, then tools/list, before any call")
def handshake(run):
    started(run)
    said = heard(run)
    methods = [message.get("method") for message in said]
    wanted = ["initialize", "notifications/initialized", "tools/list"]
    if methods[:3] != wanted:
        raise Fail(f"The server heard {methods[:4]} first; it should hear {wanted}, in that "
                   "order, one JSON-RPC 2.0 message a line, before any tools/call.")
    first = said[0]
    params = first.get("params") or {}
    if (first.get("jsonrpc") != "2.0" or "id" not in first
            or not isinstance(params.get("protocolVersion"), str)
            or not isinstance(params.get("capabilities"), dict)
            or not isinstance((params.get("clientInfo") or {}).get("name"), str)
            or not isinstance((params.get("clientInfo") or {}).get("version"), str)):
        raise Fail(f"The initialize request was {cut(json.dumps(first), 200)}; it should be "
                   '{"jsonrpc": "2.0", "id": ..., "method": "initialize", "params": '
                   '{"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": '
                   '{"name": ..., "version": ...}}}.')
    if "id" in said[1] or "id" not in said[2]:
        raise Fail("notifications/initialized is a notification (no id), and tools/list a "
                   f"request (an id): the server heard {cut(json.dumps(said[1:3]), 200)}.")


@check(MCP, "each of the server's tools is offered as mcp__SERVER__TOOL with the server's "
       "inputSchema", follows=["handshake"])
def offered(run):
    tools = {tool.get("name"): tool for tool in run.request(1).get("tools") or []}
    for tool in probe_tools():
        wanted = run.v(name(tool["name"]))
        if wanted not in tools:
            raise Fail(f"Request 1 offers {sorted(tools)}; it should offer each of the server's "
                       f"tools as mcp__SERVER__TOOL, {wanted} among them.")
        if tools[wanted].get("input_schema") != tool["inputSchema"]:
            raise Fail(f"Request 1 offers {wanted} with the input_schema "
                       f"{cut(json.dumps(tools[wanted].get('input_schema')), 200)}; it should "
                       f"be the server's inputSchema, {json.dumps(tool['inputSchema'])}.")


@check(MCP, "a call is tools/call with the model's input as its arguments, and the text of "
       "the answer is the tool_result", follows=["handshake", "offered"])
def call_text(run):
    wanted = {"name": "echo", "arguments": {"text": run.v("<<said>>")}}
    found = calls(run, "echo")
    if [message.get("params") for message in found] != [wanted]:
        raise Fail(f"The server heard the tools/call requests {cut(json.dumps(found), 200)} "
                   f"for {run.call(1, 'echo')}; it should hear one, with the params "
                   f"{json.dumps(wanted)}.")
    run.ok(1, "echo", "echo: <<said>>")


@check(MCP, "isError in the answer makes the tool_result is_error", follows=["call_text"])
def is_error(run):
    said = run.refused(1, "fail", "the server answered with isError: true")
    if run.v("failed: <<why>>") not in said:
        raise Fail(f"The result of {run.call(1, 'fail')} is {cut(said)!r}; it should hold the "
                   f"server's text, {run.v('failed: <<why>>')!r} (request 2).")


@check(ASKED, "a deny rule on an mcp__ name stops the call before the server hears it")
def deny_rule(run):
    run.refused(1, "denied", f'the rule "{run.v(name("picture"))}" denies it')
    if calls(run, "picture"):
        raise Fail(f"The server heard {cut(json.dumps(calls(run, 'picture')), 200)}; the deny "
                   f"rule {run.v(name('picture'))!r} should stop the call before the server "
                   "hears it.")


@check(MCP, "every server is ended when the program ends: no process is left",
       follows=["handshake"])
def none_left(run):
    started(run)
    pid = int(run.file(f"../{LOG}").splitlines()[0])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return
    status = Path(f"/proc/{pid}/status")
    if status.exists() and "\nState:\tZ" in status.read_text():
        return
    os.kill(pid, signal.SIGKILL)  # the checker leaves nothing behind either
    raise Fail("The server was still running after your program ended. End each server "
               "before the program exits: close its stdin, wait a moment, then SIGTERM, then "
               f"SIGKILL (a server need not exit when its stdin ends; this one was pid {pid}).")


@check(DECLINED, "the program asks before it starts a server, and a no leaves it off, its tools "
       "not offered")
def asks_to_start(run):
    if run.file(f"../{LOG}") is not None:
        raise Fail(f"The server {run.v('<<server>>')} ran, though the answers on stdin were n: "
                   "ask before starting each server of .mcp.json, showing its command, and "
                   "start it only on y.")
    tools = [tool for tool in run.tools(1) if tool.startswith("mcp__")]
    if tools:
        raise Fail(f"Request 1 offers {tools}, the tools of a server the user declined; offer "
                   "none of them.")


@check(ASKED, "a server's tool asks before it runs, and a no never reaches the server")
def asks_before_call(run):
    started(run)
    if calls(run, "echo"):
        raise Fail(f"The server heard {cut(json.dumps(calls(run, 'echo')), 200)}, though the "
                   f"answer to {run.call(1, 'echo')} was n: ask before each call, and send "
                   "tools/call only on y.")
    run.refused(1, "echo", "the user said n")
