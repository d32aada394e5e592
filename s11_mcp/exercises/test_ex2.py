"""Exercise 2: Descriptions within bounds.

Task: A server writes its tools' descriptions, and every request carries them. Claude Code cuts
a tool's description at 2KB. Do the same: a description longer than `MCP_DESCRIPTION_LIMIT`
(2,048, a new constant) characters is offered as its first 2,048 characters and `…`; a shorter
one is offered as it is.

Hint: `add_mcp_tool` makes the entry of `TOOLS`; `cut` (s03) says how many characters are left
out, which is not what is asked here.
"""

from pathlib import Path

from course.check import expect_equal, load, need, run, served

CODE = Path(__file__).resolve().parent.parent / "code.py"
EMPTY = {"type": "object", "properties": {}}
LONG = "".join(f"{number:05} " for number in range(500))  # 3,000 characters
TOOLS = [{"name": "long", "description": LONG, "inputSchema": EMPTY},
         {"name": "short", "description": "Short.", "inputSchema": EMPTY}]


def check(code):
    chapter = load(code)
    (limit,) = need(chapter, "MCP_DESCRIPTION_LIMIT")
    expect_equal(limit, 2048, "MCP_DESCRIPTION_LIMIT should be 2,048 characters.")
    with served(chapter, "wordy", TOOLS, {}) as _:
        offered = {tool["name"]: tool["description"] for tool in chapter.TOOLS
                   if tool["name"].startswith("mcp__")}
    expect_equal(offered, {"mcp__wordy__long": LONG[:2048] + "…", "mcp__wordy__short": "Short."},
                 "A description over 2,048 characters should be offered as its first 2,048 and "
                 "…; a shorter one as it is.")


def test_exercise():
    run(check, CODE)
