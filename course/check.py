"""What the exercise checks share (sNN_x/exercises/test_exN.py): load the learner's code.py, stand
in for the model, and fail with one sentence that says what is still missing.

    load(code)                          a fresh module from a code.py (a file that will not load
                                        fails the check with one line)
    need(chapter, *names)               its attributes, or fail naming the one not there yet
    FakeClient(*replies)                client.messages.create() returns the replies in order
    reply(...), text(...), tool_use(...), result(...), user(...), assistant(...)
                                        the shapes the Messages API sends and takes
    new_session(chapter, client, workdir, **extra), scratch(files), screen(), answers(*lines),
    no_process()                        a session, a workdir, the screen, the keyboard, no command
    expect(condition, sentence), expect_equal(got, wanted, sentence)
                                        fail with Missing(sentence) unless it holds
    run(check, code)                    what a check file's test does: check(code), and a Missing
                                        becomes one failing line
    python -m course.check sNN_x/exercises/test_exN.py
                                        what a learner runs: that check, without pytest (the
                                        chapters' own install is enough: anthropic, dotenv)

The chapters never import this package. tests/test_exercises.py calls each check on the chapter
as shipped (it must fail) and on a copy with the reference solution applied (it must pass).
"""

import builtins
import contextlib
import copy
import importlib.util
import io
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from types import SimpleNamespace

from anthropic.types import Message

MODEL = "test-model"

_loads = itertools.count()
_compiled = {}  # (path, source) -> code object: the suite loads one code.py many times


class Missing(AssertionError):
    """The exercise is not done yet. The first line of the message says what is missing."""


def expect(condition, sentence):
    if not condition:
        raise Missing(sentence)


def expect_equal(got, wanted, sentence):
    """Fail with the sentence, then what was wanted and what came, where they differ."""
    if got != wanted:
        raise Missing(f"{sentence}\n{difference(got, wanted)}")


def difference(got, wanted, width=70):
    """Both values as Python writes them, from a little before the first place they differ."""
    got_text, wanted_text = repr(got), repr(wanted)
    start = next((index for index, (a, b) in enumerate(zip(got_text, wanted_text, strict=False))
                  if a != b), min(len(got_text), len(wanted_text)))
    start = max(start - width // 2, 0)

    def excerpt(shown):
        part = shown[start:start + 2 * width]
        return ("..." if start else "") + part + ("..." if start + 2 * width < len(shown) else "")

    return f"    wanted: {excerpt(wanted_text)}\n    got:    {excerpt(got_text)}"


def run(check, code):
    """Run a check as a test: what the code prints is kept off the screen, and a Missing fails
    the test with its own words, without a traceback."""
    import pytest

    with screen():
        try:
            check(code)
            missing = None
        except Missing as error:
            missing = str(error)
    if missing is not None:
        pytest.fail(missing, pytrace=False)


def fresh_module(path, name):
    """A new module object named `name`, run from the file at `path`: its own globals each time.

    The file is compiled once per content and process (Python caches no bytecode for a module
    loaded this way when PYTHONDONTWRITEBYTECODE is set, and a chapter takes 10-20 ms to compile);
    a changed file is compiled again.
    """
    path = Path(path).resolve()
    source = path.read_text(encoding="utf-8")
    compiled = _compiled.get((path, source))
    if compiled is None:
        compiled = _compiled[(path, source)] = compile(source, str(path), "exec")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    exec(compiled, module.__dict__)
    return module


def load(code):
    """A fresh module for this code.py: its own globals, as the chapter tests load a chapter."""
    path = Path(code).resolve()
    try:
        module = fresh_module(path, f"exercise_code_{next(_loads)}")
    except Exception as error:
        where = f" (line {error.lineno})" if isinstance(error, SyntaxError) else ""
        raise Missing(f"{path.parent.name}/code.py does not load{where}: "
                      f"{type(error).__name__}: {error}") from None
    return module


def need(chapter, *names):
    """The module's attributes of these names, or fail naming the first one that is missing."""
    for name in names:
        expect(hasattr(chapter, name), f"code.py has no {name} yet.")
    return [getattr(chapter, name) for name in names]


# ---- the model's side -----------------------------------------------------------------------

def text(value):
    return {"type": "text", "text": value}


def tool_use(id, name, input):
    return {"type": "tool_use", "id": id, "name": name, "input": input}


def result(tool_use_id, content, is_error=False):
    block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def user(*blocks):
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks):
    return {"role": "assistant", "content": list(blocks)}


def reply(*blocks, stop_reason=None):
    """A real Message, as the API would send it."""
    if stop_reason is None:
        stop_reason = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    return Message.model_validate({
        "id": "msg_check", "type": "message", "role": "assistant", "model": MODEL,
        "content": list(blocks), "stop_reason": stop_reason, "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    })


_ATOMS = (str, int, float, bool, type(None))


def snapshot(value):
    """A copy of `value` that == copy.deepcopy(value): built by hand for the JSON-like data a
    request holds (dicts with str keys, lists, str, numbers, None), which is most of the time a
    test spends copying; anything else is handed to copy.deepcopy."""
    kind = type(value)
    if kind is dict:
        if all(type(key) is str for key in value):
            return {key: snapshot(item) for key, item in value.items()}
    elif kind is list:
        return [snapshot(item) for item in value]
    elif kind in _ATOMS:
        return value  # immutable: deepcopy returns the same object
    return copy.deepcopy(value)


class FakeClient:
    """client.messages.create() returns the given replies in order and keeps a copy of every
    request, taken at call time; one call more than there are replies fails with Missing.

    A reply may also be an exception (raised instead) or a function of the request (called, and
    its result used: for a test that acts mid-call). The chapter tests use this client too.
    """

    def __init__(self, *replies):
        self.replies = list(replies)
        self.calls = []
        self.messages = SimpleNamespace(create=self.create)

    def create(self, **request):
        self.calls.append(snapshot(request))
        if not self.replies:
            raise Missing(f"the loop called the model again after the {len(self.calls) - 1} "
                          "replies this check expected it to need.")
        next_reply = self.replies.pop(0)
        if callable(next_reply) and not isinstance(next_reply, Message):
            next_reply = next_reply(request)
        if isinstance(next_reply, BaseException):
            raise next_reply
        return next_reply


def new_session(chapter, client, workdir, **extra):
    """A Session of that chapter module with the test model. A field of its Conversation
    (messages=, todos=, ...) goes to the session's conversation."""
    held = chapter.Conversation.__dataclass_fields__
    conversation = {name: extra.pop(name) for name in list(extra) if name in held}
    return chapter.Session(client=client, model=MODEL, workdir=Path(workdir),
                           conversation=chapter.Conversation(**conversation), **extra)


# ---- the machine's side ---------------------------------------------------------------------

@contextlib.contextmanager
def scratch(files=None):
    """A temporary workdir holding these files ({relative path: text}); removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="exercise-") as folder:
        root = Path(folder).resolve()
        for name, content in (files or {}).items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(content, encoding="utf-8")
        yield root


@contextlib.contextmanager
def screen():
    """What the code prints meanwhile: screen.text."""
    shown = SimpleNamespace(text="")
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        try:
            yield shown
        finally:
            shown.text = buffer.getvalue()


@contextlib.contextmanager
def answers(*lines):
    """The user at the keyboard: input() returns these lines in order, then EOF (which answers
    no). keyboard.asked: the questions, in order."""
    keyboard = SimpleNamespace(lines=list(lines), asked=[])

    def fake_input(prompt=""):
        keyboard.asked.append(prompt)
        if not keyboard.lines:
            raise EOFError
        return keyboard.lines.pop(0)

    real_input = builtins.input
    builtins.input = fake_input
    try:
        yield keyboard
    finally:
        builtins.input = real_input


@contextlib.contextmanager
def no_process():
    """No command may start meanwhile; started.commands: the ones that tried."""
    started = SimpleNamespace(commands=[])

    def refuse(args, *rest, **kwargs):
        started.commands.append(args)
        raise RuntimeError(f"the check stopped this command from starting: {args!r}")

    real_popen = subprocess.Popen
    subprocess.Popen = refuse
    try:
        yield started
    finally:
        subprocess.Popen = real_popen


# ---- s11: a server of the check's own ---------------------------------------------------------

# A stdio MCP server in the standard library that offers TOOLS and answers each tools/call with
# RESULTS[name] (its arguments are written to heard.jsonl): the exercise checks of s11 run it.
SERVER = '''import json, sys
TOOLS, RESULTS = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for line in sys.stdin:
    message = json.loads(line)
    method, ident = message.get("method"), message.get("id")
    if method == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "check", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        with open("heard.jsonl", "a") as heard:
            heard.write(json.dumps(message["params"]) + "\\n")
        result = RESULTS[message["params"]["name"]]
    else:
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}), flush=True)
'''


@contextlib.contextmanager
def served(chapter, name, tools, results, *lines, settings=None):
    """A session whose workdir's .mcp.json names one server, NAME, offering these tools; the
    answers are "y" (start it), then `lines`. Yields (session, keyboard, shown, work); every
    server has ended after the block."""
    mcp = {"mcpServers": {name: {"command": sys.executable, "args": [
        "server.py", json.dumps(tools), json.dumps(results)]}}}
    files = {"server.py": SERVER, ".mcp.json": json.dumps(mcp)}
    with scratch(files) as work, answers("y", *lines) as keyboard, screen() as shown:
        session = new_session(chapter, FakeClient(), work, settings=settings or {})
        try:
            chapter.start_servers(session)
            yield session, keyboard, shown, work
        finally:
            chapter.stop_servers(session)


# ---- the learner's command ------------------------------------------------------------------

USAGE = "usage: python -m course.check sNN_x/exercises/test_exN.py"


def main(argv):
    """Run one exercise's check as the lesson says, with the standard library alone: 0 when it
    passes, 1 with what is still missing (or the error code.py raised), 2 for a bad command."""
    # Run as __main__, this file is a module of its own: the check imports course.check, whose
    # Missing is the one it raises.
    from course import check as shared

    if len(argv) != 1 or argv[0].startswith("-"):
        print(USAGE, file=sys.stderr)
        return 2
    path = Path(argv[0])
    match = re.fullmatch(r"test_ex(\d+)\.py", path.name)
    if not match or path.parent.name != "exercises" or not path.is_file():
        print(f"course.check: {argv[0]} is not an exercise's check; {USAGE}", file=sys.stderr)
        return 2
    label = f"Exercise {match[1]} of {path.parent.parent.name}"
    module = fresh_module(path, f"exercise_check_{match[1]}")
    with shared.screen():
        try:
            module.check(module.CODE)
            missing = None
        except shared.Missing as error:
            missing = str(error)
        except Exception:
            missing = (traceback.format_exc().rstrip()
                       + "\n(the error above came up while the check ran code.py)")
    if missing is not None:
        print(f"{label}: not done yet.\n{missing}")
        return 1
    print(f"{label}: passed.")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:  # the output went into `head` or the like, which closed early
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
