"""Exercise 2: The subagent's own model.

Task: A search needs no planner's model. Let the environment variable `SUBAGENT_MODEL_ID` name
the subagent's model: each of its requests names it, and the parent's name the parent's model
(`MODEL_ID`). Unset, empty or only spaces, the subagent uses the parent's model, as now; spaces
around a name do not count.

Hint: `agent` makes the child with `replace`; the model is a session field, and `build_request`
reads it.
"""

import os
from pathlib import Path

from course.check import (
    MODEL,
    FakeClient,
    expect_equal,
    load,
    new_session,
    reply,
    run,
    scratch,
    text,
    tool_use,
)

CODE = Path(__file__).resolve().parent.parent / "code.py"
SMALL = "check-small-model"


def models(chapter, setting):
    """The model each request of one delegated prompt names, with SUBAGENT_MODEL_ID set to
    `setting` (None: unset)."""
    client = FakeClient(
        reply(tool_use("toolu_a", "agent", {"description": "Find greet",
                                            "prompt": "Where is greet defined?"})),
        reply(text("Looking."), tool_use("toolu_l", "bash", {"command": "ls"})),
        reply(text("In greet.py.")), reply(text("Done.")))
    before = os.environ.pop("SUBAGENT_MODEL_ID", None)
    if setting is not None:
        os.environ["SUBAGENT_MODEL_ID"] = setting
    try:
        with scratch({"greet.py": "def greet():\n    pass\n"}) as work:
            chapter.run_turn(new_session(chapter, client, work), "Find greet.")
    finally:
        os.environ.pop("SUBAGENT_MODEL_ID", None)
        if before is not None:
            os.environ["SUBAGENT_MODEL_ID"] = before
    return [request["model"] for request in client.calls]


def check(code):
    chapter = load(code)
    expect_equal(models(chapter, SMALL), [MODEL, SMALL, SMALL, MODEL],
                 f"With SUBAGENT_MODEL_ID={SMALL}, the subagent's requests should name that "
                 "model, and the parent's its own.")
    expect_equal(models(chapter, f"  {SMALL} "), [MODEL, SMALL, SMALL, MODEL],
                 "Spaces around the name in SUBAGENT_MODEL_ID should not count.")
    for setting in (None, "", "   "):
        expect_equal(models(chapter, setting), [MODEL] * 4,
                     f"With SUBAGENT_MODEL_ID {'unset' if setting is None else repr(setting)}, "
                     "the subagent should use the parent's model.")


def test_exercise():
    run(check, CODE)
