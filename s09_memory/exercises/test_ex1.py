"""Exercise 1: Comments for people only.

Task: Claude Code strips block-level HTML comments from CLAUDE.md before the model sees it:
what the people who maintain the file write for each other costs no tokens. Do the same for
AGENTS.md: in the text `memory_blocks` sends, every HTML comment (it may span lines) is gone,
together with the newline right after it. A comment that is never closed stays as it is. The
file on disk does not change.

Hint: `memory_blocks` has each file's text before it marks it; `str.find` walks from a
comment's start to its `-->` without a regex.
"""

from pathlib import Path

from course.check import FakeClient, expect_equal, load, new_session, run, scratch, screen

CODE = Path(__file__).resolve().parent.parent / "code.py"
WRITTEN = ("Use tabs.\n<!-- for maintainers: see issue 12 -->\nRun make test.\n"
           "<!--\nold rule: use spaces\n-->\nKeep answers short. <!-- why: reviews -->\n"
           "Unclosed: <!-- stays\n")
SENT = "Use tabs.\nRun make test.\nKeep answers short. Unclosed: &lt;!-- stays"  # quoted


def sent(chapter, files):
    """The memory block's text for a workdir holding these files."""
    with scratch(files) as work:
        session = new_session(chapter, FakeClient(), work,
                              tool_environment={"HOME": str(work / "home")})
        with screen():
            blocks = chapter.memory_blocks(session)
        on_disk = (work / "AGENTS.md").read_text(encoding="utf-8")
        return work, [block["text"] for block in blocks], on_disk


def check(code):
    chapter = load(code)
    work, texts, on_disk = sent(chapter, {"AGENTS.md": WRITTEN})
    marked = f'<file path="{work / "AGENTS.md"}">\n{SENT}\n</file>'
    expect_equal(texts, [f"{chapter.MEMORY_INTRO}\n\n{marked}"],
                 "The memory block should hold AGENTS.md without its <!-- ... --> comments, each "
                 "with the newline right after it; an unclosed <!-- stays.")
    expect_equal(on_disk, WRITTEN, "AGENTS.md itself should not change.")
    work, texts, _ = sent(chapter, {"AGENTS.md": "Plain.\n"})
    expect_equal(texts, [f'{chapter.MEMORY_INTRO}\n\n<file path="{work / "AGENTS.md"}">\n'
                         'Plain.\n</file>'],
                 "A file without comments should be sent as it is.")


def test_exercise():
    run(check, CODE)
