"""The stage checker: the learner's own agent, tested stage by stage, offline, on the wire.

    python -m course.stages sNN PATH [--only] [--list] [--json]

Each check is a scripted exchange (course/stages/checks.py): a prompt, the Messages a loopback
API answers with (course/api.py), the lines typed on stdin, the files the workdir starts with.
The program at PATH runs as a learner runs it, `python PATH PROMPT`, in a fresh workdir, with
ANTHROPIC_BASE_URL pointing at the loopback API. The checks judge only what it sent (the
requests), what it left (the workdir's files) and, where a check is about it, what it printed.
Nothing depends on how the program is built inside.

One server serves a whole run of the checker; each exchange has its own lane on it (its own
answers and record), and the exchanges run side by side. Several checks judge one exchange.

It needs only the chapters' own install: the standard library, and the SDK in the program.
"""

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from course.api import MessagesAPI, message
from course.chapters import CHAPTERS

LESSONS = {name[:3]: name for name in CHAPTERS}  # "s03": "s03_permissions", whose lesson says
STAGES = tuple(LESSONS)
MODEL = "stage-model"
KEY = "sk-ant-stage-checker-not-a-key"
TIMEOUT = 30  # seconds one exchange may take
WORKERS = 4  # exchanges side by side (each mostly waits for `import anthropic`)
LANES = itertools.count(1)  # each exchange's lane on the server has its own name


def command(label, path="build/agent.py"):
    """The command that checks stage `label` (e.g. "s03") against the program at `path`."""
    return f".venv/bin/python -m course.stages {label} {path}"


class Fail(Exception):
    """A check that does not pass: one or two sentences, then what shows it."""


class Exchange:
    """One scripted exchange: what the program is given, and the Messages it gets back.

    replies: one list of content blocks per request, in order (stop_reason follows: tool_use
    when a reply has a tool_use block). "{root}" in a reply is the folder that holds the
    workdir ("{root}/work"). files: {path: text} in the workdir at the start; setup(root) may
    add more (a symlink, a file outside)."""

    def __init__(self, name, prompt, replies, stdin="", files=None, args=(), setup=None):
        self.name, self.prompt, self.replies = name, prompt, replies
        self.stdin, self.files, self.args, self.setup = stdin, files or {}, args, setup


class Check:
    def __init__(self, stage, name, exchange, title, judge):
        self.stage, self.name, self.exchange, self.title, self.judge = (
            stage, name, exchange, title, judge)


class Outcome:
    """What one exchange left: the requests, the workdir, the output, the exit status."""

    def __init__(self, exchange, root, requests, returncode, stdout, stderr):
        self.exchange, self.root, self.workdir = exchange, root, root / "work"
        self.requests = requests  # the JSON bodies, in order
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr

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
        """How the run ended, in a few words: the last line it printed, or the timeout."""
        if self.returncode is None:
            return f"It was still running after {TIMEOUT} s (does it wait for input?)."
        said = (self.stderr.strip() or self.stdout.strip()).splitlines()[-1:] or ["nothing"]
        return f"It exited with status {self.returncode}; its last line: {cut(said[0])}"

    def turn_after(self, reply):
        """The user turn that answers reply `reply` (1 = the first): the last message of the
        next request, as a list of blocks."""
        body = self.request(reply + 1)
        messages = body.get("messages") or [{}]
        last = messages[-1]
        if last.get("role") != "user":
            raise Fail(f"Request {reply + 1} ends with a {last.get('role')!r} message; it "
                       f"should end with the user turn that answers reply {reply}.")
        return blocks(last.get("content"))

    def result(self, reply, tool_id):
        """(text, is_error) of the tool_result for `tool_id` in the turn after `reply`."""
        turn = self.turn_after(reply)
        found = [block for block in turn
                 if block.get("type") == "tool_result" and block.get("tool_use_id") == tool_id]
        if len(found) != 1:
            raise Fail(f"The user turn of request {reply + 1} has {len(found)} tool_result(s) "
                       f"for {tool_id}; each tool_use needs exactly one, with its id. "
                       f"That turn: {cut(json.dumps(turn))}")
        return block_text(found[0].get("content")), bool(found[0].get("is_error"))

    def ok(self, reply, tool_id, *must_hold):
        """The result of tool_id is no error and holds each string of must_hold."""
        text, is_error = self.result(reply, tool_id)
        call = self.call(reply, tool_id)
        if is_error:
            raise Fail(f"The call {call} got an is_error result: {cut(text)!r}. It should have "
                       f"run (request {reply + 1}).")
        for part in must_hold:
            if part not in text:
                raise Fail(f"The result of {call} is {cut(text)!r}; it should hold {part!r} "
                           f"(request {reply + 1}).")
        return text

    def refused(self, reply, tool_id, why):
        """The result of tool_id is an is_error result."""
        text, is_error = self.result(reply, tool_id)
        if not is_error:
            raise Fail(f"The call {self.call(reply, tool_id)} got the result {cut(text)!r} "
                       f"without is_error; {why}, so it should get an is_error result "
                       f"(request {reply + 1}).")
        return text

    def call(self, reply, tool_id):
        """A tool_use of the script, shown: bash {"command": "ls"}."""
        for block in self.exchange.replies[reply - 1]:
            if block.get("id") == tool_id:
                shown = json.dumps(block["input"]).replace("{root}", "<workdir>/..")
                return f"{block['name']} {cut(shown, 80)}"
        raise KeyError(tool_id)

    def tools(self, number):
        """The names of the tools offered in request `number`."""
        return [tool.get("name") for tool in self.request(number).get("tools") or []]

    def file(self, path):
        """The text of a file in the workdir (or relative to the root: "../x"), or None."""
        target = self.workdir / path
        return target.read_text(encoding="utf-8", errors="replace") if target.is_file() else None

    def printed(self, *parts, why):
        for part in parts:
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

def environment(url):
    """The program's environment: this one without ANTHROPIC_*, pointed at the loopback API."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY=KEY, MODEL_ID=MODEL,
               PYTHON_DOTENV_DISABLED="1",  # a .env must not point the program elsewhere
               PYTHONIOENCODING="utf-8")
    return env


RUNNING = set()  # the programs' process groups now running: a Ctrl-C stops them all


def subprocess_launch(path, args, stdin, cwd, env, timeout):
    """python PATH ARGS, as a learner runs it: (returncode or None on timeout, stdout, stderr)."""
    process = subprocess.Popen([sys.executable, str(path), *args], cwd=cwd, env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, errors="replace",
                               start_new_session=True)  # its group: a timeout stops it whole
    RUNNING.add(process.pid)
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
    text = json.dumps(content).replace("{root}", str(root))
    content = json.loads(text)
    has_tool = any(block["type"] == "tool_use" for block in content)
    return message(*content, stop_reason="tool_use" if has_tool else "end_turn")


def run_exchange(api, exchange, path, launch, number):
    root = Path(tempfile.mkdtemp(prefix=f"stage-{exchange.name}-")).resolve()
    workdir = root / "work"
    workdir.mkdir()
    for name, text in exchange.files.items():
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        (workdir / name).write_text(text, encoding="utf-8")
    if exchange.setup:
        exchange.setup(root)
    lane_name = f"{exchange.name}-{number}"
    lane = api.lane(lane_name, [reply_message(reply, root) for reply in exchange.replies])
    env = environment(f"{api.url}/{lane_name}")
    args = [*exchange.args, exchange.prompt]
    returncode, stdout, stderr = launch(path, args, exchange.stdin, workdir, env, TIMEOUT)
    requests = [request["body"] if isinstance(request["body"], dict) else {}
                for request in lane.seen]
    return Outcome(exchange, root, requests, returncode, stdout, stderr)


def judge(check, outcome):
    """None if the check passes, else its message (a few sentences)."""
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


def run_checks(checks, path, launch=subprocess_launch, api=None):
    """Run the exchanges these checks need, side by side; [(check, message or None)]."""
    return run_many([(path, checks)], launch, api)[0]


def run_many(jobs, launch=subprocess_launch, api=None):
    """[(path, checks)] -> one [(check, message or None)] per job: every exchange of every
    job side by side, on one server (the tests check many programs at once)."""
    own = api is None
    api = api or MessagesAPI()
    runs = [(Path(path).resolve(), exchange) for path, checks in jobs
            for exchange in dict.fromkeys(check.exchange for check in checks)]
    try:
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            futures = {run: pool.submit(run_exchange, api, run[1], run[0], launch, next(LANES))
                       for run in runs}
            try:
                outcomes = {run: future.result() for run, future in futures.items()}
            except KeyboardInterrupt:  # stop the programs, so that the pool ends at once
                for future in futures.values():
                    future.cancel()
                for group in list(RUNNING):
                    stop(group)
                raise
        results = [[(check, judge(check, outcomes[Path(path).resolve(), check.exchange]))
                    for check in checks] for path, checks in jobs]
        for outcome in outcomes.values():
            shutil.rmtree(outcome.root, ignore_errors=True)
        return results
    finally:
        if own:
            api.close()


def report(results, stage, path, seconds, only=False):
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
    lines.append(f"{passed} of {len(results)} checks pass ({seconds:.1f} s).")
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
                     f"\"Build it yourself\", then {command(after, path)}")
    else:
        lines.append(f"All {len(STAGES)} stages pass: your agent does what the course's does.")
    return "\n".join(lines)


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
                    "before it, offline (a loopback Messages API plays the model).")
    parser.add_argument("stage", nargs="?", choices=STAGES, help="the stage, s01 to s06")
    parser.add_argument("path", nargs="?", help="your program, e.g. build/agent.py")
    parser.add_argument("--only", action="store_true", help="this stage's checks alone")
    parser.add_argument("--list", action="store_true", help="list the checks of every stage")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
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
    try:
        results = run_checks(selected(options.stage, options.only), options.path,
                             launch=subprocess_launch)
    except KeyboardInterrupt:
        print("Stopped (Ctrl-C): no result.", file=sys.stderr)
        return 130
    seconds = time.monotonic() - started
    passed = all(failure is None for _, failure in results)
    if options.json:
        print(json.dumps({
            "stage": options.stage, "program": options.path, "passed": passed,
            "seconds": round(seconds, 2),
            "checks": [{"name": check.name, "stage": check.stage, "title": check.title,
                        "passed": failure is None, "message": failure}
                       for check, failure in results],
        }, indent=2, ensure_ascii=False))
    else:
        print(report(results, options.stage, options.path, seconds, options.only))
    return 0 if passed else 1
