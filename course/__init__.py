"""What the tests (tests/) and the site and notebook generators (web/) agree on, in one place.

The chapters never import this package: each sNN_*/code.py stays self-contained.

    CHAPTERS, ROOT                      the chapter folders, in order, and the repository
    PRESENT                             those of them whose code.py is written
    CHANGES, CORE                       per chapter: the carried sections it changes, and the
                                        core tests every exercise's solved copy must pass
    CHANGED_DEFINITIONS                 per chapter: the carried definitions it changes
    PLAY                                the checkout's folder for the learner's copies and traces
    sections(source)                    the banner grammar of code.py: [(title, chapter, text)]
    section_map(name)                   the same as {title: ((kind, chapter), text)}, by chapter
    section_titles(lines)               the title of the section holding each line (hunk headers)
    definitions(source)                 each top-level definition: {name: (section title, text)}
    offline_environment(**extra)        the environment of an offline chapter run: no key, no .env
    read_scenario(path)                 scenario.json, read and checked: {prompt, turns, answers}

course.changes (imported on its own): what changed from one chapter to the next, the lessons'
"What changed" tables and the README's chapter table (`python -m course.changes --write`).

course.stages (imported on its own): the stage checker of the learner's own agent
(`python -m course.stages sNN PATH`; `command(label, path)` gives that command), on the
loopback Messages API of course.api (which the live tests use too).

course.lessons and course.markdown (imported on their own): the lessons' markdown, quotes and
commands, read and run (tests/test_lessons.py checks them, tools/sync_lessons.py syncs them);
course.translations: the Chinese pages' markers and sections (and tools/sync_zh.py's).

course.warm (imported on its own): the warm runner, which imports anthropic once and forks a
fresh `python SCRIPT ARGS` process per run; the stage checker and the tests run programs
through it.
"""

from course.chapters import (
    CHANGED_DEFINITIONS,
    CHANGES,
    CHAPTERS,
    CORE,
    LIVE_VARIABLES,
    PLAY,
    PRESENT,
    ROOT,
    ScenarioError,
    definitions,
    offline_environment,
    read_scenario,
    section_map,
    section_titles,
    sections,
)

__all__ = [
    "CHANGED_DEFINITIONS",
    "CHANGES",
    "CHAPTERS",
    "CORE",
    "LIVE_VARIABLES",
    "PLAY",
    "PRESENT",
    "ROOT",
    "ScenarioError",
    "definitions",
    "offline_environment",
    "read_scenario",
    "section_map",
    "section_titles",
    "sections",
]
