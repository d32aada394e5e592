"""Exercise 1: Arguments by position.

Task: As in Claude Code, let a body place each word of the arguments: `$0` is the first word,
`$1` the second (split at white space), nothing when there are fewer; `$ARGUMENTS` stays the
whole text. Both the skill tool and `/NAME ARGS` do it, and a body that uses a `$N` gets no
`ARGUMENTS:` line.

Hint: `skill` and `skill_prompt` both call `fill_arguments`; fill the places before it, with
`re.sub` and a function.
"""

from pathlib import Path

from course.check import FakeClient, expect_equal, load, new_session, run, scratch, screen

CODE = Path(__file__).resolve().parent.parent / "code.py"
BODY = "Migrate $0 from $1 to $2 ($3 is empty); all of it: $ARGUMENTS\n"
SKILLS = {".agent/skills/migrate/SKILL.md": f"---\ndescription: Migrate.\n---\n{BODY}",
          ".agent/skills/plain/SKILL.md": "---\ndescription: Plain.\n---\nUse $1 only.\n"}


def check(code):
    chapter = load(code)
    with scratch(SKILLS) as work:
        session = new_session(chapter, FakeClient(), work, tool_environment={"HOME": str(work)})
        with screen():
            loaded = chapter.skill(session, "migrate", "SearchBar React  Vue")
            typed = chapter.skill_prompt(session, "/migrate Form Angular Svelte")
            plain = chapter.skill(session, "plain", "first second")
    expect_equal(loaded, "Migrate SearchBar from React to Vue ( is empty); all of it: "
                         "SearchBar React  Vue",
                 "The skill tool should put each argument in its place ($0, $1, $2; none for "
                 "$3) and the whole text for $ARGUMENTS.")
    expect_equal(typed, "Migrate Form from Angular to Svelte ( is empty); all of it: "
                        "Form Angular Svelte",
                 "/NAME ARGS should put each argument in its place too.")
    expect_equal(plain, "Use second only.",
                 "A body that uses $1 should get no ARGUMENTS: line at its end.")


def test_exercise():
    run(check, CODE)
