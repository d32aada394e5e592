"""The course in Simplified Chinese: which pages have a translation, and the lines that tie a
translated page to its English source.

A page is the top README.md or a lesson, sNN_x/README.md. Its translation is README.zh-CN.md
beside it. The two pages link to each other in their LANGUAGE_LINES, the first line after the
title. Under each heading of a translation (the title, each ## and ###), a marker records which
English text it translates:

    ## 问题
    <!-- en: 1f0c9e27a4b3 The problem -->

the English section's title and the start of the sha1 of its prose (tests/test_lessons_zh.py
says what the prose is); `new` instead of the hash means not translated yet. When the English
section changes, its hash does, and the test names the section until a translator updates the
Chinese and records the new hash (`.venv/bin/python -m tools.sync_zh --accept SECTION PAGE`).
Markers are HTML comments: GitHub and the site do not show them.
"""

import difflib
import hashlib
import re
from dataclasses import dataclass

from course import changes
from course.chapters import CHAPTERS, ROOT
from course.figures import without_figures
from course.markdown import headings, parse_blocks

LANGUAGE = "zh-CN"
TRANSLATION = f"README.{LANGUAGE}.md"  # beside each README.md
GLOSSARY = f"GLOSSARY.{LANGUAGE}.md"  # at the top: the Chinese of the recurring terms
LANGUAGES = ("en", LANGUAGE)
SITE_FOLDER = {"en": "", LANGUAGE: f"{LANGUAGE}/"}  # where web/build.py puts each one's pages

# The line after the title: the page's own language in bold, a link to the other one.
LANGUAGE_LINES = {
    "en": f"**English** · [中文]({TRANSLATION})",
    LANGUAGE: "[English](README.md) · **中文**",
}

MARKER = re.compile(r"<!-- en: (?P<hash>[0-9a-f]{12}|new) (?P<title>.*?) -->")
HASH_LENGTH = 12


def pages(root=ROOT):
    """The English pages that exist, as names: "README" for the top one, then the chapters."""
    return ["README", *(name for name in CHAPTERS if (root / name / "README.md").exists())]


def english(name, root=ROOT):
    """The path of page `name`'s English text."""
    return root / "README.md" if name == "README" else root / name / "README.md"


def translation(name, root=ROOT):
    """The path of page `name`'s Chinese text (it may not exist yet)."""
    return english(name, root).with_name(TRANSLATION)


def translated(root=ROOT):
    """The pages that have a Chinese translation."""
    return [name for name in pages(root) if translation(name, root).exists()]


def is_language_line(line):
    return line.strip() in LANGUAGE_LINES.values()


def marker(hash_, title):
    return f"<!-- en: {hash_} {title} -->"


# ---- a page read in sections: tests/test_lessons_zh.py checks them, tools/sync_zh.py syncs them

TABLE_MARKERS = [(changes.BEGIN, changes.END), (changes.README_BEGIN, changes.README_END)]

def source(name, language="en", root=ROOT):
    """'s01_loop/README.zh-CN.md', as failures name a page."""
    path = translation(name, root) if language == LANGUAGE else english(name, root)
    return str(path.relative_to(root))


def read(name, language="en", root=ROOT):
    path = translation(name, root) if language == LANGUAGE else english(name, root)
    return path.read_text(encoding="utf-8")



@dataclass
class Section:
    level: int  # 1 for the title (and the text before the first ##), then 2, 3
    title: str
    start: int  # the index of its heading line
    end: int  # the index of the line after it
    lines: list  # its prose: the lines of the section less its code blocks, generated
    # tables, marker and language line (the heading included)
    blocks: list  # its fenced code blocks (course.markdown.Block), in order
    marker: dict | None = None  # {"hash", "title"} of the `<!-- en: ... -->` under its heading
    marker_line: int | None = None
    where: str = ""  # "s01_loop/README.zh-CN.md:12"

    @property
    def heading(self):
        return f"{'#' * self.level} {self.title}"

    @property
    def key(self):
        """What an English section is known by."""
        return self.level, self.title

    @property
    def translates(self):
        """The English section a Chinese section says it translates."""
        return self.level, self.marker["title"] if self.marker else None

    @property
    def hash(self):
        """The start of the sha1 of the prose, white space made single spaces (so re-wrapping
        a paragraph changes nothing), and the figures' values left out (course/figures.py)."""
        prose = " ".join(without_figures(" ".join(self.lines)).split())
        return hashlib.sha1(prose.encode("utf-8")).hexdigest()[:HASH_LENGTH]


def generated_lines(lines):
    """The indices of the lines of the generated tables, their markers included."""
    found = set()
    for begin, end in TABLE_MARKERS:
        starts = [number for number, line in enumerate(lines) if line.strip() == begin]
        ends = [number for number, line in enumerate(lines) if line.strip() == end]
        for start, stop in zip(starts, ends, strict=False):
            found.update(range(start, stop + 1))
    return found


def read_sections(text, where):
    """The sections of a page, in order: the title's, then one per ## and ### heading."""
    lines = text.splitlines()
    blocks = parse_blocks(text, where)
    inside = {number for block in blocks for number in range(block.start, block.end)}
    found = sorted((number, len(prefix) - 1, title) for prefix in ("# ", "## ", "### ")
                   for number, title in headings(text, prefix))
    if not found or found[0][0] != 0:
        found.insert(0, (0, 1, ""))
    skipped = inside | generated_lines(lines)
    sections = []
    for position, (start, level, title) in enumerate(found):
        end = found[position + 1][0] if position + 1 < len(found) else len(lines)
        inner = [block for block in blocks if start < block.start < end]
        section = Section(level, title, start, end, [], inner, where=f"{where}:{start + 1}")
        following = next((number for number in range(start + 1, end) if lines[number].strip()),
                         None)
        if following is not None and following not in inside:
            match = MARKER.fullmatch(lines[following].strip())
            if match:
                section.marker, section.marker_line = match.groupdict(), following
        section.lines = [lines[number] for number in range(start, end)
                         if number not in skipped and number != section.marker_line
                         and not is_language_line(lines[number])]
        sections.append(section)
    return sections


def sections_of(name, language="en", root=ROOT):
    return read_sections(read(name, language, root), source(name, language, root))


def alignment(english_sections, chinese_sections):
    """difflib's opcodes from the English sections to the ones the Chinese say they translate."""
    matcher = difflib.SequenceMatcher(None, [s.key for s in english_sections],
                                      [s.translates for s in chinese_sections], autojunk=False)
    return matcher.get_opcodes()



ZH_README_HEADER = ["| 章 | 新增内容 | 行数 | 增 | 删 |", "| --- | --- | --- | --- | --- |"]


def chinese_summary(name, root=ROOT):
    """'agent 循环。' from the title '# s01_loop: agent 循环。' of the Chinese lesson."""
    return read(name, LANGUAGE, root).splitlines()[0].split(": ", 1)[1]


def zh_readme_table(root=ROOT):
    """The chapter table of README.zh-CN.md: the English one's figures, a translated lesson's
    Chinese title and link (an untranslated one's English)."""
    rows = []
    for name in CHAPTERS:
        if not (root / name / "code.py").exists():
            continue
        found = changes.what_changed(name, root)
        if translation(name, root).exists():
            link, summary = f"{name}/{TRANSLATION}", chinese_summary(name, root)
        else:
            link, summary = f"{name}/README.md", changes.summary_of(name, root)
        rows.append(f"| [{name}]({link}) | {summary} | {found.lines} | +{found.added} "
                    f"| -{found.removed} |")
    return "\n".join(ZH_README_HEADER + rows)


def expected_table(name, root=ROOT):
    """(begin marker, end marker, the table) the Chinese page must hold."""
    if name == "README":
        return changes.README_BEGIN, changes.README_END, zh_readme_table(root)
    return changes.BEGIN, changes.END, changes.lesson_table(changes.what_changed(name, root),
                                                            LANGUAGE)


def language_line(text):
    """The first line after the title that is not blank and not a marker, or None."""
    for line in text.splitlines()[1:]:
        if line.strip() and not MARKER.fullmatch(line.strip()):
            return line.strip()
    return None
