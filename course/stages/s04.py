"""Stage s04: command hooks.

Its contract is its lesson's section "Build it yourself"; each check is named by the rule
it judges."""

import json

from course.stages import Exchange, Fail, cut
from course.stages.common import NOTES, check, text, todo, use


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
        {"matcher": "glob", "timeout": 1, "command": "sleep 4 && touch .agent/<<late>>"},
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
     use("missing", "read_file", path="<<missing>>.txt"),
     use("glob", "glob", pattern="*.md")],
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


@check(HOOKED, "a hook gets the event's JSON on stdin")
def hook_stdin(run):
    expected = {"hook_event_name": "PreToolUse", "tool_name": "bash",
                "tool_input": {"command": run.v("touch <<forbidden>>.txt")}}
    seen = events(run, "pre.jsonl")
    got = [{key: event.get(key) for key in expected} for event in seen]
    if expected not in got:
        raise Fail(f"The PreToolUse hook of bash got {cut(json.dumps(seen))}; for "
                   f"{run.call(1, 'touch')} it should get at least {json.dumps(expected)}.")


@check(HOOKED, "a PreToolUse hook that exits 2 blocks the call; "
       "its stderr reaches the model")
def pre_tool_use_blocks(run):
    said = run.refused(1, "touch", "a PreToolUse hook exited 2")
    if run.v("<<prehook>>") not in said:
        raise Fail(f"The blocked call's result is {cut(said)!r}; it should hold the hook's "
                   f"stderr, {run.v('<<prehook>>')!r}.")
    run.expect_file("<<forbidden>>.txt", None, "After touch <<forbidden>>.txt, whose "
                    "PreToolUse hook exited 2")


@check(HOOKED, "PreToolUse hooks run before the permission "
       "question: a blocked call never asks")
def hook_before_question(run):
    said, is_error = run.result(1, "write")
    if is_error:
        raise Fail(f"{run.call(1, 'write')} got the is_error result {cut(said)!r}. Stdin holds "
                   "one y, for this write: the touch before it was blocked by its PreToolUse "
                   "hook, which runs before the question, so the touch must not ask.")
    run.expect_file("<<asked>>.txt", "w\n", "After y")


@check(HOOKED, "a hook still running after its timeout (in seconds) "
       "is stopped, and the call goes on", follows=["matchers"])
def hook_timeout(run):
    run.expect_file(".agent/<<late>>", None, "After the PreToolUse hook of glob (timeout 1), "
                    "`sleep 4 && touch .agent/<<late>>`", ": after 1 second it should have been "
                    "stopped")
    said, is_error = run.result(1, "glob")
    if is_error and run.v("<<wrongmatch>>") in said:
        raise Fail(f"{run.call(1, 'glob')} got the is_error result {cut(said)!r}, from the hook "
                   "with the matcher \"file\", which matches no tool name whole: that hook "
                   "must not run (s04.matchers), and the one of glob, stopped at its timeout, "
                   "decides nothing.")
    if is_error:
        raise Fail(f"{run.call(1, 'glob')} got the is_error result {cut(said)!r}. Its "
                   "PreToolUse hook (timeout 1) was stopped after 1 second: a hook stopped at "
                   "its timeout decides nothing, so the call goes on as if it had not run.")
    run.ok(1, "glob", "<<notes>>.md")


@check(HOOKED, "a matcher is a regular expression matched against the "
       "whole tool name; a hook without one runs for every tool")
def matchers(run):
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


@check(HOOKED, "a PostToolUse hook's output reaches the model "
       "with the result")
def post_tool_use_output(run):
    turn = run.turn_after(1)
    if run.v("<<postnote>>") not in json.dumps(turn):
        raise Fail(run.v('The PostToolUse hook of bash printed {"context": "<<postnote>>"} '
                         "after ls; the user turn of request 2 should carry <<postnote>> with "
                         "the result. That turn: ") + cut(json.dumps(turn)))


@check(HOOKED, "PostToolUse hooks run after a call that ran "
       "without error, not after a blocked or failed one")
def post_only_after_success(run):
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


@check(HOOKED, "a Stop hook sends the model back three times in a row at "
       "most: the fourth exit 2 ends the turn")
def stop_limit(run):
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


@check(TODOS, "a Stop hook that exits 2 sends the model back with its "
       "stderr; one that exits 0 ends the turn")
def stop_hook(run):
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
