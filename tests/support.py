"""What the chapter tests share: load a chapter, fake the model, build replies.

A chapter is loaded from its code.py as a fresh module, so no test sees another
test's state. The fake client returns real anthropic.types.Message objects and
keeps a copy of the keyword arguments of every create() call, taken at call
time, so a test can assert the exact requests with ==.
"""

import contextlib
import gc
import itertools
import json
import signal
from pathlib import Path

from anthropic.types import Message

from course import CHAPTERS, PRESENT, ROOT, offline_environment, section_map  # noqa: F401

# The live path's loopback Messages API, and the warm runner the test session shares with a
# chapter run through it: in course/, where the tools find them too.
from course.api import loopback_messages_api, message_json  # noqa: F401

# The loader, the fake client and the message builders a learner's exercise checks use too:
# one source for both.
from course.check import (  # noqa: F401
    MODEL,
    FakeClient,
    assistant,
    fresh_module,
    new_session,
    reply,
    result,
    text,
    tool_use,
    user,
)
from course.warm import run_chapter, shared_runner  # noqa: F401


def chapters_that_change(*sections):
    """The chapters a test of these sections runs on: the first that has one of them, each
    whose copy of one differs from the chapter before's, and the newest, which holds every
    later change around them. A chapter between carries them byte for byte
    (tests/test_chapters.py), and its own changes have its own tests."""
    chosen, before = [], None
    for name in PRESENT:
        found = _section_maps(name)
        texts = [found.get(section, (None, None))[1] for section in sections]
        if any(texts) and texts != before:
            chosen.append(name)
        before = texts
    if chosen and chosen[-1] != PRESENT[-1]:
        chosen.append(PRESENT[-1])
    return chosen


_parsed = {}  # (chapter, the text of its code.py) -> its section_map


def _section_maps(name):
    """section_map(name), parsed once per content and process: the files that choose their
    chapters with chapters_that_change ask about the same files as they are collected."""
    source = (ROOT / name / "code.py").read_text(encoding="utf-8")
    if (name, source) not in _parsed:
        _parsed[(name, source)] = section_map(name)
    return _parsed[(name, source)]


_loads = itertools.count()


_code_folders = {}  # a code.py -> the one list every fresh module of it fills


def load_chapter(name):
    """A fresh module object for <name>/code.py.

    Its globals are its own, but for CODE_FOLDERS: the harness finds the folders that hold its
    code once per process ("they do not move"), and so it does in a test process, where a module
    loaded for every test would otherwise look them up again each time (8 ms, thousands of
    times)."""
    code = ROOT / name / "code.py"
    return share_code_folders(fresh_module(code, f"{name}_code_{next(_loads)}"), code)


def share_code_folders(module, code):
    """The module, its CODE_FOLDERS (if it has one) the list every module loaded from the file
    `code` shares in this process (see load_chapter)."""
    if hasattr(module, "CODE_FOLDERS"):
        module.CODE_FOLDERS = _code_folders.setdefault(Path(code).resolve(), [])
    return module


@contextlib.contextmanager
def ctrl_c_delivered():
    """For a test that sends itself SIGINT, as a Ctrl-C in the terminal would.

    Python's own SIGINT handler, even where the tests run in the background
    (which ignores SIGINT); and no garbage collection meanwhile: a gc callback
    (hypothesis installs one) that happens to run when the signal arrives
    would swallow the KeyboardInterrupt as an "unraisable" exception.
    """
    old_handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
        signal.signal(signal.SIGINT, old_handler)


def no_process(*args, **kwargs):
    """Stands in for subprocess.Popen in a test that sends a harmful command to a guard."""
    raise AssertionError(f"a process was about to start: {args[:1]!r}")


def golden(name):
    """What the model sees in chapter `name`, as reviewed: tests/golden/<name>.json."""
    return json.loads((ROOT / "tests" / "golden" / f"{name}.json").read_text(encoding="utf-8"))


def request(chapter, session, messages):
    """The exact keyword arguments the loop should send for this history (outside plan mode).

    The system prompt and the tools come from the reviewed golden file, never from the
    chapter under test, so a changed description or schema fails the test that sends it.
    """
    seen = golden(chapter.CHAPTER)
    return {
        "model": MODEL,
        "max_tokens": chapter.MAX_TOKENS,
        "system": seen["system"].replace("{workdir}", str(session.workdir)),
        "tools": seen["tools"],
        "messages": messages,
    }


# ---- running a chapter as a learner does -------------------------------------

# The environment for a chapter subprocess: no key, no .env, unbuffered output (plus extra).
clean_env = offline_environment


def read_trace(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


# ---- replies the API can send but model_validate refuses; the SDK over a fake wire ----

def unchecked_reply(*blocks, stop_reason="tool_use"):
    """A Message built without validation, the way the SDK builds one from a response.

    The SDK does not validate what the API sends, so a tool_use whose input is
    not an object can reach the loop; reply() cannot build one.
    """
    return Message.construct(
        id="msg_test", type="message", role="assistant", model=MODEL, content=list(blocks),
        stop_reason=stop_reason, stop_sequence=None, usage={"input_tokens": 0, "output_tokens": 0})


WIRE_KEY = "test-key"


def wire_client(handler):
    """The real anthropic.Anthropic client; every HTTP request goes to handler(request)."""
    import anthropic
    import httpx2

    return anthropic.Anthropic(api_key=WIRE_KEY, base_url="http://127.0.0.1:9", max_retries=0,
                               http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))


def wire(responses):
    """wire_client answering with these replies in order: the JSON bodies it sent, and the
    client."""
    import httpx2

    bodies = []

    def handler(http_request):
        assert http_request.url.path == "/v1/messages"
        bodies.append(json.loads(http_request.content))
        return httpx2.Response(200, json=responses.pop(0).model_dump(mode="json"))

    return bodies, wire_client(handler)


def sent_key(http_request):
    """The API key an HTTP request carried (x-api-key, or Authorization: Bearer in newer SDKs)."""
    headers = http_request.headers
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


