"""What the model sees, pinned in reviewed files: tests/golden/<chapter>.json.

A system prompt, a tool description or a schema is part of what a chapter
teaches. It is compared here with the reviewed file, never with itself: after
a deliberate change, run `.venv/bin/python tests/golden/regenerate.py` and
review the diff of the golden files.
"""

import json
from pathlib import Path

import pytest

from support import PRESENT, ROOT, fresh_module

# tests/golden is not a package: its script is loaded by its path.
regenerate = fresh_module(ROOT / "tests" / "golden" / "regenerate.py", "golden_regenerate")


def golden(name):
    return json.loads((ROOT / "tests" / "golden" / f"{name}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", PRESENT)
def test_the_system_prompt_and_the_tools_are_the_reviewed_ones(name):
    assert regenerate.what_the_model_sees(name) == golden(name)


@pytest.mark.parametrize("name", PRESENT)
def test_the_golden_file_is_written_as_regenerate_writes_it(name):
    path = Path(ROOT / "tests" / "golden" / f"{name}.json")
    assert path.read_text(encoding="utf-8") == regenerate.render(golden(name))


def test_each_chapter_sends_the_tools_of_the_one_before_and_its_own():
    tool_names = {name: [tool["name"] for tool in golden(name)["tools"]] for name in PRESENT}
    assert tool_names == {
        "s01_loop": ["bash"],
        "s02_tools": ["bash", "read_file", "write_file", "edit_file", "glob"],
        "s03_permissions": ["bash", "read_file", "write_file", "edit_file", "glob"],
        "s04_hooks": ["bash", "read_file", "write_file", "edit_file", "glob"],
        "s05_todo_write": ["bash", "read_file", "write_file", "edit_file", "glob", "todo_write"],
        "s06_plan_mode": ["bash", "read_file", "write_file", "edit_file", "glob", "todo_write",
                          "enter_plan_mode", "exit_plan_mode", "ask_user_question"],
        "s07_subagents": ["bash", "read_file", "write_file", "edit_file", "glob", "todo_write",
                          "enter_plan_mode", "exit_plan_mode", "ask_user_question", "agent"],
        "s08_compact": ["bash", "read_file", "write_file", "edit_file", "glob", "todo_write",
                        "enter_plan_mode", "exit_plan_mode", "ask_user_question", "agent"],
        "s09_memory": ["bash", "read_file", "write_file", "edit_file", "glob", "todo_write",
                       "enter_plan_mode", "exit_plan_mode", "ask_user_question", "agent"],
        "s10_skills": ["bash", "read_file", "write_file", "edit_file", "glob", "todo_write",
                       "enter_plan_mode", "exit_plan_mode", "ask_user_question", "agent",
                       "skill"],
        # s11's servers add their tools when they start: what every request begins with is s10's
        "s11_mcp": ["bash", "read_file", "write_file", "edit_file", "glob", "todo_write",
                    "enter_plan_mode", "exit_plan_mode", "ask_user_question", "agent", "skill"],
    }


def test_a_subagent_is_offered_the_tools_of_its_parent_less_those_that_plan_nest_or_ask():
    assert {name: golden(name)["subagent"]["tools"] for name in PRESENT
            if "subagent" in golden(name)} == {
        "s07_subagents": ["bash", "read_file", "write_file", "edit_file", "glob"],
        "s08_compact": ["bash", "read_file", "write_file", "edit_file", "glob"],
        "s09_memory": ["bash", "read_file", "write_file", "edit_file", "glob"],
        "s10_skills": ["bash", "read_file", "write_file", "edit_file", "glob"],
        "s11_mcp": ["bash", "read_file", "write_file", "edit_file", "glob"],
    }
