"""No input ends the session, in every chapter that holds the code.

1. A tool input nested more than 32 levels deep (born in s01): an is_error result, and the
   history and the trace keep its input as {}, so the next request, the next prompt's copy of
   the history and every trace line still work.
2. A script (s01) or a settings file (s03) that cannot be read: too deep, not UTF-8, a folder,
   a named pipe: one line, and exit 2.
3. read_file, write_file and edit_file act on regular files only (s02): a named pipe or a
   socket is an is_error result at once. Opening a FIFO waits for a writer forever, so each
   such test runs the call in a thread and fails, instead of hanging, if it does not return.
"""

import functools
import io
import json
import os
import socket
import subprocess
import sys
import threading

import pytest

import support
from support import (
    FakeClient,
    assistant,
    load_chapter,
    new_session,
    read_trace,
    reply,
    result,
    run_chapter,
    text,
    tool_use,
    user,
)

FILE_CHAPTERS = [name for name in support.PRESENT if name >= "s02"]
SETTINGS_CHAPTERS = [name for name in support.PRESENT if name >= "s03"]

DEEP = ("The input of bash nests lists and objects more than 32 levels deep, which no tool "
        "takes. The call did not run; the history keeps its input as {}.")
NOT_REGULAR = ("{} is not a regular file (a named pipe, a socket or a device). "
               "read_file, write_file and edit_file act on regular files only.")


def nested(levels):
    """An object `levels` levels deep: {"a": {"a": ... {}}}."""
    value = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def deep_text(levels):
    """A JSON text nested deeper than Python's parser can read."""
    return '{"a": ' * levels + "{}" + "}" * levels


def returns_in_time(call, *args):
    """call(*args) in a thread: its value, or a failure if it has not returned within 20 s (a
    FIFO opened for reading waits for a writer; the test then opens one, to let it go)."""
    outcome = {}
    thread = threading.Thread(target=lambda: outcome.update(value=call(*args)), daemon=True)
    thread.start()
    thread.join(timeout=20)
    if thread.is_alive():
        for path in args:
            if isinstance(path, os.PathLike) and path.exists():
                try:
                    os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
                except OSError:
                    pass
        pytest.fail(f"{call.__name__} did not return: it waits on a named pipe")
    return outcome["value"]


def refusal_of(read, refused):
    """A function of one argument: the text of the `refused` error that read(argument) raises,
    or None if read takes it (named after read, which returns_in_time names if it hangs)."""
    def refusal(argument):
        try:
            read(argument)
        except refused as error:
            return str(error)
        return None
    refusal.__name__ = read.__name__
    return refusal


# ---- 1. a tool input nested too deeply -----------------------------------------------------

@pytest.mark.parametrize("name", support.PRESENT)
def test_a_tool_input_nested_too_deeply_is_an_error_kept_as_an_empty_input(name, tmp_path):
    chapter = load_chapter(name)
    call = tool_use("toolu_1", "bash", {"command": "touch ran.txt", "options": nested(600)})
    client = FakeClient(reply(call), reply(text("Done.")), reply(text("Again.")))
    trace = tmp_path / "trace.jsonl"
    session = new_session(chapter, client, tmp_path, trace=trace)

    assert chapter.run_turn(session, "go") is True
    assert chapter.run_turn(session, "once more") is True  # the history is copied again here

    kept = tool_use("toolu_1", "bash", {})
    history = [
        user(text("go")),
        assistant(kept),
        user(result("toolu_1", DEEP, is_error=True)),
        assistant(text("Done.")),
        user(text("once more")),
        assistant(text("Again.")),
    ]
    assert session.messages == history
    assert client.calls[-1]["messages"] == history[:-1]
    assert [call["response"]["content"] for call in read_trace(trace)] == [
        [kept], [text("Done.")], [text("Again.")]
    ]
    assert (tmp_path / "ran.txt").exists() is False


@pytest.mark.parametrize("name", support.PRESENT)
def test_the_depth_limit_is_32_levels_and_other_blocks_may_not_pass_it(name):
    chapter = load_chapter(name)
    server_call = reply(text("x")).model_copy(update={"content": [
        reply({"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
               "input": nested(33)}).content[0]]})

    assert [chapter.too_deep(nested(levels)) for levels in (1, 32, 33, 600)] == [
        False, False, True, True
    ]
    assert chapter.too_deep([[["x"]]]) is False
    assert chapter.block_problem(server_call.content) == (
        "server_tool_use block 1 nests its input too deeply"
    )


def write_script(path, tool_input):
    turns = [{"content": [{"type": "tool_use", "name": "bash", "input": tool_input}]},
             {"content": [{"type": "text", "text": "Done."}]}]
    path.write_text(json.dumps({"prompt": "go", "turns": turns}), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", support.PRESENT)
def test_a_deep_input_from_the_model_ends_no_run_and_the_trace_serialises(name, tmp_path):
    script = write_script(tmp_path / "deep.json", {"command": "echo hi", "x": nested(400)})
    trace = tmp_path / "trace.jsonl"

    run = run_chapter(name, "--script", str(script), "--trace", str(trace),
                      "--workdir", str(tmp_path / "work"), "go")

    assert (run.returncode, run.stderr) == (0, "")
    assert run.stdout.splitlines()[-3:] == ["  > bash: echo hi", f"    error: {DEEP}", "Done."]
    assert [call["response"]["content"] for call in read_trace(trace)] == [
        [{"id": "toolu_01", "input": {}, "name": "bash", "type": "tool_use"}],
        [{"text": "Done.", "type": "text"}],
    ]


# ---- 2. a script or a settings file that cannot be read ------------------------------------

@pytest.mark.parametrize("name", support.PRESENT)
def test_a_script_that_cannot_be_read_is_one_line(name, tmp_path):
    chapter = load_chapter(name)
    deep = tmp_path / "deep.json"
    deep.write_text(deep_text(100_000), encoding="utf-8")
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"prompt": "caf\xe9", "turns": []}')
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()

    refusal = refusal_of(chapter.load_script, chapter.ScriptError)

    assert [returns_in_time(refusal, path) for path in (deep, latin, fifo, folder)] == [
        f"{deep}: lists and objects nest too deeply to read",
        f"{latin}: not UTF-8 text",
        f"{fifo}: not a regular file (a named pipe, a socket or a device)",
        f"{folder}: a folder, not a file",
    ]


@pytest.mark.parametrize("name", support.PRESENT)
def test_a_script_nested_too_deeply_is_one_line_and_exit_2(name, tmp_path):
    script = tmp_path / "deep.json"
    script.write_text(deep_text(100_000), encoding="utf-8")

    run = run_chapter(name, "--script", str(script), "--workdir", str(tmp_path / "work"), "go")

    assert (run.returncode, run.stdout, run.stderr) == (
        2, "", f"{name}: {script}: lists and objects nest too deeply to read\n"
    )


def settings_file(workdir):
    path = workdir / ".agent" / "settings.json"
    path.parent.mkdir(parents=True)
    return path


@pytest.mark.parametrize("name", SETTINGS_CHAPTERS)
def test_a_settings_file_that_cannot_be_read_is_one_line(name, tmp_path):
    chapter = load_chapter(name)
    paths = {}
    for kind in ("parser", "limit", "fifo", "folder"):
        paths[kind] = settings_file(tmp_path / kind)
    paths["parser"].write_text(deep_text(100_000), encoding="utf-8")
    paths["limit"].write_text(json.dumps({"permissions": {}, "notes": nested(33)}))
    os.mkfifo(paths["fifo"])
    paths["folder"].mkdir()

    refusal = refusal_of(chapter.load_settings, chapter.SettingsError)

    assert {kind: returns_in_time(refusal, path.parent.parent) for kind, path in paths.items()} == {
        "parser": f"{paths['parser']}: lists and objects nest too deeply to read",
        "limit": f"{paths['limit']}: lists and objects nest more than 32 levels deep",
        "fifo": f"{paths['fifo']}: not a regular file (a named pipe, a socket or a device)",
        "folder": f"{paths['folder']}: a folder, not a file",
    }
    # 31 levels pass the depth check; the key "notes" is then refused as unknown
    paths["limit"].write_text(json.dumps({"permissions": {}, "notes": nested(31)}))
    assert refusal(tmp_path / "limit").startswith(f"{paths['limit']}: unknown key 'notes'; ")


@pytest.mark.parametrize("name", SETTINGS_CHAPTERS)
def test_a_settings_file_nested_too_deeply_is_one_line_and_exit_2(name, tmp_path):
    work = tmp_path / "work"
    path = settings_file(work)
    path.write_text(deep_text(100_000), encoding="utf-8")

    run = run_chapter(name, "--offline", "--workdir", str(work), "go")

    assert (run.returncode, run.stdout, run.stderr) == (
        2, "", f"{name}: {path}: lists and objects nest too deeply to read\n"
    )


# ---- 3. the file tools act on regular files only -------------------------------------------

def run_file_tool(chapter, workdir, name, tool_input):
    """The result of one call, in bypass mode where there is one (nothing asks)."""
    extra = {"mode": "bypass"} if hasattr(chapter, "MODES") else {}
    session = new_session(chapter, FakeClient(), workdir, **extra)
    return chapter.run_tool(session, tool_use("toolu_1", name, tool_input))


@pytest.mark.parametrize("name", FILE_CHAPTERS)
def test_a_named_pipe_is_refused_at_once_by_every_file_tool_and_glob_does_not_list_it(
    name, tmp_path
):
    chapter = load_chapter(name)
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    calls = {
        "read_file": {"path": "pipe.txt"},
        "edit_file": {"path": "pipe.txt", "old_string": "a", "new_string": "b"},
        "write_file": {"path": "pipe.txt", "content": "b"},
    }

    def results(path):
        return {tool: run_file_tool(chapter, tmp_path, tool, tool_input)
                for tool, tool_input in calls.items()}

    assert returns_in_time(results, fifo) == {
        tool: result("toolu_1", NOT_REGULAR.format("pipe.txt"), is_error=True) for tool in calls
    }
    assert fifo.is_fifo()
    assert run_file_tool(chapter, tmp_path, "glob", {"pattern": "*"}) == result(
        "toolu_1", "No files match '*'."
    )


@pytest.mark.parametrize("name", FILE_CHAPTERS)
def test_a_socket_is_refused_by_read_file(name, tmp_path):
    chapter = load_chapter(name)
    listener = socket.socket(socket.AF_UNIX)
    try:
        listener.bind(str(tmp_path / "s.sock"))
        assert run_file_tool(chapter, tmp_path, "read_file", {"path": "s.sock"}) == result(
            "toolu_1", NOT_REGULAR.format("s.sock"), is_error=True
        )
    finally:
        listener.close()


# ---- 4. bounded time ---------------------------------------------------------------------------

# Commands the model may send that made a pattern of the hard deny list (born in s01) backtrack:
# 14,000 characters of the first took 18 s a call, in which not even Ctrl-C was felt.
BACKTRACKING = [":|:(){ " * 8000, ":(){" * 12000, "rm -rm " * 8000, "dd " * 16000,
                ";" * 50000, ":" + " " * 50000, "; sudo" * 8000]
HOLDS = ("import json, re, sys\n"
         "patterns, texts = json.load(sys.stdin)\n"
         "for p in patterns:\n"
         "    for a in texts:\n"
         "        re.search(p, a)\n")


@functools.cache  # the answer depends only on the patterns and the texts: chapters that carry
def patterns_finish(patterns, texts):  # the same list byte for byte share one run
    """Run every pattern on every text in a child process, stopped after 10 s: a regex holds
    the interpreter until it ends, so no thread of this one could stop it."""
    try:
        subprocess.run([sys.executable, "-c", HOLDS], input=json.dumps([patterns, texts]),
                       text=True, check=True, timeout=10)
    except subprocess.TimeoutExpired:
        return False
    return True


@pytest.mark.parametrize("name", support.PRESENT)
def test_no_pattern_of_the_hard_deny_list_backtracks_on_a_long_command(name):
    chapter = load_chapter(name)
    assert patterns_finish(tuple(pattern for pattern, _ in chapter.CATASTROPHIC),
                           tuple(BACKTRACKING))
    assert chapter.catastrophic_reason(":(){ :|:& };:") == "is a fork bomb"


@pytest.mark.parametrize("name", FILE_CHAPTERS)
def test_glob_with_many_double_stars_over_a_deep_chain_returns(name, tmp_path):
    chapter = load_chapter(name)
    deep = tmp_path.joinpath(*["d"] * 40)
    deep.mkdir(parents=True)
    (deep / "x.txt").write_text("")
    pattern = "**/" * 10 + "*.txt"
    assert returns_in_time(run_file_tool, chapter, tmp_path, "glob", {"pattern": pattern}) == (
        result("toolu_1", "d/" * 40 + "x.txt"))


@pytest.mark.parametrize("name", FILE_CHAPTERS)
def test_glob_stops_after_its_scan_limit_and_says_so(name, tmp_path, monkeypatch):
    chapter = load_chapter(name)
    monkeypatch.setattr(chapter, "GLOB_SCAN_LIMIT", 5)
    for number in range(8):
        (tmp_path / f"{number}.txt").write_text("")
    assert run_file_tool(chapter, tmp_path, "glob", {"pattern": "**/*.txt"}) == result(
        "toolu_1", "0.txt\n1.txt\n2.txt\n3.txt\n4.txt\n"
        "(glob stopped after looking at 5 names; a narrower pattern finds the rest)")


# ---- 5. nothing a file name or a terminal sends wedges or crashes a session ------------------

@pytest.mark.parametrize("name", FILE_CHAPTERS)
def test_a_file_name_that_is_not_utf8_comes_back_escaped_and_the_next_request_encodes(
        name, tmp_path):
    chapter = load_chapter(name)
    (tmp_path / os.fsdecode(b"caf\xe9.txt")).write_text("")
    found = run_file_tool(chapter, tmp_path, "glob", {"pattern": "*.txt"})
    assert found == result("toolu_1", "caf\\xe9.txt")
    assert json.dumps(found, ensure_ascii=False).encode("utf-8") == (
        b'{"type": "tool_result", "tool_use_id": "toolu_1", "content": "caf\\\\xe9.txt"}')


@pytest.mark.parametrize("name", support.PRESENT)
def test_model_text_and_a_tool_input_with_a_lone_surrogate_enter_the_history_escaped(
        name, tmp_path, capsys):
    chapter = load_chapter(name)
    call = tool_use("toolu_1", "no_such_tool", {"x": "caf\udce9"})
    client = FakeClient(reply(text("half \ud800 a pair"), call), reply(text("done")))
    session = new_session(chapter, client, tmp_path)
    chapter.run_turn(session, "go")
    sent = client.calls[1]["messages"]
    assert sent[1] == assistant(text("half \\ud800 a pair"),
                                tool_use("toolu_1", "no_such_tool", {"x": "caf\\xe9"}))
    assert json.dumps(sent, ensure_ascii=False).encode("utf-8").count(b"\\\\xe9") == 1


@pytest.mark.parametrize("name", support.PRESENT)
def test_a_character_the_terminal_cannot_encode_prints_as_its_escape(name, monkeypatch):
    chapter = load_chapter(name)
    screen = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(screen, encoding="latin-1"))
    chapter.show("a → b" + " " * 41 + "é")
    sys.stdout.flush()
    assert screen.getvalue() == b"a \\u2192 b\\u27e841 spaces\\u27e9\xe9\n"


@pytest.mark.parametrize("name", support.PRESENT)
def test_a_number_too_long_to_read_in_a_script_or_a_trace_is_one_line(name, tmp_path):
    chapter = load_chapter(name)
    script, trace = tmp_path / "script.json", tmp_path / "trace.jsonl"
    script.write_text('{"prompt": "x", "turns": [], "n": ' + "9" * 5000 + "}")
    trace.write_text('{"request": {}}\n{"a": ' + "9" * 5000 + "}\n")

    refusal = refusal_of(chapter.load_script, chapter.ScriptError)

    assert [refusal(script), refusal(trace)] == [
        f"{script}: a number in it is too long to read",
        f"{trace}: a number in it is too long to read"]


@pytest.mark.parametrize("name", SETTINGS_CHAPTERS)
def test_a_number_too_long_to_read_in_settings_is_one_line_and_exit_2(name, tmp_path):
    work = tmp_path / "work"
    path = settings_file(work)
    path.write_text('{"permissions": {"deny": []}, "x": ' + "9" * 5000 + "}")

    run = run_chapter(name, "--offline", "--workdir", str(work), "go")

    assert (run.returncode, run.stdout, run.stderr) == (
        2, "", f"{name}: {path}: a number in it is too long to read\n")
