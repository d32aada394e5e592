"""Build the course site: one static page per chapter, a home page, and a compare page.

    python web/build.py                  build into web/dist/
    python web/build.py --serve          build, then serve web/dist/ on 127.0.0.1
    python web/build.py --serve --port 8000

What goes into the site, for every folder sNN_*/ that has a code.py:

    Lesson   the chapter's README.md (mistune), fenced code highlighted (pygments)
    Code     code.py with line numbers; the lines new in this chapter are marked
    Diff     code.py against the previous chapter (difflib), unified and side by side
    Run      the chapter's scenario, recorded now by running code.py offline with
             --trace; a player steps through the model calls, and a chart shows
             how the request grows

The recordings run in parallel, one subprocess per chapter. A chapter whose run
cannot be recorded stops the build (exit 1) with one line that names it.

The site is plain HTML, CSS and a little JavaScript (web/assets/). It requests
nothing from another host, so it works offline, even opened from the disk.
"""

import argparse
import ast
import difflib
import functools
import html
import http.server
import itertools
import json
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import mistune
import pygments
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer, TextLexer, get_lexer_by_name
from pygments.token import STANDARD_TYPES
from pygments.util import ClassNotFound

# The course package (the banner grammar, the offline environment, scenario.json) sits at the
# repository root, which is not on sys.path when this runs as `python web/build.py`.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from course import (  # noqa: E402  (after the sys.path line above, which it needs)
    ScenarioError,
    offline_environment,
    read_scenario,
    section_above,
)

# ======================================================================
# PATHS AND SETTINGS
# ======================================================================

WEB = Path(__file__).resolve().parent  # web/
ROOT = WEB.parent  # the repository: where the chapters live
ASSETS = WEB / "assets"  # the CSS, JavaScript and icon copied into every build
DEFAULT_OUT = WEB / "dist"

COURSE_TITLE = "Build a coding agent"
RUN_TIMEOUT = 120  # seconds one chapter's recorded run may take
MARKER = ".course-site"  # a file that says "this folder is a build of the site"

# Variables a recording must not see: with any of them a chapter could go live.

LIGHT_STYLE = "default"  # pygments styles for code: light, and dark (prefers-color-scheme)
DARK_STYLE = "github-dark"


class BuildError(Exception):
    """The site cannot be built. The message is one line and names the chapter."""


# ======================================================================
# THE CHAPTERS
# ======================================================================

@dataclass
class Run:
    """One recorded run of a chapter's scenario."""
    prompt: str
    answers: list
    command: str  # the command line, as a learner would type it
    stdout: str
    stderr: str
    calls: list  # one {"request": ..., "response": ...} per model call
    trace: str  # the trace file as the chapter wrote it
    workdir: str  # the temporary folder the tools acted in


@dataclass
class Chapter:
    name: str  # "s02_tools"
    folder: Path
    code: str  # the text of code.py
    previous: "Chapter | None" = None
    run: Run | None = None
    lesson: str | None = field(default=None, repr=False)  # README.md, if there is one yet

    @property
    def label(self):
        """The short name, as the REPL prompt and the navigation show it: "s02"."""
        return self.name.split("_")[0]

    @functools.cached_property
    def docstring(self):
        try:
            return ast.get_docstring(ast.parse(self.code)) or ""
        except SyntaxError:
            return ""

    @property
    def summary(self):
        """The first line of the docstring, without its "sNN_x: " prefix."""
        first = self.docstring.splitlines()[0] if self.docstring else ""
        return first.removeprefix(f"{self.name}:").strip()

    @property
    def title(self):
        return f"{self.label} · {self.summary.rstrip('.')}" if self.summary else self.name

    @property
    def page(self):
        return f"{self.name}.html"

    @property
    def notebook(self):
        """The chapter's notebook (made by web/notebooks.py), which the site offers as a
        download."""
        return self.folder / "notebook.ipynb"


def find_chapters(root):
    """Every folder sNN_* under root that has a code.py, in order, each linked to the one before."""
    chapters = []
    for folder in sorted(root.glob("s[0-9][0-9]_*")):
        if not (folder / "code.py").is_file():
            continue
        readme = folder / "README.md"
        chapter = Chapter(
            name=folder.name,
            folder=folder,
            code=(folder / "code.py").read_text(encoding="utf-8"),
            previous=chapters[-1] if chapters else None,
            lesson=readme.read_text(encoding="utf-8") if readme.is_file() else None,
        )
        chapters.append(chapter)
    return chapters


# ======================================================================
# RECORDING A CHAPTER'S RUN
# ======================================================================

def prompt_and_answers(chapter):
    """The scenario's prompt and its answers (the lines piped to stdin), checked by
    course.read_scenario."""
    try:
        scenario = read_scenario(chapter.folder)
    except ScenarioError as error:
        raise BuildError(f"{chapter.name}: cannot record the run: {error}") from None
    return scenario["prompt"], scenario["answers"]


def record_run(chapter):
    """Run the chapter's scenario offline, as a learner would, and return what happened.

    The tools act in a fresh copy of the chapter's workspace/ (with --workdir the
    chapter does not copy it itself); the trace file sits beside it, so the
    model's `ls` does not see it.
    """
    prompt, answers = prompt_and_answers(chapter)
    piped = "".join(
        answer + "\n" for answer in answers
    )  # one line for each question the chapter asks
    with tempfile.TemporaryDirectory(prefix=f"site-{chapter.name}-") as temporary:
        workdir = Path(temporary) / "workdir"
        if (chapter.folder / "workspace").is_dir():
            shutil.copytree(chapter.folder / "workspace", workdir)
        else:
            workdir.mkdir()
        trace = Path(temporary) / "trace.jsonl"
        command = [sys.executable, str(chapter.folder / "code.py"), "--offline",
                   "--workdir", str(workdir), "--trace", str(trace), prompt]
        try:
            process = subprocess.run(
                command, input=piped,
                capture_output=True, text=True, errors="replace", timeout=RUN_TIMEOUT,
                cwd=chapter.folder.parent, env=offline_environment(),
            )
        except subprocess.TimeoutExpired:
            raise BuildError(
                f"{chapter.name}: the recorded run took longer than {RUN_TIMEOUT} s"
            ) from None
        except OSError as error:
            raise BuildError(f"{chapter.name}: cannot start code.py: {error}") from None
        if process.returncode != 0:
            last_line = (process.stderr.strip().splitlines() or ["no output on stderr"])[-1]
            raise BuildError(
                f"{chapter.name}: code.py exited with {process.returncode}: {last_line}"
            )
        trace_text = trace.read_text(encoding="utf-8") if trace.exists() else ""
        try:
            calls = [json.loads(line) for line in trace_text.splitlines() if line.strip()]
        except json.JSONDecodeError:
            raise BuildError(f"{chapter.name}: the trace is not JSON lines") from None
        if not calls:
            raise BuildError(
                f"{chapter.name}: the run wrote an empty trace (no model call was recorded)"
            )
    shown_command = (
        f"python {chapter.name}/code.py --offline --workdir {workdir} --trace {trace} "
        f"{quote(prompt)}"
    )
    if answers:
        shown_command = f"printf {quote(piped)} | {shown_command}"
    return Run(prompt=prompt, answers=answers, command=shown_command, stdout=process.stdout,
               stderr=process.stderr, calls=calls, trace=trace_text, workdir=str(workdir))


def quote(text):
    """A shell word for the command line shown on the page."""
    return "'" + text.replace("'", "'\\''").replace("\n", "\\n") + "'"


def record_all(chapters):
    """Record every chapter's run at once: each run spends most of its time importing anthropic."""
    if not chapters:
        return
    with ThreadPoolExecutor(max_workers=len(chapters)) as pool:
        futures = [pool.submit(record_run, chapter) for chapter in chapters]
    for chapter, future in zip(chapters, futures, strict=True):
        chapter.run = future.result()  # raises the first chapter's BuildError, in chapter order


# ======================================================================
# HIGHLIGHTING
# ======================================================================

# Tokens left without a <span>: whitespace, plain names and punctuation take the
# text colour anyway, and leaving them bare keeps the pages half the size.
PLAIN_CLASSES = {"", "w", "n", "p"}


def css_class(token_type):
    """The short CSS class pygments gives a token type ("k" for a keyword)."""
    while token_type not in STANDARD_TYPES:
        token_type = token_type.parent
    return STANDARD_TYPES[token_type]


@functools.cache  # each code.py is shown in several diffs
def highlight_lines(source):
    """Python source as a list of HTML lines, one per source line, highlighted by pygments.

    Tokens that span lines (docstrings) are cut at each newline, so every line
    can stand alone in a table row or a numbered code view.
    """
    lines = [""]
    for token_type, value in pygments.lex(source, PythonLexer(stripnl=False)):
        css = css_class(token_type)
        for number, piece in enumerate(value.split("\n")):
            if number:
                lines.append("")
            if piece:
                text = html.escape(piece, quote=False)
                lines[-1] += text if css in PLAIN_CLASSES else f'<span class="{css}">{text}</span>'
    return lines[:len(source.splitlines())]


def highlight_block(code, language):
    """A fenced code block of the lesson, highlighted for its language (plain text if unknown)."""
    try:
        lexer = get_lexer_by_name(language) if language else TextLexer()
    except ClassNotFound:
        lexer = TextLexer()
    return pygments.highlight(code, lexer, HtmlFormatter(cssclass="hl"))


def pygments_css():
    """The colours of the highlighted code, light and dark."""
    light = HtmlFormatter(style=LIGHT_STYLE).get_style_defs(".hl")
    dark = HtmlFormatter(style=DARK_STYLE).get_style_defs(".hl")
    return f"{light}\n\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"


# ======================================================================
# DIFFS
# ======================================================================

@functools.cache
def line_matcher(old_code, new_code):
    """difflib's matcher for two files, line by line (made once per pair of files).

    The same matcher as difflib.unified_diff, so the counts agree with the
    chapter table of the course README.
    """
    return difflib.SequenceMatcher(None, old_code.splitlines(), new_code.splitlines())


@dataclass
class Diff:
    """code.py of one chapter against another, line by line."""
    old: Chapter
    new: Chapter

    @property
    def opcodes(self):
        return line_matcher(self.old.code, self.new.code).get_opcodes()

    @property
    def added(self):
        return sum(j2 - j1 for tag, i1, i2, j1, j2 in self.opcodes if tag in ("insert", "replace"))

    @property
    def removed(self):
        return sum(i2 - i1 for tag, i1, i2, j1, j2 in self.opcodes if tag in ("delete", "replace"))

    @property
    def added_line_numbers(self):
        """The lines of the new file (from 1) that the old one does not have."""
        return {j + 1 for tag, i1, i2, j1, j2 in self.opcodes if tag in ("insert", "replace")
                for j in range(j1, j2)}

    def hunks(self, context=3):
        """The changes in groups with `context` lines around them, as in diff -u."""
        return list(line_matcher(self.old.code, self.new.code).get_grouped_opcodes(context))


def hunk_header(group, new_lines):
    first, last = group[0], group[-1]
    old_start, old_count = first[1] + 1, last[2] - first[1]
    new_start, new_count = first[3] + 1, last[4] - first[3]
    section = section_above(new_lines, first[3])
    return f"@@ -{old_start},{old_count} +{new_start},{new_count} @@ {section}".rstrip()


def hunk_row(group, new_lines):
    return (
        f'<tr class="hunk"><td colspan="4">{html.escape(hunk_header(group, new_lines))}</td></tr>'
    )


def unified_table(diff):
    """The diff as in diff -u: a table of old and new line numbers, a sign, and the line."""
    old_html, new_html = highlight_lines(diff.old.code), highlight_lines(diff.new.code)
    new_lines = diff.new.code.splitlines()
    rows = []
    for group in diff.hunks():
        rows.append(hunk_row(group, new_lines))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                    rows.append(diff_row("context", i + 1, j + 1, " ", new_html[j]))
                continue
            for i in range(i1, i2):
                rows.append(diff_row("removed", i + 1, "", "-", old_html[i]))
            for j in range(j1, j2):
                rows.append(diff_row("added", "", j + 1, "+", new_html[j]))
    return table(
        "diff unified",
        "Unified diff",
        diff,
        "<th>old</th><th>new</th><th><span "
        "class=\"visually-hidden\">change</span></th><th>line</th>",
        rows,
        ["number", "number", "sign", "code"],
    )


def diff_row(kind, old_number, new_number, sign, line_html):
    return (f'<tr class="{kind}"><td class="ln">{old_number}</td><td class="ln">{new_number}</td>'
            f'<td class="sign">{sign}</td><td class="line"><code>{line_html}</code></td></tr>')


def side_by_side_table(diff):
    """The same changes, old on the left and new on the right."""
    old_html, new_html = highlight_lines(diff.old.code), highlight_lines(diff.new.code)
    new_lines = diff.new.code.splitlines()
    rows = []
    for group in diff.hunks():
        rows.append(hunk_row(group, new_lines))
        for tag, i1, i2, j1, j2 in group:
            pairs = itertools.zip_longest(range(i1, i2), range(j1, j2))
            for i, j in pairs:
                left = side_cells("context" if tag == "equal" else "removed", i, old_html)
                right = side_cells("context" if tag == "equal" else "added", j, new_html)
                rows.append(f'<tr class="{tag}">{left}{right}</tr>')
    header = (f"<th>old</th><th>{html.escape(diff.old.name)}</th>"
              f"<th>new</th><th>{html.escape(diff.new.name)}</th>")
    return table(
        "diff side-by-side",
        "Side by side",
        diff,
        header,
        rows,
        ["number", "code", "number", "code"],
    )


def side_cells(kind, index, lines_html):
    if index is None:
        return '<td class="ln empty"></td><td class="line empty"></td>'
    return (f'<td class="ln {kind}">{index + 1}</td>'
            f'<td class="line {kind}"><code>{lines_html[index]}</code></td>')


def table(css, kind, diff, header, rows, columns):
    caption = f"{kind}: {diff.old.name}/code.py → {diff.new.name}/code.py"
    if not rows:
        rows = ['<tr class="context"><td colspan="4">The two files are the same.</td></tr>']
    widths = "".join(f'<col class="{column}">' for column in columns)
    return (f'<div class="scroll hl"><table class="{css}"><caption>{html.escape(caption)}</caption>'
            f'<colgroup>{widths}</colgroup><thead><tr>{header}</tr></thead><tbody>\n'
            + "\n".join(rows) + "\n</tbody></table></div>")


def diff_views(diff, id_prefix):
    """Both views of a diff, with buttons to switch between them (site.js)."""
    return f"""
<p class="stats"><span class="plus">+{diff.added}</span> <span class="minus">−{diff.removed}</span>
  lines: <code>{html.escape(diff.old.name)}/code.py</code> →
  <code>{html.escape(diff.new.name)}/code.py</code></p>
<div class="view-switch" role="group" aria-label="Diff layout">
  <button type="button" data-view="{id_prefix}-unified" aria-pressed="true">Unified</button>
  <button type="button" data-view="{id_prefix}-split" aria-pressed="false">Side by side</button>
</div>
<div class="diff-view" id="{id_prefix}-unified">{unified_table(diff)}</div>
<div class="diff-view" id="{id_prefix}-split">{side_by_side_table(diff)}</div>"""


# ======================================================================
# THE LESSON (README.md)
# ======================================================================

def slug(text):
    """A heading's anchor, as GitHub makes it: "How to run it?" -> "how-to-run-it"."""
    text = re.sub(r"<[^>]+>", "", html.unescape(text)).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


class LessonRenderer(mistune.HTMLRenderer):
    """HTML for a chapter's README, fitted into the chapter page.

    - headings go one level down (the page's <h1> is the chapter) and get ids
      "lesson-<slug>", so a README's own #links keep working;
    - fenced code is highlighted by pygments;
    - a link to another chapter, its code or its scenario goes to that page of
      the site; a link off the site, or to a file the site does not have, becomes
      text that shows where it points (the site links to no other host);
    - raw HTML is shown as text.
    """

    def __init__(self, chapter, chapter_names, known_ids):
        super().__init__(escape=True)
        self.chapter = chapter
        self.chapter_names = chapter_names
        self.known_ids = known_ids  # ids of the headings (from a first pass), for #links
        self.ids = []
        self.images = []  # (source file, name in the site) to copy

    def heading(self, text, level, **attrs):
        anchor = "lesson-" + (slug(text) or "section")
        while anchor in self.ids:
            anchor += "-1"
        self.ids.append(anchor)
        level = min(level + 1, 6)
        return f'<h{level} id="{anchor}">{text}</h{level}>\n'

    def block_code(self, code, info=None):
        language = info.split()[0] if info and info.strip() else ""
        return highlight_block(code, language)

    def link(self, text, url, title=None):
        target = self.site_target(url)
        if target is None:  # text, and where it points
            if strip_tags(text) == url:
                return f"<code>{text}</code>"
            return f'{text} <span class="where">({html.escape(url)})</span>'
        title_attribute = f' title="{html.escape(title)}"' if title else ""
        return f'<a href="{html.escape(target)}"{title_attribute}>{text}</a>'

    def image(self, text, url, title=None):
        source = self.local_file(url)
        if source is None or not source.is_file():
            return f'<span class="where">[image: {html.escape(text)} ({html.escape(url)})]</span>'
        name = f"{self.chapter.name}-{source.name}"
        self.images.append((source, name))
        return f'<img src="images/{html.escape(name)}" alt="{html.escape(text)}">'

    def local_file(self, url):
        """The repository file a relative url points at, or None."""
        if re.match(r"^[a-z][a-z0-9+.-]*:", url, re.I) or url.startswith("//"):
            return None
        path = url.split("#")[0].split("?")[0]
        return (self.chapter.folder / path).resolve() if path else None

    def site_target(self, url):
        """Where a README link goes in the site, or None when the site has no such page."""
        if url.startswith("#"):
            anchor = "lesson-" + slug(url[1:])
            return f"#{anchor}" if anchor in self.known_ids else None
        source = self.local_file(url)
        if source is None:
            return None
        root = self.chapter.folder.parent.resolve()
        if source == root / "README.md" or source == root:
            return "index.html"
        for name in self.chapter_names:
            folder = root / name
            if source in (folder, folder / "README.md"):
                return f"{name}.html"
            if source == folder / "code.py":
                return f"{name}.html#code"
            if source == folder / "scenario.json":
                return f"{name}.html#run"
            if source == folder / "notebook.ipynb" and source.is_file():
                return f"notebooks/{name}.ipynb"
        return None


def strip_tags(text):
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def render_lesson(chapter, chapter_names):
    """The README as HTML, and the images it uses. Two passes: the first finds the headings.

    A title line ("# s01_loop: the agent loop.") is left out: the page's <h1> says it, and so
    is a line that holds only an HTML comment, such as the markers of the generated "What
    changed" table (raw HTML would be shown as text).
    """
    markdown = chapter.lesson
    if markdown.startswith("# "):
        markdown = markdown.partition("\n")[2]
    markdown = "".join(line for line in markdown.splitlines(keepends=True)
                       if not re.fullmatch(r"\s*<!--.*-->\s*", line))
    plugins = ["table", "strikethrough"]
    first = LessonRenderer(chapter, chapter_names, known_ids=set())
    mistune.create_markdown(renderer=first, plugins=plugins)(markdown)
    renderer = LessonRenderer(chapter, chapter_names, known_ids=set(first.ids))
    body = mistune.create_markdown(renderer=renderer, plugins=plugins)(markdown)
    return body, renderer.images


def lesson_placeholder(chapter):
    docstring = html.escape(chapter.docstring) or "(code.py has no docstring yet)"
    return f"""<h2 id="lesson-not-written">The lesson is not written yet</h2>
<p>This chapter has no <code>README.md</code> yet. Until it does, here is what its
<code>code.py</code> says about itself:</p>
<pre class="docstring">{docstring}</pre>"""


# ======================================================================
# THE CODE TAB
# ======================================================================

def code_view(chapter):
    """code.py with line numbers; the lines that are new in this chapter marked "+"."""
    new = Diff(chapter.previous, chapter).added_line_numbers if chapter.previous else set()
    lines = []
    for number, line_html in enumerate(highlight_lines(chapter.code), 1):
        kind = "line added" if number in new else "line"
        sign = "+" if number in new else " "
        lines.append(
            f'<span class="{kind}" id="code-L{number}"><span class="ln" '
            f'aria-hidden="true">{number}</span>'
            f'<span class="sign">{sign}</span>{line_html}</span>'
        )
    if chapter.previous:
        note = (
            f'<p>The <span class="plus">{len(new)} lines</span> marked <strong>+</strong> are new '
            f'in this '
            f'chapter: <code>{html.escape(chapter.previous.name)}/code.py</code> does not have '
            f'them.</p>'
        )
    else:
        note = f"<p>The first chapter: all {len(lines)} lines are new.</p>"
    return note + '<pre class="hl code-view"><code>' + "".join(lines) + "</code></pre>"


# ======================================================================
# THE RUN TAB
# ======================================================================

def request_sizes(call):
    """(fixed, history) in characters of JSON: system + tools, and messages."""
    request = call["request"]
    fixed = len(json.dumps(request.get("system", ""))) + len(json.dumps(request.get("tools", [])))
    return fixed, len(json.dumps(request.get("messages", [])))


def size_chart(calls):
    """An inline SVG of stacked bars, one per model call: the fixed part and the history."""
    sizes = [request_sizes(call) for call in calls]
    top = max(fixed + history for fixed, history in sizes)
    scale = nice_ceiling(top)
    bar, gap, left, height, bottom = 34, 14, 56, 160, 26
    width = left + len(sizes) * (bar + gap) + gap
    parts = []
    for tick in (0, scale / 2, scale):  # grid lines and their labels
        y = height - tick / scale * (height - 10)
        parts.append(
            f'<line class="grid" x1="{left}" x2="{width}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="axis" x="{left - 6}" y="{y + 4:.1f}" '
            f'text-anchor="end">{short_number(tick)}</text>'
        )
    for index, (fixed, history) in enumerate(sizes):
        x = left + gap + index * (bar + gap)
        fixed_height = fixed / scale * (height - 10)
        history_height = history / scale * (height - 10)
        label = (
            f"Call {index + 1}: {fixed:,} fixed + {history:,} history = "
            f"{fixed + history:,} characters"
        )
        parts.append(
            f'<g class="bar" data-step="{index}"><title>{label}</title>'
            f'<rect class="fixed" x="{x}" y="{height - fixed_height:.1f}" width="{bar}" '
            f'height="{fixed_height:.1f}"/>'
            f'<rect class="history" x="{x}" y="{height - fixed_height - history_height:.1f}" '
            f'width="{bar}" height="{history_height:.1f}"/>'
            f'<text class="axis" x="{x + bar / 2}" y="{height + 16}" '
            f'text-anchor="middle">{index + 1}</text></g>'
        )
    rows = "".join(f"<tr><td>{n}</td><td>{f:,}</td><td>{h:,}</td><td>{f + h:,}</td></tr>"
                   for n, (f, h) in enumerate(sizes, 1))
    grows = (
        f"Stacked bars: the request grows from {short_number(sum(sizes[0]))} to "
        f"{short_number(sum(sizes[-1]))} characters over {len(sizes)} calls"
    )
    head = "<th>call</th><th>fixed</th><th>history</th><th>total (characters)</th>"
    return f"""<figure class="chart">
<figcaption>Request size per model call, in characters of JSON:
  <span class="key fixed"></span> fixed part (system prompt + tools) and
  <span class="key history"></span> history (messages).</figcaption>
<svg viewBox="0 0 {width} {height + bottom}" width="{width}" height="{height + bottom}" role="img"
  aria-label="{grows}">
{''.join(parts)}
</svg>
<details><summary>The numbers</summary>
<div class="scroll"><table class="numbers"><thead><tr>{head}</tr></thead>
<tbody>{rows}</tbody></table></div></details>
</figure>"""


def nice_ceiling(value):
    """The smallest of 1, 2, 2.5, 5 times a power of ten that is at least value."""
    power = 10 ** max(len(str(int(value))) - 1, 0)
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= value:
            return step * power
    return 10 * power


def short_number(value):
    return f"{value / 1000:g}k" if value >= 1000 else f"{value:g}"


def run_data_json(chapter):
    """The trace and the scenario as JSON for the player, safe inside a <script> element."""
    run = chapter.run
    data = {
        "chapter": chapter.name,
        "prompt": run.prompt,
        "answers": run.answers,
        "calls": run.calls,
    }
    return json.dumps(data, ensure_ascii=False).replace("<", "\\u003c")


def run_view(chapter):
    """The Run tab: the player (site.js fills it from the embedded trace), the chart, the
    terminal."""
    run = chapter.run
    calls = len(run.calls)
    answers = (
        f" The answers piped to stdin, one a line: "
        f"{', '.join(f'<code>{html.escape(a)}</code>' for a in run.answers)}."
        if run.answers
        else ""
    )
    stderr = (
        f'<details><summary>What it wrote to stderr</summary><pre '
        f'class="terminal">{html.escape(run.stderr)}</pre></details>'
        if run.stderr.strip()
        else ""
    )
    return f"""
<p>Recorded when the site was built: the chapter ran offline against its <code>scenario.json</code>,
and <code>--trace</code> wrote down every model call
({calls} call{'s' if calls != 1 else ''}).{answers}
<a href="traces/{chapter.name}.jsonl">Download the trace</a> and replay it:
<code>python {chapter.name}/code.py --script {chapter.name}.jsonl</code>.</p>
<h3 id="run-calls">The model calls, one by one</h3>
<noscript><p>The step player needs JavaScript. The trace itself is in the download above.</p>
</noscript>
<div class="player" id="player">
  <div class="player-controls">
    <button type="button" id="step-previous" aria-keyshortcuts="ArrowLeft">← Previous</button>
    <output id="step-counter" aria-live="polite">Step 1 of {calls}</output>
    <button type="button" id="step-next" aria-keyshortcuts="ArrowRight">Next →</button>
    <span class="hint">or the ← and → keys</span>
  </div>
  <div id="step-view"></div>
</div>
<script type="application/json" id="run-data">{run_data_json(chapter)}</script>
<h3 id="run-size">How the request grows</h3>
{size_chart(run.calls)}
<h3 id="run-terminal">The terminal</h3>
<pre class="terminal"><span class="prompt">$ {html.escape(run.command)}</span>
{html.escape(run.stdout)}</pre>
{stderr}"""


# ======================================================================
# PAGES
# ======================================================================

def page(title, body, chapters, current=""):
    """A whole HTML page: head, the course navigation, the main part, the footer."""
    links = []
    for chapter in chapters:
        here = ' aria-current="page"' if chapter.name == current else ""
        links.append(
            f'<li><a href="{chapter.page}"{here} '
            f'title="{html.escape(chapter.title)}">{chapter.label}</a></li>'
        )
    compare_here = ' aria-current="page"' if current == "compare" else ""
    home_here = ' aria-current="page"' if current == "home" else ""
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<link rel="icon" href="assets/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="assets/site.css">
<link rel="stylesheet" href="assets/pygments.css">
<script src="assets/site.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to the content</a>
<header class="site">
<nav aria-label="Course">
  <a class="home" href="index.html"{home_here}>{html.escape(COURSE_TITLE)}</a>
  <ul>{''.join(links)}
    <li><a href="compare.html"{compare_here}>Compare</a></li></ul>
</nav>
</header>
<main id="main">
{body}
</main>
<footer><p>Built from the course repository by <code>web/build.py</code>.
Everything on this site is local: it works offline.</p></footer>
</body>
</html>
"""


def home_page(chapters):
    cards = []
    for chapter in chapters:
        if chapter.previous:
            diff = Diff(chapter.previous, chapter)
            stats = (
                f'<span class="plus">+{diff.added}</span> <span '
                f'class="minus">−{diff.removed}</span> '
                f'lines against {chapter.previous.label}'
            )
        else:
            lines = len(chapter.code.splitlines())
            stats = f'<span class="plus">+{lines}</span> lines: the first chapter'
        topic = html.escape(chapter.name.split("_", 1)[1].replace("_", " "))
        cards.append(f"""<li class="card">
  <h2><a href="{chapter.page}"><span class="label">{chapter.label}</span> {topic}</a></h2>
  <p>{html.escape(capitalise(chapter.summary))}</p>
  <p class="stats">{stats}</p>
  <p class="calls">{len(chapter.run.calls)} model calls in the recorded run</p>
</li>""")
    body = f"""<h1>{html.escape(COURSE_TITLE)}</h1>
<p class="intro">A Claude-Code-style coding agent, built in
{len(chapters)} chapter{'s' if len(chapters) != 1 else ''}.
Each chapter is the whole program so far plus one idea: read the lesson, the code,
the diff against the chapter before, and step through a recorded run.
To put any two chapters side by side, use <a href="compare.html">Compare</a>.</p>
<ol class="cards">
{''.join(cards)}
</ol>"""
    return page(COURSE_TITLE, body, chapters, current="home")


def capitalise(text):
    return text[:1].upper() + text[1:]


def chapter_page(chapter, chapters, lesson):
    """The page of one chapter: four panels (site.js shows one at a time) and the pager."""
    if chapter.previous:
        diff = f"<h2>Diff against {html.escape(chapter.previous.name)}</h2>" + diff_views(
            Diff(chapter.previous, chapter), "diff"
        )
    else:
        diff = (
            "<h2>Diff</h2>"
            "<p>This is the first chapter: there is no chapter before it to compare with.</p>"
        )
    index = chapters.index(chapter)
    pager = []
    if index > 0:
        pager.append(
            f'<a rel="prev" href="{chapters[index - 1].page}">← '
            f'{html.escape(chapters[index - 1].title)}</a>'
        )
    if index + 1 < len(chapters):
        pager.append(
            f'<a rel="next" '
            f'href="{chapters[index + 1].page}">{html.escape(chapters[index + 1].title)} →</a>'
        )
    tabs = [("lesson", "Lesson"), ("code", "Code"), ("diff", "Diff"), ("run", "Run")]
    tab_links = "".join(
        f'<li><a id="tab-{key}" href="#{key}">{name}</a></li>' for key, name in tabs
    )
    notebook = (f'<p class="files">The chapter as a walk-through to run in Jupyter: '
                f'<a href="notebooks/{chapter.name}.ipynb" download>{chapter.name}.ipynb</a></p>'
                if chapter.notebook.is_file() else "")
    body = f"""<h1>{html.escape(chapter.title)}</h1>
{notebook}
<nav class="tabs" aria-label="Views of this chapter"><ul>{tab_links}</ul></nav>
<section class="panel lesson" id="lesson" aria-labelledby="tab-lesson">
{lesson}
</section>
<section class="panel" id="code" aria-labelledby="tab-code">
<h2><code>{html.escape(chapter.name)}/code.py</code></h2>
{code_view(chapter)}
</section>
<section class="panel" id="diff" aria-labelledby="tab-diff">
{diff}
</section>
<section class="panel" id="run" aria-labelledby="tab-run">
<h2>Run: “{html.escape(chapter.run.prompt)}”</h2>
{run_view(chapter)}
</section>
<nav class="pager" aria-label="Previous and next chapter">{''.join(pager)}</nav>"""
    return page(f"{chapter.title} · {COURSE_TITLE}", body, chapters, current=chapter.name)


def compare_name(old, new):
    return f"compare-{old.name}-vs-{new.name}.html"


def compare_picker(chapters, old=None, new=None):
    """Two lists of chapters and a button; site.js opens the page of the pair."""
    old = old or (chapters[-2] if len(chapters) > 1 else chapters[0])
    new = new or chapters[-1]

    def options(selected):
        return "".join(
            f'<option value="{c.name}"{" selected" if c is selected else ""}>'
            f"{html.escape(c.title)}</option>"
            for c in chapters
        )

    return f"""<form class="picker" id="compare-picker">
  <label>From <select name="old" id="compare-old">{options(old)}</select></label>
  <label>to <select name="new" id="compare-new">{options(new)}</select></label>
  <button type="submit">Compare</button>
  <p class="picker-message" id="compare-message" role="status"></p>
</form>"""


def compare_index(chapters):
    pairs = "".join(f'<li><a href="{compare_name(a, b)}">{a.label} → {b.label}</a></li>'
                    for a, b in itertools.combinations(chapters, 2))
    body = f"""<h1>Compare two chapters</h1>
<p>Pick two chapters to see how <code>code.py</code> changed from one to the other.</p>
{compare_picker(chapters)}
<h2>Every pair</h2>
<ul class="pairs">{pairs or '<li>There is only one chapter so far.</li>'}</ul>"""
    return page(f"Compare · {COURSE_TITLE}", body, chapters, current="compare")


def compare_page(old, new, chapters):
    body = f"""<h1>{html.escape(old.label)} → {html.escape(new.label)}</h1>
<p>From <a href="{old.page}">{html.escape(old.title)}</a>
to <a href="{new.page}">{html.escape(new.title)}</a>.</p>
{compare_picker(chapters, old, new)}
{diff_views(Diff(old, new), "compare")}"""
    return page(
        f"Compare {old.label} and {new.label} · {COURSE_TITLE}", body, chapters, current="compare"
    )


# ======================================================================
# THE BUILD
# ======================================================================

def prepare_out_dir(out_dir):
    """Empty the output folder, but only if it is empty or an earlier build of the site."""
    if out_dir.exists() and any(out_dir.iterdir()):
        if not (out_dir / MARKER).exists():
            raise BuildError(
                f"{out_dir} is not empty and is not a build of the site: not overwriting it"
            )
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / MARKER).write_text("Built by web/build.py; emptied by the next build.\n")


def build(out_dir: Path, chapters_root: Path = ROOT) -> list:
    """Build the site into out_dir; return the names of the chapters in it.

    Raises BuildError (naming the chapter) if a chapter's run cannot be recorded.
    Nothing is written before every run is recorded, so a failed build leaves
    the last site as it was.
    """
    out_dir = Path(out_dir).resolve()
    chapters = find_chapters(Path(chapters_root).resolve())
    if not chapters:
        raise BuildError(f"no chapters (folders sNN_* with a code.py) in {chapters_root}")
    record_all(chapters)

    prepare_out_dir(out_dir)
    shutil.copytree(ASSETS, out_dir / "assets")
    (out_dir / "assets" / "pygments.css").write_text(pygments_css(), encoding="utf-8")
    (out_dir / "traces").mkdir()
    (out_dir / "images").mkdir()
    (out_dir / "notebooks").mkdir()
    names = [chapter.name for chapter in chapters]

    write(out_dir / "index.html", home_page(chapters))
    for chapter in chapters:
        if chapter.lesson is not None:
            lesson, images = render_lesson(chapter, names)
        else:
            lesson, images = lesson_placeholder(chapter), []
        for source, name in images:
            shutil.copyfile(source, out_dir / "images" / name)
        write(out_dir / chapter.page, chapter_page(chapter, chapters, lesson))
        write(out_dir / "traces" / f"{chapter.name}.jsonl", chapter.run.trace)
        if chapter.notebook.is_file():
            shutil.copyfile(chapter.notebook, out_dir / "notebooks" / f"{chapter.name}.ipynb")
    write(out_dir / "compare.html", compare_index(chapters))
    for old, new in itertools.combinations(chapters, 2):
        write(out_dir / compare_name(old, new), compare_page(old, new, chapters))
    return names


def write(path, text):
    path.write_text(text, encoding="utf-8")


# ======================================================================
# SERVING AND THE COMMAND LINE
# ======================================================================

def serve(directory, port):
    """Serve the built site on 127.0.0.1 until Ctrl-C."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        print(
            f"Serving {directory} at http://127.0.0.1:{server.server_address[1]}/  (Ctrl-C to "
            f"stop)",
            flush=True,
        )
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print()


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python web/build.py", description="Build the course site."
    )
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="where the site goes (default: web/dist)"
    )
    parser.add_argument(
        "--chapters",
        type=Path,
        default=ROOT,
        help="the folder that holds the chapters (default: the repository)",
    )
    parser.add_argument(
        "--serve", action="store_true", help="after building, serve the site on 127.0.0.1"
    )
    parser.add_argument(
        "--port", type=int, default=0, help="the port for --serve (default: a free one)"
    )
    args = parser.parse_args(argv)
    try:
        names = build(args.out, args.chapters)
    except BuildError as error:
        print(f"build.py: {error}", file=sys.stderr)
        return 1
    print(f"Built {len(names)} chapters ({', '.join(names)}) into {args.out.resolve()}")
    if args.serve:
        serve(args.out.resolve(), args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
