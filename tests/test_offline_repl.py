"""A forgiving offline REPL, in every chapter.

  - the scripted model tells the truth about itself: a prompt it has no turn for gets
    an honest reply and does not use the script up; the end of the script names /restart
  - /help lists the chapter's commands; /restart starts again from a fresh copy
  - offline, the tools' HOME is the workdir: the shipped scenarios, replayed with the
    hard deny list (CATASTROPHIC) emptied, change nothing outside their workdir
"""

import hashlib
import json
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from support import (
    PRESENT,
    ROOT,
    FakeClient,
    assistant,
    clean_env,
    load_chapter,
    new_session,
    reply,
    result,
    run_chapter,
    shared_runner,
    text,
    tool_use,
    user,
)

HONEST = ("(This is a scripted model, and its script was written for the prompt: {}\n"
          "Type that prompt to play it.)")
OVER = ("(The script has no more turns: this is where the recorded session ended. "
        "In the REPL, /restart plays it again.)")
HOME_NOTE = "  (also HOME for the tools, offline)"

SCRIPT = {"prompt": "say hi", "turns": [{"content": [{"type": "text", "text": "Hi."}]}]}


def scenario(name):
    return json.loads((ROOT / name / "scenario.json").read_text(encoding="utf-8"))


def label(name):
    return name.split("_")[0]


# ======================================================================
# The scripted model tells the truth about itself
# ======================================================================

def test_another_prompt_at_the_start_gets_an_honest_reply_and_leaves_the_script_where_it_was(
        chapter, tmp_path, capsys):
    model = chapter.ScriptedModel(SCRIPT)
    session = new_session(chapter, model, tmp_path)

    chapter.run_turn(session, "what can you do?")
    assert model.position == 0
    chapter.run_turn(session, "say hi")
    chapter.run_turn(session, "and now?")

    assert session.messages == [
        user(text("what can you do?")), assistant(text(HONEST.format("say hi"))),
        user(text("say hi")), assistant(text("Hi.")),
        user(text("and now?")), assistant(text(OVER)),
    ]
    assert capsys.readouterr().out == HONEST.format("say hi") + "\nHi.\n" + OVER + "\n"


def test_a_script_without_a_prompt_plays_whatever_is_typed(chapter, tmp_path):
    model = chapter.ScriptedModel({"turns": SCRIPT["turns"]})
    session = new_session(chapter, model, tmp_path)
    chapter.run_turn(session, "anything")
    assert session.messages == [user(text("anything")), assistant(text("Hi."))]


def test_a_trace_replays_when_its_prompt_came_with_notes_after_it(chapter, tmp_path):
    # e.g. s06 --plan: the first user turn is the prompt, then a reminder. The typed
    # prompt is the first text block, so a replay of that trace plays from its start.
    answer = reply(text("Planning."))
    trace = tmp_path / "trace.jsonl"
    sent = [user(text("plan it"), text("<reminder>Plan mode is on.</reminder>"))]
    trace.write_text(
        json.dumps({"request": {"messages": sent}, "response": answer.to_dict(mode="json")})
        + "\n"
        + json.dumps({"request": {"messages": sent}, "response": answer.to_dict(mode="json")})
        + "\n"
    )
    script = chapter.load_script(trace)
    assert script["prompt"] == "plan it"
    assert chapter.ScriptedModel(script).messages.create(model="m", messages=sent) == answer


def typed_python():
    """How a chapter names this interpreter in a command it prints, from the repository root."""
    relative = os.path.relpath(sys.executable, ROOT)
    return sys.executable if relative.startswith(os.pardir) else relative


def run_as_printed(command):
    """Run a command a chapter printed, from the repository root, as a learner would type it
    there: its interpreter must be this one; the rest runs through the warm runner."""
    words = shlex.split(command)
    assert os.path.samefile(ROOT / words[0], sys.executable), words[0]
    runner = shared_runner()
    return runner.result(runner.start(ROOT / words[1], *words[2:], cwd=ROOT))


def test_a_scenario_run_one_shot_with_another_prompt_says_how_to_play_it_and_exits_1():
    result = run_chapter("s01_loop", "--offline", "hello?")
    prompt = scenario("s01_loop")["prompt"]
    command = f'{typed_python()} s01_loop/code.py --offline "{prompt}"'
    assert (result.returncode, result.stderr) == (1, "")
    assert result.stdout.splitlines()[-3:] == HONEST.format(prompt).splitlines() + [
        f"[The script did not play: it was written for another prompt. To play it: {command}]"
    ]
    assert "/help" not in result.stdout and "/restart" not in result.stdout  # one shot: no REPL
    played = run_as_printed(command)
    assert (played.returncode, played.stderr, HONEST.format(prompt) in played.stdout) == (
        0, "", False)


def test_without_a_key_another_prompt_says_in_one_line_that_it_needs_one_and_sends_nothing():
    # what a lesson's live command does when the learner has no key yet
    result = run_chapter("s02_tools", "Add a line to notes.md saying what s02 adds.")
    prompt = scenario("s02_tools")["prompt"]
    command = f'{typed_python()} s02_tools/code.py --offline "{prompt}"'
    assert (result.returncode, result.stdout, result.stderr) == (2, "", (
        "s02_tools: this prompt needs a real model: set ANTHROPIC_API_KEY in .env (see "
        f".env.example). Without a key, play the chapter's script: {command}\n"))
    played = run_as_printed(command)
    assert (played.returncode, played.stderr, HONEST.format(prompt) in played.stdout) == (
        0, "", False)


def test_without_a_key_the_scripts_own_prompt_and_offline_runs_still_play(chapter, tmp_path,
                                                                          monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    for variable in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(variable, raising=False)
    own = scenario(chapter.CHAPTER)["prompt"]
    args = chapter.parse_args(["--workdir", str(tmp_path), "another prompt"])
    assert chapter.needs_a_key(args) == (
        f"{chapter.CHAPTER}: this prompt needs a real model: set ANTHROPIC_API_KEY in .env (see "
        f".env.example). Without a key, play the chapter's script: {typed_python()} "
        f"{chapter.CHAPTER}/code.py --offline {json.dumps(own)}")
    for argv in (["--offline", "x"], ["--script", "s.json", "x"], [own], [f" {own} "], []):
        assert chapter.needs_a_key(chapter.parse_args(argv)) is None, argv
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    assert chapter.needs_a_key(args) is None


def test_one_shot_with_another_prompt_exits_1_and_names_the_script_it_plays(chapter, tmp_path,
                                                                             capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    work = tmp_path / "work"
    assert chapter.main(["--script", str(script), "--workdir", str(work), "hello?"]) == 1
    assert capsys.readouterr().out.splitlines()[-3:] == HONEST.format("say hi").splitlines() + [
        "[The script did not play: it was written for another prompt. To play it: "
        f'{typed_python()} {chapter.CHAPTER}/code.py --script {script} "say hi"]'
    ]
    assert chapter.main(["--script", str(script), "--workdir", str(work), "say hi"]) == 0


def test_a_new_prompt_after_a_cancelled_turn_gets_no_turn_written_for_the_scripts_prompt(
        chapter):
    script = {"prompt": "look", "turns": [
        {"content": [{"type": "text", "text": "Looking."},
                     {"type": "tool_use", "name": "bash", "input": {"command": "sleep 20"}}]},
        {"content": [{"type": "text", "text": "The answer to look."}]},
        {"when": "wait", "content": [{"type": "text", "text": "Waiting."}]}]}
    model = chapter.ScriptedModel(script)
    messages = [user(text("look"))]
    first = model.messages.create(model="m", messages=messages)
    messages += [assistant(*[block.to_dict() for block in first.content]),
                 user(result(first.content[1].id, "Interrupted by the user.", is_error=True),
                      text("what is the time?"))]
    said = model.messages.create(model="m", messages=messages)
    assert [block.text for block in said.content] == [
        "(This is a scripted model, and its script has no turn for a new prompt after a "
        "cancelled turn. /restart plays it again.)"]
    messages[-1]["content"][-1] = text("please wait")  # a turn whose `when` fits still plays
    assert [block.text for block in model.messages.create(model="m", messages=messages).content
            ] == ["Waiting."]


def test_the_scripts_own_prompt_again_plays_it_again(chapter, tmp_path, capsys):
    model = chapter.ScriptedModel(SCRIPT)
    session = new_session(chapter, model, tmp_path)

    chapter.run_turn(session, "say hi")
    chapter.run_turn(session, "say hi")

    assert session.messages == [
        user(text("say hi")), assistant(text("Hi.")),
        user(text("say hi")), assistant(text("Hi.")),
    ]
    assert capsys.readouterr().out == "Hi.\nHi.\n"


def test_an_answer_the_script_met_on_another_path_is_answered_by_its_turn(chapter, tmp_path):
    # The turns ahead have nothing for "some feedback"; an earlier conditional turn has, and the
    # script goes on from there.
    script = {"prompt": "go", "turns": [
        {"content": [{"type": "text", "text": "First."}]},
        {"when": "feedback", "content": [{"type": "text", "text": "Revised."}]},
        {"when": "ok", "content": [{"type": "text", "text": "Done."}]},
    ]}
    model = chapter.ScriptedModel(script)
    session = new_session(chapter, model, tmp_path)

    for prompt in ["go", "ok", "some feedback", "ok", "and now?"]:
        chapter.run_turn(session, prompt)

    assert session.messages == [
        user(text("go")), assistant(text("First.")),
        user(text("ok")), assistant(text("Done.")),
        user(text("some feedback")), assistant(text("Revised.")),
        user(text("ok")), assistant(text("Done.")),
        user(text("and now?")), assistant(text(OVER)),
    ]


# ======================================================================
# /help and /restart
# ======================================================================

HELP = {
    "s01_loop": ["/help", "/restart", "/clear"],
    "s02_tools": ["/help", "/restart", "/clear"],
    "s03_permissions": ["/help", "/restart", "/clear", "/mode"],
    "s04_hooks": ["/help", "/restart", "/clear", "/mode"],
    "s05_todo_write": ["/help", "/restart", "/clear", "/mode", "/todos"],
    "s06_plan_mode": ["/help", "/restart", "/clear", "/mode", "/todos", "/plan"],
    "s07_subagents": ["/help", "/restart", "/clear", "/mode", "/todos", "/plan"],
    "s08_compact": ["/help", "/restart", "/clear", "/mode", "/todos", "/plan", "/context",
                    "/compact"],
    "s09_memory": ["/help", "/restart", "/clear", "/mode", "/todos", "/plan", "/context",
                   "/compact", "/memory", "/remember"],
    "s10_skills": ["/help", "/restart", "/clear", "/mode", "/todos", "/plan", "/context",
                   "/compact", "/memory", "/remember", "/skills"],
    "s11_mcp": ["/help", "/restart", "/clear", "/mode", "/todos", "/plan", "/context",
                "/compact", "/memory", "/remember", "/skills", "/mcp"],
}


def test_help_lists_the_chapters_commands_with_their_first_docstring_line(
    chapter, tmp_path, capsys
):
    name = chapter.CHAPTER
    assert list(chapter.COMMANDS) == HELP[name]
    session = new_session(chapter, FakeClient(), tmp_path)
    chapter.run_command(session, "/help")
    expected = [f"  {chapter.COMMANDS[command].__doc__.splitlines()[0]}" for command in HELP[name]]
    assert capsys.readouterr().out.splitlines() == expected + [
        "  q, quit, exit or EOF leaves; Ctrl-C cancels a turn."
    ]
    assert expected[:3] == [
        "  /help lists the commands.",
        "  /restart starts again: a new session; offline, the script from its start.",
        "  /clear starts a new conversation; the rest of the session stays as it is.",
    ]


def test_restart_offline_makes_a_new_session_in_a_fresh_copy_of_the_workspace(
    chapter, tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    args = chapter.parse_args(["--offline"])
    session, _ = chapter.make_session(args)
    first_workdir, first_client = session.workdir, session.client
    prompt = scenario(chapter.CHAPTER)["prompt"]
    session.messages.append(user(text(prompt)))
    first_client.position = 2
    (first_workdir / "scratch.txt").write_text("made in the first run")
    capsys.readouterr()

    chapter.run_command(session, "/restart")

    assert capsys.readouterr().out == (
        "[Restarted: the script plays from its start, with a new history; "
        f"workdir: {session.workdir}{session_note(session)}]\n"
    )
    own = tmp_path.resolve() / f"build-an-agent-{os.getuid()}"
    assert session.workdir != first_workdir and session.workdir.parent == own
    assert sorted(p.name for p in session.workdir.iterdir()) == sorted(
        p.name for p in (chapter.HERE / "workspace").iterdir()
    )
    assert (first_workdir / "scratch.txt").read_text() == "made in the first run"  # left to look at
    assert session.messages == [] and session.client is not first_client
    assert session.client.position == 0 and session.args is args
    assert session.tool_environment == {"HOME": str(session.workdir)}
    for field, value in {"todos": [], "plan_mode": False, "notes": [], "mode": "default"}.items():
        if hasattr(session, field):
            assert getattr(session, field) == value


def session_note(session):
    """s06 on: the restart line ends with the new session's id."""
    return f"; session: {session.session_id}" if hasattr(session, "session_id") else ""


def test_restart_live_is_a_new_conversation_in_the_same_workdir(
    chapter, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.chdir(tmp_path)
    session, banner = chapter.make_session(chapter.parse_args([]))
    assert f"workdir: {tmp_path.resolve()}" in banner  # live: the cwd, and HOME as it is
    assert session.tool_environment == {}
    session.messages.append(user(text("hi")))
    capsys.readouterr()
    chapter.run_command(session, "/restart")
    assert capsys.readouterr().out == (
        f"[Restarted: a new conversation, with a new history; workdir: {tmp_path.resolve()}"
        f"{session_note(session)}]\n"
    )
    assert session.messages == []


def test_a_restart_that_fails_keeps_the_session(chapter, tmp_path, capsys):
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    session, _ = chapter.make_session(
        chapter.parse_args(["--script", str(script), "--workdir", str(tmp_path / "w")])
    )
    session.messages.append(user(text("say hi")))
    script.unlink()
    capsys.readouterr()
    chapter.run_command(session, "/restart")
    assert capsys.readouterr().out == (
        f"[Could not restart: {script}: No such file or directory. "
        "The session goes on.]\n"
    )
    assert session.messages == [user(text("say hi"))]


@pytest.mark.parametrize("name", PRESENT)
def test_the_repl_forgives_a_wrong_prompt_and_restart_plays_the_scenario_again(name, tmp_path):
    script = scenario(name)
    answers = script.get("answers", [])
    # From s11, the first prompt starts the MCP servers, each after its question: the first
    # answer says yes to the scenario's server, at "hello?"; after /restart, at the prompt.
    served = int(name >= "s11")
    stdin = "".join(
        f"{line}\n"
        for line in [
            "hello?",
            *answers[:served],
            script["prompt"],
            *answers[served:],
            "/restart",
            script["prompt"],
            *answers,
            "q",
        ]
    )
    result = run_chapter(name, "--offline", stdin=stdin, env=clean_env(TMPDIR=str(tmp_path)))
    assert (result.returncode, result.stderr) == (0, "")
    out = result.stdout.splitlines()
    at = out.index(f"{label(name)} >> hello?")
    honest = HONEST.format(script["prompt"]).splitlines()
    at += out[at:].index(honest[0]) - 1  # (s11: after the server's question and its line)
    assert out[at + 1 : at + 3] == honest
    # (s04: its Stop hook finds the tests failing and sends the model back; it answers the same)
    assert out.index(f"{label(name)} >> {script['prompt']}") > at
    restarted = [line for line in out if line.startswith("[Restarted: ")]
    ids = [line.removeprefix("session: ") for line in out if line.startswith("session: ")]
    if name >= "s06":  # the banner says the first session's id; the restart, the new one's
        new_id = restarted[0].rpartition("; session: ")[2].removesuffix("]")
        assert (len(ids), len(new_id), new_id != ids[0]) == (1, len(ids[0]), True)
        restarted = [line.replace(f"; session: {new_id}", "") for line in restarted]
    first = [
        line.removeprefix("workdir: ").removesuffix(HOME_NOTE)
        for line in out
        if line.startswith("workdir: ")
    ]
    own = tmp_path.resolve() / f"build-an-agent-{os.getuid()}"  # the learner's own folder
    assert sorted(path.name for path in tmp_path.iterdir()) == [own.name]
    workdirs = sorted(str(path) for path in own.iterdir())
    assert len(first) == 1 and len(workdirs) == 2 and first[0] in workdirs
    second = next(path for path in workdirs if path != first[0])
    assert restarted == [
        f"[Restarted: the script plays from its start, with a new history; workdir: {second}]"
    ]
    # The second play runs the same tool calls as the first.
    calls = [line for line in out if line.startswith("  > ")]
    split = next(at for at, line in enumerate(out) if line.startswith("[Restarted: "))
    before = [line for line in out[:split] if line.startswith("  > ")]
    assert before and calls == before * 2


# ======================================================================
# Safe by construction: HOME is the workdir offline
# ======================================================================


def test_offline_the_tools_home_is_the_workdir(chapter, tmp_path):
    session, banner = chapter.make_session(
        chapter.parse_args(["--offline", "--workdir", str(tmp_path)])
    )
    assert f"workdir: {tmp_path.resolve()}{HOME_NOTE}" in banner
    assert chapter.run_bash(session, "echo ~; echo $HOME") == (
        f"{tmp_path.resolve()}\n{tmp_path.resolve()}\n[exit code: 0]"
    )


def tree(folder):
    """Every path under folder, with the hash of each file: what must not change."""
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        if path.is_file()
        else "dir"
        for path in sorted(Path(folder).rglob("*"))
        if "__pycache__" not in path.parts
    }


def test_the_scenarios_without_the_hard_deny_list_change_nothing_outside_their_workdir(tmp_path):
    """Each chapter's scenario, every branch its answers and the REPL reach, replayed from a
    copy of the chapter whose CATASTROPHIC is emptied, with HOME a fake home folder."""
    home, sentinel = tmp_path / "home", tmp_path / "sentinel"
    for folder in (home, sentinel):
        (folder / "keep").mkdir(parents=True)
        (folder / "keep" / "file.txt").write_text("still here\n")
    runner = shared_runner()
    jobs = {}
    try:
        for name in PRESENT:
            copy = tmp_path / "chapters" / name
            shutil.copytree(
                ROOT / name, copy, ignore=shutil.ignore_patterns("__pycache__", "*.ipynb")
            )
            source = (copy / "code.py").read_text(encoding="utf-8")
            start = source.index("CATASTROPHIC = [")
            end = source.index("\n]\n", start) + 3
            (copy / "code.py").write_text(source[:start] + "CATASTROPHIC = []\n" + source[end:])
            (tmp_path / "tmp" / name).mkdir(parents=True)
        before = {name: tree(tmp_path / "chapters" / name) for name in PRESENT}
        for name in PRESENT:
            script = scenario(name)
            runs = [script.get("answers", [])]
            if name == "s03_permissions":
                runs += [["n"], ["a"], ["Also document it in README.md", "y"]]
            if name == "s06_plan_mode":  # each kind of answer to its question, then to the plan
                runs += [["1", "y"], ["2", "Also document it in README.md", "y"],
                         ["in my own words", "y"], ["", "n"]]
            copy = tmp_path / "chapters" / name
            for number, answers in enumerate(runs):
                stdin = "".join(f"{line}\n" for line in [script["prompt"], *answers, "q"])
                jobs[name, number] = runner.start(
                    copy / "code.py",
                    "--offline",
                    stdin=stdin,
                    cwd=sentinel,
                    env=clean_env(HOME=str(home), TMPDIR=str(tmp_path / "tmp" / name)),
                )
    finally:  # every run has ended, even after a failure
        results = {key: runner.result(job) for key, job in jobs.items()}
    assert {key: (result.returncode, result.stderr) for key, result in results.items()} == {
        key: (0, "") for key in jobs
    }
    # The guard really was gone: s03's `rm -rf ~` ran, and removed only the workdir.
    s03 = results["s03_permissions", 0].stdout
    assert (
        "  > bash: rm -rf ~\n  ? allow bash: rm -rf ~\n"
        "    [a] always is not offered: this is not one plain command.\n"
        "    [y] yes  [n] no: y\n"
        "    (no output)\n    [exit code: 0]\n"
    ) in s03
    assert (
        tree(home)
        == tree(sentinel)
        == {"keep": "dir", "keep/file.txt": hashlib.sha256(b"still here\n").hexdigest()}
    )
    assert {name: tree(tmp_path / "chapters" / name) for name in PRESENT} == before
    assert sorted(os.listdir(tmp_path)) == ["chapters", "home", "sentinel", "tmp"]


# ======================================================================
# s01: a slow step for practising Ctrl-C
# ======================================================================


def play_s01_then_wait(monkeypatch, tmp_path, sleep):
    """The s01 scenario in-process, then `wait`; bash is replaced, so nothing sleeps."""
    s01 = load_chapter("s01_loop")
    script = s01.load_script(ROOT / "s01_loop" / "scenario.json")
    commands = []

    def fake_bash(session, command):
        commands.append(command)
        if command == "sleep 20":
            return sleep()
        return "(output)\n[exit code: 0]"

    monkeypatch.setattr(s01, "run_bash", fake_bash)
    session = new_session(s01, s01.ScriptedModel(script), tmp_path)
    assert s01.run_turn(session, script["prompt"]) is True
    played = len(session.messages)
    finished = s01.run_turn(session, "wait")
    return s01, session, commands, played, finished


def test_s01_wait_runs_sleep_20_after_the_scenario(monkeypatch, tmp_path):
    s01, session, commands, played, finished = play_s01_then_wait(
        monkeypatch, tmp_path, lambda: "(no output)\n[exit code: 0]"
    )
    assert finished is True
    assert commands == ["ls", "head -n 1 notes.md", "python3 hello.py", "sleep 20"]
    assert session.messages[played:] == [
        user(text("wait")),
        assistant(
            text("This will take a while."), tool_use("toolu_04", "bash", {"command": "sleep 20"})
        ),
        user(
            {
                "type": "tool_result",
                "tool_use_id": "toolu_04",
                "content": "(no output)\n[exit code: 0]",
            }
        ),
        assistant(text("Done: sleep 20 ran to its end. Next time, press Ctrl-C while it runs.")),
    ]


def test_s01_ctrl_c_during_the_sleep_keeps_a_valid_history_and_the_script_then_says_it_is_over(
    monkeypatch, tmp_path, capsys
):
    def interrupted():
        raise KeyboardInterrupt

    s01, session, commands, played, finished = play_s01_then_wait(
        monkeypatch, tmp_path, interrupted
    )
    assert finished is False
    assert s01.run_turn(session, "next") is True
    assert session.messages[played:] == [
        user(text("wait")),
        assistant(
            text("This will take a while."), tool_use("toolu_04", "bash", {"command": "sleep 20"})
        ),
        user(
            {
                "type": "tool_result",
                "tool_use_id": "toolu_04",
                "content": "Interrupted by the user.",
                "is_error": True,
            },
            text("next"),
        ),
        assistant(text(OVER)),
    ]
    assert capsys.readouterr().out.splitlines()[-4:] == [
        "This will take a while.",
        "  > bash: sleep 20",
        "[Interrupted.]",
        *OVER.splitlines(),
    ]


# ======================================================================
# s03: every answer to its question ends honestly
# ======================================================================

S03_ENDINGS = {
    "n": [
        "    error: The user denied this call. Do not try it again as it is; ask the user, or find "
        "another way.",
        "Understood: I won't create hello.txt. "
        "Tell me if you would like a different name or content.",
        "s03 >> and now?",
        OVER,
        "s03 >> q",
    ],
    "a": [
        "  > bash: cat hello.txt",
        "    Hello from s03!",
        "    [exit code: 0]",
        "Done: hello.txt holds one line, \"Hello from s03!\".",
        "s03 >> q",
    ],
}


@pytest.mark.parametrize("answer", sorted(S03_ENDINGS))
def test_s03_no_and_always_end_with_what_really_happened(answer, tmp_path):
    prompt = scenario("s03_permissions")["prompt"]
    stdin = f"{prompt}\n{answer}\n" + ("and now?\n" if answer == "n" else "") + "q\n"
    result = run_chapter("s03_permissions", "--offline", "--workdir", str(tmp_path), stdin=stdin)
    assert (result.returncode, result.stderr) == (0, "")
    ending = S03_ENDINGS[answer]
    assert result.stdout.splitlines()[-len(ending) :] == ending
    assert (tmp_path / "hello.txt").exists() is (answer == "a")


# ======================================================================
# Off the script: each way off it has a next step
# ======================================================================

def scenario_session(name, tmp_path):
    """The chapter's offline session on a copy of its workspace, as the command line makes it."""
    chapter = load_chapter(name)
    work = tmp_path / "work"
    shutil.copytree(ROOT / name / "workspace", work)
    session, _ = chapter.make_session(chapter.parse_args(["--offline", "--workdir", str(work)]))
    return chapter, session, work


def test_s03_ctrl_c_at_the_question_then_the_prompt_again_plays_the_script_again(
        answers, tmp_path, capsys):
    s03, session, work = scenario_session("s03_permissions", tmp_path)
    answers(KeyboardInterrupt, "y")
    prompt = scenario("s03_permissions")["prompt"]
    assert s03.run_turn(session, prompt) is False
    assert not (work / "hello.txt").exists()
    assert s03.run_turn(session, prompt) is True

    assert (work / "hello.txt").read_text() == "Hello from s03!\n"
    done = 'Done: hello.txt holds one line, "Hello from s03!".'
    assert session.messages[-1] == assistant(text(done))
    assert "(The script has no more turns" not in capsys.readouterr().out


S04_OFF_SCRIPT = [
    "(This is a scripted model, and its script was written for the prompt: Add a subtract(a, b) "
    "function to calc.py.",
    "Type that prompt to play it.)",
    "[A Stop hook sends the model back to work: The tests fail. Run python3 -m unittest and fix "
    "them before you finish.]",
    "(This is a scripted model, and its script was written for the prompt: Add a subtract(a, b) "
    "function to calc.py.",
    "Type that prompt to play it.)",
    "[A Stop hook asked again, and the model gave the same answer as before: sending it back "
    "once more would only repeat it. The turn ends.]",
]


def test_s04_the_stop_hook_does_not_loop_on_the_same_answer_to_an_off_script_prompt(
        tmp_path, capsys):
    s04, session, work = scenario_session("s04_hooks", tmp_path)
    capsys.readouterr()

    assert s04.run_turn(session, "hello?") is True

    assert capsys.readouterr().out.splitlines() == S04_OFF_SCRIPT
    assert s04.run_turn(session, scenario("s04_hooks")["prompt"]) is True  # the script then plays
    assert "def subtract(a, b):\n    return a - b\n" in (work / "calc.py").read_text()


@pytest.mark.parametrize("name", ["s04_hooks", "s05_todo_write", "s06_plan_mode"])
def test_a_stop_hook_that_gets_the_same_answer_again_ends_the_turn(name, tmp_path, capsys):
    chapter = load_chapter(name)
    client = FakeClient(reply(text("No.")), reply(text("No.")))  # a third call fails the test
    session = new_session(chapter, client, tmp_path)
    chapter.add_hook(session, "Stop", lambda event: {"decision": "block", "reason": "go on"})

    assert chapter.run_turn(session, "stop?") is True

    assert session.messages == [
        user(text("stop?")), assistant(text("No.")),
        user(text('<hook event="Stop">go on</hook>')), assistant(text("No.")),
    ]
    assert capsys.readouterr().out.splitlines() == [
        "No.",
        "[A Stop hook sends the model back to work: go on]",
        "No.",
        "[A Stop hook asked again, and the model gave the same answer as before: sending it back "
        "once more would only repeat it. The turn ends.]",
    ]


def test_offline_copies_go_in_a_folder_of_the_learners_own_and_one_of_someone_else_is_refused(
        chapter, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(chapter.tempfile, "tempdir", str(tmp_path))
    session, banner = chapter.make_session(chapter.parse_args(["--offline"]))
    own = tmp_path.resolve() / f"build-an-agent-{os.getuid()}"
    assert session.workdir.parent == own
    assert (own.stat().st_mode & 0o777, sorted(tmp_path.iterdir())) == (0o700, [own])
    assert banner[3] == (f"(a fresh copy of workspace/, kept after the run to look at; "
                         f"rm -rf {own} removes them all)")

    shutil.rmtree(own)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    own.symlink_to(elsewhere)  # planted on a shared /tmp: the copies would go where it points
    assert chapter.main(["--offline", "hi"]) == 2
    assert capsys.readouterr().err == (
        f"{chapter.CHAPTER}: {own} is not a folder of yours that only you can write to: remove "
        "it, or set TMPDIR to another folder\n")
    assert list(elsewhere.iterdir()) == []
