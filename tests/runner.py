"""A warm runner: many `python sNN/code.py ARGS` runs for the price of one `import anthropic`.

`import anthropic` costs 1.5-3 s on a small machine, and the suite runs the
chapters as a learner does, dozens of times. The runner process imports
anthropic once and forks a fresh process per run: each run still is its own
process with its own argv, cwd, environment, stdin, stdout, stderr and exit
status, running code.py as __main__. Where os.fork is missing it falls back
to plain subprocesses.

Saves about 1.4 s per run: 10 runs of s01 --help, 15.9 s cold vs 1.9 s warm (tools/time_runner.py).
"""

import itertools
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from support import ROOT, clean_env

# The runner process (tests/warm_runner.py) reads one job (JSON) per line and reports
# {"id", "pid"} when a run starts and {"id", "returncode"} when it ends.
WARM_RUNNER = Path(__file__).resolve().with_name("warm_runner.py")  # run as a script


class Runner:
    """Start `python SCRIPT ARGS` runs at once; collect each as a CompletedProcess."""

    def __init__(self, folder):
        self.folder = Path(folder)
        self.numbers = itertools.count(1)
        self.jobs = {}
        self.pids = {}
        self.ended = {}
        self.unread = b""
        self.lock = threading.Lock()
        self.forking = hasattr(os, "fork")
        if self.forking:
            self.process = subprocess.Popen(
                [sys.executable, str(WARM_RUNNER)],
                cwd=ROOT,
                env=clean_env(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )

    def start(self, script, *args, stdin="", cwd=ROOT, env=None):
        number = next(self.numbers)  # itertools.count is safe to share between threads
        files = {part: self.folder / f"{number}.{part}" for part in ("stdin", "stdout", "stderr")}
        files["stdin"].write_text(stdin)
        job = {
            "id": number,
            "script": str(script),
            "args": [str(arg) for arg in args],
            "cwd": str(cwd),
            "env": env or clean_env(),
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
                        cwd=cwd,
                        env=job["env"],
                        stdin=i,
                        stdout=o,
                        stderr=e,
                    ),
                )
        return number

    def result(self, number, timeout=120):
        if self.forking:
            self._wait_for(number, timeout)
            job, returncode = self.jobs[number], self.ended[number]
        else:
            job, process = self.jobs[number]
            returncode = process.wait(timeout)
        return subprocess.CompletedProcess(
            [sys.executable, job["script"], *job["args"]],
            returncode,
            Path(job["stdout"]).read_text(encoding="utf-8"),
            Path(job["stderr"]).read_text(encoding="utf-8"),
        )

    def pid(self, number, timeout=120):
        """The process id of a run (also its process group: a run is a session of its own), once
        it has started; for a test that signals it, as a Ctrl-C in the terminal would."""
        if not self.forking:
            return self.jobs[number][1].pid
        self._wait_for(number, timeout, until=self.pids)
        return self.pids[number]

    def output_file(self, number):
        """The file a run's stdout goes to, as it is written."""
        job = self.jobs[number] if self.forking else self.jobs[number][0]
        return Path(job["stdout"])

    def _wait_for(self, number, timeout, until=None):
        """Read the runner's reports until this run has ended (or, with until=self.pids, has
        started). Threads may wait side by side."""
        until = self.ended if until is None else until
        deadline = time.monotonic() + timeout
        stream = self.process.stdout.fileno()
        while True:
            with self.lock:
                if number in until:
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    if number in self.pids:  # stop the run and whatever it started
                        try:
                            os.killpg(self.pids[number], signal.SIGKILL)
                        except ProcessLookupError:
                            pass
                    raise TimeoutError(
                        f"run {self.jobs[number]['args']} did not end within {timeout} s"
                    )
                if not select.select([stream], [], [], min(left, 0.05))[0]:
                    continue
                chunk = os.read(stream, 65536)
                if not chunk:
                    raise RuntimeError("the runner process ended early")
                *lines, self.unread = (self.unread + chunk).split(b"\n")
                for line in map(json.loads, lines):
                    if "pid" in line:
                        self.pids[line["id"]] = line["pid"]
                    else:
                        self.ended[line["id"]] = line["returncode"]

    def close(self):
        if self.forking:
            self.process.stdin.close()
            self.process.wait(timeout=30)
            self.process.stdout.close()
