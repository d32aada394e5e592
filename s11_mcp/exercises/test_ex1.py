"""Exercise 1: Structured content.

Task: A tool may answer with `structuredContent`, a JSON object, beside its `content`; the MCP
specification asks a server to put the same JSON in a text item too, but not every server does.
When a result of tools/call has no text item and has a `structuredContent` object, make the
tool_result that object as JSON (`json.dumps`), before the line about the other items. A result
with a text item stays as it is.

Hint: `call_mcp_tool` has the whole result before it makes the text; a text item made from the
object, put first in `content`, goes through `result_text` like any other.
"""

import json
from pathlib import Path

from course.check import FakeClient, expect_equal, load, need, reply, run, served, text, tool_use

CODE = Path(__file__).resolve().parent.parent / "code.py"
EMPTY = {"type": "object", "properties": {}}
TOOLS = [{"name": "weather", "inputSchema": EMPTY}, {"name": "both", "inputSchema": EMPTY}]
WEATHER = {"temperature": 22.5, "conditions": "cloudy"}
RESULTS = {
    "weather": {"content": [], "structuredContent": WEATHER},
    "both": {"content": [{"type": "text", "text": "22.5 and cloudy"}],
             "structuredContent": WEATHER},
}


def check(code):
    chapter = load(code)
    need(chapter, "start_servers", "stop_servers")
    with served(chapter, "station", TOOLS, RESULTS, "y", "y") as (session, _, _, _):
        session.client = FakeClient(
            reply(tool_use("toolu_1", "mcp__station__weather", {}),
                  tool_use("toolu_2", "mcp__station__both", {})),
            reply(text("Done.")))
        chapter.run_turn(session, "What is the weather?")
        results = session.messages[2]["content"]
    expect_equal([block["content"] for block in results], [json.dumps(WEATHER), "22.5 and cloudy"],
                 "A result with no text item should be its structuredContent as JSON; one "
                 "with a text item, its text.")


def test_exercise():
    run(check, CODE)
