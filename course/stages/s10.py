"""Stage s10: skills, a catalog in every request and a body only when it is used.

Its contract is its lesson's section "Build it yourself"; each check is named by the rule
it judges.

The skills are the project's, in the workdir's .agent/skills/; where the catalog lives (the
system prompt, a tool's description, a message) is the learner's, so the checks look for it
in the whole request."""

import json

from course.stages import Exchange, Fail, cut
from course.stages.common import YES, check, text, use
from course.stages.s08 import SMALL, spread, thresholds, usage

SKILLS_DIR = ".agent/skills"
# Three skills: one with a description and $ARGUMENTS, one without a description (its body's
# first paragraph stands for it), one only the user may start.
SKILL_FILES = {
    f"{SKILLS_DIR}/<<one>>/SKILL.md": (
        "---\nname: <<one>>\ndescription: <<one_said>> for a change.\n---\n"
        "Follow <<one_body>> for $ARGUMENTS, then say done.\n"),
    f"{SKILLS_DIR}/<<two>>/SKILL.md": (
        "---\nname: <<two>>\n---\n<<two_first>> before a change.\n\n"
        "Then <<two_body>>, step by step.\n"),
    f"{SKILLS_DIR}/<<three>>/SKILL.md": (
        "---\nname: <<three>>\ndescription: <<three_said>> a release.\n"
        "disable-model-invocation: true\n---\nCut <<three_body>> release $ARGUMENTS now.\n"),
}
BODIES = ("<<one_body>>", "<<two_body>>", "<<three_body>>")
LOADED = "Follow <<one_body>> for <<args>>, then say done."


def skill(key, **tool_input):
    """A call of the tool skill (use() takes the tool's name as its `name`)."""
    return {"type": "tool_use", "id": f"<<id_{key}>>", "name": "skill", "input": tool_input}


def skills_replies(draw):
    """Reply 1 loads <<one>> with arguments; reply 2 loads it again, asks for a name there is
    not and for the user's skill; reply 3 is past --compact-at, so request 4 is a summary
    request, reply 4 the summary, and request 5 starts the new history; reply 5 ends it."""
    _, compact_at = thresholds(draw)
    return [
        usage(SMALL, text("A skill fits."),
              skill("load", name="<<one>>", arguments="<<args>>")),
        usage(SMALL, skill("again", name="<<one>>"),
              skill("unknown", name="<<nope>>"),
              skill("users", name="<<three>>")),
        usage(spread(compact_at + 500), use("cat", "bash", command="cat <<note>>.txt")),
        usage(SMALL, text("<<summary>>: a skill was loaded.")),
        usage(SMALL, text("Done: <<final>>")),
    ]


def skills_args(draw):
    clear_at, compact_at = thresholds(draw)
    return ("--clear-at", str(clear_at), "--compact-at", str(compact_at))


SKILLS = Exchange("skills", "Do the task with the right skill (<<prompt>>).", skills_replies,
                  args=skills_args, stdin=YES,
                  files={**SKILL_FILES, "<<note>>.txt": "<<content>>\n"})
SUMMARY_REQUEST, AFTER_SUMMARY = 4, 5

SLASH = Exchange("slash", "/<<three>> <<version>>", [[text("Released: <<final>>")]],
                 stdin=YES, files=SKILL_FILES)


def sent(request):
    """The whole request as the model reads it: system prompt, tools, messages."""
    return json.dumps(request, ensure_ascii=False)


def catalog_fault(run, number):
    """Why request `number` does not list the two skills the model may use; None if it does."""
    said = sent(run.request(number))
    for name, words, what in (("<<one>>", "<<one_said>>", "its description"),
                              ("<<two>>", "<<two_first>>", "its body's first paragraph, since "
                               "it has no description")):
        if run.v(name) not in said or run.v(words) not in said:
            return (f"Request {number} does not list the skill {run.v(name)!r} with {what}, "
                    f"{run.v(words)!r}. Every request should carry the catalog: for each skill "
                    f"in {SKILLS_DIR}/NAME/SKILL.md that the model may use, its name and "
                    "description (in the system prompt, a tool's description or a message).")
    return None


@check(SKILLS, "every request lists each skill the model may use, by name and description "
       "(a missing description is the body's first paragraph)")
def catalog(run):
    for number in (1, 2, 3):
        fault = catalog_fault(run, number)
        if fault:
            raise Fail(fault)


@check(SKILLS, "no skill's body is in a request before the skill is used, and a skill only the "
       "user may start is not listed")
def no_body_first(run):
    said = sent(run.request(1))
    early = [run.v(body) for body in BODIES if run.v(body) in said]
    if early:
        raise Fail(f"Request 1 holds {early}, from the body of a skill nobody used yet; the "
                   "catalog holds names and descriptions only, and a body comes when the skill "
                   "is used.")
    if run.v("<<three_said>>") in said:
        raise Fail(f"Request 1 lists the skill {run.v('<<three>>')!r} "
                   f"({run.v('<<three_said>>')!r}), whose SKILL.md says "
                   "disable-model-invocation: true: only the user may start it, so the model's "
                   "catalog leaves it out.")


@check(SKILLS, "the tool skill returns the skill's body, without its frontmatter, with "
       "$ARGUMENTS replaced by the call's arguments")
def skill_body(run):
    if "skill" not in run.tools(1):
        raise Fail(f"Request 1 offers {sorted(run.tools(1))}; it should offer the tool skill, "
                   "whose input_schema has the properties name and arguments.")
    body = run.ok(1, "load", LOADED)
    if "$ARGUMENTS" in body or run.v("<<one_said>>") in body:
        raise Fail(f"The result of {run.call(1, 'load')} is {cut(body)!r}; it should be the "
                   "body alone (no frontmatter), with $ARGUMENTS replaced (request 2).")


@check(SKILLS, "an unknown name, and a skill only the user may start, are is_error results "
       "that list the skills the model may use", follows=["skill_body"])
def unknown_name(run):
    for key, why in (("unknown", "there is no skill <<nope>>"),
                     ("users", "only the user may start <<three>>")):
        said = run.refused(2, key, why)
        if run.v("<<one>>") not in said or run.v("<<two>>") not in said:
            raise Fail(f"The result of {run.call(2, key)} is {cut(said)!r}; it should list "
                       f"the skills the model may use, {run.v('<<one>>')} and "
                       f"{run.v('<<two>>')} (request 3).")
    if run.v("<<three_body>>") in sent(run.request(3)):
        raise Fail(f"Request 3 holds the body of {run.v('<<three>>')!r}, which only the user "
                   "may start; the model's call should get an is_error result instead.")


@check(SKILLS, "a skill already in the conversation is not sent twice", follows=["skill_body"])
def sent_once(run):
    said, _ = run.result(2, "again")
    if run.v("<<one_body>>") in said:
        raise Fail(f"The result of {run.call(2, 'again')} is {cut(said)!r}: the body again. "
                   "The skill is in the conversation already (reply 1 loaded it); the result "
                   "should say so instead of sending the body twice (request 3).")


@check(SKILLS, "after a summary, the new history holds the body of each skill used, and the "
       "catalog", follows=["skill_body", "s08.summary_request"])
def body_after_summary(run):
    if len(run.requests) < AFTER_SUMMARY:
        raise Fail(f"Your program sent {len(run.requests)} requests; reply 3 is past "
                   f"--compact-at, so request {SUMMARY_REQUEST} should be a summary request "
                   f"and request {AFTER_SUMMARY} start a new history from it (s08). "
                   f"{run.ending()}")
    messages = run.request(AFTER_SUMMARY).get("messages") or []
    if run.v(LOADED) not in json.dumps(messages, ensure_ascii=False):
        raise Fail(f"The messages of request {AFTER_SUMMARY}, the new history after the summary, "
                   f"do not hold the body of {run.v('<<one>>')!r} as it was loaded, "
                   f"{run.v(LOADED)!r}; the body of each skill used comes back after a summary, "
                   f"or the model loses instructions it was following.")
    fault = catalog_fault(run, AFTER_SUMMARY)
    if fault:
        raise Fail(fault)


@check(SLASH, "a prompt /NAME ARGS sends that skill's body, $ARGUMENTS replaced, as the "
       "user's message")
def slash_name(run):
    messages = run.request(1).get("messages") or [{}]
    users = [message for message in messages if message.get("role") == "user"]
    said = json.dumps(users[-1:], ensure_ascii=False)
    wanted = run.v("Cut <<three_body>> release <<version>> now.")
    if wanted not in said:
        raise Fail(f"Request 1's user message is {cut(said, 200)}; the prompt "
                   f"{run.prompt!r} names the skill {run.v('<<three>>')!r}, so the message "
                   f"should be its body with $ARGUMENTS replaced, {wanted!r}.")
