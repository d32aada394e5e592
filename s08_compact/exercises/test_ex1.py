"""Exercise 1: A budget for the results that stay.

Task: The newest 3 results stay whatever their size. Give them a budget, `KEEP_CHARS` (20,000
characters): walking back from the newest result, a result stays only while the ones that stay,
it included, hold at most KEEP_CHARS characters, and never more than `keep` of them; the newest
stays whatever its size (when `keep` is 1 or more). Older results are cleared as now.

Hint: in `clear_old_results`, count back from the end, adding up `content_chars`.
"""

from pathlib import Path

from course.check import assistant, expect_equal, load, need, result, run, text, tool_use, user

CODE = Path(__file__).resolve().parent.parent / "code.py"


def cleared(path, size):
    return (f"[Cleared to save context: the result of read_file: {path}, {size:,} characters. "
            "Call the tool again if you need it.]")


def reads(*sizes):
    """A history of one read_file call a turn, of files of these sizes, oldest first."""
    messages = [user(text("Read the files."))]
    for number, size in enumerate(sizes, 1):
        messages += [assistant(tool_use(f"r{number}", "read_file", {"path": f"{number}.txt"})),
                     user(result(f"r{number}", "x" * size))]
    return messages


def contents(messages):
    return [block["content"] if block["content"].startswith("[") else len(block["content"])
            for message in messages[2::2] for block in message["content"]]


def check(code):
    chapter = load(code)
    (budget,) = need(chapter, "KEEP_CHARS")
    expect_equal(budget, 20_000, "KEEP_CHARS should be 20,000 characters.")

    messages = reads(5000, 8000, 15_000, 6000)
    said = chapter.clear_old_results(messages)
    expect_equal(contents(messages), [cleared("1.txt", 5000), cleared("2.txt", 8000),
                                      cleared("3.txt", 15_000), 6000],
                 "Of four results of 5,000, 8,000, 15,000 and 6,000 characters, only the newest "
                 "fits in KEEP_CHARS with the ones after it: the three others are cleared.")
    expect_equal(said, (3, 28_000), "clear_old_results should return (results cleared, "
                 "characters cleared).")

    messages = reads(2000, 30_000)
    chapter.clear_old_results(messages)
    expect_equal(contents(messages), [cleared("1.txt", 2000), 30_000],
                 "The newest result stays whatever its size, and the one before it, which no "
                 "longer fits in KEEP_CHARS, is cleared.")

    messages = reads(1000, 1000, 1000, 1000, 1000)
    chapter.clear_old_results(messages)
    expect_equal(contents(messages), [cleared("1.txt", 1000), cleared("2.txt", 1000),
                                      1000, 1000, 1000],
                 "Small results still stay only as the newest 3: `keep` is still the most.")

    messages = reads(1000, 1000)
    chapter.clear_old_results(messages, keep=0)
    expect_equal(contents(messages), [cleared("1.txt", 1000), cleared("2.txt", 1000)],
                 "With keep=0 nothing stays, not even the newest result.")


def test_exercise():
    run(check, CODE)
