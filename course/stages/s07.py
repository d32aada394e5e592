"""Stage s07: subagents.

Its contract is its lesson's section "Build it yourself"; each check is named by the rule
it judges."""

import json

from course.stages import Exchange, Fail, block_text, blocks, cut
from course.stages.common import NOTES, check, plain, plain_blocks, text, todo, use
from course.stages.s02 import TOOL_FIELDS
from course.stages.s06 import CHANGING

# The child runs inside the parent's agent call, so the replies come in a fixed order: the
# parent's reply 1 calls agent twice: the first runs a subagent, whose two requests get replies 2
# and 3; a PreToolUse hook blocks the second, which starts none. Reply 4 answers the parent's
# next request, which holds the answer: a write. Reply 5 ends the turn; the Stop hook sends the
# model back once (it must not run when the subagent ends), and reply 6 ends it. stdin, one
# terminal for both: n for the child's touch, y for its write, y for the parent's write. A
# program that asks before the write a deny rule covers reads one more. Reply 2 has a text
# before its calls: the answer is the text of the last reply, not every text of the subagent.
SUB_SETTINGS = {
    "permissions": {"deny": ["write_file(<<secret>>.txt)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "read_file", "command": "echo '<<hooked>>' >&2; exit 2"},
            {"matcher": "agent", "command": "if grep -q '<<blocked_label>>'; then "
                                            "echo '<<agent_hooked>>' >&2; exit 2; fi"}],
        "Stop": [{"command": "test -e .agent/<<stopped>> && exit 0; touch .agent/<<stopped>>; "
                             "echo '<<stop_words>>' >&2; exit 2"}]}}
CHILD_PROMPT = "Read <<data>>.txt and report what it holds (<<task>>)."
HIDDEN = ("agent", "todo_write", "exit_plan_mode", "ask_user_question", "enter_plan_mode")
CHILD_KEYS = ("cat", "touch", "secret", "cwrite", "read", "nested", "todo", "cask")

SUBAGENT = Exchange("subagent", "Hand a side task to a subagent (<<prompt>>).", [
    [text("A side task."), use("agent", "agent", description="<<label>>", prompt=CHILD_PROMPT),
     use("hooked", "agent", description="<<blocked_label>>", prompt="<<blocked_task>>")],
    [text("<<child_note>>"), use("cat", "bash", command="cat <<data>>.txt"),
     use("touch", "bash", command="touch <<made>>.txt"),
     use("secret", "write_file", path="<<secret>>.txt", content="s"),
     use("cwrite", "write_file", path="<<child_wrote>>.txt", content="c\n"),
     use("read", "read_file", path="<<data>>.txt"),
     use("nested", "agent", description="<<deeper>>", prompt="<<deeper_task>>"),
     use("todo", "todo_write", todos=[todo("<<item>>", "pending")]),
     use("cask", "ask_user_question", questions=[{
         "question": "<<child_question>>?", "header": "Which", "multiSelect": False,
         "options": [{"label": "<<one>>", "description": "One."},
                     {"label": "<<two>>", "description": "Two."}]}])],
    [text("<<answer>>")],
    [use("pwrite", "write_file", path="<<parent_wrote>>.txt", content="p\n")],
    [text("Done: <<final>>")],
    [text("Checked, and done: <<final_2>>")],
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


@check(SUBAGENT, "agent is offered, with description and prompt")
def agent_offered(run):
    tools = {tool.get("name"): tool for tool in run.request(1).get("tools") or []}
    have = sorted(tools.get("agent", {}).get("input_schema", {}).get("properties", {}))
    if not {"description", "prompt"} <= set(have):
        shown = (f"offers agent with the properties {have}" if "agent" in tools else
                 f"offers {sorted(tools)}")
        raise Fail(f"Request 1 {shown}; it should offer the tool agent, whose input_schema has "
                   "the properties description and prompt.")


@check(SUBAGENT, "the subagent starts on a fresh history: its first "
       "request holds one user message, the prompt, and nothing of the parent's",
       follows=["agent_offered"])
def child_history(run):
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


@check(SUBAGENT, "the subagent has a system prompt of its own, not the "
       "parent's", follows=["agent_offered", "child_history"])
def child_system(run):
    parent, child = system_text(run.request(1)), system_text(run.request(2))
    if not child.strip() or child == parent:
        shown = cut(child.replace(str(run.workdir), "<workdir>"), 80)
        said = f"the parent's system prompt, {shown!r}" if child.strip() else "none"
        raise Fail(f"Request 2, the subagent's first, has as its system prompt {said}; it "
                   "should have one of its own (it works for another agent, and ends with a "
                   "report).")


@check(SUBAGENT, "the subagent is offered bash and the file tools, and "
       "not agent, todo_write or the plan and question tools",
       follows=["agent_offered", "child_history"])
def child_tools(run):
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


@check(SUBAGENT, "the subagent's calls run, and its results go back in "
       "its own next request", follows=["child_history"])
def child_runs(run):
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


@check(SUBAGENT, "the subagent's calls pass the parent's deny rules and PreToolUse hooks",
       follows=["child_runs"])
def child_checks(run):
    run.refused(2, "secret", 'the deny rule "write_file(<<secret>>.txt)" covers it')
    said = run.refused(2, "read", "a PreToolUse hook of read_file exited 2")
    if run.v("<<hooked>>") not in said:
        raise Fail(f"The blocked call {run.call(2, 'read')} got {cut(said)!r}; it should hold "
                   f"the hook's stderr, {run.v('<<hooked>>')!r} (request 3).")
    run.expect_file("<<secret>>.txt", None, f"After the subagent's {run.call(2, 'secret')}",
                    ": its calls pass the same deny rules as the parent's")


@check(SUBAGENT, "a call of agent, todo_write or ask_user_question by the subagent is an "
       "is_error result: no subagent of a subagent", follows=["agent_offered"])
def child_hidden(run):
    if nested(run):
        raise Fail(f"Request 3 starts with the prompt of the subagent's own call "
                   f"{run.call(2, 'nested')}: that call ran a subagent of its own. A subagent "
                   "is not offered agent, and a call of it that comes anyway is an is_error "
                   "result.")
    run.refused(2, "nested", "a subagent may not start a subagent")
    run.refused(2, "todo", "a subagent has no todo list")
    run.refused(2, "cask", "a subagent does not ask the user questions (ask_user_question)")


def started(run, prompt):
    """The number of the first request that starts with `prompt`, or None: the request of a
    subagent that this prompt started."""
    for number, request in enumerate(run.requests, 1):
        if first_text(request) == run.v(prompt):
            return number
    return None


def parents_next(run, keys=("agent", "hooked")):
    """The number of the parent's request that answers reply 1's agent calls `keys` (request 4,
    unless a subagent sent more than its two), or one past the last if none does."""
    ids = {run.id(key) for key in keys}
    for number in range(2, len(run.requests) + 1):
        try:
            turn = run.turn_after(1, number)
        except Fail:
            continue
        if any(block.get("tool_use_id") in ids for block in turn):
            return number
    return max(4, len(run.requests) + 1)  # none: run.request says how many were sent


@check(SUBAGENT, "the agent call itself passes the PreToolUse hooks: one that a hook blocks "
       "gets an is_error result and starts no subagent", follows=["child_hidden"])
def agent_call_hooked(run):
    why = "a PreToolUse hook with the matcher \"agent\" exited 2 on it"
    number = started(run, "<<blocked_task>>")
    if number:
        raise Fail(f"Request {number} starts with the prompt of {run.call(1, 'hooked')}, so "
                   f"that call ran a subagent; {why}, so it should get an is_error result and "
                   "start none. An agent call is a tool call: the hooks apply to it too.")
    number = parents_next(run)
    said = run.refused(1, "hooked", why, number=number)
    if run.v("<<agent_hooked>>") not in said:
        raise Fail(f"The blocked call {run.call(1, 'hooked')} got {cut(said)!r}; it should hold "
                   f"the hook's stderr, {run.v('<<agent_hooked>>')!r} (request {number}).")


@check(SUBAGENT, "the parent's Stop hooks run when the parent's turn ends, not when a "
       "subagent's does", follows=["child_hidden", "agent_call_hooked"])
def parent_stop_hooks(run):
    words = run.v("<<stop_words>>")
    for number in (3, 4):
        request = run.request(number)
        if first_text(request) == run.v(CHILD_PROMPT) and words in json.dumps(request):
            raise Fail(f"Request {number} is the subagent's, with the Stop hook's stderr "
                       f"{words!r}: the parent's Stop hook ran when the subagent ended, and sent "
                       "it back. Stop hooks run when the parent's turn ends; a subagent's end is "
                       "another event (code.py runs SubagentStop hooks there).")
    if len(run.requests) < 6 or words not in json.dumps(run.turn_after(5)):
        raise Fail(f"Your program sent {len(run.requests)} requests. After reply 5 ended the "
                   "parent's turn, the Stop hook exited 2: request 6 should end with a user "
                   f"turn that holds its stderr, {words!r}. {run.ending()}")
    if len(run.requests) > 6:
        raise Fail(f"Your program sent {len(run.requests)} requests; after reply 6 the Stop "
                   "hook exited 0, which ends the turn, so request 6 is the last.")
    run.printed("<<final_2>>", why="the parent's turn ends with reply 6")
    run.exited_well()


def questions(run):
    """The three questions, in the order of the answers on stdin: each subagent's a line of
    stdout that names the subagent (its description) and the call, then the parent's."""
    label, place = run.v("<<label>>"), 0
    for key, reply, whose in (("touch", 2, label), ("cwrite", 2, label), ("pwrite", 4, None)):
        block = next(b for b in run.replies[reply - 1] if b.get("id") == run.id(key))
        subject = next(iter(block["input"].values()))
        found = [at for at in find_all(run.stdout, subject, place)
                 if whose is None or whose in line_at(run.stdout, at)]
        if not found:
            who = (f"the subagent's, a line that names the subagent, {label!r} (its "
                   f"description), and the call, {subject!r}" if whose else
                   f"the parent's, which shows {subject!r}")
            raise Fail(f"Your program printed no question for {run.call(reply, key)}"
                       f"{' after the one before' if place else ''}. Stdin holds n, y, y, the "
                       f"answers to three questions in turn; before it reads this one's, it "
                       f"should print {who}. Its stdout: {cut(run.stdout, 200)!r}")
        place = found[0] + len(subject)


def find_all(said, part, start):
    """The places of `part` in `said` from `start` on."""
    places, at = [], said.find(part, start)
    while at >= 0:
        places.append(at)
        at = said.find(part, at + 1)
    return places


def line_at(said, at):
    """The line of `said` that holds the place `at`."""
    return said[said.rfind("\n", 0, at) + 1:said.find("\n", at) % (len(said) + 1)]


@check(SUBAGENT, "the subagent asks on the one terminal, in turn with the parent: its "
       "question names the subagent and the call; n refuses its touch, y runs its write, and "
       "the next line answers the parent's next question",
       follows=["child_runs", "child_hidden", "agent_call_hooked", "parent_stop_hooks"])
def child_asks(run):
    run.refused(2, "touch", "the user answered n to the subagent's question")
    run.expect_file("<<made>>.txt", None, f"After n to the subagent's {run.call(2, 'touch')}")
    said, is_error = run.result(2, "cwrite")
    if is_error:
        raise Fail(f"The subagent's {run.call(2, 'cwrite')} got the is_error result "
                   f"{cut(said)!r}. Stdin holds n, y, y: n for the subagent's touch, y for this "
                   "write, y for the parent's next write. The subagent asks as the parent does: "
                   "it prints its question and reads the next line of the same stdin.")
    run.expect_file("<<child_wrote>>.txt", "c\n", f"After y to the subagent's "
                    f"{run.call(2, 'cwrite')}")
    questions(run)
    said, is_error = run.result(4, "pwrite")
    if is_error:
        raise Fail(f"The parent's {run.call(4, 'pwrite')} got the is_error result {cut(said)!r}; "
                   "the third line of stdin, y, is its answer: the subagent's two questions "
                   "read the first two (request 5).")
    run.expect_file("<<parent_wrote>>.txt", "p\n", f"After y to {run.call(4, 'pwrite')}")


@check(SUBAGENT, "the parent's next request holds the agent call and one result that starts "
       "with the subagent's final text, and nothing of its calls",
       follows=["agent_offered", "child_hidden", "agent_call_hooked", "parent_stop_hooks"])
def only_the_answer(run):
    number = 4
    first, now = run.request(1).get("messages") or [], run.request(number).get("messages") or []
    expected = plain(first) + [{"role": "assistant", "content": plain_blocks(run.replies[0])}]
    if plain(now)[:len(expected)] != expected:
        raise Fail(f"Request {number} sends {len(now)} message(s), starting "
                   f"{cut(json.dumps(now), 120)}; after the subagent's last reply it is the "
                   "parent's again, so it should start with the message(s) of request 1, then "
                   "reply 1 with its agent calls.")
    said = run.ok(1, "agent", number=number)
    answer = run.v("<<answer>>")
    if not said.lstrip().startswith(answer):
        raise Fail(f"The result of {run.call(1, 'agent')} is {cut(said)!r}; it should start "
                   f"with the subagent's final text, {answer!r}, the text of its last reply "
                   f"(request {number}).")
    sent = json.dumps(now)
    leaked = [run.id(key) for key in CHILD_KEYS if run.id(key) in sent]
    leaked += [value for value in map(run.v, ("<<content>>", "<<hooked>>")) if value in sent]
    if leaked:
        raise Fail(f"Request {number}, the parent's, holds {leaked[0]!r}, from the subagent's "
                   "calls; they stay in the subagent's history: only its answer comes back.")


# --plan: the subagent is read-only, as its parent is. Then its second request gets an API
# error (a 400): the parent gets an is_error result, and goes on. A deny rule covers the second
# agent call of reply 1, which starts no subagent. The y's are for a program that lets the
# subagent ask, as outside plan mode, and so run what plan mode refuses.
SUBAGENT_FAILS = Exchange("subagent_fails", "Plan, with a subagent's help (<<prompt>>).", [
    [use("agent", "agent", description="<<label>>", prompt="Look around (<<task>>)."),
     use("denied", "agent", description="<<denied>> task", prompt="<<denied_task>>")],
    [use("write", "write_file", path="<<x>>.txt", content="x"),
     use("touch", "bash", command="touch <<y>>.txt"),
     use("ls", "bash", command="ls")],
    {"error": "<<api_error>>"},
    [text("Planned without it: <<stopped>>")],
], stdin="y\n" * 3, args=("--plan",), files={**NOTES, ".agent/settings.json": json.dumps(
    {"permissions": {"deny": ["agent(<<denied>>*)"]}})})


@check(SUBAGENT_FAILS, "in plan mode agent is offered, and the "
       "subagent is read-only as its parent: write_file and edit_file not offered, a changing "
       "call refused")
def child_plan_mode(run):
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
        run.expect_file(name, None, "After the subagent's calls in plan mode",
                        ": plan mode changes nothing, whoever calls")
    run.ok(2, "ls", "<<notes>>.md")


@check(SUBAGENT_FAILS, "a subagent that fails (an API error) gives the "
       "agent call an is_error result, and the parent goes on", follows=["child_plan_mode"])
def child_fails(run):
    number = parents_next(run, ("agent", "denied"))
    if len(run.requests) < number:
        raise Fail(f"Your program sent {len(run.requests)} requests. The subagent's second "
                   "request (request 3) got an API error; the parent should get an is_error "
                   f"result for its agent call and send request {number} with it. "
                   f"{run.ending()}")
    first, now = run.request(1).get("messages") or [], run.request(number).get("messages") or []
    expected = plain(first) + [{"role": "assistant", "content": plain_blocks(run.replies[0])}]
    if plain(now)[:len(expected)] != expected:
        raise Fail(f"Request {number} sends {len(now)} message(s), starting "
                   f"{cut(json.dumps(now), 120)}; it is the parent's, so it should start with "
                   "the message(s) of request 1, then reply 1 with its agent calls.")
    run.refused(1, "agent", "the subagent got an API error and gave no answer", number=number)
    if started(run, "<<denied_task>>"):
        return  # the denied call ran a subagent, which took the last reply: agent_call_denied
    run.printed("<<stopped>>", why="the parent's loop goes on after the failed subagent")
    run.exited_well()


@check(SUBAGENT_FAILS, "the agent call itself passes the deny rules: one that a rule covers "
       "gets an is_error result and starts no subagent", follows=["child_plan_mode", "child_fails"])
def agent_call_denied(run):
    why = 'the deny rule "agent(<<denied>>*)" covers its description'
    number = started(run, "<<denied_task>>")
    if number:
        raise Fail(f"Request {number} starts with the prompt of {run.call(1, 'denied')}, so "
                   f"that call ran a subagent; {run.v(why)}, so it should get an is_error result "
                   "and start none. An agent call is a tool call: the deny rules apply to it "
                   "too (agent(pattern) matches its description).")
    run.refused(1, "denied", why, number=parents_next(run, ("agent", "denied")))
