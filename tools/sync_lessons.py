"""Re-sync the lessons with the code: transcripts from real runs, quotes from code.py.

    .venv/bin/python -m tools.sync_lessons [--transcripts] [--quotes] [CHAPTER ...]

With no option, both; with no CHAPTER, every lesson (name chapters to touch only their
README.md). Then review `git diff` and commit what is right. The What changed tables have their
own command: `.venv/bin/python -m course.changes --write`.

  --transcripts  runs every ```bash block that a ```text block follows, as tests/test_lessons.py
                 does, and writes its real output (normalized: $TMPDIR/sNN-xxxx, .../sNN_x/) into
                 the text block. A block cut with `...` keeps its cut (as many lines as before,
                 at the start or the end); a `^C` mark stays on the line that follows the
                 interrupt. A block cut in the middle is left for you, and named.
  --quotes       for each ```python quote that is no longer a run of code.py lines: each run
                 whose first and last lines still stand in code.py, in order, becomes the lines
                 between them as they are now. A run whose ends moved is left for you, and named.
"""

import argparse
import difflib
import sys
import tempfile
from pathlib import Path

from course import PRESENT, ROOT, lessons
from course.api import loopback_messages_api


def new_transcript(expected, actual):
    """The lines the text block should hold now, or None if they cannot be worked out."""
    gaps = [number for number, line in enumerate(expected) if lessons.is_gap(line)]
    interrupted = [line[2:] for line in expected if line.startswith("^C")]
    if gaps == []:
        lines = list(actual)
    elif gaps == [0]:
        lines = ["...", *actual[-(len(expected) - 1):]]
    elif gaps == [len(expected) - 1]:
        lines = [*actual[: len(expected) - 1], "..."]
    else:
        return None
    for mark in interrupted:
        if mark not in lines:
            return None
        lines[lines.index(mark)] = "^C" + mark
    return lines


def replace_block(path, block, lines):
    """Write `lines` as the body of a fenced block of the file, indented as its fence is."""
    text = path.read_text(encoding="utf-8").splitlines(keepends=True)
    fence = text[block.start]
    indent = fence[: len(fence) - len(fence.lstrip(" "))]
    body = [f"{indent}{line}".rstrip() + "\n" for line in lines]
    text[block.start + 1 : block.end - 1] = body
    path.write_text("".join(text), encoding="utf-8")


def sync_transcripts(chapters):
    # read again: a quote rewritten just now moves the blocks below it
    scripts = [script for script in lessons.all_scripts() if script.transcript is not None
               and script.where.split("/")[0] in chapters]
    with loopback_messages_api(lessons.live_answer) as (url, seen):
        runs = [lessons.Run(script, Path(tempfile.mkdtemp(prefix="sync-lessons-")), url, seen)
                for script in scripts]
        for run in runs:
            run.run()
    # bottom up, so that a block's line numbers hold while the ones below it change
    for run in sorted(runs, key=lambda run: -run.script.transcript.start):
        where, expected = run.script.transcript.where, run.script.expected
        if run.actual is None:
            print(f"{where}: not run ({'; '.join(run.problems)})")
            continue
        wanted = new_transcript(lessons.normalize("\n".join(expected)), run.actual)
        if wanted is None:
            print(f"{where}: cut in the middle or interrupted elsewhere; re-sync it by hand")
        elif wanted != expected:
            replace_block(ROOT / where.split(":")[0], run.script.transcript, wanted)
            print(f"{where}: rewrote the transcript")


def new_quote(block_lines, code):
    """The quote with each stale run replaced by the code between its first and last lines."""
    runs, cut_start, cut_end = lessons.split_runs(block_lines)
    fixed, position = [], 0
    for run in runs:
        exact = [at for at in range(position, len(code) - len(run) + 1)
                 if code[at : at + len(run)] == run]
        if exact:
            found = (exact[0], exact[0] + len(run))
        else:  # the region between the run's first and last lines most like the run
            regions = [(start, end + 1) for start in range(position, len(code))
                       if code[start] == run[0]
                       for end in range(start, min(len(code), start + 3 * len(run) + 10))
                       if code[end] == run[-1]]
            if not regions:
                return None
            found = max(regions, key=lambda region: difflib.SequenceMatcher(
                None, code[region[0] : region[1]], run).ratio())
        fixed.append(code[found[0] : found[1]])
        position = found[1] + 1
    lines = ["..."] if cut_start else []
    for number, run in enumerate(fixed):
        lines += (["..."] if number else []) + run
    return lines + (["..."] if cut_end else [])


def sync_quotes(chapters):
    for name in chapters:
        code = lessons.code_lines(name)
        for block in sorted(lessons.quotes(name), key=lambda block: -block.start):
            if lessons.where_runs_stand(block.lines, code) is None:
                continue
            wanted = new_quote(block.lines, code)
            if wanted is None or lessons.where_runs_stand(wanted, code) is not None:
                print(f"{block.where}: the ends of a run moved; re-sync it by hand")
                continue
            replace_block(ROOT / name / "README.md", block, wanted)
            print(f"{block.where}: rewrote the quote")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tools.sync_lessons",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--transcripts", action="store_true", help="rewrite the transcripts")
    parser.add_argument("--quotes", action="store_true", help="rewrite the stale quotes")
    parser.add_argument("chapters", nargs="*", metavar="CHAPTER", help="only these lessons")
    args = parser.parse_args(argv)
    chapters = args.chapters or lessons.LESSONS
    unknown = sorted(set(chapters) - set(PRESENT))
    if unknown:
        parser.error(f"no such chapter: {', '.join(unknown)}")
    both = not (args.transcripts or args.quotes)
    if args.quotes or both:
        sync_quotes(chapters)
    if args.transcripts or both:
        sync_transcripts(chapters)
    return 0


if __name__ == "__main__":
    sys.exit(main())
