"""How long the whole suite takes, and where: wall, CPU, each file and each process.

    .venv/bin/python -m tools.time_suite [PYTEST ARGS...]     (prints the figures; asserts nothing)

Runs the README's test command (`pytest -n 2`) as a child, with a small plugin in the
controller that notes, for every test's report, its file, the process that ran it and the time
it took (setup + call + teardown, as `--durations=0` sums them) and when the report came in.
Prints the wall time, the CPU time of the suite and everything it started (user + sys), the load
of the machine before and after, each file's time (longest first) and each process's files in
the order it ran them, with the time it finished its last one; and, every 5 s, the cores each
test process used with all it started (from /proc, twice a second), and the file it was in.
"""

import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class Recorder:
    """The controller's plugin: one line per report, written when the session ends."""

    def __init__(self, out):
        self.out = out
        self.start = time.perf_counter()
        self.rows = []

    def pytest_runtest_logreport(self, report):
        node = getattr(report, "node", None)
        worker = node.gateway.id if node is not None else "main"
        self.rows.append([report.nodeid.split("::")[0], worker, report.when, report.duration,
                          time.perf_counter() - self.start])

    def pytest_sessionfinish(self):
        Path(self.out).write_text(json.dumps(self.rows))


def child(out, args):
    import pytest

    sys.exit(pytest.main(args, plugins=[Recorder(out)]))


def processes():
    """{pid: (ppid, CPU seconds of it and of its children it has waited for)} from /proc."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            ticks = sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
            found[int(entry)] = (int(fields[1]), ticks / os.sysconf("SC_CLK_TCK"))
    return found


def sample(root, samples, done):
    """Every 0.5 s: (time, {test process: CPU seconds of it and all below it}), the test
    processes being the children of `root` (pytest's controller)."""
    start = time.perf_counter()
    while not done.wait(0.5):
        table = processes()
        below = {}
        for pid, (ppid, _) in table.items():
            below.setdefault(ppid, []).append(pid)
        workers = below.get(root, [])

        def total(pid, table=table, below=below):
            return table[pid][1] + sum(total(child) for child in below.get(pid, []))
        samples.append((time.perf_counter() - start, {pid: total(pid) for pid in workers}))


def timeline(samples, rows):
    """Each test process's cores in use, every 5 s, beside the file it was reporting on."""
    pids = sorted({pid for _, used in samples for pid in used})
    names = {pid: f"gw{number}" for number, pid in enumerate(pids)}  # started in this order
    print("cores used (5 s steps):    " + "   ".join(names[pid] for pid in pids))
    step, last = 5.0, (0.0, {})
    for when, used in samples:
        if when - last[0] >= step or (when, used) == samples[-1]:
            spent = when - last[0]
            shares = [(used.get(pid, 0) - last[1].get(pid, used.get(pid, 0))) / spent
                      for pid in pids]
            files = sorted({Path(path).name for path, _, _, _, at in rows
                            if last[0] <= at < when})
            print(f"  {last[0]:5.0f}-{when:3.0f} s   " + "   ".join(f"{share:4.2f}"
                  for share in shares) + "   " + ", ".join(files)[:120])
            last = (when, used)


def main(args):
    with tempfile.TemporaryDirectory(prefix="time-suite-") as scratch:
        out = os.path.join(scratch, "rows.json")
        load = os.getloadavg()
        start = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-c",
                                    "import sys; from tools.time_suite import child; "
                                    "child(sys.argv[1], sys.argv[2:])",
                                    out, "-n", "2", "-p", "no:cacheprovider", *args],
                                   cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        samples, ended = [], threading.Event()
        sampler = threading.Thread(target=sample, args=(process.pid, samples, ended))
        sampler.start()
        stdout, stderr = process.communicate()
        wall = time.perf_counter() - start
        ended.set()
        sampler.join()
        done = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        rows = json.loads(Path(out).read_text()) if os.path.exists(out) else []
    print(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-2000:])
    print(f"wall {wall:.1f} s   cpu {used.ru_utime + used.ru_stime:.1f} s "
          f"(user {used.ru_utime:.1f}, sys {used.ru_stime:.1f})   "
          f"load before {load[0]:.2f}, after {os.getloadavg()[0]:.2f}")
    per_file = defaultdict(float)
    order = defaultdict(list)
    last = defaultdict(float)
    for path, worker, _, seconds, when in rows:
        per_file[path] += seconds
        if path not in order[worker]:
            order[worker].append(path)
        last[worker] = max(last[worker], when)
    print("per file (setup + call + teardown):")
    for path, seconds in sorted(per_file.items(), key=lambda item: -item[1]):
        print(f"  {seconds:6.1f}  {path}")
    for worker in sorted(order):
        total = sum(per_file[path] for path in order[worker])
        print(f"{worker}: tests {total:.1f} s, last report at {last[worker]:.1f} s: "
              + ", ".join(Path(path).name for path in order[worker]))
    timeline(samples, rows)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
