"""s01_loop: the loop, the bash tool, stop reasons, API errors, interrupts."""

import pytest

from support import (FakeClient, assistant, load_chapter, new_session, reply, request, result, text,
                     tool_use, user)


@pytest.fixture
def s01():
    return load_chapter("s01_loop")


def test_plain_answer(s01, tmp_path):
    client = FakeClient(reply(text("Hello.")))
    session = new_session(s01, client, tmp_path)

    assert s01.run_turn(session, "hi") is True

    history = [user(text("hi")), assistant(text("Hello."))]
    assert client.calls == [request(s01, session, [user(text("hi"))])]
    assert session.messages == history


def test_one_tool_round(s01, tmp_path):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    client = FakeClient(
        reply(text("Counting."), tool_use("toolu_1", "bash", {"command": "wc -l < a.txt"})),
        reply(text("2 lines.")),
    )
    session = new_session(s01, client, tmp_path)

    s01.run_turn(session, "count")

    first = [user(text("count"))]
    second = first + [
        assistant(text("Counting."), tool_use("toolu_1", "bash", {"command": "wc -l < a.txt"})),
        user(result("toolu_1", "2\n[exit code: 0]")),
    ]
    assert client.calls == [request(s01, session, first), request(s01, session, second)]
    assert session.messages == second + [assistant(text("2 lines."))]
