"""What the site costs: the build, the weight of its pages, and axe-core on the largest pages.

    .venv/bin/python -m tools.time_site         (prints the figures; asserts nothing)

The build: as `python web/build.py` runs it (each recording a fresh interpreter), and as the
tests run it (the recordings forked from the warm runner; its start is timed apart, since the
suite has it running already). The pages: the three heaviest. axe-core: each view of the
largest page of each kind, as the tests check it (colour contrast on one element of each
kind) and in full (every element, as web/check_pages.py does), with the CPU time Chromium
spent, which a busy machine does not inflate as it does the wall-clock time.
"""

import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from course import ROOT
from course.warm import run_chapter
from tools.time_page_check import tree_cpu


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


build = load("site_build", ROOT / "web" / "build.py")
check = load("site_check", ROOT / "web" / "check_pages.py")


def cpu_seconds():
    """User and system time of this process's children and their children (Linux /proc)."""
    return sum(seconds for pid, seconds in tree_cpu(os.getpid()).items() if pid != os.getpid())


def warm_launch(script, args, stdin, cwd, env, timeout):
    return run_chapter(script.parent.name, *args, stdin=stdin, cwd=cwd, env=env, timeout=timeout)


def main():
    out = Path(tempfile.mkdtemp(prefix="time-site-"))
    started = time.perf_counter()
    subprocess.run([sys.executable, str(ROOT / "web" / "build.py"), "--out", str(out / "cold")],
                   check=True, capture_output=True)
    print(f"build, python web/build.py:        {time.perf_counter() - started:5.1f} s")
    started = time.perf_counter()
    run_chapter("s01_loop", "--help")
    print(f"the warm runner's start:            {time.perf_counter() - started:5.1f} s")
    started = time.perf_counter()
    build.build(out / "warm", launch=warm_launch)
    print(f"build, as the tests run it:         {time.perf_counter() - started:5.1f} s")
    started = time.perf_counter()
    build.build(out / "again", launch=warm_launch)
    print(f"the same again (highlighting kept): {time.perf_counter() - started:5.1f} s")
    started = time.perf_counter()
    build.search.index(out / "again")  # the build's last step, again: Pagefind over the pages
    print(f"of which the search index:          {time.perf_counter() - started:5.1f} s")

    site = out / "warm"
    weights = sorted(((page.stat().st_size, page.name) for page in site.glob("*.html")),
                     reverse=True)
    print("heaviest pages: " + ", ".join(f"{name} {size / 1024:.0f} KiB"
                                          for size, name in weights[:3]))

    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=check.CHROMIUM,
                                             args=check.CHROMIUM_ARGS)
        checker = check.Checker(browser)
        print(f"{'axe-core on':58} {'sampled':>15} {'full':>15}")
        for name in check.largest_pages(site):
            for view in check.views(site, name, every_step=False):
                figures = []
                for sampled in (True, False):
                    checker.page("light").goto("about:blank")  # then the page afresh
                    cpu = cpu_seconds()
                    result = checker.check(site, name, view, "light", sampled=sampled)
                    figures.append(f"{result.seconds:5.1f} s ({cpu_seconds() - cpu:4.1f} cpu)")
                print(f"{name + view:58} {figures[0]:>15} {figures[1]:>15}", flush=True)
        checker.close()
        browser.close()


if __name__ == "__main__":
    main()
