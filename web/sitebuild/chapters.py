"""The chapters: what the build reads of each folder sNN_*/."""

import ast
import functools
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from course.chapters import parsed
from course.translations import TRANSLATION


@dataclass
class Run:
    """One recorded run of a chapter's scenario, in the words it is shown in."""
    prompt: str
    answers: list
    command: str  # the command line, as a learner types it from the repository root
    stdout: str
    stderr: str
    calls: list  # one {"request": ..., "response": ...} per model call
    trace: str  # the trace file as the chapter wrote it (machine paths replaced)


@dataclass
class Chapter:
    name: str  # "s02_tools"
    folder: Path
    code: str  # the text of code.py
    previous: "Chapter | None" = None
    run: Run | None = None
    lesson: str | None = field(default=None, repr=False)  # README.md, if there is one yet
    lesson_zh: str | None = field(default=None, repr=False)  # README.zh-CN.md, if there is one

    def lesson_in(self, lang):
        return self.lesson if lang == "en" else self.lesson_zh

    @property
    def label(self):
        """The short name, as the REPL prompt and the navigation show it: "s02"."""
        return self.name.split("_")[0]

    @functools.cached_property
    def docstring(self):
        try:
            return ast.get_docstring(parsed(self.code)) or ""  # the ast course.changes reads
        except SyntaxError:
            return ""

    @property
    def summary(self):
        """The first line of the docstring, without its "sNN_x: " prefix."""
        first = self.docstring.splitlines()[0] if self.docstring else ""
        return first.removeprefix(f"{self.name}:").strip()

    @property
    def title(self):
        return self.title_in("en")

    def summary_in(self, lang):
        """The summary in a language: the docstring's in English, the title of the
        translated lesson ("# s02_tools: 分发表和文件工具。") in Chinese (or the English one)."""
        lesson = self.lesson_in(lang)
        if lang == "en" or not lesson or not lesson.startswith("# "):
            return self.summary
        return lesson.partition("\n")[0][2:].removeprefix(f"{self.name}:").strip()

    def title_in(self, lang):
        summary = self.summary_in(lang).rstrip(".。")
        return f"{self.label} · {summary}" if summary else self.name

    @property
    def page(self):
        return f"{self.name}.html"

    @property
    def notebook(self):
        """The chapter's notebook (made by web/notebooks.py), which the site offers as a
        download."""
        return self.folder / "notebook.ipynb"

    @property
    def diagram(self):
        """The diagram of the docstring: its first block of four or more indented lines."""
        return docstring_diagram(self.docstring)

    def diagram_svg(self, lang):
        """The lesson's diagram (diagram.svg, diagram.zh-CN.svg: course/diagrams.py renders
        them beside the lesson) in a language, or the English one, or None."""
        names = ["diagram.zh-CN.svg", "diagram.svg"] if lang != "en" else ["diagram.svg"]
        return next((self.folder / name for name in names if (self.folder / name).is_file()),
                    None)

    @property
    def run_command(self):
        """The "Run it:" command of the docstring, or "" if it has none."""
        found = re.search(r"^Run it:\s+(\S.*)$", self.docstring, re.M)
        return found.group(1).strip() if found else ""


def docstring_diagram(docstring):
    lines = docstring.splitlines()
    block = []
    for line in [*lines, ""]:
        if line.startswith("    ") or (block and not line.strip()):
            block.append(line)
            continue
        while block and not block[-1].strip():
            block.pop()
        if sum(1 for part in block if part.strip()) >= 4:
            return textwrap.dedent("\n".join(block))
        block = []
    return ""


def find_chapters(root):
    """Every folder sNN_* under root that has a code.py, in order, each linked to the one before."""
    chapters = []
    for folder in sorted(root.glob("s[0-9][0-9]_*")):
        if not (folder / "code.py").is_file():
            continue
        readme, translated = folder / "README.md", folder / TRANSLATION
        chapter = Chapter(
            name=folder.name,
            folder=folder,
            code=(folder / "code.py").read_text(encoding="utf-8"),
            previous=chapters[-1] if chapters else None,
            lesson=readme.read_text(encoding="utf-8") if readme.is_file() else None,
            lesson_zh=translated.read_text(encoding="utf-8") if translated.is_file() else None,
        )
        chapters.append(chapter)
    return chapters
