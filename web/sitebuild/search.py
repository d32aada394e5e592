"""The search of the site: Pagefind's index of the lessons and the code, in both languages.

Pagefind (the pagefind-bin-extended binary from PyPI: the extended one segments Chinese)
reads the built pages and writes its index into pagefind/ beside them. It runs offline.
Only the chapter pages and the course README are indexed (--glob), and on a chapter page
only what carries data-pagefind-body (the page's main part) without data-pagefind-ignore
(the Diff and Run tabs): a search finds lessons and code. Pagefind splits the index by each
page's <html lang>, so the English search page searches the English pages and the Chinese
one the Chinese pages.

Two builds give the same index but for the order of the languages in pagefind-entry.json,
which Pagefind writes as it finishes them: it is written again, sorted. The parts of the
bundle the site does not use (Pagefind's own search interfaces) are left out: the search
page (templates/search.html) and site.js use Pagefind's JavaScript API.
"""

import json
import subprocess

from .settings import BuildError

FOLDER = "pagefind"  # in the build
GLOB = "**/{s[0-9][0-9]_*,readme}.html"  # the pages indexed, from the top of the build
UNUSED = ("pagefind-ui.js", "pagefind-ui.css", "pagefind-modular-ui.js",
          "pagefind-modular-ui.css", "pagefind-component-ui.js", "pagefind-component-ui.css",
          "pagefind-highlight.js")
TIMEOUT = 120  # seconds


def binary():
    """The Pagefind binary that segments Chinese, as pagefind-bin-extended installs it."""
    try:
        import pagefind_bin_extended
    except ImportError:
        raise BuildError("the search needs pagefind-bin-extended: pip install -r "
                         "requirements.txt") from None
    return str(pagefind_bin_extended.get_executable())


def index(out_dir):
    """Index the built site in out_dir; raise BuildError with Pagefind's last line if it fails."""
    command = [binary(), "--site", str(out_dir), "--output-subdir", FOLDER, "--glob", GLOB,
               "--silent"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BuildError(f"the search index: pagefind did not run: {error}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or done.stdout.strip().splitlines()
                or ["no output"])[-1]
        raise BuildError(f"the search index: pagefind exited with {done.returncode}: {last}")
    bundle = out_dir / FOLDER
    entry = bundle / "pagefind-entry.json"
    data = json.loads(entry.read_text(encoding="utf-8"))
    data["languages"] = dict(sorted(data["languages"].items()))
    entry.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")),
                     encoding="utf-8")
    for name in UNUSED:
        (bundle / name).unlink(missing_ok=True)
