"""Exercise 3: Commands the user lets plan mode run.

Task: Running the tests changes nothing the plan is about, yet plan mode refuses
`python3 -m unittest -q`. Let the settings name what plan mode lets through, in a new list
beside deny, ask and allow: `{"permissions": {"plan": ["bash(python3 -m unittest*)"]}}`. A call
that a `plan` rule covers passes plan mode, and then the usual checks decide: deny and ask
rules, the settings question, the mode (so with an allow rule too, it runs without a
question). A chain is never covered (as for allow rules), and outside plan mode the list does
nothing. The unknown-key message names the new key: `the keys are deny, ask, allow, plan`.

Hint: `check_settings` knows the keys; `matching_rule(session, "plan", ...)` can do the
matching if it treats "plan" like "allow"; the plan-mode check is the first in
`check_permission`.
"""

import json
from pathlib import Path

from course.check import (
    FakeClient,
    Missing,
    expect,
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
TESTS = "bash(python3 -m unittest*)"
PLAN_DENIED = ("deny", "Denied: plan mode is on, and bash may change things. Only reading tools "
                       "and read-only bash run now. Finish the plan and submit it with "
                       "exit_plan_mode.")
TEST_FILE = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_it(self):\n" \
            "        self.assertTrue(True)\n"


def check(code):
    chapter = load(code)
    settings = {"permissions": {"plan": [TESTS], "allow": [TESTS]}}
    files = {".agent/settings.json": json.dumps(settings), "test_it.py": TEST_FILE}
    with scratch(files) as work:
        try:
            loaded = chapter.load_settings(work)
        except chapter.SettingsError as error:
            raise Missing(f"A settings file with a plan list does not load yet: {error}.") from None
        try:
            chapter.check_settings({"permissions": {"plans": [TESTS]}})
            raise Missing("A settings file with an unknown key, plans, is no longer refused.")
        except chapter.SettingsError as error:
            expect_equal(str(error), "\"permissions\" has an unknown key 'plans'; the keys are "
                         "deny, ask, allow, plan", "The unknown-key message does not name plan.")
        call = tool_use("toolu_1", "bash", {"command": "python3 -m unittest -q"})
        client = FakeClient(reply(text("Testing first."), call), reply(text("They pass.")))
        session = new_session(chapter, client, work, settings=loaded, plan_mode=True)
        chapter.run_turn(session, "test")
        ran = session.messages[2]["content"][0]
        expect((ran.get("is_error"), ran["content"].endswith("\nOK\n[exit code: 0]")) ==
               (None, True), "In plan mode, python3 -m unittest -q still does not run with the "
               f"rule {TESTS} in plan and allow; it gave: {ran['content'][:200]!r}.")

        def decide(command, **rules):
            session.settings = {"permissions": rules}
            return chapter.check_permission(session, "bash", {"command": command})

        expect_equal(decide("python3 -m unittest -q", plan=[TESTS], allow=[TESTS]),
                     ("allow", f"rule {TESTS!r}"), "A plan rule with an allow rule does not run.")
        expect_equal(decide("python3 -m unittest -q", plan=[TESTS])[0], "ask",
                     "A plan rule alone should let the call pass plan mode, then ask as usual.")
        expect_equal(decide("python3 -m unittest -q && touch x", plan=[TESTS], allow=[TESTS]),
                     PLAN_DENIED, "A chain slips through a plan rule; it must be refused.")
        expect_equal(decide("python3 greet.py", plan=[TESTS], allow=["bash(python3*)"]),
                     PLAN_DENIED, "A call no plan rule covers is no longer refused in plan mode.")
        expect_equal(decide("python3 -c pass", plan=["bash(python3*)"],
                            deny=["bash(python3 -c*)"]),
                     ("deny", "Denied by the rule 'bash(python3 -c*)' in .agent/settings.json."),
                     "A plan rule lifts a deny rule; deny must still win.")
        session.plan_mode = False
        expect_equal(decide("python3 -m unittest -q", plan=[TESTS])[0], "ask",
                     "Out of plan mode, a plan rule alone should not let a call run unasked.")


def test_exercise():
    run(check, CODE)
