"""The checks of each stage: a scripted exchange, then what the program must have done.

Each exchange is small enough to read: the Messages the loopback API answers with, in order,
the lines typed on stdin, the files the workdir starts with. The checks that follow it judge
the requests the program sent, the files it left, and (where a check is about it) what it
printed. Each stage's contract is its lesson's section "Build it yourself".

The answers on stdin: from s03 on, a program asks before a command that may change things,
so the exchanges of s01 and s02 type `y` enough times; a program that does not ask never
reads them.
"""

import json

from course.stages import Check, Exchange, Fail, blocks, cut

CHECKS = []


def check(stage, name, exchange, title):
    def register(judge):
        CHECKS.append(Check(stage, f"{stage}.{name}", exchange, title, judge))
        return judge
    return register


def text(words):
    return {"type": "text", "text": words}


def use(tool_id, name, **tool_input):
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


YES = "y\n" * 8
NOTES = {"notes.md": "alpha\nbeta\n"}


# ======================================================================
# s01: the loop, with bash
# ======================================================================

LOOP = Exchange("loop", "Run two commands, then one more.", [
    [text("Two at once."), use("toolu_s01_a", "bash", command="echo hello-from-bash"),
     use("toolu_s01_b", "bash", command="echo broken >&2; exit 37")],
    [use("toolu_s01_c", "bash", command="echo again")],
    [text("Done: FINAL-ANSWER-42")],
], stdin=YES)


@check("s01", "first_request", LOOP, "the prompt from argv is the first user message; bash "
       "is offered")
def _(run):
    first = run.request(1)
    messages = first.get("messages") or [{}]
    said = [block.get("text") for block in blocks(messages[0].get("content"))]
    if messages[0].get("role") != "user" or said[:1] != [run.exchange.prompt]:
        raise Fail(f"Request 1 starts with {cut(json.dumps(messages[0]))}; it should start "
                   f"with the user message {run.exchange.prompt!r}, the prompt from argv.")
    tools = {tool.get("name"): tool for tool in first.get("tools") or []}
    properties = tools.get("bash", {}).get("input_schema", {}).get("properties", {})
    if "command" not in properties:
        raise Fail(f"Request 1 offers the tools {sorted(tools)}; it should offer `bash`, "
                   "whose input_schema has the property `command`.")


@check("s01", "tool_results", LOOP, "each tool_use gets a tool_result with its id, all in the "
       "next user turn, before any other block")
def _(run):
    for reply, ids in ((1, ["toolu_s01_a", "toolu_s01_b"]), (2, ["toolu_s01_c"])):
        turn = run.turn_after(reply)
        answered = [block.get("tool_use_id") for block in turn
                    if block.get("type") == "tool_result"]
        if sorted(answered) != sorted(ids):
            raise Fail(f"Reply {reply} asked for the tool_use ids {ids}; the user turn of "
                       f"request {reply + 1} answers {answered}. Each tool_use needs one "
                       f"tool_result with its id, all in that one turn.")
        kinds = [block.get("type") for block in turn]
        if kinds[:len(ids)] != ["tool_result"] * len(ids):
            raise Fail(f"The user turn of request {reply + 1} holds {kinds}; the tool_result "
                       "blocks must come first, before any text.")


@check("s01", "bash_output", LOOP, "the command's output and its exit code go back to the "
       "model")
def _(run):
    run.ok(1, "toolu_s01_a", "hello-from-bash")
    said, _ = run.result(1, "toolu_s01_b")
    for part, what in (("broken", "its stderr"), ("37", "its exit code, 37")):
        if part not in said:
            raise Fail(f"The result of bash {{\"command\": \"echo broken >&2; exit 37\"}} is "
                       f"{cut(said)!r}; it should hold {what} (request 2).")


@check("s01", "history", LOOP, "every call sends the whole history")
def _(run):
    for number in (2, 3):
        before, now = run.request(number - 1)["messages"], run.request(number)["messages"]
        expected = plain(before) + [{"role": "assistant",
                                     "content": plain_blocks(run.exchange.replies[number - 2])}]
        if plain(now)[:len(expected)] != expected:
            raise Fail(f"Request {number} sends {len(now)} message(s), starting "
                       f"{cut(json.dumps(now), 120)}; it should start with the "
                       f"{len(before)} message(s) of request {number - 1}, then reply "
                       f"{number - 1} as the assistant turn, as it came.")


@check("s01", "failing_command", LOOP, "a failing command does not end the loop")
def _(run):
    if len(run.requests) < 3:
        raise Fail(f"After reply 1 (whose second command exits 37), your program sent "
                   f"{len(run.requests) - 1} more request(s) instead of 2: a failing "
                   f"command's output goes back to the model, and the loop goes on. "
                   f"{run.ending()}")


@check("s01", "final_text", LOOP, "the final text is printed, and the program exits 0")
def _(run):
    run.printed("FINAL-ANSWER-42", why="the text of the last reply should be printed")
    run.exited_well()


def plain(messages):
    return [{"role": message.get("role"), "content": plain_blocks(message.get("content"))}
            for message in messages]


def plain_blocks(content):
    """The blocks as the API reads them: only the fields that matter, None fields dropped."""
    keep = {"text": ("text",), "tool_use": ("id", "name", "input"),
            "tool_result": ("tool_use_id", "content", "is_error")}
    return [{"type": block.get("type"),
             **{key: block[key] for key in keep.get(block.get("type"), ())
                if block.get(key) not in (None, False)}}
            for block in blocks(content)]


# ======================================================================
# s02: the file tools, and the workspace guard
# ======================================================================

def outside(root):
    """A file and a folder beside the workdir, and a symlink from the workdir to that folder."""
    (root / "outside.txt").write_text("outside\n")
    (root / "elsewhere").mkdir()
    (root / "work" / "link").symlink_to(root / "elsewhere")


FILES = Exchange("files", "Read, write, edit, find.", [
    [use("toolu_s02_read", "read_file", path="notes.md"),
     use("toolu_s02_write", "write_file", path="docs/new.txt", content="made by write_file\n"),
     use("toolu_s02_edit", "edit_file", path="notes.md", old_string="beta", new_string="gamma"),
     use("toolu_s02_glob", "glob", pattern="*.md")],
    [use("toolu_s02_part", "read_file", path="notes.md", offset=2, limit=1)],
    [use("toolu_s02_up", "read_file", path="../outside.txt"),
     use("toolu_s02_upwrite", "write_file", path="../escape.txt", content="x"),
     use("toolu_s02_abs", "read_file", path="{root}/outside.txt"),
     use("toolu_s02_link", "write_file", path="link/x.txt", content="x"),
     use("toolu_s02_upedit", "edit_file", path="../outside.txt", old_string="outside",
         new_string="changed")],
    [use("toolu_s02_unknown", "teleport", to="mars"),
     {"type": "tool_use", "id": "toolu_s02_nocontent", "name": "write_file",
      "input": {"path": "half.txt"}},
     use("toolu_s02_missing", "read_file", path="missing.txt"),
     use("toolu_s02_notfound", "edit_file", path="notes.md", old_string="omega",
         new_string="x")],
    [text("FILES-DONE")],
], stdin=YES, files=NOTES, setup=outside)

TOOL_FIELDS = {"read_file": ["path", "offset", "limit"], "write_file": ["path", "content"],
               "edit_file": ["path", "old_string", "new_string", "replace_all"],
               "glob": ["pattern"]}


@check("s02", "tools_offered", FILES, "read_file, write_file, edit_file and glob are offered, "
       "with the course's fields")
def _(run):
    tools = {tool.get("name"): tool for tool in run.request(1).get("tools") or []}
    for name, fields in TOOL_FIELDS.items():
        have = sorted(tools.get(name, {}).get("input_schema", {}).get("properties", {}))
        if name not in tools or not set(fields) <= set(have):
            shown = f"offers {name} with the properties {have}" if name in tools else (
                f"does not offer {name}")
            raise Fail(f"Request 1 {shown}; it should offer {name} with the properties "
                       f"{fields}.")


@check("s02", "read_file", FILES, "read_file returns the file's lines; offset (from 1) and "
       "limit choose some")
def _(run):
    run.ok(1, "toolu_s02_read", "alpha", "beta")
    part = run.ok(2, "toolu_s02_part", "gamma")
    if "alpha" in part:
        raise Fail(f"read_file {{\"path\": \"notes.md\", \"offset\": 2, \"limit\": 1}} returned "
                   f"{cut(part)!r}; it should return line 2 only (request 3).")


@check("s02", "write_file", FILES, "write_file writes the whole file, making its folders")
def _(run):
    run.ok(1, "toolu_s02_write")
    if run.file("docs/new.txt") != "made by write_file\n":
        raise Fail(f"After write_file, docs/new.txt holds {run.file('docs/new.txt')!r}; it "
                   "should hold 'made by write_file\\n'.")


@check("s02", "edit_file", FILES, "edit_file replaces old_string, found once, by new_string")
def _(run):
    run.ok(1, "toolu_s02_edit")
    if run.file("notes.md") != "alpha\ngamma\n":
        raise Fail(f"After edit_file beta -> gamma, notes.md holds {run.file('notes.md')!r}; "
                   "it should hold 'alpha\\ngamma\\n'.")


@check("s02", "glob", FILES, "glob returns the paths that match the pattern")
def _(run):
    found = run.ok(1, "toolu_s02_glob", "notes.md")
    if "new.txt" in found:
        raise Fail(f"glob {{\"pattern\": \"*.md\"}} returned {cut(found)!r}; docs/new.txt does "
                   "not match *.md (request 2).")


@check("s02", "outside_paths", FILES, "a path out of the workdir (.., absolute, a symlink out) "
       "is an is_error result and touches nothing")
def _(run):
    for tool_id in ("toolu_s02_up", "toolu_s02_upwrite", "toolu_s02_abs", "toolu_s02_link",
                    "toolu_s02_upedit"):
        run.refused(3, tool_id, "the path leads out of the workdir")
    for name, expected in (("outside.txt", "outside\n"), ("escape.txt", None),
                           ("elsewhere/x.txt", None)):
        target = run.root / name
        now = target.read_text() if target.exists() else None
        if now != expected:
            raise Fail(f"Beside the workdir, {name} now holds {now!r}; nothing outside the "
                       "workdir may change.")


@check("s02", "bad_calls", FILES, "an unknown tool or a bad input is an is_error result, and "
       "the loop goes on")
def _(run):
    run.refused(4, "toolu_s02_unknown", "there is no tool teleport")
    run.refused(4, "toolu_s02_nocontent", "write_file needs content")
    run.refused(4, "toolu_s02_missing", "missing.txt does not exist")
    run.refused(4, "toolu_s02_notfound", "old_string is not in notes.md")
    if run.file("half.txt") is not None:
        raise Fail("write_file without content created half.txt; a bad input touches nothing.")
    run.printed("FILES-DONE", why="the loop should go on after the errors, to the last reply")
    run.exited_well()


# ======================================================================
# s03: a question before a change
# ======================================================================

DENY = {".agent/settings.json": json.dumps({"permissions": {"deny": ["write_file(secret.txt)"]}})}

ASK_YES = Exchange("ask_yes", "Change some files.", [
    [use("toolu_s03_secret", "write_file", path="secret.txt", content="s"),
     use("toolu_s03_write", "write_file", path="a.txt", content="A\n"),
     use("toolu_s03_edit", "edit_file", path="notes.md", old_string="beta", new_string="gamma"),
     use("toolu_s03_touch", "bash", command="touch made.txt")],
    [text("Changed.")],
], stdin="y\n" * 4, files={**NOTES, **DENY})


@check("s03", "yes_runs", ASK_YES, "y to the question runs the call")
def _(run):
    for tool_id in ("toolu_s03_write", "toolu_s03_edit", "toolu_s03_touch"):
        run.ok(1, tool_id)
    for name, expected in (("a.txt", "A\n"), ("notes.md", "alpha\ngamma\n"), ("made.txt", "")):
        if run.file(name) != expected:
            raise Fail(f"After y, {name} holds {run.file(name)!r}; it should hold {expected!r}.")


@check("s03", "question_shows_call", ASK_YES, "the question shows the path or the command")
def _(run):
    run.printed("a.txt", "notes.md", "touch made.txt",
                why="a question must show the path, or the whole command, that it asks about")


@check("s03", "deny_rule", ASK_YES, "a deny rule in .agent/settings.json refuses the call, "
       "without asking")
def _(run):
    run.refused(1, "toolu_s03_secret", 'the rule "write_file(secret.txt)" denies it')
    if run.file("secret.txt") is not None:
        raise Fail("secret.txt was written; the deny rule write_file(secret.txt) forbids it.")


ALLOW = {".agent/settings.json": json.dumps(
    {"permissions": {"allow": ["bash(touch allowed.txt)"]}})}

# The calls that must not ask come first: a program that asks there reads the n.
ASK_NO = Exchange("ask_no", "Look around, and change things if you may.", [
    [use("toolu_s03_read", "read_file", path="notes.md"),
     use("toolu_s03_ls", "bash", command="ls"),
     use("toolu_s03_cat", "bash", command="cat notes.md"),
     use("toolu_s03_allowed", "bash", command="touch allowed.txt"),
     use("toolu_s03_no", "write_file", path="b.txt", content="B\n"),
     use("toolu_s03_eof", "edit_file", path="notes.md", old_string="beta", new_string="gamma"),
     use("toolu_s03_rm", "bash", command="rm notes.md")],
    [text("Looked; changed nothing.")],
], stdin="n\n", files={**NOTES, **ALLOW})


@check("s03", "no_refuses", ASK_NO, "n to the question: the call does not run, is_error")
def _(run):
    run.refused(1, "toolu_s03_no", "the user answered n")
    if run.file("b.txt") is not None:
        raise Fail("b.txt was written although the user answered n.")


@check("s03", "eof_refuses", ASK_NO, "no answer at all (EOF): the call does not run, is_error")
def _(run):
    run.refused(1, "toolu_s03_eof", "stdin had ended (EOF), which counts as no")
    run.refused(1, "toolu_s03_rm", "stdin had ended (EOF), which counts as no")
    if run.file("notes.md") != NOTES["notes.md"]:
        raise Fail(f"notes.md now holds {run.file('notes.md')!r}, although stdin had ended "
                   "(EOF counts as no).")


@check("s03", "reads_run", ASK_NO, "read_file and a read-only command (ls, cat notes.md) "
       "run without asking")
def _(run):
    run.ok(1, "toolu_s03_read", "alpha")
    run.ok(1, "toolu_s03_ls", "notes.md")
    run.ok(1, "toolu_s03_cat", "alpha")


@check("s03", "allow_rule", ASK_NO, "an allow rule spares the question")
def _(run):
    run.ok(1, "toolu_s03_allowed")
    if run.file("allowed.txt") is None:
        raise Fail("touch allowed.txt did not run (stdin was empty); the allow rule "
                   "bash(touch allowed.txt) should let it run without a question.")


# ======================================================================
# s04: command hooks
# ======================================================================

HOOKS = {".agent/settings.json": json.dumps({"hooks": {
    "PreToolUse": [{"matcher": "bash", "command":
                    "cat > .agent/pre-event.json; if grep -q forbidden .agent/pre-event.json; "
                    "then echo 'PRE-HOOK: no forbidden files' >&2; exit 2; fi"}],
    "PostToolUse": [{"matcher": "bash", "command": "echo '{\"context\": \"POST-NOTE-7\"}'"}],
    "Stop": [{"command": "test -e .agent/stopped && exit 0; touch .agent/stopped; "
                         "echo 'STOP-HOOK: run the tests first' >&2; exit 2"}],
}})}

HOOKED = Exchange("hooks", "Work, with hooks watching.", [
    [use("toolu_s04_ls", "bash", command="ls"),
     use("toolu_s04_touch", "bash", command="touch forbidden.txt")],
    [text("All done.")],
    [text("Tests run. STOP-FINAL")],
], stdin="y\n" * 2, files=HOOKS)


@check("s04", "hook_stdin", HOOKED, "a hook gets the event's JSON on stdin")
def _(run):
    said = run.file(".agent/pre-event.json")
    try:
        event = json.loads(said or "")
    except ValueError:
        raise Fail(f"The PreToolUse hook saved its stdin as {cut(said)!r}; it should be the "
                   "event as JSON (hook_event_name, tool_name, tool_input).") from None
    expected = {"hook_event_name": "PreToolUse", "tool_name": "bash",
                "tool_input": {"command": "touch forbidden.txt"}}
    got = {key: event.get(key) for key in expected} if isinstance(event, dict) else event
    if got != expected:
        raise Fail(f"The PreToolUse hook got {cut(json.dumps(event))}; it should get at least "
                   f"{json.dumps(expected)}.")


@check("s04", "pre_tool_use_blocks", HOOKED, "a PreToolUse hook that exits 2 blocks the call; "
       "its stderr reaches the model")
def _(run):
    said = run.refused(1, "toolu_s04_touch", "a PreToolUse hook exited 2")
    if "PRE-HOOK: no forbidden files" not in said:
        raise Fail(f"The blocked call's result is {cut(said)!r}; it should hold the hook's "
                   "stderr, 'PRE-HOOK: no forbidden files'.")
    if run.file("forbidden.txt") is not None:
        raise Fail("touch forbidden.txt ran, although its PreToolUse hook exited 2.")


@check("s04", "post_tool_use_output", HOOKED, "a PostToolUse hook's output reaches the model "
       "with the result")
def _(run):
    turn = run.turn_after(1)
    if "POST-NOTE-7" not in json.dumps(turn):
        raise Fail(f'The PostToolUse hook printed {{"context": "POST-NOTE-7"}} after ls; the '
                   f"user turn of request 2 should carry POST-NOTE-7 with the result. That "
                   f"turn: {cut(json.dumps(turn))}")


@check("s04", "stop_hook", HOOKED, "a Stop hook that exits 2 sends the model back to work")
def _(run):
    if len(run.requests) < 3:
        raise Fail("After reply 2 ended the turn, the Stop hook exited 2; your program "
                   f"should have sent request 3, with the hook's stderr, but it sent "
                   f"{len(run.requests)} requests. {run.ending()}")
    turn = run.turn_after(2)
    if "STOP-HOOK: run the tests first" not in json.dumps(turn):
        raise Fail("After reply 2 ended the turn, the Stop hook exited 2; request 3 should "
                   "end with a user turn that holds its stderr, 'STOP-HOOK: run the tests "
                   f"first'. That turn: {cut(json.dumps(turn))}")
    run.printed("STOP-FINAL", why="the turn ends with reply 3, once the Stop hook exits 0")
    run.exited_well()


# ======================================================================
# s05: todo_write, and the reminder
# ======================================================================

def todo(content, status, **more):
    return {"content": content, "status": status, **more}


GOOD_LIST = [todo("Read the notes", "in_progress", activeForm="Reading the notes"),
             todo("Write the summary", "pending")]
DONE_LIST = [todo("Read the notes", "completed"), todo("Write the summary", "in_progress")]

TODOS = Exchange("todos", "Plan, then work.", [
    [use("toolu_s05_1", "todo_write", todos=GOOD_LIST)],
    [use("toolu_s05_2", "bash", command="ls")],
    [use("toolu_s05_3", "todo_write", todos=[todo("A", "in_progress"), todo("B", "in_progress")])],
    [use("toolu_s05_4", "todo_write", todos=[todo("A", "started")])],
    [use("toolu_s05_5", "todo_write", todos=[todo("", "pending")])],
    [use("toolu_s05_6", "todo_write", todos=DONE_LIST)],
    [use("toolu_s05_7", "bash", command="ls")],
    [text("Planned.")],
], stdin=YES, files=NOTES)
REMINDED = 4  # the round after which the reminder is due: rounds 2, 3 and 4 had no success


@check("s05", "valid_list", TODOS, "todo_write takes a valid list")
def _(run):
    properties = {}
    for tool in run.request(1).get("tools") or []:
        if tool.get("name") == "todo_write":
            properties = tool.get("input_schema", {}).get("properties", {})
    if "todos" not in properties:
        raise Fail(f"Request 1 offers the tools {run.tools(1)}; it should offer todo_write, "
                   "whose input_schema has the property `todos`.")
    run.ok(1, "toolu_s05_1")
    run.ok(6, "toolu_s05_6")


@check("s05", "invalid_list", TODOS, "an invalid list (two in_progress, a bad status, an empty "
       "content) is an is_error result")
def _(run):
    run.refused(3, "toolu_s05_3", "two items are in_progress")
    run.refused(4, "toolu_s05_4", "'started' is not a status")
    run.refused(5, "toolu_s05_5", "the content is empty")


def reminders(run, reply):
    """Where in the user turn after `reply` a text block mentions todos: 'after', 'before'."""
    turn = run.turn_after(reply)
    kinds = [block.get("type") for block in turn]
    places = []
    for place, block in enumerate(turn):
        if block.get("type") == "text" and "todo" in block.get("text", "").lower():
            places.append("after" if "tool_result" not in kinds[place:] else "before")
    return places


@check("s05", "reminder_after_results", TODOS, "the reminder is a text block after the tool "
       "results, in their user turn")
def _(run):
    places = reminders(run, REMINDED)
    if places != ["after"]:
        raise Fail(f"The user turn of request {REMINDED + 1} holds {places.count('after')} "
                   f"text block(s) about todos after the tool results and "
                   f"{places.count('before')} before them; it should end with one reminder, "
                   f"after the results. That turn: {cut(json.dumps(run.turn_after(REMINDED)))}")


@check("s05", "reminder_count", TODOS, "the reminder comes after three tool rounds without a "
       "successful todo_write; only a success resets the count")
def _(run):
    early = [reply for reply in range(1, 8) if reply != REMINDED and reminders(run, reply)]
    if early:
        raise Fail(f"A reminder came in the user turn of request {early[0] + 1}; it is due "
                   f"only in request {REMINDED + 1}: rounds 2 to 4 had no successful "
                   "todo_write (the failed ones do not count), round 1 and 6 had one.")
    if not reminders(run, REMINDED):
        raise Fail(f"No reminder came in request {REMINDED + 1}; rounds 2, 3 and 4 had no "
                   "successful todo_write (a failed one does not reset the count).")


# ======================================================================
# s06: plan mode, and asking the user
# ======================================================================

PLAN = "# Plan\n\n1. Write PLAN-LINE-x.txt\n"
CHANGING = ("write_file", "edit_file")

PLAN_YES = Exchange("plan_yes", "Plan first, then change.", [
    [use("toolu_s06_write", "write_file", path="x.txt", content="x"),
     use("toolu_s06_touch", "bash", command="touch y.txt")],
    [use("toolu_s06_exit", "exit_plan_mode", plan=PLAN)],
    [text("Approved; starting.")],
], stdin="y\n", files=NOTES, args=("--plan",))


@check("s06", "plan_tools", PLAN_YES, "--plan starts in plan mode: write_file and edit_file "
       "are not offered")
def _(run):
    offered = run.tools(1)
    if any(name in offered for name in CHANGING) or "exit_plan_mode" not in offered:
        raise Fail(f"With --plan, request 1 offers {offered}; it should offer exit_plan_mode "
                   "and the reading tools, and not write_file or edit_file.")


@check("s06", "plan_refuses", PLAN_YES, "in plan mode a changing call that comes anyway is "
       "refused")
def _(run):
    run.refused(1, "toolu_s06_write", "plan mode refuses a write")
    run.refused(1, "toolu_s06_touch", "plan mode refuses a command that changes things")
    for name in ("x.txt", "y.txt"):
        if run.file(name) is not None:
            raise Fail(f"{name} was created in plan mode; plan mode changes nothing.")


@check("s06", "plan_approved", PLAN_YES, "exit_plan_mode shows the plan and asks; y writes it "
       "under .agent/plans/ and the changing tools come back")
def _(run):
    run.printed("PLAN-LINE-x.txt", why="exit_plan_mode shows the plan before it asks")
    run.ok(2, "toolu_s06_exit")
    folder = run.workdir / ".agent" / "plans"
    plans = sorted(folder.iterdir()) if folder.is_dir() else []
    if len(plans) != 1 or plans[0].read_text(errors="replace").strip() != PLAN.strip():
        said = plans[0].read_text(errors="replace") if len(plans) == 1 else None
        raise Fail(f".agent/plans/ holds {[plan.name for plan in plans]}"
                   f"{f' ({cut(said)!r})' if said else ''}; after y it should hold one file "
                   "with the plan.")
    offered = run.tools(3)
    if not all(name in offered for name in CHANGING):
        raise Fail(f"After y, request 3 offers {offered}; write_file and edit_file should "
                   "come back.")


QUESTIONS = [
    {"question": "Which database?", "header": "Database", "multiSelect": False,
     "options": [{"label": "SQLite", "description": "One file."},
                 {"label": "Postgres", "description": "A server."}]},
    {"question": "What name?", "header": "Name", "multiSelect": False,
     "options": [{"label": "app", "description": "Short."},
                 {"label": "tool", "description": "Shorter."}]},
]

# Two answers to the questions, then n to the plan. The y after it is for a program that
# wrongly leaves plan mode on n, and then asks before the write that follows.
PLAN_NO = Exchange("plan_no", "Ask me, plan, and hear no.", [
    [use("toolu_s06_ask", "ask_user_question", questions=QUESTIONS)],
    [use("toolu_s06_rejected", "exit_plan_mode", plan=PLAN),
     use("toolu_s06_after", "write_file", path="x.txt", content="x")],
    [text("I will wait.")],
], stdin="2\nmy own words\nn\ny\n", files=NOTES, args=("--plan",))


@check("s06", "plan_rejected", PLAN_NO, "n keeps plan mode: no plan file, no change; the turn "
       "ends, or the model gets an is_error result")
def _(run):
    folder = run.workdir / ".agent" / "plans"
    if folder.is_dir() and any(folder.iterdir()):
        raise Fail(f"After n, .agent/plans/ holds {sorted(p.name for p in folder.iterdir())}; "
                   "a rejected plan is not saved.")
    if run.file("x.txt") is not None:
        raise Fail("After n, the write_file in the same reply created x.txt; plan mode stays "
                   "on, so it is refused.")
    if len(run.requests) >= 3:  # the program went on after the rejection: what did it say?
        run.refused(2, "toolu_s06_rejected", "the user answered n")
        offered = run.tools(3)
        if any(name in offered for name in CHANGING):
            raise Fail(f"After n, request 3 offers {offered}; plan mode stays on, so not "
                       "write_file or edit_file.")


@check("s06", "ask_user_question", PLAN_NO, "ask_user_question shows the questions and returns "
       "the answers typed (a number picks an option)")
def _(run):
    run.printed("Which database?", "SQLite", "Postgres", "What name?",
                why="ask_user_question shows each question with its options")
    run.ok(1, "toolu_s06_ask", "Postgres", "my own words")
