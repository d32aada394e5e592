"""A warm runner: many `python SCRIPT ARGS` runs for the price of one `import anthropic`.

`import anthropic` costs 1.5-3 s of CPU on a small machine, and the stage checker and the tests
run programs as a learner does, dozens of times. The runner process (course/warm_server.py)
imports anthropic once and forks a fresh process per run: each run still is its own process
with its own argv, cwd, environment, stdin, stdout, stderr, session (process group) and exit
status, running the script as __main__.

What the fork changes for the script: it starts with anthropic already imported and warmed up
(warm_server.warm_up: the modules and validators the SDK loads on first use are ready, and its
clients share one SSL context), with argparse and dotenv imported (warm_server.PREIMPORTED: every
chapter imports them), and
with the runner's interpreter settings (its flags, its hash seed, and the variables read at
start-up, such as PYTHONPATH, from the runner's environment, not the run's); otherwise it is
`python SCRIPT ARGS` (warm_server.run says how each part is set up). A script that never
imports anthropic, or fails at import, runs and fails as it would alone.

Where os.fork is missing (Windows) it falls back to plain subprocesses, slower.

Saves about 1.4 s per run: 10 runs of s01 --help, 15.9 s cold vs 1.9 s warm (tools/time_runner.py).
"""

import atexit
import itertools
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from course.chapters import ROOT, offline_environment

# The runner process reads one job (JSON) per line and reports {"id", "pid"} when a run starts
# and {"id", "returncode"} when it ends.
SERVER = Path(__file__).resolve().with_name("warm_server.py")  # run as a script


class Runner:
    """Start `python SCRIPT ARGS` runs at once; collect each as a CompletedProcess.

    folder holds each run's stdin, stdout and stderr files; env is the runner process's
    environment and each run's unless start() gives one (by default an offline chapter run's),
    cwd each run's folder unless start() gives one."""

    def __init__(self, folder, env=None, cwd=ROOT):
        self.folder = Path(folder)
        self.env = offline_environment() if env is None else env
        self.cwd = cwd
        self.numbers = itertools.count(1)
        self.jobs = {}
        self.pids = {}
        self.ended = {}
        self.unread = b""
        self.lock = threading.Lock()
        self.reports = threading.Condition(self.lock)  # a report came in (self._wait_for)
        self.reading = False  # a thread is reading the reports
        self.forking = hasattr(os, "fork")
        if self.forking:
            self.process = subprocess.Popen(
                [sys.executable, str(SERVER)],
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                start_new_session=True,  # a Ctrl-C in the terminal is for the caller to handle
            )

    def start(self, script, *args, stdin="", cwd=None, env=None):
        number = next(self.numbers)  # itertools.count is safe to share between threads
        files = {part: self.folder / f"{number}.{part}" for part in ("stdin", "stdout", "stderr")}
        files["stdin"].write_text(stdin, encoding="utf-8")
        job = {
            "id": number,
            "script": str(script),
            "args": [str(arg) for arg in args],
            "cwd": str(cwd or self.cwd),
            "env": env or self.env,
            **{part: str(path) for part, path in files.items()},
        }
        if self.forking:
            with self.lock:
                self.jobs[number] = job
                self.process.stdin.write((json.dumps(job) + "\n").encode())
                self.process.stdin.flush()
        else:  # no fork (Windows): a plain subprocess, slower
            with (
                files["stdin"].open() as i,
                files["stdout"].open("w") as o,
                files["stderr"].open("w") as e,
            ):
                self.jobs[number] = (
                    job,
                    subprocess.Popen(
                        [sys.executable, job["script"], *job["args"]],
                        cwd=job["cwd"],
                        env=job["env"],
                        stdin=i,
                        stdout=o,
                        stderr=e,
                        start_new_session=hasattr(os, "killpg"),
                    ),
                )
        return number

    def result(self, number, timeout=120, errors="strict"):
        """The run as a CompletedProcess, once it has ended. After `timeout` seconds, the run
        and whatever it started (its process group) are stopped, and TimeoutError is raised;
        read() still gives what it wrote."""
        if self.forking:
            self._wait_for(number, timeout)
            job, returncode = self.jobs[number], self.ended[number]
        else:
            job, process = self.jobs[number]
            try:
                returncode = process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.stop(number)
                process.wait()
                raise TimeoutError(f"run {job['args']} did not end within {timeout} s") from None
        return subprocess.CompletedProcess(
            [sys.executable, job["script"], *job["args"]],
            returncode,
            self.read(number, "stdout", errors),
            self.read(number, "stderr", errors),
        )

    def read(self, number, part, errors="strict"):
        """What a run wrote so far to its "stdout" or "stderr"."""
        return self._files(number)[part].read_text(encoding="utf-8", errors=errors)

    def pid(self, number, timeout=120):
        """The process id of a run (also its process group: a run is a session of its own), once
        it has started; for a test that signals it, as a Ctrl-C in the terminal would."""
        if not self.forking:
            return self.jobs[number][1].pid
        self._wait_for(number, timeout, until=self.pids)
        return self.pids[number]

    def output_file(self, number):
        """The file a run's stdout goes to, as it is written."""
        return self._files(number)["stdout"]

    def _files(self, number):
        job = self.jobs[number] if self.forking else self.jobs[number][0]
        return {part: Path(job[part]) for part in ("stdout", "stderr")}

    def stop(self, number):
        """Stop a run that has started, and whatever it started (its process group)."""
        if not self.forking:
            process = self.jobs[number][1]
            if hasattr(os, "killpg"):
                _kill_group(process.pid)
            else:
                process.kill()
        elif number in self.pids:
            _kill_group(self.pids[number])

    def _wait_for(self, number, timeout, until=None):
        """Read the runner's reports until this run has ended (or, with until=self.pids, has
        started). Threads may wait side by side: one reads (without the lock, so that others
        may start runs meanwhile) and wakes the others at each report; they wait their turn."""
        until = self.ended if until is None else until
        deadline = time.monotonic() + timeout
        stream = self.process.stdout.fileno()
        with self.reports:
            while number not in until:
                left = deadline - time.monotonic()
                if left <= 0:
                    self.stop(number)
                    raise TimeoutError(
                        f"run {self.jobs[number]['args']} did not end within {timeout} s"
                    )
                if self.reading:  # another thread reads: it wakes this one at its next report
                    self.reports.wait(left)
                    continue
                self.reading = True
                self.lock.release()
                try:
                    chunk = (os.read(stream, 65536) if select.select([stream], [], [], left)[0]
                             else None)
                finally:
                    self.lock.acquire()
                    self.reading = False
                    self.reports.notify_all()
                if chunk == b"":
                    raise RuntimeError("the runner process ended early")
                if chunk:
                    self.unread = take_reports(self.unread + chunk, self.pids, self.ended)

    def close(self):
        """End the runner process, once the runs have ended (after 30 s, it is stopped and runs
        still going on go on)."""
        if self.forking:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process.stdout.close()


# ---- one runner a process shares --------------------------------------------------------------

_shared = []  # the runner this process shares, once started
_shared_lock = threading.Lock()


def shared_runner():
    """The warm runner this process shares (the whole test session, a tool's whole run);
    started on first use, closed at exit, and its folder of the runs' files removed then
    (each test process and each stage check left one in the temporary folder)."""
    with _shared_lock:  # tests may start runs from several threads at once
        if not _shared:
            folder = tempfile.mkdtemp(prefix="chapter-runs-")
            atexit.register(shutil.rmtree, folder, ignore_errors=True)  # (after close: LIFO)
            _shared.append(Runner(folder))
            atexit.register(_shared[0].close)
    return _shared[0]


def run_chapter(name, *args, stdin="", cwd=None, timeout=120, env=None):
    """python <name>/code.py ARGS, as its own process; returns the CompletedProcess.

    The process is forked from the warm runner (course/warm.py), so it starts
    with anthropic already imported: the run is the same, seconds sooner.
    """
    runner = shared_runner()
    job = runner.start(ROOT / name / "code.py", *args, stdin=stdin, cwd=cwd or ROOT, env=env)
    return runner.result(job, timeout=timeout)


def take_reports(buffer, pids, ended):
    """Put the runner's reports in buffer's whole lines into pids ({"id", "pid"}: a run has
    started) and ended ({"id", "returncode"}); return the rest, a line still coming."""
    *lines, rest = buffer.split(b"\n")
    for report in map(json.loads, lines):
        if "pid" in report:
            pids[report["id"]] = report["pid"]
        else:
            ended[report["id"]] = report["returncode"]
    return rest


def _kill_group(group):
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        pass
