"""Exercise 4: How many results stay.

Task: The newest 3 tool results stay when old ones are cleared: `KEEP` is fixed. Let the user
choose, with a flag beside `--clear-at`: `--keep N`, a whole number, 1 or more (as `--max-calls`
takes), 3 by default. The session holds it (`session.keep`, `KEEP` unless given), and the loop
clears every result but the newest `session.keep` when the context passes `--clear-at`.

Hint: Follow `--clear-at` from `parse_args` through `make_session` into `Session`; then
`make_room` has one call of `clear_old_results` to give it to.
"""

from pathlib import Path

from course.check import (
    FakeClient,
    expect,
    expect_equal,
    load,
    new_session,
    reply,
    run,
    scratch,
    screen,
    text,
    tool_use,
)

CODE = Path(__file__).resolve().parent.parent / "code.py"
CLEARED = "[Cleared to save context: "


def with_usage(message, tokens):
    message.usage.input_tokens = tokens
    return message


def check(code):
    chapter = load(code)
    with scratch({"b.txt": "b" * 600}) as work:
        args = chapter.parse_args(["--workdir", str(work), "--offline"])
        expect_equal(getattr(args, "keep", None), 3, "python code.py has no --keep yet, whose "
                     "default is 3.")
        args = chapter.parse_args(["--workdir", str(work), "--offline", "--keep", "5"])
        with screen():
            session, _ = chapter.make_session(args)
        expect_equal(getattr(session, "keep", None), 5,
                     "With --keep 5, the session should hold keep=5.")
        try:
            with screen():
                chapter.parse_args(["--keep", "0"])
            refused = False
        except SystemExit as stopped:
            refused = stopped.code == 2
        expect(refused, "--keep 0 should be refused, as --max-calls 0 is: 1 or more.")

        reads = [tool_use(f"r{n}", "read_file", {"path": "b.txt"}) for n in range(1, 5)]
        client = FakeClient(*[with_usage(reply(read), 1000 * n) for n, read in enumerate(reads, 1)],
                            with_usage(reply(text("Read.")), 6000))
        session = new_session(chapter, client, work, clear_at=4000, compact_at=9000, keep=1)
        with screen():
            chapter.run_turn(session, "Read b.txt four times.")
    fifth = client.calls[4]["messages"]
    cleared = [block["content"].startswith(CLEARED) for message in fifth[2::2]
               for block in message["content"] if block["type"] == "tool_result"]
    expect_equal(cleared, [True, True, True, False],
                 "With keep=1, past --clear-at every result but the newest should be cleared.")


def test_exercise():
    run(check, CODE)
