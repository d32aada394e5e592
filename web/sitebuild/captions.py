"""What happened at each step of a run: the user's answers, found in the terminal, and
the captions, computed from the trace."""

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


def step_captions(calls, events, lang="en"):
    """One line per model call, saying what is new in it: what the request brings back
    (refusals, reminders, an approved plan), what the model asked for, and what the user
    answered in the terminal before the next call. In the words of STRINGS[lang]; what the
    tools and the model wrote is quoted as it is."""
    names, captions = {}, []
    for number, call in enumerate(calls):
        request, response = call["request"], call["response"]
        messages = request.get("messages", [])
        parts = []
        if number == 0:  # from s09 on, the AGENTS.md files come before the prompt
            first = blocks_of(messages[0]) if messages else []
            memory = len(first) > 1 and "AGENTS.md" in str(first[0].get("text", ""))
            # from s10 on, the skills' catalog comes after it
            skills = len(first) > 1 and str(first[-1].get("text", "")).startswith("<skills>")
            parts.append(say(lang, "memory_prompt_and_skills_sent" if memory and skills
                             else "memory_and_prompt_sent" if memory else "prompt_sent"))
        elif messages and messages[-1].get("role") == "user":
            parts += news_of_the_turn(blocks_of(messages[-1]), names, lang)
        asked = tool_uses(response)
        for block in asked:
            names[block["id"]] = block["name"]
        parts += model_move(response, asked, lang)
        for block in asked:
            for event in events.get(block["id"], []):
                parts.append(event_caption(block, event, lang))
        captions.append(sentence(parts, lang))
    return captions


def news_of_the_turn(blocks, names, lang):
    """What the request brings back; the reminders of the turn in one part, where the first
    of them stood."""
    parts, reminders, at = [], [], None
    for block in blocks:
        if block.get("type") == "tool_result":
            name = names.get(block.get("tool_use_id"))
            text = result_text(block.get("content"))
            if block.get("is_error"):
                refused = re.match(r"(Denied|Blocked|Refused)\b", text)
                reason = quoted(first_sentence(re.sub(r"^Denied: ", "", text)), lang)
                key = ("refused" if refused else "error") + ("" if name else "_unknown")
                parts.append(say(lang, key, name=name, reason=reason))
            elif name == "exit_plan_mode":
                saved = re.search(r"saved in (\S+?)\.?(?:\s|$)", text)
                parts.append(say(lang, "plan_saved", path=saved.group(1)) if saved
                             else say(lang, "plan_approved"))
            elif name == "skill":  # s10: a skill's body, loaded when it is used
                parts.append(say(lang, "skill_loaded"))
            elif name == "ask_user_question":
                parts.append(say(lang, "answer_back", text=quoted(first_sentence(text, 60), lang)))
        elif block.get("type") == "text":
            tag = re.match(r"\s*<(\w+)([^>]*)>(.*?)(?:</\1>|$)", block.get("text", ""), re.S)
            if tag and tag[1] == "reminder":
                at = len(parts) if at is None else at
                reminders.append(quoted(first_sentence(tag[3], 60), lang))
            elif tag and tag[1] == "hook":
                event = re.search(r'event="(\w+)"', tag[2])
                parts.append(say(lang, "hook_added", event=event[1]) if event
                             else say(lang, "a_hook_added"))
            else:
                parts.append(say(lang, "words_added"))
    if reminders:
        key = "reminders_added" if len(reminders) > 1 else "reminder_added"
        parts.insert(at, say(lang, key, text=say(lang, "list_separator").join(reminders)))
    return parts


def model_move(response, asked, lang):
    stop = response.get("stop_reason")
    if not asked:
        if stop == "max_tokens":
            return [say(lang, "cut_off")]
        return [say(lang, "no_tool", stop=stop)]
    moves, plain = [], []
    for block in asked:
        if block["name"] == "ask_user_question":
            moves.append(say(lang, "asks_user"))
        elif block["name"] == "exit_plan_mode":
            moves.append(say(lang, "submits_plan"))
        else:
            plain.append(block["name"])
    if plain:
        tools = say(lang, "list_separator").join(plain)
        moves.insert(0, say(lang, "asks_for_many", n=len(plain), tools=tools) if len(plain) > 1
                     else say(lang, "asks_for", tools=tools))
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
