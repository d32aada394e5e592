"""s06_plan_mode: ask_user_question (the model asks, the harness collects the user's answers),
and /plan off (the user ends plan mode without a plan)."""

import copy

import pytest

from support import (
    FakeClient,
    assistant,
    golden,
    load_chapter,
    new_session,
    reply,
    request,
    result,
    text,
    tool_use,
    unchecked_reply,
    user,
)

# The three replies, exactly as the model reads them.
ANSWERED_ALL = (
    "User has answered your questions: {answers}. "
    "You can now continue with the user's answers in mind."
)
ANSWERED_SOME = (
    "User has answered some of your questions: {answers}. They skipped {skipped} of the "
    "{total}: use your own judgement for those, and do not invent the user's preferences."
)
ANSWERED_NONE = (
    "The user answered none of the questions: they skipped them. This is not a rejection: go "
    "on with the task, using your own judgement for these decisions. Do not invent the user's "
    "preferences; say which choices you made yourself."
)

ENTERED_START = "<reminder>Plan mode is on."
STILL_ON = (
    "<reminder>Plan mode is still on: read and plan only, ask the user with ask_user_question "
    "if a decision is theirs, then submit the plan with exit_plan_mode.</reminder>"
)
LEFT = "<reminder>The user ended plan mode without a plan. You may change files now.</reminder>"
PLAN_OFF_SHOWN = "[Plan mode is off, without a plan; the permission mode is {} again.]\n"
PLAN_TOOLS = [
    "bash", "read_file", "glob", "todo_write", "exit_plan_mode", "ask_user_question",
]

NAME = {
    "question": "Which name should the new option have?",
    "header": "Option name",
    "options": [
        {"label": "--shout (Recommended)", "description": "The name in the request."},
        {"label": "--upper", "description": "Says what it does to the text."},
    ],
    "multiSelect": False,
}
DOCS = {
    "question": "Where should the option be documented?",
    "header": "Docs",
    "options": [
        {"label": "README.md", "description": "The examples at the top."},
        {"label": "--help", "description": "The usage text."},
        {"label": "CHANGELOG.md", "description": "A line for the next release."},
    ],
    "multiSelect": True,
}
TESTS = {
    "question": "Should it get a test?",
    "header": "Tests",
    "options": [
        {"label": "Yes (Recommended)", "description": "A test for --shout."},
        {"label": "No", "description": "No test."},
    ],
    "multiSelect": False,
}
NAME_SHOWN = [
    "  ? [Option name] Which name should the new option have?",
    "      1. --shout (Recommended): The name in the request.",
    "      2. --upper: Says what it does to the text.",
]
ONE = "    a number (1-2), your own answer, or empty to skip: "
SEVERAL = "    numbers (e.g. 1,3), your own answer, or empty to skip: "
SKIPPED_THE_REST = "    [No more answers: the questions left are skipped.]"


@pytest.fixture
def s06():
    return load_chapter("s06_plan_mode")


def req(s06, session, messages, plan=False):
    """The exact request: the tools from the reviewed golden file, filtered in plan mode."""
    sent = request(s06, session, messages)
    if plan:
        sent["tools"] = [tool for tool in sent["tools"] if tool["name"] in PLAN_TOOLS]
    return sent


def ask(id, *questions):
    return tool_use(id, "ask_user_question", {"questions": list(questions)})


def pair(question, answer):
    return f'"{question}"="{answer}"'


def asked_once(s06, workdir, keyboard, questions, *typed, mode="default", plan=False, **extra):
    """The model asks once, the user types `typed`, the model says "Thanks.". Returns the
    session, the client and the history the turn must leave."""
    call = ask("t1", *questions)
    client = FakeClient(reply(text("One question first."), call), reply(text("Thanks.")))
    session = new_session(s06, client, workdir, mode=mode, session_id="test-session", **extra)
    if plan:
        s06.enter_plan(session)
    keyboard.feed(*typed)
    assert s06.run_turn(session, "add an option") is True
    return session, client, call


def check_turn(s06, session, client, call, answer, is_error=False, plan=False):
    """The exact history and requests of one asking turn."""
    first = user(text("add an option"))
    if plan:
        first["content"].append(session.messages[0]["content"][1])
        assert first["content"][1]["text"].startswith(ENTERED_START)
    history = [
        first,
        assistant(text("One question first."), call),
        user(result("t1", answer, is_error=is_error)),
        assistant(text("Thanks.")),
    ]
    assert session.messages == history
    assert client.calls == [
        req(s06, session, history[:1], plan),
        req(s06, session, history[:3], plan),
    ]


# ---- the tool as the model sees it ------------------------------------------------------


def test_the_tool_is_offered_in_plan_mode_and_out_of_it_exactly_as_reviewed(s06, tmp_path):
    reviewed = golden("s06_plan_mode")["tools"]
    reviewed_ask = next(tool for tool in reviewed if tool["name"] == "ask_user_question")
    session = new_session(s06, FakeClient(), tmp_path)

    assert s06.build_request(session)["tools"] == reviewed
    assert reviewed[-1] == reviewed_ask == s06.ASK_TOOL
    session.plan_mode = True
    assert s06.build_request(session)["tools"] == [
        tool for tool in reviewed if tool["name"] in PLAN_TOOLS
    ]
    assert s06.build_request(session)["tools"][-1] == reviewed_ask
    assert s06.input_problem("ask_user_question", reviewed_ask["input_schema"],
                             {"questions": [NAME]}) is None
    assert reviewed_ask["input_schema"]["properties"]["questions"]["items"]["required"] == [
        "question", "header", "options", "multiSelect"
    ]


def test_the_three_replies_are_the_reviewed_texts(s06):
    assert (s06.ANSWERED_ALL, s06.ANSWERED_SOME, s06.ANSWERED_NONE) == (
        ANSWERED_ALL, ANSWERED_SOME, ANSWERED_NONE
    )


# ---- the three replies, with the exact history ----------------------------------------------


def test_all_answered(s06, workdir, keyboard, capsys):
    session, client, call = asked_once(s06, workdir, keyboard, [NAME, TESTS], "2", "1")

    answer = ANSWERED_ALL.format(answers=", ".join(
        [pair(NAME["question"], "--upper"), pair(TESTS["question"], "Yes (Recommended)")]))
    assert answer == (
        'User has answered your questions: "Which name should the new option have?"="--upper", '
        '"Should it get a test?"="Yes (Recommended)". You can now continue with the user\'s '
        "answers in mind."
    )
    check_turn(s06, session, client, call, answer)
    assert keyboard.asked == [ONE, ONE]
    assert capsys.readouterr().out.splitlines() == [
        "One question first.",
        "  > ask_user_question: [2 items]",
        "  ? [Option name] Which name should the new option have? (1 of 2)",
        *NAME_SHOWN[1:],
        "2",  # input() shows the prompt; read_line echoes a piped answer (stdin is no tty here)
        "  ? [Tests] Should it get a test? (2 of 2)",
        "      1. Yes (Recommended): A test for --shout.",
        "      2. No: No test.",
        "1",
        "    " + answer,
        "Thanks.",
    ]


def test_some_answered(s06, workdir, keyboard):
    session, client, call = asked_once(s06, workdir, keyboard, [NAME, DOCS, TESTS], "", "1", "  ")

    answer = ANSWERED_SOME.format(answers=pair(DOCS["question"], "README.md"), skipped=2, total=3)
    assert answer == (
        'User has answered some of your questions: "Where should the option be documented?"='
        '"README.md". They skipped 2 of the 3: use your own judgement for those, and do not '
        "invent the user's preferences."
    )
    check_turn(s06, session, client, call, answer)
    assert keyboard.asked == [ONE, SEVERAL, ONE]


def test_none_answered_is_no_error_and_no_rejection(s06, workdir, keyboard):
    session, client, call = asked_once(s06, workdir, keyboard, [NAME, TESTS], "", "")

    check_turn(s06, session, client, call, ANSWERED_NONE)  # not is_error: the turn goes on
    assert keyboard.asked == [ONE, ONE]


# ---- the kinds of answer --------------------------------------------------------------------


@pytest.mark.parametrize(
    "typed, answer",
    [
        (["1,3"], "README.md, CHANGELOG.md"),
        (["3 1"], "README.md, CHANGELOG.md"),
        (["2, 2 ,3"], "--help, CHANGELOG.md"),
        (["2"], "--help"),
        (["1,2,3"], "README.md, --help, CHANGELOG.md"),
        (["4", "0,1", "2,3"], "--help, CHANGELOG.md"),  # out of range: asked again
    ],
)
def test_multi_select(s06, workdir, keyboard, capsys, typed, answer):
    session, client, call = asked_once(s06, workdir, keyboard, [DOCS], *typed)

    check_turn(s06, session, client, call,
               ANSWERED_ALL.format(answers=pair(DOCS["question"], answer)))
    assert keyboard.asked == [SEVERAL] * len(typed)
    problems = [line for line in capsys.readouterr().out.splitlines()
                if line == "    The options are numbered 1 to 3."]
    assert len(problems) == len(typed) - 1


@pytest.mark.parametrize(
    "typed, answer",
    [
        ("Call it --loud", "Call it --loud"),
        ("  --caps, please  ", "--caps, please"),
        ("1 or 2, you choose", "1 or 2, you choose"),
        ("No", "No"),
    ],
)
def test_an_answer_in_the_users_own_words(s06, workdir, keyboard, typed, answer):
    session, client, call = asked_once(s06, workdir, keyboard, [NAME], typed)

    check_turn(s06, session, client, call,
               ANSWERED_ALL.format(answers=pair(NAME["question"], answer)))
    assert keyboard.asked == [ONE]


def test_one_number_for_a_single_choice_and_three_wrong_answers_skip(s06, workdir, keyboard,
                                                                      capsys):
    session, client, call = asked_once(s06, workdir, keyboard, [NAME, TESTS],
                                       "1,2", "3", "0", "2")

    check_turn(s06, session, client, call,
               ANSWERED_SOME.format(answers=pair(TESTS["question"], "No"), skipped=1, total=2))
    assert keyboard.asked == [ONE] * 4
    out = capsys.readouterr().out.splitlines()
    assert out[5:11] == [
        "1,2",
        "    This question takes one answer: type one number.",
        "3",
        "    The options are numbered 1 to 2.",
        "0",
        "    The options are numbered 1 to 2.",
    ]
    assert out[11] == "    [No answer that fits: this question is skipped.]"


def test_json_quoting_keeps_every_answer_apart(s06, workdir, keyboard):
    session, client, call = asked_once(s06, workdir, keyboard, [NAME], 'say "hi", then go')

    check_turn(s06, session, client, call, ANSWERED_ALL.format(
        answers='"Which name should the new option have?"="say \\"hi\\", then go"'))


def test_what_the_model_wrote_is_shown_escaped(s06, workdir, keyboard, capsys):
    sneaky = {**NAME, "question": "Which name?\x1b[2J", "header": "a\rb"}
    asked_once(s06, workdir, keyboard, [sneaky], "1")
    assert "  ? [a\\rb] Which name?\\x1b[2J" in capsys.readouterr().out.splitlines()


# ---- EOF and Ctrl-C part-way: the rest is skipped, the turn goes on ----------------------------


def test_eof_part_way_skips_the_rest(s06, workdir, keyboard, capsys):
    session, client, call = asked_once(s06, workdir, keyboard, [NAME, DOCS, TESTS], "2")

    check_turn(s06, session, client, call,
               ANSWERED_SOME.format(answers=pair(NAME["question"], "--upper"), skipped=2, total=3))
    assert keyboard.asked == [ONE, SEVERAL]  # EOF at the second: the third is not shown
    out = capsys.readouterr().out.splitlines()
    assert SKIPPED_THE_REST in out
    assert "  ? [Tests] Should it get a test? (3 of 3)" not in out


def test_eof_at_the_first_question_is_none_answered(s06, workdir, keyboard):
    session, client, call = asked_once(s06, workdir, keyboard, [NAME, TESTS])

    check_turn(s06, session, client, call, ANSWERED_NONE)
    assert keyboard.asked == [ONE]


def test_ctrl_c_at_a_question_cancels_the_turn_and_leaves_a_valid_history(s06, workdir,
                                                                          answers, capsys):
    # /help says Ctrl-C cancels a turn; at a question it once skipped the rest, and the model
    # went on to plan
    asked = answers("1", KeyboardInterrupt).prompts
    call = ask("t1", NAME, DOCS, TESTS)
    client = FakeClient(reply(text("One question first."), call), reply(text("Thanks.")))
    session = new_session(s06, client, workdir)

    assert s06.run_turn(session, "add an option") is False

    assert session.messages == [
        user(text("add an option")),
        assistant(text("One question first."), call),
        user(result("t1", "Interrupted by the user.", is_error=True)),
    ]
    assert (asked, len(client.calls)) == ([ONE, SEVERAL], 1)
    out = capsys.readouterr().out
    assert "[Interrupted.]\n" in out and SKIPPED_THE_REST not in out


# ---- bad input: an is_error that names the problem, and no question shown ----------------------


def with_options(count):
    return {**NAME, "options": [{"label": f"name {n}", "description": "d"} for n in range(count)]}


BAD_INPUTS = [
    pytest.param({"questions": [NAME, TESTS, DOCS, with_options(2), with_options(3)]},
                 "Ask 1 to 4 questions at a time; this call has 5.", id="5 questions"),
    pytest.param({"questions": []}, "Ask 1 to 4 questions at a time; this call has 0.",
                 id="no question"),
    pytest.param({"questions": [with_options(1)]},
                 "Question 1 needs a list of 2 to 4 options; it has 1.", id="1 option"),
    pytest.param({"questions": [TESTS, with_options(5)]},
                 "Question 2 needs a list of 2 to 4 options; it has 5.", id="5 options"),
    pytest.param({"questions": [{**NAME, "header": "Option names"}, {**TESTS, "header": "x" * 13}]},
                 "The header of question 2 has 13 characters; a header has at most 12.",
                 id="a header of 13 characters"),
    pytest.param({"questions": ["Which name?"]},
                 "Question 1 must be an object with the fields question, header, options, "
                 "multiSelect.", id="a question that is not an object"),
    pytest.param("Which name?", "The input of ask_user_question must be a JSON object.",
                 id="an input that is not an object"),
    pytest.param({"questions": "Which name?"}, "questions must be a list of 1 to 4 questions.",
                 id="questions not a list"),
    pytest.param({}, "ask_user_question needs the field 'questions'.", id="no questions field"),
    pytest.param({"questions": [NAME], "reason": "x"},
                 "ask_user_question has no field 'reason'. Its fields: questions.",
                 id="an unknown field"),
    pytest.param({"questions": [{k: v for k, v in NAME.items() if k != "multiSelect"}]},
                 "Question 1 needs the field 'multiSelect'.", id="no multiSelect"),
    pytest.param({"questions": [{**NAME, "multiSelect": "no"}]},
                 "multiSelect of question 1 must be true or false.", id="multiSelect a string"),
    pytest.param({"questions": [{**NAME, "default": 1}]},
                 "Question 1 has an unknown field 'default'; the fields are question, header, "
                 "options, multiSelect.", id="an unknown question field"),
    pytest.param({"questions": [{**NAME, "question": "  "}]},
                 "Question 1 needs a non-empty question.", id="a blank question"),
    pytest.param({"questions": [{**NAME, "header": 7}]},
                 "Question 1 needs a non-empty header.", id="a header that is a number"),
    pytest.param({"questions": [{**NAME, "options": "a, b"}]},
                 "Question 1 needs a list of 2 to 4 options; not a list.", id="options a string"),
    pytest.param({"questions": [{**NAME, "options": ["a", "b"]}]},
                 "Option 1 of question 1 must be an object with the fields label, description.",
                 id="an option that is not an object"),
    pytest.param({"questions": [{**NAME, "options": [{"label": "a"}, {"label": "b"}]}]},
                 "Option 1 of question 1 needs the field 'description'.", id="no description"),
    pytest.param({"questions": [{**NAME, "options": [{"label": "a", "description": "x"},
                                                     {"label": "", "description": "y"}]}]},
                 "Option 2 of question 1 needs a non-empty label.", id="an empty label"),
    pytest.param({"questions": [{**NAME, "options": [{"label": "a", "description": "x"},
                                                     {"label": "a", "description": "y"}]}]},
                 "Two options of question 1 have the same label.", id="the same label twice"),
    pytest.param({"questions": [NAME, NAME]}, "Two questions are the same: ask each question once.",
                 id="the same question twice"),
]


@pytest.mark.parametrize("tool_input, problem", BAD_INPUTS)
def test_bad_input_is_an_error_that_names_the_problem_and_asks_nothing(
    s06, workdir, keyboard, capsys, tool_input, problem
):
    call = tool_use("t1", "ask_user_question", tool_input)
    client = FakeClient(unchecked_reply(call), reply(text("I'll fix it.")))
    session = new_session(s06, client, workdir)

    s06.run_turn(session, "add an option")

    history = [
        user(text("add an option")),
        assistant(call),
        user(result("t1", problem, is_error=True)),
        assistant(text("I'll fix it.")),
    ]
    assert session.messages == history
    assert client.calls == [req(s06, session, history[:1]), req(s06, session, history[:3])]
    assert keyboard.asked == []
    assert [line for line in capsys.readouterr().out.splitlines() if line.startswith("  ?")] == []


# ---- it always asks; a deny rule or a hook can still stop it ----------------------------------


@pytest.mark.parametrize("mode", ["default", "accept_edits", "bypass"])
@pytest.mark.parametrize("plan", [False, True], ids=["normal", "plan mode"])
def test_it_asks_in_every_mode_and_in_plan_mode(s06, workdir, keyboard, mode, plan):
    session, client, call = asked_once(s06, workdir, keyboard, [NAME], "1", mode=mode, plan=plan)

    check_turn(s06, session, client, call,
               ANSWERED_ALL.format(answers=pair(NAME["question"], "--shout (Recommended)")),
               plan=plan)
    assert keyboard.asked == [ONE]  # the question itself: no permission question before it
    assert (session.mode, session.plan_mode) == (mode, plan)
    assert sorted(path.name for path in workdir.iterdir()) == ["a.txt"]  # asking changes nothing


@pytest.mark.parametrize("mode", ["default", "bypass"])
def test_a_deny_rule_turns_it_off(s06, workdir, keyboard, mode):
    settings = {"permissions": {"deny": ["ask_user_question"], "allow": ["ask_user_question"]}}
    session, client, call = asked_once(s06, workdir, keyboard, [NAME], mode=mode,
                                       settings=settings)

    check_turn(s06, session, client, call,
               "Denied by the rule 'ask_user_question' in .agent/settings.json.", is_error=True)
    assert keyboard.asked == []


def test_hooks_see_it_like_any_other_tool(s06, workdir, keyboard):
    seen = []

    def allow(event):
        seen.append((event["hook_event_name"], copy.deepcopy(event["tool_input"])))
        return {"decision": "allow"}  # spares a permission question, never the user's answers

    def after(event):
        seen.append((event["hook_event_name"], event["tool_response"]))
        return None

    call = ask("t1", NAME)
    client = FakeClient(reply(text("One question first."), call), reply(text("Thanks.")))
    session = new_session(s06, client, workdir)
    s06.add_hook(session, "PreToolUse", allow, matcher="ask_user_question")
    s06.add_hook(session, "PostToolUse", after, matcher="ask_user_question")
    keyboard.feed("2")

    s06.run_turn(session, "add an option")

    answer = ANSWERED_ALL.format(answers=pair(NAME["question"], "--upper"))
    check_turn(s06, session, client, call, answer)
    assert seen == [("PreToolUse", {"questions": [NAME]}), ("PostToolUse", answer)]
    assert keyboard.asked == [ONE]


def test_a_pre_tool_use_hook_can_block_it(s06, workdir, keyboard):
    call = ask("t1", NAME)
    client = FakeClient(reply(text("One question first."), call), reply(text("Thanks.")))
    session = new_session(s06, client, workdir)
    s06.add_hook(session, "PreToolUse", lambda event: {"decision": "block", "reason": "not now"})

    s06.run_turn(session, "add an option")

    check_turn(s06, session, client, call, "Blocked by a PreToolUse hook: not now", is_error=True)
    assert keyboard.asked == []


# ---- /plan off ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mode, asked",
    [
        ("default", ["    [y] yes  [a] always (saved to .agent/settings.json)  [n] no: "]),
        ("accept_edits", []),
        ("bypass", []),
    ],
)
def test_plan_off_gives_back_the_tools_the_permission_mode_and_one_reminder(
    s06, workdir, keyboard, capsys, mode, asked
):
    write = tool_use("t1", "write_file", {"path": "b.txt", "content": "b\n"})
    client = FakeClient(
        reply(text("Reading first.")),
        reply(text("Writing now."), write),
        reply(text("Written.")),
        reply(text("Ok.")),
    )
    session = new_session(s06, client, workdir, mode=mode, session_id="test-session")
    s06.run_command(session, "/plan add b.txt")
    capsys.readouterr()

    s06.run_command(session, "/plan off")
    assert capsys.readouterr().out == PLAN_OFF_SHOWN.format(mode)
    assert (session.plan_mode, session.mode, session.notes) == (False, mode, [LEFT])
    keyboard.feed("y")
    s06.run_turn(session, "go ahead")
    s06.run_turn(session, "thanks")

    entered = session.messages[0]["content"][1]
    assert entered["text"].startswith(ENTERED_START)
    history = [
        user(text("add b.txt"), entered),
        assistant(text("Reading first.")),
        user(text("go ahead"), text(LEFT)),  # once, with the next prompt
        assistant(text("Writing now."), write),
        user(result("t1", "Created b.txt (2 characters).")),
        assistant(text("Written.")),
        user(text("thanks")),  # and never again
        assistant(text("Ok.")),
    ]
    assert session.messages == history
    assert client.calls == [
        req(s06, session, history[:1], plan=True),
        req(s06, session, history[:3]),  # every tool again
        req(s06, session, history[:5]),
        req(s06, session, history[:7]),
    ]
    assert keyboard.asked == asked
    assert (workdir / "b.txt").read_text() == "b\n"


def test_plan_off_then_on_before_a_prompt_tells_the_model_nothing_new(s06, workdir, capsys):
    client = FakeClient(reply(text("Reading first.")), reply(text("Still planning.")))
    session = new_session(s06, client, workdir)
    s06.run_command(session, "/plan add a line")

    s06.run_command(session, "/plan off")
    s06.enter_plan(session)
    assert session.notes == []  # it never heard that plan mode ended: nothing to take back
    s06.run_turn(session, "go on")

    assert session.messages[2:] == [
        user(text("go on"), text(STILL_ON)),
        assistant(text("Still planning.")),
    ]
    assert client.calls[1] == req(s06, session, session.messages[:3], plan=True)
    s06.run_command(session, "/plan off")
    assert session.notes == [LEFT]


def test_plan_off_when_plan_mode_is_off_changes_nothing(s06, tmp_path, capsys):
    session = new_session(s06, FakeClient(), tmp_path, mode="bypass")
    s06.run_command(session, "/plan off")
    assert capsys.readouterr().out == "plan mode is already off\n"
    assert (session.plan_mode, session.mode, session.notes) == (False, "bypass", [])


# ---- the plan file is written before plan mode ends -------------------------------------------


def test_ctrl_c_while_the_plan_is_written_keeps_plan_mode_on(s06, workdir, keyboard, monkeypatch):
    def ctrl_c(target, content):
        raise KeyboardInterrupt

    exit_plan = tool_use("t1", "exit_plan_mode", {"plan": "1. Do it."})
    client = FakeClient(reply(exit_plan), reply(text("Still planning.")))
    session = new_session(s06, client, workdir, session_id="test-session")
    s06.enter_plan(session)
    keyboard.feed("y")
    monkeypatch.setattr(s06, "write_atomically", ctrl_c)

    assert s06.run_turn(session, "add a line") is False
    assert (session.plan_mode, session.notes) == (True, [])
    monkeypatch.undo()
    s06.run_turn(session, "go on")

    entered = session.messages[0]["content"][1]
    assert session.messages == [
        user(text("add a line"), entered),
        assistant(exit_plan),
        user(
            result("t1", "Interrupted by the user.", is_error=True),
            text("go on"),
            text(STILL_ON),
        ),
        assistant(text("Still planning.")),
    ]
    assert client.calls[1] == req(s06, session, session.messages[:3], plan=True)
    assert sorted(path.name for path in workdir.iterdir()) == ["a.txt"]  # no plan, no folder
