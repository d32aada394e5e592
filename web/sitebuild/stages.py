"""The "Build it yourself" line of a chapter page: the command that checks a learner's own
build/agent.py against the chapter's stage. The command's one source is course.stages.command."""

from course.stages import command


def build_it_yourself(chapter):
    """The stage-check command of `chapter`, as course.stages gives it."""
    return command(chapter.label)
