"""How far off s08's estimate of the context's size is, on a run recorded with --trace.

    .venv/bin/python s08_compact/code.py --trace play/s08.jsonl "..."   # live, with a key
    .venv/bin/python -m tools.context_estimate play/s08.jsonl

Before each model call, s08 puts the context's size at the last reply's usage (input, cache
read, cache written and output tokens) plus one token for every CHARS_PER_TOKEN (4) characters
the request gained since; before the first call and after a summary, all of it is that
estimate (`context_size`). The call's own reply then says what the request was: its input,
cache read and cache written tokens. For each call of the main agent this prints both, and
how far off the estimate was. Offline the usage is the script's own numbers, so only a live
trace measures the estimate.
"""

import json
import sys
from pathlib import Path

CHARS_PER_TOKEN = 4  # as s08_compact/code.py


def chars(request, messages=None):
    """The characters s08 counts of a request: system prompt, tools and history, as JSON."""
    messages = request["messages"] if messages is None else messages
    return len(json.dumps([request["system"], request["tools"], messages], ensure_ascii=False))


def used(usage, output=True):
    names = ["input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"]
    return sum(usage.get(name) or 0 for name in names + ["output_tokens"] * output)


def rows(calls):
    """(number, measured part, estimated part, what the reply says the request was)."""
    main = [(number, call) for number, call in enumerate(calls, 1) if "agent" not in call]
    before = None  # the loop call before, unless a summary came between
    for number, call in main:
        if "compaction" in call:  # a summary request: the next call starts from the summary
            before = None
            continue
        request, actual = call["request"], used(call["response"]["usage"], output=False)
        if before is None:
            yield number, 0, chars(request) // CHARS_PER_TOKEN, actual
        else:
            kept = request["messages"][len(before["request"]["messages"])]  # its reply, kept
            counted = chars(before["request"], [*before["request"]["messages"], kept])
            yield (number, used(before["response"]["usage"]),
                   (chars(request) - counted) // CHARS_PER_TOKEN, actual)
        before = call


def main(argv):
    if len(argv) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    calls = [json.loads(line) for line in Path(argv[0]).read_text().splitlines() if line.strip()]
    worst = 0
    for number, measured, estimated, actual in rows(calls):
        size = max(0, measured + estimated)
        off = size - actual
        worst = max(worst, abs(off), key=abs)
        print(f"call {number}: {measured:,} measured + {estimated:+,} estimated = {size:,}; "
              f"the reply says {actual:,}: off by {off:+,} ({off / max(actual, 1):+.1%})")
    print(f"the largest error: {worst:,} tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
