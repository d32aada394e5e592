"""s10_skills: a catalog always, a body only when it is used (SKILL.md).

Know-how a user packs once: how to write a changelog entry, how to review. A
skill is a folder with a SKILL.md: frontmatter, then instructions. The model
sees a one-line catalog; the instructions cost nothing until they are used:

    read from            ~/.agent/skills/NAME/SKILL.md   the user's own (wins)
                         .agent/skills/NAME/SKILL.md     the project's (workdir)
    every request        the catalog: name and description of each skill the
                         model may use, after the first prompt; no body
    the model uses one   skill {name, arguments}: the result is the body,
                         $ARGUMENTS filled in; once per conversation
    the user starts one  /NAME ARGS sends the body as the prompt; /skills
    after a summary      the bodies used come back (within a budget)
    written              a change to a SKILL.md asks in every mode

New: the SKILLS section, the skill tool, /skills and /NAME, the banner's line.

Run it:  .venv/bin/python s10_skills/code.py --offline
         (a REPL: type the prompt that the banner suggests; q leaves)
"""

import argparse
import ast
import contextlib
import copy
import fnmatch
import glob
import html
import itertools
import json
import logging
import os
import re
import secrets
import select
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace

import anthropic
from anthropic.types import Message

try:
    import readline  # noqa: F401  (line editing and history for input())
except ImportError:  # Windows
    pass


# ======================================================================
# CONFIGURATION
# ======================================================================

CHAPTER = Path(__file__).resolve().parent.name  # e.g. "s01_loop"
PROMPT_LABEL = CHAPTER.split("_")[0]  # e.g. "s01", shown in the REPL prompt
HERE = Path(__file__).resolve().parent
DEFAULT_MODEL = "claude-sonnet-5-5"
MAX_TOKENS = 8000
MAX_CALLS = 50  # model calls one prompt may make (--max-calls)

# Variables that must never reach a tool's subprocess, a trace or the screen.
SECRET_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


# ======================================================================
# SYSTEM PROMPT
# ======================================================================

def system_prompt(workdir):
    return (
        f"You are a coding agent. Your working directory is {workdir}.\n"
        "Use read_file, write_file, edit_file and glob for files, and bash for "
        "everything else. Paths are relative to the working directory. Work in "
        "small steps and check what you did. When the task is done, say briefly "
        "what you did.\n"
        "Plan any task of more than two steps with todo_write before you start. "
        "Keep the list current: exactly one item in_progress while you work on "
        "it, and mark each item completed as soon as it is done."
    )


# ======================================================================
# THE AGENT LOOP
# ======================================================================

def agent_loop(session):
    """Call the model until it stops asking for tools; return its last text."""
    sent_back = []  # the answers Stop hooks sent the model back from, in a row
    session.calls = 0  # model calls made for this prompt; a subagent's calls are added to them
    while session.calls < session.max_calls:  # a model that never stops asking for tools stops
        session.calls += 1
        response = call_with_room(session)  # room made first, when the context is full
        content = [block_to_dict(block) for block in response.content if not is_blank(block)]
        if content:
            add_assistant_blocks(session.messages, content)
        text = "\n".join(block["text"] for block in content if block["type"] == "text")
        if text:
            show(text, session.indent)  # a subagent's lines go under its agent call
        tool_uses = [block for block in content if block["type"] == "tool_use"]
        if response.stop_reason == "tool_use" and tool_uses:
            try:
                results = run_tools(session, tool_uses)
            except PlanRejected as turned_down:  # their answer, not a round of work without todos
                add_user_blocks(session.messages, turned_down.results + take_notes(session))
                if turned_down.ends_turn:  # the user said no to the plan: the turn ends here
                    return text
                continue
            # a subagent has no todo list to be reminded of
            reminders = [] if session.subagent else todo_reminder(session, tool_uses, results)
            reminders += take_notes(session)
            add_user_blocks(session.messages, results + reminders)
            continue
        if response.stop_reason == "pause_turn" and content and not tool_uses:
            continue  # the API paused a long turn: sent back as it is, the model goes on with it
        finish_reply(session, response, tool_uses)  # raises TurnStopped if the turn went wrong
        if stop_hook_sends_back(session, text, sent_back):
            continue
        return text
    if session.subagent:
        raise TurnStopped(f"[It reached its limit of {session.max_calls} model calls.]")
    raise TurnStopped(f"[The turn reached its call limit (--max-calls {session.max_calls}): "
                      "send a prompt to go on.]")


def run_tools(session, tool_uses):
    """Run each tool_use in order; return one tool_result for each.

    If Ctrl-C stops a tool, every call still gets a result (the one stopped: what the
    interrupt says, if it says anything), so that the history stays valid, and the
    interrupt goes on up to the caller. A plan the user
    turned down goes up too, once every call has run: PlanRejected holds the results.
    """
    results, turned_down = [], None
    try:
        for block in tool_uses:
            show(f"> {call_summary(block)}", session.indent + 2)
            try:
                result = run_tool(session, block)
            except PlanRejected as error:
                result = tool_result(block["id"], str(error), is_error=True)
                if turned_down is None or error.ends_turn:  # a "no" outweighs feedback
                    turned_down = error
            failed = "error: " if result.get("is_error") else ""
            shown = result["content"]
            if block["name"] == "agent" and not failed:  # its answer is on the screen already
                shown = shown.rsplit("\n", 1)[-1]  # the trailer of what it spent
            show(failed + preview(shown), session.indent + 4)
            results.append(result)
    except KeyboardInterrupt as stop:
        said = "Interrupted by the user."
        if isinstance(stop, SubagentInterrupted):  # a subagent's result says how far it got
            said = stop.result
        for block in tool_uses[len(results):]:
            results.append(tool_result(block["id"], said, is_error=True))
            said = "Interrupted by the user."
        add_user_blocks(session.messages, results)
        raise
    if turned_down:
        turned_down.results = results
        raise turned_down
    return results


def run_turn(session, prompt):
    """Send one user prompt and work until the model is done. True if it finished."""
    before = copy.deepcopy(session.messages)
    forget = False  # a refused prompt, or one that made the conversation too long, must not stay
    notes_before = list(session.notes)
    # A summary made in this turn was made from its prompt: a prompt taken back takes it along.
    kept = (session.prompt, session.measured, session.summarised)
    compactions, replies = session.compactions, session.replies
    try:
        hooked = run_hooks(session, "UserPromptSubmit", prompt=prompt)
        if hooked["decision"] == "block":
            show(f"[A UserPromptSubmit hook blocked this prompt: {hooked['reason']}]")
            return False
        blocks = [{"type": "text", "text": prompt}]
        if not session.messages:  # a new conversation: AGENTS.md before it, the skills after
            blocks = memory_blocks(session) + blocks + catalog_blocks(session)
        if hooked["context"]:
            context = hook_text("UserPromptSubmit", hooked["context"])
            blocks.append({"type": "text", "text": context})
        if session.plan_mode and not session.notes:
            session.notes.append(PLAN_MODE_STILL_ON)
        add_user_blocks(session.messages, blocks + take_notes(session))
        session.prompt = prompt  # a summary carries it into the new history
        agent_loop(session)
        return True
    except anthropic.AnthropicError as error:
        show(f"API error: {describe_api_error(error)}")
        forget = is_too_long(error)
    except TurnStopped as stopped:
        show(str(stopped))
        forget = stopped.forget_prompt
    except KeyboardInterrupt:
        show("[Interrupted.]")
        answer_open_tool_uses(session.messages)
    summarised = session.compactions != compactions
    if summarised and (forget or session.replies == replies):  # refused, or never answered
        show("[The prompt was not kept, nor the summary made with it: the conversation is as it "
             "was before it; what its tool calls changed, if it made any, stays changed.]")
    elif forget:
        forget_turn(session, before)
    elif summarised or assistant_turns(session.messages) != assistant_turns(before):
        return False  # the model answered: what the turn did stays (a summary's new history too)
    # The model never answered, or the prompt was refused: it goes, and whatever held it.
    session.messages[:] = before
    session.notes = notes_before  # and keep the plan-mode notes for the next prompt
    session.prompt, session.measured, session.summarised = kept
    return False


# The steps of the loop, in its order: the request it sends, a reply's blocks as the history
# keeps them, the turns the history grows by, and how a reply that did not stop for tools
# ends the turn.
def build_request(session):
    system = (subagent_system_prompt if session.subagent else system_prompt)(session.workdir)
    if session.live:  # the tools and this prompt begin every request: the API may cache them
        system = [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
    return {
        "model": session.model,
        "max_tokens": MAX_TOKENS,
        "system": system,
        "tools": offered_tools(session),
        "messages": session.messages,
    }


def is_blank(block):
    """The API refuses blank text blocks, and an empty assistant turn, in the history."""
    return block.type == "text" and not block.text.strip()


def block_to_dict(block):
    """A response block as the plain dict the API takes back in `messages`."""
    if block.type == "text":
        return {"type": "text", "text": block.text}
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return block.to_dict(mode="json")


def add_assistant_blocks(messages, blocks):
    """Add blocks to the assistant turn at the end of the history, or start one: a turn the
    API paused (pause_turn) goes on in the same assistant turn. A tool input nested too
    deeply to copy or send again is kept as {}; its tool result says why. Every string is made
    encodable: a lone surrogate in model text would fail every later request."""
    blocks = [dict(block, input={}) if block["type"] == "tool_use" and too_deep(block["input"])
              else block for block in blocks]
    blocks = [encodable_value(block) for block in blocks]
    if messages and messages[-1]["role"] == "assistant":
        messages[-1]["content"].extend(blocks)
    else:
        messages.append({"role": "assistant", "content": list(blocks)})


def add_user_blocks(messages, blocks):
    """Add blocks to the user turn at the end of the history, or start one.

    Roles must alternate. After an interrupted turn the history can already end
    with a user turn; the next prompt then joins it instead of following it.
    """
    if messages and messages[-1]["role"] == "user":
        messages[-1]["content"].extend(blocks)
    else:
        messages.append({"role": "user", "content": list(blocks)})


def finish_reply(session, response, tool_uses):
    """A reply that did not stop for tools: its tool calls do not run, but each gets a result,
    so that the history stays valid. Raises TurnStopped unless the model ended its turn well."""
    stop_reason = response.stop_reason
    if tool_uses:
        not_run = f"Not run: the reply stopped with {stop_reason}."
        add_user_blocks(session.messages, [tool_result(block["id"], not_run, is_error=True)
                                           for block in tool_uses])
    if stop_reason in ("end_turn", "tool_use", "stop_sequence"):
        return
    line = STOP_MESSAGES.get(stop_reason, f"[The model stopped: {stop_reason}.]")
    explanation = getattr(getattr(response, "stop_details", None), "explanation", None)
    if stop_reason == "refusal" and isinstance(explanation, str) and explanation.strip():
        line = f"[The model declined to continue: {' '.join(explanation.split())[:300]}]"
    raise TurnStopped(line, forget_prompt=stop_reason in FORGET_PROMPT)


STOP_MESSAGES = {
    "max_tokens": f"[The reply was cut off at max_tokens ({MAX_TOKENS}).]",
    "refusal": "[The model declined to continue.]",
    "model_context_window_exceeded":
        "[The conversation no longer fits the model's context window: /clear starts a new one.]",
    "pause_turn": "[The model paused its turn, and it could not be sent back to go on.]",
}
# The API asks for a refused prompt to be taken back, or later prompts are refused too; a
# conversation too long for the context window only grows with each prompt.
FORGET_PROMPT = {"refusal", "model_context_window_exceeded"}


class TurnStopped(Exception):
    """The turn cannot go on: the line that says why, and whether its prompt must be forgotten
    (a refused prompt, or one the conversation no longer has room for)."""

    def __init__(self, line, forget_prompt=False):
        super().__init__(line)
        self.forget_prompt = forget_prompt


# ======================================================================
# THE TOOLS
# ======================================================================

BASH_TOOL = {
    "name": "bash",
    "description": ("Run a shell command in the working directory and return its output "
                    "and exit code."),
    "input_schema": {
        "type": "object",
        "properties": {"command": {"type": "string", "description": "The command to run."}},
        "required": ["command"],
    },
}


TOOLS = [BASH_TOOL]

# The dispatch map: a tool's name to the function that runs it, handler(session, **input).
# Each chapter's tools add theirs where they are defined; run_bash is defined below, in the
# harness, so bash's entry calls it when the tool runs.
TOOL_HANDLERS = {"bash": lambda session, command: run_bash(session, command)}

# The field each tool acts on: the screen shows it first (from s03, rules are matched against it).
CALL_SUBJECT = {"bash": "command"}


def run_tool(session, block):
    """Run one tool_use block and return its tool_result. It raises only PlanRejected: the
    user's answer to the plan, which run_tools makes the call's result."""
    name, tool_input = block["name"], block["input"]
    try:
        handler = TOOL_HANDLERS.get(name)
        if handler is None:
            raise ToolError(f"There is no tool named {name!r}. "
                            f"The tools are: {', '.join(TOOL_HANDLERS)}.")
        schema = next(tool["input_schema"] for tool in TOOLS if tool["name"] == name)
        problem = input_problem(name, schema, tool_input)
        if problem:
            raise ToolError(problem)
        hooked = run_hooks(session, "PreToolUse", tool_name=name, tool_input=tool_input)
        if hooked["decision"] == "block":
            raise ToolError(f"Blocked by a PreToolUse hook: {hooked['reason']}")
        decision, reason = check_permission(session, name, tool_input)
        # A hook may spare the user a question, but never lift a deny, and never answer
        # for the user when the call would change the agent's own settings.
        spared = hooked["decision"] == "allow" and not changes_power_file(session, name, tool_input)
        if decision == "ask" and spared:
            decision = "allow"
        if decision == "ask":
            decision, reason = ask_permission(session, block)
        if decision == "deny":
            raise ToolError(reason)
        content = handler(session, **tool_input)
        hooked = run_hooks(session, "PostToolUse", tool_name=name, tool_input=tool_input,
                           tool_response=content)
        feedback = "\n".join(text for text in (hooked["context"], hooked["reason"]) if text)
        if feedback:
            content += "\n" + hook_text("PostToolUse", feedback)
        return tool_result(block["id"], content)
    except PlanRejected:  # the user's answer to the plan: run_tools gives it its result
        raise
    except ToolError as error:
        return tool_result(block["id"], str(error), is_error=True)
    except Exception as error:  # a bug in a tool must not end the session
        failure = f"The tool failed: {type(error).__name__}: {error}"
        return tool_result(block["id"], failure, is_error=True)


def tool_result(tool_use_id, text, is_error=False):
    result = {"type": "tool_result", "tool_use_id": tool_use_id, "content": encodable(text)}
    if is_error:
        result["is_error"] = True
    return result


class ToolError(Exception):
    """A tool failed in a way the model should hear about (is_error: true)."""


# ======================================================================
# THE WORKSPACE GUARD                                         (new in s02)
# ======================================================================

def resolve_path(workdir, path):
    """The absolute path for `path`, or ToolError if it leads out of the workdir.

    Refused: a NUL byte, `~`, any `..` part, an absolute path outside the
    workdir, and a symlink (or chain of them) that ends outside it.
    """
    if not isinstance(path, str) or not path.strip():
        raise ToolError("A path must be a non-empty string.")
    if "\0" in path:
        raise ToolError("Refused: the path contains a NUL byte.")
    if path.startswith("~"):
        raise ToolError(f"Refused: {path!r} starts with '~'. "
                        "Use a path relative to the working directory.")
    if ".." in Path(path).parts:
        raise ToolError(f"Refused: {path!r} contains '..'. "
                        "Paths stay inside the working directory.")
    root = Path(workdir).resolve()
    try:
        target = (root / path).resolve()  # follows symlinks, so a link that leads out is seen here
    except (OSError, RuntimeError) as error:  # a symlink loop, a name too long
        raise ToolError(f"Refused: cannot resolve {path!r} ({error}).") from None
    if not target.is_relative_to(root):
        raise ToolError(f"Refused: {path!r} is outside the working directory.")
    return target


def workdir_relative(workdir, target):
    """A path as the model should see it: relative to the workdir."""
    return target.relative_to(Path(workdir).resolve()).as_posix() or "."


# ======================================================================
# THE FILE TOOLS                                              (new in s02)
# ======================================================================

READ_LIMIT = 2000  # lines read_file returns when no limit is given
LINE_LIMIT = 2000  # characters shown of one line (a minified file is one long line)
READ_CHAR_LIMIT = 50_000  # characters one read_file returns at most
GLOB_LIMIT = 100  # paths glob returns
GLOB_SCAN_LIMIT = 20_000  # names one glob looks at: a bigger search stops there, and says so
GLOB_PARTS = 64  # parts between slashes a glob pattern may have
# A named pipe, a socket or a device is refused before it is opened: opening a FIFO waits for a
# writer, forever.
NOT_REGULAR = ("{} is not a regular file (a named pipe, a socket or a device). "
               "read_file, write_file and edit_file act on regular files only.")


def read_file(session, path, offset=1, limit=READ_LIMIT):
    target = resolve_path(session.workdir, path)
    if offset < 1 or limit < 1:
        raise ToolError("offset and limit must be 1 or more (offset counts lines from 1).")
    if is_special_file(target):
        raise ToolError(NOT_REGULAR.format(path))
    try:
        lines = target.read_text(encoding="utf-8", errors="replace").split("\n")
    except IsADirectoryError:
        raise ToolError(f"{path} is a folder. Use glob or bash ls to list it.") from None
    except OSError as error:
        raise ToolError(f"Cannot read {path}: {error.strerror}.") from None
    if lines[-1] == "":  # the newline that ends the last line
        lines.pop()
    if not lines:
        return f"({path} is empty)"
    if offset > len(lines):
        raise ToolError(f"{path} has {len(lines)} lines; offset {offset} is past the end.")
    chosen, size = [], 0
    for line in lines[offset - 1:offset - 1 + limit]:
        if len(line) > LINE_LIMIT:
            line = line[:LINE_LIMIT] + f" [line cut: {len(line) - LINE_LIMIT} more characters]"
        size += len(line)
        if chosen and size > READ_CHAR_LIMIT:  # the rest waits for the next read
            break
        chosen.append(line)
    numbered = "\n".join(f"{number:>6}\t{line}" for number, line in enumerate(chosen, offset))
    rest = len(lines) - (offset - 1 + len(chosen))
    if rest > 0:
        numbered += f"\n({rest} more lines; read on with offset={offset + len(chosen)})"
    return numbered


def write_atomically(target, content):
    """Write to a temporary file beside the target, then rename: never half a file.

    The new file keeps the old one's permissions (a script stays executable),
    and its line endings are written as given.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        mode = target.stat().st_mode & 0o7777
    else:  # the mode a new file usually gets; reading the umask means setting it, so set it back
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.",
                                         suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as file:
            file.write(content)
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise


def write_file(session, path, content):
    target = resolve_path(session.workdir, path)
    if is_special_file(target):
        raise ToolError(NOT_REGULAR.format(path))
    try:
        if target.is_dir():
            raise ToolError(f"{path} is a folder. write_file needs the path of a file.")
        existed = target.exists()
        write_atomically(target, content)
    except OSError as error:
        raise ToolError(f"Cannot write {path}: {error.strerror}.") from None
    done = "Overwrote" if existed else "Created"
    return f"{done} {workdir_relative(session.workdir, target)} ({len(content)} characters)."


def edit_file(session, path, old_string, new_string, replace_all=False):
    target = resolve_path(session.workdir, path)
    if old_string == "":
        raise ToolError("old_string is empty. To create a file, use write_file.")
    if old_string == new_string:
        raise ToolError("old_string and new_string are the same: nothing would change.")
    if is_special_file(target):
        raise ToolError(NOT_REGULAR.format(path))
    try:
        with open(target, encoding="utf-8", newline="") as file:  # newline="": keep \r\n as it is
            text = file.read()
    except OSError as error:
        raise ToolError(f"Cannot read {path}: {error.strerror}.") from None
    except UnicodeDecodeError:
        raise ToolError(f"{path} is not UTF-8 text; edit_file edits text files.") from None
    # read_file showed these \r\n lines with "\n" only
    if old_string not in text and "\r\n" in text:
        old_string, new_string = old_string.replace("\n", "\r\n"), new_string.replace("\n", "\r\n")
    count = text.count(old_string)
    if count == 0:
        raise ToolError(f"old_string was not found in {path}. "
                        "Read the file and copy the text exactly.")
    if count > 1 and not replace_all:
        raise ToolError(f"old_string occurs {count} times in {path}. "
                        "Add context to make it unique, or set replace_all.")
    try:
        write_atomically(target, text.replace(old_string, new_string))
    except OSError as error:
        raise ToolError(f"Cannot write {path}: {error.strerror}.") from None
    replaced = count if replace_all else 1
    plural = "s" if replaced > 1 else ""
    relative = workdir_relative(session.workdir, target)
    return f"Replaced {replaced} occurrence{plural} in {relative}."


def glob_files(session, pattern):
    if pattern.startswith("/"):
        raise ToolError("Refused: the pattern must be relative to the working directory.")
    resolve_path(session.workdir, pattern)  # the same refusals as a path: '..', '~', NUL
    root = Path(session.workdir).resolve()
    parts = [part for part in pattern.split("/") if part not in ("", ".")]
    if not parts or len(parts) > GLOB_PARTS:
        raise ToolError(f"Bad pattern {pattern!r}: it must have 1 to {GLOB_PARTS} parts "
                        "between slashes.")
    # One walk of the tree, each name matched once against the parts of the pattern it may be
    # at: "**/d/**/d/**" costs no more than "**", and the walk stops after GLOB_SCAN_LIMIT.
    found, looked, stopped, folders = [], 0, False, [(root, glob_step(parts, {0}, None))]
    while folders and not stopped:
        folder, states = folders.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:  # unreadable, or gone since
            continue
        stopped = looked + len(entries) > GLOB_SCAN_LIMIT
        for entry in entries[:GLOB_SCAN_LIMIT - looked]:
            looked += 1
            after = glob_step(parts, states, entry.name)
            inside = len(parts) in after and Path(entry.path).resolve().is_relative_to(root)
            if inside and entry.is_file():  # a symlink to a file outside is not listed
                found.append(workdir_relative(root, Path(entry.path)))
            if after - {len(parts)} and entry.is_dir(follow_symlinks=False):
                folders.append((Path(entry.path), after))
    if not found and not stopped:
        return f"No files match {pattern!r}."
    found.sort()
    more = f"\n({len(found) - GLOB_LIMIT} more not shown)" if len(found) > GLOB_LIMIT else ""
    if stopped:
        more += (f"\n(glob stopped after looking at {GLOB_SCAN_LIMIT:,} names; "
                 "a narrower pattern finds the rest)")
    return "\n".join(found[:GLOB_LIMIT]) + more


def glob_step(parts, states, name):
    """Where in the pattern's parts a walk can be after one more name (None: at the start).
    A state is the index of the next part to match; "**" matches any number of names."""
    after = set()
    for state in states:
        if name is None:
            after.add(state)
        elif state < len(parts) and parts[state] == "**":
            after.add(state)
        elif state < len(parts) and fnmatch.fnmatchcase(name, parts[state]):
            after.add(state + 1)
    for state in sorted(after):  # "**" may also match no name at all
        while state < len(parts) and parts[state] == "**":
            state += 1
            after.add(state)
    return after


def path_field(description):
    return {"type": "string", "description": description}


FILE_TOOLS = [
    {
        "name": "read_file",
        "description": ("Read a text file. Lines come numbered. For a long file, read a part "
                        "with offset (first line, from 1) and limit (how many lines)."),
        "input_schema": {
            "type": "object",
            "properties": {
                "path": path_field("The file, relative to the working directory."),
                "offset": {"type": "integer",
                           "description": "The first line to read, counting from 1."},
                "limit": {"type": "integer", "description": "How many lines to read."},
            },
            "required": ["path"],
        },
    },
    {
        "name": "write_file",
        "description": ("Create or overwrite a file with the given content. "
                        "Missing folders are created."),
        "input_schema": {
            "type": "object",
            "properties": {
                "path": path_field("The file, relative to the working directory."),
                "content": {"type": "string", "description": "The whole new content of the file."},
            },
            "required": ["path", "content"],
        },
    },
    {
        "name": "edit_file",
        "description": ("Replace old_string with new_string in a file. old_string must occur "
                        "exactly once, unless replace_all is true."),
        "input_schema": {
            "type": "object",
            "properties": {
                "path": path_field("The file, relative to the working directory."),
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "The text to put in its place."},
                "replace_all": {"type": "boolean",
                                "description": "Replace every occurrence (default false)."},
            },
            "required": ["path", "old_string", "new_string"],
        },
    },
    {
        "name": "glob",
        "description": ("List the files that match a glob pattern such as '**/*.py', sorted, "
                        "relative to the working directory."),
        "input_schema": {
            "type": "object",
            "properties": {"pattern": {"type": "string", "description": "The glob pattern."}},
            "required": ["pattern"],
        },
    },
]


# The file tools join bash in the tool list and in the dispatch map.
TOOLS += FILE_TOOLS
TOOL_HANDLERS.update({"read_file": read_file, "write_file": write_file,
                      "edit_file": edit_file, "glob": glob_files})
# What each of them acts on: the > line and the question show it first.
CALL_SUBJECT.update({"read_file": "path", "write_file": "path", "edit_file": "path",
                     "glob": "pattern"})


# ======================================================================
# PERMISSIONS                                                 (new in s03)
# ======================================================================

def check_permission(session, name, tool_input):
    """Decide one tool call before it runs: ("allow" | "deny" | "ask", reason)."""
    refused = subagent_refuses(session, name, tool_input)  # what a subagent may not do
    if refused:
        return "deny", refused
    if session.plan_mode and not plan_mode_allows(session, name, tool_input):
        return "deny", (f"Denied: plan mode is on, and {name} may change things. "
                        "Only reading tools and read-only bash run now. "
                        "Finish the plan and submit it with exit_plan_mode.")
    if name == "bash":
        danger = catastrophic_reason(tool_input["command"])
        if danger:
            return "deny", f"Denied: this command {danger}. It is never allowed, in any mode."
    rule = matching_rule(session, "deny", name, tool_input)
    if rule:
        return "deny", f"Denied by the rule {rule!r} in .agent/settings.json."
    why = asks_in_every_mode(session, name, tool_input)
    if why:  # in every mode, whatever the rules allow
        return "ask", f"it {why}"
    for decision in ("ask", "allow"):
        rule = matching_rule(session, decision, name, tool_input)
        if rule:
            return decision, f"rule {rule!r}"
    if session.mode == "bypass":
        return "allow", "bypass mode"
    if name == "read_file" and not reads_what_it_names(session, tool_input["path"]):
        return "ask", "the path passes a symlink, or the file has another hard link"
    if name in SAFE_TOOLS or (name == "bash" and is_read_only(tool_input["command"],
                                                            session.workdir)):
        return "allow", "changes nothing"
    if session.mode == "accept_edits" and name in EDIT_TOOLS:
        return "allow", "accept_edits mode"
    return "ask", f"{session.mode} mode asks before this"


def ask_permission(session, block):
    """Show the whole call and ask: y once, a always (a rule), n no."""
    name, tool_input = block["name"], block["input"]
    asker = f"{session.subagent.label} asks: " if session.subagent else ""
    show(f"? {asker}allow {describe_call(block)}", 2)
    why = asks_in_every_mode(session, name, tool_input)
    if why:
        show(f"This call {why}.", 4)
        answers = {"y": "y", "yes": "y"}
    elif name == "bash" and is_chain(tool_input["command"]):
        show("[a] always is not offered: this is not one plain command.", 4)
        answers = {"y": "y", "yes": "y"}
    elif name == "bash" and SUBJECT_LIMIT < max(len(tool_input["command"]),
                                                len(printable_call(tool_input["command"]))):
        show(f"[a] always is not offered: the command is {len(tool_input['command'])} characters "
             f"long, and a question shows {SUBJECT_LIMIT} at most.", 4)
        answers = {"y": "y", "yes": "y"}
    else:
        answers = {"y": "y", "yes": "y", "a": "a", "always": "a"}
    choices = "[y] yes  [n] no"
    if "a" in answers:
        choices = "[y] yes  [a] always (saved to .agent/settings.json)  [n] no"
    answer = read_answer(f"    {choices}: ", answers)
    if answer == "a":
        rule = f"{name}({glob.escape(call_subject(session, name, tool_input))})"
        try:
            remember_rule(session, rule)
            show(f"saved: allow {rule}", 4)
        except (SettingsError, OSError) as error:
            show(f"could not save the rule ({error}); allowed this once", 4)
    if answer in ("y", "a"):
        return "allow", "the user said yes"
    return "deny", ("The user denied this call. Do not try it again as it is; "
                    "ask the user, or find another way.")


MODES = ("default", "accept_edits", "bypass")
# they change no file: they run in every mode
SAFE_TOOLS = {"read_file", "glob", "todo_write", "enter_plan_mode", "exit_plan_mode",
              "ask_user_question"}
EDIT_TOOLS = {"write_file", "edit_file"}


# Programs that may run unasked, and each option they may take, spelled exactly as here: a
# FLAG takes no value, a VALUE takes one (glued, after "=", or the next word), a PATH takes
# a path, checked as one. Short flags combine ("ls -la"). Any other program, option or
# shortening ("sort --o") is not read-only. Not listed on purpose: git (its config names
# programs it runs), options that write or run ("sort -o"), options that follow symlinks
# into folders ("grep -R", "ls -L"). Every argument that is not an option's value is a path,
# but for echo's words and grep's pattern; one that starts with "+" is not (tail +1f is tail's
# old "follow", sort +1 a key). diff and grep -r open the files inside a folder they are given.
FLAG, VALUE, PATH = "flag", "value", "path"
READ_ONLY = {
    "ls": dict.fromkeys(["-l", "-a", "-A", "-h", "-1", "-t", "-r", "-S", "-d", "-F",
                         "--all"], FLAG),
    "cat": dict.fromkeys(["-n", "--number"], FLAG),
    "head": dict.fromkeys(["-n", "-c", "--lines", "--bytes"], VALUE),
    "tail": dict.fromkeys(["-n", "-c", "--lines", "--bytes"], VALUE),
    "wc": dict.fromkeys(["-l", "-w", "-c", "-m", "--lines", "--words"], FLAG),
    "grep": {**dict.fromkeys(["-n", "-i", "-v", "-c", "-l", "-w", "-x", "-F", "-E", "-o",
                              "-h", "-H", "-r", "--line-number", "--count"], FLAG),
             "-e": VALUE, "--regexp": VALUE, "-m": VALUE, "-f": PATH, "--file": PATH},
    "sort": {**dict.fromkeys(["-r", "-n", "-u", "-f", "-b", "--reverse", "--unique"], FLAG),
             "-k": VALUE, "-t": VALUE, "--key": VALUE},
    "cut": dict.fromkeys(["-d", "-f", "-c"], VALUE),
    "diff": dict.fromkeys(["-u", "-q"], FLAG),
    "echo": {"-n": FLAG},
    "pwd": {}, "true": {}, "false": {}, "whoami": {},
    "uname": dict.fromkeys(["-a", "-s", "-r", "-m"], FLAG),
}


def is_read_only(command, workdir):
    """True only if every part of the command surely just reads, inside the workdir.

    An allowlist: a plain chain (plain_commands) whose every command is a program of
    READ_ONLY, with only the options listed for it, and whose every path (an argument, or
    an option's PATH value) stays inside the workdir (resolve_path, symlinks followed).
    Anything else is "not read-only", so it asks; a wrong "yes" here would let a write,
    or a read of ~/.ssh, through unasked.
    """
    commands = plain_commands(command)
    return commands is not None and all(reads_inside(words, workdir) for words in commands)


# Files that hold keys ask before they are read, in every mode, by read_file or by bash: the API
# key (.env, which this harness reads, and .env.local ...), tokens and passwords for hosts, npm,
# PyPI and git (.netrc, .npmrc, .pypirc, .git-credentials), private keys (.ssh/, .gnupg/,
# *.pem, *.key) and cloud keys (.aws/). Matched against each part of a path, in lower case.
SECRET_FILES = (".env", ".env.*", ".netrc", ".npmrc", ".pypirc", ".git-credentials", ".ssh",
                ".gnupg", ".aws", "*.pem", "*.key")


# Files that give power: who writes them decides what runs next. The agent's settings, hooks
# and plans; git's config and hooks; the API key and endpoint; and the start-up files that
# HOME makes live (offline, HOME is the workdir). Matched against each part of a path.
POWER_FILES = {
    ".agent/settings.json": "the file that sets what the agent may do",
    ".agent": "the agent's settings, hooks and plans are there",
    ".git": "git runs the programs its config and hooks name",
    ".env": "the next start reads the API key and the endpoint from it",
    **dict.fromkeys([".gitconfig", ".bashrc", ".bash_profile", ".bash_login", ".profile",
                     ".zshrc", ".zprofile", ".zshenv", ".inputrc", ".netrc", ".npmrc",
                     ".pypirc", ".ssh", ".config", ".local"],
                    "a shell or a tool reads it at start-up, with HOME the workdir"),
}


class SettingsError(Exception):
    """A settings file that cannot be used: the program stops with one line."""


def parse_rule(rule):
    """'bash(git status*)' -> ('bash', 'git status*'); 'read_file' -> ('read_file', None)."""
    match = re.fullmatch(r"([a-z_]+)(?:\((.+)\))?", rule.strip()) if isinstance(rule, str) else None
    if not match:
        raise SettingsError(f"cannot parse the rule {rule!r}: write a tool name, or tool(pattern)")
    if match[1] not in TOOL_HANDLERS:
        raise SettingsError(f"the rule {rule!r} names no tool; "
                            f"the tools are: {', '.join(TOOL_HANDLERS)}")
    return match[1], match[2]


def settings_path(workdir):
    return Path(workdir) / ".agent" / "settings.json"


SETTINGS_LIMIT = 1_000_000  # bytes of a settings file


def load_settings(workdir):
    """The settings of this workdir ({} if there is no file), checked."""
    path = settings_path(workdir)
    if not os.path.lexists(path):  # a link that leads nowhere is refused, not taken for none
        return {}
    try:  # read as carefully as a tool's file: no link on the way, no pipe, not too large
        settings = parse_json(read_own_file(path, workdir, SETTINGS_LIMIT), path, SettingsError)
    except OwnFileError as error:
        raise SettingsError(str(error)) from None
    except json.JSONDecodeError as error:
        raise SettingsError(f"{path}: not valid JSON ({error.msg} at line {error.lineno}, "
                            f"column {error.colno})") from None
    if too_deep(settings):
        raise SettingsError(f"{path}: lists and objects nest more than {DEPTH_LIMIT} levels deep")
    try:
        check_settings(settings)
    except SettingsError as error:
        raise SettingsError(f"{path}: {error}") from None
    return settings


SETTINGS_KEYS = ["permissions"]  # the keys settings.json may have (s04 adds "hooks")


def check_settings(settings):
    if not isinstance(settings, dict):
        raise SettingsError("the file must hold a JSON object")
    for key in settings:
        if key not in SETTINGS_KEYS:  # a typo ("permisions") would drop every rule silently
            raise SettingsError(f"unknown key {key!r}; the keys are: {', '.join(SETTINGS_KEYS)}")
    permissions = settings.get("permissions", {})
    if not isinstance(permissions, dict):
        raise SettingsError('"permissions" must be an object with "deny", "ask" and "allow" lists')
    for key, rules in permissions.items():
        if key not in ("deny", "ask", "allow"):
            raise SettingsError(
                f'"permissions" has an unknown key {key!r}; the keys are deny, ask, allow')
        if not isinstance(rules, list):
            raise SettingsError(f'"permissions.{key}" must be a list of rules')
        for rule in rules:
            parse_rule(rule)


def command_mode(session, argument):
    """/mode shows the permission mode; /mode NAME switches to it."""
    if argument in MODES:
        session.mode = argument
    elif argument:
        show(f"unknown mode {argument!r}; the modes are: {', '.join(MODES)}")
        return
    show(f"mode: {session.mode}   (modes: {', '.join(MODES)})")


# ======================================================================
# HOOKS                                                       (new in s04)
# ======================================================================

HOOK_EVENTS = ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SubagentStop")
HOOK_TIMEOUT = 10  # seconds a command hook may run
STOP_HOOK_LIMIT = 3  # Stop hooks may send the model back at most this often in a row
SETTINGS_KEYS.append("hooks")  # settings.json may now have hooks too


class HookError(Exception):
    """A hook that failed: reported to the user, then skipped."""


@dataclass
class Hook:
    event: str
    run: object  # a function: event (dict) -> None, or a decision (dict)
    matcher: str = "*"  # tool events: a tool name or a regex; "*" matches all
    label: str = ""


def add_hook(session, event, function, matcher="*"):
    """Register a Python function as a hook. The whole API of this chapter.

    The function gets the event as a dict and returns None to go on, or a
    decision: {"decision": "block", "reason": "..."}, {"decision": "allow"}
    (PreToolUse: skip asking the user), or {"context": "..."} (text for the
    model: after the prompt, or after a tool's result).
    """
    if event not in HOOK_EVENTS:
        raise ValueError(f"unknown hook event {event!r}; the events are: {', '.join(HOOK_EVENTS)}")
    if matcher not in ("*", ""):
        re.compile(matcher)  # a bad regex fails here, not in the middle of a session
    session.hooks.append(Hook(event, function, matcher, getattr(function, "__name__", "hook")))


def command_hook(command, timeout=HOOK_TIMEOUT):
    """A hook that runs a shell command: the event as JSON on stdin."""
    def run(event):
        env = {k: v for k, v in os.environ.items() if k not in SECRET_VARIABLES}
        process = subprocess.Popen(
            command, shell=True, cwd=event["cwd"], env=env, text=True, errors="replace",
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True,  # as in run_bash: a timeout stops the hook and all it started
        )
        try:
            stdout, stderr = process.communicate(json.dumps(event), timeout=timeout)
        except BaseException as stop:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:  # gone: a Ctrl-C as it started
                pass
            process.communicate()
            if isinstance(stop, subprocess.TimeoutExpired):
                raise HookError(f"timed out after {timeout} seconds") from None
            raise
        if process.returncode == 2:
            return {"decision": "block", "reason": stderr.strip() or "blocked by a hook"}
        if process.returncode != 0:
            said = (stderr.strip() or stdout.strip())[:300] or "it printed nothing to say why"
            raise HookError(f"exit code {process.returncode}: {said}")
        if not stdout.strip():
            return None
        try:
            return json.loads(stdout)
        except json.JSONDecodeError:
            raise HookError(
                f"exit code 0, but its output is not JSON: {stdout.strip()[:100]!r}") from None
    return run


def load_command_hooks(session):
    """The command hooks in .agent/settings.json.

    Their form: {"hooks": {EVENT: [{matcher, command, timeout}]}}.
    """
    where = settings_path(session.workdir)
    hooks = session.settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise SettingsError(f'{where}: "hooks" must be an object of events')
    for event, entries in hooks.items():
        if event not in HOOK_EVENTS:
            raise SettingsError(f"{where}: unknown hook event {event!r}; "
                                f"the events are: {', '.join(HOOK_EVENTS)}")
        for entry in entries if isinstance(entries, list) else [None]:
            if (not isinstance(entry, dict) or not isinstance(entry.get("command"), str)
                    or set(entry) - {"matcher", "command", "timeout"}):
                raise SettingsError(f"{where}: each {event} hook must be "
                                    '{"command": "...", "matcher": "...", "timeout": N}')
            timeout = entry.get("timeout", HOOK_TIMEOUT)
            if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
                raise SettingsError(
                    f"{where}: the timeout of a {event} hook must be a positive number")
            try:
                add_hook(session, event, command_hook(entry["command"], timeout),
                         entry.get("matcher", "*"))
            except (re.error, TypeError):
                raise SettingsError(f"{where}: the matcher {entry.get('matcher')!r} "
                                    f"of a {event} hook is not a regex") from None
            session.hooks[-1].label = entry["command"][:60]


def run_hooks(session, event_name, **details):
    """Run the hooks of one event, in order; return what they decided together.

    The first "block" wins. Contexts add up. A hook that fails is reported and
    skipped: a broken hook must not break the session.
    """
    event = {"hook_event_name": event_name, "cwd": str(session.workdir), **details}
    outcome = {"decision": None, "reason": "", "context": ""}
    for hook in session.hooks:
        tool = details.get("tool_name")
        matches_tool = hook.matcher in ("*", "") or re.fullmatch(hook.matcher, tool or "")
        if hook.event != event_name or (tool and not matches_tool):
            continue
        try:
            decision = hook.run(copy.deepcopy(event)) or {}
            if (not isinstance(decision, dict)
                    or decision.get("decision") not in (None, "block", "allow")):
                raise HookError("a decision must be None or a dict with decision block or allow, "
                                f"not {decision!r}")
        except Exception as error:  # HookError, or a bug in a Python hook
            show(f"hook error ({event_name}, {hook.label}): {error}", 2)
            continue
        if decision.get("context"):
            outcome["context"] = (outcome["context"] + "\n" + str(decision["context"])).strip()
        if decision.get("decision") == "block":
            reason = str(decision.get("reason") or "blocked by a hook")
            return {**outcome, "decision": "block", "reason": reason}
        if decision.get("decision") == "allow":
            outcome["decision"] = "allow"
    return outcome


def hook_text(event_name, text):
    """How a hook's words reach the model: marked, so it can tell them from the user's."""
    return f'<hook event="{event_name}">{text}</hook>'


def stop_hook_sends_back(session, text, sent_back):
    """Run the Stop hooks on the model's answer `text`; True if they send the model back to
    work, with their reason as the next user turn. sent_back lists the answers they sent back
    in a row: a model that gives the last one again has not heeded them, and after
    STOP_HOOK_LIMIT times the turn ends anyway. A subagent's answer goes to the SubagentStop
    hooks instead, which also get its description."""
    event = "SubagentStop" if session.subagent else "Stop"
    details = {"description": session.subagent.description} if session.subagent else {}
    hooked = run_hooks(session, event, stop_hook_active=bool(sent_back), last_message=text,
                       **details)
    if hooked["decision"] != "block":
        return False
    if sent_back and text == sent_back[-1]:
        show(f"[A {event} hook asked again, and the model gave the same answer as before: "
             "sending it back once more would only repeat it. The turn ends.]", session.indent)
        return False
    if len(sent_back) >= STOP_HOOK_LIMIT:
        show(f"[A {event} hook asked again; after {STOP_HOOK_LIMIT} times in a row "
             "the turn ends anyway.]", session.indent)
        return False
    sent_back.append(text)
    show(f"[A {event} hook sends the model back to work: {hooked['reason']}]", session.indent)
    again = hook_text(event, hooked["reason"])
    add_user_blocks(session.messages, [{"type": "text", "text": again}])
    return True


def check_python_syntax(event):
    """The example hook (PostToolUse on write_file and edit_file): after a .py
    file changes, compile it, and tell the model at once if it no longer parses."""
    path = event["tool_input"].get("path", "")
    if not path.endswith(".py"):
        return None
    try:
        compile((Path(event["cwd"]) / path).read_text(encoding="utf-8"), path, "exec")
    except SyntaxError as error:
        return {"context": f"{path} no longer parses: {error.msg} (line {error.lineno}). "
                           "Fix it first."}
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return None


# ======================================================================
# THE TODO LIST                                               (new in s05)
# ======================================================================

TODO_STATUSES = ("pending", "in_progress", "completed")
TODO_FIELDS = ("content", "status", "activeForm")
TODO_LIMIT = 20
TODO_MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}
REMINDER_ROUNDS = 3  # tool rounds without a todo update before the reminder
REMINDER = {"type": "text", "text": "<reminder>Update your todos.</reminder>"}

TODO_TOOL = {
    "name": "todo_write",
    "description": (
        "Write your todo list. Send the whole list every time: it replaces the old one. "
        "Use it to plan work of more than two steps and to keep statuses current. "
        "At most one item may be in_progress."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "description": f"The whole list, at most {TODO_LIMIT} items.",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "description":
                                    "What to do, in the imperative: 'Run the tests'."},
                        "status": {"type": "string", "enum": list(TODO_STATUSES)},
                        "activeForm": {"type": "string", "description":
                                       "Shown while in progress: 'Running the tests'."},
                    },
                    "required": ["content", "status"],
                },
            }
        },
        "required": ["todos"],
    },
}


def parse_todo_string(text):
    """Some models send the list as a string. Accept a JSON array, then a Python
    literal (ast.literal_eval only reads literals: nothing in it can run).
    Never eval()."""
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, list):
            return value
    raise ToolError("todos must be a list of items; this string is not a JSON array.")


def validate_todos(todos):
    """The checked list, or ToolError naming the item and the rule. Changes nothing."""
    if isinstance(todos, str):
        todos = parse_todo_string(todos)
    if not isinstance(todos, list):
        raise ToolError("todos must be a list of items.")
    if len(todos) > TODO_LIMIT:
        raise ToolError(f"A todo list holds at most {TODO_LIMIT} items; this one has {len(todos)}.")
    checked = []
    for number, item in enumerate(todos, 1):
        if not isinstance(item, dict):
            raise ToolError(f"Item {number} must be an object with content and status.")
        unknown = [key for key in item if key not in TODO_FIELDS]
        if unknown:
            raise ToolError(f"Item {number} has an unknown field {unknown[0]!r}; "
                            f"the fields are {', '.join(TODO_FIELDS)}.")
        if not isinstance(item.get("content"), str) or not item["content"].strip():
            raise ToolError(f"Item {number} needs a non-empty content.")
        if item.get("status") not in TODO_STATUSES:
            raise ToolError(f"Item {number} has status {item.get('status')!r}; "
                            f"the statuses are {', '.join(TODO_STATUSES)}.")
        active = item.get("activeForm")
        if "activeForm" in item and (not isinstance(active, str) or not active.strip()):
            raise ToolError(f"Item {number} has an activeForm that is not a non-empty string.")
        checked.append({**item, "content": item["content"].strip()})
    busy = [number for number, item in enumerate(checked, 1) if item["status"] == "in_progress"]
    if len(busy) > 1:
        raise ToolError(f"Items {', '.join(map(str, busy))} are all in_progress; "
                        "at most one item may be in progress.")
    return checked


def todo_label(item):
    """The item in progress shows its activeForm ("Running the tests"), if it has one."""
    if item["status"] == "in_progress":
        return item.get("activeForm", item["content"])
    return item["content"]


def render_todos(todos):
    lines = [f"{TODO_MARKS[item['status']]} {todo_label(item)}" for item in todos]
    done = sum(item["status"] == "completed" for item in todos)
    return "\n".join(lines + [f"({done}/{len(todos)} completed)"])


def todo_write(session, todos):
    """Validate the whole new list first; only then replace the old one."""
    session.todos = validate_todos(todos)
    return render_todos(session.todos)


def todo_reminder(session, tool_uses, results):
    """Count one tool round; on the third without a todo update, return the reminder.

    A todo_write that failed validation is not an update. Several tool_use
    blocks in one turn are one round.
    """
    updated = any(block["name"] == "todo_write" and not result.get("is_error")
                  for block, result in zip(tool_uses, results, strict=True))
    session.rounds_since_todo = 0 if updated else session.rounds_since_todo + 1
    if session.rounds_since_todo < REMINDER_ROUNDS:
        return []
    session.rounds_since_todo = 0
    show(REMINDER["text"], 2)
    return [dict(REMINDER)]


def command_todos(session, argument):
    """/todos shows the current todo list."""
    show(render_todos(session.todos) if session.todos else
         "(the todo list is empty: the model has not written one in this conversation)")


# todo_write joins the tools. Like every handler it gets the session; it acts on the
# session's todo list, not on files.
TOOLS.append(TODO_TOOL)
TOOL_HANDLERS["todo_write"] = todo_write


# ======================================================================
# PLAN MODE                                                   (new in s06)
# ======================================================================

PLAN_MODE_HIDDEN = {"write_file", "edit_file", "enter_plan_mode"}  # not offered in plan mode
PLAN_MODE_ENTERED = (
    "<reminder>Plan mode is on. Do not change anything yet: no write_file, no edit_file, "
    "and bash only for commands that read. The harness refuses every other call.\n"
    "Work like this:\n"
    "1. Explore: read the code the task touches.\n"
    "2. Design: decide on the change, step by step.\n"
    "3. Clarify: if a decision is really the user's, ask with ask_user_question.\n"
    "4. Submit: call exit_plan_mode with the plan as markdown. The user approves it, "
    "answers with feedback, or rejects it.\n"
    "A planning turn ends with ask_user_question or exit_plan_mode, never with a question "
    "in text. Whether the plan is good is for exit_plan_mode to ask: only there does the "
    "user see the plan.</reminder>"
)
PLAN_MODE_STILL_ON = ("<reminder>Plan mode is still on: read and plan only, ask the user "
                      "with ask_user_question if a decision is theirs, then submit the plan "
                      "with exit_plan_mode.</reminder>")
PLAN_MODE_ENDED = ("<reminder>Plan mode has ended: the user approved the plan. "
                   "You may change files now.</reminder>")
# The plan question offers Claude Code's answers: approve and accept edits, approve and keep
# asking before each edit (the permission mode stays), or keep planning (feedback); and `n`,
# which ends the turn with plan mode on: the user says what next.
APPROVE_QUESTION = ("  Approve this plan? [a] yes, and accept edits  [y] yes, ask before edits  "
                    "[n] no, stop here  or type feedback to keep planning: ")
PLAN_MODE_LEFT = ("<reminder>The user ended plan mode without a plan. "
                  "You may change files now.</reminder>")


ENTER_PLAN_TOOL = {
    "name": "enter_plan_mode",
    "description": ("Switch to plan mode before a large or unclear change: explore and plan "
                    "without changing anything, then submit the plan with exit_plan_mode."),
    "input_schema": {"type": "object", "properties": {}},
}
EXIT_PLAN_TOOL = {
    "name": "exit_plan_mode",
    "description": ("In plan mode: submit your plan to the user for approval. "
                    "Work starts only if the user approves."),
    "input_schema": {
        "type": "object",
        "properties": {"plan": {"type": "string", "description": "The plan, in markdown."}},
        "required": ["plan"],
    },
}


def plan_mode_allows(session, name, tool_input):
    """In plan mode, only calls that change nothing run (entering again changes nothing)."""
    if name == "bash":
        return is_read_only(tool_input["command"], session.workdir)
    return name == "enter_plan_mode" or name not in PLAN_MODE_HIDDEN


def tools_for(session):
    """The tools offered to the model: in plan mode, none that change things."""
    if session.plan_mode:
        return [tool for tool in TOOLS if tool["name"] not in PLAN_MODE_HIDDEN]
    return TOOLS


def enter_plan(session):
    """Turn plan mode on; the full instructions go with the next user turn. Returns the line
    that tells the user."""
    session.plan_mode = True
    if PLAN_MODE_LEFT in session.notes:  # /plan off, then on again: the model never heard it left
        session.notes.remove(PLAN_MODE_LEFT)
    else:
        session.notes.append(PLAN_MODE_ENTERED)
    return "[Plan mode is on: the model may read and plan, not change anything.]"


def enter_plan_mode(session):
    """The tool: takes effect at once, without asking, since it only restricts."""
    if session.plan_mode:  # e.g. after --plan or /plan: nothing to do, and no error
        return "Plan mode is already on. Explore, then submit your plan with exit_plan_mode."
    show(enter_plan(session))
    return "Plan mode is on. Explore, then submit your plan with exit_plan_mode."


def exit_plan_mode(session, plan):
    """The tool: show the plan; the user approves it (keeping the permission mode, or
    accepting edits from now on), answers with feedback, or rejects it."""
    if not session.plan_mode:
        raise ToolError("Plan mode is not on, so there is no plan to submit. "
                        "Go ahead with the task.")
    if not plan.strip():
        raise ToolError("The plan is empty. Write the plan in markdown and submit it again.")
    try:  # refused before the question: an approval must never be lost to a plan unsaved
        plan.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ToolError(f"The plan cannot be encoded as UTF-8 (character {error.start + 1} is "
                        "a lone surrogate). Submit it again without that character.") from None
    show("Plan:", 2)
    show(plan, 4)
    answer = (read_line(APPROVE_QUESTION) or "").strip()
    if answer.lower() in ("", "n", "no"):
        raise PlanRejected("The user rejected the plan. Plan mode stays on. "
                           "Stop here and wait for the user.", ends_turn=True)
    if answer.lower() not in ("a", "y", "yes"):
        session.notes.append(answer)
        raise PlanRejected("The user did not approve the plan; their feedback follows. "
                           "Plan mode stays on: revise the plan and submit it again "
                           "with exit_plan_mode.", ends_turn=False)
    session.approved_plan = ()  # (file, text): what a summary carries, once it is saved
    try:  # the folder is resolved and checked: a .agent/plans that links out is not written
        relative = workdir_relative(session.workdir, plan_file(session))
        target = resolve_path(session.workdir, relative)
        write_atomically(target, plan.rstrip("\n") + "\n")
        session.approved_plan = (target, plan.rstrip("\n") + "\n")
        saved = f"The plan is saved in {workdir_relative(session.workdir, target)}."
    except ToolError:
        saved = ("The plan could not be saved (.agent/plans leads outside the working "
                 "directory), but it is approved all the same.")
    except OSError as error:
        saved = f"The plan could not be saved ({error.strerror}), but it is approved all the same."
    # Plan mode ends only now: a Ctrl-C while the plan is written leaves it on, unapproved.
    session.plan_mode = False
    session.notes.append(PLAN_MODE_ENDED)
    if answer.lower() == "a":
        session.mode = "accept_edits"
        show(f"[Plan approved; plan mode is off, and edits run without asking "
             f"(mode: accept_edits). {saved}]")
        return (f"The user approved the plan, and your edits now run without asking "
                f"(permission mode accept_edits). Plan mode is off: start the work now. "
                f"{saved}\n\n{plan}")
    show(f"[Plan approved; plan mode is off, and the mode stays {session.mode}. {saved}]")
    return f"The user approved the plan. Plan mode is off: start the work now. {saved}\n\n{plan}"


def take_notes(session):
    """The text blocks waiting for the next user turn (plan-mode news, feedback)."""
    notes, session.notes = session.notes, []
    return [{"type": "text", "text": note} for note in notes]


def command_plan(session, argument):
    """/plan shows plan mode; /plan TASK turns it on and sends TASK; /plan off leaves it."""
    if not argument:
        show(f"plan mode: {'on' if session.plan_mode else 'off'}   "
             "(/plan TASK to plan a task, /plan off to leave plan mode)")
        return
    if argument == "off":
        leave_plan(session)
        return
    if not session.plan_mode:
        show(enter_plan(session))
    run_turn(session, argument)


def leave_plan(session):
    """/plan off: plan mode ends without a plan; the model hears it with the next user turn."""
    if not session.plan_mode:
        show("plan mode is already off")
        return
    session.plan_mode = False
    if PLAN_MODE_ENTERED in session.notes:  # the model never heard that plan mode was on
        session.notes.remove(PLAN_MODE_ENTERED)
    else:
        session.notes.append(PLAN_MODE_LEFT)
    show(f"[Plan mode is off, without a plan; the permission mode is {session.mode} again.]")


# The plan-mode tools join the others; like todo_write, they act on the session.
TOOLS += [ENTER_PLAN_TOOL, EXIT_PLAN_TOOL]
TOOL_HANDLERS.update({"enter_plan_mode": enter_plan_mode,
                      "exit_plan_mode": exit_plan_mode})


# ======================================================================
# ASKING THE USER                                             (new in s06)
# ======================================================================

QUESTION_LIMIT = 4  # questions in one call
OPTION_LIMITS = (2, 4)  # options of one question: at least, at most
HEADER_LIMIT = 12  # characters of a question's header
QUESTION_FIELDS = ("question", "header", "options", "multiSelect")
OPTION_FIELDS = ("label", "description")


ASK_TOOL = {
    "name": "ask_user_question",
    "description": (
        "Ask the user 1 to 4 questions, each with 2 to 4 options, and wait for the answers. "
        "Use it only when you are blocked on a decision that is really the user's: one that "
        "the request, the code and sensible defaults do not answer. Put the option you "
        "recommend first, with ' (Recommended)' at the end of its label. The user picks an "
        "option (several with multiSelect), answers in their own words, or skips the "
        "question. Never use it to ask whether a plan is acceptable: the user sees the plan "
        "only in exit_plan_mode, which asks exactly that."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "description": f"1 to {QUESTION_LIMIT} questions, asked in this order.",
                "minItems": 1,
                "maxItems": QUESTION_LIMIT,
                "items": {
                    "type": "object",
                    "properties": {
                        "question": {"type": "string", "description":
                                     "The whole question, clear on its own, ending with '?'."},
                        "header": {"type": "string", "description":
                                   f"A short label for it, at most {HEADER_LIMIT} characters."},
                        "options": {
                            "type": "array",
                            "description": "The choices; the user may also answer in their "
                                           "own words.",
                            "minItems": OPTION_LIMITS[0],
                            "maxItems": OPTION_LIMITS[1],
                            "items": {
                                "type": "object",
                                "properties": {
                                    "label": {"type": "string", "description":
                                              "The choice, in a few words."},
                                    "description": {"type": "string", "description":
                                                    "What choosing it means."},
                                },
                                "required": list(OPTION_FIELDS),
                            },
                        },
                        "multiSelect": {"type": "boolean", "description":
                                        "true if the user may pick several options."},
                    },
                    "required": list(QUESTION_FIELDS),
                },
            }
        },
        "required": ["questions"],
    },
}


def ask_user_question(session, questions):
    """The tool: the harness asks each question and collects what the user answers.
    EOF skips the questions left, and the turn goes on; Ctrl-C cancels the turn, as /help says
    (run_tools answers the call "Interrupted by the user.")."""
    questions = validate_questions(questions)
    answers = {}
    try:
        for number, item in enumerate(questions, 1):
            show_question(item, number, len(questions))
            answer = read_choice(item)
            if answer is not None:
                answers[item["question"]] = answer
    except EOFError:
        show("[No more answers: the questions left are skipped.]", 4)
    return answers_text(questions, answers)


# ask_user_question joins the tools. Like exit_plan_mode it asks the user in every
# permission mode (the permission check lets it run; the asking is the tool itself).
TOOLS.append(ASK_TOOL)
TOOL_HANDLERS["ask_user_question"] = ask_user_question


# ======================================================================
# SUBAGENTS                                                   (new in s07)
# ======================================================================

SUBAGENT_MAX_CALLS = 20  # model calls one subagent may make (they count in --max-calls too)
SUBAGENT_ANSWER_LIMIT = 10_000  # characters of a subagent's answer that the parent gets
# Not offered to a subagent, and refused if it calls them anyway: agent (no nesting: one
# level is the idea), todo_write, enter_plan_mode and exit_plan_mode (it cannot plan: the
# plan is the parent's, made with the user), ask_user_question (the user talks to the parent).
SUBAGENT_HIDDEN = {"agent", "todo_write", "enter_plan_mode", "exit_plan_mode",
                   "ask_user_question"}


@dataclass
class Subagent:
    """What makes a session a subagent's (the main agent's has None): its task's description,
    and the tools it is not offered."""
    description: str  # the short label the agent call gave its task
    hidden: frozenset = frozenset(SUBAGENT_HIDDEN)

    @property
    def label(self):  # how the screen and the trailer name it: subagent "Find greet"
        return f'subagent "{one_line(self.description)}"'


def subagent_system_prompt(workdir):
    return (
        f"You are a subagent: another agent gave you one task. Your working directory is "
        f"{workdir}.\n"
        "Use read_file, write_file, edit_file and glob for files, and bash for everything "
        "else. Paths are relative to the working directory. Do the task and nothing more.\n"
        "The other agent sees none of your tool calls: only your last message reaches it. "
        "End with a report that stands on its own: what you found or did, with the paths "
        "and line numbers that matter."
    )


AGENT_TOOL = {
    "name": "agent",
    "description": (
        "Hand a side task to a subagent: a fresh agent that sees only the prompt you give it, "
        "with bash and the file tools. Use it when a task would fill your context with what "
        "it reads (find where something is defined, survey many files, check a claim) and "
        "only its conclusion matters. It does not see this conversation: say in the prompt "
        "everything it needs, and what to report. You get back only its final report."
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "description": {"type": "string",
                            "description": "A short label for the task, 3 to 5 words."},
            "prompt": {"type": "string",
                       "description": "The whole task, clear on its own, and what to report."},
        },
        "required": ["description", "prompt"],
    },
}


def agent(session, description, prompt):
    """The tool: the same loop runs the task as a subagent, on a fresh history whose one
    message is AGENTS.md and the prompt; its calls stay there, and only its answer comes back."""
    if not description.strip() or not prompt.strip():
        raise ToolError("agent needs a non-empty description and prompt.")
    # The child is the parent's session (client, workdir, modes, rules, hooks, trace) with a
    # conversation of its own, the prompt its one message; its lines go four spaces further in.
    child = replace(
        session,
        conversation=Conversation(messages=[
            {"role": "user",
             "content": memory_blocks(session) + [{"type": "text", "text": prompt}]}],
            prompt=prompt),
        subagent=Subagent(description), indent=session.indent + 4,
        max_calls=min(SUBAGENT_MAX_CALLS, session.max_calls - session.calls))
    answer, spent = run_subagent(session, child)  # ToolError if it ends without an answer
    return f"{cut_answer(answer)}\n\n{spent}"


def offered_tools(session):
    """The tools a request offers: plan mode's choice; for a subagent, less its hidden ones."""
    if session.subagent:
        hidden = session.subagent.hidden
        return [tool for tool in tools_for(session) if tool["name"] not in hidden]
    return tools_for(session)


def subagent_refuses(session, name, tool_input):
    """Why a subagent may not make this call, or None. In plan mode it may only read, as its
    parent: plan mode's own test, said in words for a subagent, which has no plan to submit."""
    if session.subagent and name in session.subagent.hidden:
        return (f"Denied: a subagent cannot use {name}. Do the task with bash and the file "
                "tools, and end with your report.")
    if session.subagent and session.plan_mode and not plan_mode_allows(session, name,
                                                                       tool_input):
        return (f"Denied: the other agent is in plan mode, so nothing may change, and {name} "
                "may. Read only, and end with your report.")
    return None


# The agent tool joins the others. It changes nothing by itself (each of its subagent's calls
# is checked on its own), so it runs without asking, in every mode.
TOOLS.append(AGENT_TOOL)
TOOL_HANDLERS["agent"] = agent
CALL_SUBJECT["agent"] = "description"
SAFE_TOOLS.add("agent")



# ======================================================================
# COMPACTION                                                  (new in s08)
# ======================================================================

# The context's size is counted in tokens, from what the API said it used (never a tokenizer of
# our own). The two thresholds are flags, --clear-at and --compact-at: they belong to the model's
# context window, not to a project's settings.json.
CLEAR_AT = 100_000  # tokens: past this, old tool results are cleared (layer 1)
COMPACT_AT = 160_000  # tokens: past this, the history is summarised (layer 2)
KEEP = 3  # the newest tool results are never cleared
# Results that hold the user's decisions, the model's own plan, or the answer a subagent worked
# for (s07: all that is left of its context): never cleared.
CLEAR_EXEMPT = {"todo_write", "enter_plan_mode", "exit_plan_mode", "ask_user_question", "agent"}
CHARS_PER_TOKEN = 4  # the estimate for what the history gained since the last reply's usage
CLEARED = "[Cleared to save context: "  # how a cleared result's one line starts
SUMMARY_INSTRUCTION = (
    "The context is nearly full, so this conversation will be replaced by your summary of it. "
    "Write that summary now, as text, and call no tool. It is all you will have of the "
    "conversation, so keep: the user's requests, in their words where it matters; what you did "
    "and found (files, commands, results, errors and how they were fixed); the decisions made "
    "and why; the work still to do, and the very next step."
)
SUMMARY_INTRO = ("This conversation was compacted: the summary below replaces what came before. "
                 "Go on from where it leaves off.")
HOOK_EVENTS += ("PreCompact",)  # s04's hooks: run before a summary, they may add instructions


def call_with_room(session):
    """The loop's model call, with room made first. If the API still says the conversation is
    too long (an error, or a reply cut off at the end of the context window), the history is
    summarised once, and the call tried again; the cut-off reply is not kept."""
    make_room(session)
    request = build_request(session)
    try:
        response = call_model(session, request)
    except anthropic.APIStatusError as error:
        if not is_too_long(error) or session.summarised:
            raise
        response = None
    if response is None or (response.stop_reason == "model_context_window_exceeded"
                            and not session.summarised):
        try:
            summarise(session, "auto", why="The API says the conversation is too long")
        except TurnStopped as stopped:  # no summary, and too long: the prompt goes (s01)
            raise TurnStopped(str(stopped), forget_prompt=True) from None
        request = build_request(session)
        response = call_model(session, request)  # the loop's call again: counted once
    measure(session, request, response)
    session.replies += 1
    return response


def make_room(session):
    """Layer 2 past --compact-at: summarise the history (once: a summary that leaves it over
    stops the turn). Else layer 1 past --clear-at: clear old tool results."""
    size = context_size(session)
    if size >= session.compact_at and not session.summarised:
        summarise(session, "auto", why=f"Context over --compact-at {session.compact_at:,}")
        size = context_size(session)
    if size >= session.compact_at:  # summarising again would give the same summary, and again
        raise TurnStopped(f"[The context is still ~{size:,} tokens after a summary, over "
                          f"--compact-at {session.compact_at:,}: summarising again would not "
                          "help. /clear starts a new conversation.]")
    if size >= session.clear_at:
        cleared, chars = clear_old_results(session.messages)
        if cleared:
            show(f"[Context over --clear-at {session.clear_at:,}: cleared {cleared} old tool "
                 f"result{'s' if cleared > 1 else ''} ({chars:,} characters); "
                 f"~{size:,} tokens before, ~{context_size(session):,} after.]", session.indent)


def context_size(session):
    """The context in tokens: the last reply's usage (its input, read from and written to the
    cache, and its output), plus CHARS_PER_TOKEN characters a token for what the request gained
    since (or lost, when results were cleared). Before any reply, and after a summary, it is
    all that estimate."""
    tokens, chars = session.measured or (0, 0)
    return max(0, tokens + (request_chars(build_request(session)) - chars) // CHARS_PER_TOKEN)


def clear_old_results(messages, keep=KEEP):
    """Layer 1: the content of every tool_result but the newest `keep`, of a tool not exempt,
    becomes one line: the tool, what it acted on, how many characters went. The tool_use blocks
    and every id stay, so each pair stays valid. Returns (results cleared, characters cleared)."""
    calls = {block["id"]: block for message in messages if message["role"] == "assistant"
             for block in blocks_of(message) if block.get("type") == "tool_use"}
    results = [block for message in messages if message["role"] == "user"
               for block in blocks_of(message) if block.get("type") == "tool_result"]
    cleared = chars = 0
    for result in results[:max(0, len(results) - keep)]:
        call = calls.get(result.get("tool_use_id"))
        if call is None or call["name"] in CLEAR_EXEMPT or cleared_already(result):
            continue
        size = content_chars(result.get("content", ""))
        line = cleared_line(call, size)
        if size > len(line):  # a result shorter than its line stays as it is
            result["content"] = line
            cleared, chars = cleared + 1, chars + size
    return cleared, chars


def summarise(session, trigger, focus="", why="/compact"):
    """Layer 2: the model summarises the history, and a new history starts from the summary.

    The summary request is the same system prompt, tools and history, with the instruction as
    the last user message: the cached prefix is the same. PreCompact hooks run first ("auto"
    or "manual"); what they add joins the instruction, and a block stops the summary. Until
    a summary has come, the history is not touched: an error, Ctrl-C, or a reply that did not
    end well with text (a refusal, max_tokens, tool calls) leaves it whole, with one line.
    """
    hooked = run_hooks(session, "PreCompact", trigger=trigger, custom_instructions=focus)
    if hooked["decision"] == "block":
        raise TurnStopped(f"[A PreCompact hook blocked the summary: {hooked['reason']}]")
    instruction = SUMMARY_INSTRUCTION
    if focus:
        instruction += f"\nThe user asks the summary to keep in particular: {focus}"
    if hooked["context"]:
        instruction += "\n" + hook_text("PreCompact", hooked["context"])
    before = context_size(session)
    try:
        response = summary_call(session, trigger, instruction)
    except anthropic.APIStatusError as error:  # too long even to summarise: clear, then once more
        if not (is_too_long(error) and clear_old_results(session.messages)[0]):
            raise
        response = summary_call(session, trigger, instruction)
    summary = summary_text(response)
    problem = summary_problem(response, summary)  # only a reply that ended well, with text
    if problem:  # a refusal or an overflow takes the turn's prompt back, as in s01
        raise TurnStopped(f"[No summary: {problem}. The history stays as it was.]",
                          forget_prompt=response.stop_reason in FORGET_PROMPT)
    session.messages[:] = compacted_history(session, summary)
    session.measured, session.summarised = None, True
    session.compactions += 1
    show(f"[{why}: the history is summarised; ~{before:,} tokens before, "
         f"~{context_size(session):,} after.]", session.indent)  # a subagent's, under its call


def compacted_history(session, summary):
    """The new history: one user turn with AGENTS.md, the summary, the todo list, plan mode if
    it is on, the plan the user approved, the user's last prompt, the skills' catalog and the
    skills used. No tool_result, so none without its tool_use. The summary, the todos and the
    plan are the model's words, quoted: a </summary> or a </reminder> in them stays text."""
    texts = [f"{SUMMARY_INTRO}\n\n<summary>\n{quoted(summary)}\n</summary>"]
    if session.todos:  # as todo_write takes it (quoted), so that the model can send it back
        items = quoted("\n".join(json.dumps(item, ensure_ascii=False) for item in session.todos))
        texts.append(f"<reminder>Your todo list, as it stands:\n{items}</reminder>")
    if session.plan_mode and not session.subagent:  # a subagent never had these instructions
        texts.append(PLAN_MODE_ENTERED)
    texts += plan_texts(session)
    if session.prompt:
        texts.append(f"The user's last prompt, which the work is for:\n\n{session.prompt}")
    # AGENTS.md read again from disk: an edit made since the conversation began is in it
    return [{"role": "user", "content": memory_blocks(session) + [
        {"type": "text", "text": encodable(text)} for text in texts]
        + catalog_blocks(session) + reattached_skills(session)}]


def command_context(session, argument):
    """/context shows the context's size, the thresholds, and what the history holds."""
    size = context_size(session)
    request = request_chars(build_request(session))
    if session.measured:
        tokens, chars = session.measured
        how = (f"{tokens:,} from the last reply's usage, {size - tokens:+,} estimated for the "
               f"{request - chars:+,} characters since, at {CHARS_PER_TOKEN} a token")
    else:
        how = (f"estimated: {request:,} characters of system prompt, tools and history, "
               f"at {CHARS_PER_TOKEN} a token")
    show(f"context: ~{size:,} tokens ({how})")
    show(f"clears old tool results at {session.clear_at:,} tokens (--clear-at), "
         f"summarises at {session.compact_at:,} (--compact-at)")
    show(f"history: {history_counts(session.messages)}; "
         f"summarised {session.compactions} time{'s' if session.compactions != 1 else ''}")


def command_compact(session, argument):
    """/compact [focus] summarises the history now; the focus says what it must keep."""
    if not session.messages:
        show("(nothing to compact: the history is empty)")
        return
    try:
        summarise(session, "manual", argument)
    except TurnStopped as stopped:
        show(str(stopped))
    except anthropic.AnthropicError as error:
        show(f"API error: {describe_api_error(error)} The history stays as it was.")
    except KeyboardInterrupt:
        show("[Interrupted: the history stays as it was.]")


# ======================================================================
# MEMORY                                                      (new in s09)
# ======================================================================

# What the agent knows before the first prompt: the AGENTS.md files on the way from the
# project's root down to the workdir, and the user's own. The harness reads them, not the
# model; they reach it as the first block of the conversation's first user message, each
# file's text marked with its path. The system prompt does not change, so the cached prefix
# (tools, then system) is the same with them as without them.
MEMORY_FILE = "AGENTS.md"
MEMORY_LIMIT = 32_000  # bytes of one file; a larger one is refused with one line
MEMORY_INTRO = (
    "The harness read these AGENTS.md files before the conversation: the user's own, then the "
    "project's, from its root down to the working directory. They hold the user's and the "
    "project's standing instructions: follow them. Where two disagree, the later file wins. "
    "The user's requests in this conversation come after them, and win over them."
)
# Whoever writes AGENTS.md steers every later session, as settings.json does (s03): a change
# to it asks in every mode, by a file tool or by bash.
POWER_FILES["agents.md"] = "every later session reads it as its instructions"


def memory_paths(session):
    """The files to read, in order, each with the folder it must stay inside: the user's own
    ~/.agent/AGENTS.md (offline, HOME is the workdir), then an AGENTS.md in each folder from
    the project root (the nearest folder at or above the workdir that holds .git; with none,
    the workdir) down to the workdir. Nothing above the root, nothing below the workdir."""
    home = session.tool_environment.get("HOME") or os.path.expanduser("~")
    paths = []
    if home != "~":  # a HOME that cannot be found: no user's file
        own = Path(home).resolve() / ".agent"
        paths.append((own / MEMORY_FILE, own))
    root = project_root(session.workdir)
    parts = session.workdir.relative_to(root).parts
    for depth in range(len(parts) + 1):  # the root first, the workdir last
        paths.append((root.joinpath(*parts[:depth], MEMORY_FILE), root))
    return paths


def memory_blocks(session):
    """The memory's block for the first user message of a conversation, read from disk now:
    [] when there is no file. Called when a conversation starts (the first prompt, after /clear),
    after a summary and for a subagent, so that an edit shows at the next of them. A file's
    text is quoted as the summary is (s08), its path as an attribute's value (html.escape: "
    and > too): a </file> in a file, or a " in a folder's name, closes nothing."""
    files = read_memory(session)  # one line on the screen for each file it refuses
    session.memory = [(path, len(text.encode())) for path, text in files]
    if not files:
        return []
    marked = [f'<file path="{html.escape(str(path))}">\n{quoted(text.rstrip(chr(10)))}\n</file>'
              for path, text in files]
    return [{"type": "text", "text": encodable("\n\n".join([MEMORY_INTRO, *marked]))}]


def command_memory(session, argument):
    """/memory lists the AGENTS.md files the conversation was given, and their sizes."""
    files = session.memory if session.messages else [(path, len(text.encode()))
                                                     for path, text in read_memory(session)]
    when = "this conversation has" if session.messages else "the next prompt will send"
    if not files:
        show(f"memory: no {MEMORY_FILE} ({when} none); /remember TEXT starts one in the workdir")
    for path, size in files:
        show(f"memory: {path} ({size:,} bytes) ({when} it)")
    show("(read again from disk at a new conversation, after a summary, and by a subagent)")


def command_remember(session, argument):
    """/remember TEXT adds TEXT as a line to the workdir's AGENTS.md; the next prompt has it."""
    if not argument:
        show(f"/remember needs the line to add to {MEMORY_FILE}: /remember Run the tests first.")
        return
    line = " ".join(argument.split())  # one line, whatever was typed
    try:
        path = append_memory_line(session, line)
    except (OwnFileError, OSError, ToolError) as error:
        show(f"[Not remembered: {error}]")
        return
    if session.messages:  # this conversation's first message has the file as it was: say it now
        session.notes.append(f"<memory>The user added a line to {path}: {line}</memory>")
    show(f"[Added to {path}: the next prompt has it.]")


# ======================================================================
# SKILLS                                                      (new in s10)
# ======================================================================

# Know-how the model loads when a task needs it. A skill is a folder with a SKILL.md:
# frontmatter between --- lines (name, description, disable-model-invocation), then the body,
# the instructions. Each request carries the catalog, one line a skill: its name and
# description. A body enters the conversation only when the skill is used, by the model (the
# skill tool) or by the user (/NAME ARGS). The catalog is a block of the conversation's first
# user message, after the prompt: the system prompt and the tools stay as they are, so the
# cached prefix does too, and a skill added during a conversation is listed in the next one.
SKILLS_FOLDER = ".agent/skills"  # in HOME (the user's own), and in the workdir (the project's)
SKILL_FILE = "SKILL.md"
SKILL_LIMIT = 32_000  # bytes of one SKILL.md; a larger one is refused with one line
DESCRIPTION_LIMIT = 250  # characters of a description in the catalog
FILLED_LIMIT = 2 * SKILL_LIMIT  # characters of a body with its arguments: more is refused
REATTACH_LIMIT = 5_000 * CHARS_PER_TOKEN  # characters of one body brought back after a summary
REATTACH_BUDGET = 25_000 * CHARS_PER_TOKEN  # characters of all of them, the newest used first
CATALOG_INTRO = (
    "The skills below are instructions for particular tasks, kept out of the conversation "
    "until they are used. When a task fits a skill's description, call the skill tool with its "
    "name before you start, and follow the instructions it returns."
)
REATTACH_INTRO = "A skill used before the summary, as it was loaded; it still applies:"

SKILL_TOOL = {
    "name": "skill",
    "description": ("Load a skill: its instructions come back as the result, to follow. The "
                    "skills, and what each is for, are listed in the conversation."),
    "input_schema": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The skill's name, as listed."},
            "arguments": {"type": "string",
                          "description": "What the skill should work on, if it takes that."},
        },
        "required": ["name"],
    },
}


def catalog_blocks(session):
    """The catalog for the first user message: each skill the model may use, its name and its
    description cut at DESCRIPTION_LIMIT, quoted as memory is (a </skills> in it closes
    nothing); [] when there is none. Never a body."""
    lines = [f"- {found['name']}: {quoted(one_line(found['description'], DESCRIPTION_LIMIT))}"
             for found in find_skills(session).values() if not found["user_only"]]
    if not lines:
        return []
    return [{"type": "text", "text": encodable("\n".join(
        ["<skills>", CATALOG_INTRO, *lines, "</skills>"]))}]


def skill(session, name, arguments=""):
    """The tool: the skill's body, frontmatter removed, $ARGUMENTS filled in. An unknown name,
    or one only the user may start, is an error that lists the skills the model may use."""
    skills = find_skills(session)
    usable = [found for found in skills if not skills[found]["user_only"]]
    listed = f"The skills you may use: {', '.join(usable)}." if usable else "There are none."
    if name not in skills:
        raise ToolError(f"There is no skill named {name!r}. {listed}")
    if skills[name]["user_only"]:
        raise ToolError(f"{name} is a skill only the user may start (/{name}). {listed}")
    if in_conversation(session, name) and (not arguments or session.skills[name] == fill_arguments(
            skills[name]["body"], arguments)):  # sent once
        return f"The skill {name} is in this conversation already, above: follow it."
    text = fill_arguments(skills[name]["body"], arguments)
    session.skills[name] = text  # what the history holds of it, for a summary to bring back
    return text


def skill_prompt(session, line):
    """/NAME ARGS: the prompt it sends, the skill's body with ARGS filled in; None when NAME
    is no skill, "" when the text would be too long (one line says so)."""
    name, _, arguments = line[1:].partition(" ")
    found = find_skills(session).get(name)
    if found is None:
        return None
    try:
        text = fill_arguments(found["body"], arguments.strip())
    except ToolError as error:
        show(f"[/{name} is not started. {error}]")
        return ""
    session.skills[name] = text
    return text


def in_conversation(session, name):
    """True if the text the skill sent is in the history, as sent or as a summary brought it
    back (quoted): loaded, and not forgotten since (a /clear, a summary that had no room for
    it, a turn taken back)."""
    text = session.skills.get(name)
    forms = () if text is None else (text, quoted(text))
    return any(form in block_text(block) for message in session.messages
               for block in blocks_of(message) for form in forms)


def reattached_skills(session):
    """After a summary: a block for each skill the conversation used, the newest first, each
    cut at REATTACH_LIMIT and quoted (its arguments too), while REATTACH_BUDGET lasts. A skill
    left out, or cut, is loaded whole again at its next use."""
    blocks, room, kept = [], REATTACH_BUDGET, {}
    for name in reversed([name for name in session.skills if in_conversation(session, name)]):
        text = session.skills[name]
        body = quoted(text[:REATTACH_LIMIT])
        if len(body) > room:
            continue
        room -= len(body)
        if len(text) <= REATTACH_LIMIT:
            kept[name] = text
        else:
            body += f"\n[... {len(text) - REATTACH_LIMIT:,} more characters: use the skill again]"
        blocks.insert(0, {"type": "text", "text": encodable(
            f'{REATTACH_INTRO}\n\n<skill name="{name}">\n{body}\n</skill>')})
    session.skills = {name: kept[name] for name in session.skills if name in kept}
    return blocks


def command_skills(session, argument):
    """/skills lists the skills, who may start each, and its file; /NAME ARGS starts one."""
    skills = find_skills(session)
    if not skills:
        show(f"skills: none ({SKILLS_FOLDER}/NAME/{SKILL_FILE} in the workdir or in HOME adds one)")
    for name, found in skills.items():
        who = "only you: /" + name if found["user_only"] else "the model, or you: /" + name
        loaded = "; in this conversation" if in_conversation(session, name) else ""
        show(f"{name} ({who}{loaded}): {one_line(found['description'], DESCRIPTION_LIMIT)}")
        show(f"  {found['path']}")


# The skill tool joins the others. It only reads the instructions it sends, so it runs without
# asking. A subagent has no catalog: it is not offered the tool. A body is never cleared to
# save context (s08): the model was told it is there. And whoever writes a SKILL.md writes
# instructions the model will obey: a change asks in every mode, as AGENTS.md does.
TOOLS.append(SKILL_TOOL)
TOOL_HANDLERS["skill"] = skill
CALL_SUBJECT["skill"] = "name"
SAFE_TOOLS.add("skill")
SUBAGENT_HIDDEN.add("skill")
CLEAR_EXEMPT.add("skill")
POWER_FILES["skill.md"] = "the model follows it as instructions when the skill is used"


# ======================================================================
# THE HARNESS: what keeps it safe and runnable (skip on a first read)
# ======================================================================
# Above is the idea. Below is what makes it hold: running bash safely, tool
# results, calling the model and its errors, what only the live API needs (LIVE
# ONLY: its retries, usage and block types), the session and the screen, the
# scripted model that plays when there is no key, and the command line.


# ======================================================================
# THE PERMISSION MECHANICS                                    (new in s03)
# ======================================================================
# How the checks of PERMISSIONS are made: plain chains parsed and walked against
# READ_ONLY, paths and symlinks, rules matched through wrappers, the files that give
# power, and the question's screen.

PLAIN = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_./=,:+@%'\";|&")
CHAIN = {"&&", "||", ";", "|"}  # the operators a plain chain may use
WORD_LIMIT = 200  # words of one read-only command: a longer one asks (each path is resolved)


def plain_commands(command):
    """The commands of a plain chain, each a list of words as the shell reads them, or None.

    Plain: every character in PLAIN, quotes that close and hold no ; | &, and only the
    operators in CHAIN between commands. So nothing is left for the shell to expand,
    redirect, substitute, or run in the background: * ? [ ] { } ~ $ \\ ` < > ( ) ! #,
    a lone &, a newline, a tab, any other control or non-ASCII character all say None.
    """
    if any(character not in PLAIN for character in command):
        return None
    pieces = re.findall(r"'[^']*'|\"[^\"]*\"|[;|&]+|[^'\";|&]+", command)
    if "".join(pieces) != command or any(p[0] in "'\"" and re.search("[;|&]", p) for p in pieces):
        return None  # an unbalanced quote, or an operator inside quotes
    commands, words = [], ""
    for piece in pieces + [";"]:
        if piece[0] not in ";|&":
            words += piece
            continue
        if piece not in CHAIN or not words.strip():
            return None  # a lone &, ;;, |&, or an operator with no command before it
        commands.append(shlex.split(words))  # plain: no backslash, no #, quotes that close
        words = ""
    return commands


def reads_inside(words, workdir):
    """One command of READ_ONLY with listed options only, and every path inside the workdir."""
    options = READ_ONLY.get(words[0])
    if options is None or len(words) > WORD_LIMIT:
        return False
    parsed = parse_options(words[1:], options)
    if parsed is None:
        return False
    given, arguments = parsed
    names = {name for name, _ in given}
    paths = [value for name, value in given if options[name] == PATH]
    if words[0] == "echo":
        arguments = []  # words to print, not paths
    elif words[0] == "grep" and not names & {"-e", "-f", "--regexp", "--file"}:
        arguments = arguments[1:]  # the first is the pattern
    into_folders = words[0] == "diff" or (words[0] == "grep" and "-r" in names)
    if words[0] == "grep" and into_folders and not arguments:
        arguments = ["."]  # grep -r with no file reads the whole working directory
    if any(argument.startswith("+") for argument in arguments):
        return False
    return all(path_inside(workdir, path, into_folders) for path in paths + arguments)


def parse_options(words, options):
    """The words after a program, read with its options: ([(option, its value or None)], the
    other arguments), or None for an option not listed, a flag given a value, or an option
    without its value. A value is glued ("-n5", "--lines=5") or the next word."""
    given, arguments, ended = [], [], False
    words = list(words)
    while words:
        word = words.pop(0)
        if ended or word == "-" or not word.startswith("-"):
            arguments.append(word)
        elif word == "--":
            ended = True
        elif word.startswith("--"):
            name, glued, value = word.partition("=")
            kind = options.get(name)
            if kind is None or (kind == FLAG and glued) or (kind != FLAG and not glued
                                                             and not words):
                return None
            given.append((name, None if kind == FLAG else value if glued else words.pop(0)))
        else:
            for place, letter in enumerate(word[1:], 1):
                kind = options.get(f"-{letter}")
                if kind is None:
                    return None
                if kind == FLAG:
                    given.append((f"-{letter}", None))
                    continue
                value = word[place + 1:]  # the rest of the word is its value, or the next word
                if not value and not words:
                    return None
                given.append((f"-{letter}", value or words.pop(0)))
                break
    return given, arguments


def path_inside(workdir, path, into_folders=False):
    """A relative path with no `..`, inside the workdir when its symlinks are followed, that
    reads only what it names (unlinked): no symlink on the way, no second hard link."""
    if path == "-":  # standard input
        return True
    if path.startswith("/"):
        return False
    try:
        resolve_path(workdir, path)
    except ToolError:
        return False
    return unlinked(Path(workdir).resolve(), path, into_folders)


FOLDER_LIMIT = 1000  # names a read-only command may open inside the folders it is given


def unlinked(root, path, into_folders=False):
    """Does reading this path (relative to root) open only files inside root, each known by
    this name alone? No symlink on the way (a link made earlier leads anywhere), no file with
    a second hard link (the same file outside, by another name), no pipe or device. A folder a
    program reads into (into_folders) must hold only such files, and no secret, FOLDER_LIMIT
    names at most. A path that does not exist reads nothing."""
    here = root
    for part in Path(path).parts:
        here = here / part
        if here.is_symlink():
            return False
    if not os.path.lexists(here):
        return True
    waiting, count = [here], 0
    while waiting:
        current = waiting.pop()
        try:
            status = current.lstat()
            if stat.S_ISDIR(status.st_mode) and (into_folders or current == here):
                names = [] if current == here and not into_folders else os.listdir(current)
                count += len(names)
                waiting += [current / name for name in names]
                continue
        except OSError:
            return False
        if count > FOLDER_LIMIT or not stat.S_ISREG(status.st_mode) or status.st_nlink > 1:
            return False
        if current != here and secret_name(current.relative_to(root).as_posix()):
            return False  # a secret the command does not name (one it names asks anyway)
    return count <= FOLDER_LIMIT


def secret_name(path):
    """The part of this path that names a file holding keys (SECRET_FILES), or None."""
    for part in path.lower().split("/"):
        if any(fnmatch.fnmatchcase(part, pattern) for pattern in SECRET_FILES):
            return part
    return None


def call_subject(session, name, tool_input):
    """What a rule's pattern is matched against: the command, the pattern, the
    path as the tool will touch it (relative to the workdir), or ""."""
    field_name = CALL_SUBJECT.get(name)
    subject = tool_input.get(field_name, "") if field_name else ""
    if field_name == "path" and subject:  # "/abs/workdir/.env", "./.env" and ".env" are one file
        try:
            return workdir_relative(session.workdir, resolve_path(session.workdir, subject))
        except ToolError:
            return os.path.normpath(subject)  # the tool itself will refuse this path
    return subject


def is_chain(command):
    """Not one plain command (a chain, a redirection, a glob, a $): no allow rule covers it,
    and the question offers no [a]."""
    commands = plain_commands(command)
    return commands is None or len(commands) != 1


# Commands that run the command that follows their own options: a deny or ask rule sees it.
WRAPPERS = {"command", "env", "exec", "nice", "nohup", "time", "timeout", "xargs", "find",
            "sh", "bash", "sudo", "busybox", "setsid", "stdbuf", "ionice"}
# Words after a wrapper tried as the start of the command it runs, and commands tried in one
# part of a chain: a part longer than this is seen only so far.
WRAPPED_LIMIT = 100


def command_spellings(command, depth=0):
    """What a deny or ask rule is matched against, for one command: the whole of it, and each
    part of a chain as written and as the shell reads it (quotes and backslashes removed,
    FOO=1 and a path before the program dropped), and what each wrapper runs ("timeout 5 rm
    x" holds "rm x"; "sh -c 'rm x'" too). "find -delete" reads as rm."""
    subjects = {command}
    for part in re.split(r"&&|\|\||[;|&\n]", command):
        try:
            words = shlex.split(part)
        except ValueError:  # an unbalanced quote
            words = part.split()
        subjects.add(part.strip())
        subjects.update(wrapped(words))
        if depth < 2:  # sh -c 'rm x', env -S 'rm x': a command in one word
            for word in words[1:WRAPPED_LIMIT]:
                if " " in word:
                    subjects.update(command_spellings(word, depth + 1))
    return subjects


def wrapped(words):
    """The commands these words run: themselves, and the command after each wrapper's own
    words, tried from each of the WRAPPED_LIMIT words that follow it."""
    found, starts, seen = [], [0], set()
    while starts and len(seen) < WRAPPED_LIMIT:
        start = starts.pop()
        if start in seen:
            continue
        seen.add(start)
        while start < len(words) and re.fullmatch(r"[A-Za-z_]\w*=.*", words[start], re.DOTALL):
            start += 1  # FOO=1 rm x runs rm
        if start == len(words):
            continue
        program = words[start].rsplit("/", 1)[-1]  # /bin/rm is rm
        found.append(" ".join([program, *words[start + 1:]]))
        if program == "find" and "-delete" in words[start:]:
            found.append(" ".join(["rm", *words[start + 1:]]))
        if program in WRAPPERS:
            starts += range(min(len(words), start + WRAPPED_LIMIT) - 1, start, -1)
    return found


def matching_rule(session, decision, name, tool_input):
    """The first of the settings' `decision` rules that covers this call, or None.

    For bash, deny and ask rules are matched against every spelling command_spellings finds
    (so "bash(rm*)" catches "ls; rm x", "\\rm x", "env A=1 rm x" and "find . -delete"),
    while an allow rule covers one plain command only: a chain, a redirection or a glob
    never slips through "bash(git status*)".
    """
    rules = session.settings.get("permissions", {}).get(decision, [])
    subject = call_subject(session, name, tool_input)
    subjects, paths = [subject], set()
    if name == "bash":
        if decision == "allow" and is_chain(subject):
            return None
        if decision != "allow":
            subjects = command_spellings(subject)
            paths = named_paths(session.workdir, subjects)
    for rule in rules:
        tool, pattern = parse_rule(rule)
        if tool == name and (pattern is None
                             or any(fnmatch.fnmatchcase(s, pattern) for s in subjects)):
            return rule
        # a rule on a file means the file, whatever reads it: "cat .env" meets "read_file(.env)"
        if tool in EDIT_TOOLS | {"read_file"} and pattern and any(
                reaches(path, pattern) for path in paths):
            return rule
    return None


def named_paths(workdir, subjects):
    """Every word of these commands as a path relative to the workdir (./a, a/, and the
    workdir's absolute a are all "a"), the value after each "=" (--file=a, of=a), and the
    values glued to short options (glued_values: -ro.git is o.git or .git). Each with "" if it
    is named for sure, or the reading it is one of two of: {".git": "-ro.git means -ro .git"}."""
    root, paths = Path(workdir).resolve(), {}
    for subject in subjects:
        try:
            words = shlex.split(subject)
        except ValueError:  # an unbalanced quote
            words = subject.split()
        values = [each.rpartition("=")[2] for each in words if "=" in each]
        options = READ_ONLY.get(words[0], {}) if words else {}
        named = [(word, "") for word in words + values]
        for each in words:
            found = glued_values(each, options)
            named += [(value, f"{each} means {each[:-len(value)]} {value}" if found[1:] else "")
                      for value in found]
        for word, reading in named:
            path = os.path.normpath(word) if word else "."
            if os.path.isabs(path) and Path(path).is_relative_to(root):
                path = Path(path).relative_to(root).as_posix() or "."
            paths[path] = paths.get(path, reading) and reading  # once for sure, for sure
    return paths


def glued_values(word, options):
    """The values a cluster of short options may have glued to it. Which letter takes the rest
    is the program's to say: so the rest after the first letter `options` does not list as a
    flag, and after the last such letter, up to one it lists as taking a value (sort
    -ro.wgetrc writes .wgetrc: -r is a flag). A tail between starts with a letter, as the first
    does: never a dot name."""
    run, may = re.match(r"-[^\W_]+", word), []  # the places of the letters that may take it
    for place in range(1, run.end() if run else 1):
        kind = options.get(f"-{word[place]}")
        if kind != FLAG:
            may.append(place)
        if kind in (VALUE, PATH):
            break
    return [word[place + 1:] for place in {*may[:1], *may[-1:]} if word[place + 1:]]


def reaches(path, pattern):
    """Does reading `path` reach a file `pattern` matches? It is that file, or a folder on the
    way to it ("secrets" and "." reach "secrets/*": grep -r reads what is inside)."""
    parts = pattern.split("/")
    return path == "." or any(fnmatch.fnmatchcase(path, "/".join(parts[:end]))
                              for end in range(1, len(parts) + 1))


def changes_power_file(session, name, tool_input):
    """Would this call change a file that gives power? (file, why), or None.

    By rule (runs_at_start): a name that starts with a dot at the top of HOME, and the
    folders of the harness's own code; by list: POWER_FILES, matched against each part.
    write_file and edit_file: the path as the tool would resolve it, symlinks followed.
    bash: a command that is not read-only and names one of them, with quotes and
    backslashes removed, alone or glued to short options (-o.git, -roAGENTS.md, -ro.wgetrc:
    glued_values), or in which the shell may make up such a name (made_up_name). A name that
    is one reading of a cluster says so, .git too: gcc -ofoo.o changes ".o if -ofoo.o means
    -ofoo .o". A sure name, from either list, goes before a guessed one.
    """
    if name in EDIT_TOOLS:
        try:
            target = resolve_path(session.workdir, tool_input["path"])
        except ToolError:
            return None  # the tool itself will refuse this path
        relative = workdir_relative(session.workdir, target)
        for key in (relative.lower(), *relative.lower().split("/")):  # .GIT is .git on macOS
            if key in POWER_FILES:
                return relative, POWER_FILES[key]
        why = runs_at_start(session, target)
        return (relative, why) if why else None
    if name == "bash" and not is_read_only(tool_input["command"], session.workdir):
        command = tool_input["command"]
        bare = re.sub(r"['\"\\]", "", command)
        paths, said, found = named_paths(session.workdir, command_spellings(command)), {}, []
        for path, reading in paths.items():  # a key is sure if one path names it for sure
            for key in {path.lower(), *path.lower().split("/")} & POWER_FILES.keys():
                said[key] = said.get(key, reading) and reading
        for key, why in POWER_FILES.items():  # glued to clusters only: a guess, read as paths
            glued = list(re.finditer(rf"(?<![\w.-])(-[^\W_]+?)?({re.escape(key)})(?![\w.-])",
                                     bare, re.IGNORECASE))
            if glued:
                guess = f"{glued[0][0]} means {glued[0][1]} {glued[0][2]}"
                found.append((all(each[1] for each in glued) and said.get(key, guess) or "",
                              key, why))
        for path in sorted(paths):
            home = session.tool_environment.get("HOME") or os.environ.get("HOME") or "/"
            full = Path(home, path[2:]) if path.startswith("~/") else Path(session.workdir, path)
            why = runs_at_start(session, Path(os.path.normpath(full.absolute())))
            if why:
                found.append((paths[path], path, why))
        if found:  # the first sure one, else the first guess
            reading, name, why = min(found, key=lambda each: bool(each[0]))
            return name + (reading and f" if {reading} (not all its letters are known here)"), why
        if made_up_name(bare):
            return ("a file the shell names for it",
                    "with $, ` or a glob, it may be .git, .env or another file that gives power")
    return None


def runs_at_start(session, target):
    """Why a file at this absolute path may run code at a next start, or None. A list of the
    start-up files lost: .lesskey, .curlrc, .wgetrc, .gdbinit were missing, and the next tool
    adds one. So every dot name at the top of HOME (offline, the workdir), and every file in
    the folders that hold the harness's code and the modules it has imported (its own folder:
    a new readline.py there runs at the next start)."""
    home = session.tool_environment.get("HOME") or os.environ.get("HOME")
    if home and target.is_relative_to(Path(home).resolve()) and target != Path(home).resolve():
        if target.relative_to(Path(home).resolve()).parts[0].startswith("."):
            return "a program may read a dot file at the top of HOME when it starts"
    # Compared as text: a long command names hundreds of paths, each tried in each of hundreds
    # of folders, and pathlib's is_relative_to would take seconds for that.
    text = str(target)
    for folder in code_folders():
        if text == folder or text.startswith(folder.rstrip(os.sep) + os.sep):
            return "the harness runs the code in this folder when it starts"
    return None


def code_folders():
    """The folders (as text) that hold this harness's code and every module it has imported."""
    if not CODE_FOLDERS:  # found once: they do not move
        files = [getattr(module, "__file__", None) for name, module in list(sys.modules.items())
                 if name != "__main__"]
        files = [file for file in files if file]
        # each folder resolved once, not once per module in it (a test process imports 4,000),
        # and the real folder of a module file that is itself a symlink
        folders = {os.path.dirname(file) for file in files}
        links = [file for file in files if os.path.islink(file)]
        CODE_FOLDERS.extend({str(HERE), *(str(Path(folder).resolve()) for folder in folders),
                             *(str(Path(file).resolve().parent) for file in links)})
    return CODE_FOLDERS


CODE_FOLDERS = []


def made_up_name(text):
    """May the shell make up a name this text does not spell? With $ or `, with a glob on a
    name that starts with a dot (sh's * and ? never match a leading dot: "*.tmp" is safe),
    with a glob that may match a name of POWER_FILES without a dot (AGENT*, *.md), or a brace
    list ({a,b}). One pass over each word: no pattern backtracks."""
    if "$" in text or "`" in text:
        return True
    # the first part of each key: settings.json is reached through .agent, spelled or globbed
    names = {key.split("/")[0] for key in POWER_FILES if not key.startswith(".")}
    for word in re.split(r"[\s/;&|()<>]", text):
        dot, brace = re.search(r"(?:^|[=:])[.[]", word), re.search(r"(?:^|[=:])[{]", word)
        if dot and re.search(r"[][*?{}]", word[dot.end():]) or brace and "," in word[brace.end():]:
            return True
        glob = re.sub(r"\*+", "*", word.lower())
        if re.search(r"[][*?]", glob) and (len(glob) > GLOB_LIMIT or any(
                fnmatch.fnmatchcase(name, glob) for name in names)):
            return True
    return False


GLOB_LIMIT = 100  # characters of a glob judged against each name; a longer one may be any


SECRET_WHY = "a file that holds keys"


def reads_secret(session, name, tool_input):
    """The file holding keys (SECRET_FILES) that this call would read, or None: read_file's
    path as written and as resolved; any word of a bash command, or a value after "=".
    """
    if name == "read_file":
        try:
            resolved = resolve_path(session.workdir, tool_input["path"])
            target = workdir_relative(session.workdir, resolved)
        except ToolError:
            return None  # the tool itself will refuse this path
        return target if secret_name(target) or secret_name(tool_input["path"]) else None
    if name == "bash":
        root = Path(session.workdir).resolve()
        for path in sorted(named_paths(root, command_spellings(tool_input["command"]))):
            # a link named here opens the file it leads to: notes.txt -> .env reads .env
            real = Path(os.path.realpath(root / path))
            opened = workdir_relative(root, real) if real.is_relative_to(root) else str(real)
            if secret_name(path):
                return path
            if secret_name(opened):
                return f"{path} (a link to {opened})"
    return None


def asks_in_every_mode(session, name, tool_input):
    """Why this call asks in every mode, whatever the rules allow, or None: "changes .git:
    ..." (a file that gives power), or "reads .env: ..." (a file that holds keys). A command
    that reads a file that holds keys, and only reads once its quotes and backslashes are
    taken away ("cat .e\\nv" is "cat .env"), reads it: it changes nothing."""
    power = changes_power_file(session, name, tool_input)
    secret = reads_secret(session, name, tool_input)
    if power and secret and name == "bash":
        bare = re.sub(r"['\"\\]", "", tool_input["command"])
        power = None if is_read_only(bare, session.workdir) else power
    if power:
        return f"changes {power[0]}: {power[1]}"
    return f"reads {secret}: {SECRET_WHY}" if secret else None


def reads_what_it_names(session, path):
    """read_file opens only the file it names: inside, no symlink on the way, one hard link."""
    try:
        resolve_path(session.workdir, path)
    except ToolError:
        return True  # the tool itself will refuse this path
    root = Path(session.workdir).resolve()
    written = Path(os.path.normpath(Path(session.workdir, path).absolute()))
    for base in (Path(session.workdir).absolute(), root):
        if written.is_relative_to(base):
            return unlinked(root, written.relative_to(base).as_posix())
    return False


ASK_LIMIT = 3  # answers that are not one of the choices before a question counts as no
PREVIEW_LINES = 6  # lines shown of a file's content or an edit's text in a question
PREVIEW_WIDTH = 200  # characters shown of one such line, or of another value
SUBJECT_LIMIT = 1000  # characters shown of what a call acts on (a longer command has no [a])
COMMAND_LINES = 20  # lines shown of a command of several


def read_answer(question, answers):
    """The user's answer: a value of `answers`, or "n" for no, empty, EOF or ASK_LIMIT
    answers that are none of these."""
    for _ in range(ASK_LIMIT):
        answer = read_line(question)
        if answer is None or answer.strip().lower() in ("", "n", "no"):
            return "n"
        if answer.strip().lower() in answers:
            return answers[answer.strip().lower()]
        show(f"Please answer {', '.join(answers)} or n.", 4)
    return "n"


def describe_call(block):
    """The whole call, for the question. First what the call acts on (the command, the
    path), whole up to SUBJECT_LIMIT characters; then every other field in the schema's order,
    whatever the order of the model's JSON: the content of a file or an edit as a preview, cut
    where it says so. All of it as printable_call() shows it: every CR, no run of blanks."""
    name, tool_input = block["name"], block["input"]
    if name == "bash" and "\n" in tool_input["command"].strip("\n"):
        command = tool_input["command"].strip("\n")
        count = command.count("\n") + 1
        lines, room = [f"bash: {count} lines, and every one of them runs:"], SUBJECT_LIMIT
        shown_lines = printable_call(command).split("\n")  # a run of blank lines is one
        for line in shown_lines[:COMMAND_LINES]:
            if room > 0:  # at most SUBJECT_LIMIT characters in all
                lines.append(f"  | {cut(line, room)}")
            room -= len(line)
        if len(lines) - 1 < len(shown_lines):
            lines.append(f"  … ({len(shown_lines) - len(lines) + 1} more lines, not shown)")
        return "\n".join(lines)
    subject = CALL_SUBJECT.get(name)
    lines = [name]
    if subject in tool_input:
        shown_subject = cut(printable_call(tool_input[subject]), SUBJECT_LIMIT)
        lines = [f"{name}: {shown_subject}".replace("\n", "\\n")]
    schema = next(tool["input_schema"] for tool in TOOLS if tool["name"] == name)
    for key in schema["properties"]:
        if key == subject or key not in tool_input:
            continue
        value = tool_input[key]
        if isinstance(value, str):
            lines.append(f"  {key}: ({len(value)} characters)")
            lines += preview_lines(value)
        else:
            lines.append(f"  {key}: {cut(printable(json.dumps(value)), PREVIEW_WIDTH)}")
    return "\n".join(lines)


def preview_lines(text):
    """The first PREVIEW_LINES lines of a text, each cut at PREVIEW_WIDTH, with what is left."""
    lines = printable_call(text.removesuffix("\n")).split("\n")
    shown_lines = [f"  | {cut(line, PREVIEW_WIDTH)}" for line in lines[:PREVIEW_LINES]]
    if len(lines) > PREVIEW_LINES:
        shown_lines.append(f"  … ({len(lines) - PREVIEW_LINES} more lines)")
    return shown_lines


def cut(text, limit):
    """The text, or its first `limit` characters and how many more there are."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def remember_rule(session, rule):
    """Add an allow rule to the settings file, keeping everything else in it.

    The session adopts this rule only: what else changed in the file since the start
    (someone else wrote it) is not loaded into the session, and the user is told.
    """
    parse_rule(rule)  # never write a rule that the next load_settings would refuse
    on_disk = load_settings(session.workdir)
    if on_disk != session.settings:
        show(f"note: {settings_path(session.workdir)} changed during this session; "
             "those changes are not used until the next start", 4)
    on_disk.setdefault("permissions", {}).setdefault("allow", []).append(rule)
    write_atomically(settings_path(session.workdir), json.dumps(on_disk, indent=2) + "\n")
    session.settings = copy.deepcopy(session.settings)
    session.settings.setdefault("permissions", {}).setdefault("allow", []).append(rule)


# ======================================================================
# THE PLAN AND QUESTION MECHANICS                             (new in s06)
# ======================================================================
# How PLAN MODE and ASKING THE USER do their work: the plan's file, the questions
# checked, shown and answered.

def new_session_id():
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def plan_file(session):
    safe_id = re.sub(r"[^A-Za-z0-9_-]", "_", session.session_id)[:100] or "session"
    return Path(session.workdir).resolve() / ".agent" / "plans" / f"plan-{safe_id}.md"


def newest_plan(workdir):
    """The newest plan file's name, for the banner (a link's own time: it may lead nowhere)."""
    plans = sorted((Path(workdir) / ".agent" / "plans").glob("plan-*.md"),
                   key=lambda path: path.lstat().st_mtime)
    return plans[-1] if plans else None


# The three replies: every question answered, some, none. Skipping is not a "no".
ANSWERED_ALL = ("User has answered your questions: {answers}. "
                "You can now continue with the user's answers in mind.")
ANSWERED_SOME = ("User has answered some of your questions: {answers}. They skipped "
                 "{skipped} of the {total}: use your own judgement for those, and do not "
                 "invent the user's preferences.")
ANSWERED_NONE = ("The user answered none of the questions: they skipped them. This is not a "
                 "rejection: go on with the task, using your own judgement for these "
                 "decisions. Do not invent the user's preferences; say which choices you "
                 "made yourself.")


def validate_questions(questions):
    """The questions, checked, or ToolError naming the question and the rule. Asks nothing."""
    if not isinstance(questions, list):
        raise ToolError(f"questions must be a list of 1 to {QUESTION_LIMIT} questions.")
    if not 1 <= len(questions) <= QUESTION_LIMIT:
        raise ToolError(f"Ask 1 to {QUESTION_LIMIT} questions at a time; "
                        f"this call has {len(questions)}.")
    for number, item in enumerate(questions, 1):
        check_fields(item, f"Question {number}", QUESTION_FIELDS)
        for key in ("question", "header"):
            if not isinstance(item[key], str) or not item[key].strip():
                raise ToolError(f"Question {number} needs a non-empty {key}.")
        if len(item["header"]) > HEADER_LIMIT:
            raise ToolError(f"The header of question {number} has {len(item['header'])} "
                            f"characters; a header has at most {HEADER_LIMIT}.")
        if not isinstance(item["multiSelect"], bool):
            raise ToolError(f"multiSelect of question {number} must be true or false.")
        options = item["options"]
        low, high = OPTION_LIMITS
        if not isinstance(options, list) or not low <= len(options) <= high:
            count = f"it has {len(options)}" if isinstance(options, list) else "not a list"
            raise ToolError(f"Question {number} needs a list of {low} to {high} options; {count}.")
        for place, option in enumerate(options, 1):
            check_fields(option, f"Option {place} of question {number}", OPTION_FIELDS)
            for key in OPTION_FIELDS:
                if not isinstance(option[key], str) or not option[key].strip():
                    raise ToolError(f"Option {place} of question {number} needs a non-empty {key}.")
        labels = [option["label"] for option in options]
        if len(set(labels)) < len(labels):
            raise ToolError(f"Two options of question {number} have the same label.")
    texts = [item["question"] for item in questions]
    if len(set(texts)) < len(texts):
        raise ToolError("Two questions are the same: ask each question once.")
    return questions


def check_fields(value, what, fields):
    """An object with exactly these fields, or ToolError."""
    if not isinstance(value, dict):
        raise ToolError(f"{what} must be an object with the fields {', '.join(fields)}.")
    for key in value:
        if key not in fields:
            raise ToolError(f"{what} has an unknown field {key!r}; "
                            f"the fields are {', '.join(fields)}.")
    for key in fields:
        if key not in value:
            raise ToolError(f"{what} needs the field {key!r}.")


def show_question(item, number, total):
    of = f" ({number} of {total})" if total > 1 else ""
    show(f"? [{item['header']}] {item['question']}{of}", 2)
    for place, option in enumerate(item["options"], 1):
        show(f"{place}. {option['label']}: {option['description']}", 6)


def read_choice(item):
    """The user's answer to one question: the labels chosen, their own words, or None when
    they skip it. EOFError at the end of input; Ctrl-C goes on up."""
    count = len(item["options"])
    if item["multiSelect"]:
        prompt = f"    numbers (e.g. 1,{count}), your own answer, or empty to skip: "
    else:
        prompt = f"    a number (1-{count}), your own answer, or empty to skip: "
    for _ in range(ASK_LIMIT):
        line = read_line(prompt)
        if line is None:
            raise EOFError
        answer, problem = parse_choice(item, line.strip())
        if not problem:
            return answer
        show(problem, 4)
    show("[No answer that fits: this question is skipped.]", 4)
    return None


def parse_choice(item, line):
    """(answer, problem): "2" is option 2, "1,3" options 1 and 3 (multiSelect only), other
    text the user's own answer, an empty line None."""
    if not line:
        return None, None
    if not re.fullmatch(r"\d+([\s,]+\d+)*", line):
        return line, None
    numbers = sorted({int(number) for number in re.split(r"[\s,]+", line)})
    count = len(item["options"])
    if not all(1 <= number <= count for number in numbers):
        return None, f"The options are numbered 1 to {count}."
    if len(numbers) > 1 and not item["multiSelect"]:
        return None, "This question takes one answer: type one number."
    return ", ".join(item["options"][number - 1]["label"] for number in numbers), None


def answers_text(questions, answers):
    """The reply the model gets: each answered question with its answer, as JSON strings."""
    if not answers:
        return ANSWERED_NONE
    pairs = ", ".join(f"{json.dumps(question, ensure_ascii=False)}="
                      f"{json.dumps(answer, ensure_ascii=False)}"
                      for question, answer in answers.items())
    if len(answers) == len(questions):
        return ANSWERED_ALL.format(answers=pairs)
    return ANSWERED_SOME.format(answers=pairs, skipped=len(questions) - len(answers),
                                total=len(questions))


# ======================================================================
# THE SUBAGENT MECHANICS                                      (new in s07)
# ======================================================================
# How SUBAGENTS does its work: the subagent's run and how each way it can end reaches the
# parent, its answer cut to its limit, and the trailer of what it spent.

CLOCK = time.monotonic  # the seconds of the trailer (tests set their own)


def run_subagent(session, child):
    """Run the child's loop: its answer and the trailer of what it spent, or ToolError saying
    how it ended without one (the trailer too). Ctrl-C goes on up, saying so. Whatever
    happens, its calls count in the parent's --max-calls, and an allow rule the user saved at
    its question stays saved."""
    who = f"The {child.subagent.label}"
    if child.max_calls < 1:
        raise ToolError(f"{who} did not start: this prompt has made all its model calls "
                        f"(--max-calls {session.max_calls}).")
    started, failed = CLOCK(), None
    try:
        answer = agent_loop(child)
        if not answer.strip():
            failed = f"{who} ended without a report."
    except anthropic.AnthropicError as error:
        failed = f"{who} failed: API error: {describe_api_error(error)}"
    except TurnStopped as stopped:
        failed = f"{who} stopped without an answer: {str(stopped).strip('[]')}"
    except KeyboardInterrupt:
        spent = trailer(child, CLOCK() - started)
        raise SubagentInterrupted(f"Interrupted by the user. {who} gave no answer.\n\n"
                                  f"{spent}") from None
    finally:
        session.calls += child.calls
        session.settings = child.settings  # a rule saved at the child's question
    spent = trailer(child, CLOCK() - started)
    if failed:
        if child.calls >= child.max_calls and child.max_calls < SUBAGENT_MAX_CALLS:
            failed += (" This prompt has made all its model calls "
                       f"(--max-calls {session.max_calls}).")
        show(f"[{failed}]", child.indent)
        raise ToolError(f"{failed}\n\n{spent}")
    show(f"[The subagent's answer, {len(answer):,} characters, goes back to the agent; "
         f"its {len(child.messages)} messages stay here.]", child.indent)
    return answer, spent


class SubagentInterrupted(KeyboardInterrupt):
    """Ctrl-C while a subagent ran: it goes on up as any Ctrl-C does, with the result its agent
    call gets (how far the subagent got, and what it spent)."""

    def __init__(self, result):
        super().__init__()
        self.result = result


def cut_answer(answer):
    if len(answer) <= SUBAGENT_ANSWER_LIMIT:
        return answer
    return (answer[:SUBAGENT_ANSWER_LIMIT]
            + f"\n[answer cut: {len(answer) - SUBAGENT_ANSWER_LIMIT:,} more characters]")


def trailer(child, seconds):
    """One line of what the subagent spent: model calls, tool calls, tokens, and seconds,
    whole and rounded down (a run that takes well under one says 0 s, run after run)."""
    tool_calls = sum(block.get("type") == "tool_use" for message in child.messages
                     if message["role"] == "assistant" for block in message["content"])
    return (f"[{child.subagent.label}: {child.calls} model "
            f"call{'s' if child.calls != 1 else ''}, {tool_calls} tool "
            f"call{'s' if tool_calls != 1 else ''}, {child.tokens:,} tokens, "
            f"{int(seconds)} s]")


def one_line(text, limit=60):
    """A description as one line on the screen: its white space single spaces, cut at limit."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def tokens_used(usage):
    """The tokens one call used, in (cache reads and writes included) and out; 0 if unsaid."""
    names = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
             "output_tokens")
    return sum(usage_count(usage, name) or 0 for name in names)


# ======================================================================
# THE COMPACTION MECHANICS                                    (new in s08)
# ======================================================================
# How COMPACTION does its work: the summary request and its mark in the trace, the size
# measured after each reply, the cleared line, the plan carried over, what /context counts.

SUMMARY_MARK = {"compaction": "summary"}  # the trace line of a summary request starts with it
PLAN_LIMIT = 20_000  # bytes of the approved plan's file: a larger one is not carried
# Why a reply that did not end well cannot be the summary.
SUMMARY_STOPS = {
    "refusal": "the model declined to write it",
    "max_tokens": f"it was cut off at max_tokens ({MAX_TOKENS})",
    "model_context_window_exceeded": "the history does not fit the model's context window",
}


def summary_request(session, instruction):
    """The loop's own request, with the instruction added as the last user message (it joins
    the user turn the history ends with, if it does)."""
    request = build_request(session)
    messages = copy.deepcopy(session.messages)
    add_user_blocks(messages, [{"type": "text", "text": instruction}])
    return {**request, "messages": messages}


def summary_call(session, trigger, instruction):
    """One summary request. Made within a prompt ("auto"), it is one of the prompt's model
    calls: it counts toward --max-calls, and is not made past it. /compact is no prompt's."""
    if trigger == "auto":
        if session.calls >= session.max_calls:  # a subagent's limit is its own (s07)
            why = (f"it has made its {session.max_calls} model calls" if session.subagent else
                   f"this prompt has made all its model calls (--max-calls {session.max_calls})")
            raise TurnStopped(f"[No summary: {why}. The history stays as it was.]")
        session.calls += 1
    return call_model(session, summary_request(session, instruction), SUMMARY_MARK)


def summary_text(response):
    """The summary: the text of the reply."""
    return "\n".join(block.text for block in response.content
                     if block.type == "text" and block.text.strip()).strip()


def summary_problem(response, summary):
    """Why this reply cannot be the summary, or None: only a reply that ended normally, with
    text and no tool call, is one."""
    if any(block.type == "tool_use" for block in response.content):
        return "the reply called a tool instead"
    if response.stop_reason not in ("end_turn", "stop_sequence"):
        return SUMMARY_STOPS.get(response.stop_reason,
                                 f"the reply stopped with {response.stop_reason}")
    return None if summary else "the reply had no text"


def quoted(text):
    """The model's words inside the harness's own tags, quoted as XML quotes text (& and < as
    entities): a </summary> or a <reminder> in them stays text, and closes nothing."""
    return text.replace("&", "&amp;").replace("<", "&lt;")


def measure(session, request, response):
    """After a reply: its usage in tokens, and the characters of the request and reply it
    counts, from which context_size estimates what comes after. A reply under --compact-at
    ends the summary's watch: the next time the context fills, it may be summarised again."""
    usage = getattr(response, "usage", None)
    tokens = tokens_used(usage)
    # unsaid, or no tokens at all (a scripted turn that states no usage): the estimate goes on
    if usage_count(usage, "input_tokens") is None or tokens == 0:
        return
    reply = {"role": "assistant",
             "content": [block_to_dict(block) for block in response.content if not is_blank(block)]}
    answered = {**request, "messages": [*request["messages"], reply]}
    session.measured = (tokens, request_chars(answered))
    if tokens < session.compact_at:
        session.summarised = False


def request_chars(request):
    """The characters of what a request sends the model: system prompt, tools and history."""
    return json_chars([request["system"], request["tools"], request["messages"]])


def json_chars(value):
    return len(json.dumps(value, ensure_ascii=False))


def blocks_of(message):
    """A message's blocks: a prompt given as a string has none."""
    content = message.get("content")
    return content if isinstance(content, list) else []


def content_chars(content):
    """The characters of a tool_result's content: a string, or a list of text blocks."""
    if isinstance(content, str):
        return len(content)
    return sum(len(block.get("text", "")) for block in content if isinstance(block, dict))


def cleared_already(result):
    content = result.get("content")
    return isinstance(content, str) and content.startswith(CLEARED)


def cleared_line(call, size):
    """[Cleared to save context: read_file: notes.md, 4,210 characters. Call it again ...]"""
    return (f"{CLEARED}the result of {call_summary(call)}, {size:,} characters. "
            "Call the tool again if you need it.]")


def plan_texts(session):
    """The plan the user approved in this conversation, as a text block: read again from the
    file the harness wrote at the approval (never another file of .agent/plans/, newer or
    not), as carefully as a tool's file, and only while it holds what the user approved.
    Otherwise one line, and the summary goes on without it."""
    if not session.approved_plan:
        return []
    path, approved = session.approved_plan
    try:
        text = read_own_file(path, session.workdir, PLAN_LIMIT)
    except OwnFileError as error:
        show(f"[The approved plan is not carried: {error}]", session.indent)
        return []
    relative = workdir_relative(session.workdir, path)
    if text != approved:
        show(f"[The approved plan is not carried: {relative} changed after the user approved "
             "it.]", session.indent)
        return []
    return [f"The plan the user approved, {relative}:\n\n{quoted(text.rstrip())}"]


def history_counts(messages):
    """What /context says the history holds: messages, tool calls, results (cleared), and the
    characters of the messages as JSON (none for an empty history)."""
    blocks = [block for message in messages for block in blocks_of(message)]
    results = [block for block in blocks if block.get("type") == "tool_result"]
    calls = sum(block.get("type") == "tool_use" for block in blocks)
    cleared = sum(cleared_already(block) for block in results)
    return (f"{len(messages)} message{'s' if len(messages) != 1 else ''}, {calls} tool call"
            f"{'s' if calls != 1 else ''}, {len(results)} tool result"
            f"{'s' if len(results) != 1 else ''} ({cleared} cleared), "
            f"{sum(json_chars(message) for message in messages):,} characters")


# ======================================================================
# THE MEMORY MECHANICS                                        (new in s09)
# ======================================================================
# How MEMORY does its work: the project's root, each file read through the one careful
# reader (a refused file is one line, never a traceback), the banner's line, and /remember's
# append.

def project_root(workdir):
    """The nearest folder at or above the workdir that holds .git (a folder, or the file of a
    git worktree); with none, the workdir itself: above it would be someone else's files (in a
    shared temporary folder, another user's). The walk stops at a folder that is not the user's
    or that anyone may write to (that shared folder): a .git there, or above, could be anyone's."""
    workdir = Path(workdir)
    for folder in (workdir, *workdir.parents):
        if os.path.lexists(folder) and not users_own(folder):
            break
        if os.path.lexists(folder / ".git") and users_own(folder / ".git"):
            return folder
    return workdir


def users_own(path):
    """The path is the user's, and no other user may write to it (by its owner and its mode)."""
    try:
        info = os.lstat(path)
    except OSError:  # gone, or not ours to look at
        return False
    return info.st_uid == os.getuid() and not info.st_mode & stat.S_IWOTH


def read_memory(session):
    """[(path, text)] of the memory files that are there, in memory_paths' order. A file the
    careful reader refuses (a symbolic link on its way, a special file, a second hard link,
    over MEMORY_LIMIT bytes, not UTF-8) is left out, with one line on the screen."""
    files = []
    for path, folder in memory_paths(session):
        if not os.path.lexists(path):  # most folders have none
            continue
        try:
            files.append((path, read_own_file(path, folder, MEMORY_LIMIT)))
        except OwnFileError as error:
            show(f"[An AGENTS.md is not read: {error}]", session.indent)
    return files


def memory_banner(session):
    """The banner's line: the files the first prompt will carry, and their sizes."""
    files = [f"{path} ({len(text.encode()):,} bytes)" for path, text in read_memory(session)]
    if not files:
        return f"memory: no {MEMORY_FILE}   (/remember TEXT starts one)"
    return f"memory: {', '.join(files)}   (/memory lists them)"


def append_memory_line(session, line):
    """Add `line` to the workdir's AGENTS.md (made if it is not there), written whole
    (write_atomically); the file is read as memory reads it, so one it refuses stays as it is."""
    target = session.workdir / MEMORY_FILE
    text = ""
    if os.path.lexists(target):  # a link too
        text = read_own_file(target, session.workdir, MEMORY_LIMIT)
    if text and not text.endswith("\n"):
        text += "\n"
    if len((text + line).encode()) >= MEMORY_LIMIT:  # unread
        raise OwnFileError(f"{target}: with the line, over {MEMORY_LIMIT:,} bytes, memory's limit")
    write_atomically(target, text + line + "\n")
    return target


# ======================================================================
# THE SKILL MECHANICS                                         (new in s10)
# ======================================================================
# How SKILLS does its work: the two folders, each SKILL.md read through the one careful
# reader and its frontmatter parsed (a file refused or unparsable is one line, never a
# traceback), $ARGUMENTS, and the banner's line.

SKILL_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")  # lowercase letters, digits and hyphens
SKILL_FOLDER_LIMIT = 100  # skill folders read from one skills folder


class SkillError(Exception):
    """A SKILL.md that cannot be used; str() is the one line to show."""


def skill_folders(session):
    """The folders skills are read from, each with the folder its files must stay inside: the
    user's own first (HOME/.agent/skills; offline, HOME is the workdir), then the project's
    (WORKDIR/.agent/skills). The same folder twice is read once."""
    home = session.tool_environment.get("HOME") or os.path.expanduser("~")
    folders = []
    if home != "~":
        folders.append((Path(home).resolve() / SKILLS_FOLDER, Path(home).resolve() / ".agent"))
    folders.append((session.workdir / SKILLS_FOLDER, session.workdir))
    seen, unique = set(), []
    for folder, inside in folders:
        if folder.resolve() not in seen:
            seen.add(folder.resolve())
            unique.append((folder, inside))
    return unique


def find_skills(session):
    """{name: skill} of the skills there are, by name. On a clash the user's own wins, as in
    Claude Code: a project (a repository someone else wrote) cannot change what the user's own
    /NAME does. A SKILL.md refused or unparsable is left out, with one line on the screen."""
    skills = {}
    for folder, inside in skill_folders(session):
        for path in skill_files(folder):
            try:
                found = parse_skill(read_own_file(path, inside, SKILL_LIMIT), path)
            except (OwnFileError, SkillError) as error:
                show(f"[skills: {error}; skipped]", session.indent)
                continue
            if "/" + found["name"] in COMMANDS:
                show(f"[skills: {path}: /{found['name']} is a command; skipped]", session.indent)
                continue
            skills.setdefault(found["name"], found)  # the first folder's wins
    return dict(sorted(skills.items()))


def skill_files(folder):
    """The SKILL.md of each folder in `folder`, in name order (at most SKILL_FOLDER_LIMIT)."""
    try:
        with os.scandir(folder) as entries:
            names = sorted(itertools.islice((entry.name for entry in entries
                                             if entry.is_dir()), SKILL_FOLDER_LIMIT))
    except OSError:  # no skills folder (most projects), or one that cannot be listed
        return []
    return [folder / name / SKILL_FILE for name in names
            if os.path.lexists(folder / name / SKILL_FILE)]


def parse_skill(text, path):
    """{name, description, user_only, body, path} from a SKILL.md's text. The frontmatter's
    lines are `key: value` (an indented line goes on with the value before it); keys this
    harness does not use are ignored. No description: the body's first paragraph."""
    lines = text.removeprefix("\ufeff").splitlines()
    fields = {}
    if lines and lines[0].strip() == "---":
        end = next((number for number, line in enumerate(lines[1:], 1) if line.strip() == "---"),
                   None)
        if end is None:
            raise SkillError(f"{path}: its frontmatter has no closing --- line")
        key = None
        for number, line in enumerate(lines[1:end], 2):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if line[0] in " \t" and key:  # a value folded onto the next lines
                fields[key] = f"{fields[key]} {line.strip()}".strip()
                continue
            key, colon, value = (part.strip() for part in line.partition(":"))
            if not colon or not key:
                raise SkillError(f"{path}: frontmatter line {number} is not `key: value`")
            fields[key] = "" if value in (">", "|", ">-", "|-") else unquoted(value)
        lines = lines[end + 1:]
    body = "\n".join(lines).strip()
    name = fields.get("name") or path.parent.name
    if not SKILL_NAME.fullmatch(name):
        raise SkillError(f"{path}: its name {name!r} is not 1 to 64 lowercase letters, digits "
                         "and hyphens")
    user_only = fields.get("disable-model-invocation", "false").lower()
    if user_only not in ("true", "false"):
        raise SkillError(f"{path}: disable-model-invocation is {user_only!r}, not true or false")
    if not body:
        raise SkillError(f"{path}: it has no instructions after its frontmatter")
    description = fields.get("description") or body.split("\n\n")[0]
    return {"name": name, "description": description, "user_only": user_only == "true",
            "body": body, "path": path}


def unquoted(value):
    """A value without the quotes around it, if it has a matching pair."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def fill_arguments(body, arguments):
    """The body with $ARGUMENTS replaced; a body without it gets them on a last line, so
    that what the user typed is never lost. The size is counted before the text is made: over
    FILLED_LIMIT, it is refused (3,200 $ARGUMENTS times 10 KB of arguments would be 32 MB)."""
    if "$ARGUMENTS" not in body and arguments:
        body = f"{body}\n\nARGUMENTS: $ARGUMENTS"
    size = len(body) + body.count("$ARGUMENTS") * (len(arguments) - len("$ARGUMENTS"))
    if size > FILLED_LIMIT:
        raise ToolError(f"The skill's text with these arguments would be {size:,} characters, "
                        f"over the limit of {FILLED_LIMIT:,}: give shorter arguments.")
    return body.replace("$ARGUMENTS", arguments)


def block_text(block):
    """The text a block holds: a text block's, or a tool_result's content."""
    if block.get("type") == "text":
        return block.get("text", "")
    content = block.get("content", "") if block.get("type") == "tool_result" else ""
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content


def skills_banner(session):
    """The banner's line: the skills, and who may start each."""
    skills = find_skills(session)
    if not skills:
        return f"skills: none   ({SKILLS_FOLDER}/NAME/{SKILL_FILE} adds one)"
    named = [name + (" (only you)" if found["user_only"] else "")
             for name, found in skills.items()]
    return f"skills: {', '.join(named)}   (/skills lists them; /NAME starts one)"


# ======================================================================
# RUNNING BASH SAFELY
# ======================================================================

BASH_TIMEOUT = 30  # seconds
OUTPUT_LIMIT = 10_000  # bytes kept of a command's output

# Commands no harness should ever run for a model, whatever it says. Each is matched where a
# program starts (COMMAND_START: the start, after ; & | ( ` or a newline, after sudo, env,
# then, ...), so "grep reboot notes.md" and "echo shutdown" run. No part of a pattern matches
# what the part before it matched: a long command costs time in proportion to its length.
COMMAND_START = (r"(?:^|[;&|(`\n])\s*(?:(?:sudo|doas|exec|command|nohup|time|env|xargs|"
                 r"then|do|else|if|while|until|!)\s+)*(?:[^\s;&|(`/]*/)*")  # /sbin/reboot too
CATASTROPHIC = [
    (COMMAND_START + r"rm\s+(-[-\w]+\s+)*[\"']?(/|~/?|\$\{?HOME\}?/?)[\"']?(\*|\s|$)",
     "deletes the root or home folder"),
    (COMMAND_START + r"mkfs(\.\w+)?(?![\w.-])", "formats a disk"),
    (COMMAND_START + r"dd\s[^;&|(`\n]*?(?<![\w-])of=/dev/", "overwrites a device"),
    (r">\s*/dev/(sd|nvme|hd|disk)", "overwrites a device"),
    (r":\s*\(\s*\)\s*\{", "is a fork bomb"),  # it defines a function named ":"
    (COMMAND_START + r"(?:systemctl\s+)?(shutdown|reboot|halt|poweroff)(?![\w.-])",
     "stops the machine"),
    (COMMAND_START + r"chmod\s+(-\w+\s+)*777\s+/(\s|$)", "opens up the whole file system"),
]


def catastrophic_reason(command):
    """Why this command must never run, or None."""
    for pattern, reason in CATASTROPHIC:
        if re.search(pattern, command):
            return reason
    return None


@contextlib.contextmanager
def ctrl_c_held():
    """A Ctrl-C that comes within the block waits, and is raised as the block ends."""
    came = False

    def hold(signal_number, frame):
        nonlocal came
        came = True

    previous = signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if came:
        signal.raise_signal(signal.SIGINT)


def run_bash(session, command):
    reason = catastrophic_reason(command)
    if reason:
        raise ToolError(f"Refused: this command {reason}.")
    env = {k: v for k, v in os.environ.items() if k not in SECRET_VARIABLES}
    env.update(session.tool_environment)
    # the first OUTPUT_LIMIT bytes are kept, the rest only counted: a flood cannot fill the memory
    kept, cut = b"", 0
    deadline = time.monotonic() + BASH_TIMEOUT
    process = None
    try:
        # A Ctrl-C waits until Popen has returned: raised inside it, it would leave the child
        # running in its own group, which the terminal's Ctrl-C does not reach.
        with ctrl_c_held():
            process = subprocess.Popen(
                command, shell=True, cwd=session.workdir, env=env,
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, so a timeout can stop all of it
            )
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([process.stdout], [], [], left)[0]:
                raise subprocess.TimeoutExpired(command, BASH_TIMEOUT)
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:  # the output has ended
                break
            room = OUTPUT_LIMIT - len(kept)
            kept, cut = kept + chunk[:room], cut + len(chunk[room:])
        process.wait(timeout=max(deadline - time.monotonic(), 0.1))
    except BaseException as stop:  # a timeout, or Ctrl-C: stop the whole group
        if process is None:  # it did not start
            raise
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:  # gone: a Ctrl-C as it started, before its own group
            pass
        process.wait()
        if isinstance(stop, subprocess.TimeoutExpired):
            raise ToolError(f"The command timed out after {BASH_TIMEOUT} seconds "
                            "and was stopped.") from None
        raise
    finally:
        if process:
            process.stdout.close()
    output = kept.decode("utf-8", errors="replace")
    if cut:
        output += f"\n[output cut: {cut} more bytes]"
    return f"{output.rstrip() or '(no output)'}\n[exit code: {process.returncode}]"


# ======================================================================
# TOOL RESULTS AND INPUT CHECKS
# ======================================================================

def encodable(text):
    """The text as UTF-8 can carry it. A file name that is not UTF-8 (caf\xe9.txt) reaches Python
    with a lone surrogate, which no request can encode: every later call would fail. Each such
    byte is shown as its escape, caf\\xe9.txt, a name the model can pass to bash as $'...'."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate no byte stands for
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def encodable_value(value):
    """A JSON value (a reply's block) with every string in it made encodable."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, list):
        return [encodable_value(item) for item in value]
    if isinstance(value, dict):
        return {encodable_value(key): encodable_value(item) for key, item in value.items()}
    return value


DEPTH_LIMIT = 32  # levels of lists and objects, one inside the other, that a tool input may have


def too_deep(value):
    """Do lists and objects nest more than DEPTH_LIMIT levels deep in this JSON value?

    Looked at one level at a time, without recursion: a value a few hundred levels deep
    cannot be copied, traced or sent again (RecursionError), so it must never be kept.
    """
    level = [value]
    for _ in range(DEPTH_LIMIT + 1):
        containers = [node for node in level if isinstance(node, (dict, list))]
        if not containers:
            return False
        level = [inner for node in containers
                 for inner in (node.values() if isinstance(node, dict) else node)]
    return True


JSON_TYPES = {"string": str, "integer": int, "boolean": bool}


def input_problem(name, schema, tool_input):
    """Say what is wrong with a tool's input, or return None if it fits.

    Checks the top level only: an object, required fields present, no unknown
    fields, and the type of each plain field (string, integer, boolean).
    Arrays and objects are checked by the tool that takes them.
    """
    if too_deep(tool_input):
        return (f"The input of {name} nests lists and objects more than {DEPTH_LIMIT} levels "
                "deep, which no tool takes. The call did not run; the history keeps its input "
                "as {}.")
    if not isinstance(tool_input, dict):
        return f"The input of {name} must be a JSON object."
    fields = schema["properties"]
    for key in schema.get("required", []):
        if key not in tool_input:
            return f"{name} needs the field '{key}'."
    for key, value in tool_input.items():
        if key not in fields:
            return f"{name} has no field '{key}'. Its fields: {', '.join(fields)}."
        wanted = fields[key]["type"]
        python_type = JSON_TYPES.get(wanted, object)
        if not isinstance(value, python_type) or (python_type is int and isinstance(value, bool)):
            return f"The field '{key}' of {name} must be of type {wanted}."
    return None


# ======================================================================
# CALLING THE MODEL
# ======================================================================

API_TIMEOUT = anthropic.Timeout(300, connect=10)  # seconds for a whole reply; to connect


def call_model(session, request, mark=None):
    """One model call. With --trace, append exactly what was sent and received (after `mark`,
    a key that says what the call was for, if it is not the loop's)."""
    try:
        with RETRY_LINES:  # while the call runs, each retry of the SDK shows as a line
            response = session.client.messages.create(**request)
    except anthropic.AnthropicError:
        raise
    except json.JSONDecodeError:  # e.g. a 200 reply whose body is empty or cut off
        raise anthropic.AnthropicError(
            "the reply is not valid JSON (its body is empty or cut off). Try again.") from None
    except Exception as error:  # whatever else: one line, and the session goes on
        raise anthropic.AnthropicError(
            f"the call failed with {type(error).__name__}: {error}") from None
    # e.g. ANTHROPIC_BASE_URL is another kind of server
    if not isinstance(getattr(response, "content", None), list):
        raise anthropic.AnthropicError(
            "the reply is not a Message: is ANTHROPIC_BASE_URL an Anthropic-compatible API?")
    problem = block_problem(response.content)
    if problem:  # the SDK does not check what the server sent
        raise anthropic.AnthropicError(f"the reply is not a valid Message: {problem}.")
    if session.trace:
        deep = {id(block) for block in response.content
                if block.type == "tool_use" and too_deep(block.input)}
        traced = response  # a tool input nested too deeply is written as {}, as the history has it
        if deep:
            traced = response.model_copy(update={"content": [
                block.model_copy(update={"input": {}}) if id(block) in deep else block
                for block in response.content]})
        record = {**(mark or {}), "request": request, "response": traced.to_dict(mode="json")}
        if session.subagent:  # a subagent's call: marked with its description
            record = {"agent": session.subagent.description, **record}
        with open(session.trace, "a", encoding="utf-8") as trace:
            trace.write(json.dumps(record) + "\n")
    session.tokens += tokens_used(getattr(response, "usage", None))
    if session.live:  # a subagent's tokens on a line of their own, under its agent call
        who = f"{session.subagent.label} tokens" if session.subagent else "tokens"
        show_usage(getattr(response, "usage", None), session.indent, who)
    for block in [block for block in response.content if not sdk_knows(block)]:
        # Another provider's own kind of block: sent back, it could make every later call fail.
        show(f"[A block of type {block.type} is not kept: the loop knows text, tool_use and "
             "the API's own block types.]")
        response.content.remove(block)
    return response


def block_problem(content):
    """What in a reply's content the loop cannot use, or None."""
    for number, block in enumerate(content, 1):
        kind = getattr(block, "type", None)
        if not isinstance(kind, str):
            return f"block {number} has no type"
        if kind == "text" and not isinstance(getattr(block, "text", None), str):
            return f"text block {number} has no text"
        named = all(isinstance(getattr(block, key, None), str) for key in ("id", "name"))
        if kind == "tool_use" and not (named and getattr(block, "input", None) is not None):
            return f"tool_use block {number} lacks its id, name or input"
        if kind != "tool_use" and too_deep(getattr(block, "input", None)):
            return f"{kind} block {number} nests its input too deeply"
    return None


def is_too_long(error):
    """The request was too long: the conversation will not fit again until it is cleared."""
    if not isinstance(error, anthropic.APIStatusError):
        return False
    message = (error.api_message or "").lower()
    return error.status_code == 413 or (error.status_code == 400 and any(
        words in message for words in ("prompt is too long", "exceed context limit")))


def describe_api_error(error):
    """One line a learner can act on."""
    if isinstance(error, anthropic.APITimeoutError):
        return (f"no answer within {API_TIMEOUT.read:g} s: the server is slow or hung. "
                "Try again, or check ANTHROPIC_BASE_URL.")
    if isinstance(error, anthropic.APIConnectionError):
        return "could not reach the API. Check the network, a proxy, or ANTHROPIC_BASE_URL."
    if isinstance(error, anthropic.APIStatusError):
        # one line, even for a traceback, and one full stop
        message = " ".join((error.api_message or "no details").split())[:300]
        if not message.endswith((".", "!", "?")):
            message += "."
        return f"{error.status_code} {message} {status_hint(error)}"
    return " ".join(str(error).split())[:300]


def status_hint(error):
    """What to do after an error status (the SDK has retried what waiting may cure)."""
    if is_too_long(error):
        return "The conversation is too long to send: /clear starts a new one."
    if spend_limit_reached(error.body):
        return "A spend limit is reached: waiting will not help until it is raised or resets."
    if error.status_code >= 500 and error.status_code != 529:
        return "The API failed on its side: try again in a moment."
    return {
        401: "Check ANTHROPIC_API_KEY.",
        403: "This key may not use this model.",
        404: "Check MODEL_ID and ANTHROPIC_BASE_URL.",
        429: "Rate limited: wait a moment and try again.",
        529: "The API is overloaded: try again in a moment.",
    }.get(error.status_code, "Try again, or check the request.")


# ======================================================================
# LIVE ONLY: retries, usage, blocks of unknown types
# ======================================================================
# What only a call to the real API needs: each retry of the SDK shown as a line, the
# tokens a call used, and the check that a block is one of the API's own types. A first
# read can skip it.

API_RETRIES = 2  # the SDK tries a failed call again this often (429, 5xx, 529, no connection)


def live_client(**options):
    """The SDK's client for the real API: a timeout for one call, and its retries shown."""
    return anthropic.Anthropic(timeout=API_TIMEOUT, max_retries=API_RETRIES,
                               middleware=[RETRY_LINES.watch], **options)


def sdk_knows(block):
    """Whether the SDK parsed a block as one of the API's types: it reads a type it does not
    know into a TextBlock that keeps the unknown type."""
    declared = type(block).model_fields.get("type")
    return block.type in getattr(getattr(declared, "annotation", None), "__args__", ())


def usage_count(usage, name):
    """One count a reply's usage states, or None if it states none (a bool is not a count)."""
    value = getattr(usage, name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def show_usage(usage, indent=0, who="tokens"):
    """One faint line after a live call: the tokens in (of them, read from the prompt cache and
    written to it) and out. The trace keeps the usage exactly as the API sent it."""
    def count(name):
        return usage_count(usage, name) or 0

    read, written = count("cache_read_input_tokens"), count("cache_creation_input_tokens")
    line = (f"{' ' * indent}  [{who}: {count('input_tokens') + read + written:,} in ({read:,} "
            f"read from the cache, {written:,} written to it), {count('output_tokens'):,} out]")
    if any(usage_count(usage, name) is None for name in ("input_tokens", "output_tokens")):
        line = f"{' ' * indent}  [{who}: the reply did not say how many]"
    print(f"\x1b[2m{line}\x1b[0m" if sys.stdout.isatty() else line, flush=True)


# What went wrong with an attempt, by its status: said in the line of a retry.
STATUS_NAMES = {408: "request timeout", 409: "conflict", 429: "rate limited", 500: "server error",
                502: "bad gateway", 503: "unavailable", 504: "gateway timeout", 529: "overloaded"}


class RetryLines(logging.Handler):
    """A line on the screen for each retry of a call. The SDK retries by itself, and logs each
    wait; `watch`, run by the SDK as middleware once per attempt, sees what went wrong, and tells
    the SDK not to retry a spend limit, which waiting does not cure."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.attempt, self.failure = 1, None  # the last attempt: its number, what went wrong

    def watch(self, request, call_next):
        self.attempt, self.failure = request.retries_taken + 1, None
        try:
            response = call_next(request)
        except anthropic.APITimeoutError:
            self.failure = f"no answer within {API_TIMEOUT.read:g} s"
            raise
        except anthropic.APIConnectionError:
            self.failure = "no connection"
            raise
        if response.status_code >= 400:
            status = response.status_code
            self.failure = f"{status} {STATUS_NAMES.get(status, 'error')}"
            if spend_limit_reached(json_body(response.http_response)):
                response.http_response.headers["x-should-retry"] = "false"  # the SDK obeys it
        return response

    def emit(self, record):
        # The SDK logs "Retrying request to %s in %f seconds" before it waits.
        if self.failure and str(record.msg).startswith("Retrying request") and record.args:
            wait = f"{record.args[-1]:.1f}".removesuffix(".0")
            show(f"[retrying in {wait} s ({self.failure}, attempt {self.attempt + 1} of "
                 f"{API_RETRIES + 1})]", 2)

    def __enter__(self):
        self.failure = None
        if SDK_LOG.getEffectiveLevel() > logging.INFO:
            SDK_LOG.setLevel(logging.INFO)
        SDK_LOG.addHandler(self)

    def __exit__(self, *exception):
        SDK_LOG.removeHandler(self)


SDK_LOG = logging.getLogger("anthropic._base_client")
RETRY_LINES = RetryLines()


def json_body(http_response):
    try:
        return http_response.json()
    except ValueError:
        return None


def spend_limit_reached(body):
    """A spend limit (the tier's, or one set in the Console): retrying does not cure it."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return False
    details = error.get("details")
    code = details.get("error_code") if isinstance(details, dict) else None
    return code == "enforced_spend_limit_reached" or "usage limits" in str(error.get("message"))


# ======================================================================
# THE SESSION
# ======================================================================

@dataclass
class Conversation:
    """One conversation with the model: its history, and what belongs to it alone (later
    chapters add the todo list, notes, counts). /clear starts a new one; so does a subagent."""
    messages: list = field(default_factory=list)  # the history, as the API takes it
    todos: list = field(default_factory=list)  # the model's todo list
    rounds_since_todo: int = 0  # tool rounds since the last todo_write that passed
    notes: list = field(default_factory=list)  # texts for the next user turn
    calls: int = 0  # model calls made for the prompt (a subagent's: for its task)
    tokens: int = 0  # tokens its model calls used, in and out
    measured: tuple | None = None  # the last reply's tokens, and the characters they count
    summarised: bool = False  # a summary was made, and no reply has come under --compact-at
    compactions: int = 0  # summaries made in this conversation
    prompt: str = ""  # the user's last prompt
    approved_plan: tuple = ()  # the plan file written at the user's approval, and its text
    replies: int = 0  # replies the loop's calls brought (a summary's not counted)
    skills: dict = field(default_factory=dict)  # name: the text a skill used sent, in order


@dataclass
class Session:
    client: object
    model: str
    workdir: Path
    trace: Path | None = None
    conversation: Conversation = field(default_factory=Conversation)  # the one the loop runs
    args: object = None  # the command line it was made from, for /restart
    live: bool = False  # the real API answers: prompt caching, and a line of usage per call
    max_calls: int = MAX_CALLS  # model calls one prompt may make (--max-calls)
    # set for the tools' processes (make_session does it): offline, HOME is the workdir, so
    # that a `~` in a script means the scratch copy and never the learner's home folder
    tool_environment: dict = field(default_factory=dict)
    mode: str = "default"  # the permission mode
    settings: dict = field(default_factory=dict)  # .agent/settings.json
    hooks: list = field(default_factory=list)  # Hook objects, in the order they run
    session_id: str = field(default_factory=new_session_id)
    plan_mode: bool = False  # a flag beside the permission mode, not one of its values
    subagent: Subagent | None = None  # what makes it a subagent's; None for the main agent
    indent: int = 0  # where its lines start on the screen: a subagent's, under its agent call
    clear_at: int = CLEAR_AT  # tokens of context that clear old tool results (--clear-at)
    compact_at: int = COMPACT_AT  # tokens of context that summarise the history (--compact-at)
    memory: list = field(default_factory=list)  # (path, bytes) of the AGENTS.md files last read

    # The conversation's fields are read and set on the session: session.messages is
    # session.conversation.messages, and so is each field a later chapter adds to Conversation.
    def __getattr__(self, name):  # called only for a name the session itself does not have
        if name in Conversation.__dataclass_fields__:
            return getattr(self.conversation, name)
        raise AttributeError(f"'Session' object has no attribute {name!r}")

    def __setattr__(self, name, value):
        if name in Conversation.__dataclass_fields__:
            setattr(self.conversation, name, value)
        else:
            super().__setattr__(name, value)


def show(text, indent=0):
    """Print text, indented. What the model wrote reaches the screen only through here."""
    pad = " " * indent
    lines = printable(str(text)).split("\n")
    # a terminal that cannot show a character ("→" in latin-1) prints its escape, \u2192
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    shown_text = "\n".join(pad + line for line in lines)
    try:
        shown_text = shown_text.encode(encoding, "backslashreplace").decode(encoding)
    except LookupError:  # an encoding Python does not know: print it as it is
        pass
    print(shown_text, flush=True)


# Printable characters that show as blank or as nothing: U+2800, the Hangul fillers, and the
# marks Unicode calls default ignorable (variation selectors, the grapheme joiner, ...).
PRINTS_BLANK = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u2800\u3164"
                          "\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef]")
SPACE_RUN = 40  # spaces in a row shown as they are; a longer run is one marker


def printable(text):
    """The text with every control character but the newline shown escaped (ESC as \\x1b,
    CR as \\r, tab as \\t), so that nothing the model wrote can recolour, erase or
    rewrite what the terminal shows. Nothing in it is invisible, or pushes the rest off
    the screen: a character that shows as blank or not at all is escaped too (\\u200b,
    \\u3164), and a run of more than three of them, of more than SPACE_RUN spaces or of more
    than two blank lines is one marker with its count: ⟨300 × \\u2800⟩, ⟨6000 spaces⟩.
    A CR before a newline and the newlines at the end are dropped: the text reads as it is."""
    return printable_call(text.replace("\r\n", "\n").rstrip("\n"))


def printable_call(text):
    """The text of a call, escaped as printable() escapes text, but with its newlines at the
    end and every CR shown: sh runs it, so "cd sub\\r\\ntouch x" must not read as "cd sub"."""
    lines = []
    for blank, group in itertools.groupby(text.split("\n"), is_blank_line):
        group = list(group)
        if blank and len(group) > 2:
            lines.append(f"⟨{len(group)} blank lines⟩")
        else:
            lines += [printable_line(line) for line in group]
    return "\n".join(lines)


def char_kind(char):
    """"space", "hidden" (it shows as blank or not at all: escaped) or "plain"."""
    if char == " ":
        return "space"
    if not char.isprintable() or PRINTS_BLANK.match(char):
        return "hidden"
    return "plain"


def is_blank_line(line):
    return all(char_kind(char) != "plain" for char in line)


def printable_line(line):
    """One line, run by run: plain text as it is, spaces, and hidden characters escaped."""
    parts = []
    for kind, run in itertools.groupby(line, char_kind):
        run = "".join(run)
        if kind == "plain" or (kind == "space" and len(run) <= SPACE_RUN):
            parts.append(run)
        elif kind == "space":
            parts.append(f"⟨{len(run)} spaces⟩")
        elif len(run) <= 3:
            parts.append("".join(ascii(char)[1:-1] for char in run))
        else:
            escapes = [ascii(char)[1:-1] for char in dict.fromkeys(run)]
            if len(escapes) == 1:
                parts.append(f"⟨{len(run)} × {escapes[0]}⟩")
            else:
                more = ", …" if len(escapes) > 3 else ""
                parts.append(f"⟨{len(run)} blank characters: {', '.join(escapes[:3])}{more}⟩")
    return "".join(parts)


def call_summary(block):
    """bash: ls -la  (the tool and the field it acts on, on one line, marked where it is cut)."""
    name, tool_input = block["name"], block["input"]
    schema = next((tool["input_schema"] for tool in TOOLS if tool["name"] == name), {})
    fields = [CALL_SUBJECT.get(name), *schema.get("properties", {})]  # never the JSON's order
    given = [tool_input[key] for key in fields
             if isinstance(tool_input, dict) and key in tool_input]
    value = given[0] if given else tool_input
    if isinstance(value, (list, dict)) and value:  # counted, not written out: it may nest deeply
        kind = "item" if isinstance(value, list) else "field"
        value = f"[{len(value)} {kind}{'s' if len(value) != 1 else ''}]"
    lines = (value if isinstance(value, str) else json.dumps(value)).split("\n")
    summary = f"{name}: {printable_call(lines[0])}"
    more = []
    if len(summary) > 160:
        more.append(f"{len(summary) - 150} more characters")
        summary = summary[:150]
    if len(lines) > 1:
        more.append(f"{len(lines) - 1} more line{'s' if len(lines) > 2 else ''}")
    return summary + (f" … ({', '.join(more)})" if more else "")


def preview(text, lines=6):
    """The first few lines of a tool result, for the screen (the model gets all)."""
    all_lines = text.removesuffix("\n").split("\n")  # "\n" only: show() escapes a "\r"
    kept = all_lines[:lines]
    more = len(all_lines) - len(kept)
    if more > 0:
        kept.append(f"... ({more} more line{'s' if more > 1 else ''})")
    return "\n".join(kept)


def answer_open_tool_uses(messages):
    """After an interrupt: a tool_use still without a result gets an "interrupted" one."""
    if messages and messages[-1]["role"] == "assistant":
        interrupted = [tool_result(block["id"], "Interrupted by the user.", is_error=True)
                       for block in messages[-1]["content"] if block["type"] == "tool_use"]
        add_user_blocks(messages, interrupted)


def assistant_turns(messages):
    return sum(message["role"] == "assistant" for message in messages)


class PlanRejected(ToolError):
    """The user turned the plan down: the call's error. Their answer is not a round of work,
    so it brings no todo reminder; ends_turn: they said no, rather than giving feedback, and
    the turn ends once every call has its result (run_tools puts them in .results)."""

    def __init__(self, line, ends_turn):
        super().__init__(line)
        self.ends_turn = ends_turn
        self.results = []


def forget_turn(session, before):
    """Put the history back as it was before the turn's prompt, and say so."""
    ran_tools = tool_result_count(session.messages) > tool_result_count(before)
    session.messages[:] = before
    done = "; what its tool calls changed stays changed" if ran_tools else ""
    show(f"[The prompt was not kept: the conversation is as it was before it{done}.]")


def tool_result_count(messages):
    return sum(block.get("type") == "tool_result" for message in messages
               if isinstance(message["content"], list) for block in message["content"])


# ======================================================================
# THE SCRIPTED MODEL
# ======================================================================

# A stand-in for anthropic.Anthropic(): client.messages.create(...) returns
# the next turn of a script as a real anthropic.types.Message.

class ScriptError(Exception):
    """A script file that cannot be used."""


def is_special_file(path):
    """A named pipe, a socket or a device: opening one to read it can wait forever."""
    return os.path.exists(path) and not (os.path.isfile(path) or os.path.isdir(path))


class OwnFileError(Exception):
    """A file the harness reads for itself that it will not use: str() is the one line to show,
    naming the file and the reason."""


def read_own_file(path, folder, limit):
    """The text of a file the harness reads for itself, to obey it or to send it to the model
    (a script, settings.json, a plan), read as carefully as a tool reads one: a regular file
    only (a named pipe, a socket or a device is refused before it is opened, and a file swapped
    in is never waited on), at most `limit` bytes, UTF-8. `folder` is the place the file
    belongs: it must be inside it, with no symlink on its way and no second hard link (the same
    file by another name). None: a path the user named on the command line, read as named.
    Raises OwnFileError."""
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    try:
        if folder is None:
            where, checked = path, os.stat(path)
        else:
            written = Path(os.path.abspath(path))
            if not written.is_relative_to(os.path.abspath(folder)):
                raise OwnFileError(f"{path}: outside {folder}, where it belongs")
            where = Path(os.path.realpath(folder))  # a loop in it fails below, as ELOOP
            for part in written.relative_to(os.path.abspath(folder)).parts:
                where = where / part
                if where.is_symlink():
                    raise OwnFileError(f"{path}: a symbolic link is on its way (the harness "
                                       "reads no file of its own through a link)")
            checked = os.lstat(where)
            flags |= getattr(os, "O_NOFOLLOW", 0)
        if os.path.isdir(where):
            raise OwnFileError(f"{path}: a folder, not a file")
        if is_special_file(where):  # checked before it is opened: opening a FIFO waits
            raise OwnFileError(f"{path}: not a regular file (a named pipe, a socket or a device)")
        if folder is not None and checked.st_nlink > 1:
            raise OwnFileError(f"{path}: it has a second hard link (the same file by another "
                               "name, which may be outside)")
        if checked.st_size > limit:
            raise OwnFileError(f"{path}: larger than {limit:,} bytes")
        with open(os.open(where, flags), "rb") as file:
            opened = os.fstat(file.fileno())
            if (opened.st_dev, opened.st_ino) != (checked.st_dev, checked.st_ino):
                raise OwnFileError(f"{path}: it was replaced while it was opened")
            data = file.read(limit + 1)
    except (OSError, ValueError) as error:  # ValueError: a NUL byte in the path
        raise OwnFileError(f"{path}: {getattr(error, 'strerror', None) or error}") from None
    if len(data) > limit:  # it grew after the check
        raise OwnFileError(f"{path}: larger than {limit:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise OwnFileError(f"{path}: not UTF-8 text") from None


def parse_json(text, path, error):
    """json.loads, with what any file can do to the parser said in one line, raised as `error`:
    lists and objects nested past its limit, an integer too long to read. A JSONDecodeError
    goes on up, for the caller to say in its own words."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:  # the parser's own limit
        raise error(f"{path}: lists and objects nest too deeply to read") from None
    except ValueError:  # an integer of more than 4,300 digits
        raise error(f"{path}: a number in it is too long to read") from None


SCRIPT_LIMIT = 100_000_000  # bytes of a script or a trace (a long session's trace is large)


def load_script(path):
    """Read a script ({"prompt", "turns"}) or a trace (one JSON line per call)."""
    path = Path(path)
    try:  # the file the user named on the command line
        text = read_own_file(path, None, SCRIPT_LIMIT)
    except OwnFileError as error:
        raise ScriptError(str(error)) from None
    try:  # a script is one JSON object; so is a trace of one call
        script = parse_json(text, path, ScriptError)
    except json.JSONDecodeError:
        script = None  # several JSON lines: a trace
    if script is None or (isinstance(script, dict) and "response" in script):
        try:  # a trace: replay its responses in order
            calls = [parse_json(line, path, ScriptError)
                     for line in text.splitlines() if line.strip()]
            script = {"prompt": typed_text(calls[0]["request"]["messages"][0]),
                      "turns": [{"response": call["response"]} for call in calls]}
        except (json.JSONDecodeError, LookupError, TypeError, AttributeError):
            raise ScriptError(
                f"{path} is neither a script (JSON) nor a trace (JSON lines)") from None
    if not isinstance(script, dict) or not isinstance(script.get("turns"), list):
        raise ScriptError(f"{path}: a script is an object with a list of 'turns'")
    for number, turn in enumerate(script["turns"], 1):
        try:
            make_message(turn, "test-model", iter(range(1, 1000)), number)
        except Exception as error:
            raise ScriptError(
                f"{path}: turn {number} is not a valid model turn ({error})") from None
    return script


def make_message(turn, model, tool_numbers, message_number):
    """Build the real Message for one script turn."""
    if "response" in turn:  # recorded by --trace: replay it as it was
        return Message.model_validate(turn["response"])
    content = []
    for block in turn["content"]:
        block = dict(block)
        if block["type"] == "tool_use" and "id" not in block:
            block["id"] = f"toolu_{next(tool_numbers):02d}"
        content.append(block)
    has_tool_use = any(block["type"] == "tool_use" for block in content)
    return Message.model_validate({
        "id": f"msg_{message_number:02d}", "type": "message", "role": "assistant",
        "model": model, "content": content,
        "stop_reason": turn.get("stop_reason", "tool_use" if has_tool_use else "end_turn"),
        "stop_sequence": None,
        "usage": turn.get("usage", {"input_tokens": 0, "output_tokens": 0}),  # as a run had it
    })


def text_of(message):
    """All the text in one message: text blocks and tool_result contents."""
    if isinstance(message["content"], str):
        return message["content"]
    parts = []
    for block in message["content"]:
        inner = block.get("content", block.get("text", ""))
        if isinstance(inner, list):
            inner = "\n".join(part.get("text", "") for part in inner)
        parts.append(inner)
    return "\n".join(parts)


def typed_text(message):
    """What the user typed in a user turn: its first text block (notes and reminders follow)
    that is not AGENTS.md's (it comes before the first prompt)."""
    if isinstance(message["content"], str):
        return message["content"].strip()
    texts = [block["text"] for block in message["content"] if block.get("type") == "text"
             and not block["text"].startswith(MEMORY_INTRO)]
    return texts[0].strip() if texts else ""


class ScriptedModel:
    """Plays a script, and says so honestly when it is asked for what it has no turn for."""

    def __init__(self, script):
        self.script = script
        self.position = 0  # the next turn to consider
        self.calls = 0
        self.off_script = False  # the last reply was the stand-in's note: the prompt was not its
        self.tool_numbers = iter(range(1, 10_000))
        self.messages = SimpleNamespace(create=self.create)

    def create(self, *, model, messages, **request):
        self.calls += 1
        newest = text_of(messages[-1]) if messages else ""
        turns, prompt = self.script["turns"], self.script.get("prompt")
        typed = typed_text(messages[-1]) if messages else ""
        if prompt and typed == prompt.strip() and self.position > 0 and len(messages) > 1:
            self.position = 0  # its own prompt again (after a Ctrl-C, say): the script replays
        self.off_script = bool(self.position == 0 and prompt and typed != prompt.strip())
        if self.off_script:
            # At its start a script expects its own prompt: another one does not consume it.
            return self.say(model, f"(This is a scripted model, and its script was written for "
                                   f"the prompt: {prompt.strip()}\nType that prompt to play it.)")
        # The turns ahead first; then, for an answer the script met earlier on another path (a
        # feedback after an answer in one's own words), the first conditional turn that fits.
        candidates = list(range(self.position, len(turns)))
        candidates += [number for number in range(self.position) if turns[number].get("when")]
        # A prompt typed after a Ctrl-C joins the cancelled turn: a turn ahead that only goes on
        # with the script (no `when`) was written for the script's prompt, not for this one.
        new_prompt = ("Interrupted by the user." in newest
                      and typed not in ("", (prompt or "").strip())
                      and any(not turn.get("when") for turn in turns[self.position:]))
        for number in candidates:
            when = turns[number].get("when", "")
            if when in newest and (when or not new_prompt):
                self.position = number + 1
                return make_message(turns[number], model, self.tool_numbers, self.calls)
        if new_prompt:
            return self.say(model, "(This is a scripted model, and its script has no turn for a "
                                   "new prompt after a cancelled turn. /restart plays it again.)")
        self.position = len(turns)
        return self.say(model, "(The script has no more turns: this is where the recorded "
                               "session ended. In the REPL, /restart plays it again.)")

    def say(self, model, text):
        """A text turn of the stand-in's own, outside the script."""
        turn = {"content": [{"type": "text", "text": text}]}
        return make_message(turn, model, self.tool_numbers, self.calls)


# ======================================================================
# THE COMMAND LINE
# ======================================================================

def call_limit(text):
    """The value of --max-calls: a whole number, 1 or more."""
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number, 1 or more (not {text!r})")
    return int(text)


def parse_args(argv):
    parser = argparse.ArgumentParser(prog=f"python {CHAPTER}/code.py",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("prompt", nargs="?", help="run this one prompt and exit (default: a REPL)")
    parser.add_argument("--offline", action="store_true",
                        help="use the scripted model even if a key is set")
    parser.add_argument("--script", type=Path,
                        help="play this script (or a trace) offline (default: scenario.json)")
    parser.add_argument("--trace", type=Path,
                        help="append every model call to this file, one JSON line each")
    parser.add_argument("--workdir", type=Path,
                        help="where the tools act (offline default: a fresh copy of workspace/)")
    parser.add_argument("--max-calls", type=call_limit, default=MAX_CALLS, metavar="N",
                        help="model calls one prompt may make (default: %(default)s)")
    parser.add_argument("--mode", choices=MODES, default="default",
                        help="the permission mode (default: %(default)s)")
    parser.add_argument("--plan", action="store_true", help="start in plan mode")
    parser.add_argument("--clear-at", type=call_limit, default=CLEAR_AT, metavar="N",
                        help="tokens of context that clear old tool results (default: %(default)s)")
    parser.add_argument("--compact-at", type=call_limit, default=COMPACT_AT, metavar="N",
                        help="tokens of context that summarise the history (default: %(default)s)")
    return parser.parse_args(argv)


def has_key():
    return bool(os.environ.get("ANTHROPIC_API_KEY")) or bool(
        os.environ.get("ANTHROPIC_AUTH_TOKEN") and os.environ.get("ANTHROPIC_BASE_URL"))


def own_command(*arguments):
    """The command that runs this program with these arguments, as typed where the user is: this
    Python and this code.py, relative to the current folder when they are inside it."""
    words = []
    for path in (sys.executable, str(HERE / "code.py")):
        relative = os.path.relpath(path)
        if relative.startswith(os.pardir):
            relative = path
        elif os.sep not in relative:  # a bare name would be looked up on PATH
            relative = os.path.join(os.curdir, relative)
        words.append(relative)
    return " ".join(words + list(arguments))


def needs_a_key(args):
    """The one line for a prompt only a real model can answer: no key, no --offline or --script,
    and not the prompt the chapter's script was written for; else None."""
    if args.prompt is None or args.offline or args.script or has_key():
        return None
    own = (load_script(HERE / "scenario.json").get("prompt") or "").strip()
    if not own or args.prompt.strip() in ("", own):
        return None
    return (f"{CHAPTER}: this prompt needs a real model: set ANTHROPIC_API_KEY in .env (see "
            f".env.example). Without a key, play the chapter's script: "
            f"{own_command('--offline', json.dumps(own, ensure_ascii=False))}")


def make_session(args):
    """The client (live or scripted), the workdir, and the banner lines."""
    offline = args.offline or args.script or not has_key()  # a script given is always played
    if offline:
        script_path = args.script or HERE / "scenario.json"
        script = load_script(script_path)
        client = ScriptedModel(script)
        model = "scripted-model"
        why = "--offline" if args.offline else "--script" if args.script else "no ANTHROPIC_API_KEY"
        banner = [f"{CHAPTER} · offline ({why}): the scripted model plays {script_path}"]
        if script.get("prompt"):
            banner.append(f"the script was written for: {script['prompt']}")
        workdir = made_workdir(args.workdir) if args.workdir else fresh_workspace()
        tool_environment = {"HOME": str(workdir)}  # whatever a script says, `~` is the copy
        banner.append(f"workdir: {workdir}  (also HOME for the tools, offline)")
        if not args.workdir:
            banner.append(f"(a fresh copy of workspace/, kept after the run to look at; "
                          f"rm -rf {workdir.parent} removes them all)")
    else:
        client = live_client()
        model = os.environ.get("MODEL_ID") or DEFAULT_MODEL
        banner = [f"{CHAPTER} · live: {model} at {client.base_url}"]
        workdir = made_workdir(args.workdir) if args.workdir else Path.cwd().resolve()
        tool_environment = {}
        banner.append(f"workdir: {workdir}")
    if args.trace:
        open(args.trace, "a").close()  # a trace that cannot be written fails now, not mid-session
    settings = load_settings(workdir)
    banner.append(f"mode: {args.mode}   (/mode to see or switch)")
    session = Session(client=client, model=model, workdir=workdir, trace=args.trace,
                      live=not offline, max_calls=args.max_calls,
                      tool_environment=tool_environment, mode=args.mode, settings=settings,
                      args=args, clear_at=args.clear_at, compact_at=args.compact_at)
    add_hook(session, "PostToolUse", check_python_syntax, matcher="write_file|edit_file")
    load_command_hooks(session)
    banner.append("hooks: " + ", ".join(f"{hook.event}[{hook.matcher}]" for hook in session.hooks))
    banner.append(f"session: {session.session_id}")
    banner.append(memory_banner(session))
    banner.append(skills_banner(session))
    plan = newest_plan(workdir)
    if plan:
        banner.append(f"newest plan: {workdir_relative(workdir, plan)}")
    if args.plan:
        banner.append(enter_plan(session))
    return session, banner


def made_workdir(path):
    """The folder --workdir names, made if it is missing."""
    workdir = path.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    return workdir


def fresh_workspace():
    """Offline without --workdir: a fresh copy of workspace/, in a folder of the learner's own
    (no one else's copies are in it)."""
    own = Path(tempfile.gettempdir()) / f"build-an-agent-{os.getuid()}"
    own.mkdir(mode=0o700, exist_ok=True)
    if own.is_symlink() or own.stat().st_uid != os.getuid() or own.stat().st_mode & 0o022:
        raise OSError(f"{own} is not a folder of yours that only you can write to: "
                      "remove it, or set TMPDIR to another folder")
    workdir = Path(tempfile.mkdtemp(prefix=f"{PROMPT_LABEL}-", dir=own))
    shutil.copytree(HERE / "workspace", workdir, dirs_exist_ok=True)
    return workdir.resolve()


def read_line(prompt):
    """One line from the user; None at EOF. Ctrl-C ends the line, then goes on up."""
    try:
        line = input(prompt)
    except EOFError:
        print()
        return None
    except KeyboardInterrupt:
        print()
        raise
    if not sys.stdin.isatty():  # piped input: echo it, so the transcript reads like a session
        print(line)
    return line


def command_help(session, argument):
    """/help lists the commands."""
    for command in COMMANDS.values():
        show(command.__doc__.split("\n")[0], 2)
    show("q, quit, exit or EOF leaves; Ctrl-C cancels a turn.", 2)


def command_restart(session, argument):
    """/restart starts again: a new session; offline, the script from its start."""
    try:  # made the way the command line made the first: offline, a fresh copy of workspace/
        fresh, _ = make_session(session.args)
    except Exception as error:
        show(f"[Could not restart: {error}. The session goes on.]")
        return
    vars(session).update(vars(fresh))
    what = "a new conversation"
    if isinstance(session.client, ScriptedModel):
        what = "the script plays from its start"
    show(f"[Restarted: {what}, with a new history; workdir: {session.workdir}; "
         f"session: {session.session_id}]")


def command_clear(session, argument):
    """/clear starts a new conversation; the rest of the session stays as it is."""
    session.conversation = Conversation()
    # The new conversation has not heard of plan mode yet.
    session.notes = [PLAN_MODE_ENTERED] if session.plan_mode else []
    where = ""
    if isinstance(session.client, ScriptedModel):
        where = " The script goes on where it was (/restart plays it from its start)."
    show(f"[Cleared: the next prompt starts a new conversation, which reads AGENTS.md and the "
         f"skills catalog again. The workdir, the model, the permission mode ({session.mode}), "
         f"the rules, the hooks and plan mode ({'on' if session.plan_mode else 'off'}) stay; "
         f"the todo list is emptied.{where}]")


COMMANDS = {"/help": command_help, "/restart": command_restart, "/clear": command_clear,
            "/mode": command_mode, "/todos": command_todos, "/plan": command_plan,
            "/context": command_context, "/compact": command_compact,
            "/memory": command_memory, "/remember": command_remember,
            "/skills": command_skills}


def run_command(session, line):
    """A REPL command such as /mode accept_edits, or /NAME ARGS, which starts a skill."""
    name, _, argument = line.partition(" ")
    if name in COMMANDS:
        COMMANDS[name](session, argument.strip())
    elif (prompt := skill_prompt(session, line)) is not None:
        if prompt:  # "" when the skill was refused, with one line
            run_turn(session, prompt)
    else:
        skills = ", ".join(f"/{skill}" for skill in find_skills(session))
        also = f"; the skills: {skills} (/NAME ARGS starts one)" if skills else ""
        show(f"unknown command {name}; the commands are: {', '.join(COMMANDS)}{also}")


def repl(session):
    while True:
        try:
            line = read_line(f"{PROMPT_LABEL} >> ")
        except KeyboardInterrupt:  # Ctrl-C at the prompt clears the line
            continue
        if line is None or line.strip() in ("q", "quit", "exit"):
            return 0
        if line.strip().startswith("/"):
            run_command(session, line.strip())
        elif line.strip():
            run_turn(session, line.strip())


def main(argv=None):
    from dotenv import load_dotenv

    load_dotenv()
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        unanswerable = needs_a_key(args)
        if unanswerable:
            print(unanswerable, file=sys.stderr)
            return 2
        session, banner = make_session(args)
    except (ScriptError, SettingsError, OSError) as error:
        print(f"{CHAPTER}: {error}", file=sys.stderr)
        return 2
    if args.prompt is None:
        banner.append("/help lists the commands; q leaves.")
    for line in banner:
        show(line)
    if args.prompt is not None:
        if not args.prompt.strip():
            print(f"{CHAPTER}: the prompt is empty", file=sys.stderr)
            return 2
        prompt = args.prompt.strip()
        if prompt.startswith("/"):  # /NAME ARGS starts a skill; any other prompt goes as typed
            started = skill_prompt(session, prompt)
            if started == "":  # refused, with one line
                return 1
            prompt = started or prompt
        finished = run_turn(session, prompt)
        if isinstance(session.client, ScriptedModel) and session.client.off_script:
            # Offline, a prompt the script was not written for did not run: say how to run it.
            played = f"--script {args.script}" if args.script else "--offline"
            own = json.dumps(session.client.script["prompt"].strip(), ensure_ascii=False)
            show(f"[The script did not play: it was written for another prompt. To play it: "
                 f"{own_command(played, own)}]")
            return 1
        return 0 if finished else 1
    return repl(session)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # the output went into `head` or the like, which closed early
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
