"""Measure the figures the documents state, print them, and with --write put them in the pages.

    .venv/bin/python -m tools.figures [--write] [--only suite|stages|site ...]

suite: the README's test command (`pytest -n 2`): how many tests passed, and its wall time.
stages: `python -m course.stages sNN sNN_x/code.py` for the last chapter, every stage, wall time.
site: `python web/build.py` into a scratch folder, wall time.

Each runs once, as a learner would run it, on this machine: run it on a quiet machine (the load
average is printed; above the number of cores, other work inflates the figures). The markers
and the wording are course/figures.py's.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from course.chapters import CHAPTERS
from course.figures import FIGURE, with_figures
from course.translations import LANGUAGE

ROOT = Path(__file__).resolve().parent.parent
PAGES = {ROOT / "README.md": "en", ROOT / "README.zh-CN.md": LANGUAGE,
         ROOT / "CONTRIBUTING.md": "en"}


def timed(command):
    """(seconds, stdout) of one run of command from the repository root; exits if it fails."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"figures: {' '.join(command)} failed (exit {done.returncode}):\n"
                 f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return seconds, done.stdout


def suite():
    seconds, said = timed([sys.executable, "-m", "pytest", "-n", "2", "-p",
                           "no:cacheprovider"])
    passed = re.findall(r"(\d+) passed", said)  # pytest's summary is the last to say it
    return {"tests": int(passed[-1]), "seconds": seconds}


def stages():
    last = CHAPTERS[-1]
    seconds, _ = timed([sys.executable, "-m", "course.stages", last[:3], f"{last}/code.py"])
    return {"seconds": seconds}


def site():
    with tempfile.TemporaryDirectory(prefix="figures-site-") as out:
        seconds, _ = timed([sys.executable, "web/build.py", "--out", out])
    return {"seconds": seconds}


MEASURES = {"suite": suite, "stages": stages, "site": site}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.figures", description=__doc__.split(
        "\n")[0])
    parser.add_argument("--write", action="store_true", help="put the figures in the pages")
    parser.add_argument("--only", nargs="+", choices=sorted(MEASURES), default=list(MEASURES))
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    values = {}
    for name in args.only:
        values[name] = MEASURES[name]()
        print(f"{name}: {values[name]}")
    if args.write:
        for page, language in PAGES.items():
            text = page.read_text(encoding="utf-8")
            new = with_figures(text, values, language)
            if new != text:
                page.write_text(new, encoding="utf-8")
                names = sorted({found["name"] for found in FIGURE.finditer(text)} & set(values))
                print(f"wrote {', '.join(names)} in {page.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
