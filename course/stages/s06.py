"""Stage s06: plan mode, and asking the user.

Its contract is its lesson's section "Build it yourself"; each check is named by the rule
it judges."""


from course.stages import Exchange, Fail, cut
from course.stages.common import NOTES, check, text, use

PLAN = "# Plan\n\n1. Write <<plan_line>>.txt\n"
CHANGING = ("write_file", "edit_file")

PLAN_YES = Exchange("plan_yes", "Plan first, then change (<<prompt>>).", [
    [use("write", "write_file", path="<<x>>.txt", content="x"),
     use("touch", "bash", command="touch <<y>>.txt")],
    [use("exit", "exit_plan_mode", plan=PLAN)],
    [text("Approved; starting.")],
], stdin="y\n", files=NOTES, args=("--plan",))


@check(PLAN_YES, "--plan starts in plan mode: write_file and edit_file "
       "are not offered")
def plan_tools(run):
    offered = run.tools(1)
    if any(name in offered for name in CHANGING) or "exit_plan_mode" not in offered:
        raise Fail(f"With --plan, request 1 offers {offered}; it should offer exit_plan_mode "
                   "and the reading tools, and not write_file or edit_file.")


@check(PLAN_YES, "in plan mode a changing call that comes anyway is "
       "refused, without asking")
def plan_refuses(run):
    run.refused(1, "write", "plan mode refuses a write")
    run.refused(1, "touch", "plan mode refuses a command that changes things")
    for name in ("<<x>>.txt", "<<y>>.txt"):
        run.expect_file(name, None, "In plan mode", ": plan mode changes nothing")


@check(PLAN_YES, "exit_plan_mode shows the plan and asks; y writes it "
       "under .agent/plans/ and the changing tools come back", follows=["plan_refuses"])
def plan_approved(run):
    run.printed("<<plan_line>>.txt", why="exit_plan_mode shows the plan before it asks")
    run.ok(2, "exit")
    folder = run.workdir / ".agent" / "plans"
    plans = sorted(folder.iterdir()) if folder.is_dir() else []
    if len(plans) != 1 or plans[0].read_text(errors="replace").strip() != run.v(PLAN).strip():
        said = plans[0].read_text(errors="replace") if len(plans) == 1 else None
        raise Fail(f".agent/plans/ holds {[plan.name for plan in plans]}"
                   f"{f' ({cut(said)!r})' if said else ''}; after y it should hold one file "
                   "with the plan.")
    offered = run.tools(3)
    if not all(name in offered for name in CHANGING):
        raise Fail(f"After y, request 3 offers {offered}; write_file and edit_file should "
                   "come back.")


def options(*labels):
    return [{"label": label, "description": f"Option {label}."} for label in labels]


QUESTIONS = [
    {"question": "Which database?", "header": "Database", "multiSelect": False,
     "options": options("<<sqlite>>", "<<postgres>>")},
    {"question": "What name?", "header": "Name", "multiSelect": False,
     "options": options("<<app>>", "<<tool>>")},
    {"question": "Which extras?", "header": "Extras", "multiSelect": True,
     "options": options("<<docs>>", "<<tests>>", "<<ci>>")},
]

# The answers to the questions, then n to the plan, then the end of stdin (EOF), which rejects
# the second plan too. A program that wrongly leaves plan mode on n asks before the write that
# follows, and reads EOF, a no: it is told by the tools it offers next.
PLAN_NO = Exchange("plan_no", "Ask me, plan, and hear no (<<prompt>>).", [
    [use("ask", "ask_user_question", questions=QUESTIONS)],
    [use("rejected", "exit_plan_mode", plan=PLAN),
     use("after", "write_file", path="<<x>>.txt", content="x")],
    [use("again", "exit_plan_mode", plan=PLAN)],
    [text("I will wait.")],
], stdin="2\n<<own>>\n1,3\nn\n", files=NOTES, args=("--plan",))


@check(PLAN_NO, "ask_user_question shows the questions and returns "
       "the answers typed (a number picks an option; 1,3 picks two of a multiSelect question), "
       "without s03's question")
def ask_user_question(run):
    run.printed("Which database?", "<<sqlite>>", "<<postgres>>", "What name?", "Which extras?",
                why="ask_user_question shows each question with its options")
    run.ok(1, "ask", "<<postgres>>", "<<own>>", "<<docs>>", "<<ci>>")


@check(PLAN_NO, "n and the end of stdin keep plan mode: no plan file, no change; the turn "
       "ends, or the model gets an is_error result", follows=["ask_user_question"])
def plan_rejected(run):
    folder = run.workdir / ".agent" / "plans"
    if folder.is_dir() and any(folder.iterdir()):
        raise Fail(f"After n, then the end of stdin, .agent/plans/ holds "
                   f"{sorted(p.name for p in folder.iterdir())}; a rejected plan is not saved "
                   "(n, an empty line and the end of stdin reject it).")
    run.expect_file("<<x>>.txt", None, f"After n, and then {run.call(2, 'after')}",
                    ": plan mode stays on, so the write is refused")
    if len(run.requests) >= 3:  # the program went on after the rejection: what did it say?
        run.refused(2, "rejected", "the user answered n")
        offered = run.tools(3)
        if any(name in offered for name in CHANGING):
            raise Fail(f"After n, request 3 offers {offered}; plan mode stays on, so not "
                       "write_file or edit_file.")
    if len(run.requests) >= 4:  # the second plan met the end of stdin: no answer, a no
        run.refused(3, "again", "stdin had ended: no answer, which rejects the plan")
        offered = run.tools(4)
        if any(name in offered for name in CHANGING):
            raise Fail(f"After the end of stdin, request 4 offers {offered}; no answer rejects "
                       "the plan, so plan mode stays on: not write_file or edit_file.")
