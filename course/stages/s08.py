"""Stage s08: compaction.

Its contract is its lesson's section "Build it yourself"; each check is named by the rule
it judges."""

import json
import re

from course.stages import Exchange, Fail, block_text, blocks, cut
from course.stages.common import check, plain, plain_blocks, text, todo, use
from course.stages.s07 import first_text

# The thresholds are flags, drawn for each run; the replies state their usage, as the API's do,
# just under and just over each threshold. The context's size is the last reply's usage (all four
# counts, each larger than the margins, so that leaving one out shows) plus an estimate of what
# came since: reply 6 is under --clear-at by itself, and past it with the long file read since.
SMALL = {"input_tokens": 1200, "output_tokens": 100}
UNDER_CLEAR, ESTIMATE_MARGIN, UNDER_COMPACT, OVER_COMPACT, STILL_OVER = (
    -2000, -4000, -3000, 500, 5000)
LONG_LINES = 640  # the long file: about 40,000 characters, 10,000 tokens at 4 a token
CLEARED = "[Cleared to save context:"


def thresholds(draw):
    """(--clear-at, --compact-at) of a run: 40,000 to 70,000, then 50,000 to 80,000 more, in
    steps of 1,000 (code.py's own are 100,000 and 160,000)."""
    clear_at = draw.number("clear_at", 40_000, 70_000, 1000)
    return clear_at, clear_at + draw.number("compact_gap", 50_000, 80_000, 1000)


def spread(total):
    """A usage whose four counts add up to `total`, each of them more than 800."""
    return {"input_tokens": 1500, "cache_creation_input_tokens": 4000, "output_tokens": 2500,
            "cache_read_input_tokens": total - 8000}


def usage(tokens, *content):
    """A reply that states its usage."""
    return {"content": list(content), "usage": tokens}


def page(key):
    """A file long enough that its one line is shorter: eight lines, each with its token."""
    return "".join(f"{n}. <<{key}>> was read here, in full, and kept.\n" for n in range(1, 9))


def tokens(said):
    return sum(said.values())


def compact_replies(draw):
    """One session, in plan mode (--plan). Reply 1 makes the todo list; request 2 gets "prompt
    is too long", so request 3 is a summary request and request 4 starts from its summary.
    Reply 4 sends a valid list, which replaces the first, then an invalid one (the valid one
    stays). Reply 5 is just under --clear-at: nothing
    is cleared; reply 6 is further under, but the long file read since takes request 7 past it.
    Reply 7 is just under --compact-at: no summary; reply 8 just over: request 9 is a summary
    request, request 10 starts from it, and reply 10 is still over: the turn stops."""
    clear_at, compact_at = thresholds(draw)
    return [
        usage(SMALL, text("A list, then the pages."),
              use("t1", "todo_write", todos=[todo("<<item_a>>", "in_progress",
                                                  activeForm="Reading the pages"),
                                             todo("<<item_b>>", "pending")]),
              use("c1", "bash", command="cat <<f1>>.txt")),
        {"error": "prompt is too long: 210000 tokens > 200000 maximum"},
        usage(SMALL, text("<<first_summary>>: one page read.")),
        usage(SMALL, use("t2", "todo_write", todos=[todo("<<item_b>>", "in_progress"),
                                                    todo("<<item_e>>", "pending")]),
              use("bad", "todo_write", todos=[todo("<<item_c>>", "in_progress"),
                                                     todo("<<item_d>>", "in_progress")]),
              use("c2", "read_file", path="<<f2>>.txt"),
              use("c3", "bash", command="cat <<f3>>.txt")),
        usage(spread(clear_at + UNDER_CLEAR), use("c4", "bash", command="cat <<f4>>.txt"),
              use("c5", "read_file", path="<<f5>>.txt")),
        usage(spread(clear_at + ESTIMATE_MARGIN), use("long", "read_file", path="<<long>>.txt")),
        usage(spread(compact_at + UNDER_COMPACT), use("c6", "bash", command="cat <<f6>>.txt")),
        usage(spread(compact_at + OVER_COMPACT), use("c7", "read_file", path="<<f7>>.txt")),
        usage(SMALL, text("<<summary>>: the pages are read; next, <<next_step>>.")),
        usage(spread(compact_at + STILL_OVER), use("c8", "bash", command="cat <<f8>>.txt"),
              use("write", "write_file", path="<<x>>.txt", content="x")),
    ]


def compact_args(draw):
    clear_at, compact_at = thresholds(draw)
    return ("--plan", "--clear-at", str(clear_at), "--compact-at", str(compact_at))


# The y is for a program that leaves plan mode at a summary, and then asks before the write.
COMPACT = Exchange("compact", "Read the pages, and keep the list (<<prompt>>).", compact_replies,
                   args=compact_args, stdin="y\n", files={
    **{f"<<f{n}>>.txt": page(f"c{n}") for n in range(1, 9)},
    "<<long>>.txt": "".join(f"{n:03d}. <<long_line>> is one line of a long file, read whole.\n"
                            for n in range(LONG_LINES)),
    ".agent/plans/<<plan>>.md": "# Plan\n\n1. <<plan_step>>\n"})
REPLY = {"t1": 1, "c1": 1, "t2": 4, "bad": 4, "c2": 4, "c3": 4, "c4": 5, "c5": 5, "long": 6,
         "c6": 7, "c7": 8, "c8": 10}
UNDER = 6  # request 6 follows the reply just under --clear-at
CLEARED_AT = 7  # request 7 is the first past --clear-at
NOT_YET = 8  # request 8 follows the reply just under --compact-at
SUMMARISED = 9  # request 9 is the summary request; request 10 starts from the summary


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


def asks_for_summary(request):
    """Whether a request's last user message ends with a text that asks for a summary."""
    messages = request.get("messages") or []
    last = blocks(messages[-1].get("content")) if messages else []
    return bool(messages and messages[-1].get("role") == "user" and last and last[-1].get(
        "type") == "text" and SUMMARISE.search(last[-1].get("text", "")))


def summary_request_fault(run, number, after):
    """Why request `number` is not the summary request that follows request `after` and its
    reply (the reply's results, if any, included); None if it is. The first words say whether
    it is a summary request at all."""
    before, now = run.request(after), run.request(number)
    messages = now.get("messages") or []
    if not asks_for_summary(now):
        again = f" (request {after} again)" if plain(messages) == plain(
            before.get("messages") or []) else ""
        return (f"Request {number} is not a summary request{again}: it "
                f"ends with {cut(json.dumps(messages[-1:]), 120)}. It should be one: the whole "
                "history, then last a user text that asks for a summary.")
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
        return (f"Request {number}, a summary request, sends {cut(json.dumps(messages), 120)}"
                f"; before its instruction it should send the whole history: the messages of "
                f"request {after}{then}.")
    for part in ("system", "tools"):
        if now.get(part) != before.get(part):
            return (f"Request {number}, a summary request, has other {part} than request "
                    f"{after}; it should have the same system prompt and tools, so that the "
                    "cached prefix is the same.")
    return None


def said(run, reply):
    """A reply's usage in words: '51,000 tokens (input 1,500, cache read 42,000, ...)'."""
    counts = run.exchange.replies(run.draw)[reply - 1]["usage"]
    names = {"input_tokens": "input", "cache_read_input_tokens": "cache read",
             "cache_creation_input_tokens": "cache write", "output_tokens": "output"}
    parts = ", ".join(f"{names[key]} {value:,}" for key, value in counts.items())
    return f"{tokens(counts):,} tokens ({parts})"


@check(COMPACT, "an API error that says the prompt is too long is "
       "followed by a summary request; then the turn goes on from the summary")
def too_long(run):
    if len(run.requests) < 3:
        raise Fail(f"Your program sent {len(run.requests)} requests. Request 2 got the API "
                   "error \"prompt is too long\"; it should send a summary request next "
                   f"(request 3) and go on, not end the turn. {run.ending()}")
    fault = summary_request_fault(run, 3, 2)
    if fault:
        raise Fail(f"Request 2 got the API error \"prompt is too long\". {fault}")
    first = (run.request(4).get("messages") or [{}])[0]
    if run.v("<<first_summary>>") not in block_text(first.get("content")):
        raise Fail(f"Request 4, after the summary, starts with {cut(json.dumps(first), 120)}; "
                   f"it should start from the summary, {run.v('<<first_summary>>')!r}, and "
                   "try again.")


@check(COMPACT, "old tool results are cleared once the context reaches --clear-at, not "
       "before: its size is the last reply's usage (input, cache read, cache write, output) "
       "and an estimate of what came since", follows=["too_long"])
def clear_when_full(run):
    clear_at, _ = thresholds(run.draw)
    for number in range(4, CLEARED_AT):
        early = [key for key in ("c2", "c3", "c4", "c5") if results_by_id(run.request(
            number)).get(run.id(key), "").startswith(CLEARED)]
        if early:
            under = (f"reply {number - 1}'s usage says {said(run, number - 1)}, "
                     f"{-UNDER_CLEAR:,} under" if number == UNDER else
                     f"reply {number - 1}'s usage is far under")
            raise Fail(f"Request {number} has the result of "
                       f"{run.call(REPLY[early[0]], early[0])} cleared; {under} --clear-at "
                       f"{clear_at:,}, and what came since is small, so nothing is cleared "
                       "yet.")
    now = results_by_id(run.request(CLEARED_AT)).get(run.id("c2"), "")
    long = len(run.file("<<long>>.txt") or "")
    if not now.startswith(CLEARED):
        raise Fail(f"In request {CLEARED_AT} the result of {run.call(REPLY['c2'], 'c2')} is "
                   f"{cut(now, 80)!r}. Reply {CLEARED_AT - 1}'s usage says "
                   f"{said(run, CLEARED_AT - 1)}, {-ESTIMATE_MARGIN:,} under --clear-at "
                   f"{clear_at:,}; but since then came the result of "
                   f"{run.call(REPLY['long'], 'long')}, {long:,} characters: "
                   "with the estimate of what came since, the context is past --clear-at, so "
                   f"the old results should be cleared before request {CLEARED_AT}.")


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
    for key in ("c2", "c3"):
        block = next(b for b in run.replies[REPLY[key] - 1] if b.get("id") == run.id(key))
        subject = next(iter(block["input"].values()))
        now = results.get(run.id(key), "")
        if (not now.startswith(CLEARED) or "\n" in now.strip() or block["name"] not in now
                or subject not in now or run.v(f"<<{key}>>") in now):
            raise Fail(f"In request {number} the result of {run.call(REPLY[key], key)} is "
                       f"{cut(now)!r}; it is older than the newest 3, so it should be one line "
                       f"that starts {CLEARED!r} and names the tool and its subject "
                       f"({block['name']}, {subject!r}), without the output.")
    for key, token in (("c4", "<<c4>>"), ("c5", "<<c5>>"), ("long", "<<long_line>>")):
        now = results.get(run.id(key), "")
        if run.v(token) not in now:
            raise Fail(f"In request {number} the result of {run.call(REPLY[key], key)} is "
                       f"{cut(now)!r}; it is one of the newest 3 results, which stay as they "
                       f"were, with {run.v(token)!r}.")


@check(COMPACT, "once the context reaches --compact-at, and not before, a summary request: "
       "the same system prompt and tools, the whole history, and last a user text that asks "
       "for a summary", follows=["cleared_results"])
def summary_request(run):
    _, compact_at = thresholds(run.draw)
    if asks_for_summary(run.request(NOT_YET)):
        raise Fail(f"Request {NOT_YET} is a summary request. Reply {NOT_YET - 1}'s usage says "
                   f"{said(run, NOT_YET - 1)}, {-UNDER_COMPACT:,} under --compact-at "
                   f"{compact_at:,}, and what came since is small: no summary yet (old results "
                   "are cleared, as the context is past --clear-at).")
    fault = summary_request_fault(run, SUMMARISED, SUMMARISED - 1)
    if fault:
        raise Fail(f"Reply {SUMMARISED - 1}'s usage says {said(run, SUMMARISED - 1)}, past "
                   f"--compact-at {compact_at:,}. {fault}")


@check(COMPACT, "the request after the summary starts from one user message that holds the "
       "summary and the last prompt, and no plan file the user did not approve in this run; no "
       "tool_result without its tool_use", follows=["summary_request"])
def new_history(run):
    number = SUMMARISED + 1
    if len(run.requests) == SUMMARISED:
        raise Fail(f"Your program sent {SUMMARISED} requests: after the summary (reply "
                   f"{SUMMARISED}) it should go on with request {number}, from the new "
                   "history. Right after a summary no reply has measured the new history: its "
                   f"size is the estimate alone, not reply {SUMMARISED - 1}'s usage. "
                   f"{run.ending()}")
    messages = run.request(number).get("messages") or [{}]
    first = messages[0]
    content = block_text(first.get("content"))
    for part, what in (("<<summary>>", f"the summary, the text of reply {SUMMARISED}"),
                       (run.prompt, "the user's last prompt")):
        if first.get("role") != "user" or run.v(part) not in content:
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


@check(COMPACT, "the new history holds the todo list as the last valid todo_write left it: "
       "a valid list replaces the old one, an invalid list changes nothing (s05)",
       follows=["new_history"])
def todo_list_kept(run):
    number = SUMMARISED + 1
    first = (run.request(number).get("messages") or [{}])[0]
    content = block_text(first.get("content"))
    said, is_error = run.result(REPLY["t2"], "t2")
    if is_error:
        raise Fail(f"With --plan, {run.call(REPLY['t2'], 't2')} got the is_error result "
                   f"{cut(said, 80)!r}; todo_write changes nothing on disk, so it runs in plan "
                   "mode too (s05), and the new history carries its list.")
    missing = [run.v(item) for item in ("<<item_b>>", "<<item_e>>") if run.v(item) not in content]
    if missing:
        raise Fail(f"Request {number}, after the summary, starts with "
                   f"{cut(json.dumps(first), 120)}; its first message should hold the todo "
                   f"list, {missing[0]!r} among its items (the list of reply 4's "
                   f"{run.call(REPLY['t2'], 't2')}).")
    if run.v("<<item_a>>") in content:
        raise Fail(f"Request {number}, after the summary, carries {run.v('<<item_a>>')!r}, an "
                   f"item of reply 1's list only; reply 4's {run.call(REPLY['t2'], 't2')} "
                   "replaced that list: a valid list replaces the old one, whole (s05).")
    if run.v("<<item_c>>") in content:
        raise Fail(f"Request {number}, after the summary, carries the todo list of reply 4's "
                   f"{run.call(REPLY['bad'], 'bad')}, with {run.v('<<item_c>>')!r}; that list "
                   "is invalid (two items in_progress), so it got an is_error result and the "
                   "old list stays: the one of reply 4's first call.")


@check(COMPACT, "plan mode goes on across a summary: it ends only when the user approves a "
       "plan (s06)", follows=["too_long"])
def plan_mode_kept(run):
    changing = ("write_file", "edit_file")
    for number in range(1, len(run.requests) + 1):
        offered = [name for name in run.tools(number) if name in changing]
        if offered:
            when = ("the summary request" if asks_for_summary(run.request(number)) else
                    "after a summary" if number in (4, SUMMARISED + 1) else "")
            raise Fail(f"With --plan, request {number}{f' ({when})' if when else ''} offers "
                       f"{offered}; plan mode goes on across a summary (the user approved no "
                       "plan), so the summary request and the new history offer plan mode's "
                       "tools.")
    run.expect_file("<<x>>.txt", None, f"After reply {REPLY['c8']}'s "
                    f"{run.call(REPLY['c8'], 'write')}, in plan mode",
                    ": plan mode goes on across a summary, and refuses a write without asking")


@check(COMPACT, "a reply still at --compact-at after a summary: no request follows, no "
       "second summary", follows=["new_history"])
def no_thrash(run):
    _, compact_at = thresholds(run.draw)
    last = SUMMARISED + 1
    run.request(last)
    if len(run.requests) > last:
        number = last + 1
        again = asks_for_summary(run.request(number))
        raise Fail(f"Your program sent request {number}, "
                   f"{'a summary request again' if again else 'another request'}. After the "
                   f"summary, reply {last}'s usage says {said(run, last)}, still past "
                   f"--compact-at {compact_at:,}: summarising again would give the same, so "
                   f"the turn stops, and request {last} is the last.")


def stopped_saying(run, after, last=1):
    """The turn stopped: no traceback, a line with the word context among the `last` lines of
    stdout or of stderr, and exit 1; else Fail, its message starting with `after`."""
    tail = [line for stream in (run.stdout, run.stderr)
            for line in [line.strip() for line in stream.splitlines() if line.strip()][-last:]]
    if "Traceback (most recent call last):" in run.stderr:
        raise Fail(f"{after}, your program ended with a traceback. {run.ending()} The turn "
                   "stops with one line that says the context is still full, and the program "
                   "exits 1.")
    if not any(re.search("context", line, re.IGNORECASE) for line in tail):
        shown = " / ".join(cut(line, 80) for line in tail) or "nothing"
        raise Fail(f"{after}, the last line{'s' if last > 1 else ''} your program printed "
                   f"{'are' if last > 1 else 'is'} {shown!r}; the turn stops with one line, "
                   "printed last (on stdout or stderr), that says the context is still full "
                   "(the checker looks for the word \"context\").")
    if run.returncode != 1:
        raise Fail(f"{after}, your program exited with status {run.returncode}; the turn "
                   "stopped without finishing the task, so the program exits 1.")


@check(COMPACT, "that stop is one line, the last the program prints, that says the context "
       "is still full; then it exits 1", follows=["no_thrash"])
def still_full_stops(run):
    _, compact_at = thresholds(run.draw)
    stopped_saying(run, f"After reply {SUMMARISED + 1}, still past --compact-at "
                   f"{compact_at:,}")


# A subagent makes room in its own history: reply 2, its first, is past --compact-at, so its
# next request (3) is a summary request of its own history, and request 4 starts from its
# summary. Then the parent: reply 5 is past --compact-at, so request 6 is a summary request,
# which is itself too long (and so is a second try, for a program that clears and tries again).
CHILD_TASK = "Read <<g1>>.txt and report what it says (<<task>>)."


def room_replies(draw):
    _, compact_at = thresholds(draw)
    too_long = {"error": "prompt is too long: 230000 tokens > 200000 maximum"}
    return [
        usage(SMALL, use("agent", "agent", description="<<label>>", prompt=CHILD_TASK)),
        usage(spread(compact_at + OVER_COMPACT), use("g1", "bash", command="cat <<g1>>.txt")),
        usage(SMALL, text("<<child_summary>>: the page is read.")),
        usage(SMALL, text("<<child_answer>>")),
        usage(spread(compact_at + OVER_COMPACT), use("g2", "bash", command="cat <<g2>>.txt")),
        too_long,
        too_long,
    ]


def room_args(draw):
    clear_at, compact_at = thresholds(draw)
    return ("--clear-at", str(clear_at), "--compact-at", str(compact_at))


ROOM = Exchange("room", "Hand the reading to a subagent (<<prompt>>).", room_replies,
                args=room_args, files={f"<<g{n}>>.txt": page(f"g{n}") for n in (1, 2)})


@check(ROOM, "a subagent makes room in its own history, with the same flags: its own summary "
       "request, then a new history from its summary and its prompt")
def child_makes_room(run):
    _, compact_at = thresholds(run.draw)
    fault = summary_request_fault(run, 3, 2)
    if fault:
        raise Fail(f"Reply 2, the subagent's first, says {said(run, 2)}, past --compact-at "
                   f"{compact_at:,}: the subagent makes room in its own history as the parent "
                   f"does. {fault}")
    if run.v(CHILD_TASK) not in first_text(run.request(3)):
        raise Fail(f"Request 3, a summary request, starts with "
                   f"{cut(first_text(run.request(3)), 120)!r}; it should summarise the "
                   f"subagent's own history, which starts with its prompt {run.v(CHILD_TASK)!r}.")
    first = first_text(run.request(4))
    for part, what in (("<<child_summary>>", "its summary"), (CHILD_TASK, "its prompt")):
        if run.v(part) not in first:
            raise Fail(f"Request 4, the subagent's after its summary, starts with "
                       f"{cut(first, 120)!r}; it should start from one user message that holds "
                       f"{what}, {run.v(part)!r}.")
    answer = run.ok(1, "agent", number=5)
    if not answer.lstrip().startswith(run.v("<<child_answer>>")):
        raise Fail(f"The result of {run.call(1, 'agent')} is {cut(answer)!r}; it should start "
                   f"with the subagent's final text, {run.v('<<child_answer>>')!r} (request 5).")


@check(ROOM, "a summary request that is itself too long stops the turn, saying so, and the "
       "program exits 1", follows=["child_makes_room"])
def summary_too_long(run):
    _, compact_at = thresholds(run.draw)
    fault = summary_request_fault(run, 6, 5)
    if fault:
        raise Fail(f"Reply 5 says {said(run, 5)}, past --compact-at {compact_at:,}. {fault}")
    if len(run.requests) > 7 or (len(run.requests) == 7 and not asks_for_summary(
            run.request(7))):
        raise Fail(f"Your program sent {len(run.requests)} requests. Request 6, the summary "
                   "request, got the API error \"prompt is too long\": the turn stops there "
                   "(or after one more summary request, with old results cleared).")
    tail = [line for stream in (run.stdout, run.stderr)
            for line in [line.strip() for line in stream.splitlines() if line.strip()][-3:]]
    if "Traceback (most recent call last):" in run.stderr or run.returncode != 1 or not any(
            re.search(r"too long|context", line, re.IGNORECASE) for line in tail):
        raise Fail(f"The summary request itself got \"prompt is too long\"; the turn stops, "
                   "saying so in its last lines (the checker looks for \"too long\" or "
                   f"\"context\"), without a traceback, and the program exits 1. {run.ending()}")


# Before the first reply, and right after a summary, the context's size is the estimate alone.
# The prompt alone is past --compact-at (small flags, drawn): request 1 is a summary request; the
# new history holds the prompt again, still past it, so the turn stops there, before request 2.
FULL_LINES = 1100  # the prompt: about 72,000 characters, 18,000 tokens at 4 a token


def full_thresholds(draw):
    """(--clear-at, --compact-at) of the long prompt's run: 8,000 to 12,000, and half of it."""
    compact_at = draw.number("full_compact_at", 8000, 12_000, 1000)
    return compact_at // 2, compact_at


FULL = Exchange(
    "full", "".join(f"{n:04d}. <<brief_line>> is one line of a long brief, kept whole.\n"
                    for n in range(FULL_LINES)) + "Do what the brief says (<<prompt>>).",
    [usage(SMALL, text("<<brief_summary>>: a long brief.")),
     usage(SMALL, text("Done: <<full_done>>"))],
    args=lambda draw: ("--clear-at", str(full_thresholds(draw)[0]), "--compact-at",
                       str(full_thresholds(draw)[1])),
    first="Here the prompt alone is past --compact-at: before the first reply the context's "
          "size is the estimate alone, so request 1 should be a summary request of it.")


def prompt_size(run):
    """The prompt in words: '72,400 characters, about 18,100 tokens at 4 a token'."""
    return f"{len(run.prompt):,} characters, about {len(run.prompt) // 4:,} tokens at 4 a token"


@check(FULL, "before the first reply the context's size is the estimate alone: a prompt past "
       "--compact-at is summarised before it is sent")
def first_estimate(run):
    _, compact_at = full_thresholds(run.draw)
    first = run.request(1)
    sent = "\n".join(block_text(message.get("content"))
                     for message in first.get("messages") or [])
    if not asks_for_summary(first) or run.prompt not in sent:
        raise Fail(f"Request 1 is not a summary request of the prompt: it ends with "
                   f"{cut(json.dumps((first.get('messages') or [])[-1:]), 120)}. The prompt "
                   f"alone is {prompt_size(run)}, past --compact-at {compact_at:,}: before the "
                   "first reply the context's size is the estimate alone (not 0), so request 1 "
                   "should be a summary request, the prompt then a user text that asks for a "
                   "summary.")


@check(FULL, "right after a summary the size is the estimate alone: a new history still past "
       "--compact-at stops the turn before its first request", follows=["first_estimate"])
def summary_estimate(run):
    _, compact_at = full_thresholds(run.draw)
    after = (f"After the summary (reply 1), the new history holds the prompt again, "
             f"{prompt_size(run)}, still past --compact-at {compact_at:,}")
    if len(run.requests) > 1:
        raise Fail(f"{after}: right after a summary the context's size is the estimate alone "
                   "(not 0, nor the usage of a reply before it), and a context still past "
                   "--compact-at after a summary stops the turn. Your program sent request 2 "
                   "from it.")
    stopped_saying(run, after, last=3)  # code.py says then that the prompt was not kept


# A subagent's history is its own, and so is its size: before its first reply, the estimate of
# its own history alone. Reply 1, the parent's agent call, is past --compact-at: the subagent's
# first request (2) is its prompt all the same; then the parent, past --compact-at, summarises
# (request 3) and goes on from its summary (request 4).
FRESH = Exchange("fresh", "Hand a small task to a subagent (<<prompt>>).", lambda draw: [
    usage(spread(thresholds(draw)[1] + OVER_COMPACT),
          use("agent", "agent", description="<<label>>", prompt="Say <<word>> (<<task>>).")),
    usage(SMALL, text("<<word>>")),
    usage(SMALL, text("<<fresh_summary>>: a subagent said a word.")),
    usage(SMALL, text("Done: <<fresh_done>>")),
], args=room_args)


@check(FRESH, "a subagent's size before its first reply is the estimate of its own history "
       "alone, not its parent's usage")
def child_own_size(run):
    _, compact_at = thresholds(run.draw)
    first = run.request(2)
    prompt = run.v("Say <<word>> (<<task>>).")
    if asks_for_summary(first) or first_text(first) != prompt:
        raise Fail(f"Request 2, the subagent's first, starts with {cut(first_text(first), 80)!r}"
                   f"{' and asks for a summary' if asks_for_summary(first) else ''}; it should "
                   f"be the subagent's prompt, {prompt!r}, alone. Reply 1, the parent's, says "
                   f"{said(run, 1)}, past --compact-at {compact_at:,}; but a subagent's history "
                   "is its own: before its first reply its size is the estimate of that history "
                   "alone, far under.")
