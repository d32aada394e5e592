"""What changed from one chapter to the next: sections, functions, tools and lines.

One source for the "What changed" table of every lesson (sNN_x/README.md, between the markers
below), the chapter table of the top README, and the diff summaries of the site:

    what_changed(name)        the Changes of chapter `name` against the chapter before it
    lesson_table(changes)     the markdown of its "What changed" table
    readme_rows()             the rows of the top README's chapter table

Computed from the two code.py files only: the sections by the banner grammar
(course.sections), the functions and classes and the tool schemas with ast, the lines with
difflib (the counts of `diff -u`). A line added or removed belongs to the section that holds it.

    .venv/bin/python -m course.changes            print every chapter's table
    .venv/bin/python -m course.changes --write    rewrite the tables in the lessons and README.md
    .venv/bin/python -m course.changes --check    exit 1 and name the files whose table is stale
    .venv/bin/python -m course.changes --json     the data, for the site
    ... --write s02_tools s03_permissions          only those lessons (README: the top README)
"""

import argparse
import ast
import difflib
import functools
import json
import sys
from dataclasses import asdict, dataclass, field

from course.chapters import CHAPTERS, ROOT, parsed, sections

BEGIN, END = "<!-- what-changed:begin -->", "<!-- what-changed:end -->"
README_BEGIN, README_END = "<!-- chapters:begin -->", "<!-- chapters:end -->"
PREAMBLE = "docstring and imports"  # what comes before the first banner


@dataclass
class Part:
    """One named piece of code.py (a section, a function or class, a tool schema)."""

    name: str
    line: int  # where it starts, counted from 1
    text: str
    section: str = ""  # the section that holds it (for functions and tools)
    constant: bool = False  # an UPPER_CASE name assigned at the top level


@dataclass
class SectionChange:
    name: str
    status: str  # "new", "changed" or "removed"
    line: int  # its banner's line in the new code.py (in the old one when removed)
    added: int = 0  # lines added and removed in it
    removed: int = 0
    functions: dict = field(default_factory=dict)  # "new" / "changed" / "removed": [names]
    tools: dict = field(default_factory=dict)


@dataclass
class Changes:
    chapter: str
    previous: str | None
    lines: int  # of the new code.py
    added: int
    removed: int
    sections: list  # [SectionChange], in file order (removed ones where they were)
    carried: int  # sections carried over unchanged


# ---- reading one code.py ----------------------------------------------------------------------


def source_of(name, root=ROOT):
    return (root / name / "code.py").read_text(encoding="utf-8")


def section_parts(source):
    """[Part] for each section, the docstring and imports first (as PREAMBLE)."""
    found = sections(source)
    parts, offset = [], 0
    first = source.find(found[0][2]) if found else len(source)
    parts.append(Part(PREAMBLE, 1, source[:first]))
    offset = first
    for title, _, text in found:
        start = source.index(text, offset)
        parts.append(Part(title, source.count("\n", 0, start) + 1, text))
        offset = start + len(text)
    return parts


def section_of_line(parts, line):
    """The name of the section that holds line `line` (from 1)."""
    holder = parts[0].name
    for part in parts:
        if part.line <= line:
            holder = part.name
    return holder


def assigned_name(node):
    """The UPPER_CASE name a top-level statement assigns (`X = ...`, `X: int = ...`), or None:
    the settings and tables of a module, such as MAX_TOKENS or SAFE_TOOLS. (`TOOLS += ...` adds
    to a name; it is a line of the section it stands in.)"""
    targets = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign):
        targets = [node.target]
    for target in targets:
        if isinstance(target, ast.Name) and target.id.isupper():
            return target.id
    return None


def function_parts(source, parts):
    """{name: Part} for every top-level def and class (decorators included) and every UPPER_CASE
    name assigned at the top level (its first assignment), in the order they appear."""
    lines = source.splitlines(keepends=True)
    found = {}
    for node in parsed(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name, constant = node.name, False
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        else:
            name, constant, start = assigned_name(node), True, node.lineno
            if name is None or name in found:
                continue
        text = "".join(lines[start - 1 : node.end_lineno])
        found[name] = Part(name, start, text, section_of_line(parts, start), constant)
    return found


def tool_parts(source, parts):
    """{tool name: Part} for every dict literal with a constant "name" and an "input_schema"
    in a top-level assignment (BASH_TOOL = {...}, FILE_TOOLS = [{...}, ...])."""
    found = {}
    values = [node.value for node in parsed(source).body
              if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and node.value]
    for node in (inner for value in values for inner in ast.walk(value)):
        if not isinstance(node, ast.Dict):
            continue
        keys = {key.value: value for key, value in zip(node.keys, node.values, strict=True)
                if isinstance(key, ast.Constant)}
        name = keys.get("name")
        if "input_schema" in keys and isinstance(name, ast.Constant):
            found[name.value] = Part(name.value, node.lineno, ast.unparse(node),
                                     section_of_line(parts, node.lineno))
    return found


# ---- comparing two ----------------------------------------------------------------------------


def compare(old_parts, new_parts):
    """{"new": [...], "changed": [...], "removed": [...]} of names, new ones in file order."""
    return {
        "new": [name for name in new_parts if name not in old_parts],
        "changed": [name for name in new_parts
                    if name in old_parts and old_parts[name].text != new_parts[name].text],
        "removed": [name for name in old_parts if name not in new_parts],
    }


def compared(old_source, new_source):
    """What is new between any two code.py texts, as the lesson tables count it:
    {"functions": compare(...), "tools": compare(...)}, where functions are the top-level
    functions and classes (the site's diff pages list these too)."""
    old_functions, old_tools = named_parts(old_source)
    new_functions, new_tools = named_parts(new_source)
    return {"functions": compare(old_functions, new_functions),
            "tools": compare(old_tools, new_tools)}


@functools.cache  # the site compares each code.py with every other, in two languages
def named_parts(source):
    """(the functions and classes, the tools) of one code.py, by name."""
    parts = section_parts(source)
    functions = {name: part for name, part in function_parts(source, parts).items()
                 if not part.constant}
    return functions, tool_parts(source, parts)


@functools.cache  # the site's diff pages ask again for each view, in two languages
def line_matcher(old_source, new_source):
    """difflib's matcher of two files, line by line: the one difflib.unified_diff uses, so that
    what it pairs, and the counts below, are those of `diff -u`."""
    return difflib.SequenceMatcher(None, old_source.splitlines(), new_source.splitlines())


@functools.cache
def line_counts(old_source, new_source):
    """The changed line numbers (from 1) of each side, as `diff -u` finds them: (added, removed),
    two tuples. One count for the lessons' tables, the README's and the site's diff pages."""
    added, removed = [], []
    for tag, i1, i2, j1, j2 in line_matcher(old_source, new_source).get_opcodes():
        if tag != "equal":
            removed += range(i1 + 1, i2 + 1)
            added += range(j1 + 1, j2 + 1)
    return tuple(added), tuple(removed)


@functools.cache
def what_changed(name, root=ROOT):
    """The Changes of chapter `name` against the one before it (s01: against nothing).

    Made once per process (the lessons' test and the README's both ask)."""
    index = CHAPTERS.index(name)
    previous = CHAPTERS[index - 1] if index else None
    new_source = source_of(name, root)
    old_source = source_of(previous, root) if previous else ""
    new_sections = {part.name: part for part in section_parts(new_source)}
    old_sections = {part.name: part for part in section_parts(old_source)} if previous else {}
    new_functions = function_parts(new_source, list(new_sections.values()))
    new_tools = tool_parts(new_source, list(new_sections.values()))
    old_functions = old_tools = {}
    if previous:
        old_functions = function_parts(old_source, list(old_sections.values()))
        old_tools = tool_parts(old_source, list(old_sections.values()))
    added, removed = line_counts(old_source, new_source)

    changes = {}
    for part in new_sections.values():
        old = old_sections.get(part.name)
        if old is None:
            status = "new"
        elif old.text != part.text:
            status = "changed"
        else:
            continue
        changes[part.name] = SectionChange(part.name, status, part.line)
    for part in old_sections.values():
        if part.name not in new_sections:
            changes[part.name] = SectionChange(part.name, "removed", part.line)
    # difflib may match a line at the edge of a section with its twin in the next one (a rule
    # line of a banner): a line it counts in a section that is carried unchanged belongs to the
    # nearest changed section before it (or after it), so the counts add up to diff -u's.
    for lines, parts, counter in ((added, new_sections, "added"),
                                  (removed, old_sections, "removed")):
        order = list(parts)
        for line in lines:
            holder = section_of_line(list(parts.values()), line)
            if holder not in changes:
                at = order.index(holder)
                nearest = [name for name in order[at::-1] + order[at:] if name in changes]
                holder = nearest[0]
            setattr(changes[holder], counter, getattr(changes[holder], counter) + 1)
    for kind, old_parts, new_parts in (("functions", old_functions, new_functions),
                                       ("tools", old_tools, new_tools)):
        for status, names in compare(old_parts, new_parts).items():
            for item in names:
                part = new_parts.get(item) or old_parts[item]
                change = changes[part.section]
                # A new section is listed by its functions, classes and tools; a changed one
                # by its constants as well (a new entry in SAFE_TOOLS is news, a new table in
                # a new section is part of it).
                if part.constant and change.status != "changed":
                    continue
                getattr(change, kind).setdefault(status, []).append(item)

    order = list(new_sections) + [name for name in old_sections if name not in new_sections]
    return Changes(
        chapter=name,
        previous=previous,
        lines=len(new_source.splitlines()),
        added=len(added),
        removed=len(removed),
        sections=[changes[name] for name in order if name in changes],
        carried=sum(name in old_sections and name not in changes for name in new_sections),
    )


# ---- as markdown ------------------------------------------------------------------------------


# The words of a lesson's table, in each language a lesson is written in (the Chinese lessons,
# sNN_x/README.zh-CN.md, hold the Chinese table; tests/test_lessons_zh.py checks it).
WORDS = {
    "en": {
        "header": "| section | lines | functions, classes, constants and tools |",
        PREAMBLE: PREAMBLE, "new": "new", "changed": "changed", "removed": "removed",
        "tool": "tool", "tools": "tools", "tools_of": "{status} {tools} {names}",
        "comma": ", ", "semicolon": "; ",
        "status": " ({status})",
        "summary": "{lines} lines: +{added} −{removed} against {previous}; the other {carried} "
                   "sections are carried over unchanged.",
        "first": "{lines} lines, all new: the first chapter.",
    },
    "zh-CN": {
        "header": "| 节 | 行数 | 函数、类、常量和工具 |",
        PREAMBLE: "文档字符串和 import", "new": "新增", "changed": "修改", "removed": "删除",
        "tool": "工具", "tools": "工具", "tools_of": "{status}{tools} {names}",
        "comma": "、", "semicolon": "；",
        "status": "（{status}）",
        "summary": "共 {lines} 行：相对 {previous} +{added} −{removed}；"
                   "其余 {carried} 节原样沿用。",
        "first": "共 {lines} 行，全部是新的：这是第一章。",
    },
}


def names(items, style="`{}`", comma=", "):
    return comma.join(style.format(item) for item in items)


def what_cell(change, lang="en"):
    """'new `a`, `b`; changed `c`; new tool `bash`' for one section."""
    words, pieces = WORDS[lang], []
    for status in ("new", "changed", "removed"):
        if change.functions.get(status):
            listed = names(change.functions[status], comma=words["comma"])
            pieces.append(f"{words[status]} {listed}")
    for status in ("new", "changed", "removed"):
        tools = change.tools.get(status)
        if tools:
            pieces.append(words["tools_of"].format(
                status=words[status], tools=words["tools" if len(tools) > 1 else "tool"],
                names=names(tools, comma=words["comma"])))
    return words["semicolon"].join(pieces)


def lines_cell(change):
    if change.status == "removed":
        return f"−{change.removed}"
    if change.removed == 0:
        return f"+{change.added}"
    return f"+{change.added} −{change.removed}"


def lesson_table(changes, lang="en"):
    """The markdown between the markers: one row per section that is new, changed or removed,
    in the words of `lang` (the names of sections, functions and tools stay as in code.py)."""
    words = WORDS[lang]
    rows = [words["header"], "| --- | --- | --- |"]
    for change in changes.sections:
        title = change.name.split(":")[0]  # "THE HARNESS: what keeps it safe ..." is long
        if change.name == PREAMBLE:
            title = words[PREAMBLE]
        elif change.status != "removed":
            title = f"[{title}](code.py#L{change.line})"
        if change.status != "changed" and changes.previous:
            title += words["status"].format(status=words[change.status])
        rows.append(f"| {title} | {lines_cell(change)} | {what_cell(change, lang)} |")
    if changes.previous:
        summary = words["summary"].format(lines=changes.lines, added=changes.added,
                                          removed=changes.removed, previous=changes.previous,
                                          carried=changes.carried)
    else:
        summary = words["first"].format(lines=changes.lines)
    return "\n".join(rows) + "\n\n" + summary


def summary_of(name, root=ROOT):
    """'the agent loop.' from the docstring's first line 's01_loop: the agent loop.'"""
    return source_of(name, root).splitlines()[0].strip('"').split(": ", 1)[1]


def readme_rows(root=ROOT):
    """The rows of the top README's chapter table."""
    rows = []
    for name in CHAPTERS:
        if not (root / name / "code.py").exists():
            continue
        changes = what_changed(name, root)
        rows.append(f"| [{name}]({name}/README.md) | {summary_of(name, root)} | {changes.lines} "
                    f"| +{changes.added} | -{changes.removed} |")
    return rows


def readme_table(root=ROOT):
    header = ["| chapter | what it adds | lines | added | removed |",
              "| --- | --- | --- | --- | --- |"]
    return "\n".join(header + readme_rows(root))


# ---- the files that hold the tables -----------------------------------------------------------


def between(text, begin, end):
    """The text between the markers (without the newlines next to them), or None."""
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        return None
    return text.split(begin, 1)[1].split(end, 1)[0].strip("\n")


def replaced(text, begin, end, table):
    head, rest = text.split(begin, 1)
    return f"{head}{begin}\n{table}\n{end}{rest.split(end, 1)[1]}"


def targets(root=ROOT, only=None):
    """(path, begin, end, the table it should hold) for every file that holds a table: the top
    README and the lessons, or only those of the chapters named in `only` ("README" for the top
    README)."""
    found = []
    if only is None or "README" in only:
        found.append((root / "README.md", README_BEGIN, README_END, readme_table(root)))
    for name in CHAPTERS:
        lesson = root / name / "README.md"
        chosen = only is None or name in only
        if chosen and lesson.exists() and (root / name / "code.py").exists():
            found.append((lesson, BEGIN, END, lesson_table(what_changed(name, root))))
    return found


def stale(root=ROOT, only=None):
    """[(path, why)] of the files whose table is not what the code gives."""
    found = []
    for path, begin, end, table in targets(root, only):
        held = between(path.read_text(encoding="utf-8"), begin, end)
        if held is None:
            found.append((path, f"has no single {begin} ... {end}"))
        elif held != table:
            found.append((path, "the table differs from the code"))
    return found


def write(root=ROOT, only=None):
    """Rewrite every table that is stale; return the files written."""
    written = []
    for path, begin, end, table in targets(root, only):
        text = path.read_text(encoding="utf-8")
        if between(text, begin, end) not in (None, table):
            path.write_text(replaced(text, begin, end, table), encoding="utf-8")
            written.append(path)
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m course.changes", description=__doc__.split(
        "\n")[0])
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true",
                        help="rewrite the tables between the markers in the lessons and README.md")
    action.add_argument("--check", action="store_true",
                        help="exit 1 if a table differs from the code")
    action.add_argument("--json", action="store_true", help="print the data as JSON")
    parser.add_argument("only", nargs="*", metavar="CHAPTER",
                        help="only these lessons (s02_tools ...; README for the top README)")
    args = parser.parse_args(argv)
    only = set(args.only) or None
    unknown = sorted((only or set()) - set(CHAPTERS) - {"README"})
    if unknown:
        parser.error(f"no such chapter: {', '.join(unknown)}")
    if args.write:
        for path in write(only=only):
            print(f"rewrote the table in {path.relative_to(ROOT)}")
        for path, why in stale(only=only):
            print(f"{path.relative_to(ROOT)}: {why}", file=sys.stderr)
        return 1 if stale(only=only) else 0
    if args.check:
        for path, why in stale(only=only):
            print(f"{path.relative_to(ROOT)}: {why}")
        return 1 if stale(only=only) else 0
    chapters = [name for name in CHAPTERS if (ROOT / name / "code.py").exists()
                and (only is None or name in only)]
    if args.json:
        print(json.dumps([asdict(what_changed(name)) for name in chapters], indent=1))
        return 0
    for name in chapters:
        print(f"## {name}\n\n{lesson_table(what_changed(name))}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
