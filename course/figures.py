"""The figures the documents state (how many tests, how long they take), and where they stand.

A figure in a page is written between two markers, which GitHub and the site do not show:

    <!-- figure:suite -->2,308 tests in 74 s<!-- /figure -->

`python -m tools.figures` measures them on this machine and prints them; with `--write` it puts
them in every page that has their markers (README.md, README.zh-CN.md, CONTRIBUTING.md), in each
page's language. No figure is kept by hand: the Chinese pages' staleness hash leaves out what
stands between the markers (tests/test_lessons_zh.py), so a new figure asks no new translation.
"""

import re

FIGURE = re.compile(r"<!-- figure:(?P<name>[a-z]+) -->(?P<text>[^<\n]*)<!-- /figure -->")

# How each figure reads, by language.
FORMS = {
    "suite": {"en": "{tests:,} tests in {seconds:.0f} s",
              "zh-CN": "{tests:,} 个测试用时 {seconds:.0f} 秒"},
    "stages": {"en": "{seconds:.0f} s", "zh-CN": "{seconds:.0f} 秒"},
    "site": {"en": "{seconds:.0f} s", "zh-CN": "{seconds:.0f} 秒"},
}


def without_figures(text):
    """The text with each figure's value left out (its marker stays): what a translation hashes."""
    return FIGURE.sub(lambda found: f"<!-- figure:{found['name']} --><!-- /figure -->", text)


def with_figures(text, values, language):
    """The text with every figure it marks, and that `values` has, written anew."""
    def written(found):
        name = found["name"]
        if name not in values:
            return found[0]
        form = FORMS[name][language].format(**values[name])
        return f"<!-- figure:{name} -->{form}<!-- /figure -->"
    return FIGURE.sub(written, text)
