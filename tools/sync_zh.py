"""Keep the Chinese pages in step with the English: code and tables copied, stale prose named.

    .venv/bin/python -m tools.sync_zh [--check] [--accept SECTION ...] [PAGE ...]
    .venv/bin/python -m tools.sync_zh --start PAGE

PAGE is a chapter (s02_tools) or README (the top one); with none, every translated page.

  (no option)       For each Chinese page, from its English page: copies every code block that
                    differs (quotes, commands, transcripts: the Chinese keeps the English ones),
                    rewrites the generated table in Chinese (the top README: its chapter table),
                    puts the language links in both pages, and adds an English section the
                    Chinese lacks, untranslated and marked `new`. Then it names each section
                    whose English prose changed since it was translated, with what changed in
                    the English (from git, when an earlier version gives the recorded hash;
                    else the English as it is now), and what it cannot do: a section with more
                    or fewer code blocks than its English one, a section the English no longer
                    has. It never records a new hash by itself.
  --accept SECTION  After you have brought the Chinese prose of SECTION up to date: records the
                    English section's hash (and title) in its marker. SECTION is the English or
                    the Chinese title ("The problem", "问题") or an fnmatch pattern of one
                    ('*': every section of the pages named). Give it once per section.
  --check           Writes nothing: prints what it would do and what is stale.
  --start PAGE      Writes the Chinese page of an English page that has none: the English text,
                    each section marked `new`, the language links. Translate it, then --accept.

Exit 0 when every page named is in step, 1 when something is left to do (or would change).
Then read `git diff` and run `.venv/bin/python -m pytest tests/test_lessons_zh.py`.
"""

import argparse
import difflib
import fnmatch
import subprocess
import sys

from course import ROOT, changes
from course.translations import (
    LANGUAGE,
    LANGUAGE_LINES,
    MARKER,
    alignment,
    english,
    expected_table,
    language_line,
    marker,
    pages,
    read_sections,
    translated,
    translation,
)


def fence(block_lines, language, indent):
    """A fenced block: longer fences than any run of backticks inside it."""
    longest = max((len(line) - len(line.lstrip("`")) for line in block_lines), default=0)
    ticks = "`" * max(3, longest + 1)
    return ([f"{indent}{ticks}{language}"] + [f"{indent}{line}" if line else ""
                                            for line in block_lines] + [f"{indent}{ticks}"])


def with_language_line(lines, line):
    """The page's lines with `line` as the first line after the title (and its marker)."""
    lines = list(lines)
    if language_line("\n".join(lines)) == line:
        return lines
    at = 1
    if len(lines) > 1 and MARKER.fullmatch(lines[1].strip()):
        at = 2
    return lines[:at] + ["", line] + lines[at:]


def accepted(section, english_section, patterns):
    titles = [english_section.title, section.title]
    return any(fnmatch.fnmatchcase(title, pattern) for pattern in patterns for title in titles)


class History:
    """Earlier versions of an English page, from git: the section lines that gave a hash."""

    def __init__(self, path, root, enabled=True):
        self.path, self.root, self.enabled, self.texts = path, root, enabled, None

    def versions(self):
        if self.texts is None:
            self.texts = []
            relative = self.path.relative_to(self.root)
            try:
                commits = subprocess.run(["git", "log", "--format=%H", "-n", "200", "--",
                                          str(relative)], cwd=self.root, capture_output=True,
                                         text=True, check=True).stdout.split()
                for commit in commits:
                    shown = subprocess.run(["git", "show", f"{commit}:{relative}"],
                                           cwd=self.root, capture_output=True, text=True,
                                           check=False)
                    if shown.returncode == 0:
                        self.texts.append(shown.stdout)
            except (OSError, subprocess.CalledProcessError):
                pass
        return self.texts

    def lines_of(self, title, recorded):
        if not self.enabled:
            return None
        for text in self.versions():
            for section in read_sections(text, ""):
                if section.title == title and section.hash == recorded:
                    return section.lines
        return None


def what_changed(section, english_section, history):
    """The English prose to translate again: a diff against the version translated, if git has
    it, else the English as it is now."""
    old = history.lines_of(section.marker["title"], section.marker["hash"])
    if old is None:
        return ["The English section now:", *(f"    {line}" for line in english_section.lines)]
    diff = difflib.unified_diff(old, english_section.lines, "translated", "now", lineterm="", n=1)
    return ["What changed in the English:", *(f"    {line}" for line in diff)]


def section_edits(english_section, section, lines, accept, report, history, command):
    """[(start, end, new lines)] that bring one Chinese section's code and marker in step
    (`lines`: the Chinese page's)."""
    edits = []
    ours, theirs = english_section.blocks, section.blocks
    if len(ours) != len(theirs):
        report.append(f"{section.where}: {section.heading!r} has {len(theirs)} code blocks, its "
                      f"English section {len(ours)}: add or remove them by hand, then run again")
    else:
        for mine, their in zip(ours, theirs, strict=True):
            if (mine.language, mine.lines) != (their.language, their.lines):
                opening = lines[their.start]
                indent = opening[: len(opening) - len(opening.lstrip(" "))]
                edits.append((their.start, their.end, fence(mine.lines, mine.language, indent)))
    wanted = marker(english_section.hash, english_section.title)
    if section.marker and (section.marker["hash"], section.marker["title"]) == (
            english_section.hash, english_section.title):
        return edits
    if accepted(section, english_section, accept):
        if section.marker_line is None:
            edits.append((section.start + 1, section.start + 1, [wanted]))
        else:
            edits.append((section.marker_line, section.marker_line + 1, [wanted]))
    elif section.marker is None:
        report.append(f"{section.where}: {section.heading!r} has no marker; when it translates "
                      f"{english_section.heading!r} as it is now: {command(english_section)}")
    else:
        state = ("is not translated yet (marked new)" if section.marker["hash"] == "new" else
                 f"translates {english_section.heading!r} as it was ({section.marker['hash']}); "
                 f"the English is now {english_section.hash}")
        report.append("\n".join([f"{section.where}: {section.heading!r} {state}.",
                                 *what_changed(section, english_section, history),
                                 f"  Update the Chinese, then: {command(english_section)}"]))
    return edits


def sync(name, root=ROOT, accept=(), write=True, history=True):
    """Bring the Chinese page of `name` in step; ([what is left to do], whether a file changed
    or would)."""
    english_path, chinese_path = english(name, root), translation(name, root)
    english_text = english_path.read_text(encoding="utf-8")
    chinese_text = chinese_path.read_text(encoding="utf-8")
    chinese_lines, english_lines = chinese_text.splitlines(), english_text.splitlines()
    english_sections = read_sections(english_text, str(english_path.relative_to(root)))
    sections = read_sections(chinese_text, str(chinese_path.relative_to(root)))

    def command(english_section):
        return f".venv/bin/python -m tools.sync_zh --accept '{english_section.title}' {name}"

    report, edits = [], []
    past = History(english_path, root, enabled=history)
    for tag, e1, e2, c1, c2 in alignment(english_sections, sections):
        if tag == "equal" or (tag == "replace" and e2 - e1 == c2 - c1):
            for ours, theirs in zip(english_sections[e1:e2], sections[c1:c2], strict=True):
                edits += section_edits(ours, theirs, chinese_lines, accept, report, past,
                                       command)
            continue
        at = sections[c1].start if c1 < len(sections) else len(chinese_lines)
        new_lines = []
        for ours in english_sections[e1:e2]:
            body = english_lines[ours.start : ours.end]
            new_lines += [body[0], marker("new", ours.title), *body[1:]]
            report.append(f"{ours.where}: added {ours.heading!r} to the Chinese page, untranslated "
                          f"(marked new): translate it, then: {command(ours)}")
        if new_lines:
            if new_lines[-1].strip():
                new_lines.append("")
            edits.append((at, at, new_lines))
        for theirs in sections[c1:c2]:
            report.append(f"{theirs.where}: {theirs.heading!r} translates a section the English "
                          "does not have here: remove it, or mark it with the English title")
    for start, end, lines in sorted(edits, key=lambda edit: -edit[0]):
        chinese_lines[start:end] = lines
    chinese_lines = with_language_line(chinese_lines, LANGUAGE_LINES[LANGUAGE])
    new_chinese = "\n".join(chinese_lines) + "\n"
    begin, end, table = expected_table(name, root)
    held = changes.between(new_chinese, begin, end)
    if held is None:
        report.append(f"{chinese_path.relative_to(root)}: has no single {begin} ... {end}")
    elif held != table:
        new_chinese = changes.replaced(new_chinese, begin, end, table)
    new_english = "\n".join(with_language_line(english_lines, LANGUAGE_LINES["en"])) + "\n"
    changed = False
    for path, old, new in ((chinese_path, chinese_text, new_chinese),
                           (english_path, english_text, new_english)):
        if new != old:
            changed = True
            if write:
                path.write_text(new, encoding="utf-8")
    return report, changed


def start(name, root=ROOT):
    """Write the Chinese page of `name` from the English: every section marked new."""
    english_path, chinese_path = english(name, root), translation(name, root)
    text = english_path.read_text(encoding="utf-8")
    lines = text.splitlines()
    for section in reversed(read_sections(text, "")):
        if section.level:
            lines[section.start + 1 : section.start + 1] = [marker("new", section.title)]
    lines = [line for line in lines if line.strip() != LANGUAGE_LINES["en"]]
    lines = with_language_line(lines, LANGUAGE_LINES[LANGUAGE])
    chinese_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    english_path.write_text("\n".join(with_language_line(text.splitlines(), LANGUAGE_LINES["en"]))
                            + "\n", encoding="utf-8")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.sync_zh",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--accept", action="append", default=[], metavar="SECTION",
                        help="record the English hash of this section (title or pattern)")
    parser.add_argument("--check", action="store_true", help="write nothing")
    parser.add_argument("--start", action="store_true",
                        help="write the Chinese page of each PAGE, from the English")
    parser.add_argument("pages", nargs="*", metavar="PAGE", help="chapters, or README")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.pages) - set(pages()))
    if unknown:
        parser.error(f"no such page: {', '.join(unknown)}")
    if args.start:
        if not args.pages or set(args.pages) & set(translated()):
            parser.error("--start needs pages that have no Chinese page yet")
        for name in args.pages:
            start(name)
            print(f"wrote {translation(name).relative_to(ROOT)}: translate it, then --accept")
        return 0
    names = args.pages or translated()
    missing = sorted(set(names) - set(translated()))
    if missing:
        parser.error(f"no Chinese page yet: {', '.join(missing)} (start it with --start)")
    left = False
    for name in names:
        report, changed = sync(name, accept=args.accept, write=not args.check)
        if changed:
            verb = "would change" if args.check else "brought in step"
            print(f"{translation(name).relative_to(ROOT)}: {verb} (code, tables or links)")
        for line in report:
            print(line)
        left = left or bool(report) or (changed and args.check)
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
