"""Exercise 2: accept_edits makes folders and files too.

Task: In `accept_edits` mode, file edits run without a question, but `mkdir -p build/out` still
asks. Let `mkdir` and `touch` run without a question in that mode when the command is one plain
command whose arguments are options or relative paths inside the workdir. Everything else still
asks: a chain (`mkdir a && rm -rf b`), a redirection, an argument with `/` at its start, `~`,
`..` or `$`, and a path into `.agent/` (that check comes first, in every mode). In `default`
mode they ask, as before.

Hint: Write a small `is_workdir_edit(command, workdir)` beside `is_read_only`, with
`plain_commands` and `path_inside`, and use it where `check_permission` lets `accept_edits`
allow the edit tools.
"""

from pathlib import Path

from course.check import (
    FakeClient,
    answers,
    expect,
    expect_equal,
    load,
    new_session,
    reply,
    result,
    run,
    scratch,
    text,
    tool_use,
)

CODE = Path(__file__).resolve().parent.parent / "code.py"
ALLOWED = ["mkdir -p build/out", "touch notes.txt", "mkdir docs src/lib"]
ASKED = ["mkdir /tmp/x", "touch ../x", "mkdir a && rm -rf b", "touch ~/x", "touch $HOME/x",
         "touch .agent/settings.json", "mkdir x > log", "rm -rf build", "touch a; ls"]


def check(code):
    chapter = load(code)
    with scratch() as work:
        session = new_session(chapter, FakeClient(), work, mode="accept_edits")
        for command in ALLOWED:
            decision = chapter.check_permission(session, "bash", {"command": command})[0]
            expect_equal(decision, "allow", f"In accept_edits mode, {command!r} still asks.")
        for command in ASKED:
            decision = chapter.check_permission(session, "bash", {"command": command})[0]
            expect_equal(decision, "ask", f"In accept_edits mode, {command!r} no longer asks.")
        session.mode = "default"
        decision = chapter.check_permission(session, "bash", {"command": "mkdir x"})[0]
        expect_equal(decision, "ask", "In default mode, 'mkdir x' no longer asks.")
    call = tool_use("toolu_1", "bash", {"command": "mkdir -p build/out"})
    client = FakeClient(reply(text("Making it."), call), reply(text("Done.")))
    with scratch() as work, answers() as keyboard:
        session = new_session(chapter, client, work, mode="accept_edits")
        chapter.run_turn(session, "make build/out")
        made = (work / "build" / "out").is_dir()
    expect_equal(session.messages[2]["content"], [result("toolu_1", "(no output)\n"
                                                         "[exit code: 0]")],
                 "In a turn in accept_edits mode, mkdir -p build/out does not run.")
    expect((keyboard.asked, made) == ([], True), "mkdir -p build/out asked, or made nothing.")


def test_exercise():
    run(check, CODE)
