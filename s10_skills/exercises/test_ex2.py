"""Exercise 2: A budget for the catalog.

Task: Every request pays for the catalog. Add `CATALOG_BUDGET = 1_000` (characters): the lines
`- NAME: DESCRIPTION` are kept while their lengths, and a newline each, fit in it; from the first
that does not fit, each line is `- NAME` alone (Claude Code too keeps every name).

Hint: in `catalog_blocks`, a running total of the lines' lengths says where the budget ends.
"""

from pathlib import Path

from course.check import FakeClient, expect_equal, load, need, new_session, run, scratch, screen

CODE = Path(__file__).resolve().parent.parent / "code.py"


def skills(count, words):
    return {f".agent/skills/s{number:02d}/SKILL.md":
            f"---\ndescription: {words} {number}.\n---\nBody {number}.\n"
            for number in range(count)}


def catalog(chapter, files):
    with scratch(files) as work:
        session = new_session(chapter, FakeClient(), work, tool_environment={"HOME": str(work)})
        with screen():
            return chapter.catalog_blocks(session)


def block(chapter, lines):
    return [{"type": "text", "text": "\n".join(
        ["<skills>", chapter.CATALOG_INTRO, *lines, "</skills>"])}]


def check(code):
    chapter = load(code)
    need(chapter, "CATALOG_BUDGET")
    expect_equal(chapter.CATALOG_BUDGET, 1_000, "CATALOG_BUDGET should be 1,000 characters.")
    words = "x" * 190  # each line: "- sNN: " (7) + 190 + " N." -> about 200 characters
    lines = [f"- s{number:02d}: {words} {number}." for number in range(6)]
    kept = []
    for line in lines:
        if sum(len(text) + 1 for text in kept) + len(line) + 1 > 1_000:
            break
        kept.append(line)
    wanted = kept + [f"- s{number:02d}" for number in range(len(kept), 6)]
    expect_equal(catalog(chapter, skills(6, words)), block(chapter, wanted),
                 "Past CATALOG_BUDGET, the catalog should keep each skill's name alone, in "
                 "order, from the first line that does not fit.")
    expect_equal(catalog(chapter, skills(2, "Short")),
                 block(chapter, ["- s00: Short 0.", "- s01: Short 1."]),
                 "A catalog within the budget should keep every description.")


def test_exercise():
    run(check, CODE)
