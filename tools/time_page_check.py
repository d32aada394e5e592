"""What the full page check costs: web/check_pages.py on the build in web/dist/, timed by the
clock and by the CPU its processes used (Chromium, Playwright's driver, Python), which a busy
machine does not inflate as it does the clock.

    .venv/bin/python -m tools.time_page_check                  every page, as CI runs it
    .venv/bin/python -m tools.time_page_check --old PAGE ...   only these pages, and the same
                                                               with one Chromium and no block
                                                               left out (as before issue 57)

Prints the figures; asserts nothing. On 2 idle cores the check takes about its CPU seconds over
the Chromiums it ran at once (each keeps a core busy), at most 2. The estimate for more chapters
scales each kind of page by how many of it there would be (a chapter page per chapter, a compare
page per pair).
"""

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECK = ROOT / "web" / "check_pages.py"
LINE = re.compile(r"^(?P<page>\S+?)(?P<view>#\S*)? \[(?P<scheme>\w+)\]: (?P<seconds>[\d.]+) s")


def tree_cpu(root):
    """{pid: CPU seconds} of `root` and every process under it (Linux /proc: Chromium's
    processes are not reaped up to us, so RUSAGE_CHILDREN misses them)."""
    parents, times = {}, {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(pid)] = int(fields[1])
        times[int(pid)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    mine, changed = {root}, True
    while changed:
        changed = False
        for pid, parent in parents.items():
            if parent in mine and pid not in mine:
                mine.add(pid)
                changed = True
    return {pid: times[pid] for pid in mine if pid in times}


def timed(arguments):
    """Run check_pages.py: (clock seconds, CPU seconds, its output). The CPU is read every
    half second: a process that ends between two readings loses at most its last half second."""
    spent, started = {}, time.perf_counter()
    with tempfile.TemporaryFile("w+") as output:
        process = subprocess.Popen([sys.executable, str(CHECK), *arguments], stdout=output,
                                   stderr=subprocess.STDOUT, text=True)
        while process.poll() is None:
            for pid, seconds in tree_cpu(process.pid).items():
                spent[pid] = max(spent.get(pid, 0), seconds)
            time.sleep(0.5)
        output.seek(0)
        return time.perf_counter() - started, sum(spent.values()), output.read()


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
    jobs = re.search(r"by (\d+) Chromium", output)
    cores = min(2, int(jobs[1]) if jobs else 2)  # a Chromium keeps at most one core busy
    print(f"{title}: {len(pages)} pages, {len(lines)} views: {clock:.0f} s by the clock, "
          f"{cpu:.0f} s of CPU; on 2 idle cores about {cpu / cores:.0f} s")
    flagged = [line for line in output.splitlines() if LINE.match(line)
               and not line.endswith(": ok")]
    print("  check_pages.py: " + (output.strip().splitlines() or [""])[-1])
    print(f"  views with any violation: {len(flagged)}" + "".join(
        f"\n    {line}" for line in flagged[:10]))
    for name in sorted(axe):
        print(f"  {name:8} {count[name]:3} pages, axe {axe[name]:6.0f} s "
              f"({axe[name] / max(count[name], 1):.1f} s a page)")
    if chapters and set(axe) >= {"chapter", "compare"}:
        now = max(count["chapter"] // 2, 1)
        factor = {"chapter": chapters / now,
                  "compare": math.comb(chapters, 2) / max(math.comb(now, 2), 1), "other": 1}
        share = {name: axe[name] / sum(axe.values()) for name in axe}
        scale = sum(share[name] * factor[name] for name in axe)
        print(f"  with {chapters} chapters: about {cpu / cores * scale:.0f} s on 2 "
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
