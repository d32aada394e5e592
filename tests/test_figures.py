"""The figures the documents state are written by tools/figures.py between markers, never by hand
(course/figures.py)."""

import re

from course.figures import FIGURE, FORMS, with_figures, without_figures
from course.markdown import parse_blocks
from support import ROOT

PAGES = {"README.md": "en", "README.zh-CN.md": "zh-CN", "CONTRIBUTING.md": "en"}


def test_every_figure_in_the_pages_is_one_the_tool_measures_and_reads_as_the_tool_writes_it():
    found = {page: [(m["name"], m["text"]) for m in FIGURE.finditer((ROOT / page).read_text())]
             for page in PAGES}
    assert {page: sorted({name for name, _ in figures}) for page, figures in found.items()} == {
        "README.md": ["site", "stages", "suite"],
        "README.zh-CN.md": ["site", "stages", "suite"],
        "CONTRIBUTING.md": ["suite"],
    }
    values = {"suite": {"tests": 1234, "seconds": 71.6}, "stages": {"seconds": 11.4},
              "site": {"seconds": 16.5}}
    for page, language in PAGES.items():
        written = with_figures((ROOT / page).read_text(), values, language)
        assert sorted({m["text"] for m in FIGURE.finditer(written)}) == sorted(
            {FORMS[name][language].format(**values[name]) for name, _ in found[page]})


def test_a_figure_is_written_in_the_pages_language_and_left_out_of_a_translations_hash():
    text = "A <!-- figure:suite -->9 tests in 1 s<!-- /figure --> run."
    values = {"suite": {"tests": 2308, "seconds": 73.5}}
    assert with_figures(text, values, "en") == (
        "A <!-- figure:suite -->2,308 tests in 74 s<!-- /figure --> run.")
    assert with_figures(text, values, "zh-CN") == (
        "A <!-- figure:suite -->2,308 个测试用时 74 秒<!-- /figure --> run.")
    assert with_figures(text, {}, "en") == text
    assert without_figures(text) == "A <!-- figure:suite --><!-- /figure --> run."


# A measured time in prose, outside the markers: "about 20 seconds", "took 21 s", "约 20 秒".
# A budget ("within 15 s", "its budget is 15") or a setting ("at most 300 s") is not one.
NUMBER = r"(?:\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten)"
MEASURED = re.compile(
    rf"(?i)\b(?:about|took|takes)\s+{NUMBER}\s?(?:ms|s|seconds?|minutes?)\b"
    r"|约 ?[\d,.一二三四五六七八九十]+ ?(?:毫秒|秒|分钟)|用时 ?[\d,.]+ ?(?:秒|分钟)")
CODE_SPAN = re.compile(r"`[^`\n]*`")


def measured_in_prose(text):
    """The measured times a text states by hand: outside the figure markers, the code blocks (a
    transcript says what its run printed) and the code spans."""
    lines = text.splitlines()
    for block in parse_blocks(text, ""):
        lines[block.start : block.end] = [""] * (block.end - block.start)
    return MEASURED.findall(CODE_SPAN.sub("", without_figures("\n".join(lines))))


def test_the_documents_state_budgets_and_leave_measured_times_to_the_figures():
    lessons = sorted(path.relative_to(ROOT).as_posix() for path in ROOT.glob("s*/README*.md"))
    documents = [*PAGES, "web/README.md", ".ci/run", *lessons]
    assert {page: measured_in_prose((ROOT / page).read_text(encoding="utf-8"))
            for page in documents} == {page: [] for page in documents}


def test_a_measured_time_outside_the_markers_is_found():
    assert measured_in_prose(
        "the same ones every run, about 20 seconds. (11,000 in all, about five\nminutes). "
        "About 8 minutes on 2 cores. The compare page took 21 s. 每次约 20 秒，约五分钟。"
        "A <!-- figure:suite -->9 tests in 1 s<!-- /figure --> run, `retrying in 2 s`, "
        "within 15 s, at most 300 s, the core in five minutes.\n```text\nRan 1 test in 0.000s\n"
        "took 2 s\n```\n"
    ) == ["about 20 seconds", "about five\nminutes", "About 8 minutes", "took 21 s", "约 20 秒",
          "约五分钟"]
