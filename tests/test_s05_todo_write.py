"""s05_todo_write: the todo_write tool, its validation, the reminder, /todos."""

import copy
import json
import re
import shutil

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

REMINDER = {"type": "text", "text": "<reminder>Update your todos.</reminder>"}
OLD = [
    {"content": "Old item", "status": "pending"}
]  # the list a failed todo_write must leave alone
NOT_A_LIST = "todos must be a list of items; this string is not a JSON array."


@pytest.fixture
def s05():
    return load_chapter("s05_todo_write")


def read(id):
    return tool_use(id, "read_file", {"path": "a.txt"})


def read_result(id):
    return result(id, "     1\thello")


def todo(id, todos):
    return tool_use(id, "todo_write", {"todos": todos})


def calls_for(chapter, session, history):
    """The requests of a turn whose history only grew: each call saw everything before the reply it
    got."""
    return [
        request(chapter, session, history[:i])
        for i, message in enumerate(history)
        if message["role"] == "assistant"
    ]


GOOD = [{"content": "Read a.txt", "status": "in_progress", "activeForm": "Reading a.txt"},
        {"content": "Report", "status": "pending"}]
GOOD_RENDERED = "[>] Reading a.txt\n[ ] Report\n(0/2 completed)"
TWO_BUSY = [
    {"content": "Read a.txt", "status": "in_progress"},
    {"content": "Report", "status": "in_progress"},
]
TWO_BUSY_ERROR = "Items 1, 2 are all in_progress; at most one item may be in progress."


# ---- the reminder ---------------------------------------------------------------

def three_rounds_then_done():
    """Three rounds of reading, then an answer: the reminder ends the third round's user turn."""
    return [
        user(text("look")),
        assistant(read("t1")), user(read_result("t1")),
        assistant(read("t2")), user(read_result("t2")),
        assistant(read("t3")), user(read_result("t3"), REMINDER),
        assistant(text("Done.")),
    ]


def test_the_reminder_ends_the_third_rounds_user_turn(s05, workdir, keyboard):
    client = FakeClient(
        reply(read("t1")), reply(read("t2")), reply(read("t3")), reply(text("Done."))
    )
    session = new_session(s05, client, workdir)

    assert s05.run_turn(session, "look") is True

    history = three_rounds_then_done()
    assert client.calls == calls_for(s05, session, history)
    assert session.messages == history
    assert session.rounds_since_todo == 0
    assert keyboard.asked == []


def test_a_todo_write_that_passes_moves_the_reminder(s05, workdir, keyboard):
    client = FakeClient(
        reply(read("t1")),
        reply(todo("t2", GOOD)),
        reply(read("t3")),
        reply(read("t4")),
        reply(read("t5")),
        reply(text("Done.")),
    )
    session = new_session(s05, client, workdir)

    s05.run_turn(session, "look")

    history = [
        user(text("look")),
        assistant(read("t1")), user(read_result("t1")),
        assistant(todo("t2", GOOD)), user(result("t2", GOOD_RENDERED)),
        assistant(read("t3")), user(read_result("t3")),
        assistant(read("t4")), user(read_result("t4")),
        assistant(read("t5")), user(read_result("t5"), REMINDER),
        assistant(text("Done.")),
    ]
    assert client.calls == calls_for(s05, session, history)
    assert session.messages == history
    assert session.todos == GOOD


def test_a_failed_todo_write_does_not_reset_the_count(s05, workdir, keyboard):
    client = FakeClient(
        reply(read("t1")), reply(todo("t2", TWO_BUSY)), reply(read("t3")), reply(text("Done."))
    )
    session = new_session(s05, client, workdir)
    session.todos = copy.deepcopy(OLD)

    s05.run_turn(session, "look")

    history = [
        user(text("look")),
        assistant(read("t1")), user(read_result("t1")),
        assistant(todo("t2", TWO_BUSY)), user(result("t2", TWO_BUSY_ERROR, is_error=True)),
        assistant(read("t3")), user(read_result("t3"), REMINDER),
        assistant(text("Done.")),
    ]
    assert client.calls == calls_for(s05, session, history)
    assert session.messages == history
    assert session.todos == OLD


def test_the_reminder_fires_again_three_rounds_later(s05, workdir, keyboard):
    client = FakeClient(*[reply(read(f"t{n}")) for n in range(1, 8)], reply(text("Done.")))
    session = new_session(s05, client, workdir)

    s05.run_turn(session, "look")

    history = [user(text("look"))]
    for n in range(1, 8):
        history += [
            assistant(read(f"t{n}")),
            user(read_result(f"t{n}"), *([REMINDER] if n in (3, 6) else [])),
        ]
    history.append(assistant(text("Done.")))
    assert client.calls == calls_for(s05, session, history)
    assert session.messages == history
    assert session.rounds_since_todo == 1


def test_parallel_tool_uses_are_one_round(s05, workdir, keyboard):
    client = FakeClient(
        reply(read("t1"), read("t2"), read("t3")),
        reply(read("t4")),
        reply(read("t5"), read("t6")),
        reply(text("Done.")),
    )
    session = new_session(s05, client, workdir)

    s05.run_turn(session, "look")

    history = [
        user(text("look")),
        assistant(read("t1"), read("t2"), read("t3")),
        user(read_result("t1"), read_result("t2"), read_result("t3")),
        assistant(read("t4")),
        user(read_result("t4")),
        assistant(read("t5"), read("t6")),
        user(read_result("t5"), read_result("t6"), REMINDER),
        assistant(text("Done.")),
    ]
    assert client.calls == calls_for(s05, session, history)
    assert session.messages == history


def test_a_todo_write_beside_other_calls_resets_the_count(s05, workdir, keyboard):
    client = FakeClient(
        reply(read("t1")),
        reply(read("t2")),
        reply(read("t3"), todo("t4", GOOD)),
        reply(read("t5")),
        reply(read("t6")),
        reply(read("t7")),
        reply(text("Done.")),
    )
    session = new_session(s05, client, workdir)

    s05.run_turn(session, "look")

    history = [
        user(text("look")),
        assistant(read("t1")),
        user(read_result("t1")),
        assistant(read("t2")),
        user(read_result("t2")),
        assistant(read("t3"), todo("t4", GOOD)),
        user(read_result("t3"), result("t4", GOOD_RENDERED)),
        assistant(read("t5")),
        user(read_result("t5")),
        assistant(read("t6")),
        user(read_result("t6")),
        assistant(read("t7")),
        user(read_result("t7"), REMINDER),
        assistant(text("Done.")),
    ]
    assert client.calls == calls_for(s05, session, history)
    assert session.messages == history


def test_the_count_carries_across_prompts(s05, workdir, keyboard):
    client = FakeClient(reply(read("t1")), reply(read("t2")), reply(text("First.")),
                        reply(read("t3")), reply(text("Second.")))
    session = new_session(s05, client, workdir)

    s05.run_turn(session, "one")
    assert session.rounds_since_todo == 2
    s05.run_turn(session, "two")

    history = [
        user(text("one")),
        assistant(read("t1")), user(read_result("t1")),
        assistant(read("t2")), user(read_result("t2")),
        assistant(text("First.")),
        user(text("two")),
        assistant(read("t3")), user(read_result("t3"), REMINDER),
        assistant(text("Second.")),
    ]
    assert client.calls == calls_for(s05, session, history)
    assert session.messages == history
    assert session.rounds_since_todo == 0


# ---- validation -----------------------------------------------------------------

def items(count):
    return [{"content": f"Item {n}", "status": "pending"} for n in range(1, count + 1)]


VALID = [
    pytest.param([], [], "(0/0 completed)", id="empty-list-clears"),
    pytest.param(
        items(20),
        items(20),
        "\n".join(f"[ ] Item {n}" for n in range(1, 21)) + "\n(0/20 completed)",
        id="twenty-items",
    ),
    pytest.param(
        [{"content": "  Run the tests \n", "status": "completed"}],
        [{"content": "Run the tests", "status": "completed"}],
        "[x] Run the tests\n(1/1 completed)",
        id="content-trimmed",
    ),
    pytest.param(
        [{"content": "Write", "status": "pending", "activeForm": "Writing"}],
        [{"content": "Write", "status": "pending", "activeForm": "Writing"}],
        "[ ] Write\n(0/1 completed)",
        id="activeForm-on-pending",
    ),
    pytest.param(
        [{"content": "Write", "status": "in_progress"}, {"content": "Test", "status": "pending"}],
        [{"content": "Write", "status": "in_progress"}, {"content": "Test", "status": "pending"}],
        "[>] Write\n[ ] Test\n(0/2 completed)",
        id="one-in-progress-no-activeForm",
    ),
    pytest.param(
        '[{"content": "Write", "status": "in_progress", "activeForm": "Writing"}]',
        [{"content": "Write", "status": "in_progress", "activeForm": "Writing"}],
        "[>] Writing\n(0/1 completed)",
        id="json-array-string",
    ),
    pytest.param(
        "[{'content': 'Write', 'status': 'completed'}, {'content': 'Test', 'status': 'pending'}]",
        [{"content": "Write", "status": "completed"}, {"content": "Test", "status": "pending"}],
        "[x] Write\n[ ] Test\n(1/2 completed)",
        id="python-literal-string",
    ),
]

INVALID = [
    pytest.param(items(21), "A todo list holds at most 20 items; this one has 21.", id="21-items"),
    pytest.param(
        ["Write"], "Item 1 must be an object with content and status.", id="item-a-string"
    ),
    pytest.param(
        [{"content": "Write", "status": "pending"}, ["Test", "pending"]],
        "Item 2 must be an object with content and status.",
        id="item-2-a-list",
    ),
    pytest.param([{"status": "pending"}], "Item 1 needs a non-empty content.", id="no-content"),
    pytest.param(
        [{"content": " \n ", "status": "pending"}],
        "Item 1 needs a non-empty content.",
        id="blank-content",
    ),
    pytest.param(
        [{"content": 7, "status": "pending"}],
        "Item 1 needs a non-empty content.",
        id="content-a-number",
    ),
    pytest.param(
        [{"content": "Write", "status": "done"}],
        "Item 1 has status 'done'; the statuses are pending, in_progress, completed.",
        id="unknown-status",
    ),
    pytest.param(
        [{"content": "Write"}],
        "Item 1 has status None; the statuses are pending, in_progress, completed.",
        id="no-status",
    ),
    pytest.param(
        [{"content": "Write", "status": "pending", "priority": "high"}],
        "Item 1 has an unknown field 'priority'; the fields are content, status, activeForm.",
        id="unknown-field",
    ),
    pytest.param(
        [{"content": "Write", "status": "in_progress", "activeForm": ""}],
        "Item 1 has an activeForm that is not a non-empty string.",
        id="empty-activeForm",
    ),
    pytest.param(
        [{"content": "Write", "status": "in_progress", "activeForm": "   "}],
        "Item 1 has an activeForm that is not a non-empty string.",
        id="blank-activeForm",
    ),
    pytest.param(
        [{"content": "Write", "status": "in_progress", "activeForm": 3}],
        "Item 1 has an activeForm that is not a non-empty string.",
        id="activeForm-a-number",
    ),
    pytest.param(
        [
            {"content": "A", "status": "in_progress"},
            {"content": "B", "status": "pending"},
            {"content": "C", "status": "in_progress"},
        ],
        "Items 1, 3 are all in_progress; at most one item may be in progress.",
        id="two-in-progress",
    ),
    pytest.param(
        {"content": "Write", "status": "pending"}, "todos must be a list of items.", id="an-object"
    ),
    pytest.param(5, "todos must be a list of items.", id="a-number"),
    pytest.param("write the tests, then run them", NOT_A_LIST, id="garbage-string"),
    pytest.param('{"content": "Write", "status": "pending"}', NOT_A_LIST, id="json-object-string"),
    pytest.param("[{'content': 'Write', 'status': 'pending'", NOT_A_LIST, id="cut-off-literal"),
]


@pytest.mark.parametrize("todos, stored, rendered", VALID)
def test_validate_todos_accepts(s05, todos, stored, rendered):
    given = copy.deepcopy(todos)
    assert s05.validate_todos(todos) == stored
    assert todos == given  # the input is not changed
    assert s05.render_todos(stored) == rendered


@pytest.mark.parametrize("todos, error", INVALID)
def test_validate_todos_refuses(s05, todos, error):
    with pytest.raises(s05.ToolError) as caught:
        s05.validate_todos(todos)
    assert str(caught.value) == error


@pytest.mark.parametrize("todos, stored, rendered", VALID)
def test_a_valid_list_replaces_the_old_one(s05, tmp_path, keyboard, todos, stored, rendered):
    client = FakeClient(reply(todo("t1", todos)), reply(text("Listed.")))
    session = new_session(s05, client, tmp_path)
    session.todos = copy.deepcopy(OLD)
    session.rounds_since_todo = 2

    s05.run_turn(session, "plan")

    history = [
        user(text("plan")),
        assistant(todo("t1", todos)),
        user(result("t1", rendered)),
        assistant(text("Listed.")),
    ]
    assert client.calls == calls_for(s05, session, history)
    assert session.messages == history
    assert session.todos == stored
    assert session.rounds_since_todo == 0


@pytest.mark.parametrize("todos, error", INVALID)
def test_an_invalid_list_keeps_the_old_one(s05, tmp_path, keyboard, todos, error):
    client = FakeClient(reply(todo("t1", todos)), reply(text("Hm.")))
    session = new_session(s05, client, tmp_path)
    session.todos = copy.deepcopy(OLD)

    s05.run_turn(session, "plan")

    history = [
        user(text("plan")),
        assistant(todo("t1", todos)),
        user(result("t1", error, is_error=True)),
        assistant(text("Hm.")),
    ]
    assert client.calls == calls_for(s05, session, history)
    assert session.messages == history
    assert session.todos == OLD
    assert session.rounds_since_todo == 1


HARMFUL = [
    pytest.param("__import__('os').system('touch {path}')", id="a-call"),
    pytest.param("[__import__('os').system('touch {path}')]", id="a-list-with-a-call"),
    pytest.param(
        "[{{'content': __import__('os').system('touch {path}'), 'status': 'pending'}}]",
        id="an-item-with-a-call",
    ),
]


@pytest.mark.parametrize("template", HARMFUL)
def test_a_string_that_would_run_code_runs_nothing(s05, tmp_path, keyboard, monkeypatch, template):
    monkeypatch.chdir(tmp_path)
    control, target = tmp_path / "CONTROL", tmp_path / "PWNED"
    eval(template.format(path=control))  # the payload is real: evaluated, it creates its file
    assert control.exists()
    payload = template.format(path=target)
    client = FakeClient(reply(todo("t1", payload)), reply(text("Hm.")))
    session = new_session(s05, client, tmp_path)
    session.todos = copy.deepcopy(OLD)

    s05.run_turn(session, "plan")

    assert not target.exists()
    assert session.messages == [
        user(text("plan")),
        assistant(todo("t1", payload)),
        user(result("t1", NOT_A_LIST, is_error=True)),
        assistant(text("Hm.")),
    ]
    assert session.todos == OLD
    with pytest.raises(s05.ToolError) as caught:
        s05.validate_todos(payload)
    assert str(caught.value) == NOT_A_LIST
    assert not target.exists()


def test_todo_write_needs_its_field(s05, tmp_path, keyboard):
    client = FakeClient(reply(tool_use("t1", "todo_write", {"list": []})), reply(text("Hm.")))
    session = new_session(s05, client, tmp_path)
    session.todos = copy.deepcopy(OLD)

    s05.run_turn(session, "plan")

    assert session.messages[2] == user(
        result("t1", "todo_write needs the field 'todos'.", is_error=True)
    )
    assert session.todos == OLD


# ---- rendering and /todos ------------------------------------------------------------

MIXED = [
    {"content": "Plan", "status": "completed", "activeForm": "Planning"},
    {"content": "Build", "status": "in_progress", "activeForm": "Building"},
    {"content": "Test", "status": "pending", "activeForm": "Testing"},
    {"content": "Ship", "status": "pending"},
]


@pytest.mark.parametrize(
    "todos, rendered",
    [
        pytest.param(
            MIXED, "[x] Plan\n[>] Building\n[ ] Test\n[ ] Ship\n(1/4 completed)", id="mixed"
        ),
        pytest.param(
            [
                {"content": "Build", "status": "in_progress"},
                {"content": "Plan", "status": "completed"},
            ],
            "[>] Build\n[x] Plan\n(1/2 completed)",
            id="in-progress-without-activeForm",
        ),
        pytest.param(
            [{"content": "A", "status": "completed"}, {"content": "B", "status": "completed"}],
            "[x] A\n[x] B\n(2/2 completed)",
            id="all-done",
        ),
        pytest.param([], "(0/0 completed)", id="empty"),
    ],
)
def test_render_todos(s05, todos, rendered):
    assert s05.render_todos(todos) == rendered


def test_slash_todos_prints_the_current_list(s05, tmp_path, keyboard, capsys):
    client = FakeClient(reply(todo("t1", MIXED)), reply(text("Listed.")))
    session = new_session(s05, client, tmp_path)

    s05.run_command(session, "/todos")
    assert capsys.readouterr().out == (
        "(the todo list is empty: the model has not written one in this conversation)\n"
    )

    s05.run_turn(session, "plan")
    capsys.readouterr()
    s05.run_command(session, "/todos")
    assert (
        capsys.readouterr().out == "[x] Plan\n[>] Building\n[ ] Test\n[ ] Ship\n(1/4 completed)\n"
    )


def test_todo_write_runs_without_asking_in_default_mode(s05, tmp_path, keyboard):
    client = FakeClient(
        reply(todo("t1", GOOD)),
        reply(tool_use("t2", "write_file", {"path": "b.txt", "content": "b"})),
        reply(text("Stopped.")),
    )
    session = new_session(s05, client, tmp_path)
    keyboard.feed("n")
    assert session.mode == "default"

    s05.run_turn(session, "plan")

    # Only the write asked; todo_write did not.
    assert keyboard.asked == ["    [y] yes  [a] always (saved to .agent/settings.json)  [n] no: "]
    denied = (
        "The user denied this call. Do not try it again as it is; ask the user, "
        "or find another way."
    )
    assert session.messages == [
        user(text("plan")),
        assistant(todo("t1", GOOD)),
        user(result("t1", GOOD_RENDERED)),
        assistant(tool_use("t2", "write_file", {"path": "b.txt", "content": "b"})),
        user(result("t2", denied, is_error=True)),
        assistant(text("Stopped.")),
    ]
    assert session.todos == GOOD
    assert sorted(path.name for path in tmp_path.iterdir()) == []


def test_todo_write_is_offered_to_the_model(s05):
    assert [tool["name"] for tool in s05.TOOLS] == [
        "bash",
        "read_file",
        "write_file",
        "edit_file",
        "glob",
        "todo_write",
    ]
    assert s05.TOOLS[-1]["input_schema"]["required"] == ["todos"]
    assert s05.TOOLS[-1]["input_schema"]["properties"]["todos"]["items"]["properties"]["status"][
        "enum"
    ] == ["pending", "in_progress", "completed"]


# ---- through the real SDK ------------------------------------------------------------

def test_the_reminder_on_the_wire(s05, workdir, keyboard):
    bodies, client = wire(
        [reply(read("t1")), reply(read("t2")), reply(read("t3")), reply(text("Done."))]
    )
    session = new_session(s05, client, workdir)

    assert s05.run_turn(session, "look") is True

    history = three_rounds_then_done()
    assert bodies[3] == {
        "model": "test-model",
        "max_tokens": s05.MAX_TOKENS,
        "system": s05.system_prompt(workdir),
        "tools": s05.TOOLS,
        "messages": history[:7],
    }
    assert bodies[3]["messages"][-1]["content"][-1] == {
        "type": "text",
        "text": "<reminder>Update your todos.</reminder>",
    }
    assert bodies == calls_for(s05, session, history)
    assert session.messages == history


# ---- done when: the scenario, offline, as a learner runs it ---------------------------------

@pytest.mark.slow
def test_offline_scenario_the_list_evolves_and_the_reminder_fires_once(tmp_path):
    work, trace = tmp_path / "work", tmp_path / "trace.jsonl"
    shutil.copytree(ROOT / "s05_todo_write" / "workspace", work)
    prompt = json.loads((ROOT / "s05_todo_write" / "scenario.json").read_text())["prompt"]

    done = run_chapter(
        "s05_todo_write", "--offline", "--workdir", str(work), "--trace", str(trace), prompt
    )

    assert (done.returncode, done.stderr) == (0, "")
    calls = read_trace(trace)
    assert len(calls) == 9
    # The reminder: once, at the end of the user turn after the third round without an update.
    with_reminder = [number for number, call in enumerate(calls)
                     if REMINDER in call["request"]["messages"][-1]["content"]]
    assert with_reminder == [7]
    everything = calls[-1]["request"]["messages"]
    assert [
        number for number, message in enumerate(everything) if REMINDER in message["content"]
    ] == [14]
    assert everything[14]["content"][-1] == REMINDER
    # Every tool result, in order (the test run's timing made steady).
    results = [
        (
            block["tool_use_id"],
            re.sub(r"in \d+\.\d+s", "in Ns", block["content"]),
            block.get("is_error", False),
        )
        for message in everything
        if message["role"] == "user"
        for block in message["content"]
        if block["type"] == "tool_result"
    ]
    assert results == [
        (
            "toolu_01",
            "[>] Renaming count() in shop.py\n[ ] Update test_shop.py\n[ ] Update README.md\n"
            "[ ] Run the tests\n(0/4 completed)",
            False,
        ),
        ("toolu_02", "Replaced 1 occurrence in shop.py.", False),
        ("toolu_03", "Items 1, 2 are all in_progress; at most one item may be in progress.", True),
        (
            "toolu_04",
            "[x] Rename count() in shop.py\n[>] Updating test_shop.py\n[ ] Update README.md\n"
            "[ ] Run the tests\n(1/4 completed)",
            False,
        ),
        ("toolu_05", "Replaced 3 occurrences in test_shop.py.", False),
        ("toolu_06", "Replaced 1 occurrence in README.md.", False),
        (
            "toolu_07",
            "----------------------------------------------------------------------\n"
            "Ran 1 test in Ns\n\nOK\n[exit code: 0]",
            False,
        ),
        (
            "toolu_08",
            "[x] Rename count() in shop.py\n[x] Update test_shop.py\n[x] Update README.md\n"
            "[x] Run the tests\n(4/4 completed)",
            False,
        ),
    ]
    # The list as the learner sees it evolve.
    shown = [
        line.strip()
        for line in done.stdout.splitlines()
        if re.fullmatch(
            r"\s+(\[[ >x]\] .*|\(\d+/\d+ completed\)|error: Items .*|<reminder>.*)", line
        )
    ]
    assert shown == [
        "[>] Renaming count() in shop.py",
        "[ ] Update test_shop.py",
        "[ ] Update README.md",
        "[ ] Run the tests",
        "(0/4 completed)",
        "error: Items 1, 2 are all in_progress; at most one item may be in progress.",
        "[x] Rename count() in shop.py",
        "[>] Updating test_shop.py",
        "[ ] Update README.md",
        "[ ] Run the tests",
        "(1/4 completed)",
        "<reminder>Update your todos.</reminder>",
        "[x] Rename count() in shop.py",
        "[x] Update test_shop.py",
        "[x] Update README.md",
        "[x] Run the tests",
        "(4/4 completed)",
    ]
    assert (work / "shop.py").read_text().startswith("def total(items):\n")
