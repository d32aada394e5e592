"""Stage s03: a question before a change.

Its contract is its lesson's section "Build it yourself"; each check is named by the rule
it judges."""

import json

from course.stages import Exchange, Fail
from course.stages.common import NOTES, YES, check, text, use

ASK_YES = Exchange("ask_yes", "Change some files (<<prompt>>).", [
    [use("secret", "write_file", path="<<secret>>.txt", content="s"),
     use("write", "write_file", path="<<written>>.txt", content="A\n"),
     use("edit", "edit_file", path="<<notes>>.md", old_string="<<beta>>",
         new_string="<<gamma>>"),
     use("touch", "bash", command="touch <<made>>.txt"),
     use("dot", "write_file", path="./<<secret>>.txt", content="s"),
     use("absolute", "write_file", path="{root}/work/<<secret>>.txt", content="s"),
     use("globbed", "glob", pattern="*.md")],
    [text("Changed.")],
], stdin=YES, files={**NOTES, ".agent/settings.json": json.dumps(
    {"permissions": {"deny": ["write_file(<<secret>>.txt)", "glob"]}})})


@check(ASK_YES, "y to the question runs the call")
def yes_runs(run):
    for key in ("write", "edit", "touch"):
        run.ok(1, key)
    for name, expected in (("<<written>>.txt", "A\n"), ("<<notes>>.md", "<<alpha>>\n<<gamma>>\n"),
                           ("<<made>>.txt", "")):
        run.expect_file(name, expected, "After y")


@check(ASK_YES, "the question shows the path or the command")
def question_shows_call(run):
    run.printed("<<written>>.txt", "<<notes>>.md", "touch <<made>>.txt",
                why="a question must show the path, or the whole command, that it asks about")


@check(ASK_YES, "a deny rule in .agent/settings.json refuses the call, "
       "without asking")
def deny_rule(run):
    run.refused(1, "secret", 'the rule "write_file(<<secret>>.txt)" denies it')
    run.refused(1, "globbed", 'the rule "glob", a tool name alone, denies every call of glob')
    run.expect_file("<<secret>>.txt", None, "After a write the deny rule "
                    "write_file(<<secret>>.txt) forbids")


@check(ASK_YES, "a deny rule on a path covers the file however the "
       "path is spelled (./x, the absolute path)")
def deny_spellings(run):
    for key in ("dot", "absolute"):
        run.refused(1, key, 'the rule "write_file(<<secret>>.txt)" denies that file, whatever '
                    "the spelling")
    run.expect_file("<<secret>>.txt", None, "After writes to ./<<secret>>.txt and its absolute "
                    "path", ": the deny rule write_file(<<secret>>.txt) covers it, however its "
                    "path is spelled")


ASK_NO_SETTINGS = {"permissions": {
    "deny": ["read_file(<<private>>.txt)", "bash(touch <<blocked>>*)"],
    "allow": ["bash(touch *)"]}}

# The calls that must not ask come first: a program that asks there reads the n. Then n, an
# empty line, and the end of stdin (EOF) for the rest.
ASK_NO = Exchange("ask_no", "Look around, and change things if you may (<<prompt>>).", [
    [use("read", "read_file", path="<<notes>>.md"),
     use("glob", "glob", pattern="*.md"),
     use("ls", "bash", command="ls"),
     use("cat", "bash", command="cat <<notes>>.md"),
     use("allowed", "bash", command="touch <<allowed>>.txt"),
     use("blocked", "bash", command="touch <<blocked>>.txt"),
     use("private", "read_file", path="./<<private>>.txt"),
     use("no", "write_file", path="<<refused>>.txt", content="B\n"),
     use("empty", "edit_file", path="<<notes>>.md", old_string="<<beta>>",
         new_string="<<gamma>>"),
     use("eof", "bash", command="rm <<kept>>.txt"),
     use("chain", "bash", command="ls; rm <<chained>>.txt"),
     use("and", "bash", command="cat <<notes>>.md && touch <<joined>>.txt")],
    [text("Looked; changed nothing.")],
], stdin="n\n\n", files={**NOTES, "<<private>>.txt": "<<hidden>>\n", "<<kept>>.txt": "k\n",
                          "<<chained>>.txt": "c\n",
                          ".agent/settings.json": json.dumps(ASK_NO_SETTINGS)})


@check(ASK_NO, "n or an empty line to the question: the call does not "
       "run, is_error")
def no_refuses(run):
    run.refused(1, "no", "the user answered n")
    run.expect_file("<<refused>>.txt", None, "After n")
    run.refused(1, "empty", "the user answered with an empty line, which counts as no")
    run.expect_file("<<notes>>.md", NOTES["<<notes>>.md"],
                    "After an empty line (which counts as no)")


@check(ASK_NO, "no answer at all (EOF): the call does not run, is_error")
def eof_refuses(run):
    run.refused(1, "eof", "stdin had ended (EOF), which counts as no")
    run.expect_file("<<kept>>.txt", "k\n", "After rm <<kept>>.txt, asked when stdin had ended "
                    "(EOF counts as no)")


@check(ASK_NO, "a chain that holds a changing command (ls; rm x, cat x "
       "&& touch y) is not read-only: it asks")
def chains_ask(run):
    for key in ("chain", "and"):
        run.refused(1, key, "a chain with a changing command in it asks, and stdin had ended")
    why = (": a command is read-only only if every part of it is, so it asks (and stdin had "
           "ended)")
    run.expect_file("<<chained>>.txt", "c\n", f"After {run.call(1, 'chain')}", why)
    run.expect_file("<<joined>>.txt", None, f"After {run.call(1, 'and')}", why)


@check(ASK_NO, "read_file, glob and a read-only command (ls, cat FILE) "
       "run without asking")
def reads_run(run):
    run.ok(1, "read", "<<alpha>>")
    run.ok(1, "glob", "<<notes>>.md")
    run.ok(1, "ls", "<<notes>>.md")
    run.ok(1, "cat", "<<alpha>>")


@check(ASK_NO, "an allow rule spares the question")
def allow_rule(run):
    run.ok(1, "allowed")
    run.expect_file("<<allowed>>.txt", "", "After touch <<allowed>>.txt", ": the allow rule "
                    "bash(touch *) lets it run without a question")


@check(ASK_NO, "a call that a deny rule and an allow rule both cover is "
       "denied")
def deny_wins(run):
    run.refused(1, "blocked", 'the deny rule "bash(touch <<blocked>>*)" covers it, and deny '
                'wins over the allow rule "bash(touch *)"')
    run.expect_file("<<blocked>>.txt", None, "After touch <<blocked>>.txt", ": the deny rule "
                    "bash(touch <<blocked>>*) wins over the allow rule bash(touch *)")


@check(ASK_NO, "a deny rule covers read_file too, and ./x is x")
def deny_read(run):
    said = run.refused(1, "private", 'the rule "read_file(<<private>>.txt)" denies it')
    if run.v("<<hidden>>") in said:
        raise Fail(f"The refused {run.call(1, 'private')} still returned the file's text.")
