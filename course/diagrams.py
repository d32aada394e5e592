"""Each chapter's diagram: a Graphviz source beside the lesson, and the SVG committed next to it.

    python -m course.diagrams           render every sNN_x/diagram*.dot to diagram*.svg (needs dot)
    python -m course.diagrams --check   check every SVG against its source (needs no dot)

A source is `diagram.dot` (English) or `diagram.zh-CN.dot` (Chinese). Its first lines say what a
screen reader reads:

    // title: s03: a permission check before every tool call
    // desc: The loop of s01. Before a tool runs, ...

Rendering runs Debian's `dot -Tsvg` on a white background, then puts the title and the
description first in the SVG (`role="img"`, with `aria-labelledby`), and a comment with the SHA-1
of the source, so that `--check` can tell a stale SVG without Graphviz. Then it makes the picture
follow the reader's colour scheme and fonts (`follow_the_reader`): a `<style>` gives each colour of
the light picture its counterpart in dark mode (DARK, by the colour the source names: a colour with
none is a `--check` problem), and the one font a source names gets a stack after it that ends in
sans-serif (FONT_STACK), so that a reader without that font gets sans-serif text, not serif.
`--check` also holds the picture readable on a phone: shown 390 px wide, no
text is smaller than 12 px.
"""

import hashlib
import math
import re
import subprocess
import sys
from html import escape

from course.chapters import CHAPTERS, ROOT

SOURCES = ("diagram.dot", "diagram.zh-CN.dot")
PHONE_WIDTH = 390  # CSS pixels a phone gives the picture
SMALLEST_TEXT = 12  # pixels, at that width
SHA_LINE = "<!-- source sha1: {} -->"
SHA = re.compile(r"<!-- source sha1: ([0-9a-f]{40}) -->")
HEADER = re.compile(r"^// (title|desc): (.+)$", re.MULTILINE)
VIEW_BOX = re.compile(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) [\d.]+"')
FONT_SIZE = re.compile(r'font-size="([\d.]+)"')
# Each colour the sources use, and what it becomes in dark mode (the site's dark palette:
# web/assets/site.css): the background, the boxes, the lines and arrows, the text, and what is
# "new here".
DARK = {
    "white": "#14181d",
    "#eef2f7": "#243040",
    "#4a5868": "#9fb0c3",
    "#111111": "#e3e7ec",
    "#ffe8a3": "#4a3a10",
    "#8a5a00": "#f2bb5c",
}
UNCOLOURED = {"none", "transparent"}
COLOUR = re.compile(r'(fill|stroke)="([^"]+)"')
FONT = re.compile(r'font-family="([^",]+)"')
FONT_STACK = ", Noto Sans, Noto Sans SC, PingFang SC, Microsoft YaHei, Helvetica, Arial, sans-serif"


def sources(root=ROOT):
    """Every diagram source of every chapter, in chapter order."""
    return [root / chapter / name for chapter in CHAPTERS for name in SOURCES
            if (root / chapter / name).is_file()]


def svg_path(source):
    return source.with_suffix(".svg")


def source_sha(text):
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def header(text):
    """The title and the description a source declares, as a dict."""
    return dict(HEADER.findall(text))


def render(source):
    """The SVG for one source, as text."""
    text = source.read_text(encoding="utf-8")
    fields = header(text)
    missing = [name for name in ("title", "desc") if name not in fields]
    if missing:
        raise SystemExit(f"{source}: the first lines need // {' and // '.join(missing)}: ...")
    svg = subprocess.run(["dot", "-Tsvg", "-Gbgcolor=white"], input=text, capture_output=True,
                         text=True, check=True).stdout
    svg = svg[svg.index("<svg"):]  # drop the XML prolog and the doctype
    opening_end = svg.index(">") + 1
    opening = svg[:opening_end].replace(
        "<svg", '<svg role="img" aria-labelledby="diagram-title diagram-desc"', 1)
    accessible = (f'\n<title id="diagram-title">{escape(fields["title"])}</title>'
                  f'\n<desc id="diagram-desc">{escape(fields["desc"])}</desc>')
    return follow_the_reader(SHA_LINE.format(source_sha(text)) + "\n" + opening + accessible
                             + svg[opening_end:])


def dark_style(svg):
    """The <style> that gives every colour of an SVG its dark counterpart (DARK), in the order
    of DARK; colours with none are left out (problems() names them)."""
    used = set(COLOUR.findall(svg))
    rules = [f'  [{kind}="{colour}"] {{ {kind}: {DARK[colour]}; }}'
             for colour in DARK for kind in ("fill", "stroke") if (kind, colour) in used]
    return ("<style>\n@media (prefers-color-scheme: dark) {\n" + "\n".join(rules)
            + "\n}\n</style>")


def follow_the_reader(svg):
    """The SVG with its dark-mode style after its <desc>, and its font followed by a stack that
    ends in sans-serif."""
    svg = FONT.sub(lambda found: f'font-family="{found[1]}{FONT_STACK}"', svg)
    end = svg.index("</desc>") + len("</desc>")
    return svg[:end] + "\n" + dark_style(svg) + svg[end:]


def readable_width(svg):
    """The width in CSS pixels at which an SVG's smallest text is SMALLEST_TEXT: the site shows
    a diagram no narrower (it scrolls sideways in a narrower box). None: no sized text."""
    view_box = VIEW_BOX.search(svg)
    sizes = [float(size) for size in FONT_SIZE.findall(svg)]
    if not (view_box and sizes):
        return None
    return math.ceil(float(view_box.group(1)) * SMALLEST_TEXT / min(sizes))


def problems(source):
    """What is wrong with one source's committed SVG, as a list of lines (empty: nothing)."""
    text = source.read_text(encoding="utf-8")
    svg_file = svg_path(source)
    if not svg_file.is_file():
        return [f"{svg_file.name} is missing: run python -m course.diagrams"]
    svg = svg_file.read_text(encoding="utf-8")
    found = []
    sha = SHA.search(svg)
    if not sha or sha.group(1) != source_sha(text):
        found.append(f"{svg_file.name} is not rendered from {source.name} as it is now: "
                     "run python -m course.diagrams")
    fields = header(text)
    for name in ("title", "desc"):
        if f'<{name} id="diagram-{name}">{escape(fields.get(name, ""))}</{name}>' not in svg \
                or not fields.get(name):
            found.append(f"{svg_file.name} has no {name} for screen readers")
    unknown = sorted({colour for _, colour in COLOUR.findall(svg)} - set(DARK) - UNCOLOURED)
    if unknown:
        found.append(f"{svg_file.name}: no dark-mode colour for {', '.join(unknown)}: add it to "
                     "DARK in course/diagrams.py")
    if dark_style(svg) not in svg or re.search(r'font-family="[^",]+"', svg):
        found.append(f"{svg_file.name} does not follow the reader's colour scheme and fonts: "
                     "run python -m course.diagrams")
    view_box = VIEW_BOX.search(svg)
    sizes = [float(size) for size in FONT_SIZE.findall(svg)]
    if view_box and sizes:
        smallest = min(sizes) * PHONE_WIDTH / float(view_box.group(1))
        if smallest < SMALLEST_TEXT:
            found.append(f"{svg_file.name}: text is {smallest:.1f} px at {PHONE_WIDTH} px wide, "
                         f"under {SMALLEST_TEXT}: use fewer or narrower nodes, or larger type")
    return found


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--check"]:
        found = [f"{source.relative_to(ROOT)}: {line}"
                 for source in sources() for line in problems(source)]
        print("\n".join(found) or f"{len(sources())} diagrams match their sources")
        return 1 if found else 0
    if argv:
        print("usage: python -m course.diagrams [--check]", file=sys.stderr)
        return 2
    for source in sources():
        svg_path(source).write_text(render(source), encoding="utf-8")
        print(f"wrote {svg_path(source).relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
