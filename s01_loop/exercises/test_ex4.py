"""Exercise 4: Write a script and play it.

Task: This one changes no code: write `play/s01_ex4.json`, a script for the scripted model, for
the prompt `How many lines are in notes.md?`. Its first turn says what it will do and runs
`wc -l notes.md` with bash; its second turn has a `when` that only that command's result
contains, and answers with the number of lines. Then play it with
`--script play/s01_ex4.json` and that prompt.

Hint: Start from a copy of `s01_loop/scenario.json`; the lesson's "The scripted model" says
what `prompt`, `turns` and `when` do.
"""

from pathlib import Path

from course.check import Missing, expect, expect_equal, load, new_session, run, scratch, screen

CODE = Path(__file__).resolve().parent.parent / "code.py"
PROMPT = "How many lines are in notes.md?"
NOTES = ("# Field notes\n\n- The loop sends the whole history every time.\n"
         "- A tool result goes back in a user turn.\n"
         "- The model stops when it has nothing more to ask for.\n")


def script_path(code):
    """play/s01_ex4.json in the checkout that holds this code.py (git ignores play/)."""
    return Path(code).resolve().parent.parent / "play" / "s01_ex4.json"


def check(code):
    path = script_path(code)
    expect(path.is_file(), "play/s01_ex4.json does not exist yet: write the script there.")
    chapter = load(code)
    try:
        script = chapter.load_script(path)
    except chapter.ScriptError as error:
        raise Missing(f"The script does not load: {error}.") from None
    expect_equal(script.get("prompt"), PROMPT,
                 f"The script's prompt is not the exercise's: {PROMPT!r}.")
    turns = script["turns"]
    expect(len(turns) >= 2 and isinstance(turns[1], dict) and turns[1].get("when"),
           "The script's second turn has no `when`: it should be played only after the count.")
    with scratch({"notes.md": NOTES}) as work, screen() as shown:
        session = new_session(chapter, chapter.ScriptedModel(script), work)
        finished = chapter.run_turn(session, PROMPT)
    calls = [block["input"] for message in session.messages if message["role"] == "assistant"
             for block in message["content"] if block["type"] == "tool_use"]
    expect_equal(calls, [{"command": "wc -l notes.md"}],
                 "The script does not run exactly one tool call, bash with `wc -l notes.md`.")
    results = [block["content"] for message in session.messages if message["role"] == "user"
               and isinstance(message["content"], list)
               for block in message["content"] if block["type"] == "tool_result"]
    expect(turns[1]["when"] in results[0] and turns[1]["when"] not in PROMPT,
           f"The second turn's when, {turns[1]['when']!r}, is not in the result of wc -l and "
           "only there: make it a word the result holds and the prompt does not.")
    answer = session.messages[-1]
    expect(finished and answer["role"] == "assistant" and any(
        block["type"] == "text" and str(NOTES.count("\n")) in block["text"]
        for block in answer["content"]) and "The script has no more turns" not in shown.text,
        f"The turn does not end with an answer that says notes.md has {NOTES.count(chr(10))} "
        "lines.")


def test_exercise():
    run(check, CODE)
