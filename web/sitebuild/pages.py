"""The pages: home, chapter, compare, in each language."""

import html
import itertools
import re

from course import changes
from course.diagrams import readable_width
from course.translations import LANGUAGES, TRANSLATION

from .chapters import Chapter
from .diffs import Diff, diff_views
from .lessons import README_PAGE, lesson_placeholder, render_lesson
from .recording import trace_path
from .run_tab import run_view, script_json
from .settings import PYTHON
from .stages import build_it_yourself
from .start import clone_command, readme_commands, repository
from .strings import STRINGS, UP, in_english, link_to, say
from .templates import render


def page(template, title, chapters, lang, name, current="", **values):
    """A whole HTML page of language `lang` from `template` (which extends page.html): head,
    the course navigation with the switch to the other language's page of the same name, the
    main part, the footer."""
    other = next(other for other in LANGUAGES if other != lang)

    def here(key):
        return ' aria-current="page"' if key == current else ""

    values.setdefault("indexed", False)  # in the search index (sitebuild/search.py)
    values.setdefault("toc", "")  # the sidebar's contents of this page, under its link
    shown = next((chapter for chapter in chapters if chapter.name == current), None)
    return render(template, lang, title=title, chapters=chapters, other=other,
                  switch=link_to(lang, other, name), up=UP[lang], here=here, current=current,
                  current_label=shown.label if shown else "",
                  current_page=shown.page if shown else "", footer=footer(lang),
                  site_strings=script_json(STRINGS[lang]["script"]), **values) + "\n"


def footer(lang):
    """The footer: how the site was made, and the repository's address when the build was told
    it (COURSE_REPOSITORY)."""
    address = repository()
    if not address:
        return say(lang, "footer")
    return say(lang, "footer") + "\n" + say(lang, "footer_repository",
                                            address=html.escape(address))


def home_page(chapters, lang, root=None):
    """How to use the course, with commands taken from the chapters themselves, then a card
    per chapter."""
    first, second = chapters[0], chapters[1] if len(chapters) > 1 else None
    cards = []
    for chapter in chapters:
        if chapter.previous:
            diff = Diff(chapter.previous, chapter)
            stats = say(lang, "card_stats", added=diff.added, removed=diff.removed,
                        previous=chapter.previous.label)
        else:
            stats = say(lang, "card_first", lines=f"{len(chapter.code.splitlines()):,}")
        # its title: the chapter's own (its summary, in the page's language), as its page has
        cards.append({"chapter": chapter, "stats": stats,
                      "title": capitalise(chapter.summary_in(lang), lang).rstrip(".。"),
                      "columns": max((len(line) for line in chapter.diagram.splitlines()),
                                     default=1),
                      "svg": svg_card(chapter, lang)})
    return page(
        "home.html", say(lang, "course_title"), chapters, lang, "index.html", current="home",
        cards=cards,
        run_command=first.run_command or f"{PYTHON} {first.name}/code.py --offline",
        diff_command=f"diff -u {first.name}/code.py {second.name}/code.py" if second else "",
        replay_command=f"{PYTHON} {first.name}/code.py --script {trace_path(first.name)}",
        clone=clone_command(repository(root)), commands=readme_commands(root) if root else [],
        readme=README_PAGE,
    )


def svg_card(chapter, lang):
    """The lesson's SVG diagram for a home card, {"src", "file", "alt", "width"} (the width
    at which its text is readable, course.diagrams), or None (the card then draws
    the docstring's diagram). Its text alternative is the SVG's own <title>."""
    source = chapter.diagram_svg(lang)
    if source is None:
        return None
    svg = source.read_text(encoding="utf-8")
    title = re.search(r"<title[^>]*>(.*?)</title>", svg, re.S)
    return {"src": f"{UP[lang]}images/{chapter.name}-{source.name}", "file": source.name,
            "alt": html.unescape(title[1]).strip() if title else chapter.title_in(lang),
            "width": readable_width(svg)}


def readme_chapter(root):
    """The course README (README.md, README.zh-CN.md at the root) as a lesson to render, or
    None when the root has none."""
    readme, translated = root / "README.md", root / TRANSLATION
    if not readme.is_file():
        return None
    return Chapter(name="course", folder=root, code="",
                   lesson=readme.read_text(encoding="utf-8"),
                   lesson_zh=translated.read_text(encoding="utf-8") if translated.is_file()
                   else None)


def readme_page(readme, chapters, lang):
    """The course README, rendered as the lessons are, so that a lesson's "as the course
    README says" lands on it. Returns (page, images)."""
    body, images = render_lesson(readme, [c.name for c in chapters],
                                 lang if readme.lesson_in(lang) else "en", root=readme.folder)
    heading = readme.lesson_in(lang) or readme.lesson
    heading = heading.partition("\n")[0].removeprefix("# ")
    toc = side_contents(body, lang)
    body = contents(body, lang) + body
    return page("readme.html", f"{say(lang, 'readme_title')} · {say(lang, 'course_title')}",
                chapters, lang, README_PAGE, current="readme", heading=heading, indexed=True,
                body=body, toc=toc), images


def capitalise(text, lang="en"):
    """A summary as a sentence. (Chinese has no capitals, and an English word in it, such as
    "agent", keeps its small letter: GLOSSARY.zh-CN.md.)"""
    return text[:1].upper() + text[1:] if lang == "en" else text


def opening_line(chapter, lang):
    """The one line a chapter opens with, from the change summary (course.changes, the source
    of the lessons' What changed tables): its new sections and tools (or the sections it
    changed), and its lines against the chapter before. "" for a folder that is no chapter of
    the course (course.chapters)."""
    try:
        found = changes.what_changed(chapter.name, chapter.folder.parent)
    except (ValueError, OSError):
        return ""
    if not found.previous:
        return f'<p class="opening">{say(lang, "opening_first", lines=f"{found.lines:,}")}</p>\n'

    def listed(items):
        return say(lang, "list_separator").join(
            f"<code>{html.escape(item)}</code>" for item in items)
    new = [change.name.split(":")[0] for change in found.sections
           if change.status == "new" and change.name != changes.PREAMBLE]
    tools = [tool for change in found.sections for tool in change.tools.get("new", [])]
    news = []
    if new:
        news.append(say(lang, "opening_sections", n=len(new), names=listed(new)))
    if tools:
        news.append(say(lang, "opening_tools", n=len(tools), names=listed(tools)))
    if not news:
        changed = [change.name.split(":")[0] for change in found.sections
                   if change.status == "changed" and change.name != changes.PREAMBLE]
        news.append(say(lang, "opening_changed", n=len(changed), names=listed(changed)))
    line = say(lang, "opening", news=say(lang, "caption_separator").join(news),
               lines=f"{found.lines:,}", added=f"{found.added:,}", removed=f"{found.removed:,}",
               previous=html.escape(found.previous))
    return f'<p class="opening">{line}</p>\n'


def chapter_parts(chapter, names, lang):
    """What a chapter page shows that does not need its recorded run: lesson, diff (and the
    code, once the build knows the lines every page links to: build.py adds code_view's).
    A chapter whose lesson has no translation yet shows the English one, marked so."""
    if chapter.lesson_in(lang) is not None:
        lesson, images = render_lesson(chapter, names, lang)
    elif chapter.lesson is not None:
        lesson, images = render_lesson(chapter, names)
        lesson = f'<p class="note">{say(lang, "untranslated")}</p>\n<div lang="en">{lesson}</div>'
    else:
        lesson, images = lesson_placeholder(chapter, lang), []
    toc = side_contents(lesson, lang)
    lesson = opening_line(chapter, lang) + contents(lesson, lang) + lesson
    if chapter.previous:
        diff = f"<h2>{say(lang, 'diff_against', name=html.escape(chapter.previous.name))}</h2>"
        diff += diff_views(Diff(chapter.previous, chapter), "diff", lang)
    else:
        diff = f"<h2>{say(lang, 'diff_first_heading')}</h2><p>{say(lang, 'diff_first')}</p>"
    return {"lesson": lesson, "images": images, "diff": diff, "toc": toc}


TABS = ("lesson", "code", "diff", "run")


def headings(body):
    """[(id, text without links)] of the <h2> of a rendered lesson."""
    return [(anchor, re.sub(r"</?a[^>]*>", "", text))
            for anchor, text in re.findall(r'<h2 id="([^"]+)">(.*?)</h2>', body)]


def contents_items(body):
    """A link to each <h2> of a rendered lesson, as <li> items; "" if it has fewer than two."""
    found = headings(body)
    if len(found) < 2:
        return ""
    return "".join(f'<li><a href="#{anchor}">{text}</a></li>' for anchor, text in found)


def contents(body, lang):
    """The contents list of a rendered lesson: a link to each of its <h2>, folded on a phone,
    where it would fill the first screen (site.js opens it on a wider one)."""
    items = contents_items(body)
    if not items:
        return ""
    count = items.count("<li>")
    return (f'<nav class="toc" aria-label="{say(lang, "contents")}"><details class="toc-fold">'
            f'<summary>{say(lang, "contents_count", n=count)}</summary><ol>{items}</ol>'
            '</details></nav>\n')


def side_contents(body, lang):
    """The same list for the sidebar, under the page's link (site.js marks where you are)."""
    items = contents_items(body)
    return items and f'<ol class="side-toc">{items}</ol>'



def chapter_page(chapter, chapters, parts, lang):
    """The page of one chapter: four panels (site.js shows one at a time) and the pager."""
    index = chapters.index(chapter)
    title = f"{chapter.title_in(lang)} · {say(lang, 'course_title')}"
    return page(
        "chapter.html", title, chapters, lang, chapter.page, current=chapter.name, indexed=True,
        chapter=chapter, parts=parts, tabs=TABS, run=run_view(chapter, lang), toc=parts["toc"],
        build_command=build_it_yourself(chapter),
        prompt=in_english(lang, html.escape(chapter.run.prompt)),
        previous=chapters[index - 1] if index > 0 else None,
        next=chapters[index + 1] if index + 1 < len(chapters) else None,
    )


def compare_name(old, new):
    return f"compare-{old.name}-vs-{new.name}.html"


def compare_index(chapters, lang):
    title = f"{say(lang, 'compare')} · {say(lang, 'course_title')}"
    return page("compare_index.html", title, chapters, lang, "compare.html", current="compare",
                pairs=list(itertools.combinations(chapters, 2)), compare_name=compare_name,
                old=chapters[-2] if len(chapters) > 1 else chapters[0], new=chapters[-1])


def compare_page(old, new, chapters, lang):
    title = (f"{say(lang, 'compare_title', old=old.label, new=new.label)} · "
             f"{say(lang, 'course_title')}")
    return page("compare.html", title, chapters, lang, compare_name(old, new),
                current="compare", old=old, new=new,
                diff=diff_views(Diff(old, new), "compare", lang, heading_level=2))


def search_page(chapters, lang):
    """The search of the lessons and the code (Pagefind's index, site.js asks it)."""
    title = f"{say(lang, 'search')} · {say(lang, 'course_title')}"
    return page("search.html", title, chapters, lang, "search.html", current="search")


# An option of a command (--offline, -u, --clear-at) inside inline code or a command block:
# a browser may break a line after its "-" ("--" / "offline"), so each stays whole (a nowrap
# span, its <wbr> taken out); the spaces around it still break. Bounded: it sees the build's
# own pages.
OPTION = re.compile(r"(?<![\w./-])(--?[A-Za-z](?:[\w-]|<wbr>){0,40})")
# a <pre> (a block of code, whose options are kept only in a command block), or inline code
PRE_OR_CODE = re.compile(r"<pre\b([^>]*)>.*?</pre>|<code\b[^>]*>.*?</code>", re.S)
COMMAND_BLOCK = re.compile(r'<div class="hl command"[^>]*>$')
TAG_OR_TEXT = re.compile(r"(<(?!wbr>)[^>]*>)")


def keep_options_whole(page):
    """The page with every option of its inline code and command blocks kept on one line."""
    def whole(found):
        option = found[1].replace("<wbr>", "")
        return f'<span class="nowrap">{option}</span>'

    def in_text(found):
        if found[0].startswith("<pre") and not (
                re.search(r'class="[^"]*\bcommand\b', found[1])
                or COMMAND_BLOCK.search(page, max(0, found.start() - 60), found.start())):
            return found[0]  # code, a terminal, a diff: as it is
        parts, spans = TAG_OR_TEXT.split(found[0]), []  # text, tag, text...: options in text
        for index, part in enumerate(parts):
            if index % 2:  # a tag: is the text after it in a nowrap span already?
                if part.startswith("<span"):
                    spans.append(part == '<span class="nowrap">')
                elif part == "</span>" and spans:
                    spans.pop()
            elif not any(spans):
                parts[index] = OPTION.sub(whole, part)
        return "".join(parts)
    return PRE_OR_CODE.sub(in_text, page)
