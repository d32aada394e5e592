"""The Lesson tab: a chapter's README rendered by mistune."""

import html
import re
from urllib.parse import unquote

import mistune

from course.diagrams import readable_width
from course.translations import LANGUAGES, is_language_line
from course.translations import MARKER as TRANSLATION_MARKER

from .highlight import highlight_block
from .strings import (
    LESSON_FILE,
    SOFT_BREAK,
    UP,
    english_inside,
    join_cjk_lines,
    link_to,
    mark_english_quotes,
    say,
)


def slug(text):
    """A heading's anchor, as GitHub makes it: "How to run it?" -> "how-to-run-it"."""
    text = re.sub(r"<[^>]+>", "", html.unescape(text)).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


class LessonRenderer(mistune.HTMLRenderer):
    """HTML for a chapter's README, fitted into the chapter page.

    - headings keep their level, but none is above <h2> (the page's <h1> is the
      chapter), and get ids "lesson-<slug>", so a README's own #links keep working; a
      translated heading gets the id of the English one it translates (its marker names it),
      so that the language switch keeps the section;
    - fenced code is highlighted by pygments;
    - a link to another chapter, its code or its scenario goes to that page of
      the site, a README.md to the English page, a README.zh-CN.md to the Chinese one;
      a link off the site, or to a file the site does not have, becomes
      text that shows where it points (the site links to no other host);
    - raw HTML is shown as text.
    """

    def __init__(self, chapter, chapter_names, known_ids, lang="en", anchors=None, root=None):
        super().__init__(escape=True)
        self.chapter = chapter
        self.root = (root or chapter.folder.parent).resolve()  # the repository
        self.lang = lang  # the page's language
        self.anchors = anchors or {}  # {slug of a translated heading: slug of the English one}
        self.chapter_names = chapter_names
        self.known_ids = known_ids  # ids of the headings (from a first pass), for #links
        self.links_to_headings = False  # whether a #link asked for them
        self.ids = []
        self.images = []  # (source file, name in the site) to copy

    def heading(self, text, level, **attrs):
        own = slug(text) or "section"
        anchor = "lesson-" + self.anchors.get(own, own)
        while anchor in self.ids:
            anchor += "-1"
        self.ids.append(anchor)
        level = min(max(level, 2), 6)
        return f'<h{level} id="{anchor}">{text}</h{level}>\n'

    def softbreak(self):
        """A line break inside a paragraph: placed by join_cjk_lines once the paragraph is
        rendered (none between two Chinese characters)."""
        return SOFT_BREAK

    def block_code(self, code, info=None):
        language = info.split()[0] if info and info.strip() else ""
        return highlight_block(code, language, self.lang)

    def codespan(self, text):
        """Inline code; a long name may break after its _ . / - (a <wbr>), not inside a word."""
        shown = super().codespan(text).replace("<code>", f"<code{english_inside(self.lang)}>", 1)
        if len(text) < LONG_NAME:
            return shown
        start, end = shown.index(">") + 1, shown.rindex("<")  # the text inside <code>...</code>
        # (after a "-" inside a word only: an option such as -n keeps its dash)
        inside = re.sub(r"(?:(?<=[_./])|(?<=\w-))(?=\w)", "<wbr>", shown[start:end])
        # an option and its value stay on one line (pytest -n 2, not "-n" then "2")
        inside = OPTION_AND_VALUE.sub(r'<span class="nowrap">\1</span>', inside)
        return shown[:start] + inside + shown[end:]

    def link(self, text, url, title=None):
        target = self.site_target(url)
        if target is None:  # text, and where it points
            if strip_tags(text) == url:
                return f"<code>{text}</code>"
            # Chinese text takes full-width brackets, with no space before them
            if self.lang != "en":
                return f'{text}<span class="where">（{html.escape(url)}）</span>'
            return f'{text} <span class="where">({html.escape(url)})</span>'
        title_attribute = f' title="{html.escape(title)}"' if title else ""
        return f'<a href="{html.escape(target)}"{title_attribute}>{text}</a>'

    def image(self, text, url, title=None):
        source = self.local_file(url)
        if source is None or not source.is_file():
            return f'<span class="where">[image: {html.escape(text)} ({html.escape(url)})]</span>'
        name = f"{self.chapter.name}-{source.name}"
        self.images.append((source, name))
        image = f'src="{UP[self.lang]}images/{html.escape(name)}" alt="{html.escape(text)}"'
        if source.suffix != ".svg":
            return f"<img {image}>"
        return diagram_image(source, image)

    def local_file(self, url):
        """The repository file a relative url points at, or None."""
        if re.match(r"^[a-z][a-z0-9+.-]*:", url, re.I) or url.startswith("//"):
            return None
        path = url.split("#")[0].split("?")[0]
        return (self.chapter.folder / path).resolve() if path else None

    def site_target(self, url):
        """Where a README link goes in the site, or None when the site has no such page."""
        lang = self.lang
        if url.startswith("#"):
            self.links_to_headings = True
            own = slug(unquote(url[1:]))
            anchor = "lesson-" + self.anchors.get(own, own)
            return f"#{anchor}" if anchor in self.known_ids else None
        source = self.local_file(url)
        if source is None:
            return None
        root = self.root
        fragment = url.partition("#")[2]
        section = f"#lesson-{slug(unquote(fragment))}" if fragment else ""
        pages = {"": None, **{name: f"{name}.html" for name in self.chapter_names}}
        for name, page_name in pages.items():
            folder = root / name if name else root
            if source == folder:
                return page_name or "index.html"
            for target_lang in LANGUAGES:  # a lesson, or the course README: its page
                if source == folder / LESSON_FILE[target_lang]:
                    return link_to(lang, target_lang, page_name or README_PAGE) + section
            if not name:
                continue
            if source == folder / "code.py":  # a line (code.py#L157) has its anchor there
                line = re.fullmatch(r"L(\d+)", fragment)
                return f"{page_name}#code-L{line[1]}" if line else f"{page_name}#code"
            if source == folder / "scenario.json":
                return f"{page_name}#run"
            if source == folder / "notebook.ipynb" and source.is_file():
                return f"{UP[lang]}notebooks/{name}.ipynb"
        return None


def strip_tags(text):
    return html.unescape(re.sub(r"<[^>]+>", "", text))


LONG_NAME = 20  # characters of inline code from which it may break at <wbr>
# " -n 2", " --port 8000": an option, a space and a value that is no option (bounded: it sees
# lesson text only, written by the course)
OPTION_AND_VALUE = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]{0,30} [^\s<&-][^\s<&]{0,40})")
# The heading after a lesson's core ("## Going deeper", "## 深入"): what follows it is folded.
DEEPER_HEADINGS = {"going deeper", "深入"}
README_PAGE = "readme.html"  # the course README (README.md at the root), on the site


def render_lesson(chapter, chapter_names, lang="en", root=None):
    """The README (README.zh-CN.md for lang "zh-CN") as HTML, and the images it uses. Two
    passes when a link goes to a heading (#...): the first finds the headings.

    A title line ("# s01_loop: the agent loop.") is left out: the page's <h1> says it, and so
    is the language line under it (the page has its own switch), and a line that holds only
    an HTML comment, such as the markers of the generated "What changed" table and of a
    translation (raw HTML would be shown as text).
    """
    markdown = chapter.lesson_in(lang)
    if markdown.startswith("# "):
        markdown = markdown.partition("\n")[2]
    anchors = english_anchors(markdown)
    markdown = "".join(line for line in markdown.splitlines(keepends=True)
                       if not re.fullmatch(r"\s*<!--.*-->\s*", line)
                       and not is_language_line(line))
    plugins = ["table", "strikethrough"]
    renderer = LessonRenderer(chapter, chapter_names, set(), lang, anchors, root)
    body = mistune.create_markdown(renderer=renderer, plugins=plugins)(markdown)
    if renderer.links_to_headings:  # the known ids were asked for: again, knowing them
        ids = set(renderer.ids)
        renderer = LessonRenderer(chapter, chapter_names, ids, lang, anchors, root)
        body = mistune.create_markdown(renderer=renderer, plugins=plugins)(markdown)
    if lang == "en":
        body = body.replace(SOFT_BREAK, "\n")
    else:
        body = mark_english_quotes(join_cjk_lines(body))
    # a wide table scrolls in its own box, not the page (site.js lets it take the focus)
    body = body.replace("<table>", '<div class="table-scroll"><table>').replace(
        "</table>", "</table></div>")
    return fold_deeper(body), renderer.images


def diagram_image(source, image):
    """An SVG diagram, never so narrow that its text is under 12 px (course.diagrams): a
    narrower box scrolls it sideways (site.js lets the box take the focus then)."""
    width = readable_width(source.read_text(encoding="utf-8"))
    style = f' style="min-width: {width}px"' if width else ""
    return f'<span class="diagram-scroll"><img class="diagram-image" {image}{style}></span>'


def fold_deeper(body):
    """The lesson's core, then its "Going deeper" part folded: a <details> whose summary is
    the heading, open by a click or by a link to anything inside it (site.js)."""
    for found in re.finditer(r'<h2 id="([^"]+)">(.*?)</h2>\n', body):
        if strip_tags(found[2]).strip().lower() in DEEPER_HEADINGS:
            return (body[:found.start()] + f'<details class="deeper" id="{found[1]}-part">'
                    f'<summary>{found[0].rstrip()}</summary>\n'
                    + body[found.end():] + "</details>\n")
    return body


def english_anchors(markdown):
    """{slug of a translated heading: slug of the English heading it translates}, from the
    marker under each heading of a translation (nothing for an English page)."""
    lines = markdown.splitlines()
    found = {}
    for line, following in zip(lines, lines[1:], strict=False):
        heading = re.fullmatch(r"#{1,6}\s+(.*?)\s*", line)
        marker = TRANSLATION_MARKER.fullmatch(following.strip())
        if heading and marker:
            found.setdefault(slug(heading[1]), slug(marker["title"]))
    return found


def lesson_placeholder(chapter, lang):
    docstring = html.escape(chapter.docstring) or say(lang, "no_docstring")
    return f"""<h2 id="lesson-not-written">{say(lang, "no_lesson_heading")}</h2>
<p>{say(lang, "no_lesson", file=LESSON_FILE[lang])}</p>
<pre class="docstring"{english_inside(lang)}>{docstring}</pre>"""
