"""A small MCP server over stdio, in the standard library: the project's issue tracker.

It reads JSON-RPC 2.0 messages, one a line, on stdin, and answers on stdout; what it has to
say besides goes to stderr (the harness keeps it in a log). Its issues are in issues.json.
Run by the harness, as .mcp.json says: python3 tracker_server.py
"""

import json
import sys
from pathlib import Path

ISSUES = Path("issues.json")
NUMBER = {"type": "integer", "description": "The issue's number."}
TOOLS = [
    {"name": "list_issues", "description": "The open issues: number and title.",
     "inputSchema": {"type": "object", "properties": {}},
     "annotations": {"readOnlyHint": True}},
    {"name": "read_issue", "description": "One issue: its title, its text and its state.",
     "inputSchema": {"type": "object", "properties": {"number": NUMBER}, "required": ["number"]},
     "annotations": {"readOnlyHint": True}},
    {"name": "close_issue", "description": "Close an issue, with a comment that says why.",
     "inputSchema": {"type": "object", "required": ["number", "comment"], "properties": {
         "number": NUMBER, "comment": {"type": "string", "description": "Why it is closed."}}}},
]


def issue(issues, number):
    for item in issues:
        if item["number"] == number:
            return item
    raise LookupError(f"There is no issue {number}. list_issues shows the open ones.")


def call(name, arguments):
    """The text of the tool's answer; LookupError becomes an error result."""
    issues = json.loads(ISSUES.read_text())
    if name == "list_issues":
        return "\n".join(f"#{item['number']} {item['title']}"
                         for item in issues if item["state"] == "open") or "No open issues."
    found = issue(issues, arguments.get("number"))
    if name == "read_issue":
        return f"#{found['number']} {found['title']} ({found['state']})\n\n{found['text']}"
    found["state"], found["comment"] = "closed", arguments.get("comment", "")
    ISSUES.write_text(json.dumps(issues, indent=2) + "\n")
    return f"Closed #{found['number']}."


def answer(message):
    method = message.get("method")
    if method == "initialize":
        return {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "tracker", "version": "1.0"}}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        params = message["params"]
        try:
            text, failed = call(params["name"], params.get("arguments", {})), False
        except LookupError as error:
            text, failed = str(error), True
        return {"content": [{"type": "text", "text": text}], "isError": failed}
    raise KeyError(method)


for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:  # a notification: notifications/initialized, nothing to answer
        continue
    try:
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer(message)}
    except KeyError as error:
        reply = {"jsonrpc": "2.0", "id": message["id"],
                 "error": {"code": -32601, "message": f"Method not found: {error}"}}
    print(json.dumps(reply), flush=True)
    print(f"tracker: answered {message['method']}", file=sys.stderr, flush=True)
