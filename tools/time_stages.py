"""How long the stage checker takes: every stage against the last chapter, as a learner runs it.

    .venv/bin/python -m tools.time_stages [STAGE PROGRAM]      (prints the figures; asserts nothing)

Runs `python -m course.stages sNN sNN_x/code.py --json` for the last chapter, as a learner runs
it (the checker starts its warm runner, which imports anthropic once, and forks each exchange's
run from it) and prints its wall time, the CPU time of the checker and of the programs it ran,
and the load of the machine. The issue's budget: 15 s on a 2-core machine.
"""

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from course.chapters import CHAPTERS

ROOT = Path(__file__).resolve().parent.parent


def main(stage=CHAPTERS[-1][:3], program=f"{CHAPTERS[-1]}/code.py"):
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "course.stages", stage, program, "--json"],
                          cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    said = json.loads(done.stdout)
    passed = sum(check["passed"] for check in said["checks"])
    print(f"{stage} against {program}: {passed} of {len(said['checks'])} checks pass, "
          f"exit {done.returncode} (seed {said['seed']})")
    print(f"wall {wall:.1f} s (the checker says {said['seconds']:.1f} s); "
          f"CPU {used.ru_utime + used.ru_stime:.1f} s over {os.cpu_count()} cores; "
          f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
