"""How much the warm runner saves: N chapter runs, one after another, cold and warm.

    .venv/bin/python -m tools.time_runner [N]      (prints the figures; asserts nothing)

Cold: `python s01_loop/code.py --help`, a fresh interpreter each time, as subprocess.run does.
Warm: the same runs forked from the warm runner (course/warm.py), which imported anthropic once.
"""

import subprocess
import sys
import tempfile
import time

from course import ROOT, offline_environment
from course.warm import Runner


def main(count):
    script = ROOT / "s01_loop" / "code.py"
    start = time.perf_counter()
    for _ in range(count):
        subprocess.run([sys.executable, script, "--help"], env=offline_environment(),
                       capture_output=True, check=True)
    cold = time.perf_counter() - start

    start = time.perf_counter()
    runner = Runner(tempfile.mkdtemp(prefix="time-runner-"))
    for _ in range(count):
        assert runner.result(runner.start(script, "--help")).returncode == 0
    runner.close()
    warm = time.perf_counter() - start
    print(f"{count} runs of s01_loop/code.py --help: cold {cold:.1f} s "
          f"({cold / count:.2f} s each), warm {warm:.1f} s, runner start included "
          f"({warm / count:.2f} s each)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
