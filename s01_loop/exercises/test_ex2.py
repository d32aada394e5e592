"""Exercise 2: Stop a runaway loop.

Task: A model that asks for a tool in every reply never lets `agent_loop` end. Add
`MAX_TOOL_ROUNDS = 20` and stop after that many tool rounds in one turn: once the last round's
results are in the history, print `[Stopped after 20 tool rounds in one turn (MAX_TOOL_ROUNDS).]`
and return without calling the model again. The history stays valid, so the next prompt goes
on from there, and each turn counts its rounds from zero.

Hint: Count the rounds in `agent_loop`, next to its `continue`.
"""

from pathlib import Path

from course.check import (
    FakeClient,
    assistant,
    expect_equal,
    load,
    need,
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


def check(code):
    chapter = load(code)
    (limit,) = need(chapter, "MAX_TOOL_ROUNDS")
    expect_equal(limit, 20, "MAX_TOOL_ROUNDS should be 20.")
    chapter.MAX_TOOL_ROUNDS = 3  # three rounds are enough to see the limit work
    client = FakeClient(*(reply(echo(n)) for n in range(1, 6)), reply(text("Done.")))
    with scratch() as work, screen() as shown:
        session = new_session(chapter, client, work)
        chapter.run_turn(session, "go")
    rounds = [message for n in (1, 2, 3) for message in (assistant(echo(n)), user(echoed(n)))]
    expect_equal(len(client.calls), 3, "After 3 rounds (MAX_TOOL_ROUNDS = 3) the loop still "
                 "calls the model: stop it once the third round's results are in.")
    expect_equal(session.messages, [user(text("go")), *rounds],
                 "The history after the stop is not the prompt and the three rounds.")
    lines = [f"  > bash: echo {n}\n    {n}\n    [exit code: 0]\n" for n in (1, 2, 3)]
    expect_equal(shown.text, "".join(lines) + "[Stopped after 3 tool rounds in one turn "
                 "(MAX_TOOL_ROUNDS).]\n", "The screen does not end with the line that says why "
                 "the loop stopped.")
    with scratch() as work, screen():
        session.workdir = work
        chapter.run_turn(session, "go on")
    expect_equal(len(client.calls), 6, "The next turn stops too early: each turn counts its "
                 "rounds from zero.")
    expect_equal(client.calls[3]["messages"][-1], user(echoed(3), text("go on")),
                 "The next prompt does not join the user turn that holds the last results.")
    expect_equal(session.messages[-1], assistant(text("Done.")),
                 "The next turn does not end with the model's answer.")


def test_exercise():
    run(check, CODE)
