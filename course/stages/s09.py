"""Stage s09: memory, the AGENTS.md files read before the first prompt.

Its contract is its lesson's section "Build it yourself"; each check is named by the rule
it judges.

The checker runs every exchange with HOME an empty folder beside the workdir, `{root}/home`
(run_exchange), so the user's own ~/.agent/AGENTS.md is the exchange's: the learner's never
changes a run."""

import json

from course.stages import Exchange, Fail, block_text, blocks, cut
from course.stages.common import check, text, use
from course.stages.s08 import spread, thresholds, usage

MEMORY_PROMPT = "Follow the project's rules (<<prompt>>)."
CHILD_PROMPT = "Read <<note>>.txt and report what it says (<<task>>)."


def memory_setup(root, draw):
    """The workdir's parent is the project root (it holds .git), with an AGENTS.md; the user's
    own file is in HOME, {root}/home."""
    (root / ".git").mkdir()
    (root / "AGENTS.md").write_text(draw.fill("- <<rule_root>>\n"), encoding="utf-8")
    (root / "home" / ".agent").mkdir(parents=True)
    (root / "home" / ".agent" / "AGENTS.md").write_text(draw.fill("- <<rule_user>>\n"),
                                                        encoding="utf-8")


# Reply 1 calls agent: request 2 is the subagent's first, reply 2 its answer; request 3 is the
# parent's, and reply 3 ends the turn.
MEMORY = Exchange("memory", MEMORY_PROMPT, [
    [text("A side task first."), use("agent", "agent", description="<<label>>",
                                     prompt=CHILD_PROMPT)],
    [text("<<answer>>")],
    [text("Done: <<final>>")],
], files={"AGENTS.md": "- <<rule_work>>\n", "<<below>>/AGENTS.md": "- <<rule_below>>\n",
          "<<note>>.txt": "<<content>>\n"}, setup=memory_setup)


def again_setup(root, draw):
    """An AGENTS.md above the project root, which is the workdir (it holds .git)."""
    (root / "AGENTS.md").write_text(draw.fill("- <<rule_above>>\n"), encoding="utf-8")


SMALL = {"input_tokens": 1200, "output_tokens": 100}


def again_replies(draw):
    """Reply 1 writes AGENTS.md (an allow rule covers write_file; n denies it); reply 2 appends a
    line with bash (y); reply 3 is past --compact-at, so request 4 is a summary request, reply 4
    the summary, and request 5 starts the new history; reply 5 ends the turn."""
    _, compact_at = thresholds(draw)
    return [
        usage(SMALL, text("Noting it for later."),
              use("plant", "write_file", path="AGENTS.md", content="- <<planted>>\n")),
        usage(SMALL, use("add", "bash", command="echo '- <<added>>' >> AGENTS.md")),
        usage(spread(compact_at + 500), use("cat", "bash", command="cat <<note>>.txt")),
        usage(SMALL, text("<<summary>>: a line was added.")),
        usage(SMALL, text("Done: <<final>>")),
    ]


def again_args(draw):
    clear_at, compact_at = thresholds(draw)
    return ("--clear-at", str(clear_at), "--compact-at", str(compact_at))


AGAIN = Exchange("memory_again", "Note a rule, then go on (<<prompt>>).", again_replies,
                 args=again_args, stdin="n\ny\n", setup=again_setup, files={
    ".git/HEAD": "ref: refs/heads/main\n", "AGENTS.md": "- <<rule_work>>\n",
    "<<note>>.txt": "<<content>>\n",
    ".agent/settings.json": json.dumps({"permissions": {"allow": ["write_file"]}})})
SUMMARY_REQUEST, AFTER_SUMMARY = 4, 5


def first_message(run, number):
    """The text of the first message of request `number`, and its role."""
    messages = run.request(number).get("messages") or [{}]
    return block_text(blocks(messages[0].get("content"))), messages[0].get("role")


def system_text(request):
    system = request.get("system") or ""
    return system if isinstance(system, str) else block_text(system)


def paths(run, name):
    """The ways a file's path may be written: absolute, from the workdir, from HOME."""
    forms = {"user": [run.root / "home" / ".agent" / "AGENTS.md", "~/.agent/AGENTS.md"],
             "root": [run.root / "AGENTS.md", "../AGENTS.md"],
             "work": [run.workdir / "AGENTS.md", "./AGENTS.md", "AGENTS.md"]}[name]
    return [str(form) for form in forms]


def memory_fault(run, number, prompt):
    """Why the first message of request `number` is not the three files, in order, each with
    its path, then `prompt`; None if it is."""
    said, role = first_message(run, number)
    if role != "user":
        return f"Its first message is a {role} message; it should be a user message."
    at, start = [], 0
    for name in ("user", "root", "work"):
        rule = run.v(f"<<rule_{name}>>")
        found = said.find(rule, start)
        if found < 0:
            where = " (it is there, but before the file it should follow)" if rule in said else ""
            return (f"Its first message, {cut(said, 200)!r}, does not hold {rule!r}, the text "
                    f"of the {name}'s AGENTS.md{where}. It should hold the user's "
                    "~/.agent/AGENTS.md, then the project root's, then the workdir's, in that "
                    "order, each marked with its path.")
        if not any(form in said[start:found] for form in paths(run, name)):
            return (f"In its first message, the text of the {name}'s AGENTS.md, {rule!r}, has no "
                    f"path before it; each file's text should follow its path, such as "
                    f"{paths(run, name)[0].replace(str(run.root), '<workdir>/..')!r}.")
        at.append(found)
        start = found + len(rule)
    if said.find(prompt, start) < 0:
        return (f"Its first message, {cut(said, 200)!r}, does not hold the prompt {prompt!r} "
                "after the files; the files come first, then the prompt.")
    return None


@check(MEMORY, "the files go in a user message: the system prompt holds none of them")
def system_prompt_kept(run):
    system = system_text(run.request(1))
    held = [run.v(f"<<rule_{name}>>") for name in ("user", "root", "work")
            if run.v(f"<<rule_{name}>>") in system]
    if held:
        raise Fail(f"The system prompt of request 1 holds {held}: the AGENTS.md files should go "
                   "in the first user message, so that the system prompt, and the cached prefix "
                   "that ends with it, is the same with them as without them.")


@check(MEMORY, "the first request's first user message holds the user's AGENTS.md, then "
       "the project root's, then the workdir's, each marked with its path, then the prompt")
def memory_first(run):
    fault = memory_fault(run, 1, run.prompt)
    if fault:
        raise Fail(f"Request 1: {fault}")


@check(MEMORY, "an AGENTS.md below the workdir is not read at the start")
def nothing_below(run):
    rule = run.v("<<rule_below>>")
    for number, request in enumerate(run.requests, 1):
        if rule in json.dumps(request, ensure_ascii=False):
            raise Fail(f"Request {number} holds {rule!r}, the text of "
                       f"{run.v('<<below>>/AGENTS.md')}, a folder below the workdir; only the "
                       "folders from the project root down to the workdir are read.")


@check(MEMORY, "the subagent's first request holds the same files before its task",
       follows=["memory_first", "s07.agent_offered"])
def child_memory(run):
    fault = memory_fault(run, 2, run.v(CHILD_PROMPT))
    if fault:
        raise Fail(f"Request 2, the subagent's first: {fault} A subagent gets the same files "
                   "before its task.")


@check(AGAIN, "with .git in the workdir, it is the project root: the AGENTS.md above it is "
       "not read")
def nothing_above(run):
    said, _ = first_message(run, 1)
    above, work = run.v("<<rule_above>>"), run.v("<<rule_work>>")
    if above in json.dumps(run.request(1), ensure_ascii=False):
        raise Fail(f"Request 1 holds {above!r}, the text of <workdir>/../AGENTS.md, above the "
                   "project root (the workdir holds .git): nothing above the root is read; in a "
                   "shared folder, that is someone else's file.")
    if work not in said:
        raise Fail(f"Request 1's first message, {cut(said, 200)!r}, does not hold {work!r}, "
                   "the text of the workdir's AGENTS.md.")


@check(AGAIN, "a change to AGENTS.md asks, even where an allow rule covers the tool")
def asks_to_write(run):
    run.refused(1, "plant", "a change to AGENTS.md asks in every mode, whatever the rules "
                "allow, and n denied it")
    if run.v("<<planted>>") in (run.file("AGENTS.md") or ""):
        raise Fail(f"AGENTS.md holds {run.v('<<planted>>')!r}, from {run.call(1, 'plant')}, "
                   "which an allow rule covers; a change to AGENTS.md asks in every mode, and "
                   "n denied it.")


@check(AGAIN, "after a summary, the new history holds AGENTS.md as it is on disk now",
       follows=["asks_to_write", "s08.summary_request"])
def read_again(run):
    said, _ = first_message(run, AFTER_SUMMARY)
    added = run.v("<<added>>")
    if added not in said:
        raise Fail(f"Request {AFTER_SUMMARY}, the first after the summary, starts with "
                   f"{cut(said, 200)!r}; it should hold AGENTS.md as it is now, read again from "
                   f"disk, with the line {added!r} that {run.call(2, 'add')} appended.")
