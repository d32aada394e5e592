"""The figures the documents state are written by tools/figures.py between markers, never by hand
(course/figures.py)."""

from course.figures import FIGURE, FORMS, with_figures, without_figures
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
