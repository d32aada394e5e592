"""The lessons quote the real code: every line of a ```python block in a chapter's
README.md must stand in that chapter's code.py, so a lesson cannot drift from it."""

import difflib
import re

import pytest

from support import PRESENT, ROOT

FENCE = re.compile(r"```python\n(.*?)```", re.S)


def quoted_lines(chapter):
    readme = (ROOT / chapter / "README.md").read_text(encoding="utf-8")
    for block in FENCE.findall(readme):
        for line in block.splitlines():
            if line.strip() and line.strip() != "...":
                yield line.strip()


@pytest.mark.parametrize("chapter", PRESENT)
def test_every_quoted_line_is_in_the_code(chapter):
    code = {
        line.strip()
        for line in (ROOT / chapter / "code.py").read_text(encoding="utf-8").splitlines()
    }
    missing = [line for line in quoted_lines(chapter) if line not in code]
    assert missing == []


@pytest.mark.parametrize("chapter", PRESENT)
def test_the_lesson_title_is_the_docstring_summary(chapter):
    title = (ROOT / chapter / "README.md").read_text(encoding="utf-8").splitlines()[0]
    summary = (ROOT / chapter / "code.py").read_text(encoding="utf-8").splitlines()[0].strip('"')
    assert title == f"# {summary}"


def chapter_rows():
    """The chapter table of the top README, as it should read."""
    rows, previous = [], []
    for chapter in PRESENT:
        lines = (ROOT / chapter / "code.py").read_text(encoding="utf-8").splitlines()
        diff = list(difflib.unified_diff(previous, lines, lineterm="", n=0))
        added = sum(line.startswith("+") and not line.startswith("+++") for line in diff)
        removed = sum(line.startswith("-") and not line.startswith("---") for line in diff)
        summary = lines[0].strip('"').split(": ", 1)[1]
        rows.append(
            f"| [{chapter}]({chapter}/README.md) | {summary} | {len(lines)} | +{added} | "
            f"-{removed} |"
        )
        previous = lines
    return rows


def test_the_readme_chapter_table_matches_the_code():
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    table = [line for line in readme if line.startswith("| [s0")]
    assert table == chapter_rows()
