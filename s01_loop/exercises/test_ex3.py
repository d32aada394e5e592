"""Exercise 3: Keep the end of a long output.

Task: `run_bash` keeps the first `OUTPUT_LIMIT` bytes of a command's output, but a failing
build or test run says what went wrong at the end. Keep the first half and the last half
instead (5,000 bytes each), with `[output cut: N bytes in the middle]` on a line of its own
between them, where N counts the bytes left out. An output of at most `OUTPUT_LIMIT` bytes
stays whole, and a flood still cannot fill the memory: keep only the bytes you will show.

Hint: Besides the head, keep a tail of at most 5,000 bytes while you read, and count the rest.
"""

from pathlib import Path

from course.check import expect_equal, load, new_session, run, scratch

CODE = Path(__file__).resolve().parent.parent / "code.py"


def x_bytes(count):
    return f"head -c {count} /dev/zero | tr '\\0' x"


def cut_in_the_middle(data, half=5000):
    left_out = len(data) - 2 * half
    middle = f"\n[output cut: {left_out} bytes in the middle]\n"
    return data[:half] + middle + data[-half:]


def check(code):
    chapter = load(code)
    numbers = "".join(f"{n}\n" for n in range(1, 3001))
    with scratch() as work:
        session = new_session(chapter, None, work)
        long_run = chapter.run_bash(session, "seq 1 3000")
        at_limit = chapter.run_bash(session, x_bytes(10_000))
        one_more = chapter.run_bash(session, x_bytes(10_001))
        flood = chapter.run_bash(session, x_bytes(3_000_000))
    expect_equal(long_run, cut_in_the_middle(numbers).rstrip() + "\n[exit code: 0]",
                 "run_bash does not keep the first 5,000 and the last 5,000 bytes of a long "
                 "output, with the cut marked in the middle.")
    expect_equal(at_limit, "x" * 10_000 + "\n[exit code: 0]",
                 "An output of exactly OUTPUT_LIMIT bytes is no longer kept whole.")
    expect_equal(one_more, cut_in_the_middle("x" * 10_001) + "\n[exit code: 0]",
                 "An output one byte over the limit is not cut by that one byte.")
    expect_equal(flood, cut_in_the_middle("x" * 3_000_000) + "\n[exit code: 0]",
                 "A flood of 3,000,000 bytes is not cut to its first and last 5,000.")


def test_exercise():
    run(check, CODE)
