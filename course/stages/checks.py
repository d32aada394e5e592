"""The checks of each stage: a scripted exchange, then what the program must have done.

Each exchange is small enough to read: the Messages the loopback API answers with, in order,
the lines typed on stdin, the files the workdir starts with. The checks that follow it judge
the requests the program sent, the files it left, and (where a check is about it) what it
printed. Each stage's contract is its lesson's section "Build it yourself"; every rule it
states has a check here, and a program that breaks the rule fails that check
(tests/stage_programs/mistakes.py holds one such program per check).

`<<name>>` is a value drawn for each run (course.stages.Draw): a word such as notes-qwerty, a
number (`<<n_...>>`), a tool_use id (`use("a", ...)` gets `<<id_a>>`). A judge names a call
by its key ("a") and fills `<<name>>`s with `run.v(...)`.

The answers on stdin: from s03 on, a program asks before a command that may change things,
so the exchanges of s01 and s02 type `y` enough times; a program that does not ask never
reads them. The cases of "read-only" are ones nobody disputes: `ls` and `cat FILE` inside the
workdir read; `touch`, `rm`, a redirection and any chain that holds one of them change.
"""

import json
import re

from course.stages import Check, Exchange, Fail, block_text, blocks, cut

CHECKS = []


def check(stage, name, exchange, title, follows=()):
    def register(judge):
        CHECKS.append(Check(stage, f"{stage}.{name}", exchange, title, judge,
                            tuple(n if "." in n else f"{stage}.{n}" for n in follows)))
        return judge
    return register


def text(words):
    return {"type": "text", "text": words}


def use(key, name, **tool_input):
    return {"type": "tool_use", "id": f"<<id_{key}>>", "name": name, "input": tool_input}


YES = "y\n" * 10
NOTES = {"<<notes>>.md": "<<alpha>>\n<<beta>>\n"}


# ======================================================================
# s01: the loop, with bash
# ======================================================================

# Each command's output must be computed: a pipe, stderr and an exit code, a file in the
# current folder. A program that does not run a shell cannot know any of them.
LOOP = Exchange("loop", "Run two commands, then one more (<<prompt>>).", [
    [text("Two at once."), use("a", "bash", command="echo <<shout>> | tr a-z A-Z"),
     use("b", "bash", command="echo <<broken>> >&2; exit <<n_code>>")],
    [use("c", "bash", command="cat <<data>>.txt")],
    [text("Done: <<final>>")],
], stdin=YES, files={"<<data>>.txt": "<<content>>\n"})


def loop_outputs(run):
    """What the result of each call of LOOP must hold."""
    return {"a": run.v("<<shout>>").upper(), "b": run.v("<<broken>>"),
            "c": run.v("<<content>>")}


@check("s01", "first_request", LOOP, "the prompt from argv is the first user message; bash "
       "is offered; the model is MODEL_ID")
def _(run):
    first = run.request(1)
    messages = first.get("messages") or [{}]
    said = [block.get("text") for block in blocks(messages[0].get("content"))]
    if messages[0].get("role") != "user" or said[:1] != [run.prompt]:
        raise Fail(f"Request 1 starts with {cut(json.dumps(messages[0]))}; it should start "
                   f"with the user message {run.prompt!r}, the prompt from argv.")
    tools = {tool.get("name"): tool for tool in first.get("tools") or []}
    properties = tools.get("bash", {}).get("input_schema", {}).get("properties", {})
    if "command" not in properties:
        raise Fail(f"Request 1 offers the tools {sorted(tools)}; it should offer `bash`, "
                   "whose input_schema has the property `command`.")
    if first.get("model") != run.v("<<model>>"):
        raise Fail(f"Request 1 names the model {first.get('model')!r}; it should name "
                   f"{run.v('<<model>>')!r}, the value of MODEL_ID in its environment.")


@check("s01", "tool_results", LOOP, "each tool_use gets a tool_result with its id, all in the "
       "next user turn, before any other block")
def _(run):
    outputs = loop_outputs(run)
    for reply, keys in ((1, ["a", "b"]), (2, ["c"])):
        turn = run.turn_after(reply)
        asked = [run.id(key) for key in keys]
        answered = [block.get("tool_use_id") for block in turn
                    if block.get("type") == "tool_result"]
        if sorted(answered) != sorted(asked):
            raise Fail(f"Reply {reply} asked for the tool_use ids {asked}; the user turn of "
                       f"request {reply + 1} answers {answered}. Each tool_use needs one "
                       f"tool_result with its id, all in that one turn.")
        kinds = [block.get("type") for block in turn]
        if kinds[:len(keys)] != ["tool_result"] * len(keys):
            raise Fail(f"The user turn of request {reply + 1} holds {kinds}; the tool_result "
                       "blocks must come first, before any text.")
        for key in keys:
            said, _ = run.result(reply, key)
            other = [k for k in keys if k != key and outputs[k] in said]
            if outputs[key] not in said and other:
                raise Fail(f"The tool_result with the id {run.id(key)} holds the output of "
                           f"{run.call(reply, other[0])}, whose id is {run.id(other[0])}; "
                           f"each result carries the id of the call it answers (request "
                           f"{reply + 1}).")


@check("s01", "bash_output", LOOP, "bash runs the command in a shell, in the current folder; "
       "its output (stdout and stderr) and its exit code go back", follows=["tool_results"])
def _(run):
    outputs = loop_outputs(run)
    run.ok(1, "a", outputs["a"])
    said, _ = run.result(1, "b")
    code = run.v("<<n_code>>")
    for found, what in ((outputs["b"] in said, f"its stderr, {outputs['b']!r}"),
                        (re.search(rf"\b{code}\b", said), f"its exit code, {code}")):
        if not found:
            raise Fail(f"The result of {run.call(1, 'b')} is {cut(said)!r}; it should hold "
                       f"{what} (request 2).")
    run.ok(2, "c", outputs["c"])


@check("s01", "history", LOOP, "every call sends the whole history")
def _(run):
    for number in (2, 3):
        before, now = run.request(number - 1)["messages"], run.request(number)["messages"]
        expected = plain(before) + [{"role": "assistant",
                                     "content": plain_blocks(run.replies[number - 2])}]
        if plain(now)[:len(expected)] != expected:
            raise Fail(f"Request {number} sends {len(now)} message(s), starting "
                       f"{cut(json.dumps(now), 120)}; it should start with the "
                       f"{len(before)} message(s) of request {number - 1}, then reply "
                       f"{number - 1} as the assistant turn, as it came.")


@check("s01", "failing_command", LOOP, "a failing command does not end the loop")
def _(run):
    if len(run.requests) < 3:
        raise Fail(f"After reply 1 (whose second command exits {run.v('<<n_code>>')}), your "
                   f"program sent {len(run.requests) - 1} more request(s) instead of 2: a "
                   f"failing command's output goes back to the model, and the loop goes on. "
                   f"{run.ending()}")


@check("s01", "final_text", LOOP, "the final text is printed, and the program exits 0")
def _(run):
    run.printed("<<final>>", why="the text of the last reply should be printed")
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

def outside(root, draw):
    """Beside the workdir: a file, a folder whose name starts with the workdir's ("work-..."),
    and a symlink from the workdir to a folder outside."""
    (root / draw.fill("<<outside>>.txt")).write_text("outside\n")
    (root / draw.fill("work-<<sibling>>")).mkdir()
    (root / "elsewhere").mkdir()
    (root / "work" / "link").symlink_to(root / "elsewhere")


FILES = Exchange("files", "Read, write, edit, find (<<prompt>>).", [
    [use("read", "read_file", path="<<notes>>.md"),
     use("write", "write_file", path="<<folder>>/<<new>>.txt", content="<<made>>\n"),
     use("edit", "edit_file", path="<<notes>>.md", old_string="<<beta>>",
         new_string="<<gamma>>"),
     use("glob", "glob", pattern="*.md"),
     use("twice", "edit_file", path="<<twice>>.txt", old_string="<<dup>>",
         new_string="<<other>>"),
     use("every", "edit_file", path="<<every>>.txt", old_string="<<rep>>",
         new_string="<<all>>", replace_all=True)],
    [use("part", "read_file", path="<<notes>>.md", offset=2, limit=1)],
    [use("up", "read_file", path="../<<outside>>.txt"),
     use("upwrite", "write_file", path="../<<escape>>.txt", content="x"),
     use("abs", "read_file", path="{root}/<<outside>>.txt"),
     use("link", "write_file", path="link/<<linked>>.txt", content="x"),
     use("upedit", "edit_file", path="../<<outside>>.txt", old_string="outside",
         new_string="changed"),
     use("sibling", "write_file", path="../work-<<sibling>>/<<near>>.txt", content="x"),
     use("sibabs", "write_file", path="{root}/work-<<sibling>>/<<nearabs>>.txt",
         content="x")],
    [use("unknown", "<<teleport>>", to="mars"),
     {"type": "tool_use", "id": "<<id_nocontent>>", "name": "write_file",
      "input": {"path": "<<half>>.txt"}},
     use("missing", "read_file", path="<<missing>>.txt"),
     use("notfound", "edit_file", path="<<notes>>.md", old_string="<<omega>>",
         new_string="x")],
    [text("<<files_done>>")],
], stdin=YES, setup=outside, files={
    **NOTES, "docs/<<deep>>.md": "deep\n", "<<twice>>.txt": "<<dup>>\n<<dup>>\n",
    "<<every>>.txt": "<<rep>> <<rep>>\n"})

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
       "limit choose some", follows=["edit_file"])  # the part read is the edited line
def _(run):
    run.ok(1, "read", "<<alpha>>", "<<beta>>")
    part = run.ok(2, "part", "<<gamma>>")
    if run.v("<<alpha>>") in part:
        raise Fail(f"{run.call(2, 'part')} returned {cut(part)!r}; it should return line 2 "
                   "only (request 3).")


@check("s02", "write_file", FILES, "write_file writes the whole file, making its folders")
def _(run):
    run.ok(1, "write")
    path, expected = run.v("<<folder>>/<<new>>.txt"), run.v("<<made>>\n")
    if run.file(path) != expected:
        raise Fail(f"After {run.call(1, 'write')}, {path} holds {run.file(path)!r}; it should "
                   f"hold {expected!r}.")


@check("s02", "edit_file", FILES, "edit_file replaces old_string, found once, by new_string")
def _(run):
    run.ok(1, "edit")
    path, expected = run.v("<<notes>>.md"), run.v("<<alpha>>\n<<gamma>>\n")
    if run.file(path) != expected:
        raise Fail(f"After {run.call(1, 'edit')}, {path} holds {run.file(path)!r}; it should "
                   f"hold {expected!r}.")


@check("s02", "edit_once", FILES, "an old_string found twice is an is_error result and "
       "changes nothing; with replace_all, every one is replaced")
def _(run):
    run.refused(1, "twice", "old_string occurs twice, and replace_all is not set")
    twice, kept = run.v("<<twice>>.txt"), run.v("<<dup>>\n<<dup>>\n")
    if run.file(twice) != kept:
        raise Fail(f"After {run.call(1, 'twice')}, {twice} holds {run.file(twice)!r}; old_string "
                   f"occurs twice, so nothing may change: it should still hold {kept!r}.")
    run.ok(1, "every")
    every, replaced = run.v("<<every>>.txt"), run.v("<<all>> <<all>>\n")
    if run.file(every) != replaced:
        raise Fail(f"After {run.call(1, 'every')}, {every} holds {run.file(every)!r}; with "
                   f"replace_all it should hold {replaced!r}.")


@check("s02", "glob", FILES, "glob returns the paths that match the pattern; * does not "
       "cross a folder")
def _(run):
    found = run.ok(1, "glob", "<<notes>>.md")
    for wrong in (run.v("<<folder>>/<<new>>.txt"), run.v("docs/<<deep>>.md")):
        if wrong in found:
            raise Fail(f"glob {{\"pattern\": \"*.md\"}} returned {cut(found)!r}; {wrong} does "
                       "not match *.md, whose * does not cross a folder (request 2).")


@check("s02", "outside_paths", FILES, "a path out of the workdir (.., absolute, a symlink out, "
       "a sibling folder whose name starts like the workdir's) is an is_error result and "
       "touches nothing")
def _(run):
    for key in ("up", "upwrite", "abs", "link", "upedit", "sibling", "sibabs"):
        run.refused(3, key, "the path leads out of the workdir")
    for name, expected in (("<<outside>>.txt", "outside\n"), ("<<escape>>.txt", None),
                           ("elsewhere/<<linked>>.txt", None),
                           ("work-<<sibling>>/<<near>>.txt", None),
                           ("work-<<sibling>>/<<nearabs>>.txt", None)):
        target = run.root / run.v(name)
        now = target.read_text() if target.exists() else None
        if now != expected:
            raise Fail(f"Beside the workdir, {run.v(name)} now holds {now!r}; nothing outside "
                       "the workdir may change.")


@check("s02", "bad_calls", FILES, "an unknown tool or a bad input is an is_error result, and "
       "the loop goes on")
def _(run):
    run.refused(4, "unknown", "there is no tool <<teleport>>")
    run.refused(4, "nocontent", "write_file needs content")
    run.refused(4, "missing", "<<missing>>.txt does not exist")
    run.refused(4, "notfound", "old_string is not in <<notes>>.md")
    if run.file("<<half>>.txt") is not None:
        raise Fail(f"write_file without content created {run.v('<<half>>.txt')}; a bad input "
                   "touches nothing.")
    run.printed("<<files_done>>", why="the loop should go on after the errors, to the last "
                "reply")
    run.exited_well()


# ======================================================================
# s03: a question before a change
# ======================================================================

ASK_YES = Exchange("ask_yes", "Change some files (<<prompt>>).", [
    [use("secret", "write_file", path="<<secret>>.txt", content="s"),
     use("write", "write_file", path="<<written>>.txt", content="A\n"),
     use("edit", "edit_file", path="<<notes>>.md", old_string="<<beta>>",
         new_string="<<gamma>>"),
     use("touch", "bash", command="touch <<made>>.txt"),
     use("dot", "write_file", path="./<<secret>>.txt", content="s"),
     use("absolute", "write_file", path="{root}/work/<<secret>>.txt", content="s"),
     use("globbed", "glob", pattern="*.md")],
    [text("Changed.")],
], stdin=YES, files={**NOTES, ".agent/settings.json": json.dumps(
    {"permissions": {"deny": ["write_file(<<secret>>.txt)", "glob"]}})})


@check("s03", "yes_runs", ASK_YES, "y to the question runs the call")
def _(run):
    for key in ("write", "edit", "touch"):
        run.ok(1, key)
    for name, expected in (("<<written>>.txt", "A\n"), ("<<notes>>.md", "<<alpha>>\n<<gamma>>\n"),
                           ("<<made>>.txt", "")):
        name, expected = run.v(name), run.v(expected)
        if run.file(name) != expected:
            raise Fail(f"After y, {name} holds {run.file(name)!r}; it should hold {expected!r}.")


@check("s03", "question_shows_call", ASK_YES, "the question shows the path or the command")
def _(run):
    run.printed("<<written>>.txt", "<<notes>>.md", "touch <<made>>.txt",
                why="a question must show the path, or the whole command, that it asks about")


@check("s03", "deny_rule", ASK_YES, "a deny rule in .agent/settings.json refuses the call, "
       "without asking")
def _(run):
    run.refused(1, "secret", 'the rule "write_file(<<secret>>.txt)" denies it')
    run.refused(1, "globbed", 'the rule "glob", a tool name alone, denies every call of glob')
    if run.file("<<secret>>.txt") is not None:
        raise Fail(run.v("<<secret>>.txt was written; the deny rule write_file(<<secret>>.txt) "
                         "forbids it."))


@check("s03", "deny_spellings", ASK_YES, "a deny rule on a path covers the file however the "
       "path is spelled (./x, the absolute path)")
def _(run):
    for key in ("dot", "absolute"):
        run.refused(1, key, 'the rule "write_file(<<secret>>.txt)" denies that file, whatever '
                    "the spelling")
    if run.file("<<secret>>.txt") is not None:
        raise Fail(run.v("<<secret>>.txt was written; the deny rule write_file(<<secret>>.txt) "
                         "covers it, however its path is spelled."))


ASK_NO_SETTINGS = {"permissions": {
    "deny": ["read_file(<<private>>.txt)", "bash(touch <<blocked>>*)"],
    "allow": ["bash(touch *)"]}}

# The calls that must not ask come first: a program that asks there reads the n. Then n, an
# empty line, and the end of stdin (EOF) for the rest.
ASK_NO = Exchange("ask_no", "Look around, and change things if you may (<<prompt>>).", [
    [use("read", "read_file", path="<<notes>>.md"),
     use("glob", "glob", pattern="*.md"),
     use("ls", "bash", command="ls"),
     use("cat", "bash", command="cat <<notes>>.md"),
     use("allowed", "bash", command="touch <<allowed>>.txt"),
     use("blocked", "bash", command="touch <<blocked>>.txt"),
     use("private", "read_file", path="./<<private>>.txt"),
     use("no", "write_file", path="<<refused>>.txt", content="B\n"),
     use("empty", "edit_file", path="<<notes>>.md", old_string="<<beta>>",
         new_string="<<gamma>>"),
     use("eof", "bash", command="rm <<kept>>.txt"),
     use("chain", "bash", command="ls; rm <<chained>>.txt"),
     use("and", "bash", command="cat <<notes>>.md && touch <<joined>>.txt")],
    [text("Looked; changed nothing.")],
], stdin="n\n\n", files={**NOTES, "<<private>>.txt": "<<hidden>>\n", "<<kept>>.txt": "k\n",
                          "<<chained>>.txt": "c\n",
                          ".agent/settings.json": json.dumps(ASK_NO_SETTINGS)})


@check("s03", "no_refuses", ASK_NO, "n or an empty line to the question: the call does not "
       "run, is_error")
def _(run):
    run.refused(1, "no", "the user answered n")
    if run.file("<<refused>>.txt") is not None:
        raise Fail(run.v("<<refused>>.txt was written although the user answered n."))
    run.refused(1, "empty", "the user answered with an empty line, which counts as no")
    if run.file("<<notes>>.md") != run.v(NOTES["<<notes>>.md"]):
        raise Fail(f"{run.v('<<notes>>.md')} now holds {run.file('<<notes>>.md')!r}, although "
                   "the user answered with an empty line (which counts as no).")


@check("s03", "eof_refuses", ASK_NO, "no answer at all (EOF): the call does not run, is_error")
def _(run):
    run.refused(1, "eof", "stdin had ended (EOF), which counts as no")
    if run.file("<<kept>>.txt") is None:
        raise Fail(run.v("<<kept>>.txt was removed, although stdin had ended (EOF counts as "
                         "no)."))


@check("s03", "chains_ask", ASK_NO, "a chain that holds a changing command (ls; rm x, cat x "
       "&& touch y) is not read-only: it asks")
def _(run):
    for key in ("chain", "and"):
        run.refused(1, key, "a chain with a changing command in it asks, and stdin had ended")
    if run.file("<<chained>>.txt") is None or run.file("<<joined>>.txt") is not None:
        raise Fail(f"{run.call(1, 'chain')} or {run.call(1, 'and')} ran without a yes; a "
                   "command is read-only only if every part of it is, so these ask (and "
                   "stdin had ended).")


@check("s03", "reads_run", ASK_NO, "read_file, glob and a read-only command (ls, cat FILE) "
       "run without asking")
def _(run):
    run.ok(1, "read", "<<alpha>>")
    run.ok(1, "glob", "<<notes>>.md")
    run.ok(1, "ls", "<<notes>>.md")
    run.ok(1, "cat", "<<alpha>>")


@check("s03", "allow_rule", ASK_NO, "an allow rule spares the question")
def _(run):
    run.ok(1, "allowed")
    if run.file("<<allowed>>.txt") is None:
        raise Fail(run.v("touch <<allowed>>.txt did not run; the allow rule bash(touch *) "
                         "should let it run without a question."))


@check("s03", "deny_wins", ASK_NO, "a call that a deny rule and an allow rule both cover is "
       "denied")
def _(run):
    run.refused(1, "blocked", 'the deny rule "bash(touch <<blocked>>*)" covers it, and deny '
                'wins over the allow rule "bash(touch *)"')
    if run.file("<<blocked>>.txt") is not None:
        raise Fail(run.v("touch <<blocked>>.txt ran; the deny rule bash(touch <<blocked>>*) "
                         "wins over the allow rule bash(touch *)."))


@check("s03", "deny_read", ASK_NO, "a deny rule covers read_file too, and ./x is x")
def _(run):
    said = run.refused(1, "private", 'the rule "read_file(<<private>>.txt)" denies it')
    if run.v("<<hidden>>") in said:
        raise Fail(f"The refused {run.call(1, 'private')} still returned the file's text.")


# ======================================================================
# s04: command hooks
# ======================================================================

def log(name):
    """A hook command's tail that appends its stdin, the event, to .agent/NAME as one line."""
    return f"cat >> .agent/{name}; echo >> .agent/{name}"


HOOKS = {"hooks": {
    "PreToolUse": [
        {"matcher": "bash", "command":
         "cat > .agent/event.json; cat .agent/event.json >> .agent/pre.jsonl; "
         "echo >> .agent/pre.jsonl; if grep -q <<forbidden>> .agent/event.json; "
         "then echo '<<prehook>>' >&2; exit 2; fi"},
        {"matcher": "file", "command": "echo '<<wrongmatch>>' >&2; exit 2"},
        {"matcher": "write_file", "timeout": 1, "command": "sleep 4 && touch .agent/<<late>>"},
        {"command": log("all.jsonl")},
    ],
    "PostToolUse": [
        {"matcher": "bash", "command": "echo '{\"context\": \"<<postnote>>\"}'"},
        {"matcher": "write_file|edit_file", "command": "echo '{\"context\": \"<<postedit>>\"}'"},
        {"command": log("post.jsonl")},
    ],
    "Stop": [{"command": "echo '<<stophook>>' >&2; exit 2"}],
}}

# One y on stdin: the blocked touch comes first and must not ask, so the y answers the write.
# The Stop hook blocks every time: the fourth block in a row ends the turn anyway.
HOOKED = Exchange("hooks", "Work, with hooks watching (<<prompt>>).", [
    [use("touch", "bash", command="touch <<forbidden>>.txt"),
     use("write", "write_file", path="<<asked>>.txt", content="w\n"),
     use("ls", "bash", command="ls"),
     use("read", "read_file", path="<<notes>>.md"),
     use("missing", "read_file", path="<<missing>>.txt")],
    [text("All done (<<end_1>>).")],
    [text("Done again (<<end_2>>).")],
    [text("Really done (<<end_3>>).")],
    [text("Finished: <<end_4>>")],
    [text("Still going: <<end_5>>")],
], stdin="y\n", files={**NOTES, ".agent/settings.json": json.dumps(HOOKS)})


def events(run, name):
    """The events a logging hook saved in .agent/NAME, one JSON object a line."""
    found = []
    for line in (run.file(f".agent/{name}") or "").splitlines():
        try:
            found.append(json.loads(line)) if line.strip() else None
        except ValueError:
            raise Fail(f"A hook saved its stdin in .agent/{name} as {cut(line)!r}; it should "
                       "be the event as JSON (hook_event_name, tool_name, tool_input).") from None
    return [event for event in found if isinstance(event, dict)]


@check("s04", "hook_stdin", HOOKED, "a hook gets the event's JSON on stdin")
def _(run):
    expected = {"hook_event_name": "PreToolUse", "tool_name": "bash",
                "tool_input": {"command": run.v("touch <<forbidden>>.txt")}}
    seen = events(run, "pre.jsonl")
    got = [{key: event.get(key) for key in expected} for event in seen]
    if expected not in got:
        raise Fail(f"The PreToolUse hook of bash got {cut(json.dumps(seen))}; for "
                   f"{run.call(1, 'touch')} it should get at least {json.dumps(expected)}.")


@check("s04", "pre_tool_use_blocks", HOOKED, "a PreToolUse hook that exits 2 blocks the call; "
       "its stderr reaches the model")
def _(run):
    said = run.refused(1, "touch", "a PreToolUse hook exited 2")
    if run.v("<<prehook>>") not in said:
        raise Fail(f"The blocked call's result is {cut(said)!r}; it should hold the hook's "
                   f"stderr, {run.v('<<prehook>>')!r}.")
    if run.file("<<forbidden>>.txt") is not None:
        raise Fail(run.v("touch <<forbidden>>.txt ran, although its PreToolUse hook exited 2."))


@check("s04", "hook_before_question", HOOKED, "PreToolUse hooks run before the permission "
       "question: a blocked call never asks")
def _(run):
    said, is_error = run.result(1, "write")
    if is_error:
        raise Fail(f"{run.call(1, 'write')} got the is_error result {cut(said)!r}. Stdin holds "
                   "one y, for this write: the touch before it was blocked by its PreToolUse "
                   "hook, which runs before the question, so the touch must not ask.")
    if run.file("<<asked>>.txt") is None:
        raise Fail(run.v("<<asked>>.txt was not written after y."))


@check("s04", "hook_timeout", HOOKED, "a hook still running after its timeout (in seconds) "
       "is stopped, and the call goes on", follows=["hook_before_question"])
def _(run):
    if run.file(".agent/<<late>>") is not None:
        raise Fail(run.v("The PreToolUse hook of write_file (timeout 1) ran to its end, "
                         "`sleep 4 && touch .agent/<<late>>`; after 1 second it should have "
                         "been stopped."))
    run.ok(1, "write")


@check("s04", "matchers", HOOKED, "a matcher is a regular expression matched against the "
       "whole tool name; a hook without one runs for every tool")
def _(run):
    said, is_error = run.result(1, "read")
    if is_error:
        raise Fail(f"{run.call(1, 'read')} got the is_error result {cut(said)!r}. The only "
                   "hook that blocks read_file has the matcher \"file\", which does not match "
                   "the whole name read_file, so that hook must not run.")
    if run.v("<<postedit>>") not in json.dumps(run.turn_after(1)):
        raise Fail('The PostToolUse hook with the matcher "write_file|edit_file" should run '
                   f"after {run.call(1, 'write')}, and its context reach the model; request 2 "
                   f"does not hold {run.v('<<postedit>>')!r}.")
    names = {event.get("tool_name") for event in events(run, "all.jsonl")}
    if not {"read_file", "write_file"} <= names:
        raise Fail(f"The PreToolUse hook without a matcher ran for the tools {sorted(names)}; "
                   "it runs for every tool: read_file and write_file too.")


@check("s04", "post_tool_use_output", HOOKED, "a PostToolUse hook's output reaches the model "
       "with the result")
def _(run):
    turn = run.turn_after(1)
    if run.v("<<postnote>>") not in json.dumps(turn):
        raise Fail(run.v('The PostToolUse hook of bash printed {"context": "<<postnote>>"} '
                         "after ls; the user turn of request 2 should carry <<postnote>> with "
                         "the result. That turn: ") + cut(json.dumps(turn)))


@check("s04", "post_only_after_success", HOOKED, "PostToolUse hooks run after a call that ran "
       "without error, not after a blocked or failed one")
def _(run):
    seen = [event.get("tool_input") for event in events(run, "post.jsonl")]
    if {"command": "ls"} not in seen:
        raise Fail(f"The PostToolUse hook without a matcher got {cut(json.dumps(seen))}; it "
                   f"should have run after {run.call(1, 'ls')}.")
    for key in ("touch", "missing"):
        block = next(b for b in run.replies[0] if b["id"] == run.id(key))
        if block["input"] in seen:
            raise Fail(f"A PostToolUse hook ran after {run.call(1, key)}, which did not run "
                       "(blocked) or failed; PostToolUse follows a call that ran without "
                       "error.")


@check("s04", "stop_limit", HOOKED, "a Stop hook sends the model back three times in a row at "
       "most: the fourth exit 2 ends the turn")
def _(run):
    turn = run.turn_after(2)
    if run.v("<<stophook>>") not in json.dumps(turn):
        raise Fail(f"After reply 2 ended the turn, the Stop hook exited 2; request 3 should "
                   f"end with a user turn that holds its stderr, {run.v('<<stophook>>')!r}. "
                   f"That turn: {cut(json.dumps(turn))}")
    if len(run.requests) != 5:
        raise Fail(f"Your program sent {len(run.requests)} requests. The Stop hook exits 2 "
                   "every time: after replies 2, 3 and 4 it sends the model back (requests 3 "
                   "to 5); after reply 5, the fourth time in a row, the turn ends anyway, so "
                   f"request 5 is the last. {run.ending()}")
    run.printed("<<end_4>>", why="the text of the reply that ends the turn should be printed")
    run.exited_well()


# The todo exchange carries s04's Stop hook that blocks once, then exits 0: a program of s04
# runs it too (its todo_write calls are unknown tools there, which is fine).
STOP_ONCE = {"hooks": {"Stop": [{"command": "test -e .agent/<<stopped>> && exit 0; "
                                 "touch .agent/<<stopped>>; echo '<<stop_again>>' >&2; "
                                 "exit 2"}]}}


def todo(content, status, **more):
    return {"content": content, "status": status, **more}


GOOD_LIST = [todo("Read the notes", "in_progress", activeForm="Reading the notes"),
             todo("Write the summary", "pending")]
DONE_LIST = [todo("Read the notes", "completed"), todo("Write the summary", "in_progress")]

# No answers on stdin: todo_write, glob and ls run without a question.
TODOS = Exchange("todos", "Plan, then work (<<prompt>>).", [
    [use("t1", "todo_write", todos=GOOD_LIST)],
    [use("t2", "bash", command="ls")],
    [use("t3", "todo_write", todos=[todo("A", "in_progress"), todo("B", "in_progress")])],
    [use("t4", "todo_write", todos=[todo("A", "started")])],
    [use("t5", "todo_write", todos=[todo("", "pending")]),
     use("t5b", "todo_write", todos=[todo("A", "pending", priority="high")])],
    [use("t6", "todo_write", todos=DONE_LIST)],
    [use("t7", "bash", command="ls")],
    [text("Planned.")],
    [text("Planned, and checked: <<planned>>")],
], files={**NOTES, ".agent/settings.json": json.dumps(STOP_ONCE)})
REMINDED = 4  # the round after which the reminder is due: rounds 2, 3 and 4 had no success


@check("s04", "stop_hook", TODOS, "a Stop hook that exits 2 sends the model back with its "
       "stderr; one that exits 0 ends the turn")
def _(run):
    if len(run.requests) < 9:
        raise Fail("After reply 8 ended the turn, the Stop hook exited 2; your program "
                   f"should have sent request 9, with the hook's stderr, but it sent "
                   f"{len(run.requests)} requests. {run.ending()}")
    turn = run.turn_after(8)
    if run.v("<<stop_again>>") not in json.dumps(turn):
        raise Fail("After reply 8 ended the turn, the Stop hook exited 2; request 9 should "
                   f"end with a user turn that holds its stderr, {run.v('<<stop_again>>')!r}. "
                   f"That turn: {cut(json.dumps(turn))}")
    if len(run.requests) > 9:
        raise Fail(f"Your program sent {len(run.requests)} requests; after reply 9 the Stop "
                   "hook exited 0, which ends the turn, so request 9 is the last.")
    run.printed("<<planned>>", why="the turn ends with reply 9, once the Stop hook exits 0")
    run.exited_well()


# ======================================================================
# s05: todo_write, and the reminder
# ======================================================================

@check("s05", "valid_list", TODOS, "todo_write takes a valid list, without asking")
def _(run):
    properties = {}
    for tool in run.request(1).get("tools") or []:
        if tool.get("name") == "todo_write":
            properties = tool.get("input_schema", {}).get("properties", {})
    if "todos" not in properties:
        raise Fail(f"Request 1 offers the tools {run.tools(1)}; it should offer todo_write, "
                   "whose input_schema has the property `todos`.")
    run.ok(1, "t1")
    run.ok(6, "t6")


@check("s05", "invalid_list", TODOS, "an invalid list (two in_progress, a bad status, an empty "
       "content, an unknown field) is an is_error result")
def _(run):
    run.refused(3, "t3", "two items are in_progress")
    run.refused(4, "t4", "'started' is not a status")
    run.refused(5, "t5", "the content is empty")
    run.refused(5, "t5b", "'priority' is not a field of a todo")


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
       "results, in their user turn", follows=["valid_list"])
def _(run):
    places = reminders(run, REMINDED)
    if places != ["after"]:
        raise Fail(f"The user turn of request {REMINDED + 1} holds {places.count('after')} "
                   f"text block(s) about todos after the tool results and "
                   f"{places.count('before')} before them; it should end with one reminder, "
                   f"after the results. That turn: {cut(json.dumps(run.turn_after(REMINDED)))}")


@check("s05", "reminder_count", TODOS, "the reminder comes after three tool rounds without a "
       "successful todo_write; only a success resets the count", follows=["valid_list"])
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

PLAN = "# Plan\n\n1. Write <<plan_line>>.txt\n"
CHANGING = ("write_file", "edit_file")

PLAN_YES = Exchange("plan_yes", "Plan first, then change (<<prompt>>).", [
    [use("write", "write_file", path="<<x>>.txt", content="x"),
     use("touch", "bash", command="touch <<y>>.txt")],
    [use("exit", "exit_plan_mode", plan=PLAN)],
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
       "refused, without asking")
def _(run):
    run.refused(1, "write", "plan mode refuses a write")
    run.refused(1, "touch", "plan mode refuses a command that changes things")
    for name in ("<<x>>.txt", "<<y>>.txt"):
        if run.file(name) is not None:
            raise Fail(f"{run.v(name)} was created in plan mode; plan mode changes nothing.")


@check("s06", "plan_approved", PLAN_YES, "exit_plan_mode shows the plan and asks; y writes it "
       "under .agent/plans/ and the changing tools come back", follows=["plan_refuses"])
def _(run):
    run.printed("<<plan_line>>.txt", why="exit_plan_mode shows the plan before it asks")
    run.ok(2, "exit")
    folder = run.workdir / ".agent" / "plans"
    plans = sorted(folder.iterdir()) if folder.is_dir() else []
    if len(plans) != 1 or plans[0].read_text(errors="replace").strip() != run.v(PLAN).strip():
        said = plans[0].read_text(errors="replace") if len(plans) == 1 else None
        raise Fail(f".agent/plans/ holds {[plan.name for plan in plans]}"
                   f"{f' ({cut(said)!r})' if said else ''}; after y it should hold one file "
                   "with the plan.")
    offered = run.tools(3)
    if not all(name in offered for name in CHANGING):
        raise Fail(f"After y, request 3 offers {offered}; write_file and edit_file should "
                   "come back.")


def options(*labels):
    return [{"label": label, "description": f"Option {label}."} for label in labels]


QUESTIONS = [
    {"question": "Which database?", "header": "Database", "multiSelect": False,
     "options": options("<<sqlite>>", "<<postgres>>")},
    {"question": "What name?", "header": "Name", "multiSelect": False,
     "options": options("<<app>>", "<<tool>>")},
    {"question": "Which extras?", "header": "Extras", "multiSelect": True,
     "options": options("<<docs>>", "<<tests>>", "<<ci>>")},
]

# The answers to the questions, then n to the plan. The y after it is for a program that
# wrongly leaves plan mode on n, and then asks before the write that follows.
PLAN_NO = Exchange("plan_no", "Ask me, plan, and hear no (<<prompt>>).", [
    [use("ask", "ask_user_question", questions=QUESTIONS)],
    [use("rejected", "exit_plan_mode", plan=PLAN),
     use("after", "write_file", path="<<x>>.txt", content="x")],
    [text("I will wait.")],
], stdin="2\n<<own>>\n1,3\nn\ny\n", files=NOTES, args=("--plan",))


@check("s06", "ask_user_question", PLAN_NO, "ask_user_question shows the questions and returns "
       "the answers typed (a number picks an option; 1,3 picks two of a multiSelect question), "
       "without s03's question")
def _(run):
    run.printed("Which database?", "<<sqlite>>", "<<postgres>>", "What name?", "Which extras?",
                why="ask_user_question shows each question with its options")
    run.ok(1, "ask", "<<postgres>>", "<<own>>", "<<docs>>", "<<ci>>")


@check("s06", "plan_rejected", PLAN_NO, "n keeps plan mode: no plan file, no change; the turn "
       "ends, or the model gets an is_error result", follows=["ask_user_question"])
def _(run):
    folder = run.workdir / ".agent" / "plans"
    if folder.is_dir() and any(folder.iterdir()):
        raise Fail(f"After n, .agent/plans/ holds {sorted(p.name for p in folder.iterdir())}; "
                   "a rejected plan is not saved.")
    if run.file("<<x>>.txt") is not None:
        raise Fail("After n, the write_file in the same reply created "
                   f"{run.v('<<x>>.txt')}; plan mode stays on, so it is refused.")
    if len(run.requests) >= 3:  # the program went on after the rejection: what did it say?
        run.refused(2, "rejected", "the user answered n")
        offered = run.tools(3)
        if any(name in offered for name in CHANGING):
            raise Fail(f"After n, request 3 offers {offered}; plan mode stays on, so not "
                       "write_file or edit_file.")


# ======================================================================
# s07: subagents
# ======================================================================

# The child runs inside the parent's agent call, so the replies come in a fixed order: the
# parent's reply 1 calls agent; replies 2 and 3 answer the child's two requests; reply 4 answers
# the parent's next request, which holds the child's answer. stdin: n for the child's touch,
# then y for a program that asks before the write a deny rule covers (and so runs it).
SUB_SETTINGS = {
    "permissions": {"deny": ["write_file(<<secret>>.txt)"]},
    "hooks": {"PreToolUse": [{"matcher": "read_file",
                              "command": "echo '<<hooked>>' >&2; exit 2"}]}}
CHILD_PROMPT = "Read <<data>>.txt and report what it holds (<<task>>)."
HIDDEN = ("agent", "todo_write", "exit_plan_mode", "ask_user_question", "enter_plan_mode")
CHILD_KEYS = ("cat", "touch", "secret", "read", "nested", "todo")

SUBAGENT = Exchange("subagent", "Hand a side task to a subagent (<<prompt>>).", [
    [text("A side task."), use("agent", "agent", description="<<label>>", prompt=CHILD_PROMPT)],
    [use("cat", "bash", command="cat <<data>>.txt"),
     use("touch", "bash", command="touch <<made>>.txt"),
     use("secret", "write_file", path="<<secret>>.txt", content="s"),
     use("read", "read_file", path="<<data>>.txt"),
     use("nested", "agent", description="<<deeper>>", prompt="<<deeper_task>>"),
     use("todo", "todo_write", todos=[todo("<<item>>", "pending")])],
    [text("<<answer>>")],
    [text("Done: <<final>>")],
], stdin="n\ny\ny\n", files={"<<data>>.txt": "<<content>>\n",
                             ".agent/settings.json": json.dumps(SUB_SETTINGS)})


def first_text(request):
    """The text of the first message of a request: what tells whose request it is."""
    messages = request.get("messages") or [{}]
    return block_text(messages[0].get("content"))


def nested(run):
    """Whether the subagent's agent call ran a subagent of its own: request 3 is its first."""
    return len(run.requests) >= 3 and first_text(run.request(3)) == run.v("<<deeper_task>>")


def system_text(request):
    system = request.get("system") or ""
    return system if isinstance(system, str) else block_text(system)


@check("s07", "agent_offered", SUBAGENT, "agent is offered, with description and prompt")
def _(run):
    tools = {tool.get("name"): tool for tool in run.request(1).get("tools") or []}
    have = sorted(tools.get("agent", {}).get("input_schema", {}).get("properties", {}))
    if not {"description", "prompt"} <= set(have):
        shown = (f"offers agent with the properties {have}" if "agent" in tools else
                 f"offers {sorted(tools)}")
        raise Fail(f"Request 1 {shown}; it should offer the tool agent, whose input_schema has "
                   "the properties description and prompt.")


@check("s07", "child_history", SUBAGENT, "the subagent starts on a fresh history: its first "
       "request holds one user message, the prompt, and nothing of the parent's",
       follows=["agent_offered"])
def _(run):
    messages = run.request(2).get("messages") or []
    prompt = run.v(CHILD_PROMPT)
    answered = [block for message in messages for block in blocks(message.get("content"))
                if block.get("type") == "tool_result" and block.get("tool_use_id") ==
                run.id("agent")]
    if answered:
        raise Fail(f"Request 2 answers the call {run.call(1, 'agent')} with "
                   f"{cut(block_text(answered[0].get('content')), 80)!r}: no subagent ran. agent "
                   "runs without a question, in every mode; each call of its subagent is "
                   "checked on its own.")
    if plain(messages) != [{"role": "user", "content": [text(prompt)]}]:
        raise Fail(f"Request 2 holds {len(messages)} message(s), starting "
                   f"{cut(json.dumps(messages), 120)}. Reply 1 called agent, so request 2 is "
                   f"the subagent's first: it should hold one user message, the agent call's "
                   f"prompt {prompt!r}, and nothing of the parent's history.")


@check("s07", "child_system", SUBAGENT, "the subagent has a system prompt of its own, not the "
       "parent's", follows=["agent_offered", "child_history"])
def _(run):
    parent, child = system_text(run.request(1)), system_text(run.request(2))
    if not child.strip() or child == parent:
        shown = cut(child.replace(str(run.workdir), "<workdir>"), 80)
        said = f"the parent's system prompt, {shown!r}" if child.strip() else "none"
        raise Fail(f"Request 2, the subagent's first, has as its system prompt {said}; it "
                   "should have one of its own (it works for another agent, and ends with a "
                   "report).")


@check("s07", "child_tools", SUBAGENT, "the subagent is offered bash and the file tools, and "
       "not agent, todo_write or the plan and question tools",
       follows=["agent_offered", "child_history"])
def _(run):
    offered = run.tools(2)
    missing = [name for name in ("bash", *TOOL_FIELDS) if name not in offered]
    hidden = [name for name in HIDDEN if name in offered]
    if missing:
        raise Fail(f"Request 2, the subagent's first, offers {offered}; it should offer bash "
                   f"and the file tools, {missing} among them: the parent's tools, less five.")
    if hidden:
        raise Fail(f"Request 2, the subagent's first, offers {offered}; it should not offer "
                   f"{hidden}: no agent (one level only), no todos, no plan, no questions to "
                   "the user.")


@check("s07", "child_runs", SUBAGENT, "the subagent's calls run, and its results go back in "
       "its own next request", follows=["child_history"])
def _(run):
    if nested(run):
        raise Fail("Request 3 is not the subagent's second request: it starts with the prompt "
                   f"of its call {run.call(2, 'nested')}, which ran a subagent of its own (see "
                   "s07.child_hidden).")
    before, now = run.request(2).get("messages") or [], run.request(3).get("messages") or []
    expected = plain(before) + [{"role": "assistant", "content": plain_blocks(run.replies[1])}]
    if plain(now)[:len(expected)] != expected:
        raise Fail(f"Request 3 sends {len(now)} message(s), starting "
                   f"{cut(json.dumps(now), 120)}; it is the subagent's second request, so it "
                   "should start with the message of request 2, then reply 2 as it came, then "
                   "the results of its calls.")
    run.ok(2, "cat", "<<content>>")


@check("s07", "child_checks", SUBAGENT, "the subagent's calls pass the parent's checks: the "
       "question, the deny rules, the PreToolUse hooks", follows=["child_runs"])
def _(run):
    run.refused(2, "touch", "the user answered n to its question")
    run.refused(2, "secret", 'the deny rule "write_file(<<secret>>.txt)" covers it')
    said = run.refused(2, "read", "a PreToolUse hook of read_file exited 2")
    if run.v("<<hooked>>") not in said:
        raise Fail(f"The blocked call {run.call(2, 'read')} got {cut(said)!r}; it should hold "
                   f"the hook's stderr, {run.v('<<hooked>>')!r} (request 3).")
    for name in ("<<made>>.txt", "<<secret>>.txt"):
        if run.file(name) is not None:
            raise Fail(f"The subagent made {run.v(name)}: its calls pass the same checks as the "
                       "parent's (the user said n to the touch; a deny rule covers the write).")


@check("s07", "child_hidden", SUBAGENT, "a call of agent or todo_write by the subagent is an "
       "is_error result: no subagent of a subagent", follows=["agent_offered"])
def _(run):
    if nested(run):
        raise Fail(f"Request 3 starts with the prompt of the subagent's own call "
                   f"{run.call(2, 'nested')}: that call ran a subagent of its own. A subagent "
                   "is not offered agent, and a call of it that comes anyway is an is_error "
                   "result.")
    run.refused(2, "nested", "a subagent may not start a subagent")
    run.refused(2, "todo", "a subagent has no todo list")


@check("s07", "only_the_answer", SUBAGENT, "the parent's next request holds the agent call and "
       "one result that starts with the subagent's final text, and nothing of its calls",
       follows=["agent_offered", "child_hidden"])
def _(run):
    number = 4
    first, now = run.request(1).get("messages") or [], run.request(number).get("messages") or []
    expected = plain(first) + [{"role": "assistant", "content": plain_blocks(run.replies[0])}]
    if plain(now)[:len(expected)] != expected:
        raise Fail(f"Request {number} sends {len(now)} message(s), starting "
                   f"{cut(json.dumps(now), 120)}; after the subagent's last reply it is the "
                   "parent's again, so it should start with the message(s) of request 1, then "
                   "reply 1 with its agent call.")
    said = run.ok(1, "agent", number=number)
    answer = run.v("<<answer>>")
    if not said.lstrip().startswith(answer):
        raise Fail(f"The result of {run.call(1, 'agent')} is {cut(said)!r}; it should start "
                   f"with the subagent's final text, {answer!r} (request {number}).")
    sent = json.dumps(now)
    leaked = [run.id(key) for key in CHILD_KEYS if run.id(key) in sent]
    leaked += [value for value in map(run.v, ("<<content>>", "<<hooked>>")) if value in sent]
    if leaked:
        raise Fail(f"Request {number}, the parent's, holds {leaked[0]!r}, from the subagent's "
                   "calls; they stay in the subagent's history: only its answer comes back.")
    run.printed("<<final>>", why="the parent's loop goes on to its last reply")
    run.exited_well()


# --plan: the subagent is read-only, as its parent is. Then its second request gets an API
# error (a 400): the parent gets an is_error result, and goes on. The y's are for a program that
# lets the subagent ask, as outside plan mode, and so run what plan mode refuses.
SUBAGENT_FAILS = Exchange("subagent_fails", "Plan, with a subagent's help (<<prompt>>).", [
    [use("agent", "agent", description="<<label>>", prompt="Look around (<<task>>).")],
    [use("write", "write_file", path="<<x>>.txt", content="x"),
     use("touch", "bash", command="touch <<y>>.txt"),
     use("ls", "bash", command="ls")],
    {"error": "<<api_error>>"},
    [text("Planned without it: <<stopped>>")],
], stdin="y\n" * 3, files=NOTES, args=("--plan",))


@check("s07", "child_plan_mode", SUBAGENT_FAILS, "in plan mode agent is offered, and the "
       "subagent is read-only as its parent: write_file and edit_file not offered, a changing "
       "call refused")
def _(run):
    if "agent" not in run.tools(1):
        raise Fail(f"With --plan, request 1 offers {run.tools(1)}; agent changes nothing by "
                   "itself, so it is offered in plan mode too.")
    offered = run.tools(2)
    if any(name in offered for name in CHANGING):
        raise Fail(f"With --plan, request 2, the subagent's first, offers {offered}; the "
                   "subagent is in plan mode as its parent is: no write_file or edit_file.")
    run.refused(2, "write", "plan mode refuses a write, a subagent's too")
    run.refused(2, "touch", "plan mode refuses a command that changes things, a subagent's too")
    for name in ("<<x>>.txt", "<<y>>.txt"):
        if run.file(name) is not None:
            raise Fail(f"The subagent created {run.v(name)} in plan mode; plan mode changes "
                       "nothing, whoever calls.")
    run.ok(2, "ls", "<<notes>>.md")


@check("s07", "child_fails", SUBAGENT_FAILS, "a subagent that fails (an API error) gives the "
       "agent call an is_error result, and the parent goes on", follows=["child_plan_mode"])
def _(run):
    number = 4
    if len(run.requests) < number:
        raise Fail(f"Your program sent {len(run.requests)} requests. The subagent's second "
                   "request (request 3) got an API error; the parent should get an is_error "
                   "result for its agent call and send request 4 with it. "
                   f"{run.ending()}")
    first, now = run.request(1).get("messages") or [], run.request(number).get("messages") or []
    expected = plain(first) + [{"role": "assistant", "content": plain_blocks(run.replies[0])}]
    if plain(now)[:len(expected)] != expected:
        raise Fail(f"Request {number} sends {len(now)} message(s), starting "
                   f"{cut(json.dumps(now), 120)}; it is the parent's, so it should start with "
                   "the message(s) of request 1, then reply 1 with its agent call.")
    run.refused(1, "agent", "the subagent got an API error and gave no answer", number=number)
    run.printed("<<stopped>>", why="the parent's loop goes on after the failed subagent")
    run.exited_well()


# ======================================================================
# s08: compaction
# ======================================================================

# The thresholds are flags; the replies state their usage, as the API's do. The context's size
# is the last reply's usage (all four counts) plus an estimate of what came since: OVER_CLEAR is
# past --clear-at only when all four are added, and nothing added since can reach it.
CLEAR_AT, COMPACT_AT = 50_000, 120_000
LIMITS = ("--clear-at", str(CLEAR_AT), "--compact-at", str(COMPACT_AT))
SMALL = {"input_tokens": 1200, "output_tokens": 100}
OVER_CLEAR = {"input_tokens": 2000, "cache_read_input_tokens": 40_000,
              "cache_creation_input_tokens": 6000, "output_tokens": 3000}  # 51,000
OVER_COMPACT = {"input_tokens": 1500, "cache_read_input_tokens": 110_000,
                "cache_creation_input_tokens": 4000, "output_tokens": 5000}  # 120,500
STILL_OVER = {"input_tokens": 2000, "cache_read_input_tokens": 118_000,
              "output_tokens": 5000}  # 125,000, after the summary
CLEARED = "[Cleared to save context:"


def usage(tokens, *content):
    """A reply that states its usage."""
    return {"content": list(content), "usage": tokens}


def page(key):
    """A file long enough that its one line is shorter: eight lines, each with its token."""
    return "".join(f"{n}. <<{key}>> was read here, in full, and kept.\n" for n in range(1, 9))


def tokens(said):
    return sum(said.values())


# One session: reply 1 makes the todo list; request 2 gets "prompt is too long", so request 3 is
# a summary request and request 4 starts from its summary. Then the context fills again: reply 6
# passes --clear-at, so request 7 clears; reply 7 passes --compact-at, so request 8 is a summary
# request and request 9 starts from it; reply 9 is still past --compact-at: the turn stops.
COMPACT = Exchange("compact", "Read the pages, and keep the list (<<prompt>>).", [
    usage(SMALL, text("A list, then the pages."),
          use("t1", "todo_write", todos=[todo("<<item_a>>", "in_progress",
                                              activeForm="Reading the pages"),
                                         todo("<<item_b>>", "pending")]),
          use("c1", "bash", command="cat <<f1>>.txt")),
    {"error": "prompt is too long: 210000 tokens > 200000 maximum"},
    usage(SMALL, text("<<first_summary>>: one page read.")),
    usage(SMALL, use("c2", "read_file", path="<<f2>>.txt"),
          use("c3", "bash", command="cat <<f3>>.txt")),
    usage(SMALL, use("c4", "bash", command="cat <<f4>>.txt"),
          use("c5", "read_file", path="<<f5>>.txt")),
    usage(OVER_CLEAR, use("c6", "read_file", path="<<f6>>.txt"),
          use("c7", "bash", command="cat <<f7>>.txt")),
    usage(OVER_COMPACT, use("c8", "bash", command="cat <<f8>>.txt")),
    usage(SMALL, text("<<summary>>: the pages are read; next, <<next_step>>.")),
    usage(STILL_OVER, use("c9", "bash", command="cat <<f9>>.txt")),
], args=LIMITS, files={
    **{f"<<f{n}>>.txt": page(f"c{n}") for n in range(1, 10)},
    ".agent/plans/<<plan>>.md": "# Plan\n\n1. <<plan_step>>\n"})
REPLY = {"t1": 1, "c1": 1, "c2": 4, "c3": 4, "c4": 5, "c5": 5, "c6": 6, "c7": 6, "c8": 7,
         "c9": 9}
CLEARED_AT = 7  # request 7 is the first past --clear-at
SUMMARISED = 8  # request 8 is the summary request; request 9 starts from the summary


def results_by_id(request):
    """{tool_use_id: the text of its tool_result} over the whole history of a request."""
    return {block.get("tool_use_id"): block_text(block.get("content"))
            for message in request.get("messages") or [] for block in blocks(message.get("content"))
            if block.get("type") == "tool_result"}


def without_contents(messages):
    """The history as the API reads it, with each tool_result's content left out."""
    return [{**message, "content": [{key: value for key, value in block.items()
                                     if not (block["type"] == "tool_result" and key == "content")}
                                    for block in message["content"]]}
            for message in plain(messages)]


def cleared_ids(messages):
    """The tool_use_ids of the results cleared in a history."""
    return {block.get("tool_use_id") for message in plain(messages) for block in message["content"]
            if block["type"] == "tool_result" and block_text(block.get("content")).startswith(
                CLEARED)}


def cleared_marked(messages, also=()):
    """The history as the API reads it, with each cleared result's content (and that of the
    results whose ids are in `also`) as one mark."""
    def mark(block):
        if block["type"] == "tool_result" and (block.get("tool_use_id") in also or block_text(
                block.get("content")).startswith(CLEARED)):
            return {**block, "content": CLEARED}
        return block
    return [{**message, "content": [mark(block) for block in message["content"]]}
            for message in plain(messages)]


SUMMARISE = re.compile(r"summar", re.IGNORECASE)


def summary_request_fault(run, number, after):
    """Why request `number` is not the summary request that follows request `after` and its
    reply (the reply's results, if any, included); None if it is."""
    before, now = run.request(after), run.request(number)
    messages = now.get("messages") or []
    last = blocks(messages[-1].get("content")) if messages else []
    if not messages or messages[-1].get("role") != "user" or not last or last[-1].get(
            "type") != "text" or not SUMMARISE.search(last[-1].get("text", "")):
        return (f"Request {number} ends with {cut(json.dumps(messages[-1:]), 120)}; it should "
                "be the summary request, whose last user message ends with a text that asks "
                "for a summary.")
    history = plain(messages)
    history[-1]["content"] = history[-1]["content"][:-1]
    if not history[-1]["content"]:
        history.pop()
    reply = run.replies[after - 1]  # a list of blocks, or the API's error
    also = cleared_ids(history)  # results cleared before the summary request, too, may be
    expected = cleared_marked(before.get("messages") or [], also)
    then = ""
    if isinstance(reply, list):
        expected += [{"role": "assistant", "content": plain_blocks(reply)}]
        then = f", then reply {after} and its results"
    if cleared_marked(history, also)[:len(expected)] != expected:
        return (f"Request {number}, the summary request, sends {cut(json.dumps(messages), 120)}"
                f"; before its instruction it should send the whole history: the messages of "
                f"request {after}{then}.")
    for part in ("system", "tools"):
        if now.get(part) != before.get(part):
            return (f"Request {number}, the summary request, has other {part} than request "
                    f"{after}; it should have the same system prompt and tools, so that the "
                    "cached prefix is the same.")
    return None


@check("s08", "too_long", COMPACT, "an API error that says the prompt is too long is "
       "followed by a summary request; then the turn goes on from the summary")
def _(run):
    if len(run.requests) < 3:
        raise Fail(f"Your program sent {len(run.requests)} requests. Request 2 got the API "
                   "error \"prompt is too long\"; it should summarise (request 3, the summary "
                   f"request) and go on, not end the turn. {run.ending()}")
    fault = summary_request_fault(run, 3, 2)
    if fault:
        raise Fail(f"Request 2 got the API error \"prompt is too long\". {fault}")
    first = (run.request(4).get("messages") or [{}])[0]
    if run.v("<<first_summary>>") not in block_text(first.get("content")):
        raise Fail(f"Request 4, after the summary, starts with {cut(json.dumps(first), 120)}; "
                   f"it should start from the summary, {run.v('<<first_summary>>')!r}, and "
                   "try again.")


@check("s08", "clear_when_full", COMPACT, "old tool results are cleared once the context "
       "reaches --clear-at, not before: its size is the last reply's usage (input, cache read, "
       "cache write, output) and an estimate of what came since", follows=["too_long"])
def _(run):
    number = CLEARED_AT
    early = [key for key in ("c2", "c3", "c4", "c5") if results_by_id(run.request(number - 1)).get(
        run.id(key), "").startswith(CLEARED)]
    if early:
        raise Fail(f"Request {number - 1} has the result of {run.call(REPLY[early[0]], early[0])} "
                   f"cleared; reply {number - 2}'s usage says {tokens(SMALL):,} tokens, far "
                   f"under --clear-at {CLEAR_AT:,}, so no result is cleared yet.")
    said = results_by_id(run.request(number)).get(run.id("c2"), "")
    if not said.startswith(CLEARED):
        raise Fail(f"In request {number} the result of {run.call(REPLY['c2'], 'c2')} is "
                   f"{cut(said, 80)!r}. Reply {number - 1}'s usage adds up to "
                   f"{tokens(OVER_CLEAR):,} tokens (input 2,000, cache read 40,000, cache write "
                   f"6,000, output 3,000), past --clear-at {CLEAR_AT:,}: the old results "
                   f"should be cleared before request {number}.")


@check("s08", "cleared_results", COMPACT, "every tool_result but the newest 3 becomes one line "
       "[Cleared to save context: ...] that names its tool and subject; the tool_use blocks, "
       "the ids and all else stay", follows=["clear_when_full"])
def _(run):
    number = CLEARED_AT
    before = run.request(number - 1).get("messages") or []
    now = run.request(number).get("messages") or []
    expected = without_contents(before) + without_contents(
        [{"role": "assistant", "content": run.replies[number - 2]}])
    if without_contents(now)[:len(expected)] != expected:
        raise Fail(f"Request {number} sends {len(now)} message(s), starting "
                   f"{cut(json.dumps(now), 120)}; clearing changes only the content of old "
                   f"tool_results: it should start with the messages of request {number - 1} "
                   f"(the tool_use blocks and ids as they were), then reply {number - 1}.")
    results = results_by_id(run.request(number))
    for key in ("c2", "c3", "c4"):
        block = next(b for b in run.replies[REPLY[key] - 1] if b.get("id") == run.id(key))
        subject = next(iter(block["input"].values()))
        said = results.get(run.id(key), "")
        if (not said.startswith(CLEARED) or "\n" in said.strip() or block["name"] not in said
                or subject not in said or run.v(f"<<{key}>>") in said):
            raise Fail(f"In request {number} the result of {run.call(REPLY[key], key)} is "
                       f"{cut(said)!r}; it is older than the newest 3, so it should be one line "
                       f"that starts {CLEARED!r} and names the tool and its subject "
                       f"({block['name']}, {subject!r}), without the output.")
    for key in ("c5", "c6", "c7"):
        said = results.get(run.id(key), "")
        if run.v(f"<<{key}>>") not in said:
            raise Fail(f"In request {number} the result of {run.call(REPLY[key], key)} is "
                       f"{cut(said)!r}; it is one of the newest 3 results, which stay as they "
                       f"were, with {run.v(f'<<{key}>>')!r}.")


@check("s08", "summary_request", COMPACT, "once the context reaches --compact-at, a summary "
       "request: the same system prompt and tools, the whole history, and last a user text "
       "that asks for a summary", follows=["cleared_results"])
def _(run):
    fault = summary_request_fault(run, SUMMARISED, SUMMARISED - 1)
    if fault:
        raise Fail(f"Reply {SUMMARISED - 1}'s usage adds up to {tokens(OVER_COMPACT):,} "
                   f"tokens, past --compact-at {COMPACT_AT:,}. {fault}")


@check("s08", "new_history", COMPACT, "the request after the summary starts from one user "
       "message that holds the summary, the todo list and the last prompt, and no plan file "
       "the user did not approve in this run; no tool_result without its tool_use",
       follows=["summary_request"])
def _(run):
    number = SUMMARISED + 1
    messages = run.request(number).get("messages") or [{}]
    first = messages[0]
    said = block_text(first.get("content"))
    for part, what in (("<<summary>>", f"the summary, the text of reply {SUMMARISED}"),
                       ("<<item_a>>", "the todo list"), ("<<item_b>>", "the todo list"),
                       (run.prompt, "the user's last prompt")):
        if first.get("role") != "user" or run.v(part) not in said:
            raise Fail(f"Request {number}, after the summary, starts with "
                       f"{cut(json.dumps(first), 120)}; its first message should be a user "
                       f"message that holds {run.v(what)}, {run.v(part)!r}.")
    if run.v("<<plan_step>>") in json.dumps(messages):
        raise Fail(run.v(f"Request {number}, after the summary, holds the plan file "
                         ".agent/plans/<<plan>>.md, which the user never approved in this run "
                         "(it was there before it started): a summary carries only the plan "
                         "the user approved, never whatever plan file is there."))
    for place, message in enumerate(messages):
        answered = [block.get("tool_use_id") for block in blocks(message.get("content"))
                    if block.get("type") == "tool_result"]
        asked = [block.get("id") for block in blocks(messages[place - 1].get("content"))
                 if block.get("type") == "tool_use"] if place else []
        orphans = [tool_id for tool_id in answered if tool_id not in asked]
        if orphans:
            raise Fail(f"Message {place + 1} of request {number} holds a tool_result for "
                       f"{orphans[0]}, whose tool_use is not in the message before it: the API "
                       "refuses such a history (a 400).")


@check("s08", "no_thrash", COMPACT, "a reply still at --compact-at after a summary stops the "
       "turn with one line: no second summary", follows=["new_history"])
def _(run):
    last = SUMMARISED + 1
    run.request(last)
    if len(run.requests) > last:
        number = last + 1
        ending = blocks(((run.request(number).get("messages") or [{}])[-1]).get("content"))
        again = ending and ending[-1].get("type") == "text" and SUMMARISE.search(
            ending[-1].get("text", ""))
        raise Fail(f"Your program sent request {number}, "
                   f"{'a summary request again' if again else 'another request'}. After the "
                   f"summary, reply {last}'s usage says {tokens(STILL_OVER):,} tokens, still "
                   f"past --compact-at {COMPACT_AT:,}: summarising again would give the same, "
                   f"so the turn stops with one line, and request {last} is the last.")
