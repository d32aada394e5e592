"""Stage s01: the loop, with bash.

Its contract is its lesson's section "Build it yourself"; each check is named by the rule
it judges."""

import json
import re

from course.stages import Exchange, Fail, blocks, cut
from course.stages.common import YES, check, plain, plain_blocks, text, use

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


@check(LOOP, "the prompt from argv is the first user message; bash "
       "is offered; the model is MODEL_ID")
def first_request(run):
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


@check(LOOP, "each tool_use gets a tool_result with its id, all in the "
       "next user turn, before any other block")
def tool_results(run):
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


@check(LOOP, "bash runs the command in a shell, in the current folder; "
       "its output (stdout and stderr) and its exit code go back", follows=["tool_results"])
def bash_output(run):
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


@check(LOOP, "every call sends the whole history")
def history(run):
    for number in (2, 3):
        before, now = run.request(number - 1)["messages"], run.request(number)["messages"]
        expected = plain(before) + [{"role": "assistant",
                                     "content": plain_blocks(run.replies[number - 2])}]
        if plain(now)[:len(expected)] != expected:
            raise Fail(f"Request {number} sends {len(now)} message(s), starting "
                       f"{cut(json.dumps(now), 120)}; it should start with the "
                       f"{len(before)} message(s) of request {number - 1}, then reply "
                       f"{number - 1} as the assistant turn, as it came.")


@check(LOOP, "a failing command does not end the loop")
def failing_command(run):
    if len(run.requests) < 3:
        raise Fail(f"After reply 1 (whose second command exits {run.v('<<n_code>>')}), your "
                   f"program sent {len(run.requests) - 1} more request(s) instead of 2: a "
                   f"failing command's output goes back to the model, and the loop goes on. "
                   f"{run.ending()}")


@check(LOOP, "the final text is printed, and the program exits 0")
def final_text(run):
    run.printed("<<final>>", why="the text of the last reply should be printed")
    run.exited_well()
