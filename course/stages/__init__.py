"""The stage checker: the learner's own agent, tested stage by stage, offline, on the wire.

    python -m course.stages sNN PATH [--only] [--list] [--json]

Each check is a scripted exchange (course/stages/s01.py ... s08.py): a prompt, the Messages a
loopback API answers with (course/api.py), the lines typed on stdin, the files the workdir starts
with.
The commands, tokens, file names, tool_use ids and the model's name in them are drawn fresh for
each run from a seed (`<<name>>` in an exchange is a drawn value; the report prints the seed, and
`--seed N` replays it): only a program that really runs the tools can pass.
The program at PATH runs as a learner runs it, `python PATH PROMPT`, in a fresh workdir, with
ANTHROPIC_BASE_URL pointing at the loopback API. The checks judge only what it sent (the
requests), what it left (the workdir's files) and, where a check is about it, what it printed.
Nothing depends on how the program is built inside.

Each run is its own process, forked from a warm runner (course/warm.py) that the checker starts
once per run and that has imported anthropic already, so that the import (2.5 s of CPU) is paid
once, not per exchange. What the fork changes for the program: it starts with anthropic already
imported, and (on Linux) warmed up (a client made, two requests sent to a stand-in transport, no
network, one answered and one refused with an API error: the modules and validators the SDK
loads on first use are ready, and the clients it makes share one SSL context, its CA bundle
loaded once), with argparse and dotenv imported too (every chapter imports them), and with the
interpreter settings of the checker's `python` (its flags, its hash seed). Otherwise it is
`python PATH PROMPT`: its own argv, workdir, environment, stdin, stdout and stderr (files, where
subprocess_launch gives pipes), process group and exit status, run as __main__; a program that
does not import anthropic, fails at an import, or reads stdin runs and ends as it would alone.
Where os.fork is missing (Windows), each run is a plain `python PATH PROMPT` subprocess.

One server serves a whole run of the checker; each exchange has its own lane on it (its own
answers and record), and the exchanges run side by side. Several checks judge one exchange.

It needs only the chapters' own install: the standard library, and the SDK in the program.
"""

import contextlib
import itertools
import json
import os
import random
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from course.api import MessagesAPI, error, message
from course.chapters import CHAPTERS
from course.warm import Runner

LESSONS = {name[:3]: name for name in CHAPTERS}  # "s03": "s03_permissions", whose lesson says
STAGES = tuple(LESSONS)
KEY = "sk-ant-stage-checker-not-a-key"
TIMEOUT = 30  # seconds one exchange may take
WORKERS = 12  # exchanges side by side (each mostly waits: for the loopback API, for its hooks)
LANES = itertools.count(1)  # each exchange's lane on the server has its own name


def command(label, path="build/agent.py"):
    """The command that checks stage `label` (e.g. "s03") against the program at `path`."""
    return f".venv/bin/python -m course.stages {label} {path}"


class Fail(Exception):
    """A check that does not pass: one or two sentences, then what shows it."""


PLACEHOLDER = re.compile(r"<<(\w+)>>")
LETTERS = "abcdefghijklmnopqrstuvwxyz"
ID_LETTERS = LETTERS + LETTERS.upper() + "0123456789"


class Draw:
    """The values one exchange draws from the run's seed: the same seed, the same values.

    `<<name>>` is a word, name-xxxxxx (six random letters: no digit, so a drawn number is never
    found inside a word); `<<n_name>>` a number from 100 to 199 (an exit code); `<<id_name>>` a
    tool_use id, toolu_ and 24 letters and digits; `<<model>>` the model's name."""

    def __init__(self, seed, exchange_name):
        self.random = random.Random(f"{seed}/{exchange_name}")
        self.values = {}

    def value(self, name):
        if name not in self.values:
            letters = "".join(self.random.choices(LETTERS, k=6))
            if name.startswith("n_"):
                self.values[name] = str(self.random.randint(100, 199))
            elif name.startswith("id_"):
                self.values[name] = "toolu_" + "".join(self.random.choices(ID_LETTERS, k=24))
            else:
                self.values[name] = f"{name.replace('_', '-')}-{letters}"
        return self.values[name]

    def number(self, name, low, high, step=1):
        """A number drawn from low to high (in steps), kept as <<name>>: an exchange whose
        replies are computed from it (s08's thresholds) draws it with this."""
        if name not in self.values:
            self.values[name] = str(self.random.randrange(low, high + 1, step))
        return int(self.values[name])

    def fill(self, text):
        """The text with every <<name>> replaced by its value."""
        return PLACEHOLDER.sub(lambda match: self.value(match[1]), text)

    def fill_json(self, value):
        return json.loads(self.fill(json.dumps(value)))


class Exchange:
    """One scripted exchange: what the program is given, and the Messages it gets back.

    replies: one list of content blocks per request, in order (stop_reason follows: tool_use
    when a reply has a tool_use block), or an API error, {"error": MESSAGE} (a 400, which the
    SDK does not retry), or {"content": [...], "usage": {...}}, a reply that states its usage.
    "{root}" in a reply is the folder that holds the workdir ("{root}/work"). files: {path:
    text} in the workdir at the start; setup(root, draw) may add more (a symlink, a file
    outside). Every string may hold <<name>>s (Draw). replies and args may be functions of the
    Draw, for numbers drawn with Draw.number (s08's thresholds, and the usage around them).
    first: what request 1 should be, for an exchange whose first request is not the plain
    prompt; every check's message says it when no request came."""

    def __init__(self, name, prompt, replies, stdin="", files=None, args=(), setup=None,
                 first=""):
        self.name, self.prompt, self._replies = name, prompt, replies
        self.stdin, self.files, self._args, self.setup = stdin, files or {}, args, setup
        self.first = first

    def replies(self, draw):
        """The replies of this run, <<name>>s filled."""
        replies = self._replies(draw) if callable(self._replies) else self._replies
        return draw.fill_json(replies)

    def args(self, draw):
        """The flags of this run, before the prompt."""
        args = self._args(draw) if callable(self._args) else self._args
        return [draw.fill(arg) for arg in args]


class Check:
    """follows: the names of checks of the same exchange whose failure may cause this one's."""

    def __init__(self, stage, name, exchange, title, judge, follows=()):
        self.stage, self.name, self.exchange, self.title, self.judge = (
            stage, name, exchange, title, judge)
        self.follows = follows


class Outcome:
    """What one exchange left: the requests, the workdir, the output, the exit status."""

    def __init__(self, exchange, draw, root, requests, returncode, stdout, stderr):
        self.exchange, self.draw, self.root, self.workdir = exchange, draw, root, root / "work"
        self.replies = [reply["content"] if isinstance(reply, dict) and "content" in reply
                        else reply  # the blocks of each reply, as sent, "{root}" left as it is
                        for reply in exchange.replies(draw)]
        self.prompt = draw.fill(exchange.prompt)
        self.requests = requests  # the JSON bodies, in order
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr

    def v(self, text):
        """The text with its <<name>>s filled in: v("<<notes>>.md") -> "notes-qwerty.md"."""
        return self.draw.fill(text)

    def id(self, key):
        """The tool_use id drawn for the key that the script's use() gave it."""
        return self.draw.value(f"id_{key}")

    # ---- what the checks ask, each raising Fail with the evidence when it cannot answer ----

    def request(self, number):
        """The body of request `number` (1 = the first)."""
        if len(self.requests) >= number:
            return self.requests[number - 1]
        sent = f"{len(self.requests)} request{'s' if len(self.requests) != 1 else ''}"
        raise Fail(f"Your program sent {sent}; it should have sent "
                   f"request {number}, with the results of the tool calls in reply "
                   f"{number - 1}. {self.ending()}")

    def ending(self):
        """How the run ended, in a few words: the timeout, or the exit status and the last
        lines of stderr (of stdout when stderr is empty)."""
        if self.returncode is None:
            return f"It was still running after {TIMEOUT} s (does it wait for input?)."
        if self.returncode != 0 and self.stderr.strip():
            last = " / ".join(line.strip() for line in self.stderr.strip().splitlines()[-3:])
            return f"It exited with status {self.returncode}; its stderr ends: {cut(last)}"
        said = self.stdout.strip().splitlines()[-1:] or ["nothing"]
        return f"It exited with status {self.returncode}; its last line: {cut(said[0])}"

    def no_request(self):
        """The message of every check when the program sent no request at all."""
        if self.returncode is None:
            return (f"Your program sent no request: it was still running after {TIMEOUT} s "
                    "(does it wait for input?).")
        args = self.exchange.args(self.draw)
        flags = [arg for arg in args if arg.startswith("--")]
        named = " and ".join([", ".join(flags[:-1]), flags[-1]] if len(flags) > 2 else flags)
        given = (f" It was run with {' '.join(args)} before the prompt: "
                 f"the section of the stage that checks {named} says what "
                 f"{'they do' if len(flags) > 1 else 'it does'}, and your program must accept "
                 f"{'them' if len(flags) > 1 else 'it'}." if flags else "")
        first = f" {self.v(self.exchange.first)}" if self.exchange.first else ""
        return f"Your program sent no request before it ended. {self.ending()}{given}{first}"

    def turn_after(self, reply, number=None):
        """The user turn that answers reply `reply` (1 = the first): what follows that reply
        in request `number` (the next one, unless a subagent's requests came between), which
        must be one user message, as a list of blocks."""
        number = number or reply + 1
        messages = self.request(number).get("messages") or [{}]
        roles = [message.get("role") for message in messages]
        answers = len(roles) - 1 - roles[::-1].index("assistant") if "assistant" in roles else 0
        after = messages[answers + 1:] if "assistant" in roles else messages
        if [message.get("role") for message in after] != ["user"]:
            raise Fail(f"Request {number} holds {[m.get('role') for m in after]} after its "
                       f"last assistant turn; it should hold one user turn that answers reply "
                       f"{reply}, with the results and any text after them. "
                       f"{cut(json.dumps(after), 200)}")
        return blocks(after[0].get("content"))

    def result(self, reply, key, number=None):
        """(text, is_error) of the tool_result for the call `key` in the turn after `reply`
        (in request `number`, as for turn_after)."""
        number = number or reply + 1
        turn = self.turn_after(reply, number)
        tool_id = self.id(key)
        found = [block for block in turn
                 if block.get("type") == "tool_result" and block.get("tool_use_id") == tool_id]
        if len(found) != 1:
            ids = [block.get("tool_use_id") for block in turn if block.get("type") ==
                   "tool_result"]
            raise Fail(f"The user turn of request {number} has {len(found)} tool_result(s) "
                       f"with the tool_use_id {tool_id} of {self.call(reply, key)}; each "
                       f"tool_use needs exactly one, with its id. The turn answers the ids "
                       f"{ids}.")
        return block_text(found[0].get("content")), bool(found[0].get("is_error"))

    def ok(self, reply, key, *must_hold, number=None):
        """The result of the call `key` is no error and holds each string of must_hold."""
        number = number or reply + 1
        text, is_error = self.result(reply, key, number)
        call = self.call(reply, key)
        if is_error:
            raise Fail(f"The call {call} got an is_error result: {cut(text)!r}. It should have "
                       f"run (request {number}).")
        for part in map(self.v, must_hold):
            if part not in text:
                raise Fail(f"The result of {call} is {cut(text)!r}; it should hold {part!r} "
                           f"(request {number}).")
        return text

    def refused(self, reply, key, why, number=None):
        """The result of the call `key` is an is_error result."""
        number = number or reply + 1
        text, is_error = self.result(reply, key, number)
        if not is_error:
            raise Fail(f"The call {self.call(reply, key)} got the result {cut(text)!r} "
                       f"without is_error; {self.v(why)}, so it should get an is_error result "
                       f"(request {number}).")
        return text

    def call(self, reply, key):
        """A tool_use of the script, shown: bash {"command": "ls"}."""
        for block in self.replies[reply - 1]:
            if block.get("id") == self.id(key):
                shown = json.dumps(block["input"]).replace("{root}", "<workdir>/..")
                return f"{block['name']} {cut(shown, 80)}"
        raise KeyError(key)

    def tools(self, number):
        """The names of the tools offered in request `number`."""
        return [tool.get("name") for tool in self.request(number).get("tools") or []]

    def file(self, path):
        """The text of a file in the workdir (or relative to the root: "../x"), or None."""
        target = self.workdir / self.v(path)
        return target.read_text(encoding="utf-8", errors="replace") if target.is_file() else None

    def expect_file(self, path, expected, after, why=""):
        """The file check: the workdir's file `path` ("../x": beside the workdir) holds
        `expected` (None: it does not exist), else Fail, "AFTER, x holds 'a'; it should hold
        'b'WHY." Every string may hold <<name>>s."""
        path, expected = self.v(path), None if expected is None else self.v(expected)
        now = self.file(path)
        if now == expected:
            return
        said = "does not exist" if now is None else f"holds {cut(repr(now))}"
        wanted = "it should not exist" if expected is None else f"it should hold {expected!r}"
        raise Fail(f"{self.v(after)}, {path} {said}; {wanted}{self.v(why)}.")

    def printed(self, *parts, why):
        for part in map(self.v, parts):
            if part not in self.stdout:
                raise Fail(f"Your program did not print {part!r} on stdout; {why}. "
                           f"{self.ending()}")

    def exited_well(self):
        if self.returncode != 0:
            raise Fail(f"The reply to request {len(self.requests)} ended with end_turn, so the "
                       f"program should exit 0. {self.ending()}")


def blocks(content):
    """A message's content as a list of blocks (a string is one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, dict)]


def block_text(content):
    """The text of a tool_result's content: a string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in blocks(content))


def cut(text, limit=160):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


# ---- running the exchanges ----

def base_environment():
    """This environment without ANTHROPIC_*, no .env, UTF-8 on stdin, stdout and stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(PYTHON_DOTENV_DISABLED="1",  # a .env must not point the program elsewhere
               PYTHONIOENCODING="utf-8")
    return env


def environment(url, model):
    """The program's environment: base_environment(), pointed at the loopback API."""
    return {**base_environment(), "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": KEY,
            "MODEL_ID": model}


RUNNING = set()  # the programs' process groups now running: a Ctrl-C stops them all
STOPPING = threading.Event()  # set by a Ctrl-C: a program that starts after it is stopped


@contextlib.contextmanager
def launcher():
    """The launch of one run of the checker: forked from a warm runner started now and ended
    with the run (where os.fork exists), else subprocess_launch."""
    if not hasattr(os, "fork"):
        yield subprocess_launch
        return
    folder = tempfile.mkdtemp(prefix="stage-runs-")
    runner = Runner(folder, env=base_environment(), cwd=os.getcwd())
    try:
        yield runner_launch(runner)
    finally:
        runner.close()
        shutil.rmtree(folder, ignore_errors=True)


def runner_launch(runner):
    """A launch through a warm runner (course.warm.Runner): the same run as subprocess_launch's,
    forked from a process that has imported anthropic."""
    def launch(path, args, stdin, cwd, env, timeout):
        if STOPPING.is_set():
            return None, "", ""
        number = runner.start(path, *args, stdin=stdin, cwd=cwd, env=env)
        group = runner.pid(number, timeout)  # its process group: a timeout stops it whole
        RUNNING.add(group)
        if STOPPING.is_set():  # a Ctrl-C came as it started
            stop(group)
        try:
            done = runner.result(number, timeout, errors="replace")
            return done.returncode, done.stdout, done.stderr
        except TimeoutError:  # stopped, with its process group
            return (None, runner.read(number, "stdout", "replace"),
                    runner.read(number, "stderr", "replace"))
        finally:
            RUNNING.discard(group)
    return launch


def subprocess_launch(path, args, stdin, cwd, env, timeout):
    """python PATH ARGS, as a learner runs it: (returncode or None on timeout, stdout, stderr)."""
    process = subprocess.Popen([sys.executable, str(path), *args], cwd=cwd, env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, errors="replace",
                               start_new_session=True)  # its group: a timeout stops it whole
    RUNNING.add(process.pid)
    if STOPPING.is_set():  # a Ctrl-C came as it started
        stop(process.pid)
    try:
        stdout, stderr = process.communicate(stdin, timeout=timeout)
        return process.returncode, stdout, stderr
    except subprocess.TimeoutExpired:
        stop(process.pid)
        stdout, stderr = process.communicate()
        return None, stdout, stderr
    finally:
        RUNNING.discard(process.pid)


def stop(group):
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        pass


def reply_message(content, root):
    if isinstance(content, dict) and "error" in content:  # the API refuses the request
        return error(400, "invalid_request_error", content["error"])
    usage = None
    if isinstance(content, dict):  # {"content": [...], "usage": {...}}: it says its usage
        content, usage = content["content"], content["usage"]
    text = json.dumps(content).replace("{root}", str(root))
    content = json.loads(text)
    has_tool = any(block["type"] == "tool_use" for block in content)
    return message(*content, stop_reason="tool_use" if has_tool else "end_turn", usage=usage)


def run_exchange(api, exchange, path, launch, number, seed):
    draw = Draw(seed, exchange.name)
    root = Path(tempfile.mkdtemp(prefix=f"stage-{exchange.name}-")).resolve()
    workdir = root / "work"
    workdir.mkdir()
    for name, text in exchange.files.items():
        (workdir / draw.fill(name)).parent.mkdir(parents=True, exist_ok=True)
        (workdir / draw.fill(name)).write_text(draw.fill(text), encoding="utf-8")
    if exchange.setup:
        exchange.setup(root, draw)
    lane_name = f"{exchange.name}-{number}"
    replies = exchange.replies(draw)
    lane = api.lane(lane_name, [reply_message(reply, root) for reply in replies])
    # HOME is an empty folder of the run's own: the learner's own ~/.agent/AGENTS.md (s09), or
    # any file a program reads from HOME, never changes what a run sends
    env = {**environment(f"{api.url}/{lane_name}", draw.value("model")),
           "HOME": str(root / "home")}
    args = [*exchange.args(draw), draw.fill(exchange.prompt)]
    returncode, stdout, stderr = launch(path, args, draw.fill(exchange.stdin), workdir, env,
                                        TIMEOUT)
    requests = [request["body"] if isinstance(request["body"], dict) else {}
                for request in lane.seen]
    return Outcome(exchange, draw, root, requests, returncode, stdout, stderr)


def judge(check, outcome):
    """None if the check passes, else its message (a few sentences)."""
    if not outcome.requests:
        return outcome.no_request()
    try:
        check.judge(outcome)
    except Fail as failure:  # the workdir is gone when this is read: name it, not its path
        return str(failure).replace(str(outcome.workdir), "<workdir>").replace(
            str(outcome.root), "<workdir>/..")
    except Exception as error:  # a request of an unexpected shape: say so, do not crash
        return (f"The checker could not read what your program sent ({type(error).__name__}: "
                f"{error}). {outcome.ending()}")
    return None


def selected(stage, only=False, names=None):
    from course.stages.checks import CHECKS
    if names is not None:
        return [check for check in CHECKS if check.name in names]
    return [check for check in CHECKS
            if check.stage == stage or (not only and check.stage < stage)]


def new_seed():
    return secrets.randbelow(900_000) + 100_000


def run_checks(checks, path, launch=subprocess_launch, api=None, seed=None):
    """Run the exchanges these checks need, side by side; [(check, message or None)]."""
    return run_many([(path, checks)], launch, api, seed)[0]


def run_many(jobs, launch=subprocess_launch, api=None, seed=None):
    """[(path, checks)] -> one [(check, message or None)] per job: every exchange of every
    job side by side, on one server (the tests check many programs at once), its values
    drawn from `seed` (a fresh one if None)."""
    seed = new_seed() if seed is None else seed
    own = api is None
    api = api or MessagesAPI()
    # each exchange of each program once, however many jobs ask for it (the tests' jobs check
    # s04's code at its own stages and at s05's, both of which have the todos exchange)
    runs = list(dict.fromkeys((Path(path).resolve(), exchange) for path, checks in jobs
                              for exchange in dict.fromkeys(check.exchange for check in checks)))
    STOPPING.clear()
    try:
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            futures = {run: pool.submit(run_exchange, api, run[1], run[0], launch, next(LANES),
                                        seed)
                       for run in runs}
            try:
                outcomes = {run: future.result() for run, future in futures.items()}
            except KeyboardInterrupt:  # stop the programs, so that the pool ends at once
                STOPPING.set()
                for future in futures.values():
                    future.cancel()
                for group in list(RUNNING):
                    stop(group)
                raise
        results = [knock_on([(check, judge(check, outcomes[Path(path).resolve(),
                                                           check.exchange]))
                             for check in checks]) for path, checks in jobs]
        for outcome in outcomes.values():
            shutil.rmtree(outcome.root, ignore_errors=True)
        return results
    finally:
        if own:
            api.close()


def knock_on(results):
    """Each failure that may follow from an earlier one (Check.follows) says so."""
    failed = {check.name: failure for check, failure in results if failure}
    marked = []
    for check, failure in results:  # (the same message twice is one cause, not a knock-on)
        earlier = [name for name in check.follows if failed.get(name) not in (None, failure)]
        if failure and earlier:
            failure += (f" This may follow from {earlier[0]}, which failed on the same "
                        "exchange: fix that first.")
        marked.append((check, failure))
    return marked


def report(results, stage, path, seconds, only=False, seed=None):
    """The lines the checker prints: one per check, then what to do next."""
    lines, current = [], None
    for check, failure in results:
        if check.stage != current:
            current = check.stage
            lines.append(f"{current} · {LESSONS[current]}")
        lines.append(f"  {'✗' if failure else '✓'} {check.name}: {check.title}")
        if failure:
            lines += [f"      {line}" for line in wrap(failure)]
    failed = [check for check, failure in results if failure]
    passed = len(results) - len(failed)
    lines.append("")
    replay = f" Seed {seed}: --seed {seed} replays this run." if seed is not None else ""
    lines.append(f"{passed} of {len(results)} checks pass ({seconds:.1f} s).{replay}")
    if failed:
        first = failed[0].stage
        lines.append(f"Next: build what {first} asks for: the contract is in "
                     f"{LESSONS[first]}/README.md, section \"Build it yourself\".")
    elif only:
        lines.append(f"Stage {stage}'s own checks pass; without --only, {command(stage, path)} "
                     "runs the earlier stages' checks too.")
    elif stage != STAGES[-1]:
        after = STAGES[STAGES.index(stage) + 1]
        lines.append(f"Stage {stage} passes. Next: {LESSONS[after]}/README.md, "
                     f"\"Build it yourself\", then {command(after, next_program(path, after))}")
    else:
        lines.append(f"All {len(STAGES)} stages pass: your agent does what the course's does.")
    return "\n".join(lines)


def next_program(path, stage):
    """The program to check against `stage` next: the same one, unless it is a chapter's own
    code.py, which does not grow: then the code.py of that stage's chapter."""
    if Path(path).name == "code.py" and Path(path).resolve().parent.name in CHAPTERS:
        return f"{LESSONS[stage]}/code.py"
    return path


def wrap(text, width=90):
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return lines + [line]


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m course.stages",
        description="Check your own agent against a stage of the course, and every stage "
                    "before it, offline (a loopback Messages API plays the model).",
        epilog="Each exchange runs your program as `python PATH PROMPT`, in its own process and "
               "a fresh workdir. The process is forked from one that has imported anthropic "
               "already (and made a client once, offline), so that the import is paid once: "
               "your program starts with anthropic imported (argparse and dotenv too), and with "
               "the checker's interpreter settings; otherwise it runs as it would alone.")
    parser.add_argument("stage", nargs="?", choices=STAGES,
                        help=f"the stage, {STAGES[0]} to {STAGES[-1]}")
    parser.add_argument("path", nargs="?", help="your program, e.g. build/agent.py")
    parser.add_argument("--only", action="store_true", help="this stage's checks alone")
    parser.add_argument("--list", action="store_true", help="list the checks of every stage")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--seed", type=int, help="replay the run that printed this seed")
    options = parser.parse_args(argv)
    if options.list:
        from course.stages.checks import CHECKS
        for check in CHECKS:
            print(f"{check.name}: {check.title}")
        return 0
    if not options.stage or not options.path:
        parser.error("give a stage and a program: python -m course.stages s01 build/agent.py")
    if not Path(options.path).is_file():
        parser.error(f"{options.path}: no such file")
    started = time.monotonic()
    seed = new_seed() if options.seed is None else options.seed
    try:
        with launcher() as launch:
            results = run_checks(selected(options.stage, options.only), options.path,
                                 launch=launch, seed=seed)
    except KeyboardInterrupt:
        print("Stopped (Ctrl-C): no result.", file=sys.stderr)
        return 130
    seconds = time.monotonic() - started
    passed = all(failure is None for _, failure in results)
    if options.json:
        print(json.dumps({
            "stage": options.stage, "program": options.path, "passed": passed,
            "seconds": round(seconds, 2), "seed": seed,
            "checks": [{"name": check.name, "stage": check.stage, "title": check.title,
                        "passed": failure is None, "message": failure}
                       for check, failure in results],
        }, indent=2, ensure_ascii=False))
    else:
        print(report(results, options.stage, options.path, seconds, options.only, seed))
    return 0 if passed else 1
