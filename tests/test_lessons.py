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

The readers of the markdown, the quotes and the commands, and the run of a command, are in
course/lessons.py (tools/sync_lessons.py uses them too). All the commands run at once, in one
module fixture, through the shared warm runner (course/warm.py, shared_runner): one `import
anthropic`, a forked process per run.
`.venv/bin/python -m tools.time_lessons` prints how long this file takes.
"""

import re
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest

from course import changes, diagrams, reading_time, sections
from course.lessons import (
    LESSONS,
    Run,
    all_scripts,
    bash_scripts,
    code_lines,
    commands_in_prose,
    headings,
    is_sketch,
    lesson,
    live_answer,
    names_a_skipped_section,
    parse_blocks,
    quotes,
    section_text,
    skipped_headings,
    split_runs,
    where_runs_stand,
)
from support import PRESENT, ROOT, loopback_messages_api

FIRST_HEADINGS = ["The problem", "The idea"]
CORE_END = ["Run it", "What you will see", "Going deeper"]  # the core ends with the run
DEEPER = {"What changed", "Making it hold", "How real harnesses do it"}  # after Going deeper
LAST_HEADINGS = ["Build it yourself", "Exercises", "Next"]
FIRST_SCREEN = 30  # lines: the idea's first code block must start within them


# ======================================================================
# Quotes: contiguous runs of code.py's lines, joined by `...` (course/lessons.py reads them)
# ======================================================================


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
    for title, chapter, _ in sections(source):
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


def test_the_readme_sends_a_learner_to_s01_right_after_the_first_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = "\n".join(section_text(readme, "Start"))
    first, second = start.index("```bash"), start.index("```bash", start.index("```bash") + 1)
    assert f"]({LESSONS[0]}/README.md)" in start[first:second]


def test_the_readme_explains_its_jargon_where_it_first_uses_it():
    readme = (ROOT / "README.md").read_text(encoding="utf-8").replace("\n", " ")
    first_uses = {term: readme[readme.index(term) + len(term):][:2]
                  for term in ("harness", "stage checker", "loopback Messages API")}
    assert first_uses == {"harness": " (", "stage checker": " (", "loopback Messages API": " ("}


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


@pytest.mark.parametrize("name", LESSONS)
def test_no_command_hides_in_the_prose_outside_the_exercises(name):
    assert commands_in_prose(lesson(name)) == []


def test_the_readme_chapter_table_matches_the_code():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert [line for line in readme.splitlines() if line.startswith("| [s")] == (
        changes.readme_rows())
    assert changes.between(readme, changes.README_BEGIN, changes.README_END) == (
        changes.readme_table())


# ======================================================================
# Commands: parsed from the text, run, checked (course/lessons.py parses and runs them)
# ======================================================================

SCRIPTS = all_scripts()
# The shared warm runner starts once the tests are collected (tests/conftest.py
# pytest_collection_finish): it imports anthropic in its own process while the checks above run,
# so it is warm when the commands run.


def test_the_lessons_the_readme_and_every_docstring_have_commands_to_run():
    sources = {script.where.split(":")[0].split(" ")[0] for script in SCRIPTS if script.commands}
    expected = {"README.md", *(f"{name}/README.md" for name in LESSONS),
                *(f"{name}/code.py" for name in PRESENT)}
    assert expected - sources == set()


# ---- the set-up and the suite: the README's and .ci/run's ------------------------------------

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
