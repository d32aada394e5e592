"""The chapter list, the banner grammar of code.py, the offline environment, scenario.json."""

import ast
import functools
import json
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the repository: where the chapters live
CHAPTERS = [
    "s01_loop",
    "s02_tools",
    "s03_permissions",
    "s04_hooks",
    "s05_todo_write",
    "s06_plan_mode",
    "s07_subagents",
    "s08_compact",
    "s09_memory",
    "s10_skills",
    "s11_mcp",
]
PRESENT = [name for name in CHAPTERS if (ROOT / name / "code.py").exists()]  # those written
# The sections each chapter changes in what it carries over from the chapter before; every
# other carried section stays byte-identical (tests/test_chapters.py). A change here is a change
# to the lesson, and is reviewed as one.
CHANGES = {
    "s02_tools": {"SYSTEM PROMPT", "THE TOOLS", "TOOL RESULTS AND INPUT CHECKS"},
    "s03_permissions": {"THE TOOLS", "THE SESSION", "THE COMMAND LINE"},
    "s04_hooks": {"THE AGENT LOOP", "THE TOOLS", "THE SESSION", "THE COMMAND LINE"},
    "s05_todo_write": {
        "SYSTEM PROMPT",
        "THE AGENT LOOP",
        "PERMISSIONS",
        "THE SESSION",
        "THE COMMAND LINE",
    },
    "s06_plan_mode": {
        "THE AGENT LOOP",
        "THE TOOLS",
        "PERMISSIONS",
        "THE SESSION",
        "THE COMMAND LINE",
    },
    "s07_subagents": {
        "THE AGENT LOOP",
        "PERMISSIONS",
        "HOOKS",
        "CALLING THE MODEL",
        "LIVE ONLY: retries, usage, blocks of unknown types",
        "THE SESSION",
    },
    "s08_compact": {
        "THE AGENT LOOP",
        "PLAN MODE",
        "SUBAGENTS",
        "CALLING THE MODEL",
        "THE SESSION",
        "THE SCRIPTED MODEL",
        "THE COMMAND LINE",
    },
    "s09_memory": {
        "THE AGENT LOOP",
        "SUBAGENTS",
        "COMPACTION",
        "THE SESSION",
        "THE SCRIPTED MODEL",
        "THE COMMAND LINE",
    },
    "s10_skills": {
        "THE AGENT LOOP",
        "COMPACTION",
        "THE SESSION",
        "THE COMMAND LINE",
    },
    "s11_mcp": {
        "PERMISSIONS",
        "TOOL RESULTS AND INPUT CHECKS",
        "THE SESSION",
        "THE SCRIPTED MODEL",
        "THE COMMAND LINE",
    },
}

# The same, definition by definition (course.chapters.definitions: a function, a class, a
# constant, any other top-level statement, with the comment lines right above it): what each
# chapter changes, removes, or adds to a section it carries, and why. Every other definition it
# carries stays byte-identical wherever it lives, a section in CHANGES too; one that is new in a
# chapter's own new section is new by its banner and is not listed (tests/test_chapters.py).
CHANGED_DEFINITIONS = {
    "s02_tools": {
        "system_prompt()",  # the file tools named
        "run_tool()",  # any tool of the dispatch map, its input checked against its schema
        "TOOL_HANDLERS",  # added: the dispatch map
        "JSON_TYPES",  # added: for input_problem
        "input_problem()",  # added: one check for every tool's input...
        "bash_input_problem()",  # removed: ...instead of bash's own
    },
    "s03_permissions": {
        "run_tool()",  # a call is checked, and may ask, before it runs
        "Session",  # the mode and the settings
        "parse_args()",  # --mode
        "make_session()",  # the settings read, the mode on the banner
        "main()",  # a bad settings file is one line
        "COMMANDS",  # /mode
        "run_command()",  # its docstring's example: /mode
        "command_clear()",  # says the mode and the rules stay
    },
    "s04_hooks": {
        "agent_loop()",  # a Stop hook may send the model back to work
        "run_turn()",  # UserPromptSubmit
        "run_tool()",  # PreToolUse, PostToolUse
        "Session",  # the hooks
        "make_session()",  # the hooks loaded, on the banner
        "command_clear()",  # says the hooks stay
    },
    "s05_todo_write": {
        "system_prompt()",  # plan with todo_write
        "agent_loop()",  # the reminder joins the results
        "SAFE_TOOLS",  # todo_write runs in every mode
        "Conversation",  # the list and the rounds since it was written
        "COMMANDS",  # /todos
        "command_clear()",  # says the list is emptied
    },
    "s06_plan_mode": {
        "agent_loop()",  # a plan turned down; notes join the results
        "run_tools()",  # a plan turned down goes up once every call has run
        "run_turn()",  # the plan-mode note
        "run_tool()",  # lets PlanRejected through
        "check_permission()",  # plan mode denies what may change things
        "SAFE_TOOLS",  # the plan and question tools
        "build_request()",  # the tools plan mode offers
        "PlanRejected",  # added to THE SESSION
        "Session",  # the session id, plan mode
        "Conversation",  # the notes
        "parse_args()",  # --plan
        "make_session()",  # the session id, the newest plan, --plan on the banner
        "COMMANDS",  # /plan
        "command_restart()",  # says the session id
        "command_clear()",  # plan mode stays, and the new conversation hears of it
    },
    "s07_subagents": {
        "agent_loop()",  # calls counted on the session; a subagent's lines, limit and reminders
        "run_tools()",  # a subagent's lines under its call; what its interrupt says
        "check_permission()",  # what a subagent may not do
        "ask_permission()",  # says which subagent asks
        "HOOK_EVENTS",  # SubagentStop
        "stop_hook_sends_back()",  # SubagentStop for a subagent's answer
        "build_request()",  # a subagent's prompt and tools
        "call_model()",  # a subagent's calls marked in the trace; tokens counted
        "show_usage()",  # a subagent's tokens under its call
        "Session",  # subagent (a Subagent record, or None), indent
        "Conversation",  # calls, tokens
    },
    "s08_compact": {
        "agent_loop()",  # room made before a call
        "run_turn()",  # a summary's history stays, unless the turn is taken back: then it goes
        "exit_plan_mode()",  # records the plan file written at the approval, for the summary
        "agent()",  # a subagent's conversation carries its prompt, for a summary
        "call_model()",  # a summary request marked in the trace
        "Session",  # the thresholds
        "Conversation",  # what compaction measured and made, the approved plan, the last prompt
        "make_message()",  # a script's turn may give its usage
        "parse_args()",  # --clear-at, --compact-at
        "make_session()",  # the thresholds
        "COMMANDS",  # /context, /compact
    },
    "s09_memory": {
        "run_turn()",  # AGENTS.md before a new conversation's first prompt
        "agent()",  # a subagent's first message: AGENTS.md, then its task
        "compacted_history()",  # AGENTS.md read again, first in the new history
        "Session",  # the files last read, for /memory
        "typed_text()",  # the scripted model finds the prompt after AGENTS.md
        "make_session()",  # the files read, on the banner
        "COMMANDS",  # /memory, /remember
        "command_clear()",  # /clear says the next prompt reads AGENTS.md again
    },
    "s10_skills": {
        "run_turn()",  # the skills' catalog after a new conversation's first prompt
        "compacted_history()",  # the catalog and the skills used come back after a summary
        "Conversation",  # the skills used, and the text each sent
        "make_session()",  # the skills on the banner
        "COMMANDS",  # /skills
        "run_command()",  # /NAME ARGS starts a skill; an unknown command lists the skills
        "main()",  # a one-shot /NAME ARGS starts a skill
        "command_clear()",  # /clear says the next prompt reads the skills catalog again
    },
    "s11_mcp": {
        "parse_rule()",  # a rule may name a server's tool, mcp__SERVER__TOOL
        "ask_permission()",  # a server's readOnlyHint shown; "always" for a tool of no one field
        "input_problem()",  # a server's schema may give a field no type, or several
        "Session",  # the servers
        "load_script()",  # a trace's lines of MCP messages are not model calls
        "make_session()",  # the servers on the banner
        "COMMANDS",  # /mcp
        "command_restart()",  # the old session's servers end
        "run_command()",  # a skill started from the REPL starts the servers first
        "repl()",  # the servers start at the first prompt
        "main()",  # every server ends with the session
        "run_session()",  # added: the one prompt or the REPL, inside main's finally
    },
}

# Each chapter's core tests: every exercise's solved copy must still pass them (tests/
# test_exercises.py; those the solution's header lists aside). Of each, its first case that
# loads the chapter. (In a solution's header, a name without [...] means every case of that
# test that loads the chapter.)
CORE = {
    "s01_loop": [
        "tests/test_s01_loop.py::test_one_tool_round_sends_the_result_back_and_ends_on_the_answer",
        "tests/test_s01_loop.py::test_max_tokens_with_a_tool_use_does_not_run_it_but_still_answers"
        "_it",
        "tests/test_s01_loop.py::test_api_error_after_a_tool_round_keeps_the_history_and_the_next"
        "_prompt_joins_it",
        "tests/test_s01_loop.py::test_catastrophic_commands_are_refused_without_running",
        "tests/test_s01_loop.py::test_output_at_the_limit_is_kept_whole",
    ],
    "s02_tools": [
        # (not test_a_turn_with_file_tools_...: it starts a python3, a second or so for three)
        "tests/test_s01_loop.py::test_one_tool_round_sends_the_result_back_and_ends_on_the_answer",
        "tests/test_s02_tools.py::test_bad_file_tool_input_is_an_error_and_touches_nothing",
        "tests/test_s02_tools.py::test_glob_lists_matching_files_sorted_and_relative",
        "tests/test_s02_tools.py::test_glob_skips_files_that_symlinks_lead_outside_to",
        "tests/test_s02_tools.py::test_guard_refuses_paths_that_lead_out",
    ],
    "s03_permissions": [
        "tests/test_s03_permissions.py::test_a_read_only_command_runs_without_asking",
        "tests/test_s03_permissions.py::test_each_mode_decides_what_asks",
        "tests/test_s03_permissions.py::test_check_permission_table",
        "tests/test_s03_permissions.py::test_rules_in_a_whole_turn",
        "tests/test_s03_permissions.py::test_a_bad_settings_file_raises_naming_the_file_and_the"
        "_problem",
    ],
    "s04_hooks": [
        "tests/test_s04_hooks.py::test_user_prompt_submit_context_follows_the_prompt",
        "tests/test_s04_hooks.py::test_pre_tool_use_block_beats_bypass_mode",
        "tests/test_s04_hooks.py::test_pre_tool_use_allow_never_lifts_a_deny",
        "tests/test_s04_hooks.py::test_post_tool_use_feedback_is_added_to_the_result",
        "tests/test_s04_hooks.py::test_stop_block_sends_the_model_back_to_work",
    ],
    "s05_todo_write": [
        "tests/test_s05_todo_write.py::test_the_reminder_ends_the_third_rounds_user_turn",
        "tests/test_s05_todo_write.py::test_a_todo_write_that_passes_moves_the_reminder",
        "tests/test_s05_todo_write.py::test_a_failed_todo_write_does_not_reset_the_count",
        "tests/test_s05_todo_write.py::test_validate_todos_refuses",
        "tests/test_s05_todo_write.py::test_an_invalid_list_keeps_the_old_one",
    ],
    "s06_plan_mode": [
        "tests/test_s06_plan_mode.py::test_the_tools_offered_in_and_out_of_plan_mode",
        "tests/test_s06_plan_mode.py::test_changing_calls_are_refused_in_plan_mode",
        "tests/test_s06_plan_mode.py::test_reading_calls_run_in_plan_mode_without_asking",
        "tests/test_s06_plan_mode.py::test_bash_that_writes_is_refused_in_plan_mode",
        "tests/test_s06_plan_mode.py::test_approval_saves_the_plan_and_ends_plan_mode",
    ],
    "s07_subagents": [
        "tests/test_s07_subagents.py::test_the_subagent_gets_a_fresh_history_its_own_prompt_and"
        "_fewer_tools",
        "tests/test_s07_subagents.py::test_a_subagent_that_fails_gives_an_error_result_and_the"
        "_parent_goes_on",
        "tests/test_s07_subagents.py::test_the_childs_calls_count_in_max_calls",
        "tests/test_s07_subagents.py::test_in_plan_mode_the_subagent_only_reads",
        "tests/test_s07_subagents.py::test_subagent_stop_hooks_get_the_childs_answer_and_may_send"
        "_it_back",
    ],
    "s08_compact": [
        "tests/test_s08_compact.py::test_every_result_but_the_newest_three_becomes_one_line_and"
        "_the_calls_stay",
        "tests/test_s08_compact.py::test_past_compact_at_the_summary_request_is_the_loops_own"
        "_plus_the_instruction",
        "tests/test_s08_compact.py::test_the_new_history_carries_plan_mode_and_the_approved"
        "_plan",
        "tests/test_s08_compact.py::test_still_over_after_a_summary_the_turn_stops_without_a"
        "_second_summary",
        "tests/test_s08_compact.py::test_a_too_long_reply_summarises_once_and_the_call_is_tried"
        "_again",
    ],
    "s09_memory": [
        "tests/test_s09_memory.py::test_the_first_request_has_the_users_file_then_root_down_to_the"
        "_workdir_before_the_prompt",
        "tests/test_s09_memory.py::test_without_git_above_the_workdir_alone_is_the_project",
        "tests/test_s09_memory.py::test_after_a_summary_the_new_history_starts_with_the_files_as"
        "_they_are_now",
        "tests/test_s09_memory.py::test_the_subagent_gets_the_same_block_before_its_task",
        "tests/test_s09_memory.py::test_a_change_to_agents_md_asks_in_every_mode_over_an_allow"
        "_rule",
    ],
    "s10_skills": [
        "tests/test_s10_skills.py::test_the_first_request_lists_the_two_skills_the_model_may_use"
        "_and_no_body",
        "tests/test_s10_skills.py::test_the_skill_tool_returns_the_body_with_its_arguments_and"
        "_once",
        "tests/test_s10_skills.py::test_slash_name_sends_the_body_with_its_arguments_as_the_prompt",
        "tests/test_s10_skills.py::test_after_a_summary_the_body_used_comes_back_with_the_catalog",
        "tests/test_s10_skills.py::test_a_change_to_a_skill_asks_in_every_mode_over_an_allow_rule",
    ],
    "s11_mcp": [
        "tests/test_s11_mcp.py::test_a_call_reaches_the_server_with_its_arguments_and_its_text"
        "_comes_back",
        "tests/test_s11_mcp.py::test_a_declined_server_is_not_started_and_its_tools_are_not_offered",
        "tests/test_s11_mcp.py::test_a_deny_rule_stops_the_call_before_the_server_hears_it",
        "tests/test_s11_mcp.py::test_a_call_asks_first_and_a_no_never_reaches_the_server",
    ],
}

# The checkout's folder for the learner's copies of a workspace and the traces they record
# (git ignores it but its README.md): the lessons' commands and the site's Run tab use it.
PLAY = "play"

# ---- the banner grammar ---------------------------------------------------------------------
# A section of code.py starts at a banner of three lines
#
#     # ======================================================================
#     # THE TOOLS   (new in s02)
#     # ======================================================================
#
# (the tag "(new in sNN)" is there in the chapter that adds the section and every later one).
# A section runs from its banner to the next banner (or the end of the file); what comes before
# the first banner (the docstring, the imports) is in no section.

RULE = re.compile(r"# ={20,}\s*")
TITLE = re.compile(r"# (?P<title>\S.*?)\s*")
TAG = re.compile(r"^(?P<name>.*?)\s*(?:\((?P<kind>new) in (?P<chapter>s\d\d)\))?$")


def banner_title(lines, index):
    """The title (tag included) if a banner starts at lines[index], else None."""
    line = lines[index]
    if index + 2 < len(lines) and RULE.fullmatch(line) and RULE.fullmatch(lines[index + 2]):
        title = TITLE.fullmatch(lines[index + 1])
        if title and not RULE.fullmatch(lines[index + 1]):
            return title["title"]
    return None


def split_tag(title):
    """'THE TOOLS   (new in s02)' -> ('THE TOOLS', 'new', 's02'); no tag: (title, None, None)."""
    tag = TAG.match(title)
    return tag["name"], tag["kind"], tag["chapter"]


def _banners(source):
    """(title with its tag, offset of the banner's first character) for each banner, in order."""
    lines = source.splitlines(keepends=True)
    bare = [line.rstrip("\r\n") for line in lines]
    found, offset = [], 0
    for index, line in enumerate(lines):
        title = banner_title(bare, index)
        if title is not None:
            found.append((title, offset))
        offset += len(line)
    return found


def sections(source):
    """[(title, the chapter of its tag or None, text from its banner to the next)], in file order.

    The title is without its tag: '# THE TOOLS   (new in s02)' gives ('THE TOOLS', 's02', ...).
    """
    banners = _banners(source)
    ends = [start for _, start in banners[1:]] + [len(source)]
    result = []
    for (title, start), end in zip(banners, ends[: len(banners)], strict=True):
        name, _, chapter = split_tag(title)
        result.append((name, chapter, source[start:end]))
    return result


def section_map(name, root=ROOT):
    """{title: ((kind, chapter), text)} for the chapter folder `name`, in file order.

    kind is "new" (or None, untagged). Two sections with one title are an error.
    """
    source = (Path(root) / name / "code.py").read_text(encoding="utf-8")
    found = {}
    for title, start in _banners(source):
        section, kind, chapter = split_tag(title)
        if section in found:
            raise ValueError(f"{name}: two sections named {section}")
        found[section] = ((kind, chapter), start)
    starts = [start for _, start in found.values()] + [len(source)]
    return {
        section: (tag, source[start : starts[number + 1]])
        for number, (section, (tag, start)) in enumerate(found.items())
    }


def section_titles(lines):
    """The title (without its tag) of the section that holds each of the lines, like diff -F;
    "" for a line before the first banner."""
    bare = [line.rstrip("\r\n") for line in lines]
    titles, title = [], ""
    for index in range(len(bare)):
        found = banner_title(bare, index)
        if found is not None:
            title = split_tag(found)[0]
        titles.append(title)
    return titles


def definitions(source):
    """{name: (title of its section, text)} for each top-level statement of a code.py but the
    docstring and the imports, in file order: what a chapter carries definition by definition
    (CHANGED_DEFINITIONS, tests/test_chapters.py).

    The name: `preview()` for a function, `Session` for a class, the target for an assignment
    (`TOOLS`, `TOOL_HANDLERS["todo_write"]`), and for any other statement its first line, its
    comment aside (`TOOLS += FILE_TOOLS`); a name met again gets " #2", " #3". The text runs
    from the comment lines right above the statement (no blank line between, no banner) and its
    decorators to its last line. The lines of a section that no such text holds (but blank
    lines and the banner: the comment under the banner, mostly) are one more, named "the loose
    lines of THE SECTION". What comes before the first banner (the docstring, the imports) is in
    none. Parsed once per source.
    """
    return dict(_definitions(source))


@functools.lru_cache(maxsize=16)  # every chapter's, and a test's changed copies (5 MB each)
def parsed(source):
    """ast.parse(source), once per source and process (a code.py takes 50 ms to parse, and the
    definitions, the lesson tables, the site and the tests all read its tree: never change it)."""
    return ast.parse(source)


@functools.lru_cache(maxsize=32)
def _definitions(source):
    lines = source.splitlines(keepends=True)
    bare = [line.rstrip("\r\n") for line in lines]
    titles = section_titles(lines)
    body = parsed(source).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    found, owned = {}, set()
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = f"{node.name}()"
        elif isinstance(node, ast.ClassDef):
            name = node.name
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            name = " = ".join(_first_line(bare, target) for target in targets)
        else:
            name = _first_line(bare, node)
        start = min([node.lineno] + [item.lineno for item in getattr(node, "decorator_list", [])])
        start -= 1  # the index of its first line
        while start and bare[start - 1].lstrip().startswith("#") and not RULE.fullmatch(
            bare[start - 1]
        ):
            start -= 1
        key, number = name, 1
        while key in found:
            number += 1
            key = f"{name} #{number}"
        found[key] = (titles[node.lineno - 1], "".join(lines[start : node.end_lineno]))
        owned.update(range(start, node.end_lineno))
    banners = {index + offset for index in range(len(bare)) if banner_title(bare, index)
               for offset in range(3)}
    loose = {}
    for index, line in enumerate(lines):
        if titles[index] and bare[index].strip() and index not in owned and index not in banners:
            loose[titles[index]] = loose.get(titles[index], "") + line
    for title, text in loose.items():
        found[f"the loose lines of {title}"] = (title, text)
    return tuple(found.items())


def _first_line(bare, node):
    """The node's source if it is on one line, else its first line (its comment aside) and
    "..."."""
    line = bare[node.lineno - 1].encode()  # the offsets count bytes
    if node.end_lineno == node.lineno:
        return line[node.col_offset : node.end_col_offset].decode()
    return line[node.col_offset :].decode().split("  #")[0].strip() + " ..."


# ---- running a chapter offline ---------------------------------------------------------------

# The variables that would turn a run live (or pick its model): never in an offline run.
LIVE_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "MODEL_ID")


def offline_environment(**extra):
    """The environment of an offline chapter run: this one without the live variables, no .env,
    unbuffered output, no bytecode written; then `extra` (which may put a key back on purpose)."""
    env = {key: value for key, value in os.environ.items() if key not in LIVE_VARIABLES}
    env.update(PYTHON_DOTENV_DISABLED="1", PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
    env.update(extra)
    return env


# ---- scenario.json ---------------------------------------------------------------------------


class ScenarioError(ValueError):
    """A scenario.json that is missing or not of the expected shape; the message names the file."""


def read_scenario(path):
    """Read and check a scenario.json: {"prompt": non-empty str, "turns": list, "answers": list of
    str (optional)}. Returns the whole object, with "answers" set ([] when absent).

    `path` is the file, or a chapter folder holding one. Raises ScenarioError saying what is wrong.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "scenario.json"
    try:
        scenario = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScenarioError(f"{path}: there is no scenario.json") from None
    except OSError as error:
        raise ScenarioError(f"{path}: cannot read it ({error.strerror or error})") from None
    except json.JSONDecodeError as error:
        raise ScenarioError(f"{path}: not JSON ({error})") from None
    if not isinstance(scenario, dict):
        raise ScenarioError(f"{path}: must be a JSON object with \"prompt\" and \"turns\"")
    prompt = scenario.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ScenarioError(f"{path}: has no \"prompt\" (a non-empty string)")
    if not isinstance(scenario.get("turns"), list):
        raise ScenarioError(f"{path}: \"turns\" must be a list")
    answers = scenario.setdefault("answers", [])
    if not isinstance(answers, list) or not all(isinstance(answer, str) for answer in answers):
        raise ScenarioError(f"{path}: \"answers\" must be a list of strings")
    return scenario
