"""How long each page takes to read: every lesson's core and whole, in each language.

    .venv/bin/python -m course.reading_time      (prints the table; asserts nothing)

The pace is the course's (issue 38): prose at 200 words a minute, code at 100 (every fenced
block: quotes, commands, transcripts). A Chinese page's prose is counted in characters, at 300
a minute (1.5 characters for a word); the Latin words in it (names, code spans) count as words.
Addresses of links, HTML comments (the translation markers) and the language line are not read;
a table's words are, but not the generated What changed table (between its markers: it lists
the names of code.py, grows with the code and is looked up, not read). The core is the lesson
from its title to `## Going deeper` (zh `## 深入`); the top README's core is what comes before
its first command (its first ```bash block), given in words, prose and code together.

tests/test_lessons.py and tests/test_lessons_zh.py hold the limits with these functions.
"""

import re
from pathlib import Path

from course.chapters import CHAPTERS
from course.translations import TRANSLATION, is_language_line

ROOT = Path(__file__).resolve().parent.parent

PROSE_PACE = 200  # words a minute
CODE_PACE = 100  # words a minute
CHINESE_PACE = 300  # characters a minute
CORE_LIMIT = 5  # minutes
LESSON_LIMIT = 12  # minutes
README_LIMIT = 400  # words before the first command
DEEPER = {"en": "## Going deeper", "zh-CN": "## 深入"}

FENCE = re.compile(r" *(`{3,})(\w*)")
COMMENT = re.compile(r"<!--.*?-->", re.S)
GENERATED = re.compile(r"<!-- what-changed:begin -->.*?<!-- what-changed:end -->", re.S)
ADDRESS = re.compile(r"\]\([^)\s]*\)")
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
LATIN_WORD = re.compile(r"[A-Za-z0-9_][\w.'’/-]*")


def counts(text):
    """(prose words, Chinese characters, code words) of a markdown text."""
    prose, code, inside = [], [], None
    for line in COMMENT.sub("", GENERATED.sub("", text)).splitlines():
        fence = FENCE.fullmatch(line.rstrip())
        if inside is None and fence:
            inside = fence.group(1)
        elif inside is not None and line.strip().startswith(inside) and not line.strip(
                ).strip("`"):
            inside = None
        elif inside is not None:
            code.append(line)
        elif not is_language_line(line):
            prose.append(line)
    words = ADDRESS.sub("]", "\n".join(prose))
    chinese = len(CJK.findall(words))
    latin = len(LATIN_WORD.findall(CJK.sub(" ", words))) if chinese else len(words.split())
    return latin, chinese, len("\n".join(code).split())


def minutes(text):
    prose, chinese, code = counts(text)
    return prose / PROSE_PACE + chinese / CHINESE_PACE + code / CODE_PACE


def core(text, language="en"):
    """A lesson from its title to the heading of its deeper part (all of it if it has none)."""
    lines = text.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if line.rstrip() == DEEPER[language]:
            return "".join(lines[:number])
    return text


def before_first_command(text):
    """The top README up to its first ```bash block."""
    lines = text.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if line.rstrip() == "```bash":
            return "".join(lines[:number])
    return text


def readme_words(text):
    prose, chinese, code = counts(before_first_command(text))
    return prose + round(chinese / 1.5) + code


def pages(root=ROOT):
    """(page, language, path) of every lesson and of the top README, that exists."""
    found = []
    for name in ["README", *CHAPTERS]:
        folder = root if name == "README" else root / name
        for language, file in (("en", "README.md"), ("zh-CN", TRANSLATION)):
            if (folder / file).is_file():
                found.append((name, language, folder / file))
    return found


def main():
    print(f"| page | language | core (min) | whole (min) | limits: core {CORE_LIMIT}, "
          f"lesson {LESSON_LIMIT}; README {README_LIMIT} words before its first command |")
    print("| --- | --- | --- | --- | --- |")
    for name, language, path in pages():
        text = path.read_text(encoding="utf-8")
        if name == "README":
            note = f"{readme_words(text)} words before the first command"
            print(f"| {name} | {language} | | {minutes(text):.1f} | {note} |")
        else:
            print(f"| {name} | {language} | {minutes(core(text, language)):.1f} | "
                  f"{minutes(text):.1f} | |")


if __name__ == "__main__":
    main()
