"""Paths and settings of the build, and the one error it stops with."""

from pathlib import Path

WEB = Path(__file__).resolve().parent.parent  # web/
ROOT = WEB.parent  # the repository: where the chapters live
ASSETS = WEB / "assets"  # the CSS, JavaScript and icon copied into every build
DEFAULT_OUT = WEB / "dist"

RUN_TIMEOUT = 120  # seconds one chapter's recorded run may take
MARKER = ".course-site"  # a file that says "this folder is a build of the site"
PYTHON = ".venv/bin/python"  # the Python of the commands shown, as the README gives them

# What a recording shows instead of what belongs to the machine that built the site.
SHOWN_TMPDIR = "$TMPDIR"  # the temporary folder the run's workdir was made in
SHOWN_SESSION_ID = "YYYYMMDD-HHMMSS-xxxxxx"  # s06: the start time and six random hex digits
SHOWN_SECONDS = "x.xxx"  # how long a test run took ("Ran 3 tests in x.xxxs")

# The pygments styles for code: light, and dark (prefers-color-scheme). Both are readable
# (4.5:1) as they are on the site's backgrounds; axe-core checks it.
LIGHT_STYLE = "xcode"
DARK_STYLE = "github-dark"


class BuildError(Exception):
    """The site cannot be built. The message is one line and names the chapter."""
