"""Shared set-up for the whole suite: no network, no key, one import of anthropic."""

import atexit
import ipaddress
import os
import shutil
import socket
import sys
import tempfile
from types import SimpleNamespace

import pytest

# No test may talk to the outside world or find a key: block both before anything runs.
for variable in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "MODEL_ID"):
    os.environ.pop(variable, None)
os.environ["PYTHON_DOTENV_DISABLED"] = "1"  # a developer's .env must not turn a test live

# What the suite starts finds this interpreter's folder first on PATH, as in an activated venv: a
# scenario's `python3 -m unittest`, a hook's `python3 hook.py` run on the Python the course runs
# on, whatever a developer's PATH holds first (on this machine a pyenv shim, a bash script that
# costs each start 0.1 s of CPU, about a hundred times a suite).
os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])

# HOME is an empty folder of the suite's own: from s09 on, a live session reads the user's
# ~/.agent/AGENTS.md, and a developer's own file must not change what a test sends (nor does a
# test write into the developer's home: IPython's kernels keep a profile there).
os.environ["HOME"] = tempfile.mkdtemp(prefix="suite-home-")
atexit.register(shutil.rmtree, os.environ["HOME"], ignore_errors=True)

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _allowed(address):
    if not isinstance(address, tuple):  # AF_UNIX and the like stay on this machine
        return True
    host = address[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self, address):
    if not _allowed(address):
        raise ConnectionRefusedError(
            f"tests may not connect to {address!r}: only loopback is allowed"
        )
    return _real_connect(self, address)


def _guarded_connect_ex(self, address):
    if not _allowed(address):
        raise ConnectionRefusedError(
            f"tests may not connect to {address!r}: only loopback is allowed"
        )
    return _real_connect_ex(self, address)


socket.socket.connect = _guarded_connect
socket.socket.connect_ex = _guarded_connect_ex

# Every anthropic client makes an SSL context and loads the machine's CA bundle into it: 40 ms of
# CPU. A learner's run makes one client; a test process makes hundreds, and speaks TLS to no one
# (only loopback, in plain HTTP). So the session makes the context once, and every client shares
# it (httpx2 asks httpcore2.default_ssl_context for it each time), as the warm runner's runs do.
import httpcore2  # noqa: E402  (anthropic's transport; the suite imports anthropic anyway)

from course.warm_server import share_ssl_context  # noqa: E402

share_ssl_context(httpcore2)


# The files that take longest, longest first (`--durations=0`, summed per file). With `-n 2
# --dist loadfile --no-loadscope-reorder` (pyproject.toml) each file runs whole in one process,
# and a process that is free takes the next file in this order: the long files start at once,
# side by side, and the short ones fill in after them, so both processes end about together.
# One exception: test_stages.py (longer) comes after test_robustness.py, so that its batch of
# runs side by side, which can keep both cores busy, meets test_web.py in its browser tests,
# which wait on Chromium half the time, rather than in its build, which keeps a core busy
# (`.venv/bin/python -m tools.time_suite tests/test_web.py tests/test_stages.py
# tests/test_robustness.py`: test_web.py ended at 63.5 s in this order, 69.6 s in the other).
LONGEST_FIRST = ["test_web.py", "test_robustness.py", "test_stages.py", "test_s11_mcp.py",
                 "test_s04_hooks.py", "test_exercises.py", "test_notebooks.py",
                 "test_offline_repl.py", "test_chapters.py", "test_guard.py", "test_lessons.py",
                 "test_lessons_zh.py", "test_live_path.py", "test_odd_input.py",
                 "test_s03_permissions.py"]


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    """Collecting, a test process keeps the code it compiles in __pycache__ (ignored by git), as
    Python and pytest do by default, even where PYTHONDONTWRITEBYTECODE is set: pytest rewrites
    the asserts of every test file it imports, and with -n 2 each process imports all of them to
    collect (3 CPU-seconds a process, on every run, when nothing is kept). Only while
    collecting: a run of a chapter (its own environment) and whatever the tests import later
    write no bytecode when the variable says so; chapters are loaded from source, never cached."""
    writes = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = writes


def pytest_collection_modifyitems(items):
    rank = {name: place for place, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: a file stays whole


def pytest_collection_finish(session):
    """When tests of test_lessons.py are to run, the session's warm runner starts now: it imports
    anthropic in its own process while the tests before the lessons' commands run, so it is
    warm when they do. A run that only collects, or runs none of them, starts none."""
    if session.config.option.collectonly:
        return
    if any(item.path.name == "test_lessons.py" for item in session.items):
        import support

        support.shared_runner()


@pytest.fixture(scope="session", autouse=True)
def _sockets_stay_blocked():
    """The guard is installed at import time; this checks it is still there."""
    assert socket.socket.connect is _guarded_connect
    yield


def pytest_generate_tests(metafunc):
    """A test that takes `chapter` runs once for each chapter in its file's CHAPTERS (every
    chapter present, if the file has none), unless the test gives its own."""
    own = any("chapter" in str(marker.args[0]).replace(" ", "").split(",")
              for marker in metafunc.definition.iter_markers("parametrize"))
    if "chapter" in metafunc.fixturenames and not own:
        import support

        names = getattr(metafunc.module, "CHAPTERS", support.PRESENT)
        metafunc.parametrize("chapter", names, indirect=True)


@pytest.fixture
def chapter(request):
    """A fresh module of the chapter's code.py (support.load_chapter)."""
    import support

    return support.load_chapter(request.param)


@pytest.fixture
def keyboard(monkeypatch):
    """The user at the keyboard: keyboard.feed(...) lines for input(); EOF after the last one.
    keyboard.asked: the questions, in order."""
    state = SimpleNamespace(lines=[], asked=[])
    state.feed = lambda *lines: state.lines.extend(lines)

    def fake_input(prompt=""):
        state.asked.append(prompt)
        if not state.lines:
            raise EOFError
        return state.lines.pop(0)

    monkeypatch.setattr("builtins.input", fake_input)
    return state


class Answers:
    """Stands in for input(): hands out the given lines in order, None meaning EOF and an
    exception class (KeyboardInterrupt: a Ctrl-C at the question) raising it.

    Every prompt shown is kept, so a test can assert which questions were asked.
    """

    def __init__(self, *lines):
        self.lines = list(lines)
        self.prompts = []

    def __call__(self, prompt=""):
        self.prompts.append(prompt)
        if not self.lines:
            raise AssertionError(f"an unexpected question: {prompt!r}")
        line = self.lines.pop(0)
        if line is None:
            raise EOFError
        if isinstance(line, type) and issubclass(line, BaseException):
            raise line
        return line


@pytest.fixture
def answers(monkeypatch):
    """answers(*lines) installs the user's answers and returns them (.prompts: the questions
    asked); with none, any question fails the test."""
    def install(*lines):
        fake = Answers(*lines)
        monkeypatch.setattr("builtins.input", fake)
        return fake
    return install


@pytest.fixture
def workdir(tmp_path):
    """A workdir with one small file in it."""
    (tmp_path / "a.txt").write_text("hello\n")
    return tmp_path


@pytest.fixture(scope="session")
def loopback_api():
    """One Messages API on 127.0.0.1 for the whole session (tests/live_api.py)."""
    from live_api import MessagesAPI

    server = MessagesAPI()
    yield server
    server.close()


@pytest.fixture
def api(loopback_api):
    """The loopback Messages API with no answers queued and no requests seen yet."""
    loopback_api.reset()
    yield loopback_api
    loopback_api.reset()
