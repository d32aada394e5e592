"""s01_loop: the loop, the bash tool, stop reasons, API errors, interrupts.

The loop tests run against every chapter in CHAPTERS: the loop does not
change from s01 to s02, so the same exchanges must give the same requests and
the same history. Add a chapter to the list when its loop should behave the same.
"""

import json
import os
import signal
import subprocess
import threading
import time

import anthropic
import httpx2
import pytest

from support import (
    WIRE_KEY,
    FakeClient,
    assistant,
    ctrl_c_delivered,
    load_chapter,
    new_session,
    read_trace,
    reply,
    request,
    result,
    sent_key,
    text,
    tool_use,
    unchecked_reply,
    user,
    wire_client,
)

CHAPTERS = ["s01_loop", "s02_tools"]

INTERRUPTED = "Interrupted by the user."


@pytest.fixture
def s01():
    return load_chapter("s01_loop")


def api_request():
    return httpx2.Request("POST", "http://127.0.0.1:9/v1/messages")


def connection_error():
    return anthropic.APIConnectionError(request=api_request())


def rate_limit_error():
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}}
    return anthropic.RateLimitError(
        "rate limited", response=httpx2.Response(429, request=api_request()), body=body
    )


# ======================================================================
# The loop
# ======================================================================

def test_plain_answer_is_one_call_and_two_turns(chapter, tmp_path, capsys):
    client = FakeClient(reply(text("Hello.")))
    session = new_session(chapter, client, tmp_path)

    assert chapter.run_turn(session, "hi") is True

    assert client.calls == [request(chapter, session, [user(text("hi"))])]
    assert session.messages == [user(text("hi")), assistant(text("Hello."))]
    assert capsys.readouterr().out == "Hello.\n"


def test_one_tool_round_sends_the_result_back_and_ends_on_the_answer(chapter, tmp_path, capsys):
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    client = FakeClient(
        reply(text("Counting."), tool_use("toolu_1", "bash", {"command": "wc -l < a.txt"})),
        reply(text("2 lines.")),
    )
    session = new_session(chapter, client, tmp_path)

    assert chapter.run_turn(session, "count") is True

    first = [user(text("count"))]
    second = first + [
        assistant(text("Counting."), tool_use("toolu_1", "bash", {"command": "wc -l < a.txt"})),
        user(result("toolu_1", "2\n[exit code: 0]")),
    ]
    assert client.calls == [request(chapter, session, first), request(chapter, session, second)]
    assert session.messages == second + [assistant(text("2 lines."))]
    assert capsys.readouterr().out == (
        "Counting.\n"
        "  > bash: wc -l < a.txt\n"
        "    2\n"
        "    [exit code: 0]\n"
        "2 lines.\n"
    )


def test_second_prompt_continues_the_same_history(chapter, tmp_path):
    client = FakeClient(reply(text("Hello.")), reply(text("Still here.")))
    session = new_session(chapter, client, tmp_path)

    chapter.run_turn(session, "hi")
    chapter.run_turn(session, "again")

    history = [user(text("hi")), assistant(text("Hello.")), user(text("again"))]
    assert client.calls[1] == request(chapter, session, history)
    assert session.messages == history + [assistant(text("Still here."))]


def test_several_tool_uses_in_one_turn_are_answered_in_one_user_turn_in_order(chapter, tmp_path):
    calls = [tool_use("toolu_1", "bash", {"command": "echo one"}),
             tool_use("toolu_2", "bash", {"command": "echo two >&2; exit 3"}),
             tool_use("toolu_3", "bash", {"command": "true"})]
    client = FakeClient(reply(text("Three at once."), *calls), reply(text("Done.")))
    session = new_session(chapter, client, tmp_path)

    chapter.run_turn(session, "go")

    # One user turn holds all three results, in the order of the calls; a failing
    # command is not a failed tool call, so only its exit code says it failed.
    history = [
        user(text("go")),
        assistant(text("Three at once."), *calls),
        user(result("toolu_1", "one\n[exit code: 0]"),
             result("toolu_2", "two\n[exit code: 3]"),
             result("toolu_3", "(no output)\n[exit code: 0]")),
    ]
    assert client.calls == [
        request(chapter, session, history[:1]),
        request(chapter, session, history),
    ]
    assert session.messages == history + [assistant(text("Done."))]


def test_bad_tool_inputs_are_errors_the_model_sees_and_nothing_runs(chapter, tmp_path):
    # The SDK does not validate responses, so any of these can arrive from the API.
    calls = [tool_use("toolu_1", "bash", {}),
             tool_use("toolu_2", "bash", {"command": 5}),
             tool_use("toolu_3", "bash", {"command": "touch ran", "cwd": "/"}),
             tool_use("toolu_4", "bash", "touch ran"),
             tool_use("toolu_5", "bash", ["touch", "ran"])]
    client = FakeClient(unchecked_reply(*calls), reply(text("I'll fix my input.")))
    session = new_session(chapter, client, tmp_path)

    chapter.run_turn(session, "go")

    history = [
        user(text("go")),
        assistant(*calls),
        user(
            result("toolu_1", "bash needs the field 'command'.", is_error=True),
            result("toolu_2", "The field 'command' of bash must be of type string.", is_error=True),
            result("toolu_3", "bash has no field 'cwd'. Its fields: command.", is_error=True),
            result("toolu_4", "The input of bash must be a JSON object.", is_error=True),
            result("toolu_5", "The input of bash must be a JSON object.", is_error=True),
        ),
    ]
    assert client.calls == [
        request(chapter, session, history[:1]),
        request(chapter, session, history),
    ]
    assert session.messages == history + [assistant(text("I'll fix my input."))]
    assert sorted(os.listdir(tmp_path)) == []


def test_trace_has_one_line_per_call_with_the_exact_request_and_response(chapter, tmp_path):
    replies = [reply(text("Looking."), tool_use("toolu_1", "bash", {"command": "echo hi"})),
               reply(text("It said hi."))]
    trace = tmp_path / "trace.jsonl"
    session = new_session(chapter, FakeClient(*replies), tmp_path / "work", trace=trace)
    (tmp_path / "work").mkdir()

    chapter.run_turn(session, "say hi")

    first = [user(text("say hi"))]
    second = first + [
        assistant(text("Looking."), tool_use("toolu_1", "bash", {"command": "echo hi"})),
        user(result("toolu_1", "hi\n[exit code: 0]")),
    ]
    assert read_trace(trace) == [
        {"request": request(chapter, session, first), "response": replies[0].to_dict(mode="json")},
        {"request": request(chapter, session, second), "response": replies[1].to_dict(mode="json")},
    ]


# ======================================================================
# Stop reasons
# ======================================================================

def test_max_tokens_keeps_the_partial_text_and_says_it_was_cut(chapter, tmp_path, capsys):
    client = FakeClient(reply(text("The answer is"), stop_reason="max_tokens"))
    session = new_session(chapter, client, tmp_path)

    # The turn did not end normally: a one-shot run exits 1.
    assert chapter.run_turn(session, "long question") is False

    assert client.calls == [request(chapter, session, [user(text("long question"))])]
    assert session.messages == [user(text("long question")), assistant(text("The answer is"))]
    assert (
        capsys.readouterr().out == "The answer is\n[The reply was cut off at max_tokens (8000).]\n"
    )


def test_max_tokens_with_a_tool_use_does_not_run_it_but_still_answers_it(chapter, tmp_path, capsys):
    # The input of a tool call in a cut reply may itself be cut: never run it. The
    # API still needs a tool_result for every tool_use, so it gets an error result.
    call = tool_use("toolu_1", "bash", {"command": "touch ran"})
    client = FakeClient(reply(text("Let me"), call, stop_reason="max_tokens"), reply(text("Fine.")))
    session = new_session(chapter, client, tmp_path)

    chapter.run_turn(session, "go")

    history = [
        user(text("go")),
        assistant(text("Let me"), call),
        user(result("toolu_1", "Not run: the reply stopped with max_tokens.", is_error=True)),
    ]
    assert client.calls == [request(chapter, session, history[:1])]
    assert session.messages == history
    assert sorted(os.listdir(tmp_path)) == []
    assert capsys.readouterr().out == "Let me\n[The reply was cut off at max_tokens (8000).]\n"

    # The next prompt joins that user turn, so roles still alternate.
    chapter.run_turn(session, "try again")
    joined = history[:2] + [user(history[2]["content"][0], text("try again"))]
    assert client.calls[1] == request(chapter, session, joined)
    assert session.messages == joined + [assistant(text("Fine."))]


def test_refusal_with_no_content_takes_the_prompt_back_and_the_next_is_sent_alone(
    chapter, tmp_path, capsys
):
    client = FakeClient(reply(text("Hi.")), reply(stop_reason="refusal"), reply(text("Sure.")))
    session = new_session(chapter, client, tmp_path)
    chapter.run_turn(session, "hi")
    capsys.readouterr()

    assert chapter.run_turn(session, "do something bad") is False

    # The API asks for the refused turn to be taken back: the history is as before the prompt.
    earlier = [user(text("hi")), assistant(text("Hi."))]
    assert session.messages == earlier
    assert capsys.readouterr().out == (
        "[The model declined to continue.]\n"
        "[The prompt was not kept: the conversation is as it was before it.]\n"
    )

    chapter.run_turn(session, "something else then")
    alone = earlier + [user(text("something else then"))]
    assert client.calls[2] == request(chapter, session, alone)
    assert session.messages == alone + [assistant(text("Sure."))]


def test_refusal_with_text_shows_the_text_and_keeps_none_of_the_turn(chapter, tmp_path, capsys):
    call = tool_use("toolu_1", "bash", {"command": "echo ran"})
    client = FakeClient(reply(call), reply(text("I can't help with that."), stop_reason="refusal"))
    session = new_session(chapter, client, tmp_path)

    assert chapter.run_turn(session, "do something bad") is False

    assert session.messages == []
    assert capsys.readouterr().out.splitlines()[-3:] == [
        "I can't help with that.",
        "[The model declined to continue.]",
        "[The prompt was not kept: the conversation is as it was before it; what its tool calls "
        "changed stays changed.]",
    ]


# ======================================================================
# API errors
# ======================================================================

def test_api_error_on_the_first_call_rolls_history_back_to_before_the_prompt(
    chapter, tmp_path, capsys
):
    client = FakeClient(reply(text("Hello.")), connection_error(), reply(text("Back.")))
    session = new_session(chapter, client, tmp_path)
    chapter.run_turn(session, "hi")
    capsys.readouterr()

    assert chapter.run_turn(session, "are you there?") is False

    earlier = [user(text("hi")), assistant(text("Hello."))]
    assert session.messages == earlier
    assert capsys.readouterr().out == (
        "API error: could not reach the API. Check the network, a proxy, or ANTHROPIC_BASE_URL.\n")

    # The prompt was forgotten, so sending it again does not send it twice.
    chapter.run_turn(session, "are you there?")
    assert client.calls[2] == request(chapter, session, earlier + [user(text("are you there?"))])


def test_api_error_after_a_tool_round_keeps_the_history_and_the_next_prompt_joins_it(
    chapter, tmp_path, capsys
):
    call = tool_use("toolu_1", "bash", {"command": "echo hi"})
    client = FakeClient(reply(call), rate_limit_error(), reply(text("Welcome back.")))
    session = new_session(chapter, client, tmp_path)

    assert chapter.run_turn(session, "go") is False

    # The tool ran: its result stays, so the model does not run it again.
    history = [user(text("go")), assistant(call), user(result("toolu_1", "hi\n[exit code: 0]"))]
    assert session.messages == history
    assert capsys.readouterr().out.splitlines()[-1] == (
        "API error: 429 Slow down. Rate limited: wait a moment and try again.")

    chapter.run_turn(session, "continue")
    joined = history[:2] + [user(result("toolu_1", "hi\n[exit code: 0]"), text("continue"))]
    assert client.calls == [
        request(chapter, session, history[:1]),
        request(chapter, session, history),
        request(chapter, session, joined),
    ]
    assert session.messages == joined + [assistant(text("Welcome back."))]


# ======================================================================
# Ctrl-C
# ======================================================================

def test_ctrl_c_inside_a_tool_still_gives_every_tool_use_a_result(
    chapter, tmp_path, monkeypatch, capsys
):
    real_run_bash = chapter.run_bash

    def run_bash(session, command):  # Ctrl-C while the second command runs
        if command == "second":
            raise KeyboardInterrupt
        return real_run_bash(session, command)

    monkeypatch.setattr(chapter, "run_bash", run_bash)
    calls = [tool_use("toolu_1", "bash", {"command": "echo first"}),
             tool_use("toolu_2", "bash", {"command": "second"}),
             tool_use("toolu_3", "bash", {"command": "touch third"})]
    client = FakeClient(reply(*calls), reply(text("OK.")))
    session = new_session(chapter, client, tmp_path)

    assert chapter.run_turn(session, "go") is False

    history = [user(text("go")), assistant(*calls),
               user(result("toolu_1", "first\n[exit code: 0]"),
                    result("toolu_2", INTERRUPTED, is_error=True),
                    result("toolu_3", INTERRUPTED, is_error=True))]
    assert client.calls == [request(chapter, session, history[:1])]
    assert session.messages == history
    assert sorted(os.listdir(tmp_path)) == []  # the third command never ran
    assert capsys.readouterr().out.splitlines()[-1] == "[Interrupted.]"

    chapter.run_turn(session, "never mind")
    joined = history[:2] + [user(*history[2]["content"], text("never mind"))]
    assert client.calls[1] == request(chapter, session, joined)


def test_a_real_sigint_during_a_command_stops_its_whole_process_group(chapter, tmp_path):
    # Once the command runs (it has written `started`), a SIGINT reaches this process, as a
    # Ctrl-C in the terminal would; then the command waits. Coming back well before the sleep
    # ends shows that the command's process group was stopped rather than waited for. The signal
    # goes to the main thread itself: sent to the process, it may land on another thread of the
    # test process (a chapter run alone has no other), which wakes nothing until the sleep ends.
    assert threading.current_thread() is threading.main_thread()
    calls = [tool_use("toolu_1", "bash", {"command": "touch started; sleep 5"}),
             tool_use("toolu_2", "bash", {"command": "touch later"})]
    session = new_session(chapter, FakeClient(reply(*calls)), tmp_path)

    def press_ctrl_c():
        deadline = time.monotonic() + 10
        while not (tmp_path / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.01)  # waits for the file, not for a time
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    started = time.monotonic()
    with ctrl_c_delivered():
        presser = threading.Thread(target=press_ctrl_c)
        presser.start()
        assert chapter.run_turn(session, "go") is False
        presser.join()
    assert time.monotonic() - started < 4

    assert session.messages == [user(text("go")), assistant(*calls),
                                user(result("toolu_1", INTERRUPTED, is_error=True),
                                     result("toolu_2", INTERRUPTED, is_error=True))]
    assert sorted(os.listdir(tmp_path)) == ["started"]


def test_a_sigint_while_popen_starts_the_child_still_stops_it(chapter, tmp_path, monkeypatch):
    # The Ctrl-C lands at the last moment of Popen(), when the child already runs in its own
    # group: the harness must still stop and reap it, not leave it running unreaped.
    started = []

    class SignalledPopen(subprocess.Popen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self.pid)
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(subprocess, "Popen", SignalledPopen)
    calls = [tool_use("toolu_1", "bash", {"command": "sleep 5; touch later"})]
    session = new_session(chapter, FakeClient(reply(*calls)), tmp_path)

    with ctrl_c_delivered():
        assert chapter.run_turn(session, "go") is False

    assert session.messages == [user(text("go")), assistant(*calls),
                                user(result("toolu_1", INTERRUPTED, is_error=True))]
    with pytest.raises(ChildProcessError):  # stopped and reaped: no child of this process now
        os.waitpid(started[0], os.WNOHANG)


def test_a_ctrl_c_that_stopped_the_child_before_the_harness_could_is_still_an_interruption(
        chapter, tmp_path, monkeypatch):
    # The terminal's Ctrl-C can reach the child too, as it starts, before it has a group of its
    # own: by the time the harness stops the group, there is none. (Here the child is stopped and
    # reaped inside Popen(), then the Ctrl-C comes.) It is still [Interrupted.], not a tool error.
    class StoppedPopen(subprocess.Popen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.kill()
            self.wait()
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(subprocess, "Popen", StoppedPopen)
    calls = [tool_use("toolu_1", "bash", {"command": "sleep 5"})]
    session = new_session(chapter, FakeClient(reply(*calls)), tmp_path)

    with ctrl_c_delivered():
        assert chapter.run_turn(session, "go") is False

    assert session.messages == [user(text("go")), assistant(*calls),
                                user(result("toolu_1", INTERRUPTED, is_error=True))]


def test_ctrl_c_during_the_first_model_call_rolls_back(chapter, tmp_path, capsys):
    client = FakeClient(KeyboardInterrupt())
    session = new_session(chapter, client, tmp_path)

    assert chapter.run_turn(session, "hi") is False

    assert client.calls == [request(chapter, session, [user(text("hi"))])]
    assert session.messages == []
    assert capsys.readouterr().out == "[Interrupted.]\n"


def test_ctrl_c_during_a_later_model_call_keeps_the_tool_results(chapter, tmp_path):
    call = tool_use("toolu_1", "bash", {"command": "echo hi"})
    client = FakeClient(reply(call), KeyboardInterrupt(), reply(text("Yes?")))
    session = new_session(chapter, client, tmp_path)

    assert chapter.run_turn(session, "go") is False

    history = [user(text("go")), assistant(call), user(result("toolu_1", "hi\n[exit code: 0]"))]
    assert session.messages == history

    chapter.run_turn(session, "stop")
    joined = history[:2] + [user(result("toolu_1", "hi\n[exit code: 0]"), text("stop"))]
    assert client.calls[2] == request(chapter, session, joined)
    assert session.messages == joined + [assistant(text("Yes?"))]


# ======================================================================
# Through the real SDK (a fake transport: no network)
# ======================================================================

def message_json(*blocks, stop_reason):
    return {"id": "msg_wire", "type": "message", "role": "assistant", "model": "test-model",
            "content": list(blocks), "stop_reason": stop_reason, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5}}


def test_wire_bodies_are_exactly_the_history_and_the_key_stays_out_of_the_trace(chapter, tmp_path):
    sent = []
    answers = [
        message_json(
            text("Looking."),
            tool_use("toolu_w1", "bash", {"command": "echo wired"}),
            stop_reason="tool_use",
        ),
        message_json(text("It printed wired."), stop_reason="end_turn"),
    ]

    def handler(http_request):
        sent.append(http_request)
        return httpx2.Response(200, json=answers[len(sent) - 1])

    trace = tmp_path / "trace.jsonl"
    (tmp_path / "work").mkdir()
    session = new_session(chapter, wire_client(handler), tmp_path / "work", trace=trace)

    assert chapter.run_turn(session, "echo something") is True

    first = [user(text("echo something"))]
    second = first + [
        assistant(text("Looking."), tool_use("toolu_w1", "bash", {"command": "echo wired"})),
        user(result("toolu_w1", "wired\n[exit code: 0]")),
    ]
    assert [(r.method, r.url.path) for r in sent] == [("POST", "/v1/messages")] * 2
    assert [json.loads(r.content) for r in sent] == [request(chapter, session, first),
                                                     request(chapter, session, second)]
    assert session.messages == second + [assistant(text("It printed wired."))]
    assert [sent_key(r) for r in sent] == [WIRE_KEY, WIRE_KEY]
    assert trace.read_text().count(WIRE_KEY) == 0
    assert [call["request"] for call in read_trace(trace)] == [request(chapter, session, first),
                                                              request(chapter, session, second)]


def test_wire_529_overloaded_prints_one_line_and_keeps_a_valid_history(chapter, tmp_path, capsys):
    def handler(http_request):
        return httpx2.Response(
            529,
            json={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        )

    session = new_session(chapter, wire_client(handler), tmp_path)

    assert chapter.run_turn(session, "hi") is False

    assert (
        capsys.readouterr().out
        == "API error: 529 Overloaded. The API is overloaded: try again in a moment.\n"
    )
    assert session.messages == []


# ======================================================================
# s01's own: the bash tool
# ======================================================================

def run_bash_call(chapter, workdir, tool_input, id="toolu_1"):
    session = new_session(chapter, FakeClient(), workdir)
    return chapter.run_tool(session, tool_use(id, "bash", tool_input))


def test_unknown_tool_is_an_error_naming_the_only_tool(s01, tmp_path):
    call = tool_use("toolu_1", "python", {"code": "print(1)"})
    client = FakeClient(reply(call), reply(text("I'll use bash.")))
    session = new_session(s01, client, tmp_path)

    s01.run_turn(session, "go")

    history = [
        user(text("go")),
        assistant(call),
        user(
            result(
                "toolu_1", "There is no tool named 'python'. The only tool is bash.", is_error=True
            )
        ),
    ]
    assert client.calls == [request(s01, session, history[:1]), request(s01, session, history)]
    assert session.messages == history + [assistant(text("I'll use bash."))]


@pytest.fixture
def no_process(monkeypatch):
    """Make sure no command can start: these tests hand the guard real disasters."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"a command was started: {args!r}")

    monkeypatch.setattr("subprocess.Popen", refuse)


@pytest.mark.parametrize("command, reason", [
    ("rm -rf /", "deletes the root or home folder"),
    ("sudo rm -r -f /", "deletes the root or home folder"),
    ("rm -rf /*", "deletes the root or home folder"),
    ("rm -rf ~", "deletes the root or home folder"),
    ("cd /tmp && rm -fr $HOME", "deletes the root or home folder"),
    ("mkfs.ext4 /dev/sda1", "formats a disk"),
    ("dd if=/dev/zero of=/dev/sda bs=1M", "overwrites a device"),
    ("cat image > /dev/nvme0n1", "overwrites a device"),
    (":(){ :|:& };:", "is a fork bomb"),
    ("sudo shutdown -h now", "stops the machine"),
    ("reboot", "stops the machine"),
    ("chmod -R 777 /", "opens up the whole file system"),
    ("cd /tmp; /sbin/reboot", "stops the machine"),
    ("true && systemctl poweroff", "stops the machine"),
    ("echo $(halt)", "stops the machine"),
])
def test_catastrophic_commands_are_refused_without_running(
    s01, tmp_path, no_process, command, reason
):
    assert run_bash_call(s01, tmp_path, {"command": command}) == result(
        "toolu_1", f"Refused: this command {reason}.", is_error=True)


@pytest.mark.parametrize("command", [
    "rm -rf build/", "rm -rf /tmp/scratch", "rm -rf ~/project/build", "chmod 777 run.sh",
    "dd if=disk.img of=copy.img", "echo '/dev/sda' > devices.txt",
    # the program run is judged, not a word anywhere
    "grep -n reboot notes.md", "git log --grep=shutdown", "man halt", "echo shutdown",
    "echo 'rm -rf /'", "grep mkfs notes.md",
])
def test_ordinary_commands_that_look_similar_are_not_refused(s01, command):
    assert s01.catastrophic_reason(command) is None


@pytest.mark.parametrize("command", ["rm -rf --no-preserve-root /", "rm -rf ~/"])
def test_rm_of_root_with_long_options_or_home_with_a_slash_is_refused(s01, command):
    assert s01.catastrophic_reason(command) == "deletes the root or home folder"


def test_output_over_the_limit_is_cut_with_a_note(s01, tmp_path):
    command = "head -c 10050 /dev/zero | tr '\\0' x"
    assert run_bash_call(s01, tmp_path, {"command": command}) == result(
        "toolu_1", "x" * 10_000 + "\n[output cut: 50 more bytes]\n[exit code: 0]")


def test_output_at_the_limit_is_kept_whole(s01, tmp_path):
    command = "head -c 10000 /dev/zero | tr '\\0' x"
    assert run_bash_call(s01, tmp_path, {"command": command}) == result(
        "toolu_1", "x" * 10_000 + "\n[exit code: 0]")


def test_a_command_that_runs_too_long_is_stopped_at_the_timeout(s01, tmp_path, monkeypatch):
    monkeypatch.setattr(s01, "BASH_TIMEOUT", 0.5)

    started = time.monotonic()
    outcome = run_bash_call(s01, tmp_path, {"command": "sleep 5"})

    assert outcome == result("toolu_1", "The command timed out after 0.5 seconds and was stopped.",
                             is_error=True)
    assert time.monotonic() - started < 4  # stopped, not waited for


def test_commands_run_in_the_workdir_with_no_stdin(s01, tmp_path):
    assert run_bash_call(s01, tmp_path, {"command": "pwd; cat; echo end"}) == result(
        "toolu_1", f"{tmp_path.resolve()}\nend\n[exit code: 0]")


def test_keys_never_reach_the_command(s01, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api-secret-0001")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "sk-ant-token-secret-0002")
    monkeypatch.setenv("COURSE_VISIBLE", "plain value")

    outcome = run_bash_call(s01, tmp_path, {"command": "env"})

    assert "sk-ant-" not in outcome["content"]
    # The rest of the environment does get through.
    shown = [
        line
        for line in outcome["content"].splitlines()
        if line.startswith(("ANTHROPIC_", "COURSE_"))
    ]
    assert shown == ["COURSE_VISIBLE=plain value"]


# ======================================================================
# The scripted model: replaying a trace
# ======================================================================

def test_a_trace_loads_as_a_script_that_replays_the_recorded_responses(chapter, tmp_path):
    replies = [reply(text("Looking."), tool_use("toolu_9", "bash", {"command": "echo hi"})),
               reply(text("It said hi."))]
    trace = tmp_path / "trace.jsonl"
    session = new_session(chapter, FakeClient(*replies), tmp_path, trace=trace)
    chapter.run_turn(session, "say hi")

    script = chapter.load_script(trace)

    assert script == {"prompt": "say hi", "turns": [{"response": replies[0].to_dict(mode="json")},
                                                     {"response": replies[1].to_dict(mode="json")}]}
    replay = chapter.ScriptedModel(script)
    asked = [user(text("say hi"))]  # the recorded prompt: the replay plays
    assert [replay.messages.create(model="any", messages=asked) for _ in replies] == replies


def test_a_trace_of_a_single_call_can_be_replayed(chapter, tmp_path):
    answer = reply(text("Hello."))
    trace = tmp_path / "trace.jsonl"
    session = new_session(chapter, FakeClient(answer), tmp_path, trace=trace)
    chapter.run_turn(session, "hi")

    assert chapter.load_script(trace) == {
        "prompt": "hi",
        "turns": [{"response": answer.to_dict(mode="json")}],
    }
