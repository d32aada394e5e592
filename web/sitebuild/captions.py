"""What happened at each step of a run: the user's answers, found in the terminal, and
the captions, computed from the trace."""

import fnmatch
import itertools
import json
import re
import textwrap

from .strings import say


def tool_uses(message):
    content = message.get("content", [])
    if isinstance(content, str):
        return []
    return [block for block in content if block.get("type") == "tool_use"]


def blocks_of(message):
    content = message.get("content", [])
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def terminal_events(calls, stdout, answers):
    """The user's answers, found in the recorded terminal: {tool_use id: [event]}.

    The harness prints "  > NAME: ..." when it runs a tool, in the order of the tool_use
    blocks; a question to the user comes after it, and a piped answer is echoed after its
    question, so each answer belongs to the tool whose line came last. An event is
    {"question": the question's lines, "answer": the line the user gave}.
    """
    lines = stdout.split("\n")
    starts, position = [], 0
    for call in calls:
        for block in tool_uses(call["response"]):
            marker = f"  > {block['name']}"
            for index in range(position, len(lines)):
                if lines[index] == marker or lines[index].startswith(marker + ":"):
                    starts.append((block, index))
                    position = index + 1
                    break
    events, pending = {}, list(answers)
    for (block, start), following in itertools.zip_longest(starts, starts[1:]):
        end = following[1] if following else len(lines)
        for index in range(start + 1, end):
            line = lines[index]
            if not pending or not line.startswith(" ") or not re.search(
                    r"[:?>] " + re.escape(pending[0]) + "$", line):
                continue  # a question ends with ": ", "? " or "> ", then the echoed answer
            answer = pending.pop(0)
            first = index
            for back in range(index - 1, start, -1):  # a permission question: "  ? allow ..."
                if lines[back].startswith("  ? "):
                    first = back
                    break
            asked = [*lines[first:index], line[: len(line) - len(answer)].rstrip()]
            events.setdefault(block["id"], []).append(
                {"question": textwrap.dedent("\n".join(asked)).strip("\n"), "answer": answer}
            )
    return events


def result_text(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return json.dumps(content)


def first_sentence(text, limit=90):
    """The first sentence of what a tool or the model wrote, cut at `limit` characters with
    "…"; a quote it opens and the cut leaves open is closed after the "…"."""
    text = re.sub(r"\s+", " ", text).strip()
    found = re.match(r"(.+?)[.;](?:\s|$)", text)
    sentence = found.group(1) if found else text.rstrip(".")
    if len(sentence) <= limit:
        return sentence
    sentence = sentence[: limit - 1].rstrip() + "…"
    return sentence + '"' if sentence.count('"') % 2 else sentence


def quoted(text, lang):
    """Words a tool, the model or the harness wrote, as they are, in the caption's quotes."""
    return say(lang, "quoted", text=text)


def said(answer):
    return answer if len(answer) <= 40 else answer[:39] + "…"


def option_chosen(question, answer):
    """What the answer chose among the options the question shows: "No" for 2 under
    "  2. No: Change greet.py only", "yes, start" for y in "[y] yes, start  [n] no"; "" when
    the answer is not one of them (the user's own words)."""
    numbered = re.search(rf"^\s*{re.escape(answer)}\.\s+([^:\n]+)", question, re.M)
    if numbered:
        return numbered[1].replace("(Recommended)", "").strip()
    bracketed = re.search(rf"\[{re.escape(answer)}\]\s*(.*?)\s*(?=\[|\bor\b|:?$)", question,
                          re.M)
    return bracketed[1].strip(" ,:") if bracketed and answer else ""


def sentence(parts, lang):
    """The parts of a caption as one sentence, capitalised (in English)."""
    text = say(lang, "caption_separator").join(parts) + say(lang, "caption_end")
    return text[:1].upper() + text[1:] if lang == "en" else text


# ---- the kinds of step, in one place ------------------------------------------------
# A caption is made of parts, each from one of these tables; a chapter that brings a new kind
# of step (s09's AGENTS.md message, s10's skill loaded, s11's MCP call) adds its entry here and
# its words in STRINGS, and the player needs nothing more. A tool's entry is found by its name,
# or by a pattern of names ("mcp__*").
#
# The marks of a trace line (CONTRIBUTING, --trace), beside its request and response:
#   "agent": the call is a subagent's, for the task it names (s07);
#   "compaction": "summary": the request asks for a summary of the history (s08).
# A conversation is the main agent's calls, or one run of a subagent's (the calls marked with
# the same task, one after another): a step says what is new since the call before it in its
# own conversation.

def tool_is_asked(lang, block, who):
    """What the model's call of a tool is told as, by the tool's name (default: "asked for")."""
    given = block.get("input") if isinstance(block.get("input"), dict) else {}
    moves = {
        "ask_user_question": lambda: say(lang, "asks_user", who=who),
        "exit_plan_mode": lambda: say(lang, "submits_plan", who=who),
        "agent": lambda: say(lang, "hands_over", who=who, task=quoted(
            first_sentence(str(given.get("description", "")), 60), lang)),
    }
    move = entry(moves, block["name"])
    return move() if move else None


def result_comes_back(lang, name, text):
    """What a tool's result brings back, by the tool's name (default: nothing to say)."""
    results = {
        "exit_plan_mode": lambda: (say(lang, "plan_saved", path=saved.group(1))
                                   if (saved := re.search(r"saved in (\S+?)\.?(?:\s|$)", text))
                                   else say(lang, "plan_approved")),
        "ask_user_question": lambda: say(lang, "answer_back",
                                         text=quoted(first_sentence(text, 60), lang)),
        "agent": lambda: say(lang, "subagent_back", chars=f"{len(text):,}",
                             text=quoted(first_sentence(text, 60), lang)),
        "skill": lambda: say(lang, "skill_loaded"),  # s10: a skill's body, loaded when used
    }
    result = entry(results, name)
    return result() if result else None


def text_is_added(lang, tag, attributes, inside):
    """What a text the harness adds to a turn says, by its tag (<reminder>, <hook event=...>);
    None for a text of no tag known here (the user's words)."""
    if tag == "reminder":
        return ("reminder", quoted(first_sentence(inside, 60), lang))
    if tag == "hook":
        event = re.search(r'event="(\w+)"', attributes)
        return ("part", say(lang, "hook_added", event=event[1]) if event
                else say(lang, "a_hook_added"))
    return None


HARNESS_TAGS = ["reminder", "hook"]  # the tags of text_is_added: the player marks them


def entry(table, name):
    if name in table:
        return table[name]
    return next((value for pattern, value in table.items() if "*" in pattern
                 and fnmatch.fnmatchcase(name, pattern)), None)


# ---- the conversations of a run -------------------------------------------------------

def conversations(calls):
    """For each call, the index of the call before it in its conversation (None for the first
    of one), and for a subagent's call its number in its run and the run's length."""
    previous, place, last = [], [], {}
    for number, call in enumerate(calls):
        agent = call.get("agent")
        fresh = agent is not None and (number == 0 or calls[number - 1].get("agent") != agent)
        previous.append(None if fresh else last.get(agent))
        last[agent] = number
        place.append(None)
    for number, call in enumerate(calls):
        if call.get("agent") is not None and previous[number] is None:
            run = [number]
            while run[-1] + 1 < len(calls) and previous[run[-1] + 1] == run[-1]:
                run.append(run[-1] + 1)
            for k, index in enumerate(run):
                place[index] = (k + 1, len(run))
    return previous, place


def json_chars(value):
    """Characters of JSON, as the charts count them."""
    return len(json.dumps(value, ensure_ascii=False))


def step_captions(calls, events, lang="en"):
    """One line per model call, saying what is new in it: whose call it is, what the request
    brings back (refusals, reminders, an approved plan, results cleared, a subagent's answer,
    a new history after a summary), what the model asked for, and what the user answered in
    the terminal before the next call. In the words of STRINGS[lang]; what the tools and the
    model wrote is quoted as it is."""
    previous, place = conversations(calls)
    names, captions = {}, []
    for number, call in enumerate(calls):
        request, response = call["request"], call["response"]
        messages = request.get("messages", [])
        before = calls[previous[number]] if previous[number] is not None else None
        agent = call.get("agent")
        summary = call.get("compaction") == "summary"
        who = say(lang, "the_subagent" if agent is not None else "the_model")
        parts = []
        if agent is not None:
            key = "subagent_starts" if place[number][0] == 1 else "subagent_call"
            parts.append(say(lang, key, task=quoted(agent, lang), k=place[number][0],
                             n=place[number][1]))
        if before is not None and before.get("compaction") == "summary":
            parts.append(new_history(before, messages, lang))
        else:
            if before is None and agent is None:  # from s09 on, AGENTS.md before the prompt
                first = blocks_of(messages[0]) if messages else []
                memory = len(first) > 1 and "AGENTS.md" in str(first[0].get("text", ""))
                # from s10 on, the skills' catalog comes after it
                skills = len(first) > 1 and str(first[-1].get("text", "")).startswith("<skills>")
                parts.append(say(lang, "memory_prompt_and_skills_sent" if memory and skills
                                 else "memory_and_prompt_sent" if memory else "prompt_sent"))
            elif before is not None:
                parts += cleared(before["request"].get("messages", []), messages, lang)
            if messages and messages[-1].get("role") == "user":
                blocks = blocks_of(messages[-1])
                if summary and blocks and blocks[-1].get("type") == "text":
                    blocks = blocks[:-1]  # the instruction to summarise, told below
                parts += news_of_the_turn(blocks, names, lang, words=before is not None)
        if summary:
            instruction = blocks_of(messages[-1])[-1].get("text", "") if messages else ""
            parts.append(say(lang, "summary_asked", n=len(messages),
                             chars=f"{json_chars(messages):,}",
                             text=quoted(first_sentence(instruction, 60), lang)))
        asked = tool_uses(response)
        for block in asked:
            names[block["id"]] = block["name"]
        parts += model_move(response, asked, lang, who=who, agent=agent, summary=summary)
        for block in asked:
            for event in events.get(block["id"], []):
                parts.append(event_caption(block, event, lang))
        captions.append(sentence(parts, lang))
    return captions


def cleared(old_messages, messages, lang):
    """Tool results whose content the harness made shorter since the call before (s08 clears
    old results to save context): how many, and their characters before and after."""
    def results(history):
        return {block.get("tool_use_id"): block.get("content") for message in history
                for block in blocks_of(message) if block.get("type") == "tool_result"}
    old, new = results(old_messages), results(messages)
    shrunk = [(old[key], content) for key, content in new.items()
              if key in old and json_chars(content) < json_chars(old[key])]
    if not shrunk:
        return []
    return [say(lang, "results_cleared", n=len(shrunk),
                before=f"{sum(len(result_text(a)) for a, _ in shrunk):,}",
                after=f"{sum(len(result_text(b)) for _, b in shrunk):,}",
                text=quoted(first_sentence(result_text(shrunk[0][1]), 60), lang))]


def new_history(summary_call, messages, lang):
    """After a summary: the history it replaced, and the new one, in messages and characters."""
    old = summary_call["request"].get("messages", [])
    return say(lang, "new_history", n=len(old) , chars=f"{json_chars(old):,}",
               new=len(messages), new_chars=f"{json_chars(messages):,}")


USER_DENIED = "The user denied this call."  # how a result the user said no to starts (s03)


def news_of_the_turn(blocks, names, lang, words=True):
    """What the request brings back; the reminders of the turn in one part, where the first
    of them stood. The user's own words are said unless `words` is false (the prompt)."""
    parts, reminders, at = [], [], None
    for block in blocks:
        if block.get("type") == "tool_result":
            name = names.get(block.get("tool_use_id"))
            text = result_text(block.get("content"))
            if block.get("is_error") and text.startswith(USER_DENIED):
                parts.append(say(lang, "denied" if name else "denied_unknown", name=name))
            elif block.get("is_error"):
                refused = re.match(r"(Denied|Blocked|Refused)\b", text)
                reason = quoted(first_sentence(re.sub(r"^Denied: ", "", text)), lang)
                key = ("refused" if refused else "error") + ("" if name else "_unknown")
                parts.append(say(lang, key, name=name, reason=reason))
            elif name and (back := result_comes_back(lang, name, text)):
                parts.append(back)
        elif block.get("type") == "text":
            tag = re.match(r"\s*<(\w+)([^>]*)>(.*?)(?:</\1>|$)", block.get("text", ""), re.S)
            added = text_is_added(lang, *tag.groups()) if tag else None
            if added and added[0] == "reminder":
                at = len(parts) if at is None else at
                reminders.append(added[1])
            elif added:
                parts.append(added[1])
            elif words:
                parts.append(say(lang, "words_added"))
    if reminders:
        key = "reminders_added" if len(reminders) > 1 else "reminder_added"
        parts.insert(at, say(lang, key, text=say(lang, "list_separator").join(reminders)))
    return parts


def model_move(response, asked, lang, who=None, agent=None, summary=False):
    who = who or say(lang, "the_model")
    stop = response.get("stop_reason")
    if not asked:
        if stop == "max_tokens":
            return [say(lang, "cut_off")]
        if summary:
            text = "".join(block.get("text", "") for block in response.get("content", [])
                           if block.get("type") == "text")
            return [say(lang, "summary_written", chars=f"{len(text):,}", stop=stop)]
        return [say(lang, "subagent_done" if agent is not None else "no_tool", stop=stop)]
    moves, plain = [], []
    for block in asked:
        move = tool_is_asked(lang, block, who)
        if move:
            moves.append(move)
        else:
            plain.append(block["name"])
    if plain:
        tools = say(lang, "list_separator").join(plain)
        moves.insert(0, say(lang, "asks_for_many", n=len(plain), tools=tools, who=who)
                     if len(plain) > 1 else say(lang, "asks_for", tools=tools, who=who))
    return moves


def event_caption(block, event, lang):
    """The user's answer, with the option it chose when it is one the question shows."""
    answer = said(event["answer"])
    option = option_chosen(event["question"], event["answer"])
    if option:
        answered = say(lang, "chose", answer=answer, option=option)
    else:
        answered = say(lang, "answered", answer=answer) if answer else say(lang, "answered_empty")
    if block["name"] == "exit_plan_mode":
        return say(lang, "approve_asked", answered=answered)
    if event["question"].startswith("? allow"):
        return say(lang, "allow_asked", name=block["name"], answered=answered)
    return answered
