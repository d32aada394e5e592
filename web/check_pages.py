"""Check the built site with axe-core in Chromium: every page, in every view it has.

    python web/check_pages.py                 every page of web/dist/, English and Chinese
                                              (zh-CN/), light and dark
    python web/check_pages.py --out DIR       another build
    python web/check_pages.py --largest       only the largest page of each kind, in each
                                              language (the tests check these)
    python web/check_pages.py index.html zh-CN/s03_permissions.html ...   only these pages

Build the site first (python web/build.py). Each page is opened from the disk, and axe-core
(from the axe-playwright-python package) checks it in each view its JavaScript offers, since
axe sees only what is shown: a chapter's four tabs, both diff layouts, and every step of the
recorded run; a compare page in both layouts; each with every <details> open. It prints one
line per view, with the time axe took, and exits 1 if any view has a violation of serious or
critical impact (the lesser ones are printed too).

It checks each block once (BLOCKS): a code view, a diff, a message of the player, shown again
as it was in the same boxes (a Chinese page's Code tab and diffs are the English page's; step 5
shows the messages step 4 showed), is left out of the later views, which check the rest. Two
Chromiums check at once (--jobs), each a page and its Chinese counterpart together, the
largest first. Every page of both languages, light and dark: 1,386-1,639 s for 80 pages before,
in one Chromium checking every element of every view.

The browser tests (tests/test_web.py) run the same check on the largest page of each kind,
and on the largest Chinese chapter page and the Chinese home page; .ci/run runs this command
on every page of both languages. The Chinese pages are the English templates with other words
(and more of them marked lang="en"), and take about as long: every page of both languages took
369 s on this 2-core machine, the 23 Chinese pages 195 s of it.
"""

import argparse
import json
import multiprocessing
import os
import re
import sys
import time
from dataclasses import dataclass
from multiprocessing.managers import BaseManager
from pathlib import Path

WEB = Path(__file__).resolve().parent
# The course package (where each language's pages go) sits at the repository root, which is not
# on sys.path when this runs as `python web/check_pages.py`.
sys.path.insert(0, str(WEB.parent))
from course.translations import SITE_FOLDER  # noqa: E402  (after the sys.path line above)

DEFAULT_OUT = WEB / "dist"
# Debian's Chromium, headless: its old headless shell (package chromium-headless-shell, what
# Playwright itself runs for headless pages), which takes less CPU than the whole browser for
# the same pages (the suite's browser tests: about 38 s of CPU instead of 49); the browser
# (package chromium) where only it is installed.
CHROMIUMS = ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium")
CHROMIUM = next((path for path in CHROMIUMS if Path(path).exists()), CHROMIUMS[0])
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
BLOCKING = ("serious", "critical")  # the impacts that fail the check
KINDS = ("home", "chapter", "compare", "diff", "readme", "search")
SUBFOLDER = SITE_FOLDER  # where build.py puts each language's pages: "", "zh-CN/"


def kind_of(name):
    """The template a page is made from: home, chapter, compare (the picker), diff (a pair),
    readme (the course README) or search."""
    name = Path(name).name  # "zh-CN/index.html": a Chinese page, of the same template
    if name == "index.html":
        return "home"
    if name == "readme.html":
        return "readme"
    if name == "search.html":
        return "search"
    if name == "compare.html":
        return "compare"
    if name.startswith("compare-"):
        return "diff"
    return "chapter"


def pages_of(out, lang="en"):
    """The pages of one language, as paths from the top of the build ("zh-CN/index.html")."""
    folder = Path(out) / SUBFOLDER[lang]
    return sorted(f"{SUBFOLDER[lang]}{path.name}" for path in folder.glob("*.html"))


def largest_pages(out, lang="en"):
    """The largest page of each kind, in KINDS order."""
    by_kind = {}
    for name in pages_of(out, lang):
        size = (Path(out) / name).stat().st_size
        kind = kind_of(name)
        if kind not in by_kind or size > by_kind[kind][1]:
            by_kind[kind] = (name, size)
    return [by_kind[kind][0] for kind in KINDS if kind in by_kind]


def run_steps(text):
    """How many steps the recorded run of a chapter page has."""
    found = re.search(r'<script type="application/json" id="run-data">(.*?)</script>', text, re.S)
    return len(json.loads(found.group(1))["calls"]) if found else 0


def views(out, name, every_step=True):
    """The addresses (#...) that show each view of a page. A chapter's run: every step, or
    (every_step=False) the first step and the steps where the user answers in the terminal."""
    text = (Path(out) / name).read_text(encoding="utf-8")
    kind = kind_of(name)
    if kind == "diff":
        return ["#compare-unified", "#compare-split"]
    if kind != "chapter":
        return [""]
    found = ["#lesson", "#code"]
    if 'id="diff-split"' in text:
        found += ["#diff-unified", "#diff-split"]
    else:
        found.append("#diff")
    steps = run_steps(text)
    if every_step:
        chosen = range(1, steps + 1)
    else:
        data = json.loads(re.search(r'id="run-data">(.*?)</script>', text, re.S).group(1))
        chosen = [1] + [n for n, step in enumerate(data["steps"], 1) if step["events"] and n > 1]
    return found + [f"#step-{n}" for n in chosen]


@dataclass
class Result:
    page: str
    view: str
    scheme: str
    seconds: float
    violations: list  # (id, impact, number of nodes, first node's html)
    left_out: int = 0  # blocks checked in a view before (BLOCKS)

    @property
    def blocking(self):
        return [v for v in self.violations if v[1] in BLOCKING]

    def line(self):
        found = ", ".join(f"{v[0]} ({v[1]}, {v[2]} nodes)" for v in self.violations) or "ok"
        before = f" ({self.left_out} blocks checked before)" if self.left_out else ""
        return f"{self.page}{self.view} [{self.scheme}]: {self.seconds:.1f} s{before}: {found}"


# Go to another view of the page shown, and wait until the page has handled it.
SWITCH = """hash => new Promise(resolve => {
  if (location.hash === hash) { resolve(); return; }
  addEventListener("hashchange", () => resolve(), { once: true });
  location.hash = hash;
})"""


# Colour contrast is what axe spends its time on: about 3 ms of CPU for each element that holds
# text, and a page of highlighted code has thousands of them. An element's contrast follows
# from its own colour and font and from the backgrounds and opacity of the elements it sits in;
# two elements alike in all of that, with the same tags and classes all the way up, have the
# same contrast. So the sampled check gives axe's contrast rule one element of each such kind
# (an element inside it is a kind of its own); every other rule sees the whole view.
SAMPLE = """() => {
  const kinds = new Map();
  const holdsText = (element) => Array.from(element.childNodes).some(
    (node) => node.nodeType === Node.TEXT_NODE && node.textContent.trim());
  // What an element sits in, from it up to the root: each ancestor's part is worked out once
  // (a page of code has thousands of lines in the same few boxes).
  const chains = new Map();
  const chain = (up) => {
    if (!up) return "";
    if (!chains.has(up)) {
      const style = getComputedStyle(up);
      const part = [`${up.tagName}.${Array.from(up.classList).sort().join(".")}`,
                    style.backgroundColor, style.backgroundImage, style.opacity].join("|");
      chains.set(up, up.parentElement ? `${part}|${chain(up.parentElement)}` : part);
    }
    return chains.get(up);
  };
  for (const element of document.body.querySelectorAll("*")) {
    if (!holdsText(element) || !element.checkVisibility({ visibilityProperty: true })) continue;
    const own = getComputedStyle(element);
    const kind = [own.color, own.fontSize, own.fontWeight, own.textShadow, chain(element)]
      .join("|");
    if (!kinds.has(kind)) kinds.set(kind, element);
  }
  Array.from(kinds.values()).forEach((element, n) => element.setAttribute("data-axe-sample", n));
  return kinds.size;
}"""
UNSAMPLE = """() => document.querySelectorAll("[data-axe-sample]").forEach(
  (element) => element.removeAttribute("data-axe-sample"))"""

# The blocks of a view that another view checked already, as they are (the same HTML inside,
# in boxes of the same tags, ids, classes, backgrounds and opacity all the way up, in the same
# colour scheme): the Code tab and the diffs of a Chinese page are the English page's, and the
# player shows step after step the messages it showed before. axe leaves them out of a view
# when a view before it saw them whole; what it found in them, it found there.
BLOCKS = (".rows, .rows .lines > code > *, #step-view .message, div.hl, pre.terminal, .chart, "
          ".lesson table")  # (a run of lines of one kind in a diff: most pairs share some)
FINGERPRINTS = """(selector) => {
  const hash = (text) => {  // FNV-1a, 53 bits: a fingerprint, not a secret
    let h1 = 0x811c9dc5, h2 = 0x01000193;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 16777619) >>> 0;
      h2 = Math.imul(h2 ^ c, 2246822519) >>> 0;
    }
    return (h2 & 0x1fffff) * 4294967296 + h1;
  };
  const chains = new Map();  // each box's part worked out once (a diff has thousands of runs)
  const chain = (up) => {
    if (!up) return "";
    if (!chains.has(up)) {
      const style = getComputedStyle(up);
      chains.set(up, `${up.tagName}#${up.id}.${Array.from(up.classList).sort().join(".")}|` +
                     `${style.backgroundColor}|${style.backgroundImage}|${style.opacity}>` +
                     chain(up.parentElement));
    }
    return chains.get(up);
  };
  return Array.from(document.querySelectorAll(selector)).map((block) =>
    block.checkVisibility({ visibilityProperty: true })
      ? `${hash(block.className + "|" + block.innerHTML)}:${hash(chain(block))}:` +
        `${block.innerHTML.length}` : "");
}"""
MARK_SEEN = """([selector, indices]) => {
  const blocks = document.querySelectorAll(selector);
  for (const index of indices) blocks[index].setAttribute("data-axe-seen", "");
}"""
UNMARK_SEEN = """() => document.querySelectorAll("[data-axe-seen]").forEach(
  (block) => block.removeAttribute("data-axe-seen"))"""

# What axe.run is asked for: the violations (of the other results it keeps one node each), no
# CSS selector made for each node found (a line names its HTML), and no preload: axe would fetch
# the page's style sheets for css-orientation-lock, which a page opened from the disk refuses
# (file://), and then run without them, as it does with preload off. The same results, with
# less of axe's own work (about 6 % of a run on a page of code).
OPTIONS = {"resultTypes": ["violations"], "selectors": False, "preload": False}


class Seen:
    """The blocks checked, by colour scheme, shared by the workers (a manager serves it)."""

    def __init__(self):
        self.found = {}

    def known(self, scheme, prints):
        return self.note(self.found.setdefault(scheme, set()), prints)

    @staticmethod
    def note(found, prints):
        """The indices of the fingerprints in `found`; all of them are in it after."""
        known = [index for index, one in enumerate(prints) if one and one in found]
        found.update(one for one in prints if one)
        return known


class SeenManager(BaseManager):
    pass


SeenManager.register("Seen", Seen)


class Checker:
    """One Chromium, one page per colour scheme, axe-core injected after each navigation."""

    def __init__(self, browser):
        from axe_playwright_python.sync_playwright import Axe

        self.axe = Axe()
        self.browser = browser
        self.pages = {}

    def page(self, scheme):
        if scheme not in self.pages:
            context = self.browser.new_context(viewport={"width": 1280, "height": 900},
                                               color_scheme=scheme)
            self.pages[scheme] = context.new_page()
        return self.pages[scheme]

    def check(self, out, name, view="", scheme="light", sampled=False, seen=None):
        """axe-core on one view of one page: its violations, and the time axe took.

        sampled=True checks colour contrast on one element of each kind (see SAMPLE) and
        every other rule on the whole view, as the browser tests do; False checks it all.
        With `seen`, the blocks' fingerprints checked before (see BLOCKS: a set, of this scheme,
        or a Seen), the blocks of this view in it are left out, and the others added to it."""
        page = self.page(scheme)
        url = (Path(out).resolve() / name).as_uri()
        if page.url.split("#")[0] != url:
            page.goto(url + view)
        else:  # the same page: the address alone switches the view, as a link would
            page.evaluate(SWITCH, view or "#")
        # What a click shows is checked too: every <details> open (the system prompt, the
        # messages folded away, the numbers of the chart).
        page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
        page.evaluate("() => new Promise(requestAnimationFrame)")
        started = time.perf_counter()
        left_out = 0
        if seen is not None:
            prints = page.evaluate(FINGERPRINTS, BLOCKS)
            known = (Seen.note(seen, prints) if isinstance(seen, set)  # of one scheme
                     else seen.known(scheme, prints))  # a Seen, shared by the workers
            if known:
                page.evaluate(MARK_SEEN, [BLOCKS, known])
                left_out = len(known)
        exclude = "[data-axe-seen]" if left_out else None
        if sampled:
            page.evaluate(SAMPLE)
            # One run: colour contrast sees only the samples, every other rule the whole view
            # (a second run would build axe's tree of the page again, a third of the time).
            found = self.run(page, options=OPTIONS, contrast_of="[data-axe-sample]",
                             exclude=exclude)
            page.evaluate(UNSAMPLE)
        else:
            found = self.run(page, options=OPTIONS, exclude=exclude)
        if left_out:
            page.evaluate(UNMARK_SEEN)
        seconds = time.perf_counter() - started
        violations = [(v["id"], v["impact"], len(v["nodes"]), v["nodes"][0]["html"][:120])
                      for v in found]
        return Result(name, view, scheme, seconds, violations, left_out)

    def run(self, page, options, contrast_of=None, exclude=None):
        """axe.run in the page (the package's Axe.run, with the options given as JSON); with
        `contrast_of`, a CSS selector, the colour-contrast rule checks only what it selects;
        with `exclude`, one, axe leaves out what it selects."""
        if not page.evaluate("typeof axe !== 'undefined'"):  # once after each navigation
            page.evaluate(self.axe.axe_script)
        script = """async ([options, contrastOf, exclude]) => {
          if (contrastOf) axe.configure({rules: [{id: "color-contrast", selector: contrastOf}]});
          const context = exclude ? { exclude: [exclude] } : document;
          try { return await axe.run(context, options); } finally { axe.reset(); }
        }"""
        return page.evaluate(script, [options, contrast_of, exclude])["violations"]

    def close(self):
        for page in self.pages.values():
            page.context.close()


def tasks_of(names, out):
    """The pages in tasks for the workers, the largest first: a page and its counterpart in the
    other languages together (they share their code and diffs, checked once: BLOCKS)."""
    groups = {}
    for name in names:
        groups.setdefault(Path(name).name, []).append(name)
    return sorted(groups.values(), key=lambda group: -sum(
        (Path(out) / name).stat().st_size for name in group))


def worker(tasks, results, out, schemes, every_step, sampled, seen, left_out=True):
    """One Chromium: checks each task's pages, view by view, until it gets None. `seen`: the
    blocks checked by every worker (a Seen, through its manager)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        checker = Checker(browser)
        for task in iter(tasks.get, None):
            lines = [checker.check(out, name, view, scheme, sampled, seen if left_out else None)
                     for name in task for scheme in schemes
                     for view in views(out, name, every_step=every_step)]
            results.put(lines)
        checker.close()
        browser.close()
    results.put(None)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python web/check_pages.py",
                                     description="Check the built site with axe-core.")
    parser.add_argument("pages", nargs="*", help="pages to check (default: every page)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="the build to check (default: web/dist)")
    parser.add_argument("--largest", action="store_true",
                        help="only the largest page of each kind, as the tests check them")
    parser.add_argument("--light-only", action="store_true", help="skip the dark colour scheme")
    parser.add_argument("--sampled", action="store_true",
                        help="colour contrast on one element of each kind (as the tests do)")
    parser.add_argument("--no-left-out", action="store_true",
                        help="check every block in every view, as shown before (slower)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="how many Chromiums check pages at once (default: 2, or 1 on one "
                             "core)")
    args = parser.parse_args(argv)
    if not (args.out / "index.html").is_file():
        print(f"check_pages.py: no site in {args.out}: build it first (python web/build.py)",
              file=sys.stderr)
        return 2
    pick = largest_pages if args.largest else pages_of
    names = args.pages or [name for lang in SUBFOLDER for name in pick(args.out, lang)]
    schemes = ["light"] if args.light_only else ["light", "dark"]
    started = time.perf_counter()
    context = multiprocessing.get_context("spawn")  # each worker starts its own Playwright
    tasks, results = context.Queue(), context.Queue()
    jobs = max(1, min(args.jobs, len(names)))
    for task in tasks_of(names, args.out):
        tasks.put(task)
    for _ in range(jobs):
        tasks.put(None)
    manager = SeenManager(ctx=context)
    manager.start()
    seen = manager.Seen()
    workers = [context.Process(target=worker, args=(tasks, results, args.out, schemes,
                                                    not args.largest, args.sampled, seen,
                                                    not args.no_left_out))
               for _ in range(jobs)]
    for process in workers:
        process.start()
    failed = views_checked = left_out = 0
    running = jobs
    while running:
        lines = results.get()
        if lines is None:
            running -= 1
            continue
        for result in lines:
            print(result.line(), flush=True)
            failed += bool(result.blocking)
            views_checked += 1
            left_out += bool(result.left_out)
    for process in workers:
        process.join()
    manager.shutdown()
    if any(process.exitcode for process in workers):
        print("check_pages.py: a worker stopped with an error", file=sys.stderr)
        return 2
    print(f"{len(names)} pages, {views_checked} views checked in "
          f"{time.perf_counter() - started:.0f} s by {jobs} Chromium{'s' if jobs > 1 else ''} "
          f"({left_out} views left out blocks checked before): "
          f"{failed} view{'s' if failed != 1 else ''} with serious or critical violations")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
