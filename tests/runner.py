"""A warm runner: many `python sNN/code.py ARGS` runs for the price of one `import anthropic`.

`import anthropic` costs 1.5-3 s on a small machine, and the suite runs the
chapters as a learner does, dozens of times. The runner process imports
anthropic once and forks a fresh process per run: each run still is its own
process with its own argv, cwd, environment, stdin, stdout, stderr and exit
status, running code.py as __main__. Where os.fork is missing it falls back
to plain subprocesses.
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

# The runner process reads one job (JSON) per line. For each it forks a monitor,
# which forks the run, reports {"id", "pid"} at once and {"id", "returncode"} (as
# subprocess would give it) when the run ends. Runs go on side by side.
RUNNER = r'''
import io, json, os, runpy, signal, sys, tempfile, traceback
import anthropic  # noqa: F401  (the slow import, paid once: every run starts with it done)

signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps finished monitors
report = sys.stdout.buffer


def run(job):
    """Become `python SCRIPT ARGS` with the job's cwd, environment and files."""
    os.setsid()  # its own process group, so a run that hangs can be stopped whole
    os.chdir(job["cwd"])
    os.environ.clear()
    os.environ.update(job["env"])
    tempfile.tempdir = None  # follow the job's TMPDIR
    for fd, name, flags in ((0, "stdin", os.O_RDONLY), (1, "stdout", os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                            (2, "stderr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
        opened = os.open(job[name], flags, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", write_through=True)
    sys.argv = [job["script"], *job["args"]]
    sys.path[0] = os.path.dirname(job["script"])
    try:
        runpy.run_path(job["script"], run_name="__main__")
        return 0
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0
        print(stop.code, file=sys.stderr)
        return 1
    except BaseException:
        traceback.print_exc()
        return 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()


for line in sys.stdin:
    job = json.loads(line)
    if os.fork() == 0:  # the monitor
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = run(job)
            finally:
                os._exit(code)
        report.write((json.dumps({"id": job["id"], "pid": pid}) + "\n").encode())
        report.flush()
        _, status = os.waitpid(pid, 0)
        report.write((json.dumps({"id": job["id"], "returncode": os.waitstatus_to_exitcode(status)}) + "\n").encode())
        report.flush()
        os._exit(0)
'''


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
            self.process = subprocess.Popen([sys.executable, "-c", RUNNER], cwd=ROOT, env=clean_env(),
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def start(self, script, *args, stdin="", cwd=ROOT, env=None):
        number = next(self.numbers)  # itertools.count is safe to share between threads
        files = {part: self.folder / f"{number}.{part}" for part in ("stdin", "stdout", "stderr")}
        files["stdin"].write_text(stdin)
        job = {"id": number, "script": str(script), "args": [str(arg) for arg in args], "cwd": str(cwd),
               "env": env or clean_env(), **{part: str(path) for part, path in files.items()}}
        if self.forking:
            with self.lock:
                self.jobs[number] = job
                self.process.stdin.write((json.dumps(job) + "\n").encode())
                self.process.stdin.flush()
        else:  # no fork (Windows): a plain subprocess, slower
            with files["stdin"].open() as i, files["stdout"].open("w") as o, files["stderr"].open("w") as e:
                self.jobs[number] = job, subprocess.Popen([sys.executable, job["script"], *job["args"]],
                                                          cwd=cwd, env=job["env"], stdin=i, stdout=o, stderr=e)
        return number

    def result(self, number, timeout=120):
        if self.forking:
            self._wait_for(number, timeout)
            job, returncode = self.jobs[number], self.ended[number]
        else:
            job, process = self.jobs[number]
            returncode = process.wait(timeout)
        return subprocess.CompletedProcess(
            [sys.executable, job["script"], *job["args"]], returncode,
            Path(job["stdout"]).read_text(encoding="utf-8"), Path(job["stderr"]).read_text(encoding="utf-8"))

    def _wait_for(self, number, timeout):
        """Read the runner's reports until this run has ended. Threads may wait side by side."""
        deadline = time.monotonic() + timeout
        stream = self.process.stdout.fileno()
        while True:
            with self.lock:
                if number in self.ended:
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    if number in self.pids:  # stop the run and whatever it started
                        try:
                            os.killpg(self.pids[number], signal.SIGKILL)
                        except ProcessLookupError:
                            pass
                    raise TimeoutError(f"run {self.jobs[number]['args']} did not end within {timeout} s")
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
