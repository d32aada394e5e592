"""s04_hooks: the user's own code at fixed points of the loop.

A harness cannot know every rule a team wants ("never curl", "run the tests
before you say done"). Hooks let the user plug code into fixed points of the
loop. A hook sees the event as JSON, and may block it or add to it.

    prompt --> [UserPromptSubmit] --> model --> tool_use
                 block / add context              |
                                         [PreToolUse]  block (the model sees why)
                                                  |
                                         permission check (s03)
                                                  |
                                             run the tool
                                                  |
                                         [PostToolUse] add feedback to the result
                                                  |
               model says it is done --> [Stop]  block: back to work, with a
                                                 reason (at most 3 times in a row)

New: the four events, add_hook(), command hooks, and an example hook that tells
the model at once when a Python file it wrote no longer parses.

Run it:  .venv/bin/python s04_hooks/code.py --offline
         (a REPL: type the prompt that the banner suggests; q leaves)
"""

import argparse
import contextlib
import copy
import fnmatch
import glob
import itertools
import json
import logging
import os
import re
import select
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
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
        "what you did."
    )


# ======================================================================
# THE AGENT LOOP
# ======================================================================

def agent_loop(session):
    """Call the model until it stops asking for tools; return its last text."""
    sent_back = []  # the answers Stop hooks sent the model back from, in a row
    for _ in range(session.max_calls):  # a model that never stops asking for tools stops here
        response = call_model(session, build_request(session))
        content = [block_to_dict(block) for block in response.content if not is_blank(block)]
        if content:
            add_assistant_blocks(session.messages, content)
        text = "\n".join(block["text"] for block in content if block["type"] == "text")
        if text:
            show(text)
        tool_uses = [block for block in content if block["type"] == "tool_use"]
        if response.stop_reason == "tool_use" and tool_uses:
            add_user_blocks(session.messages, run_tools(session, tool_uses))
            continue
        if response.stop_reason == "pause_turn" and content and not tool_uses:
            continue  # the API paused a long turn: sent back as it is, the model goes on with it
        finish_reply(session, response, tool_uses)  # raises TurnStopped if the turn went wrong
        if stop_hook_sends_back(session, text, sent_back):
            continue
        return text
    raise TurnStopped(f"[The turn reached its call limit (--max-calls {session.max_calls}): "
                      "send a prompt to go on.]")


def run_tools(session, tool_uses):
    """Run each tool_use in order; return one tool_result for each.

    If Ctrl-C stops a tool, every call still gets a result, so that the
    history stays valid, and the interrupt goes on up to the caller.
    """
    results = []
    try:
        for block in tool_uses:
            show(f"> {call_summary(block)}", 2)
            result = run_tool(session, block)
            show(("error: " if result.get("is_error") else "") + preview(result["content"]), 4)
            results.append(result)
    except KeyboardInterrupt:
        for block in tool_uses[len(results):]:
            results.append(tool_result(block["id"], "Interrupted by the user.", is_error=True))
        add_user_blocks(session.messages, results)
        raise
    return results


def run_turn(session, prompt):
    """Send one user prompt and work until the model is done. True if it finished."""
    before = copy.deepcopy(session.messages)
    forget = False  # a refused prompt, or one that made the conversation too long, must not stay
    try:
        hooked = run_hooks(session, "UserPromptSubmit", prompt=prompt)
        if hooked["decision"] == "block":
            show(f"[A UserPromptSubmit hook blocked this prompt: {hooked['reason']}]")
            return False
        blocks = [{"type": "text", "text": prompt}]
        if hooked["context"]:
            context = hook_text("UserPromptSubmit", hooked["context"])
            blocks.append({"type": "text", "text": context})
        add_user_blocks(session.messages, blocks)
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
    if forget:
        forget_turn(session, before)
    if assistant_turns(session.messages) == assistant_turns(before):
        # The model never answered: forget the prompt, so that it can be sent again.
        session.messages[:] = before
    return False


# The steps of the loop, in its order: the request it sends, a reply's blocks as the history
# keeps them, the turns the history grows by, and how a reply that did not stop for tools
# ends the turn.
def build_request(session):
    system = system_prompt(session.workdir)
    if session.live:  # the tools and this prompt begin every request: the API may cache them
        system = [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
    return {
        "model": session.model,
        "max_tokens": MAX_TOKENS,
        "system": system,
        "tools": TOOLS,
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
    """Run one tool_use block and return its tool_result. Never raises."""
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
    show(f"? allow {describe_call(block)}", 2)
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
SAFE_TOOLS = {"read_file", "glob"}  # they change nothing: they run in every mode
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

HOOK_EVENTS = ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
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
    STOP_HOOK_LIMIT times the turn ends anyway."""
    hooked = run_hooks(session, "Stop", stop_hook_active=bool(sent_back), last_message=text)
    if hooked["decision"] != "block":
        return False
    if sent_back and text == sent_back[-1]:
        show("[A Stop hook asked again, and the model gave the same answer as before: "
             "sending it back once more would only repeat it. The turn ends.]")
        return False
    if len(sent_back) >= STOP_HOOK_LIMIT:
        show(f"[A Stop hook asked again; after {STOP_HOOK_LIMIT} times in a row "
             "the turn ends anyway.]")
        return False
    sent_back.append(text)
    show(f"[A Stop hook sends the model back to work: {hooked['reason']}]")
    again = hook_text("Stop", hooked["reason"])
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


def call_model(session, request):
    """One model call. With --trace, append exactly what was sent and received."""
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
        record = {"request": request, "response": traced.to_dict(mode="json")}
        with open(session.trace, "a", encoding="utf-8") as trace:
            trace.write(json.dumps(record) + "\n")
    if session.live:
        show_usage(getattr(response, "usage", None))
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


def show_usage(usage):
    """One faint line after a live call: the tokens in (of them, read from the prompt cache and
    written to it) and out. The trace keeps the usage exactly as the API sent it."""
    def count(name):
        return usage_count(usage, name) or 0

    read, written = count("cache_read_input_tokens"), count("cache_creation_input_tokens")
    line = (f"  [tokens: {count('input_tokens') + read + written:,} in ({read:,} read from the "
            f"cache, {written:,} written to it), {count('output_tokens'):,} out]")
    if any(usage_count(usage, name) is None for name in ("input_tokens", "output_tokens")):
        line = "  [tokens: the reply did not say how many]"
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
        "stop_sequence": None, "usage": {"input_tokens": 0, "output_tokens": 0},
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
    """What the user typed in a user turn: its first text block (notes and reminders follow)."""
    if isinstance(message["content"], str):
        return message["content"].strip()
    texts = [block["text"] for block in message["content"] if block.get("type") == "text"]
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
                      args=args)
    add_hook(session, "PostToolUse", check_python_syntax, matcher="write_file|edit_file")
    load_command_hooks(session)
    banner.append("hooks: " + ", ".join(f"{hook.event}[{hook.matcher}]" for hook in session.hooks))
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
    show(f"[Restarted: {what}, with a new history; workdir: {session.workdir}]")


def command_clear(session, argument):
    """/clear starts a new conversation; the rest of the session stays as it is."""
    session.conversation = Conversation()
    where = ""
    if isinstance(session.client, ScriptedModel):
        where = " The script goes on where it was (/restart plays it from its start)."
    show(f"[Cleared: the next prompt starts a new conversation. The workdir, the model, "
         f"the permission mode ({session.mode}), the rules and the hooks stay.{where}]")


COMMANDS = {"/help": command_help, "/restart": command_restart, "/clear": command_clear,
            "/mode": command_mode}


def run_command(session, line):
    """A REPL command such as /mode accept_edits."""
    name, _, argument = line.partition(" ")
    if name in COMMANDS:
        COMMANDS[name](session, argument.strip())
    else:
        show(f"unknown command {name}; the commands are: {', '.join(COMMANDS)}")


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
        finished = run_turn(session, args.prompt.strip())
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
