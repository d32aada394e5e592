"""The Code tab: code.py with line numbers, the lines new in this chapter marked, and an
anchor for every line (#code-L620) and every section banner (#code-permissions), so that
a line or a section can be linked to; a list of the sections leads to them.

A line's anchor is an empty <b id=code-L620>; one for each of s11's 4,712 lines would be 97 KB,
a sixth of its page. The build writes those of the lines the site links to (linked_lines: a
lesson's `code.py#L157`, the What changed table), of each banner's line, of line 1 and of
every LINE_STEP-th line (where a search hit counts on from: site.js codeHit); site.js adds the
others as the page loads (addLineAnchors), before the tabs read the address. So without
JavaScript every link the site makes to a line lands on it, but a hand-made link to another
line (#code-L623) needs JavaScript.
"""

import html
import re

from course.chapters import banner_title, split_tag

from .diffs import Column, Diff
from .highlight import highlight_lines
from .lessons import slug
from .strings import english_inside, say

LINE_STEP = 20  # the build anchors every LINE_STEP-th line, and line 1
# a link to a line of a chapter's Code tab, as a page of the site writes it
LINE_LINK = re.compile(r'href="(?:[^"#/]{1,40}/){0,3}(s\d\d_\w{1,40})\.html#code-L(\d{1,6})"')


def line_anchor(number):
    return f"code-L{number}"


def section_anchor(title):
    return "code-" + slug(title)


def banners(code):
    """[(line number of the banner's first line, its title without the tag)], in order."""
    lines = code.splitlines()
    found = []
    for index in range(len(lines)):
        title = banner_title(lines, index)
        if title is not None:
            found.append((index + 1, split_tag(title)[0]))
    return found


def linked_lines(pages):
    """{chapter name: the line numbers that the pages' HTML links to in its Code tab}."""
    found = {}
    for text in pages:
        for name, number in LINE_LINK.findall(text):
            found.setdefault(name, set()).add(int(number))
    return found


def anchored(number, linked, banner_lines):
    """Whether the build writes line `number`'s anchor (site.js adds the others)."""
    return number == 1 or number % LINE_STEP == 0 or number in linked or number in banner_lines


def code_view(chapter, lang, linked=frozenset()):
    """The list of sections, then code.py with line numbers; the lines that are new in this
    chapter marked "+". A line the site links to (`linked`, its numbers), a banner's line and
    every LINE_STEP-th line start with an empty element that holds its anchor."""
    new = Diff(chapter.previous, chapter).added_line_numbers if chapter.previous else set()
    lines = highlight_lines(chapter.code)
    width = len(str(len(lines)))
    sections = banners(chapter.code)
    at = {number: section_anchor(title) for number, title in sections}
    column = Column()
    for number, line_html in enumerate(lines, 1):
        anchor = ""
        if anchored(number, linked, at):
            anchor = f'<b id={line_anchor(number)}></b>'  # (short: unquoted)
        if number in at:
            anchor += f'<span id="{at[number]}"></span>'
        if number in new:
            column.add("added", f"{number:>{width}} +", anchor + line_html)
        else:
            column.add("context", f"{number:>{width}}  ", anchor + line_html)
    if chapter.previous:
        note = say(lang, "code_new", n=len(new), previous=html.escape(chapter.previous.name))
    else:
        note = say(lang, "code_first", n=len(lines))
    en = english_inside(lang)
    toc = "".join(f'<li><a href="#{section_anchor(title)}"{en}>{html.escape(title)}</a></li>'
                  for _, title in sections)
    toc = (f'<nav class="toc" aria-label="{say(lang, "code_sections")}"><ol>{toc}</ol></nav>'
           if sections else "")
    return (f'<p>{note}</p>{toc}<div class="code-view">'
            f'{column.html(f"{chapter.name}/code.py", lang)}</div>')
