"""What the full page check costs: web/check_pages.py on the build in web/dist/, timed by the
clock and by the CPU its processes used (Chromium, Playwright's driver, Python), which a busy
machine does not inflate as it does the clock.

    .venv/bin/python -m tools.time_page_check                  every page, as CI runs it
    .venv/bin/python -m tools.time_page_check --old PAGE ...   only these pages, and the same
                                                               with one Chromium and no block
                                                               left out (as before issue 57)

Prints the figures; asserts nothing. On 2 idle cores the check takes about its CPU seconds over 2
(two Chromiums at once, each a core). The estimate for more chapters
scales each kind of page by how many of it there would be (a chapter page per chapter, a compare
page per pair).
"""

import argparse
import math
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECK = ROOT / "web" / "check_pages.py"
LINE = re.compile(r"^(?P<page>\S+?)(?P<view>#\S*)? \[(?P<scheme>\w+)\]: (?P<seconds>[\d.]+) s")


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(arguments):
    """Run check_pages.py: (clock seconds, CPU seconds, its output)."""
    cpu, started = children_cpu(), time.perf_counter()
    done = subprocess.run([sys.executable, str(CHECK), *arguments], capture_output=True,
                          text=True)
    return time.perf_counter() - started, children_cpu() - cpu, done.stdout + done.stderr


def kind(page):
    name = Path(page).name
    return "compare" if name.startswith("compare-") else (
        "chapter" if re.match(r"s\d\d_", name) else "other")


def report(title, clock, cpu, output, chapters):
    lines = [found for found in map(LINE.match, output.splitlines()) if found]
    axe = {}
    for found in lines:
        axe[kind(found["page"])] = axe.get(kind(found["page"]), 0) + float(found["seconds"])
    pages = {found["page"] for found in lines}
    count = {name: sum(kind(page) == name for page in pages) for name in axe}
    print(f"{title}: {len(pages)} pages, {len(lines)} views: {clock:.0f} s by the clock, "
          f"{cpu:.0f} s of CPU; on 2 idle cores about {cpu / 2:.0f} s")
    for name in sorted(axe):
        print(f"  {name:8} {count[name]:3} pages, axe {axe[name]:6.0f} s "
              f"({axe[name] / max(count[name], 1):.1f} s a page)")
    if chapters and set(axe) >= {"chapter", "compare"}:
        now = max(count["chapter"] // 2, 1)
        factor = {"chapter": chapters / now,
                  "compare": math.comb(chapters, 2) / max(math.comb(now, 2), 1), "other": 1}
        share = {name: axe[name] / sum(axe.values()) for name in axe}
        scale = sum(share[name] * factor[name] for name in axe)
        print(f"  with {chapters} chapters: about {cpu / 2 * scale:.0f} s on 2 "
              f"idle cores ({scale:.2f} times)")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.time_page_check")
    parser.add_argument("pages", nargs="*")
    parser.add_argument("--old", action="store_true",
                        help="also the pages as checked before: one Chromium, nothing left out")
    parser.add_argument("--chapters", type=int, default=11, help="the estimate's chapters")
    args = parser.parse_args(argv)
    clock, cpu, output = timed(args.pages)
    report("now", clock, cpu, output, args.chapters)
    if args.old:
        clock, cpu, output = timed(["--jobs", "1", "--no-left-out", *args.pages])
        report("before", clock, cpu, output, args.chapters)


if __name__ == "__main__":
    main()
