"""Exercise 3: The skill's own folder.

Task: A skill's folder may hold a script or a template its body names. As Claude Code does with
`${CLAUDE_SKILL_DIR}`, replace each `${SKILL_DIR}` in the body (from the skill tool and from
`/NAME ARGS`) with the absolute path of the skill's folder.

Hint: each skill's `path` is its SKILL.md; its parent is the folder.
"""

from pathlib import Path

from course.check import FakeClient, expect_equal, load, new_session, run, scratch, screen

CODE = Path(__file__).resolve().parent.parent / "code.py"
SKILL = ("---\ndescription: Render a chart.\n---\n"
         "Run `python3 ${SKILL_DIR}/render.py $ARGUMENTS`; the template is "
         "${SKILL_DIR}/chart.html.\n")


def check(code):
    chapter = load(code)
    with scratch({".agent/skills/chart/SKILL.md": SKILL, ".agent/skills/chart/render.py": ""}) \
            as work:
        session = new_session(chapter, FakeClient(), work, tool_environment={"HOME": str(work)})
        with screen():
            loaded = chapter.skill(session, "chart", "data.csv")
            typed = chapter.skill_prompt(session, "/chart sales.csv")
        folder = (work / ".agent/skills/chart").resolve()
    wanted = (f"Run `python3 {folder}/render.py data.csv`; the template is "
              f"{folder}/chart.html.")
    expect_equal(loaded, wanted, "The skill tool should replace each ${SKILL_DIR} with the "
                                 "absolute path of the skill's folder.")
    expect_equal(typed, wanted.replace("data.csv", "sales.csv"),
                 "/NAME ARGS should replace ${SKILL_DIR} too.")


def test_exercise():
    run(check, CODE)
