"""The Code tab: code.py with line numbers, the lines new in this chapter marked, and an
anchor for every line (#code-L620) and every section banner (#code-permissions), so that
a line or a section can be linked to; a list of the sections leads to them."""

import html

from course.chapters import banner_title, split_tag

from .diffs import Column, Diff
from .highlight import highlight_lines
from .lessons import slug
from .strings import english_inside, say


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


def code_view(chapter, lang):
    """The list of sections, then code.py with line numbers; the lines that are new in this
    chapter marked "+". Each line starts with an empty element that holds its anchor."""
    new = Diff(chapter.previous, chapter).added_line_numbers if chapter.previous else set()
    lines = highlight_lines(chapter.code)
    width = len(str(len(lines)))
    sections = banners(chapter.code)
    at = {number: section_anchor(title) for number, title in sections}
    column = Column()
    for number, line_html in enumerate(lines, 1):
        anchor = f'<b id={line_anchor(number)}></b>'  # (short: one per line, unquoted)
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
