"""The "Build it yourself" line of a chapter page: the command that checks a learner's own
build/agent.py against the chapter's stage (course.stages). This is the one function the
chapter template takes it from; while course.stages is not in the checkout, there is no
line (the page shows nothing in its place)."""

import importlib.util

from .settings import PYTHON

BUILD_FILE = "build/agent.py"  # where the learner writes their own agent


def build_it_yourself(chapter):
    """The stage-check command of `chapter`, or "" when course.stages cannot be imported."""
    try:
        found = importlib.util.find_spec("course.stages")
    except ImportError:
        found = None
    if found is None:
        return ""
    return f"{PYTHON} -m course.stages {chapter.label} {BUILD_FILE}"
