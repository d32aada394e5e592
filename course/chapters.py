"""The chapter list, the banner grammar of code.py, the offline environment, scenario.json."""

import json
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the repository: where the chapters live
CHAPTERS = [
    "s01_loop",
    "s02_tools",
    "s03_permissions",
    "s04_hooks",
    "s05_todo_write",
    "s06_plan_mode",
]
# The checkout's folder for the learner's copies of a workspace and the traces they record
# (git ignores it but its README.md): the lessons' commands and the site's Run tab use it.
PLAY = "play"

# ---- the banner grammar ---------------------------------------------------------------------
# A section of code.py starts at a banner, either three lines
#
#     # ======================================================================
#     # THE TOOLS   (new in s02)
#     # ======================================================================
#
# (the tag is optional: "(new in sNN)", or the older "(changed in sNN)"), or one line with its
# title between runs of "=":
#
#     # ==== THE HARNESS: what keeps it safe and runnable (skip on a first read) ====
#
# A section runs from its banner to the next banner (or the end of the file); what comes before
# the first banner (the docstring, the imports) is in no section.

RULE = re.compile(r"# ={20,}\s*")
ONE_LINE = re.compile(r"# ={3,} (?P<title>.*?\S) ={3,}\s*")
TITLE = re.compile(r"# (?P<title>\S.*?)\s*")
TAG = re.compile(r"^(?P<name>.*?)\s*(?:\((?P<kind>new|changed) in (?P<chapter>s\d\d)\))?$")


def banner_title(lines, index):
    """The title (tag included) if a banner starts at lines[index], else None."""
    line = lines[index]
    one_line = ONE_LINE.fullmatch(line)
    if one_line:
        return one_line["title"]
    if index + 2 < len(lines) and RULE.fullmatch(line) and RULE.fullmatch(lines[index + 2]):
        title = TITLE.fullmatch(lines[index + 1])
        if title and not RULE.fullmatch(lines[index + 1]):
            return title["title"]
    return None


def split_tag(title):
    """'THE TOOLS   (new in s02)' -> ('THE TOOLS', 'new', 's02'); no tag: (title, None, None)."""
    tag = TAG.match(title)
    return tag["name"], tag["kind"], tag["chapter"]


def _banners(source):
    """(title with its tag, offset of the banner's first character) for each banner, in order."""
    lines = source.splitlines(keepends=True)
    bare = [line.rstrip("\r\n") for line in lines]
    found, offset = [], 0
    for index, line in enumerate(lines):
        title = banner_title(bare, index)
        if title is not None:
            found.append((title, offset))
        offset += len(line)
    return found


def sections(source):
    """[(title, the chapter of its tag or None, text from its banner to the next)], in file order.

    The title is without its tag: '# THE TOOLS   (new in s02)' gives ('THE TOOLS', 's02', ...).
    """
    banners = _banners(source)
    result = []
    for (title, start), following in zip(banners, banners[1:] + [None], strict=True):
        name, _, chapter = split_tag(title)
        result.append((name, chapter, source[start : following[1] if following else len(source)]))
    return result


def section_map(name, root=ROOT):
    """{title: ((kind, chapter), text)} for the chapter folder `name`, in file order.

    kind is "new" or "changed" (or None, untagged). Two sections with one title are an error.
    """
    source = (Path(root) / name / "code.py").read_text(encoding="utf-8")
    found = {}
    for title, start in _banners(source):
        section, kind, chapter = split_tag(title)
        if section in found:
            raise ValueError(f"{name}: two sections named {section}")
        found[section] = ((kind, chapter), start)
    starts = [start for _, start in found.values()] + [len(source)]
    return {
        section: (tag, source[start : starts[number + 1]])
        for number, (section, (tag, start)) in enumerate(found.items())
    }


def section_above(lines, index):
    """The title (without its tag) of the section that holds lines[index], like diff -F; "" if
    the line comes before the first banner."""
    bare = [line.rstrip("\r\n") for line in lines]
    for start in range(min(index, len(bare) - 1), -1, -1):
        title = banner_title(bare, start)
        if title is not None:
            return split_tag(title)[0]
    return ""


# ---- running a chapter offline ---------------------------------------------------------------

# The variables that would turn a run live (or pick its model): never in an offline run.
LIVE_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "MODEL_ID")


def offline_environment(**extra):
    """The environment of an offline chapter run: this one without the live variables, no .env,
    unbuffered output, no bytecode written; then `extra` (which may put a key back on purpose)."""
    env = {key: value for key, value in os.environ.items() if key not in LIVE_VARIABLES}
    env.update(PYTHON_DOTENV_DISABLED="1", PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")
    env.update(extra)
    return env


# ---- scenario.json ---------------------------------------------------------------------------


class ScenarioError(ValueError):
    """A scenario.json that is missing or not of the expected shape; the message names the file."""


def read_scenario(path):
    """Read and check a scenario.json: {"prompt": non-empty str, "turns": list, "answers": list of
    str (optional)}. Returns the whole object, with "answers" set ([] when absent).

    `path` is the file, or a chapter folder holding one. Raises ScenarioError saying what is wrong.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "scenario.json"
    try:
        scenario = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScenarioError(f"{path}: there is no scenario.json") from None
    except OSError as error:
        raise ScenarioError(f"{path}: cannot read it ({error.strerror or error})") from None
    except json.JSONDecodeError as error:
        raise ScenarioError(f"{path}: not JSON ({error})") from None
    if not isinstance(scenario, dict):
        raise ScenarioError(f"{path}: must be a JSON object with \"prompt\" and \"turns\"")
    prompt = scenario.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ScenarioError(f"{path}: has no \"prompt\" (a non-empty string)")
    if not isinstance(scenario.get("turns"), list):
        raise ScenarioError(f"{path}: \"turns\" must be a list")
    answers = scenario.setdefault("answers", [])
    if not isinstance(answers, list) or not all(isinstance(answer, str) for answer in answers):
        raise ScenarioError(f"{path}: \"answers\" must be a list of strings")
    return scenario
