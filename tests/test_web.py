"""The course site (web/build.py): built once per session, checked as files, then in Chromium.

The build records every chapter's run. Every test here shares one build (the `site` fixture),
whose runs are forked from the warm runner, and one browser (`browser`), and most share one page
(`visit`, blank again before each test); the repeatability test makes a second build. The
accessibility checks (axe-core, web/check_pages.py) come last.
"""

import difflib
import functools
import gzip
import html
import http.server
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from course import changes, diagrams, read_scenario
from support import run_chapter

ROOT = Path(__file__).resolve().parent.parent
BUILD_SCRIPT = ROOT / "web" / "build.py"
CHECK_SCRIPT = ROOT / "web" / "check_pages.py"
CHAPTERS = sorted(
    folder.name for folder in ROOT.glob("s[0-9][0-9]_*") if (folder / "code.py").is_file()
)
PAGE_WEIGHT = 600_000  # bytes: the heaviest page a visitor's phone loads


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


site_builder = load_module("course_site_build", BUILD_SCRIPT)
page_checker = load_module("course_site_check", CHECK_SCRIPT)


def warm_launch(script, args, stdin, cwd, env, timeout):
    """The build's launcher, through the warm runner: the same run, with anthropic imported."""
    assert script.parent.parent == ROOT, script
    try:
        return run_chapter(script.parent.name, *args, stdin=stdin, cwd=cwd, env=env,
                           timeout=timeout)
    except TimeoutError:
        raise subprocess.TimeoutExpired(str(script), timeout) from None


# ---- the build, once per session ---------------------------------------------------

@pytest.fixture(scope="session")
def site(tmp_path_factory):
    """The site built into a temporary folder: (folder, chapter names)."""
    out = tmp_path_factory.mktemp("site")
    started = time.perf_counter()
    names = site_builder.build(out, launch=warm_launch)
    print(f"\nweb/build.py built {len(names)} chapters in {time.perf_counter() - started:.1f} s")
    return out, names


@pytest.fixture(scope="session")
def second_site(tmp_path_factory):
    """The site built again, into another folder, its runs in another temporary folder."""
    out = tmp_path_factory.mktemp("another-folder-for-the-site")
    runs = tmp_path_factory.mktemp("a-temporary-folder-with-a-longer-name")
    started = time.perf_counter()
    site_builder.build(out, launch=warm_launch, temp_root=runs)
    print(f"\nthe second build took {time.perf_counter() - started:.1f} s")
    return out, runs


def run_data(out, name):
    """The JSON the Run player of a chapter page reads."""
    text = (out / f"{name}.html").read_text(encoding="utf-8")
    match = re.search(r'<script type="application/json" id="run-data">(.*?)</script>', text, re.S)
    assert match, f"{name}.html has no run data"
    data = json.loads(match.group(1))
    for call in data["calls"]:  # the system prompts and tools, sent once, back in each call
        for key, values in data["shared"].items():
            if isinstance(call["request"].get(key), int):
                call["request"][key] = values[call["request"][key]]
    return data


def panel(text, name):
    """The HTML of one panel of a chapter page."""
    return re.search(rf'<section class="panel[^"]*" id="{name}".*?</section>', text, re.S)[0]


TAG = re.compile(r"<([a-zA-Z][\w:-]*)((?:\s[^<>]*)?)>")
ATTRIBUTE = re.compile(r'([\w:-]+)\s*=\s*(?:"([^"]*)"|([^\s"\'=<>`]+))')  # quoted or not
STYLE_ELEMENT = re.compile(r"<style[^>]*>(.*?)</style>", re.S | re.I)
LINK_ATTRIBUTES = {"href", "src", "action", "srcset", "poster", "data", "formaction", "xlink:href"}


@dataclass
class Page:
    ids: set
    links: list  # (tag, attribute, value)
    styles: list  # style="" attributes and <style> elements
    headings: list  # the levels of <h1>...<h6>, in order


@functools.cache
def parse(path):
    """The ids, link attributes, styles and headings of a built page.

    A scan of the tags rather than html.parser, which takes seconds over the
    whole site: the pages escape every "<" in text, so each "<" starts a tag.
    """
    text = Path(path).read_text(encoding="utf-8")
    page = Page(ids=set(), links=[], styles=STYLE_ELEMENT.findall(text), headings=[])
    inert = [match.span() for match in re.finditer(r"<template.*?</template>", text, re.S)]
    for tag in TAG.finditer(text):
        if re.fullmatch(r"h[1-6]", tag.group(1)) and not any(
                start < tag.start() < end for start, end in inert):  # a template's go elsewhere
            page.headings.append(int(tag.group(1)[1]))
        for name, quoted, bare in ATTRIBUTE.findall(tag.group(2)):
            value = html.unescape(quoted or bare)
            if name == "id":
                page.ids.add(value)
            elif name in LINK_ATTRIBUTES:
                page.links.append((tag.group(1), name, value))
            elif name == "style":
                page.styles.append(value)
    return page


def html_pages(out):
    return sorted(out.rglob("*.html"))


def text_of(fragment):
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


# ---- the files -------------------------------------------------------------------

def english_pages(names):
    pages = ["index.html", "compare.html", "readme.html", "search.html",
             *(f"{name}.html" for name in names)]
    return pages + [f"compare-{a}-vs-{b}.html" for i, a in enumerate(names) for b in names[i + 1:]]


def test_every_page_is_built_in_english_and_in_chinese(site, shown_run):
    out, names = site
    assert names == CHAPTERS
    english = english_pages(names)
    assert sorted(str(page.relative_to(out)) for page in html_pages(out)) == sorted(
        english + [f"zh-CN/{page}" for page in english])
    # the shared files are there once, at the top
    assert sorted(path.name for path in out.iterdir() if path.is_dir()) == [
        "assets", "code", "images", "notebooks", "pagefind", "traces", "zh-CN"]
    assert [path for path in (out / "zh-CN").iterdir() if not path.name.endswith(".html")] == []


def test_every_internal_link_resolves(site):
    out, _ = site
    broken = []
    for page in html_pages(out):
        for tag, attribute, value in parse(page).links:
            parts = urlsplit(value)
            if parts.scheme or value.startswith("//"):
                continue  # another host: the next test refuses those
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{page.name}: <{tag} {attribute}={value!r}>: no file {target}")
            elif (
                parts.fragment
                and target.suffix == ".html"
                and unquote(parts.fragment) not in parse(target).ids
            ):
                broken.append(
                    f"{page.name}: <{tag} {attribute}={value!r}>: no id {parts.fragment!r}"
                )
    assert broken == []


# Pagefind's JavaScript parses a result's address against a made-up base, never requested (the
# browser tests see every request): these, and nothing else, may be in its bundle.
PAGEFIND_URL_BASES = {("pagefind", "https://example.com${anchored_url}"),
                      ("pagefind", "https://example.com${normalized}")}


def test_nothing_points_to_another_host(site):
    """No src, href or CSS url() leads off the site (code on the page may mention URLs)."""
    out, _ = site
    offsite = re.compile(r"^\s*(https?:)?//", re.I)
    css_url = re.compile(r"url\(\s*['\"]?([^'\")]+)", re.I)
    found = []
    for page in html_pages(out):
        parsed = parse(page)
        found += [
            f"{page.name}: {value}"
            for _, _, value in parsed.links
            if offsite.match(value) or value.startswith("data:")
        ]
        found += [
            f"{page.name}: {url}"
            for style in parsed.styles
            for url in css_url.findall(style)
            if offsite.match(url)
        ]
    for css in out.rglob("*.css"):
        found += [
            f"{css.name}: {url}" for url in css_url.findall(css.read_text()) if offsite.match(url)
        ]
    for script in out.rglob("*.js"):
        found += [
            f"{script.name}: {url}"
            for url in re.findall(r"https?://[^\s'\"`]+", script.read_text())
            if (script.parent.name, url) not in PAGEFIND_URL_BASES
        ]
    assert found == []


def test_pages_are_fit_for_phones_and_keyboards(site):
    out, names = site
    for page in html_pages(out):
        text = page.read_text(encoding="utf-8")
        assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in text, (
            page.name
        )
        assert "<main" in text and "<nav" in text and "<h1>" in text, page.name
    chapter = (out / f"{names[-1]}.html").read_text(encoding="utf-8")
    for tab in ("lesson", "code", "diff", "run"):
        assert f'href="#{tab}"' in chapter and f'id="{tab}"' in chapter
    assert '<button type="button" id="step-next"' in chapter


def test_headings_go_down_one_level_at_a_time(site):
    """No page skips a level (h1 then h3): the lesson's ## are <h2>, the player's <h4>."""
    out, _ = site
    skips = []
    for page in html_pages(out):
        levels = parse(page).headings
        assert levels[0] == 1, page.name
        skips += [f"{page.name}: h{a} then h{b}"
                  for a, b in zip(levels, levels[1:], strict=False) if b > a + 1]
    assert skips == []


def test_no_page_weighs_more_than_600_kb(site):
    """Issue 57, point 10: s08's page weighed 646 KB for 20 KB of lesson (its requests sent the
    same 6 KB of system prompt and tools nine times; a line anchor of the Code tab was a span)."""
    out, _ = site
    weights = {str(page.relative_to(out)): page.stat().st_size for page in html_pages(out)}
    print("\nthe heaviest pages:", sorted(weights.items(), key=lambda item: -item[1])[:3])
    assert {name: size for name, size in weights.items() if size > PAGE_WEIGHT} == {}


def test_each_lesson_is_the_readme_or_a_placeholder(site):
    out, names = site
    for name in names:
        page = (out / f"{name}.html").read_text(encoding="utf-8")
        has_readme = (ROOT / name / "README.md").is_file()
        assert ('id="lesson-not-written"' in page) is not has_readme, name


LESSON = """# s01_loop: the title, which the page's <h1> already shows

## s01: the loop

Read [the code](code.py), then [what s02 adds](../s02_tools/code.py)
and [its lesson](../s02_tools/README.md).
See [how to run it](#how-to-run-it), [a missing part](#nowhere), [the API docs](https://docs.anthropic.com/en/api)
and [a workspace file](workspace/notes.md). <script>alert(1)</script>

![diagram](https://example.com/d.png)

## How to run it?

### In detail

```python
def greet(name):
    return "Hello, " + name
```
"""


def test_a_readme_becomes_a_lesson_without_links_off_the_site(tmp_path):
    folder = tmp_path / "s01_loop"
    folder.mkdir()
    chapter = site_builder.Chapter(
        name="s01_loop", folder=folder, code='"""s01_loop: x."""\n', lesson=LESSON
    )
    body, images = site_builder.render_lesson(chapter, ["s01_loop", "s02_tools"])
    assert "the title" not in body
    assert '<h2 id="lesson-s01-the-loop">s01: the loop</h2>' in body  # the page has the <h1>
    assert '<h2 id="lesson-how-to-run-it">How to run it?</h2>' in body
    assert '<h3 id="lesson-in-detail">In detail</h3>' in body
    assert '<a href="s01_loop.html#code">the code</a>' in body
    assert '<a href="s02_tools.html#code">what s02 adds</a>' in body
    assert '<a href="s02_tools.html">its lesson</a>' in body
    assert '<a href="#lesson-how-to-run-it">how to run it</a>' in body
    assert 'a missing part <span class="where">(#nowhere)</span>' in body
    assert 'the API docs <span class="where">(https://docs.anthropic.com/en/api)</span>' in body
    assert 'a workspace file <span class="where">(workspace/notes.md)</span>' in body
    assert "&lt;script&gt;" in body and "<script>" not in body
    assert "<img" not in body and images == []
    assert (
        '<div class="hl"><pre tabindex="0"><i class=k>def</i> '
        '<i class=nf>greet</i>(name):\n'
        '    <i class=k>return</i> <i class=s>"Hello, "</i> + name\n'
        "</pre></div>"
    ) in body


def test_a_chinese_lesson_gives_a_link_off_the_site_full_width_brackets(tmp_path):
    """Issue 38's review: in Chinese text a link's address sat in half-width brackets, "( )",
    beside the full-width ones of the sentence. It takes "（ ）", with no space before."""
    folder = tmp_path / "s01_loop"
    folder.mkdir()
    chapter = site_builder.Chapter(
        name="s01_loop", folder=folder, code='"""s01_loop: x."""\n', lesson=LESSON,
        lesson_zh="# s01_loop：循环\n\n见 [API 文档](https://docs.anthropic.com/en/api)。\n")
    body, images = site_builder.render_lesson(chapter, ["s01_loop"], ZH)
    assert body == ('<p>见 API 文档<span class="where">（https://docs.anthropic.com/en/api）'
                    '</span>。</p>\n')


def test_highlighting_keeps_every_character_and_merges_tokens_that_look_alike():
    code = 'x = f"a {b!r} c"  # note\nclass K:\n    """Doc\n    more."""\n'
    assert site_builder.highlight_lines(code) == [
        'x = <i class=s>f"a {</i>b<i class=s>!r} c"</i>  '
        '<i class=c># note</i>',
        '<i class=k>class</i> <i class=nc>K</i>:',
        '    <i class=sd>"""Doc</i>',
        '<i class=sd>    more."""</i>',
    ]
    for name in CHAPTERS:  # every line of every chapter, character for character
        source = (ROOT / name / "code.py").read_text()
        shown = [text_of(line) for line in site_builder.highlight_lines(source)]
        assert shown == source.splitlines(), name


def test_the_colours_of_code_are_the_pygments_styles_own():
    """No colour is computed: xcode (light) and github-dark (dark) as pygments gives them,
    readable as they are; axe-core checks their contrast on the pages (below)."""
    from pygments.styles import get_style_by_name
    from pygments.token import Comment, Keyword, Name, String

    css = site_builder.pygments_css()
    light_css, dark_css = css.split("@media")
    kinds = [String.Doc, String, Comment, Keyword, Name.Function, Name.Class, Name.Decorator]
    for part, style in ((light_css, "xcode"), (dark_css, "github-dark")):
        colours = [get_style_by_name(style).style_for_token(kind)["color"] for kind in kinds]
        assert re.findall(r"color: #([0-9a-fA-F]{6})", part) == colours
    assert re.findall(r"color: (#\w+)", light_css)[:3] == ["#C41A16", "#C41A16", "#177500"]


def added_and_removed(old, new):
    old_lines = (ROOT / old / "code.py").read_text().splitlines()
    new_lines = (ROOT / new / "code.py").read_text().splitlines()
    diff = list(difflib.unified_diff(old_lines, new_lines, lineterm="", n=0))[2:]
    return sum(line.startswith("+") for line in diff), sum(line.startswith("-") for line in diff)


def test_home_has_a_card_per_chapter_with_summary_counts_and_diagram(site):
    out, names = site
    home = (out / "index.html").read_text(encoding="utf-8")
    cards = re.findall(r'<li class="card">(.*?)</li>', home, re.S)
    assert len(cards) == len(names)
    for card, name, previous in zip(cards, names, [None, *names], strict=False):
        docstring = (ROOT / name / "code.py").read_text().split('"""')[1]
        summary = docstring.splitlines()[0].removeprefix(f"{name}:").strip()
        shown = (summary[:1].upper() + summary[1:]).rstrip(".")
        assert summary and (f'<span class="label">{name[:3]}</span> {html.escape(shown)}</a>'
                            "</h3>") in card, (name, summary)
        assert f'href="{name}.html"' in card
        if previous:
            added, removed = added_and_removed(previous, name)
            assert (
                f'<span class="plus">+{added}</span> <span class="minus">−{removed}</span>' in card
            )
        if (ROOT / name / "diagram.svg").is_file():  # the lesson's own diagram
            assert f'src="images/{name}-diagram.svg"' in card, name
            continue
        diagram = re.search(r'<figure class="diagram"><pre[^>]*>(.*?)</pre>', card, re.S)
        lines = docstring.splitlines()
        assert diagram, f"{name}: no diagram on its card"
        first = html.unescape(diagram[1]).splitlines()[0]
        assert "    " + first in lines, name  # the docstring's own lines, dedented


def test_a_docstring_diagram_is_its_first_indented_block():
    docstring = ("s09: x.\n\nText.\n\n    a --> b\n      |\n\n      v\n    c\n\n"
                 "Run it:  go\n   (q)\n")
    assert site_builder.docstring_diagram(docstring) == "a --> b\n  |\n\n  v\nc"
    assert site_builder.docstring_diagram("s09: x.\n\n    one line\n") == ""


def test_home_says_how_to_use_the_course_with_the_chapters_own_commands(site):
    out, names = site
    home = (out / "index.html").read_text(encoding="utf-8")
    how = re.search(r'<ol class="how">(.*?)</ol>', home, re.S)[1]
    commands = [text_of(c) for c in re.findall(r"<code>(.*?)</code>", how)]
    docstring = (ROOT / names[0] / "code.py").read_text().split('"""')[1]
    run_it = re.search(r"^Run it:\s+(.*)$", docstring, re.M)[1].strip()
    assert commands == [
        run_it,
        f"diff -u {names[0]}/code.py {names[1]}/code.py",
        f".venv/bin/python {names[0]}/code.py --script play/{names[0]}.trace.jsonl",
    ]


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_home_gets_a_visitor_started_with_the_readmes_own_commands(site, lang):
    """The commands are the README's Start section's ```bash blocks, read at build time; the
    clone line says "the course's repository" while the build is not told its address."""
    out, _ = site
    home = (out / site_builder.SUBFOLDER[lang] / "index.html").read_text(encoding="utf-8")
    start = re.search(r'<h2 id="get-started">.*?</ol>', home, re.S)[0]
    commands = [text_of(c) for c in re.findall(
        r'<pre class="terminal command"[^>]*><code>(.*?)</code></pre>', start, re.S)]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Start\n")[1].split("\n## ")[0]
    assert commands == [block.split("\n```")[0] for block in section.split("```bash\n")[1:]]
    assert commands == site_builder.readme_commands(ROOT) and len(commands) == 2
    assert commands[0].startswith("python3 -m venv .venv && ")
    words = site_builder.STRINGS[lang]
    address = site_builder.repository(ROOT)
    if address:  # a checkout cloned from somewhere (CI): its address
        assert f"git clone {address}" in text_of(start)
    else:
        assert text_of(words["start_no_address"]) in text_of(start)
        assert "git clone" not in re.sub(r"<code[^>]*>git clone</code>", "", start)
    assert 'href="readme.html#lesson-start"' in start
    assert 'href="readme.html#lesson-live-or-offline"' in start


def test_the_clone_command_is_written_from_the_one_setting(monkeypatch):
    monkeypatch.delenv("COURSE_REPOSITORY", raising=False)
    assert site_builder.clone_command(site_builder.repository()) == ""
    monkeypatch.setenv("COURSE_REPOSITORY", " https://example.org/course.git ")
    # into its folder too: the README's commands that follow run there
    assert site_builder.clone_command(site_builder.repository()) == (
        "git clone https://example.org/course.git && cd course")
    from sitebuild import pages
    assert pages.footer("en").endswith(
        'The course\'s repository: <a href="https://example.org/course.git">'
        "https://example.org/course.git</a>.")
    monkeypatch.delenv("COURSE_REPOSITORY")
    assert "<a " not in pages.footer("en")


def test_without_the_setting_the_clone_address_is_the_checkouts_own(monkeypatch, tmp_path):
    """Point 10: without COURSE_REPOSITORY no clone address was given. The address the checkout
    was cloned from is one, made https:// and without a user or a password."""
    monkeypatch.delenv("COURSE_REPOSITORY", raising=False)
    assert site_builder.repository(tmp_path) == ""  # no checkout
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert site_builder.repository(tmp_path) == ""  # no origin
    for url, address in [("git@github.com:you/course.git", "https://github.com/you/course.git"),
                         ("https://you:t0ken@example.org:8443/you/course",
                          "https://example.org:8443/you/course"),
                         ("/home/you/course", ""), ("ssh://you@host/course.git", "")]:
        subprocess.run(["git", "-C", str(tmp_path), "config", "remote.origin.url", url],
                       check=True)
        assert site_builder.repository(tmp_path) == address, url
    assert site_builder.clone_command(site_builder.repository(tmp_path)) == ""


def test_the_lessons_links_to_the_course_readme_land_on_its_sections(site):
    """"As the course README says" lands on the README page at the section it names (the
    exit codes and the live or offline section are there)."""
    out, _ = site
    lesson = panel((out / "s01_loop.html").read_text(encoding="utf-8"), "lesson")
    assert re.findall(r'href="(readme\.html[^"]*)"', lesson) == [
        "readme.html", "readme.html#lesson-the-command-line", "readme.html#lesson-live-or-offline"]
    readme = (out / "readme.html").read_text(encoding="utf-8")
    assert '<h2 id="lesson-live-or-offline">Live or offline</h2>' in readme
    assert "<td>0</td>" in readme  # the exit codes' table
    chinese = panel((out / ZH / "s01_loop.html").read_text(encoding="utf-8"), "lesson")
    assert re.findall(r'href="(readme\.html[^"]*)"', chinese) == [
        "readme.html", "readme.html#lesson-the-command-line", "readme.html#lesson-live-or-offline"]
    assert 'id="lesson-live-or-offline"' in (out / ZH / "readme.html").read_text()


def test_code_tab_marks_the_new_lines(site):
    out, names = site
    for previous, name in zip(names, names[1:], strict=False):
        code = panel((out / f"{name}.html").read_text(encoding="utf-8"), "code")
        lines = re.search(r'<pre class="lines"><code>(.*?)</code></pre>', code, re.S)[1]
        marked = "".join(re.findall(r'<ins class="added">(.*?)</ins>', lines, re.S))
        assert marked.count("\n") == added_and_removed(previous, name)[0], name
        source = (ROOT / name / "code.py").read_text()
        assert text_of(lines) == source, name
        gutter = re.search(r'<pre class="gutter" aria-hidden="true">(.*?)</pre>', code, re.S)[1]
        assert text_of(gutter).split("\n")[:3] == ["   1  ", "   2  ", "   3  "] or name


def test_diff_and_compare_pages_open_with_what_is_new(site):
    out, names = site
    old, new = names[-2], names[-1]
    tools = {}
    for name in (old, new):  # the tools offered in the recorded runs: another source
        tools[name] = {tool["name"] for call in run_data(out, name)["calls"]
                       for tool in call["request"]["tools"]
                       if not tool["name"].startswith("mcp__")}  # s11: a server's, not code.py's
    for page, heading in ((f"{new}.html", "h3"), (f"compare-{old}-vs-{new}.html", "h2")):
        text = (out / page).read_text(encoding="utf-8")
        summary = re.search(r'<section class="whats-new".*?</section>', text, re.S)[0]
        assert f'<{heading} id="' in summary
        added = re.search(r"<strong>Tools added</strong>(.*?)</li>", summary)[1]
        assert set(re.findall(r"<code>(\w+)</code>", added)) == tools[new] - tools[old]
        assert (
            f'<span class="plus">+{added_and_removed(old, new)[0]}</span> '
            f'<span class="minus">−{added_and_removed(old, new)[1]}</span>'
        ) in summary


def test_what_is_new_is_computed_from_the_two_files(tmp_path):
    """The lesson tables' count (course.changes): top-level functions and classes, and tools."""
    old = site_builder.Chapter(name="s01_a", folder=tmp_path, code=(
        'TOOL = {"name": "bash", "input_schema": {}}\n'
        "def kept():\n    return 1\n\n"
        "def changed():\n    return 1\n\n"
        "def dropped():\n    pass\n"
    ))
    new = site_builder.Chapter(name="s02_b", folder=tmp_path, code=(
        'TOOL = {"name": "bash", "input_schema": {}}\n'
        'MORE = [{"name": "glob", "description": "x", "input_schema": {}}, {"name": "no"}]\n'
        "def kept():\n    return 1\n\n"
        "def changed():\n    return 2\n\n"
        "class Session:\n    @property\n    def label(self):\n        return ''\n"
    ))
    assert site_builder.what_is_new(site_builder.Diff(old, new)) == site_builder.WhatIsNew(
        tools_added=["glob"], tools_removed=[], functions_added=["Session"],
        functions_changed=["changed"], functions_removed=["dropped"],
        lines_added=6, lines_removed=3,
    )


def test_run_data_is_the_trace_the_chapter_wrote(site):
    """The player's data is the recorded trace: a step per model call, starting with the prompt."""
    out, names = site
    for name in names:
        scenario = read_scenario(ROOT / name)
        data = run_data(out, name)
        trace = [
            json.loads(line) for line in (out / "traces" / f"{name}.jsonl").read_text().splitlines()
        ]
        # from s11 on, the trace also holds the MCP servers' messages, {"mcp": ...}: not steps
        trace = [line for line in trace if "mcp" not in line]
        assert data["calls"] == trace, name
        assert len(trace) >= 1
        first = trace[0]["request"]["messages"][0]
        # from s09 on, the workspace's AGENTS.md files first; from s10 on, the skills after
        has_skills = (ROOT / name / "workspace" / ".agent" / "skills").is_dir()
        prompt_at = len(first["content"]) - 1 - has_skills
        memory, catalog = first["content"][:prompt_at], first["content"][prompt_at + 1:]
        assert first == {
            "role": "user",
            "content": [*memory, {"type": "text", "text": scenario["prompt"]}, *catalog],
        }, name
        has_memory = (ROOT / name / "workspace" / "AGENTS.md").exists()
        assert [block["text"].startswith("The harness read these AGENTS.md files")
                for block in memory] == [True] * has_memory, name
        assert [block["text"].startswith("<skills>\n") for block in catalog] == (
            [True] * has_skills), name
        assert data["prompt"] == scenario["prompt"] and data["answers"] == scenario.get(
            "answers", []
        )
        first_turn = scenario["turns"][0]
        if "when" not in first_turn:  # the model's first reply is the script's first turn
            first_text = [b["text"] for b in first_turn["content"] if b["type"] == "text"]
            assert [
                b["text"] for b in trace[0]["response"]["content"] if b["type"] == "text"
            ] == first_text, name
        page = (out / f"{name}.html").read_text(encoding="utf-8")
        assert (
            f'<output id="step-counter" aria-live="polite">Step 1 of {len(trace)}</output>' in page
        )
        assert page.count('<button type="button" class="bar" id="step-') == len(trace)
        assert page.count('<a class="bar" href="#step-') == len(trace)  # the big chart


def test_every_answer_is_a_user_event_at_its_step(site):
    """The answers piped to stdin are found in the terminal, in order, each after the tool call
    that asked, and each step has its caption."""
    out, names = site
    for name in names:
        data = run_data(out, name)
        assert len(data["steps"]) == len(data["calls"]), name
        answered = []
        for call, step in zip(data["calls"], data["steps"], strict=True):
            asked = [b["id"] for b in call["response"]["content"] if b["type"] == "tool_use"]
            assert set(step["events"]) <= set(asked), name
            answered += [event["answer"] for events in step["events"].values()
                         for event in events]
            assert step["caption"].endswith(".") and len(step["caption"]) > 10, name
        # from s11 on, the first answers say yes to the workspace's MCP servers, before any call
        mcp = ROOT / name / "workspace" / ".mcp.json"
        servers = len(json.loads(mcp.read_text())["mcpServers"]) if mcp.exists() else 0
        assert answered == data["answers"][servers:], name


CALLS = [
    {"request": {"messages": [{"role": "user", "content": [{"type": "text", "text": "go"}]}]},
     "response": {"stop_reason": "tool_use", "content": [
         {"type": "tool_use", "id": "t1", "name": "write_file", "input": {"path": "a"}},
         {"type": "tool_use", "id": "t2", "name": "bash", "input": {"command": "rm -rf ~"}}]}},
    {"request": {"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "Created a."},
        {"type": "tool_result", "tool_use_id": "t2", "is_error": True,
         "content": "Denied: this command deletes the home folder. Never."},
        {"type": "text", "text": "<reminder>Update your todos.</reminder>"},
        {"type": "text", "text": '<hook event="Stop">The tests fail.</hook>'}]}]},
     "response": {"stop_reason": "tool_use", "content": [
         {"type": "tool_use", "id": "t3", "name": "exit_plan_mode", "input": {"plan": "1. x"}},
         {"type": "tool_use", "id": "t4", "name": "ask_user_question",
          "input": {"question": "Which name?"}}]}},
    {"request": {"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t3",
         "content": "The user approved the plan. The plan is saved in .agent/plans/p.md.\n\nx"},
        {"type": "tool_result", "tool_use_id": "t4", "content": "The user answered: Ada"},
        {"type": "tool_result", "tool_use_id": "t9", "is_error": True,
         "content": "Items 1, 2 are all in_progress; at most one may be."}]}]},
     "response": {"stop_reason": "end_turn", "content": [{"type": "text", "text": "Done."}]}},
]
TERMINAL = """banner
  > write_file: a
  ? allow write_file: a
    [y] yes  [n] no: y
    Created a.
  > bash: rm -rf ~
    error: Denied: this command deletes the home folder.
  > exit_plan_mode: 1. x
  Plan:
    1. x
  Approve this plan? [y] yes, start  [n] no  or type feedback: make it shorter: y
  > ask_user_question: Which name?
    Which name? Ada
Done."""


def test_captions_and_user_events_come_from_the_trace_and_the_terminal():
    events = site_builder.terminal_events(CALLS, TERMINAL, ["y", "make it shorter: y", "Ada"])
    assert events == {
        "t1": [{"question": "? allow write_file: a\n  [y] yes  [n] no:", "answer": "y"}],
        "t3": [{"question": "Approve this plan? [y] yes, start  [n] no  or type feedback:",
                "answer": "make it shorter: y"}],
        "t4": [{"question": "Which name?", "answer": "Ada"}],
    }
    assert site_builder.step_captions(CALLS, events) == [
        "The prompt goes to the model; the model asked for 2 tools: write_file, bash; "
        "the harness asked to allow write_file; the user chose y, yes.",
        "The bash call was refused: “this command deletes the home folder”; "
        "a reminder added to this turn: “Update your todos”; "
        "the Stop hook's words added to this turn; the model submitted its plan; "
        "the model asked the user a question; "
        "the harness asked to approve the plan; the user answered “make it shorter: y”; "
        "the user answered “Ada”.",
        "Plan approved: saved to .agent/plans/p.md; "
        "the user's answer goes back: “The user answered: Ada”; "
        "a tool returned an error: “Items 1, 2 are all in_progress”; "
        "the model answered without a tool (stop_reason end_turn): the turn ends.",
    ]


def test_a_caption_names_the_option_chosen_closes_a_cut_quote_and_says_a_phrase_once():
    question = ("? [README] Should README.md show the new option too?\n"
                "    1. Yes (Recommended): Add a --shout example.\n"
                "    2. No: Change greet.py only.\n"
                "  a number (1-2), your own answer, or empty to skip:")
    assert site_builder.option_chosen(question, "2") == "No"
    assert site_builder.option_chosen(question, "1") == "Yes"
    assert site_builder.option_chosen(question, "Make it blue") == ""
    assert site_builder.option_chosen("Approve this plan? [y] yes, start  [n] no  or type "
                                      "feedback:", "y") == "yes, start"
    long = 'User has answered your questions: "Should README.md show the new option too?"="No".'
    assert site_builder.first_sentence(long, 60) == (
        'User has answered your questions: "Should README.md show th…"')
    calls = [{"request": {"messages": [{"role": "user", "content": "x"}]},
              "response": {"stop_reason": "tool_use", "content": [
                  {"type": "tool_use", "id": "q", "name": "ask_user_question", "input": {}}]}},
             {"request": {"messages": [{"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": "q", "content": long},
                 {"type": "text", "text": "<reminder>Update your todos.</reminder>"},
                 {"type": "text", "text": "<reminder>Plan mode has ended.</reminder>"}]}]},
              "response": {"stop_reason": "end_turn", "content": []}}]
    events = {"q": [{"question": question, "answer": "2"}]}
    assert site_builder.step_captions(calls, events) == [
        "The prompt goes to the model; the model asked the user a question; "
        "the user chose 2, No.",
        "The user's answer goes back: “User has answered your questions: \"Should README.md "
        "show th…\"”; reminders added to this turn: “Update your todos”, “Plan mode has "
        "ended”; the model answered without a tool (stop_reason end_turn): the turn ends.",
    ]
    assert site_builder.step_captions(calls, events, "zh-CN")[0] == (
        "提示词发给模型；模型向用户提了一个问题；用户选了 2，即“No”。")


def user(*blocks):
    return {"role": "user", "content": list(blocks)}


def result(tool_id, content):
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content}


def test_a_subagents_steps_and_a_compaction_are_told_from_the_traces_marks():
    """Issue 57, point 1: s07's subagent steps read as the user's words, s08's summary request
    and new history too, and the clearing of old results was not told. The marks of the trace
    lines ("agent", "compaction") and the results that shrank say what happened."""
    ask = {"type": "tool_use", "id": "a1", "name": "agent",
           "input": {"description": "Find it", "prompt": "Find the greeting."}}
    read = {"type": "tool_use", "id": "r1", "name": "read_file", "input": {"path": "a.py"}}
    first = user({"type": "text", "text": "Change it."})
    replied = {"role": "assistant", "content": [ask]}
    answer = "It is in a.py. Line 3."
    summary_asked = [first, replied, user(result("a1", answer), result("r0", "[Cleared: x]")),
                     {"role": "assistant", "content": [read]},
                     user(result("r1", "GREETING = 1"),
                          {"type": "text", "text": "Summarise now. Keep it."})]
    calls = [
        {"request": {"messages": [first]},
         "response": {"stop_reason": "tool_use", "content": [ask]}},
        {"agent": "Find it", "request": {"messages": [user({"type": "text", "text": "Find."})]},
         "response": {"stop_reason": "tool_use", "content": [read]}},
        {"agent": "Find it", "request": {"messages": [
            user({"type": "text", "text": "Find."}), {"role": "assistant", "content": [read]},
            user(result("r1", "GREETING = 1"))]},
         "response": {"stop_reason": "end_turn", "content": [{"type": "text", "text": answer}]}},
        {"request": {"messages": [first, replied, user(result("a1", answer),
                                                       result("r0", "x" * 50))]},
         "response": {"stop_reason": "tool_use", "content": [read]}},
        {"request": {"messages": [first, replied, user(result("a1", answer),
                                                       result("r0", "[Cleared: x]")),
                                  {"role": "assistant", "content": [read]},
                                  user(result("r1", "GREETING = 1"))]},
         "response": {"stop_reason": "tool_use", "content": [read]}},
        {"compaction": "summary", "request": {"messages": summary_asked},
         "response": {"stop_reason": "end_turn",
                      "content": [{"type": "text", "text": "<summary>s</summary>"}]}},
        {"request": {"messages": [user({"type": "text", "text": "<summary>s</summary>"},
                                       {"type": "text", "text": "<reminder>todo</reminder>"})]},
         "response": {"stop_reason": "end_turn", "content": []}},
    ]
    history = f"{len(json.dumps(summary_asked, ensure_ascii=False)):,}"
    new = len(json.dumps(calls[-1]["request"]["messages"], ensure_ascii=False))
    assert site_builder.step_captions(calls, {}) == [
        "The prompt goes to the model; the model handed a task to a subagent: “Find it”.",
        "The subagent's call 1 of 2, for “Find it”: its task is its only message, in a context "
        "of its own; the subagent asked for read_file.",
        "The subagent's call 2 of 2, for “Find it”; the subagent answered without a tool "
        "(stop_reason end_turn): this text goes back to the agent as the agent tool's result, "
        "and its context ends.",
        "The subagent's answer comes back as the agent tool's result (22 characters; none of "
        "its own calls): “It is in a.py”; the model asked for read_file.",
        "1 old tool result cleared to save context, 50 characters now 12: “[Cleared: x]”; "
        "the model asked for read_file.",
        f"A summary request: the whole history (5 messages, {history} characters) and an "
        "instruction: “Summarise now”; the model wrote its summary (20 characters, "
        "stop_reason end_turn), which replaces the history.",
        f"The summary replaced the history: 5 messages ({history} characters) became 1 "
        f"({new} characters); the model answered without a tool (stop_reason end_turn): the "
        "turn ends.",
    ]
    assert site_builder.step_captions(calls, {}, ZH)[1:5] == [
        "subagent 为“Find it”做的第 1 次调用，共 2 次：它的任务是它唯一的消息，上下文是它自己的；"
        "subagent 要调用 read_file。",
        "subagent 为“Find it”做的第 2 次调用，共 2 次；subagent 没有调用工具就作答（stop_reason "
        "end_turn）：这段文字作为 agent 工具的结果交回给 agent，它的上下文到此结束。",
        "subagent 的回答作为 agent 工具的结果回来了（22 个字符；它自己的调用一个也不带回）："
        "“It is in a.py”；模型要调用 read_file。",
        "为节省上下文清除了 1 个旧的工具结果，50 个字符变成 12 个：“[Cleared: x]”；"
        "模型要调用 read_file。",
    ]
    # what the player shows as new in a step is against the step before in its conversation
    assert site_builder.conversations(calls)[0] == [None, None, 1, 0, 3, 4, 5]


def test_s08s_recorded_summary_says_summary_once(site):
    """Point 10: s08's new history read "<summary>\n<summary>": the script's reply had the tag
    and the code adds it. The scripted summary is the text alone, as the code expects."""
    out, names = site
    if "s08_compact" not in names:
        pytest.skip("no s08 yet")
    texts = [block.get("text", "") for call in run_data(out, "s08_compact")["calls"]
             for message in call["request"]["messages"] if isinstance(message["content"], list)
             for block in message["content"]]
    summaries = [text for text in texts if "<summary>" in text]
    assert summaries and [text.count("<summary>") for text in summaries] == [1] * len(summaries)


def test_what_a_run_shows_of_the_building_machine_is_put_in_fixed_words(tmp_path):
    folder = tmp_path / "site-s06-abc"
    workdir = folder / "s06-k2j3_x9a"
    workdir.mkdir(parents=True)
    chapter = site_builder.Chapter(name="s06_plan_mode", folder=ROOT / "s06_plan_mode", code="")
    started = time.mktime((2026, 3, 4, 5, 6, 7, 0, 0, -1))
    shown = site_builder.Normaliser(chapter, folder, started, started + 1.5)
    text = (f"plays {ROOT}/s06_plan_mode/scenario.json\nworkdir: {workdir}  (HOME)\n"
            f"rm -rf {folder}/s0?-* \n"
            "session: 20260304-050608-a1b2c3 plan-20260304-050607-ffffff.md "
            "but 20260304-050620-a1b2c3 is not this run's\n"
            "Ran 3 tests in 0.012s\n=== 2 passed, 1 warning in 0.04s ===\n")
    assert shown(text) == (
        "plays s06_plan_mode/scenario.json\nworkdir: $TMPDIR/s06-xxxx  (HOME)\n"
        "rm -rf $TMPDIR/s0?-* \n"
        "session: YYYYMMDD-HHMMSS-xxxxxx plan-YYYYMMDD-HHMMSS-xxxxxx.md "
        "but 20260304-050620-a1b2c3 is not this run's\n"
        "Ran 3 tests in x.xxxs\n=== 2 passed, 1 warning in x.xxxs ===\n"
    )
    as_json = json.dumps({"system": f"Your working directory is {workdir}.\nRan 1 test in 0.0s"})
    assert json.loads(shown(as_json)) == {
        "system": "Your working directory is $TMPDIR/s06-xxxx.\nRan 1 test in x.xxxs"}
    shown.check("all in fixed words")
    with pytest.raises(site_builder.BuildError) as leak:
        shown.check(f"a path that got away: {folder}/elsewhere")
    assert str(leak.value) == (
        f"s06_plan_mode: the recorded run shows a path of this machine ({folder}); "
        "web/build.py must show it in other words"
    )


def test_two_builds_in_different_folders_are_byte_identical(site, second_site):
    (out, _), (again, _) = site, second_site
    files = sorted(str(path.relative_to(out)) for path in out.rglob("*") if path.is_file())
    assert files == sorted(str(path.relative_to(again)) for path in again.rglob("*")
                           if path.is_file())
    assert [name for name in files if (out / name).read_bytes() != (again / name).read_bytes()
            ] == []


def test_no_path_of_the_building_machine_is_in_the_site(site, second_site):
    """Not the checkout, not a temporary folder, not the home folder, and no "/tmp" at all: the
    lessons write the temporary folder $TMPDIR, and their copies go to play/."""
    (out, _), (again, runs) = site, second_site
    machine = [str(ROOT), str(out), str(again), str(runs), str(Path.home()),
               tempfile.gettempdir() + "/site-", sys.prefix]
    for build in (out, again):
        for path in sorted(build.rglob("*")):
            if not path.is_file() or path.suffix == ".svg":
                continue
            data = path.read_bytes()
            if data.startswith(b"\x1f\x8b"):  # the search index: gzip (sitebuild/search.py)
                data = gzip.decompress(data)
            text = data.decode("utf-8", errors="replace")
            assert [where for where in machine if where in text] == [], path
            assert "/tmp" not in text, path


@dataclass
class ShownRun:
    """The Run tab's command of a chapter, run as printed, in a folder laid out as the
    repository (its chapter folder and .venv), with a TMPDIR of its own."""
    name: str
    command: str
    checkout: Path
    temporary: Path
    started: float
    process: subprocess.Popen


@pytest.fixture(scope="session")
def shown_run(site, tmp_path_factory):
    """Started as soon as the site is built (the first test asks for it), so that the run goes
    on beside the other tests; test_the_shown_command_... waits for it."""
    out, names = site
    name = next((n for n in names if read_scenario(ROOT / n)["answers"]), names[0])
    page = (out / f"{name}.html").read_text(encoding="utf-8")
    command = text_of(re.search(
        r'<pre class="terminal command"><code>\$ (.*?)</code></pre>', page, re.S)[1])
    checkout, temporary = tmp_path_factory.mktemp("checkout"), tmp_path_factory.mktemp("tmp")
    (checkout / name).symlink_to(ROOT / name)
    (checkout / ".venv").symlink_to(Path(sys.prefix))
    (checkout / "play").mkdir()  # as in a clone
    started = time.time()
    process = subprocess.Popen(["bash", "-c", command], cwd=checkout, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=site_builder.offline_environment(TMPDIR=str(temporary)))
    yield ShownRun(name, command, checkout, temporary, started, process)
    if process.poll() is None:
        process.kill()
    process.communicate()


def test_the_shown_command_runs_as_printed_and_records_the_same_run(site, shown_run):
    """The command of the Run tab, run as printed from the repository root, prints the terminal
    the page shows and writes its trace (both in the page's fixed words)."""
    out, names = site
    run = shown_run
    assert run.command.count(
        f".venv/bin/python {run.name}/code.py --offline --trace play/{run.name}.trace.jsonl"
    ) == 1
    stdout, stderr = run.process.communicate(timeout=120)
    assert run.process.returncode == 0, stderr
    chapter = site_builder.find_chapters(ROOT)[names.index(run.name)]
    shown = site_builder.Normaliser(chapter, run.temporary, run.started, time.time())
    page = (out / f"{run.name}.html").read_text(encoding="utf-8")
    terminal = re.search(r'<pre class="terminal"><span class="prompt">\$ (.*?)</span>\n(.*?)</pre>',
                         page, re.S)
    assert html.unescape(terminal[1]) == run.command
    assert shown(stdout) == html.unescape(terminal[2])
    assert shown((run.checkout / "play" / f"{run.name}.trace.jsonl").read_text()) == (
        out / "traces" / f"{run.name}.jsonl").read_text()


def fake_chapter(root, name, code):
    """A chapter folder with just enough in it to be recorded (and to fail)."""
    (root / name).mkdir(parents=True)
    (root / name / "code.py").write_text(f'"""{name}: a chapter that fails."""\n{code}\n')
    (root / name / "scenario.json").write_text('{"prompt": "hello", "turns": []}')


def test_a_chapter_whose_run_fails_stops_the_build(tmp_path):
    fake_chapter(tmp_path / "course", "s01_fine", "raise SystemExit(0)")
    fake_chapter(
        tmp_path / "course",
        "s02_broken",
        "import sys\nsys.exit('s02_broken: the script is broken')",
    )
    with pytest.raises(site_builder.BuildError) as failure:
        site_builder.build(tmp_path / "out", chapters_root=tmp_path / "course")
    # s01_fine also fails (no trace), and the first chapter is named: run order does not matter
    assert (
        str(failure.value) == "s01_fine: the run wrote an empty trace (no model call was recorded)"
    )
    shutil.rmtree(tmp_path / "course" / "s01_fine")
    with pytest.raises(site_builder.BuildError) as failure:
        site_builder.build(tmp_path / "out", chapters_root=tmp_path / "course")
    assert (
        str(failure.value) == "s02_broken: code.py exited with 1: s02_broken: the script is broken"
    )
    assert not (tmp_path / "out").exists()  # nothing written


def test_the_command_line_exits_1_with_one_line(tmp_path):
    fake_chapter(tmp_path / "course", "s01_crash", "raise RuntimeError('boom')")
    process = subprocess.run(
        [
            sys.executable,
            str(BUILD_SCRIPT),
            "--chapters",
            str(tmp_path / "course"),
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert process.returncode == 1
    assert process.stderr == "build.py: s01_crash: code.py exited with 1: RuntimeError: boom\n"
    assert process.stdout == ""


# ---- the two languages -------------------------------------------------------------

ZH = "zh-CN"
SWITCH = re.compile(r'<a class="language-switch" href="([^"]*)" hreflang="([^"]*)" '
                    r'lang="([^"]*)" aria-label="([^"]*)">([^<]*)</a>')
SWITCH_WORDS = {"en": ("English: this page in English", "English"),
                ZH: ("中文：本页的简体中文版", "中文")}


def flat(table, prefix=""):
    """{"key": value, "script.key": value} of a table of STRINGS."""
    found = {}
    for key, value in table.items():
        if isinstance(value, dict):
            found.update(flat(value, f"{prefix}{key}."))
        else:
            found[prefix + key] = value
    return found


def rejected_renderings():
    """The renderings GLOSSARY.zh-CN.md rejects (its third column)."""
    rows = [line.split("|")[1:-1] for line in (ROOT / "GLOSSARY.zh-CN.md").read_text(
        encoding="utf-8").splitlines() if line.startswith("| ") and not line.startswith("| ---")]
    return [word.strip() for row in rows[1:] for word in row[2].split("、") if word.strip()]


def test_every_english_string_of_the_chrome_has_its_chinese_with_the_same_blanks():
    english, chinese = flat(site_builder.STRINGS["en"]), flat(site_builder.STRINGS[ZH])
    assert sorted(chinese) == sorted(english)
    assert [key for key, value in chinese.items() if not value.strip()] == []
    blanks = re.compile(r"\{(\w*)\}")
    assert {key: sorted(blanks.findall(value)) for key, value in chinese.items()} == {
        key: sorted(blanks.findall(value)) for key, value in english.items()}
    # tags and links are the English ones too (the words between them are not)
    markup = re.compile(r"<(/?\w+)|href=\"[^\"]*\"")
    assert {key: sorted(markup.findall(value)) for key, value in chinese.items()} == {
        key: sorted(markup.findall(value)) for key, value in english.items()}
    rejected = rejected_renderings()
    assert len(rejected) > 10
    assert [(key, word) for key, value in chinese.items() for word in rejected
            if word in value] == []


def test_the_captions_are_computed_in_chinese_too():
    events = site_builder.terminal_events(CALLS, TERMINAL, ["y", "make it shorter: y", "Ada"])
    assert site_builder.step_captions(CALLS, events, ZH) == [
        "提示词发给模型；模型要调用 2 个工具：write_file、bash；"
        "harness 询问是否允许 write_file；用户选了 y，即“yes”。",
        "bash 被拒绝：“this command deletes the home folder”；"
        "这个轮次加入了一条提醒：“Update your todos”；"
        "这个轮次加入了 Stop hook 的话；模型提交了计划；"
        "模型向用户提了一个问题；"
        "harness 请用户批准计划；用户回答“make it shorter: y”；"
        "用户回答“Ada”。",
        "计划已批准：保存在 .agent/plans/p.md；"
        "用户的回答发回给模型：“The user answered: Ada”；"
        "某个工具返回了错误：“Items 1, 2 are all in_progress”；"
        "模型没有调用工具就作答（stop_reason end_turn）：这个轮次结束。",
    ]


def test_each_page_switches_to_its_counterpart_and_back(site):
    """The switch is a plain link to the same page in the other language (it works without
    JavaScript), marked with the language it leads to, named in that language."""
    out, names = site
    for name in english_pages(names):
        for here, there, lang, other, href in ((name, f"{ZH}/{name}", "en", ZH, f"{ZH}/{name}"),
                                               (f"{ZH}/{name}", name, ZH, "en", f"../{name}")):
            text = (out / here).read_text(encoding="utf-8")
            assert text.startswith(f'<!doctype html>\n<html lang="{lang}">\n'), here
            assert SWITCH.findall(text) == [(href, other, other, *SWITCH_WORDS[other])], here
            assert ((out / here).parent / href).resolve() == (out / there).resolve()
            assert f'<link rel="alternate" hreflang="{other}" href="{href}">' in text, here


def test_a_chinese_page_has_chinese_chrome_and_marks_its_english_parts(site):
    out, names = site
    name = "s03_permissions"
    english = (out / f"{name}.html").read_text(encoding="utf-8")
    chinese = (out / ZH / f"{name}.html").read_text(encoding="utf-8")
    tabs = re.compile(r'<a id="tab-(\w+)" href="#\1">(.*?)</a>')
    assert tabs.findall(chinese) == [("lesson", "讲义"), ("code", "代码"), ("diff", "差异"),
                                     ("run", "运行")]
    assert tabs.findall(english) == [("lesson", "Lesson"), ("code", "Code"), ("diff", "Diff"),
                                     ("run", "Run")]
    assert re.findall(r'<a class="skip" href="#main">(.*?)</a>', chinese) == ["跳到正文"]
    calls = len(run_data(out, name)["calls"])
    buttons = re.findall(r'<(?:button|output) type="button" id="(step-\w+)"[^>]*>(.*?)</button>'
                         r'|<output id="(step-counter)"[^>]*>(.*?)</output>', chinese)
    assert [(a or c, b or d) for a, b, c, d in buttons] == [
        ("step-previous", "← 上一步"), ("step-counter", f"第 1 步，共 {calls} 步"),
        ("step-next", "下一步 →")]
    assert re.findall(r'<button type="button" data-view="diff-(\w+)"[^>]*>(.*?)</button>',
                      chinese) == [("unified", "单栏"), ("split", "并排")]
    assert re.findall(r'<h3 id="run-\w+">(.*?)</h3>', chinese) == [
        "逐次查看模型调用", "请求怎样变大", "终端"]
    assert re.findall(r'<strong>(.*?)</strong>(?:（\d+）)?：', panel(chinese, "diff")) == [
        "新增的工具", "新增的函数", "改动的函数", "去掉的函数"]
    assert re.findall(r'<h1>(.*?)</h1>', chinese) == [
        "s03 · 工具运行之前，先决定允许、拒绝还是询问"]
    # code, diffs, terminals: English inside the Chinese page, marked so (not on the English one)
    english_parts = re.compile(
        r'<(?:div|pre)\s[^>]*?class="(?:hl|hl command|rows|terminal|terminal command|docstring)"'
        r'[^>]*>')
    for page in (out / ZH).glob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert [tag for tag in english_parts.findall(text) if 'lang="en"' not in tag] == [], page
    tags = english_parts.findall(chinese)
    assert set(tags) == {'<div class="hl" lang="en">', '<div class="hl command" lang="en">',
                         '<div class="rows" lang="en">',
                         '<pre class="terminal command" lang="en">',
                         '<pre class="terminal" lang="en">'}
    assert [tag for tag in english_parts.findall(english) if "lang=" in tag] == []


def test_the_recorded_runs_are_shown_in_both_languages_with_captions_in_each(site):
    """One recording per chapter: the same calls and answers, the captions in each language."""
    out, names = site
    for name in names:
        data = run_data(out, name)
        chinese = run_data(out / ZH, name)
        assert chinese["calls"] == data["calls"], name
        assert [step["events"] for step in chinese["steps"]] == [
            step["events"] for step in data["steps"]], name
        english = (out / f"{name}.html").read_text(encoding="utf-8")
        terminal = html.unescape(re.search(
            r'<pre class="terminal"><span class="prompt">.*?</span>\n(.*?)</pre>', english,
            re.S)[1])
        events = site_builder.terminal_events(data["calls"], terminal, data["answers"])
        assert [step["caption"] for step in chinese["steps"]] == site_builder.step_captions(
            data["calls"], events, ZH), name
        page = (out / ZH / f"{name}.html").read_text(encoding="utf-8")
        assert f'href="../traces/{name}.jsonl"' in page


def test_a_chinese_lesson_is_its_translation_with_the_english_anchors(site):
    """The Lesson tab of a Chinese page is README.zh-CN.md, without its language line; each
    heading has the id of the English heading it translates, so the switch keeps it."""
    out, names = site
    heading = re.compile(r'<h([23]) id="([^"]*)">(.*?)</h\1>')
    for name in names:
        english = panel((out / f"{name}.html").read_text(encoding="utf-8"), "lesson")
        chinese = panel((out / ZH / f"{name}.html").read_text(encoding="utf-8"), "lesson")
        opening = '<section class="panel lesson" id="lesson" aria-labelledby="tab-lesson">\n'
        for lesson in (english, chinese):  # no language line above the first section
            assert re.match(re.escape(opening) + r'<p class="opening">.*?</p>\n'
                            r'<nav class="toc" aria-label="[^"]+"><details class="toc-fold">'
                            r'<summary>[^<]+</summary><ol>'
                            r'<li><a href="#lesson-the-problem">.*?</ol></details></nav>\n'
                            r'<h2 id="lesson-the-problem">', lesson), name
        source = (ROOT / name / "README.zh-CN.md").read_text(encoding="utf-8")
        titles = re.findall(r"^#{2,3} (.*)$", source, re.M)
        assert [text_of(found[2]) for found in heading.findall(chinese)] == [
            re.sub(r"`([^`]*)`", r"\1", title) for title in titles], name
        assert [found[:2] for found in heading.findall(chinese)] == [
            found[:2] for found in heading.findall(english)], name


LESSON_ZH = """# s01_loop: 标题

[English](README.md) · **中文**

## 循环
<!-- en: 0123456789ab The loop -->

读[代码](code.py)、[s02 的讲义](../s02_tools/README.zh-CN.md)、[英文版](../s02_tools/README.md)、
[首页](../README.zh-CN.md)、[英文首页](../README.md)，再看[循环](#循环)和 `agent_loop`。

```bash
ls
```
"""


def test_the_links_of_a_chinese_lesson_land_on_the_pages_of_the_site(tmp_path):
    folder = tmp_path / "s01_loop"
    folder.mkdir()
    chapter = site_builder.Chapter(name="s01_loop", folder=folder, code='"""s01_loop: x."""\n',
                                   lesson_zh=LESSON_ZH)
    body, images = site_builder.render_lesson(chapter, ["s01_loop", "s02_tools"], ZH)
    assert body == (
        '<h2 id="lesson-the-loop">循环</h2>\n'
        '<p>读<a href="s01_loop.html#code">代码</a>、<a href="s02_tools.html">s02 的讲义</a>、'
        '<a href="../s02_tools.html">英文版</a>、'
        '<a href="readme.html">首页</a>、<a href="../readme.html">英文首页</a>，'
        '再看<a href="#lesson-the-loop">循环</a>和 <code lang="en">agent_loop</code>。</p>\n'
        '<div class="hl command" lang="en"><pre tabindex="0">ls\n</pre></div>\n'
    )
    assert images == []
    assert chapter.title_in(ZH) == "s01 · 标题" and chapter.title == "s01 · x"


def test_a_chapter_not_translated_yet_shows_its_english_lesson_marked_so(tmp_path):
    folder = tmp_path / "s01_loop"
    folder.mkdir()
    chapter = site_builder.Chapter(name="s01_loop", folder=folder, code='"""s01_loop: x."""\n',
                                   lesson="# s01_loop: x.\n\n## The problem\n\nText.\n")
    assert site_builder.chapter_parts(chapter, ["s01_loop"], ZH)["lesson"] == (
        '<p class="note">这一章的讲义还没有中文版，下面是英文原文。</p>\n'
        '<div lang="en"><h2 id="lesson-the-problem">The problem</h2>\n<p>Text.</p>\n</div>')
    chapter.lesson = None
    assert site_builder.chapter_parts(chapter, ["s01_loop"], ZH)["lesson"] == (
        '<h2 id="lesson-not-written">讲义还没有写</h2>\n'
        '<p>这一章还没有 <code lang="en">README.zh-CN.md</code>。在那之前，这里是它的\n'
        '<code lang="en">code.py</code> 对自己的介绍：</p>\n'
        '<pre class="docstring" lang="en">s01_loop: x.</pre>')
    assert chapter.title_in(ZH) == chapter.title == "s01 · x"

# What a browser shows of a page's text, roughly: inline tags taken out, the others (and
# <pre>, <script>, <template>, whose text is code or data) a boundary no space crosses.
INLINE_TAGS = re.compile(r"</?(?:a|abbr|b|code|del|em|i|ins|kbd|mark|q|s|small|span|strong|sub"
                         r"|sup|time|u|wbr)\b[^>]*>")


def shown_text(page_html):
    text = re.sub(r"<(script|template|pre)\b.*?</\1>", "\x01", page_html, flags=re.S)
    text = INLINE_TAGS.sub("", text)
    return html.unescape(re.sub(r"<[^>]+>", "\x01", text))


def test_no_space_between_two_chinese_characters_on_a_chinese_page(site):
    """A soft line break of wrapped Chinese source (or a space after bold) would show as a
    space between two Chinese characters: the renderer leaves none, nor do the captions."""
    out, names = site
    between = re.compile(rf"[{site_builder.CJK}][ \t\n]+[{site_builder.CJK}]")
    found = {page.name: between.findall(shown_text(page.read_text(encoding="utf-8")))
             for page in sorted((out / ZH).glob("*.html"))}
    assert {name: runs for name, runs in found.items() if runs} == {}
    assert len(found) == len(english_pages(names))
    captions = [step["caption"] for name in names for step in run_data(out / ZH, name)["steps"]]
    assert [caption for caption in captions if between.search(caption)] == []


def test_a_chinese_page_names_cards_and_tabs_in_chinese_and_marks_quoted_english(site):
    out, names = site
    home = (out / ZH / "index.html").read_text(encoding="utf-8")
    assert re.findall(r'<span class="label">(s\d\d)</span> ([^<]*)</a>', home)[:2] == [
        ("s01", "agent 循环"), ("s02", "分发表和文件工具")]
    chapter = (out / ZH / "s01_loop.html").read_text(encoding="utf-8")
    assert re.findall(r'<a id="tab-\w+" href="#\w+">([^<]*)</a>', chapter) == [
        "讲义", "代码", "差异", "运行"]
    assert ('“<span lang="en">What files are here, and what is the title of notes.md?</span>”'
            in chapter)
    assert site_builder.mark_english_quotes("见“Plan mode is on”和“计划”<pre>“x”</pre>") == (
        '见“<span lang="en">Plan mode is on</span>”和“计划”<pre>“x”</pre>')


def test_numbers_are_written_one_way_in_both_languages(site):
    """12,447 and 1,496 alike: no "1.496k" beside them, in the charts' captions and axes."""
    out, names = site
    for folder in ("", "zh-CN/"):
        for name in names:
            chart = re.search(r'<figure class="chart">.*?</svg>',
                              (out / f"{folder}{name}.html").read_text(encoding="utf-8"), re.S)[0]
            texts = [text_of(part) for part in re.findall(
                r"<(?:text|figcaption)[^>]*>(.*?)</(?:text|figcaption)>", chart, re.S)]
            numbers = [n for text in texts for n in re.findall(r"\d[\d,.]*k?", text)]
            assert len(numbers) > 4, name
            assert [n for n in numbers if not re.fullmatch(r"\d{1,3}(,\d{3})*", n)] == [], name
    assert site_builder.short_number(1496) == "1,496"


def test_the_build_it_yourself_line_comes_from_course_stages_when_it_is_there(
        site, monkeypatch):
    """One function gives a chapter page its stage-check command; without course.stages the
    page has no such line."""
    import importlib.machinery
    import types

    out, names = site
    chapter = site_builder.find_chapters(ROOT)[0]
    if importlib.util.find_spec("course.stages") is None:
        assert site_builder.build_it_yourself(chapter) == ""
        assert "build-it" not in (out / f"{names[0]}.html").read_text(encoding="utf-8")
    stages = types.ModuleType("course.stages")
    stages.__spec__ = importlib.machinery.ModuleSpec("course.stages", None)
    monkeypatch.setitem(sys.modules, "course.stages", stages)
    assert site_builder.build_it_yourself(chapter) == (
        ".venv/bin/python -m course.stages s01 build/agent.py")


def test_line_breaks_between_chinese_characters_are_taken_out():
    join = site_builder.join_cjk_lines
    assert join("循环、\n工具") == "循环、工具"
    assert join('见<a href="x">首页</a>，\n  再看') == '见<a href="x">首页</a>，再看'
    assert join("<strong>粗体。</strong> 正文") == "<strong>粗体。</strong>正文"
    assert join("agent\n循环 loop 和\nREADME") == "agent\n循环 loop 和\nREADME"
    assert join("</p>\n<p>") == "</p>\n<p>"  # between blocks: as it was
    assert join("<pre>中\n文</pre>中\n文") == "<pre>中\n文</pre>中文"
    assert join("甲\x00乙 a\x00b") == "甲乙 a\nb"


def test_the_chinese_home_page_says_how_to_use_the_course_with_the_same_commands(site):
    out, names = site
    english = (out / "index.html").read_text(encoding="utf-8")
    chinese = (out / ZH / "index.html").read_text(encoding="utf-8")
    assert re.findall(r"<h[12][^>]*>(.*?)</h[12]>", chinese) == [
        "构建一个编程 agent", "开始上手", "怎样使用这门课", "各章"]

    def commands(text):
        how = re.search(r'<ol class="how">(.*?)</ol>', text, re.S)[1]
        return re.findall(r"<code[^>]*>(.*?)</code>", how)

    assert commands(chinese) == commands(english) and len(commands(english)) == 3
    cards = re.findall(r'<li class="card">\s*<h3><a [^>]*><span class="label">s\d+</span> '
                       r'(.*?)</a></h3>', chinese, re.S)
    assert cards == [(ROOT / name / "README.zh-CN.md").read_text(encoding="utf-8")
                     .partition("\n")[0].removeprefix(f"# {name}:").strip().rstrip("。")
                     for name in names]


# ---- in the browser ----------------------------------------------------------------

class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="module")
def server(site):
    """The built site on http://127.0.0.1:<free port>/."""
    out, _ = site
    handler = functools.partial(QuietHandler, directory=str(out))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()
    thread.join()


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for this file's tests. Module-scoped: Playwright's event loop ends
    with them, so a later file in the same process can run asyncio (tests/test_notebooks.py)."""
    if not Path(page_checker.CHROMIUM).exists():
        missing = (f"neither {' nor '.join(page_checker.CHROMIUMS)} is here (apt-get install "
                   f"chromium-headless-shell, or chromium)")
        if os.environ.get("REQUIRE_BROWSER") == "1":
            pytest.fail(f"REQUIRE_BROWSER=1 but {missing}")
        pytest.skip(f"{missing}: the browser tests need one")
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    chromium = playwright.chromium.launch(
        executable_path=page_checker.CHROMIUM, headless=True, args=page_checker.CHROMIUM_ARGS
    )
    yield chromium
    chromium.close()
    playwright.stop()


class Visit:
    """The shared page, blank and 1280 px wide again, noting errors and every request."""

    def __init__(self, page, base):
        self.base = base
        self.page = page
        self.errors, self.requests = [], []
        page.goto("about:blank")  # no script of the last test runs on, and Back stops here
        if page.viewport_size != {"width": 1280, "height": 900}:  # (else no new layout)
            page.set_viewport_size({"width": 1280, "height": 900})
        page.mouse.move(0, 0)  # where a new page has it: a wheel scrolls what is under it
        self.listeners = {
            "console": lambda message: message.type == "error" and self.errors.append(
                message.text),
            "pageerror": lambda error: self.errors.append(str(error)),
            "request": lambda request: self.requests.append(request.url),
        }
        for event, listener in self.listeners.items():
            page.on(event, listener)

    def close(self):
        for event, listener in self.listeners.items():
            self.page.remove_listener(event, listener)

    def open(self, path):
        self.page.goto(self.base + path)
        return self.page

    def assert_clean(self):
        assert self.errors == []
        assert self.requests and all(url.startswith(self.base) for url in self.requests), \
            [url for url in self.requests if not url.startswith(self.base)]


@pytest.fixture(scope="module")
def shared_page(browser):
    """One page for the tests that need no context of their own: a new context and page cost
    Chromium about 0.6 s of CPU each, and the site keeps nothing (no cookies, no storage)."""
    context = browser.new_context()
    yield context.new_page()
    context.close()


@pytest.fixture
def visit(shared_page, server):
    visit = Visit(shared_page, server)
    yield visit
    visit.close()


def visible_panels(page):
    return page.eval_on_selector_all(
        "section.panel", "panels => panels.filter(p => !p.hidden).map(p => p.id)"
    )


def wait_for_panel(page, name):
    """Wait (Playwright's own polling, up to its timeout) until only panel `name` is shown."""
    page.wait_for_function(
        """name => [...document.querySelectorAll("section.panel")]
            .filter(p => !p.hidden).map(p => p.id).join() === name""",
        arg=name,
    )


# The text of every <pre> that scrolls but cannot take the focus (so its end cannot be reached).
SCROLLING_BUT_NOT_FOCUSABLE = """() => Array.from(document.querySelectorAll("main pre"))
  .filter((pre) => pre.checkVisibility() && pre.tabIndex < 0 &&
          getComputedStyle(pre).overflow !== "visible" &&  // (a gutter: it never scrolls)
          (pre.scrollHeight > pre.clientHeight + 1 || pre.scrollWidth > pre.clientWidth + 1))
  .map((pre) => pre.textContent.slice(0, 40))"""


def unusable(page, selector):
    return page.get_attribute(selector, "aria-disabled") == "true"


def step_through(page, steps):
    """Forward and back with the buttons and the arrow keys, reading the counter each time."""
    counter = page.locator("#step-counter")
    assert counter.inner_text() == f"Step 1 of {steps}"
    assert unusable(page, "#step-previous")
    expected = 1
    for action, move in [("click #step-next", 1), ("ArrowRight", 1), ("ArrowLeft", -1),
                         ("click #step-previous", -1), ("ArrowLeft", -1)]:
        if action.startswith("click"):
            button = action.split()[1]
            if unusable(page, button):
                continue
            page.click(button)
        else:
            page.keyboard.press(action)
        expected = min(max(expected + move, 1), steps)
        assert counter.inner_text() == f"Step {expected} of {steps}", action
    page.keyboard.press("End")  # not a player key: the counter stays
    assert counter.inner_text() == f"Step {expected} of {steps}"


# Checked at 1280 px on the walk through every chapter below (one load of each page).
WIDE_COMMANDS = """() => [...document.querySelectorAll("pre.command, .hl.command pre")]
  .filter((pre) => pre.checkVisibility() && pre.scrollWidth > pre.clientWidth)
  .map((pre) => pre.textContent.slice(0, 60))"""
COMMANDS = "document.querySelectorAll('pre.command, .hl.command pre').length"
LESSON_CODE = """() => {
  const room = document.getElementById("lesson").getBoundingClientRect().width;
  const pres = [...document.querySelectorAll("#lesson div.hl > pre")];
  const narrow = pres.filter((pre) => pre.scrollWidth > pre.clientWidth + 1 &&
    pre.getBoundingClientRect().width < room - 2)
    .map((pre) => pre.textContent.slice(0, 40));
  const covered = [...document.querySelectorAll("#lesson .copyable > .copy")].filter(
    (button) => button.getBoundingClientRect().bottom >
      button.nextElementSibling.getBoundingClientRect().top + 0.5).length;
  return [pres.length, narrow, covered];
}"""


@pytest.mark.browser
def test_browser_every_chapter_its_tabs_its_run_its_commands_and_its_lesson_code(
        site, visit, tmp_path):
    """From the home page, through every chapter by its Next link, at 1280 px: each tab and
    the run (the player stepped by buttons and keys); on the way, on the home page and on
    each chapter's Lesson and Run tabs, no command scrolls sideways.

    Issue 42, point 1: lesson code was capped at 50rem (the copy wrapper, not .hl, was the
    lesson's child), and scrolled with room beside it, under its Copy button: every chapter's
    Lesson tab (and the Chinese last chapter's) uses the width, its Copy buttons above it."""
    out, names = site
    seen = blocks = 0

    def no_command_scrolls(where):
        nonlocal seen
        assert page.evaluate(WIDE_COMMANDS) == [], where
        seen += page.evaluate(COMMANDS)

    def lesson_code_uses_the_width(where):
        nonlocal blocks
        found = page.evaluate(LESSON_CODE)
        blocks += found[0]
        assert found[1:] == [[], 0], where

    page = visit.open("index.html")
    ready(page)
    no_command_scrolls("index.html")
    assert page.locator("li.card").count() == len(names)
    page.locator(f'li.card a[href="{names[0]}.html"]').click()
    for number, name in enumerate(names):
        page.wait_for_url(f"**/{name}.html")
        ready(page)
        assert visible_panels(page) == ["lesson"]
        no_command_scrolls(f"{name}.html#lesson")
        lesson_code_uses_the_width(f"{name}.html")
        for tab in ("code", "diff", "lesson", "run"):
            page.click(f"#tab-{tab}")
            wait_for_panel(page, tab)  # a tab is a link: the page follows the hash a little later
            assert visible_panels(page) == [tab], (name, tab)
            assert page.get_attribute(f"#tab-{tab}", "aria-current") == "true"
        no_command_scrolls(f"{name}.html#run")
        page.go_back()  # the address holds the tab, so Back goes back to the last one
        wait_for_panel(page, "lesson")  # Back and Enter change the hash: the page follows later
        assert visible_panels(page) == ["lesson"]
        page.focus("#tab-run")  # by keyboard: a tab is a link
        page.keyboard.press("Enter")
        wait_for_panel(page, "run")
        assert visible_panels(page) == ["run"]

        data = run_data(out, name)
        assert page.locator("#step-view .block.new").count() >= 1
        assert data["prompt"] in page.locator("#step-view .sent").inner_text()
        assert page.inner_text("#step-caption") == data["steps"][0]["caption"]
        assert page.evaluate(SCROLLING_BUT_NOT_FOCUSABLE) == [], name
        step_through(page, len(data["calls"]))
        if number + 1 < len(names):
            page.click("a[rel=next]")
    assert seen > 12 * 2
    page = visit.open(f"{ZH}/{names[-1]}.html")
    ready(page)
    lesson_code_uses_the_width(f"{ZH}/{names[-1]}.html")
    assert blocks > 20
    visit.assert_clean()


def step_counter(lang, step, steps):
    """The player's "Step 2 of 5", in the page's language (the build's own table)."""
    return site_builder.STRINGS[lang]["script"]["step_counter"].format(step=step, steps=steps)


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", ZH])
def test_browser_the_player_keeps_the_focus_and_the_address_keeps_the_step(site, visit, lang):
    from playwright.sync_api import expect

    out, names = site
    name, folder = names[-1], site_builder.SUBFOLDER[lang]
    steps = len(run_data(out / folder, name)["calls"])
    page = visit.open(f"{folder}{name}.html#step-{steps - 1}")
    assert visible_panels(page) == ["run"]
    assert page.inner_text("#step-counter") == step_counter(lang, steps - 1, steps)
    page.focus("#step-next")
    page.keyboard.press("Enter")  # to the last step: Next can no longer be used ...
    assert unusable(page, "#step-next")
    assert page.evaluate("document.activeElement.id") == "step-next"  # ... but keeps the focus
    page.keyboard.press("Enter")
    assert page.inner_text("#step-counter") == step_counter(lang, steps, steps)
    assert page.evaluate("location.hash") == f"#step-{steps}"
    page.reload()
    assert page.inner_text("#step-counter") == step_counter(lang, steps, steps)
    page.focus("#step-2")  # a bar of the chart beside the buttons: a button, by keyboard
    page.keyboard.press("Enter")
    assert page.inner_text("#step-counter") == step_counter(lang, 2, steps)
    assert page.get_attribute("#step-2", "aria-current") == "step"
    page.click('.chart a.bar[href="#step-3"]')  # the big chart's bars are links to the steps
    expect(page.locator("#step-counter")).to_have_text(step_counter(lang, 3, steps))

    page.click("#tab-diff")
    page.click("button[data-view=diff-split]")
    assert page.evaluate("location.hash") == "#diff-split"
    page.reload()
    assert visible_panels(page) == ["diff"]
    assert page.get_attribute("button[data-view=diff-split]", "aria-pressed") == "true"
    assert page.locator("#diff-unified").is_hidden()
    visit.assert_clean()


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", ZH])
def test_browser_captions_answers_and_the_plan_show_in_the_player(site, visit, lang):
    """Where the user answers in the terminal (s03's permission, s06's plan), the player shows
    the caption, the question and the answer, and the plan as Markdown."""
    out, names = site
    folder, words = site_builder.SUBFOLDER[lang], site_builder.STRINGS[lang]
    shown = 0
    for name in names:
        data = run_data(out / folder, name)
        for number, step in enumerate(data["steps"], 1):
            if not step["events"]:
                continue
            page = visit.open(f"{folder}{name}.html#step-{number}")
            assert page.inner_text("#step-caption") == step["caption"]
            assert any(words[key].split("{")[0] in step["caption"]
                       for key in ("answered", "chose")), step["caption"]
            events = [event for found in step["events"].values() for event in found]
            blocks = page.locator("#step-view .received .user-event")
            assert blocks.count() == len(events)
            for index, event in enumerate(events):
                text = blocks.nth(index).inner_text()
                assert event["question"].splitlines()[0] in text
                assert text.endswith(f"{words['script']['answered']}{event['answer']}")
            shown += 1
            plans = [block for block in data["calls"][number - 1]["response"]["content"]
                     if block.get("name") == "exit_plan_mode"]
            for block in plans:
                plan = page.locator("#step-view .received .plan")
                items = [line.split(". ", 1)[1] for line in block["input"]["plan"].splitlines()
                         if re.match(r"\d+\. ", line)]
                assert [li.inner_text() for li in plan.locator("ol > li").all()] == [
                    re.sub(r"`([^`]*)`", r"\1", item) for item in items]
                assert "\\n" not in plan.inner_text()
    assert shown >= 2
    visit.assert_clean()


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", ZH])
def test_browser_a_chapter_at_desktop_and_phone_width(site, visit, lang):
    out, names = site
    page = visit.open(f"{site_builder.SUBFOLDER[lang]}{names[-1]}.html#run")
    page.click("#step-next")
    page.set_viewport_size({"width": 390, "height": 844})
    for view in ("run", "code", "diff", "diff-split", "lesson"):
        if view == "diff-split":  # no button on a phone: unified, whatever the address says
            page.evaluate("location.hash = 'diff-split'")
            page.wait_for_function("location.hash === '#diff-split'")
            assert page.locator("#diff-unified").is_visible()
            assert page.locator("#diff-split").is_hidden()
        else:
            page.click(f"#tab-{view}")
            wait_for_panel(page, view)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), (
            f"{view} is wider than a phone"
        )
    visit.assert_clean()


@pytest.mark.browser
def test_browser_without_javascript_every_panel_and_the_whole_run_read_top_to_bottom(
        site, browser, server):
    out, names = site
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{server}{names[-1]}.html#run")
    assert visible_panels(page) == ["lesson", "code", "diff", "run"]
    assert page.locator("#diff-unified").is_visible() and page.locator("#diff-split").is_visible()
    assert page.inner_text("#diff-split") == site_builder.STRINGS["en"]["split_needs_js"]
    assert page.locator("#player").is_hidden()  # it needs JavaScript, and says so
    assert page.locator("noscript").count() == 1
    assert page.locator(".chart svg").is_visible()
    assert run_data(out, names[-1])["prompt"] in page.inner_text("pre.terminal:not(.command)")
    context.close()


@pytest.mark.browser
def test_browser_compare_two_chapters(site, visit):
    out, names = site

    def compare(old, new, word):
        page = visit.open("compare.html")
        page.select_option("#compare-old", old)
        page.select_option("#compare-new", new)
        page.click("#compare-picker button[type=submit]")
        page.wait_for_url(f"**/compare-{old}-vs-{new}.html")
        added = page.locator("#compare-unified ins.added", has_text=word)
        assert added.count() >= 1, f"no added line with {word!r} in {old} → {new}"
        assert added.first.is_visible()
        page.click("button[data-view=compare-split]")
        assert page.locator("#compare-split ins.added", has_text=word).first.is_visible()
        assert page.locator("#compare-unified").is_hidden()
        return page

    compare("s01_loop", "s02_tools", "read_file")
    page = visit.open("compare.html")  # the same chapter twice: a message, no navigation
    page.select_option("#compare-old", "s01_loop")
    page.select_option("#compare-new", "s01_loop")
    page.click("#compare-picker button[type=submit]")
    assert page.locator("#compare-message").inner_text() == "Pick two different chapters."
    if not {"s04_hooks", "s05_todo_write"} <= set(names):
        visit.assert_clean()
        pytest.skip("s04_hooks or s05_todo_write is not written yet: cannot compare them")
    compare("s04_hooks", "s05_todo_write", "todo_write")
    visit.assert_clean()


@pytest.mark.browser
def test_browser_back_shows_the_tab_the_address_names(site, visit):
    """Lesson, Code, Run, a step, then Back twice: the address is the bare page again, and the
    Lesson tab shows (it used to keep the Code tab)."""
    out, names = site
    page = visit.open(f"{names[0]}.html")
    wait_for_panel(page, "lesson")
    page.click("#tab-code")
    wait_for_panel(page, "code")
    page.click("#tab-run")
    wait_for_panel(page, "run")
    page.click("#step-next")
    assert page.url == f"{visit.base}{names[0]}.html#step-2"
    page.go_back()
    wait_for_panel(page, "code")
    page.go_back()
    wait_for_panel(page, "lesson")
    assert page.url == f"{visit.base}{names[0]}.html"
    assert visible_panels(page) == ["lesson"]
    visit.assert_clean()


BOXES = """() => {
  const box = (selector) => document.querySelector(selector).getBoundingClientRect();
  return {header: box("header.site").height, tabs: box(".tabs").bottom,
          tabsHeight: box(".tabs").height, bar: box(".player-bar").top,
          barHeight: box(".player-bar").height, barBottom: box(".player-bar").bottom,
          sent: box("#sent-title").top};
}"""


@pytest.mark.browser
@pytest.mark.parametrize("width,height", [(1280, 800), (390, 844)])
def test_browser_a_step_opened_by_link_lands_below_the_bars(site, visit, width, height):
    """The player's top goes right under the tab bar, its bar under the tabs with no gap (the
    offset is the tab bar's real height), and the step's "Sent" heading under the bar."""
    out, names = site
    visit.page.set_viewport_size({"width": width, "height": height})
    page = visit.open(f"{names[-1]}.html#step-5")
    page.wait_for_load_state("load")
    page.wait_for_function("document.getElementById('step-counter').textContent.includes('5')")
    boxes = page.evaluate(BOXES)
    assert round(boxes["bar"] - boxes["tabs"]) == 1  # the player's border: its top is the tabs'
    assert boxes["sent"] >= boxes["barBottom"]
    page.mouse.move(width * 3 / 4, height / 2)  # over the page (not the sidebar, at 1280)
    page.mouse.wheel(0, 600)  # scrolled on, the bar sticks to the tabs
    page.wait_for_function("document.querySelector('.player-bar').getBoundingClientRect().top"
                           " < document.querySelector('.tabs').getBoundingClientRect().bottom"
                           " + 0.5")
    boxes = page.evaluate(BOXES)
    assert round(boxes["bar"], 2) == round(boxes["tabs"], 2)
    visit.assert_clean()


def each_step(page, steps):
    """Go to each step of a run's page in turn (its location.hash); yield its number once the
    step counter shows it ("Step 3 of 12", "第 3 步，共 12 步")."""
    for step in range(1, steps + 1):
        page.evaluate(f"location.hash = 'step-{step}'")
        page.wait_for_function(f"location.hash === '#step-{step}' && document.getElementById("
                               f"'step-counter').textContent.includes(' {step} ')")
        yield step


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_browser_on_a_phone_the_bars_take_a_quarter_of_the_screen_and_the_header_one_row(
        site, visit, lang):
    out, names = site
    visit.page.set_viewport_size({"width": 390, "height": 844})
    folder = site_builder.SUBFOLDER[lang]
    steps = len(run_data(out, names[-1])["calls"])
    page = visit.open(f"{folder}{names[-1]}.html#step-1")
    tallest = 0
    for _ in each_step(page, steps):
        boxes = page.evaluate(BOXES)
        tallest = max(tallest, boxes["tabsHeight"] + boxes["barHeight"])
    assert tallest <= 844 / 4, tallest
    # the header: the menu, the title, the chapter, search and the language, in one row
    rows = page.evaluate("""() => {
      const parts = [...document.querySelectorAll("header.site > *")]
        .filter((part) => part.checkVisibility()).map((part) => part.getBoundingClientRect());
      return parts.every((one) => parts.every((other) => one.top < other.bottom
                                                       && other.top < one.bottom));
    }""")
    assert rows is True
    assert page.evaluate("document.querySelector('header.site').getBoundingClientRect()"
                         ".height") <= 64
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth") is True
    visit.assert_clean()


@pytest.mark.browser
@pytest.mark.parametrize("lang,words", [("en", "cache_control"), ("zh-CN", "缓存")])
def test_browser_the_search_finds_the_s01_lesson(site, visit, lang, words):
    """Pagefind's index of the lessons and the code: a word of s01's lesson finds it, in
    either language, and the result opens the lesson at its section."""
    out, names = site
    folder = site_builder.SUBFOLDER[lang]
    page = visit.open(f"{folder}search.html?q={words}")
    page.wait_for_selector("#search-results li > a")
    links = page.eval_on_selector_all("#search-results li > a",
                                      "links => links.map((a) => a.getAttribute('href'))")
    wanted = f"/{folder}s01_loop.html#lesson-making-it-hold"
    assert wanted in links, links
    page.click(f'#search-results a[href="{wanted}"]')
    wait_for_panel(page, "lesson")
    assert page.url == f"{visit.base}{folder}s01_loop.html#lesson-making-it-hold"
    visit.assert_clean()


@pytest.mark.browser
def test_browser_copy_copies_the_exact_command_comes_back_and_copies_replay_and_build(
        site, browser, server):
    """The Copy buttons of the home page's first command, of a run's command and of a
    chapter's code copy exactly what they show (one context with the clipboard for both parts:
    a new one costs Chromium about 0.6 s of CPU).

    Issue 42, point 13: Copy never went back from "Copied"; the replay and Build-it-yourself
    commands had no Copy button."""
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    page = context.new_page()
    try:
        page.goto(server + "index.html")
        page.click("#get-started ~ ol .copyable > button.copy >> nth=0")
        assert page.evaluate("navigator.clipboard.readText()") == (
            site_builder.readme_commands(ROOT)[0])
        page.goto(server + "s03_permissions.html#run")
        page.click("#run .copyable > button.copy")
        run = read_scenario(ROOT / "s03_permissions")
        shown = page.text_content("#run pre.command code")
        assert page.evaluate("navigator.clipboard.readText()") == shown.removeprefix("$ ")
        assert shown.removeprefix("$ ").endswith(f"--offline --trace play/s03_permissions"
                                                 f".trace.jsonl '{run['prompt']}'")
        page.goto(server + "s01_loop.html#code")
        page.click("#code .copyable > button.copy")
        assert page.evaluate("navigator.clipboard.readText()") == (
            (ROOT / "s01_loop" / "code.py").read_text(encoding="utf-8").removesuffix("\n"))

        page.clock.install()  # the page's timers run when the test says: no waiting two seconds
        page.goto(server + "s03_permissions.html#run")
        button = page.locator("#run code.command + button.copy")
        replay = page.text_content("#run code.command")
        assert "--script play/s03_permissions.trace.jsonl" in replay
        button.click()
        assert page.evaluate("navigator.clipboard.readText()") == replay
        assert button.inner_text() == "Copied"
        page.clock.run_for(2100)  # "Copied" for two seconds, then Copy again
        assert button.inner_text() == "Copy"
        page.click(".build-it button.copy")
        assert page.evaluate("navigator.clipboard.readText()") == page.text_content(
            ".build-it code.command")
    finally:
        context.close()


LINE_AT = """(number) => {
  const range = document.createRange();
  range.setStartAfter(document.getElementById(`code-L${number}`));
  range.setEndBefore(document.getElementById(`code-L${number + 1}`));
  return [document.getElementById(`code-L${number}`).getBoundingClientRect().top,
          document.querySelector(".tabs").getBoundingClientRect().bottom, range.toString()];
}"""


TARGET_MARK = """(id) => getComputedStyle(document.getElementById(id), "::before")
  .backgroundColor"""


@pytest.mark.browser
def test_browser_a_line_anchor_opens_the_code_tab_at_its_line_marked_and_numbers_are_links(
        site, visit):
    """#code-L620 opens the Code tab with line 620 half a rem under the tab bar; a What
    changed link of the lesson lands on its section's banner.

    Issue 42, point 9: the target line was not marked, and the numbers were no links."""
    out, names = site
    code = (ROOT / "s03_permissions" / "code.py").read_text(encoding="utf-8").splitlines()
    page = visit.open("s03_permissions.html#code-L620")
    wait_for_panel(page, "code")
    top, tabs, text = page.evaluate(LINE_AT, 620)
    assert (round(top - tabs), text) == (8, code[619] + "\n")
    assert page.evaluate(TARGET_MARK, "code-L620") not in ("rgba(0, 0, 0, 0)", "")
    assert page.evaluate(TARGET_MARK, "code-L621") == "rgba(0, 0, 0, 0)"
    box = page.evaluate("""() => {
      const line = document.getElementById("code-L630").getBoundingClientRect();
      const gutter = document.querySelector(".code-view .gutter").getBoundingClientRect();
      return [gutter.left + gutter.width / 2, line.top + 3];
    }""")
    page.mouse.click(*box)
    page.wait_for_function("location.hash === '#code-L630'")
    assert page.evaluate(TARGET_MARK, "code-L630") not in ("rgba(0, 0, 0, 0)", "")
    page.click("#tab-lesson")
    wait_for_panel(page, "lesson")
    # the What changed table is in the folded "Going deeper" part: a click opens it
    assert page.evaluate("document.querySelector('#lesson table a').closest('details.deeper')"
                         ".open") is False
    page.click("details.deeper > summary")
    link = page.locator("#lesson table a").first
    number = int(link.get_attribute("href").rpartition("#code-L")[2])
    section = link.text_content()
    link.click()
    wait_for_panel(page, "code")
    top, tabs, text = page.evaluate(LINE_AT, number)
    assert round(top - tabs) == 8
    assert text.startswith("# ===") and code[number].startswith("# ") and (
        code[number].removeprefix("# ").split("  ")[0] == section)
    visit.assert_clean()


@pytest.mark.browser
def test_browser_no_diagram_of_the_home_cards_is_clipped(site, visit):
    """A card's diagram (the lesson's SVG, or the docstring's text) fits the card at 1280 px."""
    page = visit.open("index.html")
    ready(page)
    page.wait_for_function("[...document.images].every((image) => image.complete)")
    clipped = page.evaluate("""() => [...document.querySelectorAll(
      ".diagram pre, .diagram .diagram-scroll")].map((box) => box.scrollWidth - box.clientWidth)""")
    assert clipped == [0] * len(site[1])
    visit.assert_clean()


DIAGRAMS_SHOWN = """() => [...document.querySelectorAll(".diagram pre, img.diagram-image")]
  .filter((shown) => shown.checkVisibility()).map((shown) => {
    const box = shown.tagName === "PRE" ? shown : shown.parentElement;
    return [shown.tagName === "PRE" ? "" : shown.getAttribute("src").split("/").pop(),
            shown.tagName === "PRE" ? parseFloat(getComputedStyle(shown).fontSize)
                                    : shown.getBoundingClientRect().width,
            box.scrollWidth <= box.clientWidth + 1 || box.tabIndex === 0];
  })"""


def smallest_text(image, width):
    """The px of an SVG diagram's smallest text, drawn `width` px wide (images/s01_loop-...)."""
    name, _, file = image.partition("-")
    svg = (ROOT / name / file).read_text(encoding="utf-8")
    view_box = float(diagrams.VIEW_BOX.search(svg)[1])
    return min(float(size) for size in diagrams.FONT_SIZE.findall(svg)) * width / view_box


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", ZH])
def test_browser_on_a_phone_no_page_is_wider_and_a_diagram_keeps_readable_type_and_scrolls(
        site, visit, lang):
    """Two checks at 390 px, on one load of each page (a load of a chapter page costs Chromium
    about 0.2 s of CPU).

    Issue 42, point 6: at 390 px the type was 5.4-7.5 px; issue 38: no diagram text under
    12 px at 390 px. On the home cards and in every lesson a diagram keeps its type 12 px or
    more (a docstring's text one 11 px), and one wider than its box scrolls, by keyboard too.

    Point 7: the zh-CN s01 What changed table made the page 399 px wide. No lesson (every
    folded part open), nor a page of another kind, is wider than a phone."""
    out, names = site
    phone(visit)
    folder = site_builder.SUBFOLDER[lang]
    diagrams_on = {"index": len(names), **{name: 1 for name in names}}
    for name in ["index", *names, "readme", "compare", "search",
                 f"compare-{names[0]}-vs-{names[-1]}"]:
        page = visit.open(f"{folder}{name}.html")
        ready(page)
        if name in diagrams_on:  # as the page opens, every folded part closed
            page.wait_for_function("[...document.images].every((image) => image.complete)")
            found = page.evaluate(DIAGRAMS_SHOWN)
            assert len(found) == diagrams_on[name], name
            for image, size, scrolls in found:
                readable = smallest_text(image, size) >= 12 if image else size >= 11
                assert (image, readable, scrolls) == (image, True, True), name
            assert page.evaluate("document.documentElement.scrollWidth <= innerWidth") is True
        page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
        # the "toggle" events of the opened parts come in a task of their own: wait for them
        page.evaluate("() => new Promise((done) => requestAnimationFrame(() => setTimeout(done)))")
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth"), name
        assert page.evaluate(SCROLLING_BUT_NOT_FOCUSABLE) == [], name
        assert page.evaluate("""() => [...document.querySelectorAll(".table-scroll")].filter(
          (box) => box.scrollWidth > box.clientWidth + 1 && box.tabIndex !== 0).length""") == 0
    visit.assert_clean()


@pytest.mark.browser
def test_browser_the_language_switch_keeps_the_chapter_the_tab_and_the_step(site, visit):
    """s03's Run tab at step 2, then the switch: the Chinese s03, its Run tab at step 2; and
    back. A Diff layout comes along too, and a compare page switches to its counterpart."""
    out, names = site
    name = "s03_permissions"
    data, chinese = run_data(out, name), run_data(out / ZH, name)
    steps = len(data["calls"])
    page = visit.open(f"{name}.html")
    page.click("#tab-run")
    wait_for_panel(page, "run")
    page.click("#step-next")
    assert page.inner_text("#step-counter") == f"Step 2 of {steps}"
    page.click("a.language-switch")
    page.wait_for_url(f"**/{ZH}/{name}.html#step-2")
    assert page.evaluate("document.documentElement.lang") == ZH
    assert visible_panels(page) == ["run"]
    assert page.inner_text("#step-counter") == f"第 2 步，共 {steps} 步"
    assert page.inner_text("#step-caption") == chinese["steps"][1]["caption"]
    sent = len(data["calls"][1]["request"]["messages"])
    assert page.inner_text("#sent-title") == f"发送：{sent} 条消息"
    assert page.inner_text("#state-title") == "会话状态（从请求中看出）"
    page.click("#tab-diff")
    wait_for_panel(page, "diff")
    page.click("button[data-view=diff-split]")
    page.click("a.language-switch")
    page.wait_for_url(f"**/{name}.html#diff-split")
    assert page.evaluate("document.documentElement.lang") == "en"
    assert visible_panels(page) == ["diff"]
    assert page.get_attribute("button[data-view=diff-split]", "aria-pressed") == "true"
    page = visit.open(f"{ZH}/compare.html")
    page.select_option("#compare-old", "s01_loop")
    page.select_option("#compare-new", "s01_loop")
    page.click("#compare-picker button[type=submit]")
    assert page.locator("#compare-message").inner_text() == "请选两个不同的章。"
    page.select_option("#compare-new", "s02_tools")
    page.click("#compare-picker button[type=submit]")
    page.wait_for_url(f"**/{ZH}/compare-s01_loop-vs-s02_tools.html")
    page.click("a.language-switch")
    page.wait_for_url("**/compare-s01_loop-vs-s02_tools.html")
    assert page.evaluate("location.pathname") == "/compare-s01_loop-vs-s02_tools.html"
    visit.assert_clean()


@pytest.mark.browser
def test_browser_a_chinese_page_from_the_disk_finds_the_shared_files(site, visit):
    """Opened as a file (file://), a Chinese page loads the one copy of the assets."""
    out, _ = site
    page, failed = visit.page, []  # the shared page, blank again: no new context to pay for

    def note(request):
        failed.append(request.url)

    page.on("requestfailed", note)
    try:
        page.goto((out / ZH / "s06_plan_mode.html").as_uri() + "#run")
        assert page.evaluate("document.styleSheets.length") == 2
        assert page.inner_text("#step-counter").startswith("第 1 步")  # site.js ran
        assert failed == []
    finally:
        page.remove_listener("requestfailed", note)


# ---- issue 42: what a visitor hits at 1280 px, on a phone and in dark mode -------------

def phone(visit):
    visit.page.set_viewport_size({"width": 390, "height": 844})


def ready(page):
    page.wait_for_function("document.documentElement.classList.contains('ready')")


@pytest.mark.browser
def test_browser_a_tab_opens_at_its_top(site, visit):
    """Point 2: from the Lesson scrolled to 4,000 px, Code opened at lines 176-218."""
    page = visit.open("s06_plan_mode.html")
    ready(page)
    page.evaluate("window.scrollTo(0, 4000)")
    page.click("#tab-code")
    wait_for_panel(page, "code")
    top = page.evaluate("document.getElementById('code-file').getBoundingClientRect().top")
    tabs = page.evaluate("document.querySelector('.tabs').getBoundingClientRect().bottom")
    assert tabs <= top < 900
    visit.assert_clean()


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", ZH])
def test_browser_the_phone_header_shows_the_chapter_search_and_language_and_a_menu(
        site, visit, lang):
    """Point 3: the chapter list scrolled sideways with no cue; on s06 the chapter, Compare
    and Search were out of view. Now: a menu (the sidebar), the chapter, search, language,
    every target 44 px or more; at 1280 the chapters are a sidebar."""
    out, names = site
    folder = site_builder.SUBFOLDER[lang]
    page = visit.open(f"{folder}{names[-1]}.html")
    ready(page)
    assert page.locator("#site-menu").is_visible()  # the sidebar, at 1280
    assert page.locator(f'#site-menu a[href="{names[-1]}.html"]').get_attribute(
        "aria-current") == "page"
    assert page.locator(".menu-button").is_hidden()
    phone(visit)
    assert page.locator("#site-menu").is_hidden()
    boxes = page.evaluate("""() => [".menu-button", "header.site .here", ".search-link",
        ".language-switch"].map((selector) => {
      const part = document.querySelector(selector), box = part.getBoundingClientRect();
      return [part.textContent.trim(), box.left >= 0 && box.right <= innerWidth,
              box.height >= 44 && box.width >= 44, part.scrollWidth <= part.clientWidth + 1];
    })""")
    words = site_builder.STRINGS[lang]
    other = next(code for code in site_builder.STRINGS if code != lang)
    assert boxes == [[words["menu"], True, True, True], [names[-1][:3], True, True, True],
                     [words["search"], True, True, True],
                     [site_builder.STRINGS[other]["language_name"], True, True, True]]
    page.click(".menu-button")
    assert page.get_attribute(".menu-button", "aria-expanded") == "true"
    heights = page.evaluate("""() => [...document.querySelectorAll("#site-menu a")]
      .map((link) => link.getBoundingClientRect().height >= 44)""")
    assert heights and all(heights)
    page.keyboard.press("Escape")
    assert page.locator("#site-menu").is_hidden()
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth") is True
    visit.assert_clean()


@pytest.mark.browser
@pytest.mark.parametrize("width", [390, 800, 1100])
def test_browser_below_the_width_for_two_columns_a_diff_is_unified(site, visit, width):
    """Point 4: #diff-split on a phone gave 178 px columns with the switch back hidden."""
    visit.page.set_viewport_size({"width": width, "height": 844})
    for address, prefix in (("s06_plan_mode.html#diff-split", "diff"),
                            ("compare-s01_loop-vs-s02_tools.html#compare-split", "compare")):
        page = visit.open(address)
        ready(page)
        assert page.locator(f"#{prefix}-unified").is_visible()
        assert page.locator(f"#{prefix}-split").is_hidden()
    visit.page.set_viewport_size({"width": 1280, "height": 900})  # wide again: as asked
    page.wait_for_function("!document.getElementById('compare-split').hidden")
    visit.assert_clean()


# The diff shown: does it scroll sideways, and its lines as the phone shows them (number and
# sign, the code, the change marks) and as the unified view holds them (the same, from its
# gutter: "old new sign").
DIFF_LINES = """() => {
  const box = [...document.querySelectorAll(".diff-view .scroll")].find((s) => s.checkVisibility());
  const unified = [];
  const rows = box.querySelector(".rows");
  const gutters = [...rows.querySelectorAll("pre.gutter > span")].flatMap(
    (run) => run.textContent.split("\\n").slice(0, -1));
  const codes = [...rows.querySelectorAll("pre.lines > code > *")].flatMap(
    (run) => run.textContent.split("\\n").slice(0, -1));
  codes.forEach((code, k) => {
    const gutter = gutters[k], width = (gutter.length - 3) / 2, sign = gutter.slice(-1).trim();
    const number = sign === "-" ? gutter.slice(0, width) : gutter.slice(width + 1, 2 * width + 1);
    unified.push(gutter ? number.trim() + (sign || " ") + code : code);
  });
  const shown = [...box.querySelectorAll(".wrapped > code > div")].filter((line) =>
    line.checkVisibility()).map((line) => line.textContent);
  const marks = (selector) => box.querySelectorAll(selector).length;
  return {sideways: box.scrollWidth - box.clientWidth, shown, unified,
          marks: [marks(".wrapped .change"), marks(".rows .change")],
          rows_shown: rows.checkVisibility()};
}"""


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", ZH])
def test_browser_on_a_phone_a_diff_wraps_its_lines_and_shows_them_all(site, visit, lang):
    """Point 8: at 390 px a diff showed 26, then 36, columns, and about half of s11's lines
    were cut at the edge. On a phone the unified diff is shown line by line, wrapped: nothing
    scrolls sideways, and every line is there with its number, sign and change marks; at
    1280 px the unified view is as it was."""
    folder = site_builder.SUBFOLDER[lang]
    visit.page.set_viewport_size({"width": 390, "height": 844})
    for address in ("s11_mcp.html#diff", "s09_memory.html#diff",
                    "compare-s01_loop-vs-s11_mcp.html"):
        page = visit.open(folder + address)
        ready(page)
        found = page.evaluate(DIFF_LINES)
        assert found["sideways"] <= 1, address
        assert (found["shown"], found["rows_shown"]) == (found["unified"], False), address
        assert found["marks"][0] == found["marks"][1] > 0, address
        assert len(found["shown"]) > 300, address
    visit.page.set_viewport_size({"width": 1280, "height": 900})
    found = page.evaluate(DIFF_LINES)
    assert (found["shown"], found["rows_shown"]) == ([], True)
    visit.assert_clean()


@pytest.mark.browser
def test_browser_in_dark_mode_a_command_block_has_an_edge(site, visit):
    """Point 5: command blocks (#15191e) on the dark page (#14181d) had no visible edge."""
    visit.page.emulate_media(color_scheme="dark")
    try:
        page = visit.open("index.html")
        edge = page.evaluate("""() => {
          const style = getComputedStyle(document.querySelector("pre.terminal.command"));
          return [style.borderTopWidth, style.borderTopColor !== style.backgroundColor,
                  style.borderTopColor !== getComputedStyle(document.body).backgroundColor];
        }""")
        assert edge == ["1px", True, True]
    finally:
        visit.page.emulate_media(color_scheme="light")
    visit.assert_clean()


@pytest.mark.browser
def test_browser_what_takes_the_focus_is_not_under_the_bars(site, visit):
    """Point 8: Shift+Tab put a Copy button under the tab bar, and s06's System prompt summary
    under the player's bar."""
    page = visit.open("s06_plan_mode.html")
    ready(page)
    # the element after the third Copy button, with the button just under the tab bar
    page.evaluate("""() => {
      const button = document.querySelectorAll("#lesson .copyable > .copy")[2];
      window.scrollBy(0, button.getBoundingClientRect().top - 10);
      const after = [...document.querySelectorAll(
          "#lesson a, #lesson button, #lesson [tabindex='0']")]
        .find((element) => button.compareDocumentPosition(element) & 4);
      after.focus({ preventScroll: true });
    }""")
    page.keyboard.press("Shift+Tab")
    page.wait_for_function("document.activeElement.classList.contains('copy')")
    page.wait_for_function("""document.activeElement.getBoundingClientRect().top >=
      document.querySelector('.tabs').getBoundingClientRect().bottom""")
    page.evaluate("location.hash = 'step-3'")
    page.wait_for_function("document.querySelector('#step-view summary')")
    page.evaluate("""() => {
      const summary = [...document.querySelectorAll("#step-view dl.state summary")].pop();
      window.scrollBy(0, summary.getBoundingClientRect().top - 60);
      summary.focus();
    }""")
    page.wait_for_function("""document.activeElement.getBoundingClientRect().top >=
      document.querySelector('.player-bar').getBoundingClientRect().bottom""")
    visit.assert_clean()


@pytest.mark.browser
def test_browser_a_search_hit_in_code_lands_on_its_line_with_its_lines_shown(site, visit):
    """Point 10: code hits for cache_control went to the top of the file, lines run together."""
    page = visit.open("search.html?q=cache_control")
    page.wait_for_selector("#search-results pre.hit-lines")
    links = page.eval_on_selector_all("#search-results li > a",
                                      "links => links.map((a) => a.getAttribute('href'))")
    lines = [link for link in links if "#code-L" in link]
    assert lines and not any(link.endswith("#code-file") for link in links)
    name, number = re.fullmatch(r"/(s\d\d_\w+)\.html#code-L(\d+)", lines[0]).groups()
    source = (ROOT / name / "code.py").read_text(encoding="utf-8").splitlines()
    assert "cache_control" in source[int(number) - 1]
    shown = page.locator("#search-results pre.hit-lines").first.inner_text()
    assert shown == "\n".join(source[int(number) - 2:int(number) + 1])
    page.click(f'#search-results a[href="{lines[0]}"]')
    wait_for_panel(page, "code")
    top, tabs, text = page.evaluate(LINE_AT, int(number))
    assert (round(top - tabs), text) == (8, source[int(number) - 1] + "\n")
    visit.assert_clean()


@pytest.mark.browser
def test_browser_the_chinese_search_marks_the_whole_word(site, visit):
    """Point 10: in zh only "cache" of cache_control was marked."""
    page = visit.open(f"{ZH}/search.html?q=cache_control")
    page.wait_for_selector("#search-results mark")
    marks = page.eval_on_selector_all("#search-results mark", "m => m.map((x) => x.textContent)")
    assert marks and set(marks) == {"cache_control"}
    visit.assert_clean()


@pytest.mark.browser
def test_browser_a_search_in_the_other_language_points_there_and_the_switch_keeps_it(
        site, visit):
    """Point 10: 计划模式 on the English page found nothing and pointed nowhere; the
    language switch dropped ?q=."""
    page = visit.open("search.html?q=计划模式")
    page.wait_for_selector("#search-results a")
    link = page.locator("#search-results a")
    assert unquote(link.get_attribute("href")) == f"{visit.base}{ZH}/search.html?q=计划模式"
    link.click()
    page.wait_for_selector("#search-results li > a[href*='s06_plan_mode']")
    page.click("a.language-switch")
    page.wait_for_url("**/search.html?q=*")
    assert page.evaluate("location.pathname + decodeURIComponent(location.search)") == (
        "/search.html?q=计划模式")
    visit.assert_clean()


@pytest.mark.browser
def test_browser_side_by_side_at_1280_the_columns_scroll_together(site, visit):
    """Point 11: columns of 570 px for 850 px of code scrolled apart, by a scrollbar at the
    bottom of a box 10,000-32,000 px tall."""
    page = visit.open("s06_plan_mode.html#diff-split")
    ready(page)
    page.wait_for_function("!document.querySelector('.split-scrollbar').hidden")
    page.evaluate("document.querySelector('#diff-split .split').scrollIntoView()")
    page.evaluate("window.scrollBy(0, 3000)")
    bar = page.evaluate("""() => { const box = document.querySelector('.split-scrollbar')
      .getBoundingClientRect(); return [box.bottom <= innerHeight + 0.5, box.height > 0]; }""")
    assert bar == [True, True]
    page.evaluate("document.querySelector('.split-scrollbar').scrollLeft = 120")
    page.wait_for_function("""[...document.querySelectorAll('#diff-split .split > .scroll')]
      .every((column) => column.scrollLeft === 120)""")
    page.evaluate("document.querySelector('#diff-split .split > .scroll').scrollLeft = 40")
    page.wait_for_function("""[...document.querySelectorAll('#diff-split .split > .scroll')]
      .map((column) => column.scrollLeft).join() === '40,40'""")
    visit.assert_clean()


SPLIT_COLUMNS = """() => [...document.querySelectorAll('#compare-split .split > .scroll')]
  .map((column) => { const lines = [];
    const gutters = column.querySelectorAll('.gutter > span');
    column.querySelectorAll('.lines > code > *').forEach((run, k) => {
      const numbers = gutters[k].textContent.split('\\n');
      run.textContent.split('\\n').slice(0, -1).forEach((text, n) =>
        lines.push([run.tagName.toLowerCase(), run.className, numbers[n], text])); });
    return lines; })"""


@pytest.mark.browser
def test_browser_side_by_side_is_built_from_the_unified_view_line_beside_line(site, visit):
    """Issue 57: the page sends the diff once, unified; site.js builds the side-by-side view
    from it: each hunk's removed lines left and added lines right, paired in order."""
    old, new = "s01_loop", "s11_mcp"
    page = visit.open(f"compare-{old}-vs-{new}.html#compare-split")
    ready(page)
    old_lines = (ROOT / old / "code.py").read_text(encoding="utf-8").splitlines()
    new_lines = (ROOT / new / "code.py").read_text(encoding="utf-8").splitlines()
    width = len(str(max(len(old_lines), len(new_lines))))
    left, right = [], []
    tags = {"removed": "del", "added": "ins"}
    for group in changes.line_matcher("\n".join(old_lines), "\n".join(new_lines)) \
            .get_grouped_opcodes(3):
        (_, i1, i2, j1, j2), (*_, i3, _, j3) = group[0], group[-1]
        header = f"@@ -{i1 + 1},{i3 - i1} +{j1 + 1},{j3 - j1} @@"
        for column in (left, right):
            column.append(["span", "hunk", "", header])
        for tag, i1, i2, j1, j2 in group:
            for column, indices, lines, kind, sign in ((left, range(i1, i2), old_lines,
                                                        "removed", "-"),
                                                       (right, range(j1, j2), new_lines,
                                                        "added", "+")):
                for index in indices:
                    column.append(["span", "context", f"{index + 1:>{width}}  ", lines[index]]
                                  if tag == "equal" else
                                  [tags[kind], kind, f"{index + 1:>{width}} {sign}",
                                   lines[index]])
                for _ in range(len(indices), max(i2 - i1, j2 - j1)):
                    column.append(["span", "empty", "", ""])
    shown = page.evaluate(SPLIT_COLUMNS)
    for column in shown:  # a hunk's header ends with its section's title, which it may have
        for line in column:
            if line[1] == "hunk":
                line[3] = line[3].split(" @@")[0] + " @@"
    assert shown == [left, right]
    visit.assert_clean()


@pytest.mark.browser
def test_browser_the_phone_caption_says_when_there_is_more(site, visit):
    """Point 12: the phone caption showed 59 px of 131 with no sign that more was hidden."""
    out, _ = site
    phone(visit)
    name = "s06_plan_mode"  # a run with long captions (its plan), so some are cut on a phone
    steps = len(run_data(out, name)["calls"])
    page = visit.open(f"{name}.html#step-1")
    seen = 0
    for _ in each_step(page, steps):
        cut = page.evaluate("(c => c.scrollHeight > c.clientHeight + 1)"
                            "(document.getElementById('step-caption'))")
        assert page.locator(".caption-more").is_visible() is cut
        if cut:
            seen += 1
            page.click(".caption-more")
            assert page.evaluate("(c => c.scrollHeight <= c.clientHeight + 1)"
                                 "(document.getElementById('step-caption'))") is True
            assert page.get_attribute(".caption-more", "aria-expanded") == "true"
    assert seen >= 1
    visit.assert_clean()


@pytest.mark.browser
def test_browser_the_current_page_is_no_filled_box(site, visit):
    """Point 13: the current-page link looked like a text selection."""
    page = visit.open("s03_permissions.html")
    ready(page)
    for selector in ("#site-menu a[aria-current]",):
        style = page.evaluate(f"""() => {{ const s = getComputedStyle(
          document.querySelector("{selector}")); return [s.backgroundColor,
          s.borderLeftWidth, s.fontWeight]; }}""")
        assert style == ["rgba(0, 0, 0, 0)", "3px", "700"]
    visit.assert_clean()


@pytest.mark.browser
def test_browser_an_option_stays_with_its_value(site, visit):
    """Point 13: `pytest -n` / `2` broke across lines."""
    for width in (390, 520, 700):
        visit.page.set_viewport_size({"width": width, "height": 844})
        page = visit.open("readme.html")
        found = page.evaluate("""() => [...document.querySelectorAll("code .nowrap")]
          .filter((part) => part.textContent === "-n 2")
          .map((part) => part.getClientRects().length)""")
        assert found and set(found) == {1}, width
    visit.assert_clean()


@pytest.mark.browser
def test_browser_search_from_the_header_with_a_shortcut(site, visit):
    page = visit.open("s02_tools.html")
    ready(page)
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "header-search"
    page.keyboard.type("cache_control")
    page.keyboard.press("Enter")
    page.wait_for_url("**/search.html?q=cache_control")
    page.wait_for_selector("#search-results li > a")
    phone(visit)
    page = visit.open(f"{ZH}/s02_tools.html")
    ready(page)
    page.keyboard.press("/")  # on a phone the header has a link: the search page
    page.wait_for_url(f"**/{ZH}/search.html")
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "search-input"
    visit.assert_clean()


@pytest.mark.browser
@pytest.mark.parametrize("section", ["run-it", "why-both-places"])
def test_browser_the_contents_mark_where_you_are(site, visit, section):
    """A link to a section marks it in both contents lists: s06's "Run it", a short section
    (the next heading is high on the screen too), and "Why both places", in the folded part."""
    page = visit.open(f"s06_plan_mode.html#lesson-{section}")
    ready(page)
    page.wait_for_function(f"""document.querySelector('.side-toc a[href="#lesson-{section}"]')
      .getAttribute('aria-current') === 'location'""")
    assert page.eval_on_selector_all(".side-toc a[aria-current], .toc a[aria-current]",
                                     "links => links.map((a) => a.hash)") == [
        f"#lesson-{section}", f"#lesson-{section}"]
    visit.assert_clean()


DEEPER_LESSON = """# s09_small: a small lesson

## The problem

A core to read in five minutes.

![The loop, and where the check goes](diagram.svg)

## Going deeper

### One detail

Folded until opened.

## Another section

More, after the core.
"""

DIAGRAM = ('<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-labelledby="t d" '
           'viewBox="0 0 10 10"><title id="t">The loop</title><desc id="d">A box.</desc>'
           '<rect width="10" height="10" fill="#fff"/></svg>\n')


def small_lesson(tmp_path):
    """A chapter s09_small with DEEPER_LESSON and diagram.svg, its lesson rendered as the site
    renders one: (its folder, the lesson's HTML, its images)."""
    folder = tmp_path / "s09_small"
    folder.mkdir()
    (folder / "diagram.svg").write_text(DIAGRAM, encoding="utf-8")
    chapter = site_builder.Chapter(name="s09_small", folder=folder, code='"""s09: x."""\n',
                                   lesson=DEEPER_LESSON)
    return folder, *site_builder.render_lesson(chapter, ["s09_small"])


def test_a_lesson_shows_its_core_then_going_deeper_folded_with_its_diagram(tmp_path):
    folder, body, images = small_lesson(tmp_path)
    assert images == [(folder / "diagram.svg", "s09_small-diagram.svg")]
    assert ('<img class="diagram-image" src="images/s09_small-diagram.svg" '
            'alt="The loop, and where the check goes">') in body
    core, _, deeper = body.partition('<details class="deeper" id="lesson-going-deeper-part">')
    assert '<h2 id="lesson-the-problem">' in core and "diagram-image" in core
    assert deeper.startswith('<summary><h2 id="lesson-going-deeper">Going deeper</h2></summary>')
    assert '<h3 id="lesson-one-detail">' in deeper and '<h2 id="lesson-another-section">' in deeper
    assert body.endswith("</details>\n")


def test_a_home_card_shows_the_lessons_svg_diagram_in_its_language(tmp_path):
    """A chapter with the new lesson shape has diagram.svg (and diagram.zh-CN.svg): its card
    shows it, in the page's language, with the SVG's own title as its text; without one, the
    card draws the docstring's diagram (None here)."""
    from sitebuild import pages

    folder = tmp_path / "s09_small"
    folder.mkdir()
    chapter = site_builder.Chapter(name="s09_small", folder=folder, code='"""s09: x."""\n')
    assert pages.svg_card(chapter, "en") is None
    (folder / "diagram.svg").write_text(DIAGRAM, encoding="utf-8")
    assert pages.svg_card(chapter, ZH) == {"src": "../images/s09_small-diagram.svg",
                                           "file": "diagram.svg", "alt": "The loop",
                                           "width": None}
    (folder / "diagram.zh-CN.svg").write_text(DIAGRAM.replace("The loop", "循环"),
                                              encoding="utf-8")
    assert pages.svg_card(chapter, ZH) == {"src": "../images/s09_small-diagram.zh-CN.svg",
                                           "file": "diagram.zh-CN.svg", "alt": "循环",
                                           "width": None}
    assert pages.svg_card(chapter, "en")["alt"] == "The loop"


@pytest.mark.browser
def test_browser_a_link_into_going_deeper_opens_it(site, visit, tmp_path):
    """A lesson with the new shape, on a page built from the site's own template and assets:
    the folded part opens for a link to a heading inside it, and the diagram shows."""
    out, names = site
    folder, body, images = small_lesson(tmp_path)
    page_html = (out / f"{names[0]}.html").read_text(encoding="utf-8")
    page_html = re.sub(r'(<section class="panel lesson" id="lesson"[^>]*>).*?(</section>)',
                       lambda found: found[1] + body + found[2], page_html, count=1, flags=re.S)
    site_dir = out / "deeper-test"
    site_dir.mkdir(exist_ok=True)
    (site_dir / "page.html").write_text(page_html.replace('href="assets/', 'href="../assets/')
                                        .replace('src="assets/', 'src="../assets/')
                                        .replace('src="images/', 'src="../images/'),
                                        encoding="utf-8")
    shutil.copyfile(folder / "diagram.svg", out / "images" / "s09_small-diagram.svg")
    try:
        page = visit.open("deeper-test/page.html")
        ready(page)
        assert page.locator("details.deeper").get_attribute("open") is None
        assert page.locator("#lesson-one-detail").is_hidden()
        assert page.evaluate("document.querySelector('img.diagram-image').naturalWidth") > 0
        page.evaluate("location.hash = 'lesson-one-detail'")
        page.wait_for_function("document.querySelector('details.deeper').open")
        assert page.locator("#lesson-one-detail").is_visible()
    finally:
        shutil.rmtree(site_dir)
        (out / "images" / "s09_small-diagram.svg").unlink()
    visit.assert_clean()


# ---- issue 57: the new chapters' runs, diagrams in the dark and on a phone --------------

def go_to_step(page, step):
    page.evaluate(f"location.hash = 'step-{step}'")
    page.wait_for_function(f"location.hash === '#step-{step}' && document.getElementById("
                           f"'step-counter').textContent.includes('{step}')")


def opening(lang, key):
    """The words a caption part starts with, before its first blank, as the page shows them."""
    words = site_builder.STRINGS[lang][key].split("{")[0].strip()
    return words[:1].upper() + words[1:] if lang == "en" else words


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", ZH])
def test_browser_a_subagents_steps_and_a_compaction_are_told_as_what_they_are(
        site, visit, lang):
    """Point 1: s07's subagent steps read "The user's words added to this turn", s08's summary
    request and new history too, the clearing was never told, and the model's summary carried
    a "reminder" badge. Each kind of step has its own words now, at its step, and what is new
    in a step is against the step before in its own conversation."""
    out, names = site
    folder = site_builder.SUBFOLDER[lang]
    told = {}
    for name in ("s07_subagents", "s08_compact"):
        if name not in names:
            continue
        data = run_data(out / folder, name)
        page = visit.open(f"{folder}{name}.html#step-1")
        ready(page)
        previous = None
        for number, (call, step) in enumerate(zip(data["calls"], data["steps"], strict=True), 1):
            messages = call["request"]["messages"]
            results = {block.get("tool_use_id"): block.get("content") for message in messages
                       for block in (message["content"] if isinstance(message["content"], list)
                                     else []) if block.get("type") == "tool_result"}
            cleared = previous is not None and any(
                key in previous and len(json.dumps(value)) < len(json.dumps(previous[key]))
                for key, value in results.items())
            previous = None if call.get("compaction") else results
            if not (call.get("agent") or call.get("compaction") or cleared
                    or number > 1 and data["calls"][number - 2].get("compaction")
                    or number > 1 and data["calls"][number - 2].get("agent")):
                continue
            go_to_step(page, number)
            caption = page.inner_text("#step-caption")
            assert caption == step["caption"]
            if call.get("agent"):
                key = "subagent_starts" if step["previous"] is None else "subagent_call"
                assert caption.startswith(opening(lang, key)), caption
                told["agent"] = True
            elif call.get("compaction"):
                assert caption.startswith(opening(lang, "summary_asked")), caption
                # the model's summary is no reminder, whatever it starts with
                assert page.locator("#step-view .received .tag.reminder").count() == 0
                told["summary"] = True
            elif data["calls"][number - 2].get("compaction"):
                assert caption.startswith(opening(lang, "new_history")), caption
                told["new history"] = True
            elif data["calls"][number - 2].get("agent"):  # the subagent's answer comes back
                assert caption.startswith(opening(lang, "subagent_back")), caption
                # the main agent's prompt was sent before: it folds away (it is no subagent's)
                assert page.locator("#step-view .sent details.earlier").count() == 1
                told["back"] = True
            if cleared:
                assert opening(lang, "results_cleared_one" if lang == "en" else
                               "results_cleared").lower()[2:] in caption.lower(), caption
                told["cleared"] = True
    assert told == {key: True for key in ("agent", "back", "cleared", "summary",
                                          "new history")}
    visit.assert_clean()


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", ZH])
def test_browser_a_call_the_user_denied_is_told_as_denied(site, visit, lang):
    """s09's step after the user's n at the AGENTS.md question read "the write_file call
    returned an error": a call the user said no to is told as the user's no, at its step."""
    out, names = site
    folder = site_builder.SUBFOLDER[lang]
    told = []
    for name in names:
        data = run_data(out / folder, name)
        for number, call in enumerate(data["calls"], 1):
            last = call["request"]["messages"][-1]["content"]
            denied = [block for block in (last if isinstance(last, list) else [])
                      if block.get("is_error") and site_builder.result_text(block.get("content"))
                      .startswith(site_builder.USER_DENIED)]
            if not denied:
                continue
            page = visit.open(f"{folder}{name}.html#step-{number}")
            ready(page)
            caption = page.inner_text("#step-caption")
            assert caption.startswith(opening(lang, "denied")), caption
            error = site_builder.STRINGS[lang]["error"].split("}")[1].split("{")[0].strip()
            assert error not in caption, caption  # ("call returned an error:")
            told.append(name)
    assert "s09_memory" in told
    visit.assert_clean()


LUMINANCE = r"""(colour) => {
  const [r, g, b] = colour.match(/[\d.]+/g).slice(0, 3).map(Number).map((c) => c / 255)
    .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}"""
# Every diagram box a phone shows that is wider than its box: does it show that it scrolls?
SCROLL_SIGNS = """() => [...document.querySelectorAll(".diagram-scroll, .diagram pre")]
  .filter((box) => box.checkVisibility() && box.scrollWidth > box.clientWidth + 1)
  .map((box) => [box.dataset.more || "", getComputedStyle(box).maskImage !== "none"])"""


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", ZH])
def test_browser_diagrams_follow_dark_mode_a_sans_serif_stack_and_show_that_they_scroll(
        site, visit, lang):
    """Points 3, 4 and 10: in dark mode every diagram was a bright white box; on a phone 4 of 8
    home diagrams and s04's lesson diagram were cut off with no sign that they scroll; the
    diagrams named one font, so a visitor without it got serif text."""
    out, names = site
    folder = site_builder.SUBFOLDER[lang]
    phone(visit)
    visit.page.emulate_media(color_scheme="dark")
    try:
        page = visit.open(f"{folder}index.html")
        ready(page)
        page.wait_for_function("[...document.images].every((image) => image.complete)")
        images = page.eval_on_selector_all("img.diagram-image", "all => all.map((i) => i.src)")
        signs = page.evaluate(SCROLL_SIGNS)
        assert signs and signs == [["right", True]] * len(signs)
        page.evaluate("document.querySelector('.diagram-scroll[data-more]').scrollLeft = 9999")
        page.wait_for_function("document.querySelector('.diagram-scroll[data-more]')"
                               ".dataset.more === 'left'")
        assert len(images) == len(names)
        for image in images:
            page.goto(image)
            drawn = page.evaluate(f"""() => {{
              const luminance = {LUMINANCE};
              const fill = (element) => getComputedStyle(element).fill;
              const texts = [...document.querySelectorAll("text")];
              return [luminance(fill(document.querySelector("g.graph > polygon"))) < 0.05,
                      texts.every((text) => luminance(fill(text)) > 0.6),
                      [...new Set(texts.map((text) => getComputedStyle(text).fontFamily
                                                      .split(",").pop().trim()))]];
            }}""")
            assert drawn == [True, True, ["sans-serif"]], image
    finally:
        visit.page.emulate_media(color_scheme="light")
    visit.assert_clean()


# The options (--offline, -u) of the inline code and command blocks shown that a line breaks
# inside: [text, lines it takes].
BROKEN_OPTIONS = r"""() => {
  const broken = [];
  const boxes = [...document.querySelectorAll(":not(pre) > code, pre.command, .hl.command pre")]
    .filter((box) => box.checkVisibility());
  for (const box of boxes) {
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const found of node.data.matchAll(/(?<![\w./-])--?[A-Za-z][\w-]*/g)) {
        const range = document.createRange();
        range.setStart(node, found.index);
        range.setEnd(node, found.index + found[0].length);
        const tops = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
        if (tops.size > 1) broken.push([found[0], tops.size]);
      }
    }
  }
  return broken;
}"""


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", ZH])
def test_browser_on_a_phone_the_first_screen_shows_the_lesson_and_the_player_whole_options(
        site, visit, lang):
    """Points 2, 5, 6 and 7 at 390x844: s08's first paragraph started at y=849; --offline
    wrapped as "--" / "offline" and diff -u as "diff -" / "u"; a run caption of three lines lost
    its underscores (max-height 4.2em, where three lines take 4.65em); the step player started
    at the bottom of the first screen."""
    out, names = site
    folder = site_builder.SUBFOLDER[lang]
    phone(visit)
    page = visit.open(f"{folder}index.html")
    ready(page)
    assert page.evaluate(BROKEN_OPTIONS) == []
    page = visit.open(f"{folder}{names[-1]}.html")
    ready(page)
    first = page.evaluate("""() => [...document.querySelectorAll("#lesson p")].find(
      (p) => p.checkVisibility() && !p.closest("nav")).getBoundingClientRect().top""")
    assert first < 844 - 3 * 24, first  # three lines of it, at least
    assert page.evaluate(BROKEN_OPTIONS) == []
    page = visit.open(f"{folder}{names[-1]}.html#run")
    ready(page)
    assert page.evaluate("document.getElementById('player').getBoundingClientRect().top") < 844 / 2
    assert page.evaluate(BROKEN_OPTIONS) == []
    room = page.evaluate("""() => { const style = getComputedStyle(
      document.getElementById("step-caption"));
      return parseFloat(style.maxHeight) / parseFloat(style.lineHeight); }""")
    assert room > 2.99, room  # (3lh, computed in px: 2.998...)
    # point 8: a diff marks the change within a line changed (--plus-strong was unused)
    page.click("#tab-diff")
    wait_for_panel(page, "diff")
    marked = page.evaluate("""() => {
      const strong = getComputedStyle(document.documentElement).getPropertyValue("--plus-strong");
      const probe = document.createElement("i");
      probe.style.background = strong;
      document.body.append(probe);
      const colour = getComputedStyle(probe).backgroundColor;
      probe.remove();
      const changes = [...document.querySelectorAll("#diff-unified ins .change")].filter(
        (change) => change.checkVisibility());  // (on a phone, the wrapped view's)
      return [changes.length > 0, changes.every(
        (change) => getComputedStyle(change).backgroundColor === colour)];
    }""")
    assert marked == [True, True]
    visit.assert_clean()


@pytest.mark.browser
@pytest.mark.parametrize("lang", ["en", ZH])
def test_browser_the_home_cards_in_a_grid_titled_and_a_chapter_opens_with_what_is_new(
        site, visit, lang):
    """Points 9 and 10: at 1280 px the chapter list was 5,468 px tall, one card a row; a card
    was titled with its folder's name ("hooks") and showed its diagram's file path; what is
    new was only in the Diff tab. Now two cards a row, each titled as its chapter, and a chapter
    opens with one line of what is new, from the change summary, above its picture."""
    out, names = site
    folder = site_builder.SUBFOLDER[lang]
    page = visit.open(f"{folder}index.html")
    ready(page)
    cards = page.evaluate(r"""() => {
      const cards = [...document.querySelectorAll("li.card")];
      return [document.querySelector("ol.cards").getBoundingClientRect().height,
              new Set(cards.map((card) => Math.round(card.getBoundingClientRect().top))).size,
              cards.map((card) => card.querySelector("h3").innerText),
              cards.filter((card) => /diagram[\w.-]*\.svg/.test(card.innerText)).length];
    }""")
    titles = []
    for name in names:
        summary = site_builder.Chapter(
            name=name, folder=ROOT / name, code=(ROOT / name / "code.py").read_text("utf-8"),
            lesson_zh=(ROOT / name / "README.zh-CN.md").read_text("utf-8"),
        ).summary_in(lang).rstrip(".。")
        titles.append(f"{name[:3]} " + (summary[:1].upper() + summary[1:] if lang == "en"
                                        else summary))
    assert cards == [cards[0], (len(names) + 1) // 2, titles, 0]
    # 5,468 px for 8 chapters, 684 px a chapter: now under a little more than half that
    assert cards[0] / len(names) < 5468 / 8 * 0.55, cards[0]
    name = "s04_hooks" if "s04_hooks" in names else names[-1]
    page = visit.open(f"{folder}{name}.html")
    ready(page)
    opening = page.evaluate("""() => {
      const line = document.querySelector("#lesson > p.opening");
      const picture = document.querySelector("#lesson img.diagram-image");
      return [line.innerText, line.getBoundingClientRect().bottom
                              <= picture.getBoundingClientRect().top];
    }""")
    found = changes.what_changed(name)
    assert opening[1] is True
    assert opening[0].startswith(site_builder.STRINGS[lang]["opening"].split("{")[0])
    assert f"+{found.added:,} −{found.removed:,}" in opening[0]
    visit.assert_clean()


# ---- accessibility: axe-core on the largest page of each kind ------------------------
# Every page, light and dark, every step: `python web/check_pages.py` (run by .ci/run).

def suite_views(out):
    """The largest page of each kind, in each of its views; a chapter's Diff tab is the diff
    template, checked on the largest compare page."""
    for name in page_checker.largest_pages(out):
        for view in page_checker.views(out, name, every_step=False):
            if not view.startswith("#diff"):
                yield name, view


@pytest.fixture(scope="module")
def checker(browser, shared_page):
    """The Checker, its light page the shared one (1280 by 900, light, as the Checker makes
    its own): a new context costs Chromium about 0.6 s of CPU."""
    checker = page_checker.Checker(browser)
    shared_page.set_viewport_size({"width": 1280, "height": 900})
    shared_page.emulate_media(color_scheme="light")
    checker.pages["light"] = shared_page
    yield checker
    del checker.pages["light"]  # the shared page's context is the shared_page fixture's to close
    checker.close()


@pytest.mark.browser
def test_axe_finds_nothing_serious_on_the_largest_page_of_each_kind(site, checker):
    out, _ = site
    results = [checker.check(out, name, view, sampled=True) for name, view in suite_views(out)]
    print("\n" + "\n".join(result.line() for result in results))
    assert {page_checker.kind_of(result.page) for result in results} == set(page_checker.KINDS)
    assert [f"{r.page}{r.view}: {r.blocking}" for r in results if r.blocking] == []


@pytest.mark.browser
def test_axe_finds_nothing_serious_on_the_largest_chinese_chapter_and_the_chinese_home(
        site, checker):
    out, _ = site
    largest = page_checker.largest_pages(out, ZH)
    assert [page_checker.kind_of(name) for name in largest[:2]] == ["home", "chapter"]
    assert all(name.startswith(f"{ZH}/") for name in largest)
    # The Chinese chapter's code, diff and run views are the English ones with the words of
    # STRINGS around them, which its lesson view shows too (web/check_pages.py checks them all).
    results = [checker.check(out, name, view, sampled=True) for name in largest[:2]
               for view in page_checker.views(out, name, every_step=False)
               if view in ("", "#lesson")]
    print("\n" + "\n".join(result.line() for result in results))
    assert [f"{r.page}{r.view}: {r.blocking}" for r in results if r.blocking] == []


@pytest.mark.browser
def test_the_sampled_check_still_finds_poor_contrast_and_a_missing_alt(checker, tmp_path):
    """Sampling narrows what the contrast rule looks at; it must not blind it, or the rest."""
    (tmp_path / "bad.html").write_text(
        '<!doctype html><html lang="en"><head><title>t</title></head><body><main><h1>t</h1>'
        '<p>readable</p><p style="color: #ccc">faint</p><p style="color: #ccc">faint too</p>'
        '<img src="x.png"></main></body></html>', encoding="utf-8")
    result = checker.check(tmp_path, "bad.html", sampled=True)
    assert [(v[0], v[1], v[2]) for v in result.violations] == [
        ("color-contrast", "serious", 1), ("image-alt", "critical", 1)]


@pytest.mark.browser
def test_a_block_checked_in_one_view_is_left_out_of_the_next_and_nothing_else(checker, tmp_path):
    """Issue 57, the page check in 15 minutes: a block (a code view, a message of the player)
    that a view checked is left out of the views after it that show it as it was (a Chinese
    page's code, a message shown again at the next step); a changed block, or the same one in
    other boxes, is checked, and the rest of a view is always checked."""
    faint = '<div class="hl"><pre style="color: #ccc">faint {}</pre></div>'
    page = ('<!doctype html><html lang="en"><head><title>t</title></head><body><main><h1>t</h1>'
            '{}</main></body></html>')
    pages = {"a.html": faint.format(1), "b.html": faint.format(1) + '<img src="x.png">',
             "c.html": faint.format(2), "d.html": f"<section>{faint.format(1)}</section>"}
    for name, body in pages.items():
        (tmp_path / name).write_text(page.format(body), encoding="utf-8")
    seen = set()
    found = [checker.check(tmp_path, name, seen=seen) for name in pages]
    assert [([v[:3] for v in result.violations], result.left_out) for result in found] == [
        ([("color-contrast", "serious", 1)], 0),
        ([("image-alt", "critical", 1)], 1),
        ([("color-contrast", "serious", 1)], 0),
        ([("color-contrast", "serious", 1)], 0),
    ]
    assert len(seen) == 3


SKILL_CALLS = [  # s10: AGENTS.md, the prompt, then the catalog; a skill loaded, then the answer
    {"request": {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "The harness read these AGENTS.md files before ..."},
        {"type": "text", "text": "Go."},
        {"type": "text", "text": "<skills>\n- changelog: Record a change.\n</skills>"}]}]},
     "response": {"stop_reason": "tool_use", "content": [
         {"type": "tool_use", "id": "s1", "name": "skill", "input": {"name": "changelog"}}]}},
    {"request": {"messages": [
        {"role": "user", "content": [{"type": "text", "text": "Go."}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "s1", "name": "skill", "input": {"name": "changelog"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "s1", "content": "Add one line."}]}]},
     "response": {"stop_reason": "end_turn", "content": [{"type": "text", "text": "Done."}]}},
]


def test_a_caption_says_when_the_skills_catalog_goes_and_when_a_skill_comes_back():
    assert site_builder.step_captions(SKILL_CALLS, {}) == [
        "The AGENTS.md files, the prompt, then the skills' catalog go to the model; "
        "the model asked for skill.",
        "The skill's instructions come back; "
        "the model answered without a tool (stop_reason end_turn): the turn ends.",
    ]
    assert site_builder.step_captions(SKILL_CALLS, {}, "zh-CN")[0].startswith(
        "AGENTS.md 文件、提示词和随后的 skill 清单一起发给模型")
