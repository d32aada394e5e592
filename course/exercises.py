"""The exercises of each chapter, read from the files that hold them.

    sNN_x/exercises/test_exN.py         the check a learner runs; its docstring holds the title,
                                        the task and the hint:
                                            Exercise N: Title.

                                            Task: what to change, and what then happens.

                                            Hint: where to start.
    sNN_x/exercises/solutions/exN.patch the reference solution, a patch against code.py; its
                                        header lists the chapter tests it changes on purpose
                                        ("Chapter tests this changes on purpose:") and the tools
                                        it adds ("Tools this adds to what the model sees:")

    exercises(chapter)                  [Exercise], in order (for the lessons, the site, tests)
    render(chapter)                     the lesson's "## Exercises" section, as it should read
    python -m course.exercises          rewrite that section in every lesson (README.md)
    python -m course.exercises --json   print every chapter's exercises as JSON

The chapters never import this package.
"""

import ast
import itertools
import json
import re
import sys
import textwrap
from dataclasses import asdict, dataclass
from pathlib import Path

from course.chapters import CHAPTERS, ROOT

CHECK = re.compile(r"test_ex(\d+)\.py")
DOCSTRING = re.compile(r"Exercise (?P<number>\d+): (?P<title>[^\n]+?)\n\n"
                       r"Task: (?P<task>.+?)\n\nHint: (?P<hint>.+)", re.S)
CHANGES = "Chapter tests this changes on purpose:"
# the line may say why, before its colon: "Chapter tests this changes on purpose (why):"
CHANGES_LINE = re.compile(r"Chapter tests this changes on purpose(?: \(.+\))?:(?P<rest>.*)")
ADDS_TOOLS = "Tools this adds to what the model sees:"
SECTION = "## Exercises\n"
NEXT = "## Next"

INTRODUCTION = (
    "Each exercise asks for a change to this chapter's `code.py`, or for a file it reads. Its "
    "check (`course.check`, the course's own runner: the README's first install is enough, no "
    "pytest) runs from the repository root, fails until the change is done, and says in one line "
    "what is missing. The reference solutions are patches in `exercises/solutions/`: try first, "
    "then compare."
)


class ExerciseError(ValueError):
    """A check or a solution file that is not of the expected shape; the message names it."""


@dataclass
class Exercise:
    chapter: str
    number: int
    title: str  # "Refuse a script piped from the internet." (a sentence)
    task: str  # one paragraph, markdown
    hint: str
    check: str  # the check file, relative to the repository: sNN_x/exercises/test_exN.py
    solution: str  # sNN_x/exercises/solutions/exN.patch
    command: str  # the command that runs the check
    changes: list  # the chapter tests the solution changes on purpose (pytest node ids)
    adds_tools: list  # the names of the tools the solution adds, in order

    def as_json(self):
        return asdict(self)


def one_paragraph(text):
    return " ".join(text.split())


def solution_header(path):
    """(changes, adds_tools) from the header of a solution patch (the text before its diff)."""
    header = path.read_text(encoding="utf-8").split("\ndiff --git ", 1)[0].splitlines()
    changes, adds_tools = None, []
    for number, line in enumerate(header):
        changes_line = CHANGES_LINE.fullmatch(line)
        if changes_line:
            rest = changes_line["rest"].strip()
            if rest not in ("", "none"):
                raise ExerciseError(f"{path}: after {CHANGES!r} write none, or the tests below it")
            listed = [item.strip() for item in header[number + 1:]]
            indented = len(list(itertools.takewhile(
                lambda item: item.startswith("    ") and item.strip(), header[number + 1:])))
            changes = [] if rest == "none" else listed[:indented]
        elif line.startswith(ADDS_TOOLS):
            adds_tools = [name.strip() for name in line.removeprefix(ADDS_TOOLS).split(",")]
    if changes is None:
        raise ExerciseError(f"{path}: the header has no line {CHANGES!r}")
    return changes, adds_tools


def exercises(chapter, root=ROOT):
    """The exercises of one chapter, in order of their numbers."""
    folder = Path(root) / chapter / "exercises"
    found = []
    for check in sorted(folder.glob("test_ex*.py")):
        match = CHECK.fullmatch(check.name)
        if not match:
            continue
        number = int(match[1])
        docstring = ast.get_docstring(ast.parse(check.read_text(encoding="utf-8"))) or ""
        parts = DOCSTRING.fullmatch(docstring.strip())
        if not parts or int(parts["number"]) != number:
            raise ExerciseError(f"{check}: the docstring must read 'Exercise {number}: Title.', "
                                "then a 'Task: ...' paragraph and a 'Hint: ...' paragraph")
        solution = folder / "solutions" / f"ex{number}.patch"
        if not solution.exists():
            raise ExerciseError(f"{check}: there is no solution {solution}")
        changes, adds_tools = solution_header(solution)
        relative = check.relative_to(root).as_posix()
        found.append(Exercise(
            chapter=chapter, number=number, title=one_paragraph(parts["title"]),
            task=one_paragraph(parts["task"]), hint=one_paragraph(parts["hint"]),
            check=relative, solution=solution.relative_to(root).as_posix(),
            command=f".venv/bin/python -m course.check {relative}",
            changes=changes, adds_tools=adds_tools))
    return sorted(found, key=lambda exercise: exercise.number)


def wrap(text, first, rest):
    return textwrap.fill(text, width=100, initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False)


def render(chapter, root=ROOT):
    """The "## Exercises" section of the chapter's lesson, up to the "## Next" that follows."""
    lines = [SECTION, "\n", wrap(INTRODUCTION, "", ""), "\n"]
    for exercise in exercises(chapter, root):
        lines.append("\n" + wrap(f"**{exercise.title}** {exercise.task}",
                                 f"{exercise.number}. ", "   ") + "\n")
        lines.append("\n" + wrap(f"Hint: {exercise.hint}", "   ", "   ") + "\n")
        lines.append(f"\n   Check: `{exercise.command}`\n")
    return "".join(lines) + "\n"


def lesson_section(readme_text):
    """The text of a lesson's "## Exercises" section (from its heading to "## Next")."""
    start = readme_text.index(SECTION)
    return readme_text[start:readme_text.index(NEXT, start)]


def write_lessons(root=ROOT):
    for chapter in CHAPTERS:
        readme = Path(root) / chapter / "README.md"
        if not (Path(root) / chapter / "exercises").is_dir():
            continue
        text = readme.read_text(encoding="utf-8")
        new = text.replace(lesson_section(text), render(chapter, root), 1)
        readme.write_text(new, encoding="utf-8")
        print(f"{'wrote' if new != text else 'unchanged'} {readme.relative_to(root)}")


def main(argv):
    if argv == ["--json"]:
        every = {chapter: [exercise.as_json() for exercise in exercises(chapter)]
                 for chapter in CHAPTERS}
        print(json.dumps(every, indent=2, ensure_ascii=False))
    elif not argv:
        write_lessons()
    else:
        print("usage: python -m course.exercises [--json]", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:  # the output went into `head` or the like, which closed early
        sys.exit(1)
