"""An agent written from the lessons' "Build it yourself" sections alone (not from code.py).

It passes every stage of the checker (tests/test_stages.py). tests/stage_programs/mistakes.py
edits it, one learner's mistake at a time, into programs that each fail one check.
"""

import atexit
import fnmatch
import itertools
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import anthropic

client = anthropic.Anthropic()
MODEL = os.environ.get("MODEL_ID", "claude-sonnet-5-5")
WORKDIR = Path.cwd().resolve()
PLAN_FLAG = "--plan" in sys.argv[1:]
PROMPT = sys.argv[-1]


def flag(name, default):
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv[1:-1] else default


CLEAR_AT, COMPACT_AT, KEEP = flag("--clear-at", 100_000), flag("--compact-at", 160_000), 3
CLEARED = "[Cleared to save context: "
SUMMARISE = ("Summarise this conversation for yourself: it will be replaced by your summary. "
             "Keep the requests, what was done and found, and what is left.")
SETTINGS_FILE = WORKDIR / ".agent" / "settings.json"
SETTINGS = json.loads(SETTINGS_FILE.read_text()) if SETTINGS_FILE.exists() else {}
READ_ONLY = {"ls", "cat", "pwd", "head", "tail", "wc", "grep"}
STATUSES = ("pending", "in_progress", "completed")


def read_skills():
    """{name: (description, body, user_only)} of each .agent/skills/NAME/SKILL.md, the user's
    own (in HOME) first: on a clash of names it wins."""
    skills = {}
    for folder in (Path.home() / ".agent" / "skills", WORKDIR / ".agent" / "skills"):
        for path in sorted(folder.glob("*/SKILL.md")) if folder.is_dir() else []:
            text = path.read_text()
            fields, body = {}, text
            if text.startswith("---\n") and "\n---\n" in text[3:]:
                head, body = text[4:].split("\n---\n", 1)
                for line in head.splitlines():
                    key, _, value = line.partition(":")
                    fields[key.strip()] = value.strip()
            body = body.strip()
            description = fields.get("description") or body.split("\n\n")[0]
            user_only = fields.get("disable-model-invocation") == "true"
            skills.setdefault(fields.get("name") or path.parent.name,
                              (description, body, user_only))
    return skills


SKILLS = read_skills()
MODEL_SKILLS = [name for name, (_, _, user_only) in SKILLS.items() if not user_only]
CATALOG = "The skills (call skill with a name to load one):\n" + "\n".join(
    f"- {name}: {SKILLS[name][0]}" for name in MODEL_SKILLS)


class ToolError(Exception):
    pass


def tool(name, description, properties, required):
    return {"name": name, "description": description,
            "input_schema": {"type": "object", "properties": properties, "required": required}}


S = {"type": "string"}
TOOLS = [
    tool("bash", "Run a shell command.", {"command": S}, ["command"]),
    tool("read_file", "Read a file's lines.",
         {"path": S, "offset": {"type": "integer"}, "limit": {"type": "integer"}}, ["path"]),
    tool("write_file", "Write a whole file.", {"path": S, "content": S}, ["path", "content"]),
    tool("edit_file", "Replace old_string by new_string.",
         {"path": S, "old_string": S, "new_string": S, "replace_all": {"type": "boolean"}},
         ["path", "old_string", "new_string"]),
    tool("glob", "Find files.", {"pattern": S}, ["pattern"]),
    tool("todo_write", "Write the whole todo list.", {"todos": {"type": "array", "items": {
        "type": "object", "properties": {"content": S, "status": {"enum": list(STATUSES)},
                                         "activeForm": S}}}}, ["todos"]),
    tool("exit_plan_mode", "Submit the plan.", {"plan": S}, ["plan"]),
    tool("ask_user_question", "Ask the user.", {"questions": {"type": "array"}}, ["questions"]),
    tool("agent", "Hand a side task to a subagent.", {"description": S, "prompt": S},
         ["description", "prompt"]),
    tool("skill", CATALOG, {"name": S, "arguments": S}, ["name"]),
]
CHANGING = {"write_file", "edit_file"}
state = {"plan_mode": PLAN_FLAG, "todos": [], "child": False, "measured": None,
         "summarised": False, "asker": "", "approved": "", "skills": {}}
HIDDEN = {"agent", "todo_write", "exit_plan_mode", "ask_user_question", "skill"}  # a parent's
CHILD_SYSTEM = ("You are a subagent: another agent gave you one task. Do it, then end with a "
                "report: only your last message reaches that agent.")


def inside(path):
    target = (WORKDIR / path).resolve()
    if target != WORKDIR and WORKDIR not in target.parents:
        raise ToolError(f"{path} is outside the workdir")
    return target


def bash(command):
    run = subprocess.run(command, shell=True, cwd=WORKDIR, capture_output=True, text=True,
                         timeout=60)
    return f"{run.stdout}{run.stderr}[exit code {run.returncode}]"


def read_file(path, offset=1, limit=2000):
    lines = inside(path).read_text().splitlines()
    chosen = lines[offset - 1:offset - 1 + limit]
    return "\n".join(f"{number}\t{line}" for number, line in enumerate(chosen, offset))


def write_file(path, content):
    target = inside(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    return f"wrote {path}"


def edit_file(path, old_string, new_string, replace_all=False):
    target = inside(path)
    text = target.read_text()
    count = text.count(old_string)
    if count == 0 or (count > 1 and not replace_all):
        raise ToolError(f"old_string occurs {count} times in {path}")
    target.write_text(text.replace(old_string, new_string))
    return f"edited {path}"


def glob(pattern):
    return "\n".join(sorted(str(path.relative_to(WORKDIR)) for path in WORKDIR.glob(pattern)))


def todo_write(todos):
    for item in todos:
        if set(item) - {"content", "status", "activeForm"}:
            raise ToolError("unknown field")
        if item.get("status") not in STATUSES:
            raise ToolError(f"bad status {item.get('status')!r}")
        if not str(item.get("content", "")).strip():
            raise ToolError("empty content")
    if sum(item["status"] == "in_progress" for item in todos) > 1:
        raise ToolError("at most one item may be in_progress")
    state["todos"] = todos
    return "\n".join(f"[{item['status']}] {item['content']}" for item in todos)


def exit_plan_mode(plan):
    print(plan)
    answer = read("Approve this plan? [y] yes  [a] yes, accept edits  [n] no: ")
    if answer not in ("y", "a"):
        raise ToolError("The user rejected the plan. Plan mode stays on.")
    plans = WORKDIR / ".agent" / "plans"
    plans.mkdir(parents=True, exist_ok=True)
    (plans / "plan.md").write_text(plan)
    state["plan_mode"], state["approved"] = False, plan
    return "Approved. Plan mode is off."


def ask_user_question(questions):
    answers = []
    for item in questions:
        print(item["question"])
        for number, option in enumerate(item["options"], 1):
            print(f"  {number}. {option['label']}: {option['description']}")
        answer = read("> ")
        numbers = answer.replace(",", " ").split()
        if numbers and all(n.isdigit() and 1 <= int(n) <= len(item["options"]) for n in numbers):
            answer = ", ".join(item["options"][int(n) - 1]["label"] for n in numbers)
        answers.append(f"{item['question']} {answer}")
    return "\n".join(answers)


def fill(body, arguments):
    return body.replace("$ARGUMENTS", arguments)


def skill(name, arguments=""):
    if name not in MODEL_SKILLS:
        raise ToolError(f"No skill {name} for you; the skills: {', '.join(MODEL_SKILLS)}")
    if name in state["skills"]:
        return f"The skill {name} is loaded already, above."
    state["skills"][name] = fill(SKILLS[name][1], arguments)
    return state["skills"][name]


HANDLERS = {"bash": bash, "read_file": read_file, "write_file": write_file,
            "edit_file": edit_file, "glob": glob, "todo_write": todo_write,
            "exit_plan_mode": exit_plan_mode, "ask_user_question": ask_user_question,
            "skill": skill}
SUBJECT = {"bash": "command", "read_file": "path", "write_file": "path", "edit_file": "path",
           "glob": "pattern", "agent": "description"}


def read(question):
    try:
        return input(question).strip().lower()
    except EOFError:  # the end of input: no answer, which is a no
        return ""


def is_read_only(command):
    if re.search(r"[;&|<>`$]", command):
        return False
    words = shlex.split(command)
    return bool(words) and words[0] in READ_ONLY


def rule_matches(rule, name, tool_input):
    match = re.fullmatch(r"([\w-]+)(?:\((.*)\))?", rule)
    if not match or match[1] != name:
        return False
    subject = tool_input.get(SUBJECT.get(name), "")
    if SUBJECT.get(name) == "path":  # ./x, x and the absolute path are one file
        try:
            subject = str(inside(subject).relative_to(WORKDIR))
        except (ToolError, ValueError):
            pass
    return match[2] is None or fnmatch.fnmatchcase(subject, match[2])


def permitted(name, tool_input):
    rules = SETTINGS.get("permissions", {})
    subject = tool_input.get(SUBJECT.get(name, ""), "")
    if any(rule_matches(rule, name, tool_input) for rule in rules.get("deny", [])):
        raise ToolError(f"denied by a rule in .agent/settings.json: {name} {subject}")
    if state["plan_mode"] and (name in CHANGING or name == "bash" and not is_read_only(subject)):
        raise ToolError("Plan mode is on: read and plan only.")
    if changes_memory(name, tool_input):  # it steers every later session: always asks
        if read(f"Allow {name} {subject}? It changes AGENTS.md. [y/n] ") in ("y", "yes"):
            return
        raise ToolError("The user said no to a change of AGENTS.md.")
    if any(rule_matches(rule, name, tool_input) for rule in rules.get("allow", [])):
        return
    if name.startswith("mcp__") and read(f"Allow {name}? [y/n] ") not in ("y", "yes"):
        raise ToolError("The user said no.")
    if name in CHANGING or (name == "bash" and not is_read_only(subject)):
        if read(state["asker"] + f"Allow {name} {subject}? [y/n] ") not in ("y", "yes"):
            raise ToolError("The user said no.")


def changes_memory(name, tool_input):
    if name in CHANGING:
        return Path(str(tool_input.get("path", ""))).name.lower() == "agents.md"
    command = str(tool_input.get("command", ""))
    return name == "bash" and not is_read_only(command) and "agents.md" in command.lower()


def project_root():
    """The nearest folder at or above the workdir that holds .git; with none, the workdir."""
    for folder in (WORKDIR, *WORKDIR.parents):
        if (folder / ".git").exists():
            return folder
    return WORKDIR


def memory():
    """The AGENTS.md files, read now: ~/.agent's, then each folder's from the project root
    down to the workdir; one text block, each file after its path ([] with none)."""
    root = project_root()
    parts = WORKDIR.relative_to(root).parts
    folders = [root.joinpath(*parts[:depth]) for depth in range(len(parts) + 1)]
    files = [Path.home() / ".agent" / "AGENTS.md", *(folder / "AGENTS.md" for folder in folders)]
    found = [f"{path}:\n{path.read_text()}" for path in files if path.is_file()]
    return [{"type": "text", "text": "Instructions from AGENTS.md files.\n\n" + "\n".join(found)}
            ] if found else []


def with_memory(message):
    """A first user message with the AGENTS.md files before its text."""
    found = memory()
    if found:
        message["content"] = [*found, {"type": "text", "text": message["content"]}]


def run_hooks(event, **details):
    """(blocked, words): the first hook that exits 2 blocks; the others' contexts add up."""
    words = []
    for entry in SETTINGS.get("hooks", {}).get(event, []):
        tool_name = details.get("tool_name")
        if tool_name and not re.fullmatch(entry.get("matcher", "*").replace("*", ".*"),
                                          tool_name):
            continue
        payload = json.dumps({"hook_event_name": event, "cwd": str(WORKDIR), **details})
        try:
            run = subprocess.run(entry["command"], shell=True, cwd=WORKDIR, input=payload,
                                 capture_output=True, text=True, timeout=entry.get("timeout", 10))
        except subprocess.TimeoutExpired:  # stopped: a hook that failed, which decides nothing
            continue
        if run.returncode == 2:
            return True, run.stderr.strip()
        if run.returncode == 0 and run.stdout.strip():
            words.append(json.loads(run.stdout).get("context", ""))
    return False, "\n".join(words)


def run_tool(block):
    name, tool_input = block.name, block.input
    try:
        if name not in HANDLERS:
            raise ToolError(f"no tool named {name}")
        if state["child"] and name in HIDDEN:
            raise ToolError(f"a subagent cannot use {name}")
        blocked, words = run_hooks("PreToolUse", tool_name=name, tool_input=tool_input)
        if blocked:
            raise ToolError(f"Blocked by a PreToolUse hook: {words}")
        permitted(name, tool_input)
        content = HANDLERS[name](**tool_input)
        blocked, words = run_hooks("PostToolUse", tool_name=name, tool_input=tool_input)
        if words:
            content += "\n" + words
        return {"type": "tool_result", "tool_use_id": block.id, "content": content}
    except (ToolError, OSError, TypeError, ValueError) as error:
        return {"type": "tool_result", "tool_use_id": block.id, "content": str(error),
                "is_error": True}


def agent(description, prompt):
    """The same tools less HIDDEN, on a fresh history whose one message is the prompt; only the
    last text comes back, with a line of what it spent."""
    state["child"], state["asker"] = True, f"Subagent {description!r} asks: "
    history, calls = [{"role": "user", "content": prompt}], 0
    with_memory(history[0])  # the same files as the parent's
    parents = state["measured"], state["summarised"]
    state["measured"], state["summarised"] = None, False  # its own context, measured anew
    try:
        while True:
            hidden = HIDDEN | (CHANGING if state["plan_mode"] else set())
            offered = [tool for tool in TOOLS if tool["name"] not in hidden]
            try:
                if size(history) >= COMPACT_AT:
                    summarise(history, offered, prompt, CHILD_SYSTEM)
                reply = client.messages.create(
                    model=MODEL, max_tokens=8000, system=CHILD_SYSTEM, messages=history,
                    tools=offered)
            except anthropic.APIError as error:
                raise ToolError(f"The subagent {description} failed: {error}") from None
            calls += 1
            history.append({"role": "assistant", "content": reply.content})
            state["measured"] = (total_tokens(reply.usage), chars(history))
            if reply.stop_reason != "tool_use":
                break
            if calls == 20:
                raise ToolError(f"The subagent {description} reached its limit of 20 calls.")
            history.append({"role": "user", "content": [
                run_tool(block) for block in reply.content if block.type == "tool_use"]})
    finally:
        state["child"], state["asker"] = False, ""
        state["measured"], state["summarised"] = parents
    answer = "".join(block.text for block in reply.content if block.type == "text")
    return f"{answer}\n[subagent {description}: {calls} model calls]"


HANDLERS["agent"] = agent
SERVERS = []  # the MCP servers started, each a process
IDS = itertools.count(3)  # the ids of tools/call requests (1 and 2: the handshake's)


def rpc(process, message):
    """Send one JSON-RPC message, a line; for a request, read lines until its answer."""
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()
    while "id" in message:
        answer = json.loads(process.stdout.readline())
        if answer.get("id") == message["id"]:
            return answer
    return None


def mcp_tool(process, tool):
    def call(**arguments):
        answer = rpc(process, {"jsonrpc": "2.0", "id": next(IDS), "method": "tools/call",
                               "params": {"name": tool, "arguments": arguments}})
        result = answer.get("result") or {}
        words = "\n".join(item.get("text", "") for item in result.get("content", [])
                          if item.get("type") == "text")
        if answer.get("error") or result.get("isError"):
            raise ToolError(words or json.dumps(answer.get("error")))
        return words
    return call


def start_servers():
    """Each server of .mcp.json, asked first: the handshake, then its tools join TOOLS."""
    path = WORKDIR / ".mcp.json"
    servers = json.loads(path.read_text()).get("mcpServers", {}) if path.exists() else {}
    for server, entry in servers.items():
        command = [entry["command"], *entry.get("args", [])]
        if read(f"Start the MCP server {server}: {shlex.join(command)}? [y/n] ") not in ("y",
                                                                                       "yes"):
            continue
        process = subprocess.Popen(command, cwd=WORKDIR, text=True, stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE,
                                   env={**os.environ, **entry.get("env", {})})
        SERVERS.append(process)
        rpc(process, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "good", "version": "1"}}})
        rpc(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        listed = rpc(process, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        for found in listed["result"]["tools"]:
            full = f"mcp__{server}__{found['name']}"
            TOOLS.append({"name": full, "description": found.get("description", ""),
                          "input_schema": found["inputSchema"]})
            HANDLERS[full] = mcp_tool(process, found["name"])


def stop_servers():
    """Close each server's stdin, wait, then SIGTERM, then SIGKILL."""
    for process in SERVERS:
        process.stdin.close()
        for stop in (None, process.terminate, process.kill):
            if stop:
                stop()
            try:
                process.wait(timeout=1)
                break
            except subprocess.TimeoutExpired:
                continue


atexit.register(stop_servers)
start_servers()


def as_dict(block):
    return block if isinstance(block, dict) else block.model_dump(exclude_none=True)


def chars(history):
    return len(json.dumps([[as_dict(b) for b in m["content"]] if isinstance(m["content"], list)
                           else m["content"] for m in history]))


def size(history):
    """The last reply's usage, all four counts, and a token for 4 characters added since."""
    used, then = state["measured"] or (0, 0)
    return used + (chars(history) - then) // 4


def clear_old(history):
    """Every tool_result but the newest KEEP becomes one line; the ids stay."""
    calls = {block.id: block for message in history if message["role"] == "assistant"
             for block in message["content"] if not isinstance(block, dict)
             and block.type == "tool_use"}
    results = [block for message in history if message["role"] == "user"
               and isinstance(message["content"], list) for block in message["content"]
               if block.get("type") == "tool_result"]
    for result in results[:-KEEP]:
        call = calls.get(result["tool_use_id"])
        if call and call.name != "todo_write" and not str(result["content"]).startswith(CLEARED):
            subject = call.input.get(SUBJECT.get(call.name, ""), "")
            result["content"] = (f"{CLEARED}{call.name} {subject}, {len(result['content'])} "
                                 "characters]")


def summarise(history, offered, prompt=PROMPT, system=None):
    """The same system prompt, tools and history, the instruction last; then a new history from
    the summary. A summary request that is itself too long stops the program."""
    asked = [*history, {"role": "user", "content": [{"type": "text", "text": SUMMARISE}]}]
    if history[-1]["role"] == "user" and isinstance(history[-1]["content"], list):
        asked = [*history[:-1], {"role": "user", "content": [
            *history[-1]["content"], {"type": "text", "text": SUMMARISE}]}]
    more = {"system": system} if system else {}
    try:
        reply = client.messages.create(model=MODEL, max_tokens=8000, tools=offered,
                                       messages=asked, **more)
    except anthropic.BadRequestError as error:
        if too_long(error) and not state["child"]:
            sys.exit("[The summary request is too long too: stopping.]")
        raise
    summary = "".join(block.text for block in reply.content if block.type == "text")
    texts = [f"This conversation was summarised:\n{summary}"]
    if state["todos"] and not state["child"]:
        texts.append(f"Your todo list: {json.dumps(state['todos'])}")
    if state["approved"] and not state["child"]:  # approved in this run, none other
        texts.append(f"The plan the user approved:\n{state['approved']}")
    texts.append(f"The user's last prompt: {prompt}")
    if not state["child"]:
        texts += [f"The skill {name}, loaded before:\n{body}"
                  for name, body in state["skills"].items()]
    history[:] = [{"role": "user", "content": [{"type": "text", "text": t} for t in texts]}]
    history[0]["content"][:0] = memory()  # read again from disk
    state["measured"], state["summarised"] = None, True


def total_tokens(used):
    return sum(getattr(used, name, None) or 0 for name in (
        "input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
        "output_tokens"))


def too_long(error):
    return "prompt is too long" in str(error)


name, _, arguments = PROMPT[1:].partition(" ")
if PROMPT.startswith("/") and name in SKILLS:  # /NAME ARGS: the skill's body is the prompt
    PROMPT = fill(SKILLS[name][1], arguments)
messages = [{"role": "user", "content": PROMPT}]
with_memory(messages[0])
rounds_without_todo = 0
sent_back = 0
while True:
    offered = [tool for tool in TOOLS if not (state["plan_mode"] and tool["name"] in CHANGING)]
    if size(messages) >= COMPACT_AT:
        if not state["summarised"]:
            summarise(messages, offered)
        if size(messages) >= COMPACT_AT:  # still full after a summary: one line, and exit 1
            sys.exit("[The context is still full after a summary: stopping.]")
    elif size(messages) >= CLEAR_AT:
        clear_old(messages)
    try:
        response = client.messages.create(model=MODEL, max_tokens=8000, tools=offered,
                                          messages=messages)
    except anthropic.BadRequestError as error:
        if not too_long(error) or state["summarised"]:
            raise
        summarise(messages, offered)
        response = client.messages.create(model=MODEL, max_tokens=8000, tools=offered,
                                          messages=messages)
    total = total_tokens(response.usage)
    messages.append({"role": "assistant", "content": response.content})
    state["measured"] = (total, chars(messages))
    if total < COMPACT_AT:
        state["summarised"] = False
    if response.stop_reason != "tool_use":
        blocked, words = run_hooks("Stop")
        if blocked and sent_back < 3:
            sent_back += 1
            messages.append({"role": "user", "content": [{"type": "text", "text": words}]})
            continue
        break
    uses = [block for block in response.content if block.type == "tool_use"]
    results = [run_tool(block) for block in uses]
    extra = []
    if any(block.name == "todo_write" and not result.get("is_error")
           for block, result in zip(uses, results, strict=True)):
        rounds_without_todo = 0
    else:
        rounds_without_todo += 1
    if rounds_without_todo >= 3:
        extra = [{"type": "text", "text": "<reminder>Update your todos.</reminder>"}]
        rounds_without_todo = 0
    messages.append({"role": "user", "content": results + extra})
print("".join(block.text for block in response.content if block.type == "text"))
