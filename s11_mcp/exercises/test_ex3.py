"""Exercise 3: A rule for a whole server.

Task: A server of twenty tools needs twenty rules, one a tool. Let a rule name a server: a rule
`mcp__NAME` (no tool after it) matches each call of a tool `mcp__NAME__TOOL`, whatever the
tool; it does not match a server whose name only starts the same (`mcp__we` is not
`mcp__weather`). A rule that names a tool still covers that tool only.

Hint: `matching_rule` compares the rule's tool with the call's name; the rule `mcp__NAME` is a
tool name `parse_rule` already takes.
"""

from pathlib import Path

from course.check import (
    FakeClient,
    expect_equal,
    load,
    reply,
    result,
    run,
    served,
    text,
    tool_use,
)

CODE = Path(__file__).resolve().parent.parent / "code.py"
EMPTY = {"type": "object", "properties": {}}
TOOLS = [{"name": "today", "inputSchema": EMPTY}, {"name": "tomorrow", "inputSchema": EMPTY}]
RESULTS = {"today": {"content": [{"type": "text", "text": "Sunny."}]},
           "tomorrow": {"content": [{"type": "text", "text": "Rain."}]}}


def results(chapter, rules, *lines):
    with served(chapter, "weather", TOOLS, RESULTS, *lines,
                settings={"permissions": rules}) as (session, _, _, work):
        session.client = FakeClient(
            reply(tool_use("toolu_1", "mcp__weather__today", {}),
                  tool_use("toolu_2", "mcp__weather__tomorrow", {})),
            reply(text("Done.")))
        chapter.run_turn(session, "The weather?")
        heard = (work / "heard.jsonl").read_text() if (work / "heard.jsonl").exists() else ""
        return session.messages[2]["content"], heard


def check(code):
    chapter = load(code)
    said, heard = results(chapter, {"deny": ["mcp__weather"]})
    denied = "Denied by the rule 'mcp__weather' in .agent/settings.json."
    expect_equal((said, heard), ([result("toolu_1", denied, is_error=True),
                                  result("toolu_2", denied, is_error=True)], ""),
                 "The rule mcp__weather should deny both tools of the server weather, before "
                 "the server hears either call.")
    said, _ = results(chapter, {"allow": ["mcp__weather"]})
    expect_equal(said, [result("toolu_1", "Sunny."), result("toolu_2", "Rain.")],
                 "The rule mcp__weather should allow both tools without a question.")
    said, _ = results(chapter, {"deny": ["mcp__we", "mcp__weather__today"]}, "y")
    expect_equal(said, [result("toolu_1", "Denied by the rule 'mcp__weather__today' in "
                                          ".agent/settings.json.", is_error=True),
                        result("toolu_2", "Rain.")],
                 "mcp__we names another server, and mcp__weather__today one tool: tomorrow "
                 "should ask (here, y) and run.")


def test_exercise():
    run(check, CODE)
