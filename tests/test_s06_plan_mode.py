"""s06_plan_mode: the plan-mode flag, its filter on tools and permissions, the reminders, plan "
"approval."""

import errno
import json
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest

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
    wire,
)

ALL_TOOLS = [
    "bash",
    "read_file",
    "write_file",
    "edit_file",
    "glob",
    "todo_write",
    "enter_plan_mode",
    "exit_plan_mode",
    "ask_user_question",
]
PLAN_TOOLS = ["bash", "read_file", "glob", "todo_write", "exit_plan_mode", "ask_user_question"]

ENTERED = (
    "<reminder>Plan mode is on. Do not change anything yet: no write_file, no edit_file, "
    "and bash only for commands that read. The harness refuses every other call.\n"
    "Work like this:\n"
    "1. Explore: read the code the task touches.\n"
    "2. Design: decide on the change, step by step.\n"
    "3. Clarify: if a decision is really the user's, ask with ask_user_question.\n"
    "4. Submit: call exit_plan_mode with the plan as markdown. The user approves it, "
    "answers with feedback, or rejects it.\n"
    "A planning turn ends with ask_user_question or exit_plan_mode, never with a question in "
    "text. Whether the plan is good is for exit_plan_mode to ask: only there does the user see "
    "the plan.</reminder>"
)
STILL_ON = (
    "<reminder>Plan mode is still on: read and plan only, ask the user with ask_user_question "
    "if a decision is theirs, then submit the plan with exit_plan_mode.</reminder>"
)
ENDED = (
    "<reminder>Plan mode has ended: the user approved the plan. You may change files now."
    "</reminder>"
)
TODO_REMINDER = "<reminder>Update your todos.</reminder>"

ENTER_RESULT = "Plan mode is on. Explore, then submit your plan with exit_plan_mode."
APPROVE_QUESTION = (
    "  Approve this plan? [a] yes, and accept edits  [y] yes, ask before edits  "
    "[n] no, stop here  or type feedback to keep planning: "
)
FEEDBACK_RESULT = ("The user did not approve the plan; their feedback follows. "
                   "Plan mode stays on: revise the plan and submit it again with exit_plan_mode.")
REJECTED_RESULT = "The user rejected the plan. Plan mode stays on. Stop here and wait for the user."
NOT_ON_RESULT = "Plan mode is not on, so there is no plan to submit. Go ahead with the task."
EMPTY_RESULT = "The plan is empty. Write the plan in markdown and submit it again."

PLAN = "## Plan\n\n1. Change a.txt.\n2. Read it back.\n\n"
PLAN_SAVED = "## Plan\n\n1. Change a.txt.\n2. Read it back.\n"  # the file: one newline at the end


def denied(name):
    return (f"Denied: plan mode is on, and {name} may change things. Only reading tools and "
            "read-only bash run now. Finish the plan and submit it with exit_plan_mode.")


def approved(saved, plan=PLAN):
    return f"The user approved the plan. Plan mode is off: start the work now. {saved}\n\n{plan}"


@pytest.fixture
def s06():
    return load_chapter("s06_plan_mode")


def req(s06, session, messages, plan):
    """The exact request, with the tools offered in plan mode or out of it."""
    sent = request(s06, session, messages)
    if plan:
        sent["tools"] = [tool for tool in s06.TOOLS if tool["name"] in PLAN_TOOLS]
    return sent


def files(root):
    """Every file under root, relative, with its text."""
    return {
        path.relative_to(root).as_posix(): path.read_text()
        for path in sorted(Path(root).rglob("*"))
        if path.is_file()
    }


def read(id, path="a.txt"):
    return tool_use(id, "read_file", {"path": path})


def exit_plan(id, plan=PLAN):
    return tool_use(id, "exit_plan_mode", {"plan": plan})


def plan_session(s06, client, workdir, **extra):
    """A session that has just entered plan mode, as /plan or --plan leave it."""
    session = new_session(s06, client, workdir, session_id="test-session", **extra)
    s06.enter_plan(session)
    return session


# ---- the tools offered -----------------------------------------------------------

def test_the_tools_offered_in_and_out_of_plan_mode(s06, tmp_path):
    session = new_session(s06, FakeClient(), tmp_path)

    assert [tool["name"] for tool in s06.TOOLS] == ALL_TOOLS
    assert s06.tools_for(session) == s06.TOOLS
    session.plan_mode = True
    assert [tool["name"] for tool in s06.tools_for(session)] == PLAN_TOOLS
    assert s06.build_request(session)["tools"] == [
        tool for tool in s06.TOOLS if tool["name"] in PLAN_TOOLS
    ]
    session.plan_mode = False
    assert [tool["name"] for tool in s06.build_request(session)["tools"]] == ALL_TOOLS


# ---- refusals in plan mode -----------------------------------------------------------

CHANGING_CALLS = [
    pytest.param("write_file", {"path": "new.txt", "content": "x"}, id="write_file"),
    pytest.param(
        "edit_file", {"path": "a.txt", "old_string": "hello", "new_string": "bye"}, id="edit_file"
    ),
    pytest.param("bash", {"command": "touch new.txt"}, id="bash-touch"),
    pytest.param("bash", {"command": "echo hi > new.txt"}, id="bash-redirect"),
    pytest.param("bash", {"command": "ls && rm a.txt"}, id="bash-chain"),
]


def allow_everything(event):
    return {"decision": "allow"}


@pytest.mark.parametrize(
    "how", ["default", "accept_edits", "bypass", "hook-allow", "settings-allow"]
)
@pytest.mark.parametrize("name, tool_input", CHANGING_CALLS)
def test_changing_calls_are_refused_in_plan_mode(s06, workdir, keyboard, how, name, tool_input):
    client = FakeClient(reply(tool_use("t1", name, tool_input)), reply(text("Understood.")))
    session = new_session(s06, client, workdir, mode=how if how in s06.MODES else "default")
    if how == "hook-allow":
        s06.add_hook(session, "PreToolUse", allow_everything)
    if how == "settings-allow":
        session.settings = {
            "permissions": {"allow": ["write_file", "edit_file", "bash", "enter_plan_mode"]}
        }
    session.plan_mode = True

    assert s06.run_turn(session, "go") is True

    history = [
        user(text("go"), text(STILL_ON)),
        assistant(tool_use("t1", name, tool_input)),
        user(result("t1", denied(name), is_error=True)),
        assistant(text("Understood.")),
    ]
    assert client.calls == [
        req(s06, session, history[:1], plan=True),
        req(s06, session, history[:3], plan=True),
    ]
    assert session.messages == history
    assert files(workdir) == {"a.txt": "hello\n"}
    assert keyboard.asked == []
    assert session.plan_mode is True
    assert session.notes == []


def test_reading_calls_run_in_plan_mode_without_asking(s06, workdir, keyboard):
    calls = [
        read("t1"),
        tool_use("t2", "glob", {"pattern": "*.txt"}),
        tool_use("t3", "bash", {"command": "ls"}),
        tool_use("t4", "bash", {"command": "cat a.txt | wc -l"}),
    ]
    client = FakeClient(reply(*calls), reply(text("Read.")))
    session = new_session(s06, client, workdir)
    session.plan_mode = True

    s06.run_turn(session, "look")

    history = [
        user(text("look"), text(STILL_ON)),
        assistant(*calls),
        user(
            result("t1", "     1\thello"),
            result("t2", "a.txt"),
            result("t3", "a.txt\n[exit code: 0]"),
            result("t4", "1\n[exit code: 0]"),
        ),
        assistant(text("Read.")),
    ]
    assert client.calls == [
        req(s06, session, history[:1], plan=True),
        req(s06, session, history[:3], plan=True),
    ]
    assert session.messages == history
    assert keyboard.asked == []


@pytest.mark.parametrize("command", [
    "uniq a.txt b.txt",  # uniq INPUT OUTPUT writes OUTPUT
    "tree -o listing.txt",  # tree -o writes its listing to a file
    "date -s 2001-01-01",  # sets the system clock
    "rg --pre ./run.sh hello",  # runs ./run.sh on every file
    "sort --compress-program=./run.sh a.txt",  # runs ./run.sh
])
def test_bash_that_writes_is_refused_in_plan_mode(s06, tmp_path, command):
    session = new_session(s06, FakeClient(), tmp_path)
    session.plan_mode = True
    assert s06.check_permission(session, "bash", {"command": command}) == ("deny", denied("bash"))


def test_uniq_with_an_output_file_writes_nothing_in_plan_mode(s06, workdir, keyboard):
    call = tool_use("t1", "bash", {"command": "uniq a.txt b.txt"})
    client = FakeClient(reply(call), reply(text("Understood.")))
    session = new_session(s06, client, workdir)
    session.plan_mode = True

    s06.run_turn(session, "go")

    assert session.messages[2] == user(result("t1", denied("bash"), is_error=True))
    assert files(workdir) == {"a.txt": "hello\n"}


# ---- entering plan mode, and the reminders ----------------------------------------------

def test_the_model_enters_plan_mode(s06, workdir, keyboard, capsys):
    client = FakeClient(
        reply(text("Planning first."), tool_use("t1", "enter_plan_mode", {})),
        reply(read("t2")),
        reply(text("Found it.")),
        reply(text("Still planning.")),
    )
    session = new_session(s06, client, workdir)

    s06.run_turn(session, "add a line")
    s06.run_turn(session, "and?")

    history = [
        user(text("add a line")),
        assistant(text("Planning first."), tool_use("t1", "enter_plan_mode", {})),
        user(result("t1", ENTER_RESULT), text(ENTERED)),
        assistant(read("t2")), user(result("t2", "     1\thello")),
        assistant(text("Found it.")),
        user(text("and?"), text(STILL_ON)),
        assistant(text("Still planning.")),
    ]
    assert client.calls == [
        req(s06, session, history[:1], plan=False),
        req(s06, session, history[:3], plan=True),
        req(s06, session, history[:5], plan=True),
        req(s06, session, history[:7], plan=True),
    ]
    assert session.messages == history
    assert session.plan_mode is True
    assert keyboard.asked == []  # entering plan mode only restricts: it does not ask
    assert (
        "[Plan mode is on: the model may read and plan, not change anything.]\n"
        in capsys.readouterr().out
    )


@pytest.mark.parametrize("how", ["/plan TASK", "enter_plan then run_turn"])
def test_plan_mode_from_the_user(s06, workdir, keyboard, capsys, how):
    client = FakeClient(
        reply(text("Reading first.")), reply(text("Still reading.")), reply(text("And more."))
    )
    session = new_session(s06, client, workdir)

    if how == "/plan TASK":
        s06.run_command(session, "/plan add a line")
    else:
        s06.enter_plan(session)
        s06.run_turn(session, "add a line")
    s06.run_turn(session, "go on")
    s06.run_command(session, "/plan and then?")  # already on: no second ENTERED

    history = [
        user(text("add a line"), text(ENTERED)), assistant(text("Reading first.")),
        user(text("go on"), text(STILL_ON)), assistant(text("Still reading.")),
        user(text("and then?"), text(STILL_ON)), assistant(text("And more.")),
    ]
    assert client.calls == [req(s06, session, history[:i], plan=True) for i in (1, 3, 5)]
    assert session.messages == history
    capsys.readouterr()
    s06.run_command(session, "/plan")
    assert capsys.readouterr().out == (
        "plan mode: on   (/plan TASK to plan a task, /plan off to leave plan mode)\n")


def test_a_failed_first_call_keeps_the_plan_mode_instructions_for_the_retry(s06, workdir, keyboard):
    import anthropic
    import httpx2

    down = anthropic.APIConnectionError(
        request=httpx2.Request("POST", "http://127.0.0.1:9/v1/messages")
    )
    client = FakeClient(down, reply(text("Reading first.")))
    session = new_session(s06, client, workdir)

    s06.run_command(session, "/plan add a line")
    assert (session.messages, session.notes, session.plan_mode) == ([], [ENTERED], True)
    s06.run_turn(session, "add a line")  # sent again: the full instructions, not STILL_ON

    history = [user(text("add a line"), text(ENTERED)), assistant(text("Reading first."))]
    assert client.calls == [req(s06, session, history[:1], plan=True)] * 2
    assert session.messages == history


def test_slash_plan_without_a_task_only_shows_the_state(s06, tmp_path, capsys):
    session = new_session(s06, FakeClient(), tmp_path)

    s06.run_command(session, "/plan")

    assert (
        capsys.readouterr().out
        == "plan mode: off   (/plan TASK to plan a task, /plan off to leave plan mode)\n"
    )
    assert (session.plan_mode, session.notes, session.messages) == (False, [], [])


# ---- the answers to exit_plan_mode -------------------------------------------------------


@pytest.mark.parametrize(
    "mode, answer", [("default", "y"), ("accept_edits", "yes"), ("bypass", " Y ")]
)
def test_approval_saves_the_plan_and_ends_plan_mode(s06, workdir, keyboard, mode, answer):
    client = FakeClient(
        reply(text("Here is my plan."), exit_plan("t1")),
        reply(text("Starting.")),
        reply(text("OK.")),
    )
    session = plan_session(s06, client, workdir, mode=mode)
    keyboard.feed(answer)

    s06.run_turn(session, "add a line")
    s06.run_turn(session, "thanks")

    history = [
        user(text("add a line"), text(ENTERED)),
        assistant(text("Here is my plan."), exit_plan("t1")),
        user(
            result("t1", approved("The plan is saved in .agent/plans/plan-test-session.md.")),
            text(ENDED),
        ),
        assistant(text("Starting.")),
        user(text("thanks")),  # plan mode is over: no reminder, and ENDED only once
        assistant(text("OK.")),
    ]
    assert client.calls == [
        req(s06, session, history[:1], plan=True),
        req(s06, session, history[:3], plan=False),
        req(s06, session, history[:5], plan=False),
    ]
    assert session.messages == history
    assert keyboard.asked == [APPROVE_QUESTION]
    assert files(workdir) == {"a.txt": "hello\n", ".agent/plans/plan-test-session.md": PLAN_SAVED}
    assert (session.plan_mode, session.mode) == (False, mode)


ACCEPTED = (
    "The user approved the plan, and your edits now run without asking (permission mode "
    "accept_edits). Plan mode is off: start the work now. The plan is saved in "
    ".agent/plans/plan-test-session.md.\n\n" + PLAN
)


@pytest.mark.parametrize("mode", ["default", "accept_edits", "bypass"])
@pytest.mark.parametrize("answer", ["a", " A "])
def test_approval_with_a_accepts_edits_from_then_on(s06, workdir, keyboard, capsys, mode, answer):
    client = FakeClient(
        reply(exit_plan("t1")),
        reply(tool_use("t2", "write_file", {"path": "b.txt", "content": "new\n"})),
        reply(text("Done.")),
    )
    session = plan_session(s06, client, workdir, mode=mode)
    keyboard.feed(answer)  # and nothing more: a permission question would get EOF, a no

    s06.run_turn(session, "add a file")

    assert session.messages == [
        user(text("add a file"), text(ENTERED)),
        assistant(exit_plan("t1")),
        user(result("t1", ACCEPTED), text(ENDED)),
        assistant(tool_use("t2", "write_file", {"path": "b.txt", "content": "new\n"})),
        user(result("t2", "Created b.txt (4 characters).")),
        assistant(text("Done.")),
    ]
    assert keyboard.asked == [APPROVE_QUESTION]
    assert (session.plan_mode, session.mode) == (False, "accept_edits")
    assert files(workdir) == {
        "a.txt": "hello\n",
        "b.txt": "new\n",
        ".agent/plans/plan-test-session.md": PLAN_SAVED,
    }
    assert (
        "[Plan approved; plan mode is off, and edits run without asking (mode: accept_edits). "
        "The plan is saved in .agent/plans/plan-test-session.md.]\n"
    ) in capsys.readouterr().out


WRITE_B_QUESTION = "    [y] yes  [a] always (saved to .agent/settings.json)  [n] no: "
DENIED_BY_THE_USER = (
    "The user denied this call. Do not try it again as it is; ask the user, or find another way."
)


@pytest.mark.parametrize("answer", ["y", "yes"])
def test_approval_with_y_keeps_asking_before_edits(s06, workdir, keyboard, capsys, answer):
    client = FakeClient(
        reply(exit_plan("t1")),
        reply(tool_use("t2", "write_file", {"path": "b.txt", "content": "new\n"})),
        reply(text("Not written.")),
    )
    session = plan_session(s06, client, workdir)
    keyboard.feed(answer, "n")

    s06.run_turn(session, "add a file")

    assert (session.plan_mode, session.mode) == (False, "default")
    assert keyboard.asked == [APPROVE_QUESTION, WRITE_B_QUESTION]  # the edit asked first
    assert session.messages[4] == user(result("t2", DENIED_BY_THE_USER, is_error=True))
    assert files(workdir) == {"a.txt": "hello\n", ".agent/plans/plan-test-session.md": PLAN_SAVED}
    assert (
        "[Plan approved; plan mode is off, and the mode stays default. "
        "The plan is saved in .agent/plans/plan-test-session.md.]\n"
    ) in capsys.readouterr().out


@pytest.mark.parametrize(
    "answers, plan_mode",
    [(["n"], True), (["no"], True), ([""], True), ([], True), (["make it smaller"], True)],
    ids=["n", "no", "empty", "EOF", "feedback"],
)
@pytest.mark.parametrize("mode", ["default", "accept_edits"])
def test_the_permission_mode_after_a_no_or_feedback_is_unchanged(
    s06, workdir, keyboard, mode, answers, plan_mode
):
    client = FakeClient(reply(exit_plan("t1")), reply(text("Revising.")))
    session = plan_session(s06, client, workdir, mode=mode)
    keyboard.feed(*answers)

    s06.run_turn(session, "add a line")

    assert (session.plan_mode, session.mode) == (plan_mode, mode)
    assert files(workdir) == {"a.txt": "hello\n"}


@pytest.mark.parametrize("answer", ["also document it", "  also document it  "])
def test_feedback_keeps_plan_mode_and_goes_on(s06, workdir, keyboard, answer):
    client = FakeClient(reply(exit_plan("t1")), reply(text("Revising.")))
    session = plan_session(s06, client, workdir)
    keyboard.feed(answer)

    s06.run_turn(session, "add a line")

    history = [
        user(text("add a line"), text(ENTERED)),
        assistant(exit_plan("t1")),
        user(result("t1", FEEDBACK_RESULT, is_error=True), text("also document it")),
        assistant(text("Revising.")),
    ]
    assert client.calls == [
        req(s06, session, history[:1], plan=True),
        req(s06, session, history[:3], plan=True),
    ]
    assert session.messages == history
    assert keyboard.asked == [APPROVE_QUESTION]
    assert files(workdir) == {"a.txt": "hello\n"}
    assert session.plan_mode is True


def test_feedback_then_approval_of_the_revised_plan(s06, workdir, keyboard):
    revised = PLAN + "3. Document it in README.md.\n"
    client = FakeClient(
        reply(exit_plan("t1")),
        reply(text("Revised."), exit_plan("t2", revised)),
        reply(text("Starting.")),
    )
    session = plan_session(s06, client, workdir)
    keyboard.feed("also document it", "y")

    s06.run_turn(session, "add a line")

    history = [
        user(text("add a line"), text(ENTERED)),
        assistant(exit_plan("t1")),
        user(result("t1", FEEDBACK_RESULT, is_error=True), text("also document it")),
        assistant(text("Revised."), exit_plan("t2", revised)),
        user(
            result(
                "t2", approved("The plan is saved in .agent/plans/plan-test-session.md.", revised)
            ),
            text(ENDED),
        ),
        assistant(text("Starting.")),
    ]
    assert client.calls == [
        req(s06, session, history[:1], plan=True),
        req(s06, session, history[:3], plan=True),
        req(s06, session, history[:5], plan=False),
    ]
    assert session.messages == history
    assert keyboard.asked == [APPROVE_QUESTION, APPROVE_QUESTION]
    assert files(workdir) == {"a.txt": "hello\n", ".agent/plans/plan-test-session.md": revised}


@pytest.mark.parametrize(
    "answer", ["n", "no", "N", "", "   ", None], ids=["n", "no", "N", "empty", "blank", "EOF"]
)
def test_rejection_ends_the_turn_and_the_next_prompt_joins_it(s06, workdir, keyboard, answer):
    client = FakeClient(
        reply(text("My plan."), exit_plan("t1"))
    )  # a further call would fail the test
    session = plan_session(s06, client, workdir)
    if answer is not None:
        keyboard.feed(answer)

    assert s06.run_turn(session, "add a line") is True

    rejected = [
        user(text("add a line"), text(ENTERED)),
        assistant(text("My plan."), exit_plan("t1")),
        user(result("t1", REJECTED_RESULT, is_error=True)),
    ]
    assert client.calls == [req(s06, session, rejected[:1], plan=True)]
    assert session.messages == rejected
    assert keyboard.asked == [APPROVE_QUESTION]
    assert session.plan_mode is True
    assert files(workdir) == {"a.txt": "hello\n"}

    client.replies.append(reply(text("A smaller plan, then.")))
    assert s06.run_turn(session, "try a smaller change") is True

    history = [
        user(text("add a line"), text(ENTERED)),
        assistant(text("My plan."), exit_plan("t1")),
        user(
            result("t1", REJECTED_RESULT, is_error=True),
            text("try a smaller change"),
            text(STILL_ON),
        ),
        assistant(text("A smaller plan, then.")),
    ]
    assert client.calls[1] == req(s06, session, history[:3], plan=True)
    assert session.messages == history
    assert [message["role"] for message in history] == ["user", "assistant", "user", "assistant"]


def test_exit_plan_mode_outside_plan_mode_is_an_error(s06, workdir, keyboard):
    client = FakeClient(reply(exit_plan("t1")), reply(text("Going ahead.")))
    session = new_session(s06, client, workdir, session_id="test-session")

    s06.run_turn(session, "add a line")

    history = [
        user(text("add a line")),
        assistant(exit_plan("t1")),
        user(result("t1", NOT_ON_RESULT, is_error=True)),
        assistant(text("Going ahead.")),
    ]
    assert client.calls == [
        req(s06, session, history[:1], plan=False),
        req(s06, session, history[:3], plan=False),
    ]
    assert session.messages == history
    assert keyboard.asked == []
    assert files(workdir) == {"a.txt": "hello\n"}
    assert session.plan_mode is False


def test_an_empty_plan_is_refused_without_asking(s06, workdir, keyboard):
    client = FakeClient(reply(exit_plan("t1", "  \n")), reply(text("Writing one.")))
    session = plan_session(s06, client, workdir)

    s06.run_turn(session, "add a line")

    assert session.messages == [
        user(text("add a line"), text(ENTERED)),
        assistant(exit_plan("t1", "  \n")),
        user(result("t1", EMPTY_RESULT, is_error=True)),
        assistant(text("Writing one.")),
    ]
    assert keyboard.asked == []
    assert session.plan_mode is True


# ---- the plan file -------------------------------------------------------------------


def test_an_unsafe_session_id_gives_a_safe_file_name(s06, workdir, keyboard):
    client = FakeClient(reply(exit_plan("t1")), reply(text("Starting.")))
    session = new_session(s06, client, workdir, session_id="../x y/z")
    s06.enter_plan(session)
    keyboard.feed("y")

    s06.run_turn(session, "add a line")

    assert session.messages[2] == user(
        result("t1", approved("The plan is saved in .agent/plans/plan-___x_y_z.md.")), text(ENDED)
    )
    assert files(workdir) == {"a.txt": "hello\n", ".agent/plans/plan-___x_y_z.md": PLAN_SAVED}


@pytest.mark.parametrize(
    "session_id, name",
    [
        ("20260101-120000-abc123", "plan-20260101-120000-abc123.md"),
        ("../x y/z", "plan-___x_y_z.md"),
        ("/etc/passwd", "plan-_etc_passwd.md"),
        ("", "plan-session.md"),
        ("a" * 150, "plan-" + "a" * 100 + ".md"),
    ],
)
def test_plan_file(s06, tmp_path, session_id, name):
    session = new_session(s06, FakeClient(), tmp_path, session_id=session_id)
    assert s06.plan_file(session) == tmp_path / ".agent" / "plans" / name


def test_the_session_id(s06, tmp_path):
    session = new_session(s06, FakeClient(), tmp_path)
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{6}", session.session_id)


def test_a_plan_that_cannot_be_saved_is_still_approved(s06, workdir, keyboard):
    (workdir / ".agent").mkdir()
    (workdir / ".agent" / "plans").write_text("not a folder\n")
    client = FakeClient(reply(exit_plan("t1")), reply(text("Starting.")))
    session = plan_session(s06, client, workdir)
    keyboard.feed("y")

    s06.run_turn(session, "add a line")

    saved = "The plan could not be saved (File exists), but it is approved all the same."
    history = [
        user(text("add a line"), text(ENTERED)),
        assistant(exit_plan("t1")),
        user(result("t1", approved(saved)), text(ENDED)),
        assistant(text("Starting.")),
    ]
    assert client.calls == [
        req(s06, session, history[:1], plan=True),
        req(s06, session, history[:3], plan=False),
    ]
    assert session.messages == history
    assert session.plan_mode is False
    assert files(workdir) == {"a.txt": "hello\n", ".agent/plans": "not a folder\n"}


def test_a_failed_rename_leaves_no_partial_file(s06, workdir, keyboard, monkeypatch):
    def full_disk(source, target):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(s06.os, "replace", full_disk)
    client = FakeClient(reply(exit_plan("t1")), reply(text("Starting.")))
    session = plan_session(s06, client, workdir)
    keyboard.feed("y")

    s06.run_turn(session, "add a line")

    saved = (
        "The plan could not be saved (No space left on device), but it is approved all the same."
    )
    assert session.messages[2] == user(result("t1", approved(saved)), text(ENDED))
    assert session.plan_mode is False
    assert (
        sorted(path.name for path in (workdir / ".agent" / "plans").iterdir()) == []
    )  # no temp file, no plan
    assert files(workdir) == {"a.txt": "hello\n"}


@pytest.mark.parametrize("link", [".agent", ".agent/plans", ".agent/plans/plan-test-session.md"])
def test_a_plan_folder_that_links_out_is_not_written_and_the_plan_is_approved(
    s06, workdir, keyboard, tmp_path_factory, link
):
    outside = tmp_path_factory.mktemp("outside")
    (workdir / ".agent" / "plans").mkdir(parents=True)
    if link != ".agent/plans/plan-test-session.md":
        shutil.rmtree(workdir / ".agent" / "plans")
        if link == ".agent":
            shutil.rmtree(workdir / ".agent")
    (workdir / link).symlink_to(outside / "plan-test-session.md" if link.endswith(".md")
                                else outside, target_is_directory=not link.endswith(".md"))
    client = FakeClient(reply(exit_plan("t1")), reply(text("Starting.")))
    session = plan_session(s06, client, workdir)
    keyboard.feed("y")

    s06.run_turn(session, "add a line")

    saved = ("The plan could not be saved (.agent/plans leads outside the working directory), "
             "but it is approved all the same.")
    assert session.messages[2] == user(result("t1", approved(saved)), text(ENDED))
    assert session.plan_mode is False
    assert sorted(outside.rglob("*")) == []


def test_a_plan_that_cannot_be_encoded_is_refused_before_the_question(s06, workdir, keyboard):
    broken = "## Plan\n\n1. Say \ud800 hello.\n"
    client = FakeClient(reply(exit_plan("t1", broken)), reply(text("Resending.")))
    session = plan_session(s06, client, workdir)
    keyboard.feed("y")  # never read: the question is not asked

    s06.run_turn(session, "add a line")

    refused = ("The plan cannot be encoded as UTF-8 (character 17 is a lone surrogate). "
               "Submit it again without that character.")
    # the history keeps the call escaped, so that the next request can be encoded
    assert session.messages == [
        user(text("add a line"), text(ENTERED)),
        assistant(exit_plan("t1", "## Plan\n\n1. Say \\ud800 hello.\n")),
        user(result("t1", refused, is_error=True)),
        assistant(text("Resending.")),
    ]
    assert keyboard.asked == []
    assert session.plan_mode is True
    assert files(workdir) == {"a.txt": "hello\n"}


@pytest.mark.parametrize("answer", ["n", "make it smaller"], ids=["rejection", "feedback"])
def test_a_plan_turned_down_is_not_a_round_without_a_todo_update(s06, workdir, keyboard, answer):
    client = FakeClient(reply(exit_plan("t1")), reply(text("Revising.")))
    session = plan_session(s06, client, workdir)
    session.rounds_since_todo = 2  # the next round of work would bring the reminder
    keyboard.feed(answer)

    s06.run_turn(session, "add a line")

    said = REJECTED_RESULT if answer == "n" else FEEDBACK_RESULT
    notes = [] if answer == "n" else [text(answer)]
    assert session.messages[2] == user(result("t1", said, is_error=True), *notes)
    assert session.rounds_since_todo == 2


# ---- plan mode beside the rest -------------------------------------------------------------


def test_todo_write_works_in_plan_mode(s06, workdir, keyboard):
    todos = [
        {
            "content": "Plan the change",
            "status": "in_progress",
            "activeForm": "Planning the change",
        },
        {"content": "Make it", "status": "pending"},
    ]
    client = FakeClient(
        reply(tool_use("t1", "todo_write", {"todos": todos})), reply(text("Listed."))
    )
    session = plan_session(s06, client, workdir)

    s06.run_turn(session, "add a line")

    history = [
        user(text("add a line"), text(ENTERED)),
        assistant(tool_use("t1", "todo_write", {"todos": todos})),
        user(result("t1", "[>] Planning the change\n[ ] Make it\n(0/2 completed)")),
        assistant(text("Listed.")),
    ]
    assert client.calls == [
        req(s06, session, history[:1], plan=True),
        req(s06, session, history[:3], plan=True),
    ]
    assert session.messages == history
    assert session.todos == todos
    assert keyboard.asked == []


def test_leaving_plan_mode_keeps_the_permission_mode(s06, workdir, keyboard):
    write = tool_use("t2", "write_file", {"path": "b.txt", "content": "b\n"})
    write_again = tool_use("t4", "write_file", {"path": "b.txt", "content": "b\n"})
    client = FakeClient(
        reply(text("Planning first."), tool_use("t1", "enter_plan_mode", {})),
        reply(write),
        reply(exit_plan("t3")),
        reply(write_again),
        reply(text("Done.")),
    )
    session = new_session(s06, client, workdir, mode="accept_edits", session_id="test-session")
    keyboard.feed("y")

    s06.run_turn(session, "add b.txt")

    history = [
        user(text("add b.txt")),
        assistant(text("Planning first."), tool_use("t1", "enter_plan_mode", {})),
        user(result("t1", ENTER_RESULT), text(ENTERED)),
        assistant(write),
        user(result("t2", denied("write_file"), is_error=True)),
        assistant(exit_plan("t3")),
        # the third tool round without a todo update: the todo reminder, then the plan-mode news
        user(
            result("t3", approved("The plan is saved in .agent/plans/plan-test-session.md.")),
            text(TODO_REMINDER),
            text(ENDED),
        ),
        assistant(write_again),
        user(result("t4", "Created b.txt (2 characters).")),
        assistant(text("Done.")),
    ]
    assert client.calls == [
        req(s06, session, history[:1], plan=False),
        req(s06, session, history[:3], plan=True),
        req(s06, session, history[:5], plan=True),
        req(s06, session, history[:7], plan=False),
        req(s06, session, history[:9], plan=False),
    ]
    assert session.messages == history
    assert (session.mode, session.plan_mode) == ("accept_edits", False)
    assert keyboard.asked == [
        APPROVE_QUESTION
    ]  # accept_edits wrote b.txt without asking, as before plan mode
    assert files(workdir) == {
        "a.txt": "hello\n",
        "b.txt": "b\n",
        ".agent/plans/plan-test-session.md": PLAN_SAVED,
    }


# ---- through the real SDK ----------------------------------------------------------------


def test_a_rejection_then_a_new_prompt_on_the_wire(s06, workdir, keyboard):
    bodies, client = wire(
        [reply(text("My plan."), exit_plan("toolu_1")), reply(text("A smaller plan, then."))]
    )
    session = plan_session(s06, client, workdir)
    keyboard.feed("n")

    s06.run_turn(session, "add a line")
    s06.run_turn(session, "try a smaller change")

    plan_tools = [tool for tool in s06.TOOLS if tool["name"] in PLAN_TOOLS]
    assert bodies == [
        {
            "model": "test-model",
            "max_tokens": s06.MAX_TOKENS,
            "system": s06.system_prompt(workdir),
            "tools": plan_tools,
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "add a line"},
                        {"type": "text", "text": ENTERED},
                    ],
                }
            ],
        },
        {
            "model": "test-model",
            "max_tokens": s06.MAX_TOKENS,
            "system": s06.system_prompt(workdir),
            "tools": plan_tools,
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "add a line"},
                        {"type": "text", "text": ENTERED},
                    ],
                },
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "My plan."},
                        {
                            "type": "tool_use",
                            "id": "toolu_1",
                            "name": "exit_plan_mode",
                            "input": {"plan": PLAN},
                        },
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_1",
                            "content": REJECTED_RESULT,
                            "is_error": True,
                        },
                        {"type": "text", "text": "try a smaller change"},
                        {"type": "text", "text": STILL_ON},
                    ],
                },
            ],
        },
    ]
    assert [tool["name"] for tool in bodies[1]["tools"]] == PLAN_TOOLS


# ---- bugs ------------------------------------------------------------------------------


def test_a_rejection_in_an_interrupted_turn_does_not_end_the_next_turn(s06, workdir, keyboard):
    def interrupt(event):
        raise KeyboardInterrupt  # Ctrl-C while the read runs, after the user said no to the plan

    client = FakeClient(reply(exit_plan("t1"), read("t2")), reply(read("t3")), reply(text("Done.")))
    session = plan_session(s06, client, workdir)
    s06.add_hook(session, "PreToolUse", interrupt, matcher="read_file")
    keyboard.feed("n")

    assert s06.run_turn(session, "add a line") is False
    session.hooks.clear()
    assert s06.run_turn(session, "go on") is True

    history = [
        user(text("add a line"), text(ENTERED)),
        assistant(exit_plan("t1"), read("t2")),
        user(
            result("t1", REJECTED_RESULT, is_error=True),
            result("t2", "Interrupted by the user.", is_error=True),
            text("go on"),
            text(STILL_ON),
        ),
        assistant(read("t3")),
        user(result("t3", "     1\thello")),
        assistant(text("Done.")),
    ]
    assert session.messages == history
    assert client.calls == [
        req(s06, session, history[:1], plan=True),
        req(s06, session, history[:3], plan=True),
        req(s06, session, history[:5], plan=True),
    ]


def test_approval_with_a_relative_workdir(s06, workdir, keyboard, monkeypatch):
    monkeypatch.chdir(workdir.parent)
    client = FakeClient(reply(exit_plan("t1")), reply(text("Starting.")))
    session = plan_session(s06, client, Path(workdir.name))
    keyboard.feed("y")

    s06.run_turn(session, "add a line")

    assert session.messages[2] == user(
        result("t1", approved("The plan is saved in .agent/plans/plan-test-session.md.")),
        text(ENDED),
    )
    assert files(workdir) == {"a.txt": "hello\n", ".agent/plans/plan-test-session.md": PLAN_SAVED}


# ---- done when: the scenario, offline, with the user's answers on stdin ----------------------

SCENARIO = json.loads((ROOT / "s06_plan_mode" / "scenario.json").read_text())


def scripted(when):
    """The turn of the script taken when the newest user turn holds `when`."""
    return next(turn for turn in SCENARIO["turns"] if turn.get("when") == when)


def as_played(turn, *ids):
    """A script turn as the history holds it: its tool_use blocks get these ids."""
    numbers = iter(ids)
    return assistant(*[
        {**block, "id": next(numbers)} if block["type"] == "tool_use" else block
        for block in turn["content"]
    ])


ASKED = SCENARIO["turns"][3]  # the turn that asks the question
FIRST_PLAN = scripted('="No"')["content"][1]["input"]["plan"]  # greet.py only
REVISED_PLAN = scripted("did not approve")["content"][1]["input"]["plan"]  # and README.md
QUESTION = "Should README.md show the new option too?"
SHOWN_QUESTION = [
    "  > ask_user_question: [1 item]",
    f"  ? [README] {QUESTION}",
    "      1. Yes (Recommended): Add a --shout example to README.md, beside the one it has.",
    "      2. No: Change greet.py only; README.md stays as it is.",
]
CHOOSE_ONE = "    a number (1-2), your own answer, or empty to skip: "
SKIPPED_THE_REST = "    [No more answers: the questions left are skipped.]"


def answered(answer):
    return (f'User has answered your questions: "{QUESTION}"="{answer}". '
            "You can now continue with the user's answers in mind.")


ANSWERED_NONE = (
    "The user answered none of the questions: they skipped them. This is not a rejection: go "
    "on with the task, using your own judgement for these decisions. Do not invent the user's "
    "preferences; say which choices you made yourself."
)
GREET_AFTER = '''import sys


def greet(name):
    return f"Hello, {name}."


if __name__ == "__main__":
    shout = "--shout" in sys.argv[1:]
    names = [arg for arg in sys.argv[1:] if arg != "--shout"]
    message = greet(names[0] if names else "world")
    print(message.upper() if shout else message)
'''
README_AFTER = """# greet

    python3 greet.py Ada            # Hello, Ada.
    python3 greet.py --shout Ada    # HELLO, ADA.
"""

# What the user types in each offline run: an answer to the question, then to the plan.
OFFLINE_ANSWERS = {
    "option 1": "1\ny\n",  # README.md too, approved
    "option 2, feedback": "2\nalso document it\ny\n",
    "own words": "keep it short\ny\n",
    "skipped": "\ny\n",
    "rejected": "1\nn\n",
}


@pytest.fixture(scope="module")
def offline_runs(tmp_path_factory):
    """The scenario once for each kind of answer, all at once, each with a trace."""
    runs = {}
    for number, name in enumerate(OFFLINE_ANSWERS):
        base = tmp_path_factory.mktemp(f"s06-run{number}")
        shutil.copytree(ROOT / "s06_plan_mode" / "workspace", base / "work")
        runs[name] = SimpleNamespace(
            work=base / "work", trace=base / "trace.jsonl", before=files(base / "work")
        )

    def run(name):
        return run_chapter(
            "s06_plan_mode",
            "--offline",
            "--workdir",
            str(runs[name].work),
            "--trace",
            str(runs[name].trace),
            SCENARIO["prompt"],
            stdin=OFFLINE_ANSWERS[name],
        )

    with ThreadPoolExecutor(len(runs)) as pool:
        done = dict(zip(runs, pool.map(run, runs), strict=True))
    for name, run in runs.items():
        run.done = done[name]
        run.calls = read_trace(run.trace)
        run.session = re.search(r"^session: (\S+)$", run.done.stdout, re.M)[1]
        run.plan_name = f".agent/plans/plan-{run.session}.md"
    return runs


def test_the_scenario_answers_the_question_then_approves():
    # Option 2: not the one the model recommends, so the run shows whose decision it is; then
    # `a`, approve and accept edits, so that the work runs without a question.
    # (tests/test_chapters.py plays these answers: the run ends with the script's last turn.)
    assert SCENARIO["answers"] == ["2", "a"]
    assert scripted("(3/3 completed)") == SCENARIO["turns"][-1]


def user_blocks(messages):
    """Every block of the user turns after the prompt: (tool_use_id or "text", content), in
    order."""
    return [
        (
            block.get("tool_use_id", "text"),
            block.get("content", block.get("text")),
            block.get("is_error", False),
        )
        for message in messages[1:]
        if message["role"] == "user"
        for block in message["content"]
    ]


def tool_calls(calls):
    return [
        block["name"]
        for call in calls
        for block in call["response"]["content"]
        if block["type"] == "tool_use"
    ]


def model_texts(calls):
    return [
        block["text"]
        for call in calls
        for block in call["response"]["content"]
        if block["type"] == "text"
    ]


def shown_question(out):
    """The lines from the question's tool call to the answer the model got."""
    at = out.index(SHOWN_QUESTION[0])
    return out[at : at + 6]


GREET_READ = "\n".join(
    f"{n:>6}\t{line}"
    for n, line in enumerate(
        (ROOT / "s06_plan_mode" / "workspace" / "greet.py").read_text().splitlines(), 1
    )
)
PLANNING = [  # the user blocks up to the question: the same in every run
    ("toolu_01", ENTER_RESULT, False),
    ("text", ENTERED, False),
    ("toolu_02", GREET_READ, False),
    (
        "toolu_03",
        "[>] Planning the change\n[ ] Handle --shout in greet.py\n[ ] Check the output\n"
        "(0/3 completed)",
        False,
    ),
    ("toolu_04", denied("write_file"), True),
]
BEFORE_THE_PLAN = ["enter_plan_mode", "read_file", "todo_write", "write_file", "ask_user_question"]
WORK_WITH_README = [
    "todo_write", "edit_file", "todo_write", "bash", "todo_write", "edit_file", "todo_write",
]
WORK = ["todo_write", "edit_file", "todo_write", "bash", "todo_write"]
DONE = (
    "Done: `python3 greet.py --shout Ada` prints HELLO, ADA. The approved plan is in "
    ".agent/plans/."
)
DONE_WITH_README = (
    "Done: `python3 greet.py --shout Ada` prints HELLO, ADA., and README.md shows the new "
    "option. The approved plan is in .agent/plans/."
)


@pytest.mark.slow
def test_offline_the_model_asks_plans_with_the_answer_and_carries_the_plan_out(offline_runs):
    run = offline_runs["option 1"]
    assert (run.done.returncode, run.done.stderr) == (0, "")
    out = run.done.stdout.splitlines()
    assert shown_question(out) == SHOWN_QUESTION + [
        CHOOSE_ONE + "1",
        "    " + answered("Yes (Recommended)"),
    ]
    assert files(run.work) == {
        **run.before,
        run.plan_name: REVISED_PLAN + "\n",
        "greet.py": GREET_AFTER,
        "README.md": README_AFTER,
    }
    assert tool_calls(run.calls) == BEFORE_THE_PLAN + ["exit_plan_mode"] + WORK_WITH_README
    assert [[tool["name"] for tool in call["request"]["tools"]] for call in run.calls] == [
        ALL_TOOLS
    ] + [PLAN_TOOLS] * 4 + [ALL_TOOLS] * 6
    # The trace: the question as the model sent it, the answer as the user gave it, and the
    # plan that the answer chose.
    assert [block["input"] for block in run.calls[3]["response"]["content"][1:]] == [
        ASKED["content"][1]["input"]
    ]
    assert run.calls[4]["request"]["messages"][-1] == user(
        result("toolu_05", answered("Yes (Recommended)"))
    )
    assert model_texts(run.calls[4:5]) == ["README.md too, then. Here is my plan."]
    assert user_blocks(run.calls[-1]["request"]["messages"]) == PLANNING + [
        ("toolu_05", answered("Yes (Recommended)"), False),
        ("toolu_06", approved(f"The plan is saved in {run.plan_name}.", REVISED_PLAN), False),
        ("text", TODO_REMINDER, False),
        ("text", ENDED, False),
        (
            "toolu_07",
            "[x] Plan the change\n[>] Handling --shout in greet.py\n[ ] Check the output\n"
            "[ ] Document --shout in README.md\n(1/4 completed)",
            False,
        ),
        ("toolu_08", "Replaced 1 occurrence in greet.py.", False),
        (
            "toolu_09",
            "[x] Plan the change\n[x] Handle --shout in greet.py\n[>] Checking the output\n"
            "[ ] Document --shout in README.md\n(2/4 completed)",
            False,
        ),
        ("toolu_10", "HELLO, ADA.\n[exit code: 0]", False),
        (
            "toolu_11",
            "[x] Plan the change\n[x] Handle --shout in greet.py\n[x] Check the output\n"
            "[>] Documenting --shout in README.md\n(3/4 completed)",
            False,
        ),
        ("toolu_12", "Replaced 1 occurrence in README.md.", False),
        (
            "toolu_13",
            "[x] Plan the change\n[x] Handle --shout in greet.py\n[x] Check the output\n"
            "[x] Document --shout in README.md\n(4/4 completed)",
            False,
        ),
    ]
    assert out[-1] == DONE_WITH_README


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, typed, reply, taken",
    [
        ("own words", "keep it short", answered("keep it short"),
         scripted("User has answered your questions")),
        ("skipped", "", ANSWERED_NONE, scripted("answered none of the questions")),
    ],
)
def test_offline_own_words_or_no_answer_plan_only_what_was_asked(
    offline_runs, name, typed, reply, taken
):
    run = offline_runs[name]
    assert (run.done.returncode, run.done.stderr) == (0, "")
    out = run.done.stdout.splitlines()
    assert shown_question(out) == SHOWN_QUESTION + [CHOOSE_ONE + typed, "    " + reply]
    # The answer (or that there is none) is the tool's result, never an error.
    assert run.calls[4]["request"]["messages"][-1] == user(result("toolu_05", reply))
    assert as_played(taken, "toolu_06") == assistant(*run.calls[4]["response"]["content"])
    assert tool_calls(run.calls) == BEFORE_THE_PLAN + ["exit_plan_mode"] + WORK
    assert files(run.work) == {
        **run.before,
        run.plan_name: FIRST_PLAN + "\n",
        "greet.py": GREET_AFTER,
    }
    assert out[-1] == DONE


@pytest.mark.slow
def test_offline_rejected_plan_changes_nothing(offline_runs):
    run = offline_runs["rejected"]
    assert (run.done.returncode, run.done.stderr) == (0, "")
    # Nothing in the workdir changed: not a file was written, edited or created.
    assert files(run.work) == run.before
    assert tool_calls(run.calls) == BEFORE_THE_PLAN + ["exit_plan_mode"]
    assert len(run.calls) == 5  # the turn ended at the rejection: no further model call
    # No todo reminder: the user turned the plan down, the model did no work in that round.
    assert run.done.stdout.splitlines()[-1:] == [f"    error: {REJECTED_RESULT}"]


@pytest.mark.slow
def test_offline_option_2_then_feedback_brings_a_revised_plan(offline_runs):
    run = offline_runs["option 2, feedback"]
    assert (run.done.returncode, run.done.stderr) == (0, "")
    assert shown_question(run.done.stdout.splitlines())[-2:] == [
        CHOOSE_ONE + "2",
        "    " + answered("No"),
    ]
    plans = [
        block["input"]["plan"]
        for call in run.calls
        for block in call["response"]["content"]
        if block["type"] == "tool_use" and block["name"] == "exit_plan_mode"
    ]
    assert plans == [FIRST_PLAN, REVISED_PLAN]
    assert model_texts(run.calls[4:6]) == [
        "Then greet.py only. Here is my plan.",
        ("Thanks. (This scripted model cannot follow feedback in your own words: its one revised "
         "plan adds README.md, whatever you answered before.) Here it is."),
    ]
    # The revised plan has a step for README.md, and the run carries it out too.
    assert files(run.work) == {
        **run.before,
        run.plan_name: REVISED_PLAN + "\n",
        "greet.py": GREET_AFTER,
        "README.md": README_AFTER,
    }
    assert tool_calls(run.calls) == (
        BEFORE_THE_PLAN + ["exit_plan_mode", "exit_plan_mode"] + WORK_WITH_README
    )
    assert run.done.stdout.splitlines()[-1] == DONE_WITH_README
    assert run.calls[4]["request"]["messages"][-1] == user(result("toolu_05", answered("No")))
    revision_request = run.calls[5]["request"]
    assert revision_request["messages"][-1] == user(
        result("toolu_06", FEEDBACK_RESULT, is_error=True),
        text("also document it"),
    )
    assert [tool["name"] for tool in revision_request["tools"]] == PLAN_TOOLS
    assert run.calls[6]["request"]["messages"][-1] == user(
        result("toolu_07", approved(f"The plan is saved in {run.plan_name}.", REVISED_PLAN)),
        text(TODO_REMINDER),  # the feedback round did not count: this is the third round
        text(ENDED),
    )


OVER = (
    "(The script has no more turns: this is where the recorded session ended. "
    "In the REPL, /restart plays it again.)"
)
AFTER_REJECTION = (
    "Understood: you rejected the plan, so I changed nothing, and plan mode is still on. "
    "Tell me how you would like to go on, or /plan off to leave plan mode."
)
AFTER_CTRL_C = (
    "You stopped me at the plan question: I changed nothing, and plan mode is still on. "
    "Tell me how you would like to go on."
)
AFTER_PLAN_OFF = (
    "Plan mode is off: you ended it without a plan, so nothing was approved and nothing has "
    "changed. (This scripted model has no turns for work without an approved plan: /restart "
    "plays the script again.)"
)
ALREADY_ON = "Plan mode is already on. Explore, then submit your plan with exit_plan_mode."
LEFT = "<reminder>The user ended plan mode without a plan. You may change files now.</reminder>"


def scenario_session(s06, tmp_path, *flags):
    work = tmp_path / "work"
    shutil.copytree(ROOT / "s06_plan_mode" / "workspace", work)
    session, _ = s06.make_session(s06.parse_args(["--offline", "--workdir", str(work), *flags]))
    return session, work, files(work)


def assistant_texts(messages):
    return [
        block["text"]
        for message in messages
        if message["role"] == "assistant"
        for block in message["content"]
        if block["type"] == "text"
    ]


def test_offline_after_a_rejection_the_script_says_so_then_that_it_is_over(s06, tmp_path, keyboard):
    session, work, before = scenario_session(s06, tmp_path)
    keyboard.feed("1", "n")
    assert s06.run_turn(session, SCENARIO["prompt"]) is True
    played = len(session.messages)
    assert s06.run_turn(session, "what now?") is True
    assert s06.run_turn(session, "and then?") is True
    assert session.messages[played - 1 :] == [
        user(
            result("toolu_06", REJECTED_RESULT, is_error=True),
            text("what now?"),
            text(STILL_ON),
        ),
        assistant(text(AFTER_REJECTION)),
        user(text("and then?"), text(STILL_ON)),
        assistant(text(OVER)),
    ]
    assert files(work) == before  # no plan file, no change
    assert session.plan_mode is True


def test_offline_plan_off_at_once_after_a_rejection_is_not_answered_as_a_rejection(
    s06, tmp_path, keyboard
):
    # The next prompt joins the user turn that holds the rejection: the script must not
    # answer it as if plan mode were still on.
    session, work, before = scenario_session(s06, tmp_path)
    keyboard.feed("1", "n")
    assert s06.run_turn(session, SCENARIO["prompt"]) is True
    played = len(session.messages)
    s06.run_command(session, "/plan off")
    assert s06.run_turn(session, "go on") is True
    assert s06.run_turn(session, "and then?") is True
    assert session.messages[played - 1 :] == [
        user(
            result("toolu_06", REJECTED_RESULT, is_error=True),
            text("go on"),
            text(LEFT),
        ),
        assistant(text(AFTER_PLAN_OFF)),
        user(text("and then?")),
        assistant(text(OVER)),
    ]
    assert files(work) == before
    assert (session.plan_mode, session.mode) == (False, "default")


def test_offline_plan_off_after_the_rejection_was_answered(s06, tmp_path, keyboard):
    session, work, before = scenario_session(s06, tmp_path)
    keyboard.feed("1", "n")
    s06.run_turn(session, SCENARIO["prompt"])
    s06.run_turn(session, "what now?")
    played = len(session.messages)
    s06.run_command(session, "/plan off")
    assert s06.run_turn(session, "go on") is True
    assert session.messages[played:] == [
        user(text("go on"), text(LEFT)),
        assistant(text(AFTER_PLAN_OFF)),
    ]
    assert assistant_texts(session.messages)[-2:] == [AFTER_REJECTION, AFTER_PLAN_OFF]
    assert files(work) == before


def test_offline_ctrl_c_at_the_plan_question_changes_nothing_and_the_script_says_so(
    s06, tmp_path, monkeypatch, capsys
):
    session, work, before = scenario_session(s06, tmp_path)
    answers = iter(["1"])

    def answer_then_ctrl_c(prompt=""):
        answer = next(answers, None)
        if answer is None:
            raise KeyboardInterrupt
        return answer

    monkeypatch.setattr("builtins.input", answer_then_ctrl_c)
    assert s06.run_turn(session, SCENARIO["prompt"]) is False
    played = len(session.messages)
    assert session.messages[-1] == user(
        result("toolu_06", "Interrupted by the user.", is_error=True)
    )
    assert s06.run_turn(session, "go on") is True
    assert session.messages[played - 1 :] == [
        user(
            result("toolu_06", "Interrupted by the user.", is_error=True),
            text("go on"),
            text(STILL_ON),
        ),
        assistant(text(AFTER_CTRL_C)),
    ]
    assert files(work) == before
    assert capsys.readouterr().out.splitlines()[-3:] == ["", "[Interrupted.]", AFTER_CTRL_C]


def test_offline_ctrl_c_at_the_question_cancels_the_turn_as_help_says(
    s06, tmp_path, answers, capsys
):
    session, work, before = scenario_session(s06, tmp_path)
    answers(KeyboardInterrupt)
    assert s06.run_turn(session, SCENARIO["prompt"]) is False
    assert session.messages[7:] == [
        as_played(ASKED, "toolu_05"),
        user(result("toolu_05", "Interrupted by the user.", is_error=True)),
    ]
    assert files(work) == before
    out = capsys.readouterr().out.splitlines()
    assert ("[Interrupted.]" in out, SKIPPED_THE_REST in out) == (True, False)


def test_offline_with_plan_the_scripts_enter_plan_mode_is_no_error(s06, tmp_path, keyboard):
    session, work, before = scenario_session(s06, tmp_path, "--plan")
    assert (session.plan_mode, session.notes) == (True, [ENTERED])
    keyboard.feed("1", "y")
    assert s06.run_turn(session, SCENARIO["prompt"]) is True
    assert session.messages[:3] == [
        user(text(SCENARIO["prompt"]), text(ENTERED)),
        assistant(
            text("This changes how greet.py reads its arguments, so I'll plan it first."),
            tool_use("toolu_01", "enter_plan_mode", {}),
        ),
        user(result("toolu_01", ALREADY_ON)),
    ]
    assert assistant_texts(session.messages)[-1] == DONE_WITH_README
    assert files(work)["greet.py"] == GREET_AFTER


def test_plan_off_right_after_plan_drops_the_unsent_instructions(s06, tmp_path, capsys):
    session = plan_session(s06, FakeClient(), tmp_path, mode="accept_edits")
    s06.run_command(session, "/plan off")
    assert (session.plan_mode, session.notes, session.mode) == (False, [], "accept_edits")
    s06.run_command(session, "/plan off")
    assert capsys.readouterr().out == (
        "[Plan mode is off, without a plan; the permission mode is accept_edits again.]\n"
        "plan mode is already off\n"
    )


def test_plan_off_after_a_turn_in_plan_mode_tells_the_model_once(s06, workdir, capsys):
    client = FakeClient(
        reply(text("Reading first.")), reply(text("Writing now.")), reply(text("Ok."))
    )
    session = plan_session(s06, client, workdir)
    s06.run_turn(session, "add a line")
    s06.run_command(session, "/plan off")
    s06.run_command(session, "/plan")
    s06.run_turn(session, "go ahead")
    s06.run_turn(session, "thanks")
    history = [
        user(text("add a line"), text(ENTERED)),
        assistant(text("Reading first.")),
        user(text("go ahead"), text(LEFT)),
        assistant(text("Writing now.")),
        user(text("thanks")),
        assistant(text("Ok.")),
    ]
    assert client.calls == [
        req(s06, session, history[:1], plan=True),
        req(s06, session, history[:3], plan=False),
        req(s06, session, history[:5], plan=False),
    ]
    assert session.messages == history
    assert capsys.readouterr().out.splitlines()[1:3] == [
        "[Plan mode is off, without a plan; the permission mode is default again.]",
        "plan mode: off   (/plan TASK to plan a task, /plan off to leave plan mode)",
    ]


def test_offline_own_words_then_feedback_brings_the_revised_plan_and_the_work(
    s06, tmp_path, keyboard
):
    session, work, before = scenario_session(s06, tmp_path)
    keyboard.feed("only if it stays short", "Also document it in README.md", "y")

    assert s06.run_turn(session, SCENARIO["prompt"]) is True

    texts = assistant_texts(session.messages)
    assert texts[4:6] == [
        "Thanks. (This scripted model cannot follow an answer in your own words, so its plan "
        "keeps to what the request asks: greet.py only.) Here is my plan.",
        ("Thanks. (This scripted model cannot follow feedback in your own words: its one revised "
         "plan adds README.md, whatever you answered before.) Here it is."),
    ]
    assert texts[-1] == DONE_WITH_README
    assert files(work) == {
        **before,
        f".agent/plans/plan-{session.session_id}.md": REVISED_PLAN + "\n",
        "greet.py": GREET_AFTER,
        "README.md": README_AFTER,
    }
    assert (session.plan_mode, session.mode) == (False, "default")
