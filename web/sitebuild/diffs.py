"""Diffs of two code.py files: unified and side by side, and what is new."""

import difflib
import functools
import html
import re
from dataclasses import dataclass

from course import changes, section_titles

from .chapters import Chapter
from .highlight import highlight_lines
from .strings import english_inside, say
from .templates import render


@dataclass
class Diff:
    """code.py of one chapter against another, line by line (course.changes counts the lines, so
    that the site's counts are the lessons' and the README's)."""
    old: Chapter
    new: Chapter

    @property
    def added(self):
        return len(changes.line_counts(self.old.code, self.new.code)[0])

    @property
    def removed(self):
        return len(changes.line_counts(self.old.code, self.new.code)[1])

    @property
    def added_line_numbers(self):
        """The lines of the new file (from 1) that the old one does not have."""
        return set(changes.line_counts(self.old.code, self.new.code)[0])

    def hunks(self, context=3):
        """The changes in groups with `context` lines around them, as in diff -u."""
        return list(changes.line_matcher(self.old.code, self.new.code).get_grouped_opcodes(context))


@functools.cache  # the sections of each line of a file, found once for all its diffs
def sections_of_lines(code):
    return section_titles(code.splitlines())


def hunk_header(group, new_code):
    """The hunk's line numbers, then the title of the section it starts in, like diff -F."""
    first, last = group[0], group[-1]
    old_start, old_count = first[1] + 1, last[2] - first[1]
    new_start, new_count = first[3] + 1, last[4] - first[3]
    titles = sections_of_lines(new_code)
    section = titles[min(first[3], len(titles) - 1)] if titles else ""
    return f"@@ -{old_start},{old_count} +{new_start},{new_count} @@ {section}".rstrip()


class Column:
    """A gutter (line numbers, signs) and lines of code, built line by line; lines of one
    kind in a row share one element (<ins>, <del>, or a span), and so does their gutter."""

    TAGS = {"added": "ins", "removed": "del", "context": "span", "empty": "span", "hunk": "span"}

    def __init__(self):
        self.gutter, self.code = [], []
        self.kind, self.run_gutter, self.run_code = None, [], []

    def add(self, kind, gutter, code_html):
        if kind != self.kind:
            self.flush()
            self.kind = kind
        self.run_gutter.append(html.escape(gutter) + "\n")
        self.run_code.append(code_html + "\n")

    def flush(self):
        if self.kind:
            tag = self.TAGS[self.kind]
            self.gutter.append(f'<span class="{self.kind}">{"".join(self.run_gutter)}</span>')
            self.code.append(f'<{tag} class="{self.kind}">{"".join(self.run_code)}</{tag}>')
        self.kind, self.run_gutter, self.run_code = None, [], []

    def html(self, label, lang="en"):
        self.flush()
        return (f'<div class="scroll hl" tabindex="0" role="region" '
                f'aria-label="{html.escape(label)}"><div class="rows"{english_inside(lang)}>'
                f'<pre class="gutter" aria-hidden="true">{"".join(self.gutter)}</pre>'
                f'<pre class="lines"><code>{"".join(self.code)}</code></pre></div></div>')


def number_width(diff):
    return len(str(max(len(diff.old.code.splitlines()), len(diff.new.code.splitlines()), 1)))


def by_the_texts(view):
    """A view of a diff is a function of the two files' names and texts and of the language:
    made once a process (a second build, as the tests make, finds it made)."""
    made = {}

    @functools.wraps(view)
    def cached(diff, lang):
        key = (diff.old.name, diff.old.code, diff.new.name, diff.new.code, lang)
        if key not in made:
            made[key] = view(diff, lang)
        return made[key]
    return cached


# ---- the change within a line: a line removed and the line added in its place --------

SIMILAR = 0.5  # lines this alike (difflib's ratio) are one line changed: its change is marked
TAG_OR_ENTITY = re.compile(r"(<[^>]*>|&#?\w+;)")


def changed_within(old_line, new_line):
    """The parts of each line that differ, as character ranges [(start, end)], when the two are
    one line changed (alike enough); else None."""
    matcher = difflib.SequenceMatcher(None, old_line, new_line, autojunk=False)
    if matcher.ratio() < SIMILAR:
        return None
    old, new = [], []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete") and i2 > i1:
            old.append((i1, i2))
        if tag in ("replace", "insert") and j2 > j1:
            new.append((j1, j2))
    return old, new


def mark_ranges(line_html, ranges):
    """A highlighted line with its characters in `ranges` inside <span class="change">: closed
    before a tag of the highlighting and opened again after it, so that the tags stay nested."""
    if not ranges:
        return line_html
    out, position, inside = [], 0, False
    for part in TAG_OR_ENTITY.split(line_html):
        if not part:
            continue
        if part.startswith("<"):
            out.append("</span>" + part + '<span class="change">' if inside else part)
            continue
        characters = [part] if part.startswith("&") else list(part)
        for character in characters:
            wanted = any(start <= position < end for start, end in ranges)
            if wanted != inside:
                out.append('<span class="change">' if wanted else "</span>")
                inside = wanted
            out.append(character)
            position += 1
    if inside:
        out.append("</span>")
    return re.sub(r'<span class="change"></span>', "", "".join(out))


def marked_changes(diff, old_html, new_html):
    """The highlighted lines of both files, with the change within each line changed marked:
    in a block replaced, the lines paired in order."""
    old_lines, new_lines = diff.old.code.splitlines(), diff.new.code.splitlines()
    old_html, new_html = list(old_html), list(new_html)
    for tag, i1, i2, j1, j2 in changes.line_matcher(diff.old.code, diff.new.code).get_opcodes():
        if tag != "replace":
            continue
        for i, j in zip(range(i1, i2), range(j1, j2), strict=False):  # the pairs, in order
            found = changed_within(old_lines[i], new_lines[j])
            if found:
                old_html[i] = mark_ranges(old_html[i], found[0])
                new_html[j] = mark_ranges(new_html[j], found[1])
    return old_html, new_html


@by_the_texts
def unified_view(diff, lang):
    """The diff as in diff -u: old and new line numbers and a sign in the gutter, then the
    line; lines added are <ins>, lines removed <del>."""
    old_html, new_html = marked_changes(diff, highlight_lines(diff.old.code),
                                        highlight_lines(diff.new.code))
    width = number_width(diff)
    column = Column()
    for group in diff.hunks():
        column.add("hunk", "", html.escape(hunk_header(group, diff.new.code)))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                    column.add("context", f"{i + 1:>{width}} {j + 1:>{width}}  ", new_html[j])
                continue
            for i in range(i1, i2):
                column.add("removed", f"{i + 1:>{width}} {'':>{width}} -", old_html[i])
            for j in range(j1, j2):
                column.add("added", f"{'':>{width}} {j + 1:>{width}} +", new_html[j])
    if not diff.hunks():
        column.add("context", "", say(lang, "same_files"))
    return column.html(say(lang, "unified_label", old=diff.old.name, new=diff.new.name), lang)


def side_by_side_view(diff, lang):
    """The same changes, old on the left and new on the right, line beside line: site.js
    builds it from the unified view (sending both made the heaviest pages twice as heavy,
    issue 57), removed and added lines paired in order as here. Without JavaScript, a line
    says where the changes are."""
    old = html.escape(say(lang, "old_label", old=diff.old.name))
    new = html.escape(say(lang, "new_label", new=diff.new.name))
    return (f'<p class="split-from-unified" data-old-label="{old}" data-new-label="{new}">'
            f'{say(lang, "split_needs_js")}</p>')


def diff_views(diff, id_prefix, lang, heading_level=3):
    """The summary, then both views of a diff, with buttons to switch between them (site.js;
    the layout chosen goes in the address: #diff-split). Template: diff.html."""
    return render("diff.html", lang, diff=diff, id_prefix=id_prefix, h=f"h{heading_level}",
                  items=summary_items(diff, lang), unified=unified_view(diff, lang),
                  split=side_by_side_view(diff, lang))


# ---- what is new: computed from the two files ----

@dataclass
class WhatIsNew:
    tools_added: list
    tools_removed: list
    functions_added: list
    functions_changed: list
    functions_removed: list
    lines_added: int
    lines_removed: int


def what_is_new(diff):
    """Tools and functions added, changed and removed: course.changes, the lesson tables' source."""
    new = changes.compared(diff.old.code, diff.new.code)
    return WhatIsNew(
        tools_added=new["tools"]["new"],
        tools_removed=new["tools"]["removed"],
        functions_added=new["functions"]["new"],
        functions_changed=new["functions"]["changed"],
        functions_removed=new["functions"]["removed"],
        lines_added=diff.added,
        lines_removed=diff.removed,
    )


def name_list(names, lang, suffix=""):
    if not names:
        return say(lang, "none")
    return say(lang, "list_separator").join(
        f"<code{english_inside(lang)}>{html.escape(name)}{suffix}</code>" for name in names)


def summary_items(diff, lang):
    """The list of what is new: tools and functions added, changed, removed."""
    new = what_is_new(diff)
    rows = [
        ("tools_added", name_list(new.tools_added, lang), len(new.tools_added)),
        ("tools_removed", name_list(new.tools_removed, lang), len(new.tools_removed)),
        ("functions_added", name_list(new.functions_added, lang, "()"),
         len(new.functions_added)),
        ("functions_changed", name_list(new.functions_changed, lang, "()"),
         len(new.functions_changed)),
        ("functions_removed", name_list(new.functions_removed, lang, "()"),
         len(new.functions_removed)),
    ]
    return "".join(
        say(lang, "summary_item", label=say(lang, key), names=names,
            count=say(lang, "count", n=count) if count else "")
        for key, names, count in rows if count or key != "tools_removed"
    )
