"""s08_compact: clearing old tool results, the summary and the new history, the thresholds
measured from usage, thrashing stopped, a too-long reply recovered, /context, /compact,
PreCompact, the scripted usage."""

import json
import os
import shutil

import anthropic
import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robustness_support import history_problems
from support import (
    ROOT,
    FakeClient,
    assistant,
    load_chapter,
    new_session,
    read_trace,
    reply,
    request,
    result,
    run_chapter,
    text,
    tool_use,
    user,
)
from tools import context_estimate

CHAPTERS = ["s08_compact"]

INSTRUCTION = (
    "The context is nearly full, so this conversation will be replaced by your summary of it. "
    "Write that summary now, as text, and call no tool. It is all you will have of the "
    "conversation, so keep: the user's requests, in their words where it matters; what you did "
    "and found (files, commands, results, errors and how they were fixed); the decisions made "
    "and why; the work still to do, and the very next step."
)
INTRO = ("This conversation was compacted: the summary below replaces what came before. "
         "Go on from where it leaves off.")
PROMPT = "Tidy a.txt."
TODOS = [{"content": "Read a.txt", "status": "completed"},
         {"content": "Tidy a.txt", "status": "in_progress", "activeForm": "Tidying a.txt"}]
TODOS_RENDERED = "[x] Read a.txt\n[>] Tidying a.txt\n(1/2 completed)"
TODOS_TEXT = ('<reminder>Your todo list, as it stands:\n'
              '{"content": "Read a.txt", "status": "completed"}\n'
              '{"content": "Tidy a.txt", "status": "in_progress", "activeForm": "Tidying a.txt"}'
              '</reminder>')
PROMPT_TEXT = f"The user's last prompt, which the work is for:\n\n{PROMPT}"


@pytest.fixture
def s08():
    return load_chapter("s08_compact")


def summary_block(summary):
    return text(f"{INTRO}\n\n<summary>\n{summary}\n</summary>")


def with_usage(message, input_tokens, output_tokens=0, cache_read=0):
    """A reply that says how many tokens its call used."""
    message.usage.input_tokens, message.usage.output_tokens = input_tokens, output_tokens
    message.usage.cache_read_input_tokens = cache_read
    return message


def chars(req):
    """The characters of what a request sends: system prompt, tools and history (as JSON)."""
    return len(json.dumps([req["system"], req["tools"], req["messages"]], ensure_ascii=False))


def answered(req, *blocks):
    """The characters a reply's usage counts: its request's, and the reply's own as the history
    keeps it (an assistant message)."""
    return chars({**req, "messages": [*req["messages"], assistant(*blocks)]})


def estimate(req):
    """The size of a request before any reply has measured it: four characters a token."""
    return chars(req) // 4


def too_long():
    body = {"type": "error", "error": {"type": "invalid_request_error",
                                       "message": "prompt is too long: 210712 tokens > 200000"}}
    http_request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    response = httpx2.Response(400, json=body, request=http_request)
    return anthropic.BadRequestError("Error code: 400", response=response, body=body)


def cleared(name, subject, size):
    return (f"[Cleared to save context: the result of {name}: {subject}, {size:,} characters. "
            "Call the tool again if you need it.]")


# ======================================================================
# Layer 1: clearing old tool results
# ======================================================================

def old_results():
    """A history of seven results: an exempt one, an error, one too short to clear, and the
    newest three (one of them exempt)."""
    return [
        user(text("Look around.")),
        assistant(tool_use("t1", "todo_write", {"todos": TODOS}),
                  tool_use("t2", "read_file", {"path": "a.txt"})),
        user(result("t1", TODOS_RENDERED), result("t2", "A" * 500)),
        assistant(text("Listing."), tool_use("t3", "bash", {"command": "ls -la\nwc -l a.txt"})),
        user(result("t3", "x" * 300, is_error=True)),
        assistant(tool_use("t4", "glob", {"pattern": "*.py"})),
        user(result("t4", "a.py")),
        assistant(tool_use("t5", "read_file", {"path": "b.txt"}),
                  tool_use("t6", "exit_plan_mode", {"plan": "## Plan"})),
        user(result("t5", "B" * 400), result("t6", "The user approved the plan.")),
        assistant(tool_use("t7", "read_file", {"path": "c.txt"})),
        user(result("t7", "C" * 1000), text("<reminder>Update your todos.</reminder>")),
    ]


def test_the_exempt_tools_are_the_users_answers_the_plan_the_todos_and_a_subagents_answer(s08):
    assert s08.CLEAR_EXEMPT == {"todo_write", "enter_plan_mode", "exit_plan_mode",
                                "ask_user_question", "agent"}


def test_every_result_but_the_newest_three_becomes_one_line_and_the_calls_stay(s08):
    messages = old_results()
    assert s08.clear_old_results(messages) == (2, 800)
    expected = old_results()
    expected[2]["content"][1]["content"] = cleared("read_file", "a.txt", 500)
    # an error stays an error; a command of two lines is named by its first
    expected[4]["content"][0]["content"] = cleared("bash", "ls -la … (1 more line)", 300)
    assert messages == expected
    assert history_problems(messages) == []
    # Done once: a second pass clears nothing more.
    assert s08.clear_old_results(messages) == (0, 0)
    assert messages == expected


def test_keep_counts_the_newest_results_and_zero_clears_all_but_the_exempt(s08):
    messages = old_results()
    assert s08.clear_old_results(messages, keep=0) == (4, 2200)
    assert [block["content"] for message in messages[2::2] for block in message["content"]
            if block["type"] == "tool_result"] == [
        TODOS_RENDERED,
        cleared("read_file", "a.txt", 500),
        cleared("bash", "ls -la … (1 more line)", 300),
        "a.py",
        cleared("read_file", "b.txt", 400),
        "The user approved the plan.",
        cleared("read_file", "c.txt", 1000),
    ]


def test_the_loop_clears_past_clear_at_and_says_so_with_the_sizes(s08, workdir, capsys):
    (workdir / "b.txt").write_text("b" * 600)
    reads = [tool_use(f"r{n}", "read_file", {"path": "b.txt"}) for n in range(1, 5)]
    client = FakeClient(*[with_usage(reply(read), 1000 * n) for n, read in enumerate(reads, 1)],
                        with_usage(reply(text("Read.")), 6000, 10))
    session = new_session(s08, client, workdir, clear_at=4000, compact_at=9000)
    assert s08.run_turn(session, "Read b.txt four times.") is True
    # Before the fifth call, the size is the fourth reply's 4,000 tokens and what came since:
    # over --clear-at, so the oldest of the four results is cleared, and only it.
    fourth, fifth = client.calls[3], client.calls[4]
    content = fourth["messages"][2]["content"][0]["content"]
    as_read = [*fourth["messages"], assistant(reads[3]), user(result("r4", content))]
    assert fifth["messages"] == [as_read[0], as_read[1], user(result("r1", cleared(
        "read_file", "b.txt", len(content)))), *as_read[3:]]
    counted = answered(fourth, reads[3])
    before = 4000 + (chars({**fifth, "messages": as_read}) - counted) // 4
    after = 4000 + (chars(fifth) - counted) // 4
    assert [line for line in capsys.readouterr().out.splitlines() if line.startswith("[")] == [
        f"[Context over --clear-at 4,000: cleared 1 old tool result ({len(content):,} "
        f"characters); ~{before:,} tokens before, ~{after:,} after.]"]
    assert history_problems(session.messages) == []


# ======================================================================
# Layer 2: the summary request and the new history
# ======================================================================

def test_past_compact_at_the_summary_request_is_the_loops_own_plus_the_instruction(
        s08, workdir, capsys):
    todo = tool_use("t1", "todo_write", {"todos": TODOS})
    client = FakeClient(with_usage(reply(text("Listing the steps."), todo), 12_000, 50),
                        with_usage(reply(text("S: a.txt read; tidy it next.")), 12_100, 30),
                        with_usage(reply(text("Done.")), 900, 5))
    session = new_session(s08, client, workdir, clear_at=5000, compact_at=10_000)
    assert s08.run_turn(session, PROMPT) is True

    history = [user(text(PROMPT)), assistant(text("Listing the steps."), todo),
               user(result("t1", TODOS_RENDERED))]
    new_history = [user(summary_block("S: a.txt read; tidy it next."), text(TODOS_TEXT),
                        text(PROMPT_TEXT))]
    summary_request = request(s08, session, history[:2] + [
        user(result("t1", TODOS_RENDERED), text(INSTRUCTION))])
    assert client.calls == [
        request(s08, session, history[:1]),
        summary_request,  # the same system prompt, tools and history: the cached prefix holds
        request(s08, session, new_history),
    ]
    assert session.messages == new_history + [assistant(text("Done."))]
    assert session.todos == TODOS  # the list itself stays, as well as its copy for the model
    assert history_problems(session.messages) == []
    measured = 12_050 + (chars(request(s08, session, history)) - answered(
        client.calls[0], text("Listing the steps."), todo)) // 4
    assert capsys.readouterr().out.splitlines() == [
        "Listing the steps.",
        "  > todo_write: [2 items]",
        "    [x] Read a.txt",
        "    [>] Tidying a.txt",
        "    (1/2 completed)",
        f"[Context over --compact-at 10,000: the history is summarised; ~{measured:,} tokens "
        f"before, ~{estimate(client.calls[2]):,} after.]",
        "Done.",
    ]
    assert (session.compactions, session.summarised) == (1, False)  # 905 < 10,000: watch over


def test_the_new_history_carries_plan_mode_and_the_newest_plan(s08, workdir, capsys):
    plans = workdir / ".agent" / "plans"
    plans.mkdir(parents=True)
    (plans / "plan-old.md").write_text("## Old plan\n")
    (plans / "plan-new.md").write_text("## Plan\n\n1. Tidy a.txt.\n")
    os.utime(plans / "plan-old.md", (1, 1))
    client = FakeClient(reply(text("S")), reply(text("Planning.")))
    session = new_session(s08, client, workdir, todos=list(TODOS), plan_mode=True, prompt=PROMPT,
                          messages=[user(text(PROMPT)), assistant(text("Reading first."))])
    s08.command_compact(session, "")
    assert session.messages == [user(
        summary_block("S"), text(TODOS_TEXT), text(s08.PLAN_MODE_ENTERED),
        text("The newest approved plan, .agent/plans/plan-new.md:\n\n## Plan\n\n1. Tidy a.txt."),
        text(PROMPT_TEXT))]
    assert session.plan_mode is True
    s08.run_turn(session, "Go on.")
    # still the plan-mode tools, and the prompt joins the compacted user turn
    assert [tool["name"] for tool in client.calls[1]["tools"]] == [
        "bash", "read_file", "glob", "todo_write", "exit_plan_mode", "ask_user_question", "agent"]
    assert client.calls[1]["messages"][0]["content"][-2:] == [
        text("Go on."), text(s08.PLAN_MODE_STILL_ON)]


def test_compact_with_a_focus_and_a_precompact_hook_that_adds_to_the_instruction(
        s08, workdir, capsys):
    events = []

    def keep_names(event):
        events.append(event)
        return {"context": "Keep every file name."}

    client = FakeClient(reply(text("S")))
    history = [user(text("Hi")), assistant(text("Hello."))]
    session = new_session(s08, client, workdir, messages=[*history])
    s08.add_hook(session, "PreCompact", keep_names)
    before = estimate(request(s08, session, history))
    s08.command_compact(session, "the tests")
    assert events == [{"hook_event_name": "PreCompact", "cwd": str(workdir),
                       "trigger": "manual", "custom_instructions": "the tests"}]
    assert client.calls == [request(s08, session, history + [user(text(
        INSTRUCTION + "\nThe user asks the summary to keep in particular: the tests"
        '\n<hook event="PreCompact">Keep every file name.</hook>'))])]
    assert session.messages == [user(summary_block("S"))]
    after = estimate(request(s08, session, session.messages))
    assert capsys.readouterr().out == (
        f"[/compact: the history is summarised; ~{before:,} tokens before, ~{after:,} after.]\n")


def test_a_precompact_command_hook_in_settings_adds_to_the_instruction(s08, workdir):
    settings = workdir / ".agent" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": {"PreCompact": [{"command": (
        "python3 -c \"import json, sys; event = json.load(sys.stdin); "
        "print(json.dumps({'context': 'Trigger: ' + event['trigger']}))\"")}]}}))
    client = FakeClient(reply(text("S")))
    history = [user(text("Hi")), assistant(text("Hello."))]
    session = new_session(s08, client, workdir, messages=[*history])
    session.settings = s08.load_settings(workdir)
    s08.load_command_hooks(session)
    s08.command_compact(session, "")
    assert client.calls[0]["messages"][-1] == user(text(
        INSTRUCTION + '\n<hook event="PreCompact">Trigger: manual</hook>'))


def test_a_precompact_hook_that_blocks_leaves_the_history_and_calls_nothing(s08, workdir,
                                                                            capsys):
    client = FakeClient()
    history = [user(text("Hi")), assistant(text("Hello."))]
    session = new_session(s08, client, workdir, messages=[*history])
    s08.add_hook(session, "PreCompact", lambda event: {"decision": "block", "reason": "not now"})
    s08.command_compact(session, "")
    assert (client.calls, session.messages) == ([], history)
    assert capsys.readouterr().out == "[A PreCompact hook blocked the summary: not now]\n"


def test_compact_on_an_empty_history_and_an_api_error_leave_it_as_it_was(s08, workdir, capsys):
    s08.command_compact(new_session(s08, FakeClient(), workdir), "")
    history = [user(text("Hi")), assistant(text("Hello."))]
    session = new_session(s08, FakeClient(too_long()), workdir, messages=[*history])
    s08.command_compact(session, "")
    assert session.messages == history
    assert capsys.readouterr().out == (
        "(nothing to compact: the history is empty)\n"
        "API error: 400 prompt is too long: 210712 tokens > 200000. The conversation is too long "
        "to send: /clear starts a new one. The history stays as it was.\n")


# ======================================================================
# Thrashing stops; a too-long reply recovers
# ======================================================================

def test_still_over_after_a_summary_the_turn_stops_without_a_second_summary(s08, workdir,
                                                                            capsys):
    read = tool_use("t2", "read_file", {"path": "a.txt"})
    # The reply after the summary still says 11,000 tokens: a second summary would not help.
    client = FakeClient(with_usage(reply(tool_use("t1", "todo_write", {"todos": TODOS})), 12_000),
                        reply(text("S")),
                        with_usage(reply(read), 11_000))
    session = new_session(s08, client, workdir, clear_at=5000, compact_at=10_000)
    assert s08.run_turn(session, PROMPT) is False
    assert len(client.calls) == 3  # no fourth call: no second summary
    out = capsys.readouterr().out.splitlines()
    size = 11_000 + (chars(request(s08, session, session.messages))
                     - answered(client.calls[2], read)) // 4
    assert out[-1] == (f"[The context is still ~{size:,} tokens after a summary, over "
                       "--compact-at 10,000: summarising again would not help. /clear starts a "
                       "new conversation.]")
    assert history_problems(session.messages) == []
    assert session.messages[0] == user(summary_block("S"), text(TODOS_TEXT), text(PROMPT_TEXT))
    assert session.compactions == 1


def test_a_summary_that_cannot_make_room_stops_at_once(s08, workdir, capsys):
    # --compact-at below what the system prompt and the tools take: one summary, then one line.
    client = FakeClient(reply(text("S")))
    session = new_session(s08, client, workdir, compact_at=1000)
    assert s08.run_turn(session, PROMPT) is False
    assert client.calls == [request(s08, session, [user(text(PROMPT), text(INSTRUCTION))])]
    new_history = [user(summary_block("S"), text(PROMPT_TEXT))]
    assert session.messages == new_history
    before = estimate(request(s08, session, [user(text(PROMPT))]))
    after = estimate(request(s08, session, new_history))
    assert capsys.readouterr().out == (
        f"[Context over --compact-at 1,000: the history is summarised; ~{before:,} tokens "
        f"before, ~{after:,} after.]\n"
        f"[The context is still ~{after:,} tokens after a summary, over --compact-at 1,000: "
        "summarising again would not help. /clear starts a new conversation.]\n")


def test_a_too_long_reply_summarises_once_and_the_call_is_tried_again(s08, workdir, capsys):
    client = FakeClient(too_long(), reply(text("S")), reply(text("Done.")))
    session = new_session(s08, client, workdir)
    assert s08.run_turn(session, PROMPT) is True
    new_history = [user(summary_block("S"), text(PROMPT_TEXT))]
    assert client.calls == [
        request(s08, session, [user(text(PROMPT))]),
        request(s08, session, [user(text(PROMPT), text(INSTRUCTION))]),
        request(s08, session, new_history),
    ]
    assert session.messages == new_history + [assistant(text("Done."))]
    before = estimate(client.calls[0])
    assert capsys.readouterr().out == (
        f"[The API says the conversation is too long: the history is summarised; ~{before:,} "
        f"tokens before, ~{estimate(client.calls[2]):,} after.]\nDone.\n")


def test_too_long_again_after_the_summary_ends_the_turn_with_the_new_history(s08, workdir,
                                                                             capsys):
    client = FakeClient(too_long(), reply(text("S")), too_long())
    session = new_session(s08, client, workdir)
    assert s08.run_turn(session, PROMPT) is False
    assert len(client.calls) == 3
    assert session.messages == [user(summary_block("S"), text(PROMPT_TEXT))]
    assert capsys.readouterr().out.splitlines()[-1] == (
        "API error: 400 prompt is too long: 210712 tokens > 200000. The conversation is too long "
        "to send: /clear starts a new one.")


# ======================================================================
# Pairs stay valid under random histories
# ======================================================================

NAMES = ["bash", "read_file", "glob", "todo_write", "exit_plan_mode", "ask_user_question",
         "agent"]


@st.composite
def histories(draw):
    """A valid history: a prompt, then rounds of calls and their results, maybe a final text."""
    messages = [user(text("Go."))]
    number = 0
    for _ in range(draw(st.integers(0, 8))):
        calls = []
        for _ in range(draw(st.integers(1, 3))):
            number += 1
            name = draw(st.sampled_from(NAMES))
            field = {"bash": "command", "read_file": "path", "glob": "pattern"}.get(name, "x")
            calls.append(tool_use(f"toolu_{number:02d}", name, {field: draw(st.text(max_size=8))}))
        said = draw(st.sampled_from([[], [text("On it.")]]))
        messages.append(assistant(*said, *calls))
        results = [result(call["id"], "r" * draw(st.integers(0, 400)), draw(st.booleans()))
                   for call in calls]
        messages.append(user(*results, *draw(st.sampled_from([[], [text("<reminder>")]]))))
    if draw(st.booleans()):
        messages.append(assistant(text("Done.")))
    return messages


def ids(messages):
    return [(block["type"], block.get("id") or block.get("tool_use_id"))
            for message in messages for block in message["content"] if block["type"] != "text"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=histories(), keep=st.integers(0, 4))
def test_clearing_keeps_every_pair_and_only_old_results_change(messages, keep):
    s08 = SHARED["s08"]
    before = json.loads(json.dumps(messages))
    count, cleared_chars = s08.clear_old_results(messages, keep)
    assert history_problems(messages) == []
    assert ids(messages) == ids(before)
    results = [(old, new) for old_message, new_message in zip(before, messages, strict=True)
               for old, new in zip(old_message["content"], new_message["content"], strict=True)
               if old["type"] == "tool_result"]
    changed = [(old, new) for old, new in results if old != new]
    assert (len(changed), sum(len(old["content"]) for old, _ in changed)) == (count, cleared_chars)
    names = {block["id"]: block["name"] for message in before for block in message["content"]
             if block["type"] == "tool_use"}
    for place, (old, new) in enumerate(results):
        if old != new:
            assert place < len(results) - keep
            assert names[old["tool_use_id"]] not in s08.CLEAR_EXEMPT
            assert {**new, "content": old["content"]} == old
            assert new["content"].startswith("[Cleared to save context: the result of ")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages=histories())
def test_a_summary_of_any_history_is_a_valid_request_and_a_valid_new_history(messages):
    s08, workdir = SHARED["s08"], SHARED["workdir"]
    client = FakeClient(reply(text("S")))
    session = new_session(s08, client, workdir, messages=json.loads(json.dumps(messages)),
                          todos=list(TODOS), prompt="Go.")
    s08.command_compact(session, "")
    assert history_problems(client.calls[0]["messages"]) == []
    # the instruction is the last user message: it joins the user turn the history ends with
    if messages[-1]["role"] == "user":
        sent = messages[:-1] + [user(*messages[-1]["content"], text(INSTRUCTION))]
    else:
        sent = messages + [user(text(INSTRUCTION))]
    assert client.calls[0]["messages"] == sent
    assert session.messages == [user(summary_block("S"), text(TODOS_TEXT), text("The user's "
                                     "last prompt, which the work is for:\n\nGo."))]


SHARED = {}


@pytest.fixture(autouse=True)
def shared(tmp_path):
    SHARED.update(s08=load_chapter("s08_compact") if "s08" not in SHARED else SHARED["s08"],
                  workdir=tmp_path)


# ======================================================================
# /context, the flags, the scripted usage, /clear
# ======================================================================

def test_context_shows_the_size_the_thresholds_and_the_history(s08, workdir, capsys):
    client = FakeClient(with_usage(reply(text("Hello.")), 2000, 20, cache_read=500))
    session = new_session(s08, client, workdir)
    s08.run_turn(session, "Hi")
    capsys.readouterr()
    s08.command_context(session, "")
    sent = request(s08, session, [user(text("Hi"))])
    since = chars(request(s08, session, session.messages)) - answered(sent, text("Hello."))
    assert since == 0  # nothing came after the reply: all of it is measured
    history = "".join(json.dumps(message, ensure_ascii=False) for message in session.messages)
    assert capsys.readouterr().out == (
        f"context: ~{2520 + since // 4:,} tokens (2,520 from the last reply's usage, "
        f"{since // 4:+,} estimated for the {since:+,} characters since, at 4 a token)\n"
        "clears old tool results at 100,000 tokens (--clear-at), summarises at 160,000 "
        "(--compact-at)\n"
        f"history: 2 messages, 0 tool calls, 0 tool results (0 cleared), {len(history):,} "
        "characters; summarised 0 times\n")


def test_context_before_any_reply_is_all_estimate(s08, workdir, capsys):
    session = new_session(s08, FakeClient(), workdir, messages=old_results())
    s08.clear_old_results(session.messages)
    s08.command_context(session, "")
    sent = request(s08, session, session.messages)
    history = "".join(json.dumps(message, ensure_ascii=False) for message in session.messages)
    assert capsys.readouterr().out.splitlines() == [
        f"context: ~{estimate(sent):,} tokens (estimated: {chars(sent):,} characters of system "
        "prompt, tools and history, at 4 a token)",
        "clears old tool results at 100,000 tokens (--clear-at), summarises at 160,000 "
        "(--compact-at)",
        f"history: 11 messages, 7 tool calls, 7 tool results (2 cleared), {len(history):,} "
        "characters; summarised 0 times",
    ]


def test_context_of_an_empty_history_counts_no_characters(s08, workdir, capsys):
    s08.command_context(new_session(s08, FakeClient(), workdir), "")
    assert capsys.readouterr().out.splitlines()[-1] == (
        "history: 0 messages, 0 tool calls, 0 tool results (0 cleared), 0 characters; "
        "summarised 0 times")


def test_a_reply_that_states_no_tokens_leaves_the_size_to_the_estimate(s08, workdir):
    """The scripted model's turns state no usage unless the script gives one: 0 tokens in and
    out is not a measure, and /compact after an off-script reply must not say ~0 tokens."""
    client = FakeClient(with_usage(reply(text("Hello.")), 0, 0))
    session = new_session(s08, client, workdir)
    s08.run_turn(session, "hi")
    sent = request(s08, session, session.messages)
    assert (session.measured, s08.context_size(session)) == (None, estimate(sent))


def test_the_thresholds_are_flags_with_defaults(s08, tmp_path):
    args = s08.parse_args(["--workdir", str(tmp_path), "--offline"])
    assert (args.clear_at, args.compact_at) == (s08.CLEAR_AT, s08.COMPACT_AT) == (100_000,
                                                                                 160_000)
    args = s08.parse_args(["--workdir", str(tmp_path), "--offline", "--clear-at", "500",
                           "--compact-at", "900"])
    session, _ = s08.make_session(args)
    assert (session.clear_at, session.compact_at) == (500, 900)
    with pytest.raises(SystemExit) as stopped:
        s08.parse_args(["--compact-at", "0"])
    assert stopped.value.code == 2


def test_a_scripted_turn_states_its_usage(s08, tmp_path):
    turn = {"usage": {"input_tokens": 7, "cache_read_input_tokens": 90, "output_tokens": 3},
            "content": [{"type": "text", "text": "Hi."}]}
    message = s08.make_message(turn, "m", iter(range(1, 9)), 1)
    assert (message.usage.input_tokens, message.usage.cache_read_input_tokens,
            message.usage.output_tokens) == (7, 90, 3)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"prompt": "p", "turns": [{**turn, "usage": {"input_tokens": "x"}}]}))
    with pytest.raises(s08.ScriptError) as error:
        s08.load_script(bad)
    assert str(error.value).startswith(f"{bad}: turn 1 is not a valid model turn (")


def test_clear_ends_the_summarys_watch_and_the_measure(s08, workdir, capsys):
    session = new_session(s08, FakeClient(), workdir, measured=(5, 5), summarised=True,
                          messages=[user(text("Hi"))])
    s08.command_clear(session, "")
    assert (session.measured, session.summarised, session.messages) == (None, False, [])


# ======================================================================
# The scenario: long enough to clear, then to summarise; the task is finished
# ======================================================================

def test_the_scenario_clears_then_summarises_and_finishes_the_task(tmp_path):
    scenario = json.loads((ROOT / "s08_compact" / "scenario.json").read_text())
    workdir = tmp_path / "work"
    shutil.copytree(ROOT / "s08_compact" / "workspace", workdir)
    run = run_chapter("s08_compact", "--offline", "--workdir", workdir, "--trace",
                      tmp_path / "trace.jsonl", scenario["prompt"])
    assert (run.returncode, run.stderr) == (0, "")
    calls = read_trace(tmp_path / "trace.jsonl")
    assert [list(call)[0] for call in calls] == ["request"] * 5 + ["compaction"] + ["request"] * 3
    assert all(history_problems(call["request"]["messages"]) == [] for call in calls)
    summary, after = calls[5], calls[6]
    # the summary request: the loop's request with the instruction last
    assert summary["request"]["messages"][-1]["content"][-1] == text(INSTRUCTION)
    assert summary["request"]["tools"] == calls[4]["request"]["tools"]
    assert summary["request"]["system"] == calls[4]["request"]["system"]
    said = summary["response"]["content"][0]["text"]
    todos = [json.dumps(item, ensure_ascii=False) for item in
             calls[2]["response"]["content"][1]["input"]["todos"]]
    assert after["request"]["messages"] == [user(
        summary_block(said),
        text("<reminder>Your todo list, as it stands:\n" + "\n".join(todos) + "</reminder>"),
        text(f"The user's last prompt, which the work is for:\n\n{scenario['prompt']}"))]
    out = run.stdout.splitlines()
    requests = [call["request"] for call in calls]

    def measured(number):
        """What the reply to call `number` measured: its tokens, and the characters counted."""
        usage = calls[number]["response"]["usage"]
        tokens = sum(usage.get(name) or 0 for name in (
            "input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
            "output_tokens"))
        kept = requests[number + 1]["messages"][len(requests[number]["messages"])]["content"]
        return tokens, answered(requests[number], *kept)

    # Before the fourth call: two results cleared (the two files read; the run of the program
    # is one of the newest three).
    tokens, counted = measured(2)
    as_read = {**requests[3], "messages": requests[2]["messages"] + requests[3]["messages"][
        len(requests[2]["messages"]):]}
    changed = [len(old["content"]) for old_message, new_message in zip(
        as_read["messages"], requests[3]["messages"], strict=True)
        for old, new in zip(old_message["content"], new_message["content"], strict=True)
        if old != new]
    assert len(changed) == 2
    # Before the sixth: the summary.
    tokens_5, counted_5 = measured(4)
    unasked = requests[5]["messages"][:-1] + [
        {**requests[5]["messages"][-1], "content": requests[5]["messages"][-1]["content"][:-1]}]
    assert [line for line in out if line.startswith("[Context over")] == [
        f"[Context over --clear-at 100,000: cleared 2 old tool results ({sum(changed):,} "
        f"characters); ~{tokens + (chars(as_read) - counted) // 4:,} tokens before, "
        f"~{tokens + (chars(requests[3]) - counted) // 4:,} after.]",
        f"[Context over --compact-at 160,000: the history is summarised; "
        f"~{tokens_5 + (chars({**requests[5], 'messages': unasked}) - counted_5) // 4:,} tokens "
        f"before, ~{estimate(requests[6]):,} after.]",
    ]
    assert out[-1] == scenario["turns"][-1]["content"][0]["text"]
    # tools/context_estimate.py counts as the harness does: its sizes are the lines' "after"
    sizes = {number: measured + estimated
             for number, measured, estimated, _ in context_estimate.rows(calls)}
    assert [f"~{sizes[4]:,} after.]", f"~{sizes[7]:,} after.]"] == [
        line.split(" tokens before, ")[1] for line in out if line.startswith("[Context over")]
    # the task given before the summary is finished after it: three docstrings, same output
    assert [line for line in (workdir / "tally.py").read_text().splitlines()
            if line.startswith('    """')] == [
        '    """How often each word occurs in the file: one word a line, blank lines skipped."""',
        '    """The n most frequent (word, count) pairs: by count, then by word."""',
        '    """One line for each pair: the count, right-aligned, then the word."""',
    ]
    assert out.count("       7  robin") == 2  # before the change, and after it


# ======================================================================
# A subagent (s07) measures its own context
# ======================================================================

def test_a_subagent_starts_with_a_context_of_its_own_and_the_parent_is_summarised(s08, workdir):
    task = tool_use("t1", "agent", {"description": "find x", "prompt": "Find where x is."})
    client = FakeClient(with_usage(reply(task), 150_000),  # the parent's context is full
                        reply(text("In a.txt.")),  # the subagent's: not, it starts afresh
                        reply(text("S")),  # the parent's summary
                        reply(text("Done.")))
    session = new_session(s08, client, workdir, compact_at=100_000, clear_at=90_000)
    assert s08.run_turn(session, PROMPT) is True
    assert client.calls[1]["messages"] == [user(text("Find where x is."))]
    assert client.calls[2]["messages"][-1]["content"][-1] == text(INSTRUCTION)
    assert client.calls[3]["messages"] == [user(summary_block("S"), text(PROMPT_TEXT))]
    assert session.messages == [*client.calls[3]["messages"], assistant(text("Done."))]
    assert session.compactions == 1
