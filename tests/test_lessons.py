"""The lessons can be trusted: nothing in them is typed by hand that a program can check.

The conventions are in CONTRIBUTING.md ("Lessons"); this file checks them, per lesson
(sNN_x/README.md):

  - every ```python block that is not a `# sketch` is a QUOTE of code.py: one contiguous run
    of its lines, or such runs joined by lines holding only `...`, in file order; checked as a
    block, so a line moved or dropped without `...` fails (and a mutation test proves it)
  - every code fence names its language
  - the "What changed" table is the one course/changes.py generates
  - the first screen holds the problem (one paragraph) and the idea with its first code block,
    and the table follows the idea; the main body (up to the edge cases) is at most 6,000
    characters, the generated table left out (its length follows the code)
  - every ```bash command (lessons, the top README) and every docstring's "Run it" command is
    run, and does what the text says; a ```text block right after a ```bash block is the real
    output of its last command, temporary paths normalized
  - the top README's chapter table is the generated one

All the commands run at once, in one module fixture, through the shared warm runner
(course/warm.py via support.shared_runner): one `import anthropic`, a forked process per run.
`.venv/bin/python -m tools.time_lessons` prints how long this file takes.
"""

import ast
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import tokenize
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pytest

import course
import course.stages
from course import changes, diagrams, read_scenario, reading_time
from support import PRESENT, ROOT, clean_env, loopback_messages_api, message_json, shared_runner

LESSONS = [name for name in PRESENT if (ROOT / name / "README.md").exists()]

FIRST_HEADINGS = ["The problem", "The idea"]
CORE_END = ["Run it", "What you will see", "Going deeper"]  # the core ends with the run
DEEPER = {"What changed", "Making it hold", "How real harnesses do it"}  # after Going deeper
LAST_HEADINGS = ["Build it yourself", "Exercises", "Next"]
FIRST_SCREEN = 30  # lines: the idea's first code block must start within them
HONEST = "(This is a scripted model, and its script was written for the prompt:"


def lesson(name):
    return (ROOT / name / "README.md").read_text(encoding="utf-8")


# ======================================================================
# Reading markdown: fenced blocks and headings
# ======================================================================

FENCE = re.compile(r"(?P<indent> *)(?P<fence>`{3,})(?P<info>[^`]*)")


@dataclass
class Block:
    where: str  # "s01_loop/README.md:47", the line of the opening fence
    language: str
    lines: list
    start: int  # index of the opening fence line
    end: int  # index of the line after the closing fence


def parse_blocks(text, source):
    """Every fenced block of a markdown text, in order. An indented fence (in a list) is
    read without its indentation."""
    found, lines, index = [], text.splitlines(), 0
    while index < len(lines):
        opening = FENCE.fullmatch(lines[index])
        if not opening:
            index += 1
            continue
        indent, fence = len(opening["indent"]), opening["fence"]
        closing = re.compile(rf" *{fence}`*\s*")
        body, end = [], index + 1
        while end < len(lines) and not closing.fullmatch(lines[end]):
            line = lines[end]
            body.append(line[min(indent, len(line) - len(line.lstrip(" "))):])
            end += 1
        found.append(Block(f"{source}:{index + 1}", opening["info"].strip(), body, index,
                           end + 1))
        index = end + 1
    return found


def headings(text, level="## "):
    """[(line index, title)] of the headings of one level, outside fenced blocks."""
    inside = set()
    for block in parse_blocks(text, ""):
        inside.update(range(block.start, block.end))
    return [(number, line[len(level):].strip()) for number, line in enumerate(text.splitlines())
            if number not in inside and line.startswith(level)]


def section_text(text, title):
    """The lines of the `## title` section (without the heading), or None."""
    found = headings(text)
    lines = text.splitlines()
    for position, (number, name) in enumerate(found):
        if name == title:
            following = found[position + 1][0] if position + 1 < len(found) else len(lines)
            return lines[number + 1 : following]
    return None


# ======================================================================
# Quotes: contiguous runs of lines, joined by `...`
# ======================================================================


def is_gap(line):
    return line.strip() == "..."


def split_runs(lines):
    """The runs of a block between its `...` lines; (runs, cut at start, cut at end)."""
    runs, current = [], []
    for line in lines:
        if is_gap(line):
            runs.append(current)
            current = []
        else:
            current.append(line)
    runs.append(current)
    cut_start, cut_end = runs[0] == [], runs[-1] == []
    if cut_start:
        runs = runs[1:]
    if cut_end and runs:
        runs = runs[:-1]
    return runs, cut_start, cut_end


def first_unfollowed(run, lines, start):
    """For a run found nowhere from `start` on: the index of its first line that does not
    follow (the longest prefix of it that does stand in `lines`, contiguous, is before it)."""
    best = 0
    for position in range(start, len(lines)):
        length = 0
        while (length < len(run) and position + length < len(lines)
               and lines[position + length] == run[length]):
            length += 1
        best = max(best, length)
    return best


def where_runs_stand(block_lines, lines, anchored=False):
    """Check that block_lines are runs of `lines` joined by `...` lines: each run contiguous,
    the runs in order, each `...` standing for at least one line. With anchored (a transcript),
    the block also starts at the first line and ends at the last, unless it starts or ends with
    `...`. Returns None if so, else what is wrong, in one sentence."""
    runs, cut_start, cut_end = split_runs(block_lines)
    if not runs or any(run == [] for run in runs):
        return "the block is empty, or has two `...` lines in a row"
    position = 0
    for number, run in enumerate(runs):
        last = number == len(runs) - 1
        earliest = position + (1 if number or (anchored and cut_start) else 0)
        candidates = range(earliest, len(lines) - len(run) + 1)
        if number == 0 and anchored and not cut_start:
            candidates = [at for at in candidates if at == 0]
        if last and anchored and not cut_end:
            candidates = [at for at in candidates if at == len(lines) - len(run)]
        found = next((at for at in candidates if lines[at : at + len(run)] == run), None)
        if found is None:
            bad = first_unfollowed(run, lines, earliest)
            if bad == len(run):
                return (f"the run ending with {run[-1]!r} is not where it should be (the end "
                        "of the output, or at least one line after the run before it)")
            return (f"line {sum(len(r) + 1 for r in runs[:number]) + bad + 1} of the block, "
                    f"{run[bad]!r}, does not follow the line before it"
                    + (f" ({run[bad - 1]!r})" if bad else " in order after the run before it"))
        position = found + len(run)
    return None


def is_sketch(block):
    return bool(block.lines) and block.lines[0].strip() == "# sketch"


def quotes(name):
    """The ```python blocks of a lesson that quote its code.py."""
    return [block for block in parse_blocks(lesson(name), f"{name}/README.md")
            if block.language == "python" and not is_sketch(block)]


def code_lines(name):
    return (ROOT / name / "code.py").read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("name", LESSONS)
def test_every_python_block_is_a_run_of_code_py_lines_or_runs_joined_by_dots(name):
    lines = code_lines(name)
    wrong = {block.where: where_runs_stand(block.lines, lines) for block in quotes(name)}
    assert {where: why for where, why in wrong.items() if why} == {}


# The checker itself, on blocks made from a real quote: it must refuse a line moved or dropped.

def longest_quote_run(name):
    """The longest run of the lesson's quotes, at least 4 lines of distinct neighbours."""
    runs = [run for block in quotes(name) for run in split_runs(block.lines)[0]]
    runs = [run for run in runs if len(run) >= 4 and len(set(run)) == len(run)]
    return max(runs, key=len) if runs else None


MUTATED = [name for name in LESSONS if longest_quote_run(name)]


@pytest.mark.parametrize("name", MUTATED)
def test_the_quote_check_refuses_a_real_quote_with_a_line_dropped_swapped_or_moved(name):
    lines, run = code_lines(name), longest_quote_run(name)
    middle = len(run) // 2
    dropped = run[:middle] + run[middle + 1 :]
    swapped = run[: middle - 1] + [run[middle], run[middle - 1]] + run[middle + 1 :]
    moved = run[1:] + run[:1]
    assert where_runs_stand(run, lines) is None
    assert [where_runs_stand(block, lines) is None for block in (dropped, swapped, moved)] == [
        False, False, False]
    # the same line left out and marked: the quote holds again
    assert where_runs_stand(run[:middle] + ["..."] + run[middle + 1 :], lines) is None
    assert where_runs_stand(run[:middle] + ["    ..."] + run[middle + 1 :], lines) is None


FAKE_CODE = ["def f():", "    a = 1", "    b = 2", "    c = 3", "    return a", "", "x = f()"]


@pytest.mark.parametrize("block, wrong", [
    (["    a = 1", "    b = 2"], None),
    (["def f():", "...", "    return a"], None),
    (["    b = 2", "    a = 1"], "line 2 of the block, '    a = 1', does not follow the line "
                                 "before it ('    b = 2')"),
    (["def f():", "    b = 2"], "line 2 of the block, '    b = 2', does not follow the line "
                                 "before it ('def f():')"),
    (["    c = 3", "...", "    a = 1"], "line 3 of the block, '    a = 1', does not follow the "
                                         "line before it in order after the run before it"),
    (["    a = 1", "...", "    b = 2"], "line 3 of the block, '    b = 2', does not follow the "
                                         "line before it in order after the run before it"),
    (["a = 1"], "line 1 of the block, 'a = 1', does not follow the line before it in order "
                "after the run before it"),
    (["...", "..."], "the block is empty, or has two `...` lines in a row"),
])
def test_the_quote_check_on_small_blocks(block, wrong):
    assert where_runs_stand(block, FAKE_CODE) == wrong


@pytest.mark.parametrize("block, ok", [
    (FAKE_CODE, True),
    (FAKE_CODE[:-1], False),  # the last line is missing, and no `...` says so
    (FAKE_CODE[:-1] + ["..."], True),
    (FAKE_CODE[1:], False),
    (["...", *FAKE_CODE[1:]], True),
    ([FAKE_CODE[0], "...", FAKE_CODE[-1]], True),
])
def test_a_transcript_covers_the_output_from_start_to_end_unless_cut_with_dots(block, ok):
    assert (where_runs_stand(block, FAKE_CODE, anchored=True) is None) == ok


# ======================================================================
# The shape of a lesson
# ======================================================================


@pytest.mark.parametrize("name", LESSONS)
def test_the_lesson_title_is_the_docstring_summary(name):
    title = lesson(name).splitlines()[0]
    summary = code_lines(name)[0].strip('"')
    assert title == f"# {summary}"


@pytest.mark.parametrize("source", ["README.md", *(f"{name}/README.md" for name in LESSONS)])
def test_every_code_fence_names_its_language(source):
    blocks = parse_blocks((ROOT / source).read_text(encoding="utf-8"), source)
    assert [block.where for block in blocks if not block.language] == []


@pytest.mark.parametrize("name", LESSONS)
def test_the_first_screen_holds_the_problem_in_one_paragraph_then_the_idea(name):
    text = lesson(name)
    found = headings(text)
    assert [title for _, title in found[:2]] == FIRST_HEADINGS
    idea_blocks = [block for block in parse_blocks(text, name)
                   if found[1][0] < block.start < found[2][0]]
    assert idea_blocks[0].start < FIRST_SCREEN
    paragraph = "\n".join(section_text(text, "The problem")).strip()
    assert paragraph != ""
    assert "\n\n" not in paragraph


@pytest.mark.parametrize("name", LESSONS)
def test_the_what_changed_table_is_the_generated_one(name):
    # To rewrite it: .venv/bin/python -m course.changes --write
    table = changes.between(lesson(name), changes.BEGIN, changes.END)
    assert table == changes.lesson_table(changes.what_changed(name))
    assert changes.BEGIN in "\n".join(section_text(lesson(name), "What changed"))


def test_the_write_command_rewrites_a_stale_table_and_nothing_else(tmp_path):
    # python -m course.changes --write, on a copy of the files that hold the tables
    for source in ["README.md", *(f"{name}/{file}" for name in PRESENT
                                   for file in ("README.md", "code.py"))]:
        if (ROOT / source).exists():
            (tmp_path / source).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / source, tmp_path / source)
    fresh = (tmp_path / "s02_tools" / "README.md").read_text(encoding="utf-8")
    table = changes.between(fresh, changes.BEGIN, changes.END)
    (tmp_path / "s02_tools" / "README.md").write_text(fresh.replace(table, "| a stale table |"),
                                                      encoding="utf-8")
    assert changes.stale(tmp_path) == [(tmp_path / "s02_tools" / "README.md",
                                        "the table differs from the code")]
    assert changes.write(tmp_path, only={"s01_loop"}) == []
    assert changes.write(tmp_path) == [tmp_path / "s02_tools" / "README.md"]
    assert (tmp_path / "s02_tools" / "README.md").read_text(encoding="utf-8") == fresh
    assert changes.stale(tmp_path) == []


def test_on_the_site_a_lesson_shows_no_marker_and_its_table_links_to_the_code():
    import importlib.util

    spec = importlib.util.spec_from_file_location("lesson_site_build", ROOT / "web" / "build.py")
    build = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = build  # dataclasses look their module up there
    spec.loader.exec_module(build)
    for name in LESSONS:
        chapter = build.Chapter(name=name, folder=ROOT / name, code="", lesson=lesson(name))
        body, _ = build.render_lesson(chapter, PRESENT)
        assert ("&lt;!--" in body, f'<a href="{name}.html#code-L' in body) == (False, True)


@pytest.mark.parametrize("name", LESSONS)
def test_the_core_comes_first_then_going_deeper_then_the_stage_and_the_exercises(name):
    # The site folds everything after `## Going deeper`: the core is what comes before it.
    titles = [title for _, title in headings(lesson(name))]
    deeper = titles.index("Going deeper") if "Going deeper" in titles else len(titles)
    assert (titles[:2], titles[deeper - 2 : deeper + 1], titles[-3:]) == (
        FIRST_HEADINGS, CORE_END, LAST_HEADINGS)
    assert DEEPER - set(titles[deeper:]) == set()


def new_sections_to_read(name):
    """The sections a chapter adds above its harness banner: what its core says to read."""
    found = []
    source = (ROOT / name / "code.py").read_text(encoding="utf-8")
    for title, chapter, _ in course.sections(source):
        if title.startswith("THE HARNESS"):
            break
        if chapter == name.split("_")[0]:
            found.append(title)
    return found


READING = re.compile(r"\*\*Reading the code:\*\* (.+?)(?:\n\n|\Z)", re.S)


@pytest.mark.parametrize("name", LESSONS)
def test_the_core_says_what_code_to_read_the_new_sections_and_the_diff(name):
    # From s03 on, reading all of code.py above the banner is not a glance (issue 56).
    core = reading_time.core(lesson(name))
    said = READING.findall(core)
    assert len(said) == 1, "the core has no **Reading the code:** paragraph"
    named = re.findall(r"`([A-Z][A-Z ]+)`", said[0])
    index = LESSONS.index(name)
    if index == 0:
        assert named == ["THE HARNESS"]
        return
    assert named == new_sections_to_read(name)
    diff = f"diff -u {LESSONS[index - 1]}/code.py {name}/code.py"
    assert f"```bash\n{diff}\n```" in core


def skipped_headings(texts, deeper):
    """The headings after the deeper part's heading, in every page of `texts`."""
    found = set()
    for text in texts:
        titles = [title for _, title in headings(text)]
        if deeper in titles:
            found.update(titles[titles.index(deeper) + 1:])
    return found


def names_a_skipped_section(core, skipped):
    """The quoted names in a core's prose that are headings a core reader has skipped."""
    prose = re.sub(r"```.*?```", "", core, flags=re.S)
    quoted = re.findall(r'"([^"\n]+)"|“([^”\n]+)”', prose)
    return sorted({a or b for a, b in quoted} & skipped)


def test_no_core_sends_its_reader_to_a_section_of_a_going_deeper():
    # a core stands alone: what it relies on is in it or in an earlier core
    skipped = skipped_headings([lesson(name) for name in LESSONS], "Going deeper")
    assert {name: names_a_skipped_section(reading_time.core(lesson(name)), skipped)
            for name in LESSONS} == {name: [] for name in LESSONS}
    assert names_a_skipped_section('as "Build it yourself" says', skipped) == [
        "Build it yourself"]


def reading_times(language, read):
    """{page: (core minutes, whole minutes)} of every lesson, rounded to a tenth."""
    return {name: (round(reading_time.minutes(reading_time.core(read(name), language)), 1),
                   round(reading_time.minutes(read(name)), 1)) for name in LESSONS}


def too_long(times):
    return {name: time for name, time in times.items()
            if time[0] > reading_time.CORE_LIMIT or time[1] > reading_time.LESSON_LIMIT}


def test_every_core_reads_in_five_minutes_and_every_lesson_in_twelve():
    # prose at 200 words a minute, code at 100: .venv/bin/python -m course.reading_time
    assert too_long(reading_times("en", lesson)) == {}


def test_the_reading_time_counts_code_at_half_the_pace_of_prose_and_stops_the_core_in_time():
    text = ("# t\n\n" + "word " * 200 + "\n\n```python\n" + "x " * 100 + "\n```\n\n"
            "## Going deeper\n\n" + "more " * 400 + "\n")
    assert (reading_time.minutes(reading_time.core(text)), reading_time.minutes(text)) == (
        (2 + 200) / 200 + 1, (2 + 200 + 3 + 400) / 200 + 1)  # "#" and "##" are words too
    assert reading_time.counts("## 问题\n\n模型只会写字，`bash` 能跑。\n") == (1, 10, 0)


def test_the_readme_gets_a_learner_to_the_first_command_in_400_words_and_keeps_reference_last():
    # Start, the chapters and Build it yourself first; the command line and the rest after them.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    titles = [title for _, title in headings(readme)]
    assert reading_time.readme_words(readme) <= reading_time.README_LIMIT
    assert titles[:5] == ["Start", "The chapters", "Build it yourself", "The command line",
                          "Live or offline"]


@pytest.mark.parametrize("name", LESSONS)
def test_the_core_shows_the_chapter_diagram_under_its_title(name):
    source = (ROOT / name / "diagram.dot").read_text(encoding="utf-8")
    image = f"![{diagrams.header(source)['title']}](diagram.svg)"
    assert image in reading_time.core(lesson(name))


def test_every_diagram_svg_is_rendered_from_its_source_and_readable_on_a_phone():
    # To render them again: .venv/bin/python -m course.diagrams (Graphviz's dot)
    names = [f"{name}/{file}" for name in LESSONS for file in diagrams.SOURCES]
    assert [str(source.relative_to(ROOT)) for source in diagrams.sources()] == names
    assert {str(source.relative_to(ROOT)): diagrams.problems(source)
            for source in diagrams.sources() if diagrams.problems(source)} == {}


def test_the_diagram_check_names_a_stale_svg(tmp_path):
    source = tmp_path / "diagram.dot"
    text = (ROOT / "s01_loop" / "diagram.dot").read_text(encoding="utf-8")
    source.write_text(text, encoding="utf-8")
    shutil.copy(ROOT / "s01_loop" / "diagram.svg", tmp_path / "diagram.svg")
    assert diagrams.problems(source) == []
    source.write_text(text + "// a change\n", encoding="utf-8")
    assert diagrams.problems(source) == [
        "diagram.svg is not rendered from diagram.dot as it is now: run python -m course.diagrams"]


@pytest.mark.parametrize("name", LESSONS)
def test_how_real_harnesses_do_it_names_a_source_a_learner_can_open(name):
    # A documentation page (with its date or version in the text) or a file at a commit.
    section = "\n".join(section_text(lesson(name), "How real harnesses do it") or [])
    assert re.findall(r"https://[^\s)>]+", section) != []


SKETCH_LIMIT = 25  # lines, `# sketch` included


def test_the_s01_sketch_is_a_bare_loop_of_at_most_25_lines_that_works(monkeypatch, capsys):
    """The sketch runs as it stands, against a stand-in for anthropic.Anthropic(): one tool
    call, its result in the next user turn, then the answer printed."""
    from support import FakeClient, reply, text, tool_use

    sketches = [block for block in parse_blocks(lesson("s01_loop"), "s01") if is_sketch(block)]
    assert len(sketches) == 1
    assert len(sketches[0].lines) <= SKETCH_LIMIT
    client = FakeClient(reply(text("Let me look."), tool_use("toolu_1", "bash",
                                                             {"command": "echo hello"})),
                        reply(text("One file: hello.")))
    monkeypatch.setitem(sys.modules, "anthropic", SimpleNamespace(Anthropic=lambda: client))
    exec(compile("\n".join(sketches[0].lines), "s01 sketch", "exec"), {})
    assert capsys.readouterr().out == "One file: hello.\n"
    assert [call["messages"][-1] for call in client.calls] == [
        {"role": "user", "content": "What files are here?"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": "hello\n"}]},
    ]
    assert [call["tools"][0]["name"] for call in client.calls] == ["bash", "bash"]


def test_the_s01_stop_reason_table_prints_what_finish_reply_prints():
    """Each row `| `reason` | prints `line`[, takes the turn back][ (a note)] |`: the lines are
    STOP_MESSAGES, and the rows that take the turn back are FORGET_PROMPT's reasons."""
    from support import load_chapter

    rows = [re.fullmatch(r"\| `(\w+)` \| prints `([^`]*)`(, takes the turn back)?( \(.*\))? \|",
                         line)
            for line in lesson("s01_loop").splitlines()]
    chapter = load_chapter("s01_loop")
    table = {row[1]: row[2] for row in rows if row}
    taken_back = {row[1] for row in rows if row and row[3]}
    assert (table, taken_back) == (chapter.STOP_MESSAGES, chapter.FORGET_PROMPT)


# Figures the prose gives: (chapter, the constant in code.py, the words of the lesson that give it)
FIGURES = [
    ("s01_loop", "BASH_TIMEOUT", "the {}-second timeout"),
    ("s01_loop", "OUTPUT_LIMIT", "The first {:,} bytes of its output"),
    ("s01_loop", "MAX_TOKENS", "max_tokens ({})"),
    ("s01_loop", "MAX_CALLS", "in one prompt (default {},\n`MAX_CALLS`)"),
    ("s02_tools", "READ_LIMIT", "`READ_LIMIT` ({:,}) lines"),
    ("s02_tools", "LINE_LIMIT", "a line longer than\n  {:,} characters"),
    ("s02_tools", "READ_CHAR_LIMIT", "stops at {:,} characters"),
    ("s02_tools", "GLOB_LIMIT", "at most {} paths"),
    ("s03_permissions", "ASK_LIMIT", "the question again, {} times at most"),
    ("s06_plan_mode", "ASK_LIMIT", "asks again, {} times at most"),
]


@pytest.mark.parametrize("name, constant, words", FIGURES)
def test_a_figure_in_the_prose_is_the_one_in_the_code(name, constant, words):
    from support import load_chapter

    assert words.format(getattr(load_chapter(name), constant)) in lesson(name)


@pytest.mark.parametrize("name", LESSONS)
def test_the_exercises_come_just_before_next(name):
    titles = [title for _, title in headings(lesson(name))]
    assert titles[-2:] == ["Exercises", "Next"]


# A command in the prose is a command nobody checks: commands go in ```bash blocks.
INLINE_COMMAND = re.compile(r"(\.venv/bin/|printf |diff -u |cp -r |python3? s\d\d_)")


def commands_in_prose(text, exercises="Exercises", following="Next"):
    """The inline code spans of a lesson's prose, outside the exercises, that are commands."""
    skipped = set()
    for block in parse_blocks(text, ""):
        skipped.update(range(block.start, block.end))
    start = [number for number, title in headings(text) if title == exercises]
    after = [number for number, title in headings(text) if title == following]
    if start:
        skipped.update(range(start[0], after[0] if after else len(text.splitlines())))
    spans = [span for number, line in enumerate(text.splitlines()) if number not in skipped
             for span in re.findall(r"`([^`]+)`", line)]
    return [span for span in spans if INLINE_COMMAND.match(span)]


@pytest.mark.parametrize("name", LESSONS)
def test_no_command_hides_in_the_prose_outside_the_exercises(name):
    assert commands_in_prose(lesson(name)) == []


def test_the_readme_chapter_table_matches_the_code():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert [line for line in readme.splitlines() if line.startswith("| [s0")] == (
        changes.readme_rows())
    assert changes.between(readme, changes.README_BEGIN, changes.README_END) == (
        changes.readme_table())


# ======================================================================
# Commands: parsed from the text, run, checked
# ======================================================================


@dataclass
class Command:
    words: list  # the command's own words
    text: str  # the line it came from
    stdin: str | None = None  # what printf pipes in; "" for < /dev/null
    env: dict = field(default_factory=dict)  # VAR=value before it
    live: bool = False  # a `# live` comment
    cut: tuple | None = None  # ("head" or "tail", N): the output piped through head/tail -n N


@dataclass
class Script:
    where: str  # "s01_loop/README.md:120" or "s06_plan_mode/code.py (Run it)"
    commands: list
    expected: list | None = None  # the ```text block after it: the last command's output
    transcript: Block | None = None  # that block, where it stands (tools/sync_lessons.py)


def split_comment(line):
    """(the command, its comment): the comment starts at a # outside quotes, after a space."""
    quote = None
    for index, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index].strip(), line[index + 1 :].strip()
    return line.strip(), ""


def printf_text(format_string):
    """What printf prints for a format without conversions: \\n, \\t, \\\\ and %% only."""
    if re.search(r"%[^%]", format_string.replace("%%", "")):
        raise ValueError(f"printf with a conversion: {format_string!r}")
    return (format_string.replace("\\\\", "\0").replace("\\n", "\n").replace("\\t", "\t")
            .replace("\0", "\\").replace("%%", "%"))


def parse_line(line):
    """The commands of one shell line: [printf '...' |] [VAR=value] words [< /dev/null], joined
    by &&."""
    command_text, comment = split_comment(line)
    if not command_text:
        return []
    lexer = shlex.shlex(command_text, posix=True, punctuation_chars=True)
    lexer.whitespace_split, lexer.commenters = True, ""
    tokens, commands, current = list(lexer), [], []
    for token in tokens + ["&&"]:
        if token != "&&":
            current.append(token)
            continue
        command = Command(words=current, text=line, live=comment.startswith("live"))
        if len(current) > 3 and current[0] == "printf" and current[2] == "|":
            command.stdin, command.words = printf_text(current[1]), current[3:]
        if (len(command.words) > 4 and command.words[-4:-2] in (["|", "head"], ["|", "tail"])
                and command.words[-2] == "-n" and command.words[-1].isdigit()):
            command.cut = (command.words[-3], int(command.words[-1]))
            command.words = command.words[:-4]
        if command.words[-2:] == ["<", "/dev/null"]:
            command.stdin, command.words = "", command.words[:-2]
        while command.words and re.fullmatch(r"[A-Z_]+=\S*", command.words[0]):
            variable, _, value = command.words.pop(0).partition("=")
            command.env[variable] = value
        commands.append(command)
        current = []
    return commands


def bash_scripts(text, source):
    """A Script for every ```bash block, with the ```text block that directly follows it."""
    blocks, lines, found = parse_blocks(text, source), text.splitlines(), []
    for number, block in enumerate(blocks):
        if block.language != "bash":
            continue
        joined, commands = "\n".join(block.lines).replace("\\\n", " "), []
        for line in joined.splitlines():
            commands += parse_line(line)
        expected = None
        following = blocks[number + 1] if number + 1 < len(blocks) else None
        if (following and following.language == "text"
                and all(not line.strip() for line in lines[block.end : following.start])):
            expected = following.lines
        found.append(Script(block.where, commands, expected, following if expected else None))
    return found


def module_docstring(path):
    """ast.get_docstring of the module at path, from its first statement alone when that parses
    on its own (a docstring does): a whole code.py takes 60 ms to parse, in every process that
    collects this file."""
    source = Path(path).read_text("utf-8")
    lines = source.splitlines(keepends=True)
    tokens = tokenize.generate_tokens(iter(lines).__next__)
    end = next((token.end[0] for token in tokens if token.type == tokenize.NEWLINE), None)
    try:
        return ast.get_docstring(ast.parse("".join(lines[:end])))
    except SyntaxError:  # a compound statement first: its body is on the lines after
        return ast.get_docstring(ast.parse(source))


def docstring_scripts(name):
    """A Script for each command of the docstring's "Run it" (its notes in parentheses aside)."""
    docstring = module_docstring(ROOT / name / "code.py")
    run_it = docstring.split("Run it:", 1)[1] if "Run it:" in docstring else ""
    lines = [line.strip() for line in run_it.splitlines()]
    return [Script(f"{name}/code.py (Run it, command {number})", parse_line(line))
            for number, line in enumerate((line for line in lines
                                           if line and not line.startswith("(")), 1)]


def all_scripts():
    found = bash_scripts((ROOT / "README.md").read_text(encoding="utf-8"), "README.md")
    for name in LESSONS:
        found += bash_scripts(lesson(name), f"{name}/README.md")
    for name in PRESENT:
        found += docstring_scripts(name)
    return found


SCRIPTS = all_scripts()
# The shared warm runner starts once the tests are collected (tests/conftest.py
# pytest_collection_finish): it imports anthropic in its own process while the checks above run,
# so it is warm when the commands run.


def test_the_lessons_the_readme_and_every_docstring_have_commands_to_run():
    sources = {script.where.split(":")[0].split(" ")[0] for script in SCRIPTS if script.commands}
    expected = {"README.md", *(f"{name}/README.md" for name in LESSONS),
                *(f"{name}/code.py" for name in PRESENT)}
    assert expected - sources == set()


# ---- normalizing output ------------------------------------------------------------------------


def normalize(text, scratch=None):
    """Output as the lesson shows it: temporary paths and ports made stable, trailing spaces
    gone."""
    if scratch is not None:
        text = text.replace(str(scratch), "$TMPDIR")
    # The offline copies' folder of the learner's own, $TMPDIR/build-an-agent-<uid>/sNN-xxxxxxxx
    text = re.sub(r"(\$TMPDIR/build-an-agent-)\d+(?!\d)", r"\1$UID", text)
    copy = r"(\$TMPDIR/(?:build-an-agent-\$UID/)?s\d\d-)[a-z0-9_]{8}(?![a-z0-9_])"
    text = re.sub(copy, r"\1xxxx", text)
    text = re.sub(r"(?<![\w.])/\S*?/(?=s\d\d_\w+/)", ".../", text)
    text = text.replace(str(ROOT), "...")
    text = re.sub(r"http://127\.0\.0\.1:\d+", "http://127.0.0.1:PORT", text)
    text = re.sub(r"\b\d{8}-\d{6}-[0-9a-f]{6}\b", "YYYYMMDD-HHMMSS-xxxxxx", text)  # s06 session
    text = re.sub(r"(Ran \d+ tests? in )\d+\.\d+s", r"\g<1>0.000s", text)  # unittest's time
    return [line.rstrip() for line in text.rstrip("\n").split("\n")]


# ---- running one script ------------------------------------------------------------------------

CHAPTER_SCRIPT = re.compile(r"(?P<name>s\d\d_\w+)/code\.py")
VALUED = {"--script", "--trace", "--workdir", "--mode", "--clear-at", "--compact-at"}
PLAY = f"{course.PLAY}/"  # a word of a command that starts so: one of the learner's copies


def script_options(path):
    """The options a script's argparse parser defines: the strings given to add_argument."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return {argument.value for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, "attr", None) == "add_argument"
            for argument in node.args if isinstance(argument, ast.Constant)}


def ci_commands():
    """The commands .ci/run runs, pip's -q left out."""
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    return {" ".join(word for word in line.split() if word != "-q") for line in lines
            if line.strip() and not line.lstrip().startswith("#")}


def set_up_and_test_commands(commands):
    """The venv, pip install and whole-suite commands of a list, in order, pip's -q left out."""
    return [" ".join(word for word in words if word != "-q") for words in commands
            if words[:3] == ["python3", "-m", "venv"] or words[:2] == [".venv/bin/pip", "install"]
            or words in ([".venv/bin/python", "-m", "pytest", "-n", "2"],)]


def test_ci_runs_the_readmes_set_up_and_test_commands_in_its_order():
    scripts = bash_scripts((ROOT / "README.md").read_text(encoding="utf-8"), "README.md")
    readme = [command.words for script in scripts for command in script.commands]
    # The README gives the notebooks' install after the test command; CI installs before testing.
    ci = [line.split() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
          if line.strip() and not line.lstrip().startswith("#")]
    assert sorted(set_up_and_test_commands(ci)) == sorted(set_up_and_test_commands(readme))
    assert set_up_and_test_commands(ci) == [
        "python3 -m venv .venv",
        ".venv/bin/pip install -r requirements.txt",
        ".venv/bin/pip install -r requirements-notebooks.txt",
        ".venv/bin/pip install -r requirements-dev.txt",
        ".venv/bin/python -m pytest -n 2",
    ]
    chapters = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    assert [line.split(">")[0] for line in chapters.splitlines()
            if line and not line.startswith("#")] == ["anthropic", "python-dotenv"]


# Offline runs with the same command line and stdin, made once: {key: Future}
SHARED_RUNS, SHARED_LOCK = {}, threading.Lock()


class Run:
    """The state of one script as it runs: its scratch folder, its traces, its problems."""

    def __init__(self, script, scratch, api_url, seen):
        self.script, self.scratch, self.api_url, self.seen = script, scratch, api_url, seen
        self.traces = {}  # a trace file written in this script: the tool calls of its run
        self.problems = []
        self.actual = None  # the output its transcript was compared with, normalized
        if (ROOT / PLAY).is_dir():  # as in a clone, where play/ holds its README.md
            (scratch / PLAY).mkdir()

    def path(self, word):
        """A play/... path of the text (the learner's copies): in this script's scratch folder."""
        return str(self.scratch / word) if word.startswith(PLAY) else word

    def problem(self, command, what):
        self.problems.append(f"{' '.join(command.words)}: {what}")

    def compare(self, command, output, scratch):
        expected = normalize("\n".join(self.script.expected))
        expected = [line[2:] if line.startswith("^C") else line for line in expected]
        actual = self.actual = normalize(output, scratch)
        wrong = where_runs_stand(expected, actual, anchored=True)
        if wrong:
            self.problem(command, f"the transcript is not the output: {wrong}.\nThe output:\n"
                         + "\n".join(actual))

    def run(self):
        """Run the commands, each as soon as the ones before it that use one of its play/ paths
        have ended (the others run side by side)."""
        commands = self.script.commands
        with ThreadPoolExecutor(max_workers=max(len(commands), 1)) as pool:
            started = []
            for number, command in enumerate(commands):
                paths = {word for word in command.words if word.startswith(PLAY)}
                before = [started[earlier] for earlier in range(number)
                          if paths & {w for w in commands[earlier].words if w.startswith(PLAY)}]
                expected = self.script.expected if number == len(commands) - 1 else None
                started.append(pool.submit(self.run_after, before, command, expected))
            for future in started:
                future.result()
        return self.problems

    def run_after(self, before, command, expected):
        for future in before:
            future.result()
        try:
            self.run_one(command, expected)
        except Exception as error:  # one sentence in the report, not a crashed fixture
            self.problem(command, f"{type(error).__name__}: {error}")

    def run_one(self, command, expected):
        words = command.words
        if not words:
            return self.problem(command, "nothing to run")
        if len(words) > 1 and words[0] in ("python", ".venv/bin/python") and (
                CHAPTER_SCRIPT.fullmatch(words[1])):
            return self.chapter(command, CHAPTER_SCRIPT.fullmatch(words[1])["name"], words[2:],
                                expected)
        if words[:2] == ["diff", "-u"] and len(words) == 4:
            result = subprocess.run(words, cwd=ROOT, capture_output=True, text=True, check=False)
            if result.returncode != 1 or not result.stdout.startswith(f"--- {words[2]}"):
                self.problem(command, f"exit {result.returncode}, not a diff: {result.stderr}")
            if expected is not None:
                self.compare(command, result.stdout, self.scratch)
            return None
        if expected is not None:
            return self.problem(command, "a ```text block follows a command with no output")
        if words[:2] == ["cp", "-r"] and len(words) == 4 and words[3].startswith(PLAY):
            shutil.copytree(ROOT / words[2], self.path(words[3]))
            return None
        if words == ["python3", "-m", "venv", ".venv"] or words[:2] == [".venv/bin/pip",
                                                                           "install"]:
            if " ".join(words) not in ci_commands():
                self.problem(command, ".ci/run does not run this set-up step")
            return None
        if words[:3] == [".venv/bin/python", "-m", "pytest"]:
            return self.pytest(command)
        if words[:3] == [".venv/bin/python", "-m", "tools.context_estimate"]:
            return self.context_estimate(command)
        if words[:3] == [".venv/bin/python", "-m", "course.stages"]:
            return self.stages(command, expected)
        if words[:2] == [".venv/bin/python", "web/build.py"]:
            options = [word.split("=")[0] for word in words[2:] if word.startswith("-")]
            missing = [option for option in options if option not in script_options(words[1])]
            if missing:
                self.problem(command, f"{words[1]} has no option {missing}")
            return None
        if words == [".venv/bin/jupyter", "lab"]:
            if not (ROOT / ".venv" / "bin" / "jupyter-lab").exists():
                self.problem(command, ".venv/bin/jupyter-lab is not installed")
            return None
        return self.problem(command, "the lesson test cannot check this command: extend the "
                            "grammar in tests/test_lessons.py")

    def pytest(self, command):
        words, environment = command.words, command.env
        if words[3:] in ([], ["-n", "2"]) and not environment:  # the whole suite
            if " ".join(words) not in ci_commands():
                self.problem(command, "this is not the test command .ci/run runs")
            return
        for variable, value in environment.items():
            registered = f'register_profile("{value}"'
            if variable != "HYPOTHESIS_PROFILE" or not any(
                    registered in path.read_text(encoding="utf-8")
                    for path in (ROOT / "tests").glob("*.py")):
                self.problem(command, f"{variable}={value} is set nowhere in tests/")
        paths = [word for word in words[3:] if not word.startswith("-")
                 and not re.fullmatch(r"\w+", word)]
        if not all((ROOT / path.split("::")[0]).exists() for path in paths):
            self.problem(command, f"no such test file: {paths}")

    def context_estimate(self, command):
        """tools.context_estimate on a trace an earlier command of the block recorded."""
        words = command.words
        if len(words) != 4 or self.path(words[3]) not in self.traces:
            return self.problem(command, "the estimate reads a --trace recorded before it")
        result = subprocess.run([sys.executable, *words[1:3], self.path(words[3])], cwd=ROOT,
                                capture_output=True, text=True, check=False)
        if result.returncode != 0 or not result.stdout.startswith("call 1: "):
            self.problem(command, f"exit {result.returncode}: {result.stderr or result.stdout}")
        return None

    def stages(self, command, expected):
        """The stage checker on the learner's build/agent.py, or on a chapter's code.py at its
        own stage or one before: tests/test_stages.py runs the checks of every chapter at its
        own stage (which holds every stage before it) and shows that they pass."""
        words = command.words[3:]
        if command.env or expected is not None or len(words) != 2 or (
                words[0] not in course.stages.STAGES):
            return self.problem(command, "the checker's command is `.venv/bin/python -m "
                                "course.stages sNN PATH`, with no output shown after it")
        label, path = words
        chapter = CHAPTER_SCRIPT.fullmatch(path)
        if path != "build/agent.py" and not (chapter and chapter["name"][:3] >= label):
            return self.problem(command, f"{path} is not build/agent.py, nor a chapter that "
                                f"passes stage {label}")
        if " ".join(command.words) != course.stages.command(label, path):
            self.problem(command, "not the command course.stages.command() gives")
        return None

    def chapter(self, command, name, arguments, expected):
        arguments = [self.path(word) for word in arguments]
        options, prompt, index = {}, None, 0
        while index < len(arguments):
            word = arguments[index]
            if word in VALUED:
                options[word] = arguments[index + 1]
                index += 2
                continue
            if word.startswith("--"):
                options[word] = True
            elif prompt is None:
                prompt = word
            else:
                return self.problem(command, f"two prompts: {prompt!r} and {word!r}")
            index += 1
        scenario = read_scenario(ROOT / name)
        label = name.split("_")[0]
        # A REPL the text does not feed: the learner reads the banner's prompt, types q.
        stdin = command.stdin
        repl = stdin is None and prompt is None
        if stdin is None:
            stdin = "q\n" if repl else ""
        interrupt = [n for n, line in enumerate(expected or []) if line.startswith("^C")]
        after = normalize(expected[interrupt[0] - 1])[0] if interrupt else None
        result, scratch = self.start(command, name, arguments, stdin, after)
        output = result.stdout
        if command.cut:
            kept = output.splitlines(keepends=True)
            head, count = command.cut[0] == "head", command.cut[1]
            output = "".join(kept[:count] if head else kept[-count:] if count else [])
        if expected is not None:
            self.compare(command, output + result.stderr, scratch)
        elif (result.returncode, result.stderr) != (0, ""):
            self.problem(command, f"exit {result.returncode}: {result.stderr or result.stdout}")
        if not command.live and "--script" not in options and prompt is not None and (
                prompt != scenario["prompt"]):
            self.problem(command, f"the script was written for {scenario['prompt']!r}")
        if not command.live and HONEST in result.stdout and not any(
                HONEST in line for line in expected or []):
            self.problem(command, "the scripted model was given another prompt than its own:\n"
                         + result.stdout)
        if repl and not command.live and "--script" not in options and (
                f"the script was written for: {scenario['prompt']}" not in result.stdout):
            self.problem(command, "the banner does not say which prompt the script plays")
        if repl and result.stdout.splitlines()[-1:] != [f"{label} >> q"]:
            self.problem(command, "the REPL did not end at q")
        calls = [line for line in result.stdout.splitlines() if line.startswith("  > ")]
        if "--trace" in options:
            records = [json.loads(line) for line in
                       Path(options["--trace"]).read_text(encoding="utf-8").splitlines()]
            marks = {"agent", "compaction"}  # s07's subagent calls, s08's summary requests
            if not records or any(set(record) - marks != {"request", "response"}
                                  for record in records):
                self.problem(command, "the trace has no model calls, or other lines")
            self.traces[options["--trace"]] = calls
        if options.get("--script") in self.traces and calls != self.traces[options["--script"]]:
            self.problem(command, f"the replay ran {calls}, the recording "
                         f"{self.traces[options['--script']]}")
        if command.live:
            self.check_live(command, name, result.stdout, options, prompt)
            self.check_keyless(command, name, arguments, prompt, scenario)

    def check_keyless(self, command, name, arguments, prompt, scenario):
        """Without a key, a live one-shot command says in one line that it needs one, and how to
        play the chapter's script instead, and sends nothing (exit 2)."""
        if prompt is None:
            return
        runner = shared_runner()
        env = clean_env(TMPDIR=str(self.scratch), **command.env)
        result = runner.result(runner.start(ROOT / name / "code.py", *arguments, cwd=ROOT,
                                            env=env), timeout=60)
        offline = f'.venv/bin/python {name}/code.py --offline {json.dumps(scenario["prompt"])}'
        wanted = (2, "", f"{name}: this prompt needs a real model: set ANTHROPIC_API_KEY in .env "
                  f"(see .env.example). Without a key, play the chapter's script: {offline}\n")
        if (result.returncode, result.stdout, result.stderr) != wanted:
            self.problem(command, f"without a key: exit {result.returncode}, "
                         f"{result.stdout + result.stderr!r}, not {wanted!r}")

    def start(self, command, name, arguments, stdin, after):
        """Run the chapter; (the CompletedProcess, the scratch folder its TMPDIR was). Two
        scripts that give the same offline command with no play/ path share one run."""
        env = clean_env(TMPDIR=str(self.scratch), **command.env)
        if command.live:
            env.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=self.api_url)
        key = (name, tuple(arguments), stdin, tuple(sorted(command.env.items())))
        shared = not command.live and after is None and not any(
            word.startswith(PLAY) for word in command.words)
        with SHARED_LOCK:
            if shared and key in SHARED_RUNS:
                return SHARED_RUNS[key].result()
            future = SHARED_RUNS[key] = Future() if shared else None
        runner = shared_runner()
        try:
            job = runner.start(ROOT / name / "code.py", *arguments, stdin=stdin, cwd=ROOT,
                               env=env)
            if after is not None:
                self.press_ctrl_c(runner, job, after)
            outcome = runner.result(job, timeout=60), self.scratch
        except BaseException as error:
            if future:
                future.set_exception(error)
            raise
        if future:
            future.set_result(outcome)
        return outcome

    def press_ctrl_c(self, runner, job, after):
        """SIGINT to the run's process group, as the terminal sends it, once `after` is on the
        screen and the command it shows has started (the run has a child process)."""
        pid, output = runner.pid(job), runner.output_file(job)
        children = Path(f"/proc/{pid}/task/{pid}/children")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            printed = output.read_text(encoding="utf-8") if output.exists() else ""
            shown = after in normalize(printed, self.scratch)
            if shown and (not children.exists() or children.read_text().strip()):
                os.killpg(pid, signal.SIGINT)
                return
            time.sleep(0.01)  # waits for the line, not for a time
        raise TimeoutError(f"{after!r} was never shown")

    def check_live(self, command, name, stdout, options, prompt):
        banner = stdout.splitlines()[0] if stdout else ""
        if not banner.startswith(f"{name} · live: ") or not banner.endswith(self.api_url):
            self.problem(command, f"not a live run: {banner!r}")
        if prompt is None:
            return
        workdir = Path(options.get("--workdir", ROOT)).resolve()
        results = [block["content"] for call in self.seen
                   if str(workdir) in system_text(call["body"])
                   for message in call["body"]["messages"] if isinstance(message["content"], list)
                   for block in message["content"] if block.get("type") == "tool_result"]
        listed = sorted(path.name for path in workdir.iterdir() if not path.name.startswith("."))
        if not listed or not results or any(entry not in results[0] for entry in listed):
            self.problem(command, f"the live run's ls did not list the files of {workdir} "
                         f"({listed}): {results}")


def system_text(body):
    """The system prompt of a request: a string, or (live) text blocks marked for the cache."""
    system = body["system"]
    return system if isinstance(system, str) else "".join(block["text"] for block in system)


def live_answer(body, seen):
    """The loopback Messages API: the prompt gets one bash `ls` call; everything after it (the
    tool result, a Stop hook's note) gets the answer."""
    if any(message["role"] == "assistant" for message in body["messages"]):
        return message_json([{"type": "text", "text": "Done: I listed the files."}])
    return message_json([{"type": "tool_use", "id": f"toolu_live_{len(seen)}", "name": "bash",
                          "input": {"command": "ls"}}], stop_reason="tool_use")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """Every script run at once, each in its own thread and scratch folder: {where: problems}."""
    with loopback_messages_api(live_answer) as (url, seen):
        runs = [Run(script, tmp_path_factory.mktemp("lesson-run"), url, seen)
                for script in SCRIPTS]
        with ThreadPoolExecutor(max_workers=len(runs)) as pool:
            problems = list(pool.map(Run.run, runs))
    return {script.where: found for script, found in zip(SCRIPTS, problems, strict=True)}


@pytest.mark.parametrize("where", [script.where for script in SCRIPTS])
def test_every_command_runs_and_does_what_the_text_says(where, outcomes):
    assert outcomes[where] == [], "\n\n".join(outcomes[where])
