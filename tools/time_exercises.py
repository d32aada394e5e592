"""What the proof of the exercises (tests/test_exercises.py) costs the suite.

    .venv/bin/python -m tools.time_exercises      (prints the figures; asserts nothing)

The chapter test modules are collected first, as in the whole suite (where importing them is
paid for anyway), and only the items of test_exercises.py run. The figures: the time its items
take (setup, call and teardown together), by kind of test; the CPU time of this process and of
the commands it started; the load of the machine, which the 2 cores share with other work.
"""

import os
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


class Durations:
    def __init__(self):
        self.by_kind = defaultdict(float)
        self.cpu_by_kind = defaultdict(float)
        self.items = 0

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item):
        before = sum(cpu())
        try:
            return (yield)
        finally:
            if "test_exercises.py" in item.nodeid:
                self.cpu_by_kind[item.originalname] += sum(cpu()) - before

    def pytest_runtest_logreport(self, report):
        if "test_exercises.py" in report.nodeid:
            self.by_kind[report.nodeid.split("::")[1].split("[")[0]] += report.duration
            self.items += report.when == "call"


def cpu():
    own, children = (resource.getrusage(who) for who in
                     (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def main():
    files = sorted(str(path) for path in (ROOT / "tests").glob("test_s0*.py"))
    durations = Durations()
    load_before = os.getloadavg()[0]
    start, (own_before, children_before) = time.perf_counter(), cpu()
    code = pytest.main(["-q", "-p", "no:cacheprovider", "-k", "test_exercises", *files,
                        str(ROOT / "tests" / "test_exercises.py")], plugins=[durations])
    wall = time.perf_counter() - start
    own, children = cpu()
    total = sum(durations.by_kind.values())
    print(f"\ntest_exercises.py: {durations.items} tests, exit code {code}; "
          f"their setup, call and teardown: {total:.2f} s")
    print(f"  (CPU time, this process and its commands: {sum(durations.cpu_by_kind.values()):.2f}"
          " s)")
    for kind, seconds in sorted(durations.by_kind.items(), key=lambda item: -item[1]):
        print(f"  {seconds:6.2f} s  (CPU {durations.cpu_by_kind[kind]:5.2f} s)  {kind}")
    reruns = sys.modules["test_exercises"].RERUNS
    print(f"the chapter tests run again in the solved copies: {reruns}")
    print(f"the whole run, collecting the chapter tests included: {wall:.1f} s wall, "
          f"CPU {own - own_before:.1f} s here and {children - children_before:.1f} s in commands")
    print(f"load average: {load_before:.1f} before, {os.getloadavg()[0]:.1f} after "
          f"(2 cores; above 2, other work slows these figures down)")


if __name__ == "__main__":
    main()
