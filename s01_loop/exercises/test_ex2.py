"""Exercise 2: Count the tool calls of a turn.

Task: A turn can run many commands before the model answers, and the answer alone does not say
how many. After the model's last reply of a turn that ran tools, print one line,
`[3 tool calls in this turn]` (`[1 tool call in this turn]` for one), counting every tool call
that ran in this turn, in all its rounds. A turn that ran no tool prints nothing more, and the
model sees nothing new: the line is for the screen only.

Hint: A counter in `agent_loop`, set to zero before its loop and raised where the tools run.
"""

from pathlib import Path

from course.check import (
    FakeClient,
    assistant,
    expect_equal,
    load,
    new_session,
    reply,
    result,
    run,
    scratch,
    screen,
    text,
    tool_use,
    user,
)

CODE = Path(__file__).resolve().parent.parent / "code.py"


def echo(number):
    return tool_use(f"toolu_{number}", "bash", {"command": f"echo {number}"})


def echoed(number):
    return result(f"toolu_{number}", f"{number}\n[exit code: 0]")


def shown_call(number):
    return f"  > bash: echo {number}\n    {number}\n    [exit code: 0]\n"


def check(code):
    chapter = load(code)
    client = FakeClient(reply(echo(1), echo(2)), reply(text("Two done."), echo(3)),
                        reply(text("All done.")),
                        reply(echo(4)), reply(text("Done.")),
                        reply(text("Hello.")))
    with scratch() as work, screen() as first:
        session = new_session(chapter, client, work)
        chapter.run_turn(session, "go")
    expect_equal(first.text, shown_call(1) + shown_call(2) + "Two done.\n" + shown_call(3)
                 + "All done.\n[3 tool calls in this turn]\n",
                 "After the last reply of a turn that ran three tool calls, the screen does not "
                 "show the line [3 tool calls in this turn].")
    expect_equal(session.messages, [
        user(text("go")), assistant(echo(1), echo(2)), user(echoed(1), echoed(2)),
        assistant(text("Two done."), echo(3)), user(echoed(3)), assistant(text("All done.")),
    ], "The history is not the prompt, the rounds and the answer: the line is for the screen, "
       "not for the model.")
    with scratch() as work, screen() as second:
        session.workdir = work
        chapter.run_turn(session, "once more")
    expect_equal(second.text, shown_call(4) + "Done.\n[1 tool call in this turn]\n",
                 "A turn that ran one tool call does not end with [1 tool call in this turn]: "
                 "each turn counts from zero, and one call is singular.")
    with scratch() as work, screen() as third:
        session.workdir = work
        chapter.run_turn(session, "hi")
    expect_equal(third.text, "Hello.\n", "A turn that ran no tool shows more than its answer.")
    expect_equal(client.calls[-1]["messages"][-3:], [
        user(echoed(4)), assistant(text("Done.")), user(text("hi"))],
        "The next request does not hold exactly the history: the count must not reach the model.")


def test_exercise():
    run(check, CODE)
