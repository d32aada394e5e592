"""The Run tab: the command, the player's data, the plans, the terminal."""

import html
import json
import re
from pathlib import Path

import mistune

from .captions import HARNESS_TAGS, conversations, step_captions, terminal_events, tool_uses
from .charts import mini_chart, size_chart
from .recording import quote, trace_path
from .settings import PYTHON, SHOWN_SECONDS, SHOWN_SESSION_ID, SHOWN_TMPDIR
from .strings import UP, english_inside, say
from .templates import render


def run_steps(run, lang):
    """For the player: a caption and the user's answers for each step, and the step before it
    in its conversation (what is new is shown against that one: a subagent's call against its
    own call before, the main agent's after a subagent against its own)."""
    events = terminal_events(run.calls, run.stdout, run.answers)
    captions = step_captions(run.calls, events, lang)
    previous, _ = conversations(run.calls)
    steps = []
    for call, caption, before in zip(run.calls, captions, previous, strict=True):
        here = {block["id"]: events[block["id"]] for block in tool_uses(call["response"])
                if block["id"] in events}
        steps.append({"caption": caption, "events": here, "previous": before})
    return steps


def run_data_json(chapter, lang):
    """The trace and the scenario as JSON for the player, safe inside a <script> element."""
    run = chapter.run
    shared, calls = shared_parts(run.calls)
    data = {
        "chapter": chapter.name,
        "prompt": run.prompt,
        "answers": run.answers,
        "calls": calls,
        "shared": shared,
        "steps": run_steps(run, lang),
        "harness_tags": HARNESS_TAGS,  # a text of the request that starts with one: the harness's
    }
    return script_json(data)


SHARED = ("system", "tools")  # what most requests repeat as it was: sent once in the page


def shared_parts(calls):
    """The calls with each request's system prompt and tools as an index into `shared` (every
    request sends them again: 50 KB of s08's page), and `shared`: {"tools": [each distinct
    value], ...}. site.js puts them back before anything reads the calls."""
    shared, compact = {key: [] for key in SHARED}, []
    for call in calls:
        request = dict(call["request"])
        for key in SHARED:
            if key in request:
                if request[key] not in shared[key]:
                    shared[key].append(request[key])
                request[key] = shared[key].index(request[key])
        compact.append({**call, "request": request})
    return shared, compact


def script_json(data):
    """JSON, safe inside a <script> element."""
    return json.dumps(data, ensure_ascii=False).replace("<", "\\u003c")


class PlanRenderer(mistune.HTMLRenderer):
    """A plan's Markdown inside the player, whose headings are <h4>: its own go below."""

    def heading(self, text, level, **attrs):
        return f"<h{min(level + 3, 6)}>{text}</h{min(level + 3, 6)}>\n"


def plan_templates(run):
    """Each plan the model submitted (exit_plan_mode), rendered from its Markdown at build
    time, for the player to show (mistune escapes any HTML in it)."""
    markdown = mistune.create_markdown(renderer=PlanRenderer(escape=True),
                                       plugins=["table", "strikethrough"])
    templates = []
    for call in run.calls:
        for block in tool_uses(call["response"]):
            plan = block.get("input", {}).get("plan") if isinstance(block.get("input"),
                                                                    dict) else None
            if block["name"] == "exit_plan_mode" and isinstance(plan, str):
                templates.append(f'<template id="plan-{html.escape(block["id"])}">'
                                 f"{markdown(plan)}</template>")
    return "\n".join(templates)


def run_view(chapter, lang):
    """The Run tab: the command, the player (site.js fills it from the embedded trace) with
    its caption and chart, the full chart, the terminal."""
    run = chapter.run
    calls = len(run.calls)
    en = english_inside(lang)
    stderr = (
        f'<details><summary>{say(lang, "stderr")}</summary><pre '
        f'class="terminal"{en}>{html.escape(run.stderr)}</pre></details>'
        if run.stderr.strip()
        else ""
    )
    answers = (say(lang, "recorded_answers", answers=say(lang, "list_separator").join(
        f'<code{en}>{html.escape(a)}</code>' for a in run.answers)) if run.answers else "")
    replay = (f"{PYTHON} {chapter.name}/code.py --script {trace_path(chapter.name)} "
              f"{quote(run.prompt)}")
    if run.answers:
        replay = f"printf {quote(''.join(a + chr(10) for a in run.answers))} | {replay}"
    note = say(lang, "shown_note", tmpdir=SHOWN_TMPDIR, session=SHOWN_SESSION_ID,
               seconds=SHOWN_SECONDS, trace=f"{UP[lang]}traces/{chapter.name}.jsonl",
               saved=Path(trace_path(chapter.name)).name,
               replay=html.escape(replay))
    # the replay command gets a Copy button (site.js copies a code.command)
    escaped = html.escape(replay)
    note = re.sub(rf"<code([^>]*)>{re.escape(escaped)}</code>",
                  lambda found: f'<code{found[1]} class="command">{escaped}</code>', note)
    return render("run.html", lang, run=run, calls=calls, answers=answers, note=note,
                  mini_chart=mini_chart(run.calls, lang), run_data=run_data_json(chapter, lang),
                  plans=plan_templates(run), size_chart=size_chart(run.calls, lang),
                  stderr=stderr)
