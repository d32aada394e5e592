"""s07_subagents: the agent tool runs a subagent on a fresh history; only its answer comes back.

Each test pins what the subagent is sent (its messages, system prompt and tools, from the
reviewed golden file) and what its parent gets back: a harness that leaked the parent's history
into the child, the child's calls into the parent, or offered `agent` to the child fails them.
"""

import copy
import json
import shutil
from dataclasses import dataclass, field

import anthropic
import pytest
from anthropic.types import Message

from support import (
    MODEL,
    ROOT,
    FakeClient,
    assistant,
    golden,
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

PROMPT = "Where is greet defined? Then tidy it."
LABEL = "Find greet"
TASK = "Find the file and line where the function greet is defined. Change nothing."
ANSWER = "greet is defined in app/greet.py, line 4."
CALL = tool_use("toolu_p1", "agent", {"description": LABEL, "prompt": TASK})
ASKED = text("A subagent can look.")


@pytest.fixture
def s07():
    chapter = load_chapter("s07_subagents")
    chapter.CLOCK = clock(100.0, 102.7)  # the subagent starts, then ends: 2.7 s, "2 s"
    return chapter


def clock(*readings):
    """A CLOCK that gives these readings in order."""
    readings = list(readings)
    return lambda: readings.pop(0)


def used(*blocks, stop_reason=None, tokens=(0, 0)):
    """reply(), with this usage: (input_tokens, output_tokens)."""
    message = reply(*blocks, stop_reason=stop_reason).model_dump(mode="json")
    message["usage"] = {"input_tokens": tokens[0], "output_tokens": tokens[1]}
    return Message.model_validate(message)


def child_request(chapter, session, messages, plan=False):
    """The exact request of a subagent: its own system prompt and its tools, from the golden
    file (plan mode offers none that change things)."""
    seen = golden("s07_subagents")
    names = seen["subagent"]["tools"]
    if plan:
        names = [name for name in names if name not in ("write_file", "edit_file")]
    return {
        "model": MODEL,
        "max_tokens": chapter.MAX_TOKENS,
        "system": seen["subagent"]["system"].replace("{workdir}", str(session.workdir)),
        "tools": [tool for tool in seen["tools"] if tool["name"] in names],
        "messages": messages,
    }


def trailer(calls, tool_calls, tokens=0, seconds=2, label=LABEL):
    return (f'[subagent "{label}": {calls} model call{"s" if calls != 1 else ""}, {tool_calls} '
            f'tool call{"s" if tool_calls != 1 else ""}, {tokens:,} tokens, {seconds} s]')


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "greet.py").write_text("import sys\n\n\ndef greet(name):\n"
                                               "    return f'Hello, {name}.'\n")
    return tmp_path


# ---- the child's request, and only its answer back -----------------------------------------

def test_the_subagent_gets_a_fresh_history_its_own_prompt_and_fewer_tools(s07, workdir):
    grep = tool_use("toolu_c1", "bash", {"command": "grep -n -e greet app/greet.py"})
    client = FakeClient(
        reply(ASKED, CALL),
        used(text("Searching."), grep, tokens=(1200, 40)),
        used(text(ANSWER), tokens=(1500, 60)),
        reply(text("Done.")),
    )
    session = new_session(s07, client, workdir)
    assert s07.run_turn(session, PROMPT) is True

    grep_output = "4:def greet(name):\n[exit code: 0]"
    first = [user(text(TASK))]
    assert client.calls[1] == child_request(s07, session, first)
    assert client.calls[2] == child_request(s07, session, first + [
        assistant(text("Searching."), grep), user(result("toolu_c1", grep_output))])
    # The parent's next request: its own history, the call and the answer; none of the child's.
    answered = f"{ANSWER}\n\n{trailer(2, 1, tokens=2800)}"
    parent = [user(text(PROMPT)), assistant(ASKED, CALL), user(result("toolu_p1", answered))]
    assert client.calls[3] == request(s07, session, parent)
    assert session.messages == parent + [assistant(text("Done."))]
    assert session.calls == 4  # the child's two calls count in the prompt's


def test_the_first_request_offers_agent_and_the_child_never_sees_the_parents_history(s07,
                                                                                       workdir):
    client = FakeClient(reply(text("Reading.")), reply(ASKED, CALL), reply(text(ANSWER)),
                        reply(text("Done.")))
    session = new_session(s07, client, workdir)
    s07.run_turn(session, "hello")
    s07.run_turn(session, PROMPT)

    assert client.calls[0] == request(s07, session, [user(text("hello"))])
    assert [tool["name"] for tool in client.calls[0]["tools"]][-1] == "agent"
    assert client.calls[2] == child_request(s07, session, [user(text(TASK))])


def test_the_answer_is_cut_at_its_limit(s07, workdir, monkeypatch):
    monkeypatch.setattr(s07, "SUBAGENT_ANSWER_LIMIT", 10)
    client = FakeClient(reply(ASKED, CALL), reply(text(ANSWER)), reply(text("Done.")))
    session = new_session(s07, client, workdir)
    s07.run_turn(session, PROMPT)

    cut = f"greet is d\n[answer cut: {len(ANSWER) - 10} more characters]\n\n{trailer(1, 0)}"
    assert client.calls[2]["messages"][-1] == user(result("toolu_p1", cut))


def test_the_screen_shows_the_childs_calls_under_the_agent_call(s07, workdir, capsys):
    glob = tool_use("toolu_c1", "glob", {"pattern": "**/*.py"})
    client = FakeClient(reply(ASKED, CALL), reply(text("Listing."), glob), reply(text(ANSWER)),
                        reply(text("Done.")))
    session = new_session(s07, client, workdir)
    s07.run_turn(session, PROMPT)

    assert capsys.readouterr().out.splitlines() == [
        "A subagent can look.",
        "  > agent: Find greet",
        "    Listing.",
        "      > glob: **/*.py",
        "        app/greet.py",
        f"    {ANSWER}",
        "    [The subagent's answer, 41 characters, goes back to the agent; its 4 messages "
        "stay here.]",
        f"    {trailer(2, 1)}",  # the answer is on the screen once
        "Done.",
    ]


def test_live_the_childs_tokens_have_a_line_of_their_own(s07, workdir, capsys):
    client = FakeClient(used(ASKED, CALL, tokens=(900, 20)), used(text(ANSWER), tokens=(300, 7)),
                        used(text("Done."), tokens=(950, 3)))
    session = new_session(s07, client, workdir, live=True)
    s07.run_turn(session, PROMPT)

    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if "tokens" in line] == [
        "  [tokens: 900 in (0 read from the cache, 0 written to it), 20 out]",
        '      [subagent "Find greet" tokens: 300 in (0 read from the cache, 0 written to it), '
        "7 out]",
        f"    {trailer(1, 0, tokens=307)}",
        "  [tokens: 950 in (0 read from the cache, 0 written to it), 3 out]",
    ]


def test_a_field_a_later_chapter_adds_to_the_conversation_starts_fresh_in_a_child(workdir):
    # s08, with one more field in its Conversation, as a later chapter would add it: agent()
    # is not told of it, and the child still starts with its default, not the parent's value.
    s08 = load_chapter("s08_compact")

    @dataclass
    class Grown(s08.Conversation):
        skills: list = field(default_factory=list)

    s08.Conversation = Grown
    starts, run_subagent = [], s08.run_subagent

    def watched(session, child):
        starts.append(copy.deepcopy(child.conversation))
        return run_subagent(session, child)

    s08.run_subagent = watched
    client = FakeClient(reply(ASKED, CALL), reply(text(ANSWER)), reply(text("Done.")))
    session = new_session(s08, client, workdir, skills=["the parent's"], todos=[{"x": 1}],
                          rounds_since_todo=2, notes=["a note"], measured=(5, 5), compactions=1)
    assert s08.run_turn(session, PROMPT) is True

    assert starts == [Grown(messages=[user(text(TASK))], prompt=TASK)]
    assert (session.skills, session.todos) == (["the parent's"], [{"x": 1}])


# ---- every way a subagent ends without an answer ---------------------------------------------

FAILURES = {
    "api error": (anthropic.AnthropicError("the server went away"),
                  'The subagent "Find greet" failed: API error: the server went away', 1),
    "refusal": (reply(text("No."), stop_reason="refusal"),
                'The subagent "Find greet" stopped without an answer: The model declined to '
                "continue.", 1),
    "max_tokens": (reply(text("Half an ans"), stop_reason="max_tokens"),
                   'The subagent "Find greet" stopped without an answer: The reply was cut off at '
                   "max_tokens (8000).", 1),
    "no report": (reply(stop_reason="end_turn"),
                  'The subagent "Find greet" ended without a report.', 1),
}


@pytest.mark.parametrize("case", FAILURES)
def test_a_subagent_that_fails_gives_an_error_result_and_the_parent_goes_on(s07, workdir, case):
    child_reply, said, calls = FAILURES[case]
    client = FakeClient(reply(ASKED, CALL), child_reply, reply(text("It failed.")))
    session = new_session(s07, client, workdir)
    assert s07.run_turn(session, PROMPT) is True

    failed = result("toolu_p1", f"{said}\n\n{trailer(calls, 0)}", is_error=True)
    parent = [user(text(PROMPT)), assistant(ASKED, CALL), user(failed)]
    assert client.calls[2] == request(s07, session, parent)


def test_a_subagent_at_its_call_limit_stops_with_its_history_valid(s07, workdir, monkeypatch):
    monkeypatch.setattr(s07, "SUBAGENT_MAX_CALLS", 2)
    look = [tool_use(f"toolu_c{n}", "glob", {"pattern": "*.py"}) for n in (1, 2)]
    client = FakeClient(reply(ASKED, CALL), reply(look[0]), reply(look[1]), reply(text("Ok.")))
    session = new_session(s07, client, workdir)
    s07.run_turn(session, PROMPT)

    said = ('The subagent "Find greet" stopped without an answer: It reached its limit of 2 '
            "model calls.")
    failed = result("toolu_p1", f"{said}\n\n{trailer(2, 2)}", is_error=True)
    assert client.calls[2]["messages"] == [
        user(text(TASK)), assistant(look[0]), user(result("toolu_c1", "No files match '*.py'."))]
    assert client.calls[3] == request(s07, session, [user(text(PROMPT)), assistant(ASKED, CALL),
                                                     user(failed)])


def test_the_childs_calls_count_in_max_calls(s07, workdir, capsys):
    look = [tool_use(f"toolu_c{n}", "glob", {"pattern": "*.py"}) for n in (1, 2)]
    client = FakeClient(reply(ASKED, CALL), reply(look[0]), reply(look[1]))
    session = new_session(s07, client, workdir, max_calls=3)
    assert s07.run_turn(session, PROMPT) is False

    said = ('The subagent "Find greet" stopped without an answer: It reached its limit of 2 model '
            "calls. This prompt has made all its model calls (--max-calls 3).")
    failed = result("toolu_p1", f"{said}\n\n{trailer(2, 2)}", is_error=True)
    assert len(client.calls) == 3
    assert session.messages == [user(text(PROMPT)), assistant(ASKED, CALL), user(failed)]
    assert capsys.readouterr().out.splitlines()[-1] == (
        "[The turn reached its call limit (--max-calls 3): send a prompt to go on.]")


def test_a_subagent_with_no_call_left_does_not_start(s07, workdir):
    client = FakeClient(reply(ASKED, CALL))
    session = new_session(s07, client, workdir, max_calls=1)
    assert s07.run_turn(session, PROMPT) is False

    said = ('The subagent "Find greet" did not start: this prompt has made all its model calls '
            "(--max-calls 1).")
    assert session.messages[-1] == user(result("toolu_p1", said, is_error=True))
    assert len(client.calls) == 1


def test_ctrl_c_in_the_subagent_ends_the_turn_with_both_histories_valid(s07, workdir, capsys):
    glob = tool_use("toolu_c1", "glob", {"pattern": "**/*.py"})
    client = FakeClient(reply(ASKED, CALL), reply(glob), KeyboardInterrupt())
    session = new_session(s07, client, workdir)
    assert s07.run_turn(session, PROMPT) is False

    # two model calls: the one Ctrl-C interrupted was made too
    said = ('Interrupted by the user. The subagent "Find greet" gave no answer.\n\n'
            f"{trailer(2, 1)}")
    assert session.messages == [user(text(PROMPT)), assistant(ASKED, CALL),
                                user(result("toolu_p1", said, is_error=True))]
    # the child's history, as its last request sent it, was valid too
    assert client.calls[2]["messages"] == [user(text(TASK)), assistant(glob),
                                           user(result("toolu_c1", "app/greet.py"))]
    assert capsys.readouterr().out.splitlines()[-1] == "[Interrupted.]"


# ---- the child's limits on what it may do ----------------------------------------------------

@pytest.mark.parametrize("name, tool_input", [
    ("agent", {"description": "Nest", "prompt": "Go deeper."}),
    ("todo_write", {"todos": []}),
    ("enter_plan_mode", {}),
    ("exit_plan_mode", {"plan": "x"}),
    ("ask_user_question", {"questions": []}),
])
def test_a_subagent_that_calls_a_tool_it_was_not_offered_is_refused(s07, workdir, name,
                                                                    tool_input):
    call = tool_use("toolu_c1", name, tool_input)
    client = FakeClient(reply(ASKED, CALL), reply(call), reply(text(ANSWER)),
                        reply(text("Done.")))
    session = new_session(s07, client, workdir)
    s07.run_turn(session, PROMPT)

    refused = (f"Denied: a subagent cannot use {name}. Do the task with bash and the file tools, "
               "and end with your report.")
    assert client.calls[2]["messages"] == [user(text(TASK)), assistant(call),
                                           user(result("toolu_c1", refused, is_error=True))]
    assert len(client.calls) == 4  # nothing nested, nothing asked
    assert (session.plan_mode, session.todos) == (False, [])


def test_a_question_from_the_subagent_says_so_and_shows_its_description(s07, workdir, answers,
                                                                         capsys):
    keyboard = answers("n")
    touch = tool_use("toolu_c1", "bash", {"command": "touch notes.txt"})
    client = FakeClient(reply(ASKED, CALL), reply(touch), reply(text(ANSWER)), reply(text("Ok.")))
    session = new_session(s07, client, workdir)
    s07.run_turn(session, PROMPT)

    out = capsys.readouterr().out.splitlines()
    assert out[out.index("      > bash: touch notes.txt") + 1] == (
        '  ? subagent "Find greet" asks: allow bash: touch notes.txt')
    assert keyboard.prompts == ["    [y] yes  [a] always (saved to .agent/settings.json)  [n] no: "]
    assert not (workdir / "notes.txt").exists()


def test_an_allow_rule_saved_at_the_subagents_question_stays_for_the_parent(s07, workdir,
                                                                           answers):
    answers("a")
    touch = tool_use("toolu_c1", "bash", {"command": "touch notes.txt"})
    client = FakeClient(reply(ASKED, CALL), reply(touch), reply(text(ANSWER)), reply(text("Ok.")))
    session = new_session(s07, client, workdir)
    s07.run_turn(session, PROMPT)

    assert session.settings == {"permissions": {"allow": ["bash(touch notes.txt)"]}}
    assert s07.check_permission(session, "bash", {"command": "touch notes.txt"}) == (
        "allow", "rule 'bash(touch notes.txt)'")


def test_in_plan_mode_the_subagent_only_reads(s07, workdir):
    write = tool_use("toolu_c1", "write_file", {"path": "x.txt", "content": "x"})
    touch = tool_use("toolu_c2", "bash", {"command": "touch x.txt"})
    client = FakeClient(reply(ASKED, CALL), reply(write, touch), reply(text(ANSWER)),
                        reply(text("Planned.")))
    session = new_session(s07, client, workdir)
    s07.enter_plan(session)
    s07.run_turn(session, PROMPT)

    def refused(name):
        return (f"Denied: the other agent is in plan mode, so nothing may change, and {name} "
                "may. Read only, and end with your report.")

    assert client.calls[1] == child_request(s07, session, [user(text(TASK))], plan=True)
    assert client.calls[2]["messages"][-1] == user(
        result("toolu_c1", refused("write_file"), is_error=True),
        result("toolu_c2", refused("bash"), is_error=True))
    assert not (workdir / "x.txt").exists()
    assert session.plan_mode is True


# ---- hooks -----------------------------------------------------------------------------------

def recorder(decisions=()):
    """A hook that keeps each event it gets and returns the decisions in order, then None."""
    decisions = list(decisions)

    def hook(event):
        hook.events.append(event)
        return decisions.pop(0) if decisions else None
    hook.events = []
    return hook


def test_subagent_stop_hooks_get_the_childs_answer_and_may_send_it_back(s07, workdir):
    subagent_stop = recorder([{"decision": "block", "reason": "Give the line number too."}])
    stop = recorder()
    client = FakeClient(reply(ASKED, CALL), reply(text("In app/greet.py.")), reply(text(ANSWER)),
                        reply(text("Done.")))
    session = new_session(s07, client, workdir)
    s07.add_hook(session, "SubagentStop", subagent_stop)
    s07.add_hook(session, "Stop", stop)
    s07.run_turn(session, PROMPT)

    event = {"hook_event_name": "SubagentStop", "cwd": str(workdir),
             "description": LABEL}
    assert subagent_stop.events == [
        {**event, "stop_hook_active": False, "last_message": "In app/greet.py."},
        {**event, "stop_hook_active": True, "last_message": ANSWER},
    ]
    assert client.calls[2]["messages"] == [
        user(text(TASK)), assistant(text("In app/greet.py.")),
        user(text('<hook event="SubagentStop">Give the line number too.</hook>'))]
    # the Stop hooks see the parent's answer only
    assert [event["last_message"] for event in stop.events] == ["Done."]
    assert client.calls[3]["messages"][-1] == user(
        result("toolu_p1", f"{ANSWER}\n\n{trailer(2, 0)}"))


def test_pre_tool_use_sees_agent_like_any_tool(s07, workdir):
    pre = recorder([{"decision": "block", "reason": "No subagents today."}])
    client = FakeClient(reply(ASKED, CALL), reply(text("Then I look myself.")))
    session = new_session(s07, client, workdir)
    s07.add_hook(session, "PreToolUse", pre, matcher="agent")
    s07.run_turn(session, PROMPT)

    assert pre.events == [{"hook_event_name": "PreToolUse", "cwd": str(workdir),
                           "tool_name": "agent", "tool_input": CALL["input"]}]
    blocked = result("toolu_p1", "Blocked by a PreToolUse hook: No subagents today.",
                     is_error=True)
    assert client.calls[1]["messages"][-1] == user(blocked)
    assert len(client.calls) == 2


def test_subagent_stop_is_a_hook_event_of_the_settings_file(s07, workdir):
    assert s07.HOOK_EVENTS == ("UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop",
                               "SubagentStop")
    path = workdir / ".agent" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"hooks": {"SubagentStop": [{"command": "true"}]}}))
    session = new_session(s07, FakeClient(), workdir, settings=s07.load_settings(workdir))
    s07.load_command_hooks(session)
    assert [(hook.event, hook.label) for hook in session.hooks] == [("SubagentStop", "true")]


# ---- the scenario, traced and replayed -----------------------------------------------------

SCENARIO = json.loads((ROOT / "s07_subagents" / "scenario.json").read_text())
CHILD_TASK = SCENARIO["turns"][0]["content"][1]["input"]


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    base = tmp_path_factory.mktemp("s07")
    shutil.copytree(ROOT / "s07_subagents" / "workspace", base / "work")
    shutil.copytree(ROOT / "s07_subagents" / "workspace", base / "again")
    oneshot = run_chapter("s07_subagents", "--offline", "--workdir", str(base / "work"),
                          "--trace", str(base / "trace.jsonl"), SCENARIO["prompt"])
    replay = run_chapter("s07_subagents", "--script", str(base / "trace.jsonl"),
                         "--workdir", str(base / "again"), "--trace", str(base / "replay.jsonl"),
                         SCENARIO["prompt"])
    return base, oneshot, replay


def test_the_trace_marks_each_call_of_the_subagent_with_its_description(traced):
    base, oneshot, _ = traced
    assert (oneshot.returncode, oneshot.stderr) == (0, "")
    calls = read_trace(base / "trace.jsonl")
    assert [call.get("agent") for call in calls] == [None] + [CHILD_TASK["description"]] * 3 + [
        None, None]
    child = calls[1]["request"]
    assert child["messages"] == [user(text(CHILD_TASK["prompt"]))]
    assert [tool["name"] for tool in child["tools"]] == golden("s07_subagents")["subagent"]["tools"]
    # nothing the child's tools printed reaches the parent's history
    parent = json.dumps([call["request"]["messages"] for call in calls if "agent" not in call])
    assert "app/greet.py:1:from app.words import" not in parent
    assert "app/greet.py:1:from app.words import" in json.dumps(calls[3]["request"]["messages"])
    answer = calls[3]["response"]["content"][0]["text"]
    assert calls[4]["request"]["messages"][2] == user(result(
        "toolu_01", f'{answer}\n\n[subagent "{CHILD_TASK["description"]}": 3 model calls, '
        "2 tool calls, 0 tokens, 0 s]"))
    assert (base / "work" / "app" / "words.py").read_text() == (
        '"""The words the greeter says."""\n\nGREETING = "Hi"\nPUNCTUATION = "!"\n')


def test_a_traced_run_replays_exactly(traced):
    base, oneshot, replay = traced
    assert (replay.returncode, replay.stderr) == (0, "")
    recorded, replayed = read_trace(base / "trace.jsonl"), read_trace(base / "replay.jsonl")
    assert replayed == [
        {**call, "request": {**call["request"], "system": call["request"]["system"].replace(
            str(base / "work"), str(base / "again"))}}
        for call in recorded
    ]


def test_the_scenario_shows_the_subagent_under_its_call(traced):
    base, oneshot, _ = traced
    out = oneshot.stdout.splitlines()
    start = out.index("  > agent: Find the greeting's definition")
    assert out[start:start + 18] == [
        "  > agent: Find the greeting's definition",
        "    Listing the Python files first.",
        "      > glob: **/*.py",
        "        app/__init__.py",
        "        app/__main__.py",
        "        app/farewell.py",
        "        app/greet.py",
        "        app/words.py",
        "    Searching all five for the greeting.",
        "      > bash: grep -n -e GREETING -e Hello app/__init__.py app/__main__.py "
        "app/farewell.py app/greet.py app/words.py",
        "        app/greet.py:1:from app.words import GREETING, PUNCTUATION",
        '        app/greet.py:5:    return f"{GREETING}, {name}{PUNCTUATION}"',
        '        app/words.py:3:GREETING = "Hello"',
        "        [exit code: 0]",
        '    The greeting is defined once, in app/words.py, line 3: GREETING = "Hello".',
        "    Only app/greet.py uses it: it imports it (line 1) and puts it in the greeting "
        '(line 5). No other Python file says "Hello"; app/farewell.py imports only PUNCTUATION '
        "from app/words.py.",
        "    To change the greeting, change line 3 of app/words.py.",
        "    [The subagent's answer, 312 characters, goes back to the agent; its 6 messages "
        "stay here.]",
    ]


# ---- the limits at their values: just under, at, just over ---------------------------------

@pytest.mark.parametrize("size", [9_999, 10_000, 10_001])
def test_the_answer_is_whole_up_to_its_limit_and_cut_a_character_past_it(s07, workdir, size):
    assert s07.SUBAGENT_ANSWER_LIMIT == 10_000
    answer = "a" * (size - 1) + "."
    client = FakeClient(reply(ASKED, CALL), reply(text(answer)), reply(text("Done.")))
    session = new_session(s07, client, workdir)
    s07.run_turn(session, PROMPT)
    got = answer if size <= 10_000 else "a" * 10_000 + "\n[answer cut: 1 more characters]"
    assert client.calls[2]["messages"][-1] == user(result("toolu_p1",
                                                          f"{got}\n\n{trailer(1, 0)}"))


@pytest.mark.parametrize("needed", [19, 20, 21])
def test_a_subagent_makes_up_to_its_20_calls_and_not_one_more(s07, workdir, needed):
    assert s07.SUBAGENT_MAX_CALLS == 20
    looks = [reply(tool_use(f"toolu_c{n}", "glob", {"pattern": "*.md"})) for n in range(1, 21)]
    client = FakeClient(reply(ASKED, CALL), *looks[:needed - 1], reply(text(ANSWER)),
                        reply(text("Done.")))
    session = new_session(s07, client, workdir)
    s07.run_turn(session, PROMPT)
    calls = min(needed, 20)
    back = session.messages[2]["content"][0]
    if needed <= 20:
        assert back == result("toolu_p1", f"{ANSWER}\n\n{trailer(calls, needed - 1)}")
    else:
        said = ('The subagent "Find greet" stopped without an answer: It reached its limit of 20 '
                "model calls.")
        assert back == result("toolu_p1", f"{said}\n\n{trailer(20, 20)}", is_error=True)
    assert session.calls == 1 + calls + 1


@pytest.mark.parametrize("name", ["s07_subagents", "s08_compact"])
def test_a_subagent_is_given_none_of_the_parents_state(name, workdir):
    """Not its history, notes, todos, counts or tokens (from s08: its context's measure, its
    summaries, the plan the user approved, the prompt); the tools it may not use are not
    offered. Its workdir, client, modes, rules and hooks are the parent's."""
    s07 = load_chapter(name)
    client = FakeClient(reply(ASKED, CALL), reply(text(ANSWER)), reply(text("Done.")))
    parent = {"todos": [{"content": "x", "status": "pending"}], "tokens": 777,
              "notes": ["<reminder>a note for the parent</reminder>"], "rounds_since_todo": 2}
    own = {"measured": None, "summarised": False, "compactions": 0, "approved_plan": [],
           "prompt": TASK}
    if name == "s08_compact":
        parent.update(measured=(5, 5), summarised=True, compactions=2, prompt="P",
                      approved_plan=(workdir / "plan.md", "## Plan\n"))
    session = new_session(s07, client, workdir, mode="accept_edits", **parent)
    # a note for the parent's next user turn, made while the turn runs (as plan mode makes them)
    s07.add_hook(session, "PreToolUse", lambda event: session.notes.append("N") or {}, "agent")
    seen = {}
    real = s07.run_subagent

    def spy(parent, child):  # the session's fields, its conversation's, and its description
        fields = {**vars(child), **vars(child.conversation), "subagent": child.subagent.description}
        seen.update(json.loads(json.dumps(fields, default=str)))
        return real(parent, child)

    s07.run_subagent = spy
    s07.run_turn(session, PROMPT)
    assert {key: seen[key] for key in ("messages", "notes", "todos", "tokens", "subagent",
                                       "indent", "max_calls", "mode", "workdir")} == {
        "messages": [user(text(TASK))], "notes": [], "todos": [], "tokens": 0,
        "subagent": LABEL, "indent": 4, "max_calls": 20, "mode": "accept_edits",
        "workdir": str(workdir)}
    if name == "s08_compact":
        assert {key: seen[key] for key in own} == own
    assert [tool["name"] for tool in client.calls[1]["tools"]] == [
        "bash", "read_file", "write_file", "edit_file", "glob"]
