"""s05 on: todo_write passes through every guard the other tools pass through.

A list sent as a string goes through the same checks as a list; a deny rule and
a PreToolUse hook stop todo_write like any other tool; the todo_write
description and schema, and the planning guidance of the system prompt, are
pinned in tests/golden (tests/test_golden.py).
"""

import copy
import json

import pytest

import support
from support import (
    FakeClient,
    assistant,
    new_session,
    reply,
    result,
    text,
    tool_use,
    user,
)
from test_s05_todo_write import INVALID, OLD

CHAPTERS = [name for name in support.PRESENT if name >= "s05"]
LISTS = [param for param in INVALID if isinstance(param.values[0], list)]


@pytest.mark.parametrize("todos, error", LISTS)
def test_a_list_sent_as_a_json_string_is_refused_exactly_like_the_list(chapter, todos, error):
    with pytest.raises(chapter.ToolError) as caught:
        chapter.validate_todos(json.dumps(todos))
    assert str(caught.value) == error


@pytest.mark.parametrize("todos, error", LISTS)
def test_a_list_sent_as_a_python_literal_is_refused_exactly_like_the_list(chapter, todos, error):
    with pytest.raises(chapter.ToolError) as caught:
        chapter.validate_todos(repr(todos))
    assert str(caught.value) == error


def run_one_todo_write(chapter, session, client):
    session.todos = copy.deepcopy(OLD)
    chapter.run_turn(session, "plan")
    return session.messages[2]


GOOD = [{"content": "Write", "status": "in_progress"}]


def test_a_deny_rule_stops_todo_write(chapter, tmp_path, keyboard):
    call = tool_use("t1", "todo_write", {"todos": GOOD})
    client = FakeClient(reply(call), reply(text("OK.")))
    session = new_session(
        chapter, client, tmp_path, settings={"permissions": {"deny": ["todo_write"]}}
    )

    assert run_one_todo_write(chapter, session, client) == user(
        result("t1", "Denied by the rule 'todo_write' in .agent/settings.json.", is_error=True))
    assert session.todos == OLD
    assert session.messages[:2] == [user(text("plan")), assistant(call)]


def test_a_pretooluse_hook_stops_todo_write(chapter, tmp_path, keyboard):
    call = tool_use("t1", "todo_write", {"todos": GOOD})
    client = FakeClient(reply(call), reply(text("OK.")))
    session = new_session(chapter, client, tmp_path)
    seen = []
    chapter.add_hook(
        session,
        "PreToolUse",
        lambda event: seen.append(event["tool_name"]) or {"decision": "block", "reason": "not now"},
        "todo_write",
    )

    assert run_one_todo_write(chapter, session, client) == user(
        result("t1", "Blocked by a PreToolUse hook: not now", is_error=True))
    assert (seen, session.todos) == (["todo_write"], OLD)
