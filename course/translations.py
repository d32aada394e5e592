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

import re

from course.chapters import CHAPTERS, ROOT

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
