"""The live path, through the real SDK over a real socket to the loopback Messages API.

Every chapter's own client (`live_client()`), its retries, its timeout and its middleware,
talks HTTP to tests/live_api.py, which answers in the shapes the API documents. Each case of
the live path is here with the exact requests sent, the exact history kept and the exact
lines on the screen:

  - prompt caching on the stable prefix, and the usage line after each call
  - a refusal (with and without text, stop_details and its explanation): the turn is taken
    back, and the next prompt is sent alone
  - an empty or cut-off JSON body: one line, and the REPL goes on
  - a conversation too long (413, 400 "prompt is too long", model_context_window_exceeded):
    the turn is taken back, and /clear starts a new conversation that works
  - the SDK's retries, one line each; the timeout; a spend limit is not retried; Ctrl-C while
    waiting; the hints after an error status, with one full stop
  - pause_turn: the paused turn is sent back and goes on in the same assistant turn
  - --max-calls: the turn ends with one line and a valid history
  - the exit codes of a one-shot run (as a learner runs it: a process, see the end)

No test waits for the SDK's backoff: an answer's retry-after header sets the wait, and the
SDK's sleep is replaced by one that notes how long it was asked to wait.
"""

import copy
import json
import socket
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import anthropic
import anthropic._base_client
import pytest

import support
from course import section_map
from live_api import SILENCE, error, message, raw
from support import (
    PRESENT,
    assistant,
    chapters_that_change,
    clean_env,
    golden,
    load_chapter,
    new_session,
    read_trace,
    result,
    run_chapter,
    text,
    tool_use,
    user,
)

KEY = "sk-ant-test-LOOPBACK-0123456789"


# A turn is run_turn and agent_loop (THE AGENT LOOP): every chapter that changes them. (The
# bash tool they run in these tests is allowed, in bypass mode from s03 on: the tools' own
# differences are the chapters' own tests.) The call itself (CALLING THE MODEL) is the same
# in every chapter but for the tools s06 offers: the first and the last chapter.
CHAPTERS = chapters_that_change("THE AGENT LOOP")
EDGES = [PRESENT[0], PRESENT[-1]]


@pytest.fixture(params=EDGES)
def edge(request):
    return load_chapter(request.param)


@pytest.fixture(params=PRESENT)
def every(request):
    return load_chapter(request.param)


@pytest.fixture
def waits(monkeypatch):
    """The SDK's sleeps between attempts, noted instead of slept."""
    asked = []
    monkeypatch.setattr(anthropic._base_client.time, "sleep", asked.append)
    return asked


@pytest.fixture
def backoff(monkeypatch, waits):
    """The SDK's own backoff (used when the server names no wait) without its jitter: 0.5 s,
    noted instead of slept."""
    monkeypatch.setattr(anthropic._base_client.SyncAPIClient, "_calculate_retry_timeout",
                        lambda *args: 0.5)
    return waits


def live_session(chapter, api, workdir, **extra):
    """A session of `chapter` whose client is the chapter's own live one, at the loopback API.
    From s03 on the permission mode is bypass, so that bash runs without a question."""
    client = chapter.live_client(api_key=KEY, base_url=api.url)
    if "mode" in chapter.Session.__dataclass_fields__:
        extra.setdefault("mode", "bypass")
    return new_session(chapter, client, workdir, live=True, **extra)


def live_request(chapter, session, messages):
    """The exact JSON body of a live call: support.request(), with the system prompt as one
    text block that marks the end of the cached prefix (the tools come before it)."""
    body = support.request(chapter, session, messages)
    body["system"] = [{"type": "text", "text": body["system"],
                       "cache_control": {"type": "ephemeral"}}]
    return body


def usage(read=0, written=0, fresh=3, out=2):
    return {"input_tokens": fresh, "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read, "output_tokens": out}


def usage_line(read=0, written=0, fresh=3, out=2):
    return (f"  [tokens: {fresh + read + written:,} in ({read:,} read from the cache, "
            f"{written:,} written to it), {out:,} out]")


def said(capsys):
    return capsys.readouterr().out.splitlines()


def hello(chapter, session, api, capsys):
    """One exchange that ends well: "hi", "Hello."; returns the history it leaves."""
    api.answer(message(text("Hello."), usage=usage()))
    assert chapter.run_turn(session, "hi") is True
    capsys.readouterr()
    api.reset()
    return [user(text("hi")), assistant(text("Hello."))]


NOT_KEPT = "[The prompt was not kept: the conversation is as it was before it.]"
NOT_KEPT_AFTER_TOOLS = ("[The prompt was not kept: the conversation is as it was before it; "
                        "what its tool calls changed stays changed.]")


# ======================================================================
# Prompt caching and the usage line
# ======================================================================

def test_a_live_call_caches_the_system_prompt_and_tools_and_shows_the_usage(
    edge, api, tmp_path, capsys
):
    chapter = edge
    trace = tmp_path / "trace.jsonl"
    session = live_session(chapter, api, tmp_path, trace=trace)
    first, second = usage(written=1_500, fresh=12, out=7), usage(read=1_500, fresh=15, out=4)
    api.answer(message(text("Hello."), usage=first), message(text("Again."), usage=second))

    assert chapter.run_turn(session, "hi") is True
    assert chapter.run_turn(session, "and again") is True

    history = [user(text("hi")), assistant(text("Hello.")), user(text("and again"))]
    assert api.bodies() == [live_request(chapter, session, history[:1]),
                            live_request(chapter, session, history)]
    assert api.bodies()[0]["tools"] == golden(chapter.CHAPTER)["tools"]
    assert said(capsys) == [
        "  [tokens: 1,512 in (0 read from the cache, 1,500 written to it), 7 out]",
        "Hello.",
        "  [tokens: 1,515 in (1,500 read from the cache, 0 written to it), 4 out]",
        "Again.",
    ]
    # The trace keeps exactly what was sent, and the usage as the API returned it.
    assert [call["request"] for call in read_trace(trace)] == api.bodies()
    assert [call["response"]["usage"] for call in read_trace(trace)] == [first, second]
    assert KEY not in trace.read_text()


def test_offline_and_in_the_fake_client_tests_nothing_is_cached_and_no_usage_is_shown(
    every, tmp_path, capsys
):
    chapter = every
    client = support.FakeClient(support.reply(text("Hi.")))
    session = new_session(chapter, client, tmp_path)

    assert chapter.run_turn(session, "hi") is True

    assert session.live is False
    assert client.calls == [support.request(chapter, session, [user(text("hi"))])]
    assert client.calls[0]["system"] == golden(chapter.CHAPTER)["system"].replace(
        "{workdir}", str(tmp_path))
    assert said(capsys) == ["Hi."]


def test_a_reply_without_usage_says_so_in_its_line(edge, api, tmp_path, capsys):
    chapter = edge
    session = live_session(chapter, api, tmp_path)
    body = json.loads(message(text("Hi.")).body)
    del body["usage"]
    api.answer(raw(json.dumps(body).encode()))

    assert chapter.run_turn(session, "hi") is True

    assert said(capsys) == ["  [tokens: the reply did not say how many]", "Hi."]


# ======================================================================
# Refusals
# ======================================================================

CYBER = "This request was declined because it could enable cyber harm.\nSee the usage policy."
REFUSALS = {
    "with text and an explanation": (
        [text("I can't help")],
        {"stop_details": {"type": "refusal", "category": "cyber", "explanation": CYBER}},
        ["I can't help",
         "[The model declined to continue: This request was declined because it could enable "
         "cyber harm. See the usage policy.]"],
    ),
    "empty, with stop_details but no explanation": (
        [],
        {"stop_details": {"type": "refusal", "category": None, "explanation": None}},
        ["[The model declined to continue.]"],
    ),
    "empty, without stop_details": ([], {}, ["[The model declined to continue.]"]),
}


@pytest.mark.parametrize("kind", list(REFUSALS))
def test_a_refusal_takes_the_turn_back_and_the_next_prompt_is_sent_alone(
    chapter, kind, api, tmp_path, capsys
):
    content, details, lines = REFUSALS[kind]
    session = live_session(chapter, api, tmp_path)
    earlier = hello(chapter, session, api, capsys)
    api.answer(message(*content, stop_reason="refusal", usage=usage(), **details),
               message(text("Sure."), usage=usage()))

    assert chapter.run_turn(session, "something refused") is False

    assert session.messages == earlier
    assert said(capsys) == [usage_line(), *lines, NOT_KEPT]

    assert chapter.run_turn(session, "something else") is True
    alone = earlier + [user(text("something else"))]
    assert api.bodies() == [
        live_request(chapter, session, earlier + [user(text("something refused"))]),
        live_request(chapter, session, alone),
    ]
    assert session.messages == alone + [assistant(text("Sure."))]


def test_a_refusal_after_a_tool_round_takes_the_whole_turn_back_and_says_the_tool_ran(
    chapter, api, tmp_path, capsys
):
    session = live_session(chapter, api, tmp_path)
    call = tool_use("toolu_live_1", "bash", {"command": "echo made > made.txt"})
    api.answer(message(call, stop_reason="tool_use", usage=usage()),
               message(stop_reason="refusal", usage=usage()))

    assert chapter.run_turn(session, "make a file") is False

    assert session.messages == []
    assert (tmp_path / "made.txt").read_text() == "made\n"
    ran = [user(text("make a file")), assistant(call),
           user(result("toolu_live_1", "(no output)\n[exit code: 0]"))]
    assert api.bodies()[1] == live_request(chapter, session, ran)
    assert said(capsys)[-2:] == ["[The model declined to continue.]", NOT_KEPT_AFTER_TOOLS]


# ======================================================================
# Broken replies
# ======================================================================

BROKEN = {"an empty body": b"", "a cut-off body": b'{"id": "msg_01", "type": "mess'}


@pytest.mark.parametrize("body", list(BROKEN))
def test_a_200_reply_whose_json_is_empty_or_cut_off_is_one_line_and_the_repl_goes_on(
    chapter, body, api, tmp_path, capsys, keyboard
):
    session = live_session(chapter, api, tmp_path)
    api.answer(raw(BROKEN[body]), message(text("Back."), usage=usage()))
    keyboard.feed("hello", "again")

    assert chapter.repl(session) == 0

    lines = [line for line in said(capsys) if line not in ("hello", "again", "")]
    assert lines == [
        "API error: the reply is not valid JSON (its body is empty or cut off). Try again.",
        usage_line(),
        "Back.",
    ]
    assert api.bodies()[1] == live_request(chapter, session, [user(text("again"))])
    assert session.messages == [user(text("again")), assistant(text("Back."))]


# ======================================================================
# A conversation too long, and /clear
# ======================================================================

TOO_LONG = {
    "413": (
        error(413, "request_too_large", "Request exceeds the maximum size"),
        "API error: 413 Request exceeds the maximum size. "
        "The conversation is too long to send: /clear starts a new one.",
    ),
    "400 prompt is too long": (
        error(400, "invalid_request_error", "prompt is too long: 210712 tokens > 200000 maximum"),
        "API error: 400 prompt is too long: 210712 tokens > 200000 maximum. "
        "The conversation is too long to send: /clear starts a new one.",
    ),
    "model_context_window_exceeded": (
        message(text("Partly"), stop_reason="model_context_window_exceeded", usage=usage()),
        "[The conversation no longer fits the model's context window: /clear starts a new one.]",
    ),
}


# From s08 on, a conversation too long is summarised instead (COMPACTION).
COMPACTING = [name for name in PRESENT if "COMPACTION" in section_map(name)]
TAKEN_BACK = [name for name in PRESENT if name not in COMPACTING]


@pytest.mark.parametrize("name, kind", [(name, "413") for name in TAKEN_BACK] + [
    (name, kind) for name in (TAKEN_BACK[0], TAKEN_BACK[-1]) for kind in TOO_LONG
    if kind != "413"])
def test_a_conversation_too_long_takes_the_turn_back_and_clear_starts_one_that_works(
    name, kind, api, tmp_path, capsys
):
    chapter = load_chapter(name)
    failure, line = TOO_LONG[kind]
    session = live_session(chapter, api, tmp_path)
    earlier = hello(chapter, session, api, capsys)
    settings = {field: copy.deepcopy(getattr(session, field))
                for field in ("mode", "settings", "hooks", "plan_mode") if hasattr(session, field)}
    call = tool_use("toolu_big", "bash", {"command": "echo big"})
    api.answer(message(call, stop_reason="tool_use", usage=usage()), failure,
               TOO_LONG["400 prompt is too long"][0])

    assert chapter.run_turn(session, "read the big file") is False

    shown = said(capsys)
    assert shown[-2:] == [line, NOT_KEPT_AFTER_TOOLS]
    assert session.messages == earlier

    # The conversation before it is too long as well: every prompt fails, until /clear.
    assert chapter.run_turn(session, "still there?") is False
    assert said(capsys) == [TOO_LONG["400 prompt is too long"][1], NOT_KEPT]
    assert session.messages == earlier

    chapter.run_command(session, "/clear")
    assert said(capsys) == [CLEARED[chapter.CHAPTER].format(mode="bypass")]
    assert session.messages == []
    api.reset()
    api.answer(message(text("Fresh."), usage=usage()))
    assert chapter.run_turn(session, "fresh start") is True
    assert api.bodies() == [live_request(chapter, session, [user(text("fresh start"))])]
    assert {field: getattr(session, field) for field in settings} == settings


CLEARED = {
    "s01_loop": "[Cleared: the next prompt starts a new conversation. "
                "The workdir and the model stay.]",
    "s02_tools": "[Cleared: the next prompt starts a new conversation. "
                 "The workdir and the model stay.]",
    "s03_permissions": "[Cleared: the next prompt starts a new conversation. The workdir, the "
                       "model, the permission mode ({mode}) and the rules stay.]",
    "s04_hooks": "[Cleared: the next prompt starts a new conversation. The workdir, the model, "
                 "the permission mode ({mode}), the rules and the hooks stay.]",
    "s05_todo_write": "[Cleared: the next prompt starts a new conversation. The workdir, the "
                      "model, the permission mode ({mode}), the rules and the hooks stay; the "
                      "todo list is emptied.]",
    "s06_plan_mode": "[Cleared: the next prompt starts a new conversation. The workdir, the "
                     "model, the permission mode ({mode}), the rules, the hooks and plan mode "
                     "(off) stay; the todo list is emptied.]",
    "s08_compact": "[Cleared: the next prompt starts a new conversation. The workdir, the "
                   "model, the permission mode ({mode}), the rules, the hooks and plan mode "
                   "(off) stay; the todo list is emptied.]",
}
CLEARED["s07_subagents"] = CLEARED["s06_plan_mode"]  # a subagent's history lives in its call
CLEARED["s09_memory"] = CLEARED["s08_compact"].replace(
    "conversation.", "conversation, which reads AGENTS.md again.")
CLEARED["s10_skills"] = CLEARED["s08_compact"].replace(  # the skills used are forgotten
    "conversation.", "conversation, which reads AGENTS.md and the skills catalog again.")
CLEARED["s11_mcp"] = CLEARED["s10_skills"]  # the MCP servers go on running, as the session does


@pytest.mark.parametrize("name, kind", [(name, kind) for name in COMPACTING for kind in TOO_LONG])
def test_a_conversation_too_long_is_summarised_once_and_the_call_tried_again(
    name, kind, api, tmp_path, capsys
):
    chapter = load_chapter(name)
    failure, _ = TOO_LONG[kind]
    session = live_session(chapter, api, tmp_path)
    earlier = hello(chapter, session, api, capsys)
    call = tool_use("toolu_big", "bash", {"command": "echo big"})
    api.answer(message(call, stop_reason="tool_use", usage=usage()), failure,
               message(text("S"), usage=usage()), message(text("Done."), usage=usage()))

    assert chapter.run_turn(session, "read the big file") is True

    ran = [*earlier, user(text("read the big file")), assistant(call),
           user(result("toolu_big", "big\n[exit code: 0]"))]
    new_history = [user(text(f"{chapter.SUMMARY_INTRO}\n\n<summary>\nS\n</summary>"),
                        text("The user's last prompt, which the work is for:\n\n"
                             "read the big file"))]
    summary_request = live_request(chapter, session, ran[:-1] + [
        user(*ran[-1]["content"], text(chapter.SUMMARY_INSTRUCTION))])
    assert [seen["body"] for seen in api.seen] == [
        live_request(chapter, session, ran[:3]),
        live_request(chapter, session, ran),
        summary_request,  # the cached prefix (tools, system) as in every call
        live_request(chapter, session, new_history),
    ]
    assert session.messages == new_history + [assistant(text("Done."))]
    shown = [line for line in said(capsys) if line.startswith("[The API")]
    assert [line.split(";")[0] for line in shown] == [
        "[The API says the conversation is too long: the history is summarised"]


# ======================================================================
# Waiting: the SDK's retries, the timeout, the hints
# ======================================================================

def test_each_retry_of_the_sdk_is_one_line_with_its_wait_cause_and_attempt(
    edge, api, tmp_path, capsys, waits
):
    session = live_session(edge, api, tmp_path)
    overloaded = error(529, "overloaded_error", "Overloaded", headers={"retry-after": "2"})
    limited = error(429, "rate_limit_error", "Number of request tokens has exceeded your "
                    "per-minute rate limit", headers={"retry-after": "12"})
    api.answer(overloaded, limited, message(text("Made it."), usage=usage()))

    assert edge.run_turn(session, "hi") is True

    assert waits == [2.0, 12.0]  # as the API asked, in its retry-after header
    assert said(capsys) == [
        "  [retrying in 2 s (529 overloaded, attempt 2 of 3)]",
        "  [retrying in 12 s (429 rate limited, attempt 3 of 3)]",
        usage_line(),
        "Made it.",
    ]
    assert api.bodies() == [live_request(edge, session, [user(text("hi"))])] * 3


FINAL = {
    "529": (error(529, "overloaded_error", "Overloaded"), "529 overloaded",
            "API error: 529 Overloaded. The API is overloaded: try again in a moment."),
    "500 with a full stop": (
        error(500, "api_error", "Internal server error."), "500 server error",
        "API error: 500 Internal server error. The API failed on its side: try again in a moment."),
    "503": (error(503, "api_error", "Service unavailable"), "503 unavailable",
            "API error: 503 Service unavailable. The API failed on its side: try again in a "
            "moment."),
    "429": (error(429, "rate_limit_error", "Rate limited."), "429 rate limited",
            "API error: 429 Rate limited. Rate limited: wait a moment and try again."),
}


@pytest.mark.parametrize("kind", list(FINAL))
def test_after_the_last_retry_the_error_is_one_line_with_its_hint_and_one_full_stop(
    edge, kind, api, tmp_path, capsys, backoff
):
    failure, cause, line = FINAL[kind]
    session = live_session(edge, api, tmp_path)
    api.answer(failure, failure, failure)

    assert edge.run_turn(session, "hi") is False

    assert (backoff, len(api.seen)) == ([0.5, 0.5], 3)
    assert said(capsys) == [f"  [retrying in 0.5 s ({cause}, attempt 2 of 3)]",
                            f"  [retrying in 0.5 s ({cause}, attempt 3 of 3)]",
                            line]
    assert session.messages == []


def test_a_spend_limit_is_not_retried_and_its_hint_says_waiting_will_not_help(
    edge, api, tmp_path, capsys, waits
):
    session = live_session(edge, api, tmp_path)
    api.answer(error(
        429, "rate_limit_error",
        "You have reached your API usage limits: your organization has crossed its monthly API "
        "usage threshold. You will regain access on 2027-01-01 at 00:00 UTC.",
        details={"error_code": "enforced_spend_limit_reached"}))

    assert edge.run_turn(session, "hi") is False

    assert (waits, len(api.seen)) == ([], 1)
    assert said(capsys) == [
        "API error: 429 You have reached your API usage limits: your organization has crossed "
        "its monthly API usage threshold. You will regain access on 2027-01-01 at 00:00 UTC. "
        "A spend limit is reached: waiting will not help until it is raised or resets."]


def test_a_server_that_never_answers_times_out_each_attempt_and_says_so(
    edge, api, tmp_path, capsys, backoff, monkeypatch
):
    monkeypatch.setattr(edge, "API_TIMEOUT", anthropic.Timeout(0.05, connect=0.05))
    session = live_session(edge, api, tmp_path)
    api.answer(SILENCE, SILENCE, SILENCE)

    assert edge.run_turn(session, "hi") is False

    assert (len(api.seen), backoff) == (3, [0.5, 0.5])
    assert said(capsys) == [
        "  [retrying in 0.5 s (no answer within 0.05 s, attempt 2 of 3)]",
        "  [retrying in 0.5 s (no answer within 0.05 s, attempt 3 of 3)]",
        "API error: no answer within 0.05 s: the server is slow or hung. Try again, or check "
        "ANTHROPIC_BASE_URL.",
    ]
    assert session.messages == []


def test_no_connection_is_retried_with_a_line_each_then_one_error_line(
    edge, tmp_path, capsys, backoff
):
    with socket.socket() as closed:  # a port that nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    client = edge.live_client(api_key=KEY, base_url=f"http://127.0.0.1:{port}")
    session = new_session(edge, client, tmp_path, live=True)

    assert edge.run_turn(session, "hi") is False

    assert said(capsys) == [
        "  [retrying in 0.5 s (no connection, attempt 2 of 3)]",
        "  [retrying in 0.5 s (no connection, attempt 3 of 3)]",
        "API error: could not reach the API. Check the network, a proxy, or ANTHROPIC_BASE_URL.",
    ]
    assert backoff == [0.5, 0.5]


def test_ctrl_c_while_the_sdk_waits_to_retry_cancels_the_turn_cleanly(
    edge, api, tmp_path, capsys, monkeypatch
):
    def ctrl_c(seconds):
        raise KeyboardInterrupt

    monkeypatch.setattr(anthropic._base_client.time, "sleep", ctrl_c)
    session = live_session(edge, api, tmp_path)
    api.answer(error(529, "overloaded_error", "Overloaded", headers={"retry-after": "5"}))

    assert edge.run_turn(session, "hi") is False

    assert said(capsys) == ["  [retrying in 5 s (529 overloaded, attempt 2 of 3)]",
                            "[Interrupted.]"]
    assert (session.messages, len(api.seen)) == ([], 1)
    assert edge.RETRY_LINES not in edge.SDK_LOG.handlers  # the lines stop with the call


def test_retries_of_another_client_print_nothing(edge, api, tmp_path, capsys, waits):
    """Only the chapter's own client (its middleware) makes lines: another client's retries,
    inside the same call_model, stay as quiet as the SDK keeps them."""
    other = anthropic.Anthropic(api_key=KEY, base_url=api.url, max_retries=1)
    session = new_session(edge, other, tmp_path)
    api.answer(error(529, "overloaded_error", "Overloaded", headers={"retry-after": "1"}),
               message(text("Quiet."), usage=usage()))

    assert edge.run_turn(session, "hi") is True

    assert (waits, said(capsys)) == ([1.0], ["Quiet."])


# ======================================================================
# pause_turn
# ======================================================================

SEARCH = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search",
          "input": {"query": "loopback"}}
FOUND = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01",
         "content": [{"type": "web_search_result", "url": "https://example.com/",
                      "title": "Example", "encrypted_content": "EqgfCioIARgB", "page_age": None}]}


def test_a_paused_turn_is_sent_back_as_it_is_and_goes_on_in_the_same_assistant_turn(
    chapter, api, tmp_path, capsys
):
    session = live_session(chapter, api, tmp_path)
    api.answer(message(text("Searching."), SEARCH, stop_reason="pause_turn", usage=usage()),
               message(FOUND, text("Found it."), usage=usage()))

    assert chapter.run_turn(session, "look it up") is True

    prompt = [user(text("look it up"))]
    assert api.bodies() == [
        live_request(chapter, session, prompt),
        live_request(chapter, session, prompt + [assistant(text("Searching."), SEARCH)]),
    ]
    assert session.messages == prompt + [assistant(text("Searching."), SEARCH, FOUND,
                                                   text("Found it."))]
    assert said(capsys) == [usage_line(), "Searching.", usage_line(), "Found it."]


def test_a_paused_turn_with_nothing_to_send_back_ends_the_turn_with_one_line(
    chapter, api, tmp_path, capsys
):
    session = live_session(chapter, api, tmp_path)
    api.answer(message(stop_reason="pause_turn", usage=usage()))

    assert chapter.run_turn(session, "look it up") is False

    assert said(capsys) == [
        usage_line(), "[The model paused its turn, and it could not be sent back to go on.]"]
    assert session.messages == []


# ======================================================================
# --max-calls
# ======================================================================

def test_the_call_budget_ends_the_turn_with_one_line_and_a_history_that_takes_a_prompt(
    chapter, api, tmp_path, capsys
):
    session = live_session(chapter, api, tmp_path, max_calls=2)
    calls = [tool_use(f"toolu_loop_{n}", "bash", {"command": f"echo {n}"}) for n in (1, 2)]
    api.answer(*[message(call, stop_reason="tool_use", usage=usage()) for call in calls],
               message(text("Stopping."), usage=usage()))

    assert chapter.run_turn(session, "loop") is False

    history = [user(text("loop")),
               assistant(calls[0]), user(result("toolu_loop_1", "1\n[exit code: 0]")),
               assistant(calls[1]), user(result("toolu_loop_2", "2\n[exit code: 0]"))]
    assert session.messages == history
    assert len(api.seen) == 2
    assert said(capsys)[-1] == (
        "[The turn reached its call limit (--max-calls 2): send a prompt to go on.]")

    assert chapter.run_turn(session, "go on") is True
    joined = history[:-1] + [user(result("toolu_loop_2", "2\n[exit code: 0]"), text("go on"))]
    assert api.bodies()[2] == live_request(chapter, session, joined)


def test_max_calls_is_a_whole_number_of_at_least_one(every, capsys):
    chapter = every
    assert (chapter.parse_args([]).max_calls, chapter.MAX_CALLS) == (50, 50)
    assert chapter.parse_args(["--max-calls", "3"]).max_calls == 3
    for bad in ("0", "-1", "x", "2.5", "\u00b2"):  # "²" is a digit, but not one int() reads
        with pytest.raises(SystemExit) as stopped:
            chapter.parse_args(["--max-calls", bad])
        assert stopped.value.code == 2
        assert capsys.readouterr().err.splitlines()[-1].endswith(
            f"argument --max-calls: must be a whole number, 1 or more (not {bad!r})")


# ======================================================================
# Exit codes of a one-shot run, as a learner runs it
# ======================================================================

ONE_SHOT = {  # what the loopback API answers; the exit code; the last line on the screen
    "the turn ends well": ([message(text("Done."))], 0, "Done."),
    "a refusal": ([message(stop_reason="refusal")], 1, NOT_KEPT),
    "max_tokens": ([message(text("Cut"), stop_reason="max_tokens")], 1,
                   "[The reply was cut off at max_tokens (8000).]"),
    "a pause that cannot go on": ([message(stop_reason="pause_turn")], 1,
                                  "[The model paused its turn, and it could not be sent back to "
                                  "go on.]"),
    "a full context": ([error(400, "invalid_request_error", "prompt is too long: 210712 tokens "
                              "> 200000 maximum")], 1, NOT_KEPT),
    "an API error": ([error(401, "authentication_error", "invalid x-api-key")], 1,
                     "API error: 401 invalid x-api-key. Check ANTHROPIC_API_KEY."),
    "the call budget": ([message(tool_use("toolu_1", "bash", {"command": "true"}),
                                 stop_reason="tool_use")], 1,
                        "[The turn reached its call limit (--max-calls 1): send a prompt to go "
                        "on.]"),
}


def test_a_one_shot_run_exits_1_unless_its_turn_ended_well(api, tmp_path):
    api.answer_by_prompt({case: answers for case, (answers, _, _) in ONE_SHOT.items()})
    env = clean_env(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=api.url, MODEL_ID="test-model")

    def one_shot(case):
        workdir = tmp_path / case.replace(" ", "_")
        done = run_chapter("s01_loop", "--workdir", str(workdir), "--max-calls", "1", case,
                           env=env)
        return done.returncode, done.stderr, done.stdout.splitlines()[-1]

    with ThreadPoolExecutor(len(ONE_SHOT)) as runs:  # side by side: the runner forks each
        ended = dict(zip(ONE_SHOT, runs.map(one_shot, ONE_SHOT), strict=True))

    assert ended == {case: (code, "", last) for case, (_, code, last) in ONE_SHOT.items()}
    assert len(api.seen) == len(ONE_SHOT)


def test_a_bad_max_calls_exits_2_before_any_call(api, tmp_path):
    env = clean_env(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=api.url)
    done = run_chapter(PRESENT[-1], "--workdir", str(tmp_path), "--max-calls", "0", "go", env=env)
    assert (done.returncode, done.stdout, api.seen) == (2, "", [])
    assert done.stderr.splitlines()[-1].endswith(
        "argument --max-calls: must be a whole number, 1 or more (not '0')")


# ======================================================================
# Whatever the call raises or the reply holds: one line, and the REPL goes on
# ======================================================================

def test_an_exception_nobody_expected_from_the_call_is_one_line_and_the_repl_goes_on(
    chapter, tmp_path, capsys, keyboard
):
    client = support.FakeClient(RuntimeError("a bug in a gateway's client"),
                                support.reply(text("Back.")))
    session = new_session(chapter, client, tmp_path)
    keyboard.feed("hello", "again")

    assert chapter.repl(session) == 0

    lines = [line for line in said(capsys) if line not in ("hello", "again", "")]
    assert lines == ["API error: the call failed with RuntimeError: a bug in a gateway's client",
                     "Back."]
    assert session.messages == [user(text("again")), assistant(text("Back."))]


UNUSABLE = {  # a block the SDK does not check, as a gateway may send it, after a good one
    "a block without a type": ({"text": "hi"}, "block 2 has no type"),
    "a text block without text": ({"type": "text"}, "text block 2 has no text"),
    "a text block whose text is a number": ({"type": "text", "text": 5},
                                            "text block 2 has no text"),
    "a tool_use without its id": ({"type": "tool_use", "name": "bash", "input": {}},
                                  "tool_use block 2 lacks its id, name or input"),
    "a tool_use without its input": ({"type": "tool_use", "id": "toolu_1", "name": "bash"},
                                     "tool_use block 2 lacks its id, name or input"),
}


@pytest.mark.parametrize("kind", list(UNUSABLE))
def test_a_reply_with_a_block_the_loop_cannot_use_is_one_api_error_line(
    edge, kind, api, tmp_path, capsys
):
    block, problem = UNUSABLE[kind]
    session = live_session(edge, api, tmp_path)
    api.answer(message(text("Fine so far."), block, stop_reason="tool_use"))

    assert edge.run_turn(session, "hi") is False

    assert said(capsys) == [f"API error: the reply is not a valid Message: {problem}."]
    assert session.messages == []


# ======================================================================
# /clear: what each chapter keeps
# ======================================================================

def test_clear_empties_the_history_and_keeps_the_chapters_settings(every, tmp_path, capsys):
    chapter = every
    client = support.FakeClient(support.reply(text("Again.")))
    session = new_session(chapter, client, tmp_path, max_calls=7)
    session.messages[:] = [user(text("hi")), assistant(text("Hello."))]
    kept = {"mode": "accept_edits", "settings": {"permissions": {"allow": ["bash(ls)"]}},
            "hooks": ["a hook"]}
    kept = {field: value for field, value in kept.items() if hasattr(session, field)}
    for field, value in kept.items():
        setattr(session, field, value)
    if hasattr(session, "todos"):
        session.todos = [{"content": "Old", "status": "in_progress"}]
        session.rounds_since_todo = 2

    chapter.run_command(session, "/clear")

    assert said(capsys) == [CLEARED[chapter.CHAPTER].format(mode="accept_edits")]
    assert session.messages == []
    assert {field: getattr(session, field) for field in kept} == kept
    assert (session.max_calls, session.client, session.workdir) == (7, client, tmp_path)
    if hasattr(session, "todos"):  # the model's notes on a conversation that is gone
        assert (session.todos, session.rounds_since_todo) == ([], 0)


def test_clear_in_plan_mode_keeps_it_on_and_the_new_conversation_hears_of_it(tmp_path, capsys):
    s06 = load_chapter("s06_plan_mode")
    client = support.FakeClient(support.reply(text("Planning.")))
    session = new_session(s06, client, tmp_path, plan_mode=True,
                          messages=[user(text("hi")), assistant(text("Hello."))],
                          notes=[s06.PLAN_MODE_LEFT])

    s06.run_command(session, "/clear")
    s06.run_turn(session, "plan it")

    assert said(capsys)[0] == CLEARED["s06_plan_mode"].format(mode="default").replace(
        "(off)", "(on)")
    assert session.plan_mode is True
    assert client.calls[0]["messages"] == [user(text("plan it"), text(s06.PLAN_MODE_ENTERED))]


def test_clear_offline_says_that_the_script_goes_on_where_it_was(every, tmp_path, capsys):
    chapter = every
    session, _ = chapter.make_session(chapter.parse_args(["--offline", "--workdir",
                                                          str(tmp_path)]))
    session.client.position = 1
    chapter.run_command(session, "/clear")
    assert said(capsys) == [CLEARED[chapter.CHAPTER].format(mode="default")[:-1]
                            + " The script goes on where it was (/restart plays it from its "
                            "start).]"]
    assert (session.messages, session.client.position) == ([], 1)


# ======================================================================
# Other providers: a reply without the fields only Anthropic's API sends
# ======================================================================

def test_a_reply_without_stop_details_or_cache_fields_is_one_usage_line_and_a_valid_history(
    edge, api, tmp_path, capsys
):
    session = live_session(edge, api, tmp_path)
    # As an Anthropic-compatible endpoint may send it: no stop_details, usage without cache_*.
    api.answer(message(text("Hello."), usage={"input_tokens": 9, "output_tokens": 4}),
               message(text("Again."), usage={"input_tokens": 11, "output_tokens": 2,
                                              "cache_read_input_tokens": None}))

    assert edge.run_turn(session, "hi") is True
    assert edge.run_turn(session, "again") is True

    history = [user(text("hi")), assistant(text("Hello.")), user(text("again")),
               assistant(text("Again."))]
    assert session.messages == history
    assert api.bodies()[1] == live_request(edge, session, history[:3])
    assert said(capsys) == [
        "  [tokens: 9 in (0 read from the cache, 0 written to it), 4 out]", "Hello.",
        "  [tokens: 11 in (0 read from the cache, 0 written to it), 2 out]", "Again.",
    ]


def test_a_reply_whose_usage_is_null_says_so_in_its_line(edge, api, tmp_path, capsys):
    session = live_session(edge, api, tmp_path)
    body = json.loads(message(text("Hi.")).body)
    body["usage"] = None
    api.answer(raw(json.dumps(body).encode()))

    assert edge.run_turn(session, "hi") is True

    assert said(capsys) == ["  [tokens: the reply did not say how many]", "Hi."]
    assert session.messages == [user(text("hi")), assistant(text("Hi."))]


def test_a_usage_that_counts_in_booleans_states_no_count(edge, api, tmp_path, capsys):
    # True is an int to Python, not a count of tokens: the line and every counter agree on it.
    session = live_session(edge, api, tmp_path)
    body = json.loads(message(text("Hi.")).body)
    body["usage"] = {"input_tokens": True, "output_tokens": 4, "cache_read_input_tokens": False}
    api.answer(raw(json.dumps(body).encode()))

    assert edge.run_turn(session, "hi") is True

    assert said(capsys) == ["  [tokens: the reply did not say how many]", "Hi."]
    usage = SimpleNamespace(input_tokens=True, output_tokens=4)
    assert [edge.usage_count(usage, name) for name in ("input_tokens", "output_tokens")] == [
        None, 4]


def test_an_unknown_stop_reason_ends_the_turn_with_one_line_and_a_history_that_goes_on(
    edge, api, tmp_path, capsys
):
    session = live_session(edge, api, tmp_path)
    api.answer(message(text("Partly done."), stop_reason="length_exceeded", usage=usage()),
               message(text("Going on."), usage=usage()))

    assert edge.run_turn(session, "hi") is False
    assert edge.run_turn(session, "go on") is True

    history = [user(text("hi")), assistant(text("Partly done.")), user(text("go on")),
               assistant(text("Going on."))]
    assert session.messages == history
    assert api.bodies()[1] == live_request(edge, session, history[:3])
    assert said(capsys) == [usage_line(), "Partly done.",
                            "[The model stopped: length_exceeded.]", usage_line(), "Going on."]


def test_an_unknown_block_type_is_kept_out_of_the_history_with_one_line(
    edge, api, tmp_path, capsys
):
    session = live_session(edge, api, tmp_path)
    reasoning = {"type": "reasoning_content", "reasoning": "The user greets me."}
    api.answer(message(reasoning, text("Hello."), usage=usage()),
               message(text("Again."), usage=usage()))

    assert edge.run_turn(session, "hi") is True
    assert edge.run_turn(session, "again") is True

    history = [user(text("hi")), assistant(text("Hello.")), user(text("again")),
               assistant(text("Again."))]
    assert session.messages == history
    assert api.bodies()[1] == live_request(edge, session, history[:3])
    assert said(capsys) == [usage_line(), "[A block of type reasoning_content is not kept: "
                            "the loop knows text, tool_use and the API's own block types.]",
                            "Hello.", usage_line(), "Again."]
