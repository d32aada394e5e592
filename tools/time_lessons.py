"""How long the lesson tests take: tests/test_lessons.py, as pytest runs it, and its parts.

    .venv/bin/python -m tools.time_lessons      (prints the figures; asserts nothing)

Prints the wall time of `python -m pytest tests/test_lessons.py` (interpreter start and
`import anthropic` included), the time pytest reports, and the slowest tests (the command runs
are all made in the setup of the first command test, the module fixture `outcomes`).
"""

import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main():
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--durations=0",
         "--durations-min=0", "tests/test_lessons.py"],
        cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    lines = result.stdout.splitlines()
    summary = next((line for line in reversed(lines) if re.search(r"\d+ (passed|failed)", line)),
                   "(no summary)")
    timed = [line for line in lines if re.match(r"\d+\.\d+s (setup|call|teardown)", line)]
    total = sum(float(line.split("s ", 1)[0]) for line in timed)
    print(f"tests/test_lessons.py: {total:.1f} s in its tests (setup, calls, teardown), "
          f"{wall:.1f} s wall with the interpreter, pytest's plugins and `import anthropic`")
    print(f"pytest: {summary.strip('= ')}")
    for line in timed[:5]:
        print(f"  {line}")


if __name__ == "__main__":
    main()
