"""A stdio MCP server in the standard library that writes down what it hears: the probe.

The tests of s11 and the stage checker's s11 start it as a learner's harness would start any
server named in .mcp.json: `python3 mcp_probe.py LOG`. Each line it reads from stdin is
appended to LOG as it came (one JSON-RPC message a line), so a check can read the exact
handshake, the exact arguments of a call, and that a call denied never reached it. Its pid is
the first line of LOG, so a check can see that no server is left running.

With --linger after LOG, it does not exit when its stdin ends, as a careless server would not:
only a harness that ends it (SIGTERM, SIGKILL) leaves no process behind; it exits by itself
after LINGER seconds, so that a test that finds it running leaves nothing behind either.

Its tools: echo (text back; it says it only reads), fail (an isError result), picture (an
image and a caption), big (a text of `size` characters), env (a variable of its environment),
and four that break the protocol the way a real server can: crash (exits without an answer),
hang (never answers), garbage (a line that is not JSON) and stray (an answer to an id it was
never sent).
"""

import json
import os
import sys
import time

PROTOCOL_VERSION = "2025-11-25"
LINGER = 60  # seconds a --linger probe waits after its stdin ends, unless it is ended first


def schema(**properties):
    return {"type": "object", "properties": properties, "required": list(properties)}


TEXT = {"type": "string", "description": "Any text."}
TOOLS = [
    {"name": "echo", "description": "Say the text back.", "inputSchema": schema(text=TEXT),
     "annotations": {"readOnlyHint": True}},
    {"name": "fail", "description": "Answer with an error that says the text.",
     "inputSchema": schema(text=TEXT)},
    {"name": "picture", "description": "A small picture and its caption.",
     "inputSchema": schema()},
    {"name": "big", "description": "A text of `size` characters.",
     "inputSchema": schema(size={"type": "integer", "description": "How many characters."})},
    {"name": "env", "description": "The value of an environment variable of the server.",
     "inputSchema": schema(name={"type": "string", "description": "The variable's name."})},
    {"name": "crash", "description": "Exit at once.", "inputSchema": schema()},
    {"name": "hang", "description": "Never answer.", "inputSchema": schema()},
    {"name": "garbage", "description": "Answer with a line that is not JSON.",
     "inputSchema": schema()},
    {"name": "stray", "description": "Answer with an id that was never sent.",
     "inputSchema": schema()},
]
# A 1x1 transparent PNG: the one content item that is not text.
PIXEL = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5"
         "ErkJggg==")


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def text(words, is_error=False):
    result = {"content": [{"type": "text", "text": words}]}
    if is_error:
        result["isError"] = True
    return result


def call(name, arguments):
    """The result of tools/call, or None when the tool breaks the protocol instead."""
    if name == "echo":
        return text(f"echo: {arguments.get('text')}")
    if name == "fail":
        return text(f"failed: {arguments.get('text')}", is_error=True)
    if name == "picture":
        return {"content": [{"type": "image", "data": PIXEL, "mimeType": "image/png"},
                            {"type": "text", "text": "a transparent pixel"}]}
    if name == "big":
        return text("x" * int(arguments.get("size", 0)))
    if name == "env":
        return text(os.environ.get(str(arguments.get("name")), "(not set)"))
    if name == "crash":
        sys.exit(3)
    if name == "garbage":
        sys.stdout.write("this is not JSON\n")
        sys.stdout.flush()
    return None  # hang and stray answer (or not) in main


def main():
    log = open(sys.argv[1], "a", encoding="utf-8")  # noqa: SIM115 (open for the whole run)
    log.write(f"{os.getpid()}\n")
    log.flush()
    ready = False  # notifications/initialized came after initialize
    for line in sys.stdin:
        log.write(line if line.endswith("\n") else line + "\n")
        log.flush()
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": ident, "result": {
                "protocolVersion": PROTOCOL_VERSION, "capabilities": {"tools": {}},
                "serverInfo": {"name": "probe", "version": "1.0"}}})
        elif method == "notifications/initialized":
            ready = True
        elif ident is None:
            continue
        elif not ready:
            send({"jsonrpc": "2.0", "id": ident,
                  "error": {"code": -32002, "message": "not initialized"}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": ident, "result": {"tools": TOOLS}})
        elif method == "tools/call":
            params = message.get("params", {})
            if params.get("name") not in [tool["name"] for tool in TOOLS]:
                send({"jsonrpc": "2.0", "id": ident,
                      "error": {"code": -32602, "message": f"no tool {params.get('name')}"}})
                continue
            result = call(params.get("name"), params.get("arguments") or {})
            if params.get("name") == "stray":
                send({"jsonrpc": "2.0", "id": 9999, "result": text("stray")})
            elif result is not None:
                send({"jsonrpc": "2.0", "id": ident, "result": result})
        else:
            send({"jsonrpc": "2.0", "id": ident,
                  "error": {"code": -32601, "message": f"no method {method}"}})
    if "--linger" in sys.argv[2:]:
        time.sleep(LINGER)


if __name__ == "__main__":
    main()
