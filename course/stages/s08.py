"""Stage s08: compaction.

Its contract is its lesson's section "Build it yourself"; each check is named by the rule
it judges."""

import json
import re

from course.stages import Exchange, Fail, block_text, blocks, cut
from course.stages.common import check, plain, plain_blocks, text, todo, use

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


@check(COMPACT, "an API error that says the prompt is too long is "
       "followed by a summary request; then the turn goes on from the summary")
def too_long(run):
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


@check(COMPACT, "old tool results are cleared once the context "
       "reaches --clear-at, not before: its size is the last reply's usage (input, cache read, "
       "cache write, output) and an estimate of what came since", follows=["too_long"])
def clear_when_full(run):
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


@check(COMPACT, "every tool_result but the newest 3 becomes one line "
       "[Cleared to save context: ...] that names its tool and subject; the tool_use blocks, "
       "the ids and all else stay", follows=["clear_when_full"])
def cleared_results(run):
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


@check(COMPACT, "once the context reaches --compact-at, a summary "
       "request: the same system prompt and tools, the whole history, and last a user text "
       "that asks for a summary", follows=["cleared_results"])
def summary_request(run):
    fault = summary_request_fault(run, SUMMARISED, SUMMARISED - 1)
    if fault:
        raise Fail(f"Reply {SUMMARISED - 1}'s usage adds up to {tokens(OVER_COMPACT):,} "
                   f"tokens, past --compact-at {COMPACT_AT:,}. {fault}")


@check(COMPACT, "the request after the summary starts from one user "
       "message that holds the summary, the todo list, the newest plan and the last prompt; no "
       "tool_result without its tool_use", follows=["summary_request"])
def new_history(run):
    number = SUMMARISED + 1
    messages = run.request(number).get("messages") or [{}]
    first = messages[0]
    said = block_text(first.get("content"))
    for part, what in (("<<summary>>", f"the summary, the text of reply {SUMMARISED}"),
                       ("<<item_a>>", "the todo list"), ("<<item_b>>", "the todo list"),
                       ("<<plan_step>>", "the newest plan, .agent/plans/<<plan>>.md"),
                       (run.prompt, "the user's last prompt")):
        if first.get("role") != "user" or run.v(part) not in said:
            raise Fail(f"Request {number}, after the summary, starts with "
                       f"{cut(json.dumps(first), 120)}; its first message should be a user "
                       f"message that holds {run.v(what)}, {run.v(part)!r}.")
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


@check(COMPACT, "a reply still at --compact-at after a summary stops the "
       "turn with one line: no second summary", follows=["new_history"])
def no_thrash(run):
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
