"""The stage checker (course/stages): fair to the course's own chapters, and able to fail.

Every program here is checked in one batch (`course.stages.run_many`), on one loopback API,
its runs forked from the warm runner (course/warm.py), as the checker's are: each chapter
against its own stage and every one before, and against the next stage's own checks;
build/agent.py against s02; tests/stage_programs/good.py (an agent written from the lessons'
"Build it yourself" sections) against every stage; and each of the learners' mistakes of
tests/stage_programs/mistakes.py against the exchange of the check it must fail.
"""

import ast
import contextlib
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import course.stages
from course import CHAPTERS, ROOT
from course.stages import (
    Check,
    Draw,
    command,
    environment,
    main,
    report,
    run_many,
    runner_launch,
    selected,
    subprocess_launch,
    wrap,
)
from course.stages.checks import CHECKS
from course.stages.s01 import LOOP
from course.warm import Runner
from stage_programs.mistakes import ISSUE_39, MISTAKES
from support import shared_runner

PROGRAMS = Path(__file__).resolve().parent / "stage_programs"
GOOD = (PROGRAMS / "good.py").read_text()
SEED = 39  # the tests' run draws its values from this seed, so that the messages are pinned


def warm_launch(path, args, stdin, cwd, env, timeout):
    """The checker's launch (course.stages.runner_launch), through the session's warm runner."""
    return runner_launch(shared_runner())(path, args, stdin, cwd, env, timeout)


BASH_RUNS = ("    run = subprocess.run(command, shell=True, cwd=WORKDIR, capture_output=True, "
             "text=True,\n                         timeout=60)\n"
             '    return f"{run.stdout}{run.stderr}[exit code {run.returncode}]"')


def replayed_outputs(seed):
    """bash for a program that replays, in order, what the shell said in the run of `seed`."""
    draw = Draw(seed, LOOP.name)
    draw.fill_json(LOOP.files), LOOP.replies(draw), draw.fill(LOOP.prompt)  # the run's order
    outputs = [draw.fill("<<shout>>").upper() + "\n[exit code 0]",
               draw.fill("<<broken>>\n[exit code <<n_code>>]"),
               draw.fill("<<content>>\n[exit code 0]")]
    return f"    return {outputs!r}[2 * (len(messages) // 2 - 1) + ('exit' in command)]"


def checked_by(label):
    return label.split(":")[0]


def failures(results):
    return {check.name: message for check, message in results if message}


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """{label: {failing check: message}} for every program of this file, checked at once."""
    folder = tmp_path_factory.mktemp("stage-programs")
    jobs = {}
    for chapter in CHAPTERS:
        jobs[chapter] = (ROOT / chapter / "code.py", selected(chapter[:3]))
    jobs["build"] = (ROOT / "build" / "agent.py", selected("s02"))
    for chapter, after in zip(CHAPTERS, course.stages.STAGES[1:], strict=False):
        jobs[f"{chapter[:3]} at {after}"] = (ROOT / chapter / "code.py", selected(after, only=True))
    jobs["good"] = (PROGRAMS / "good.py", selected(course.stages.STAGES[-1]))
    for label, _, old, new, _ in MISTAKES:
        assert GOOD.count(old) == 1, label  # each mistake edits one place of good.py
        program = folder / f"{label.replace(':', '-')}.py"
        program.write_text(GOOD.replace(old, new))
        exchange = next(check.exchange for check in CHECKS if check.name == checked_by(label))
        jobs[label] = (program, [check for check in CHECKS if check.exchange is exchange])
    replay = folder / "replay.py"
    replay.write_text(GOOD.replace(BASH_RUNS, replayed_outputs(SEED + 1)))
    jobs["replay"] = (replay, selected("s01"))
    results = run_many(list(jobs.values()), launch=warm_launch, seed=SEED)
    return {label: failures(result) for label, result in zip(jobs, results, strict=True)}


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_each_chapter_passes_its_own_stage_and_every_one_before(checked, chapter):
    assert checked[chapter] == {}


def test_the_agent_written_from_the_lessons_sections_passes_every_stage(checked):
    assert checked["good"] == {}


def test_build_agent_passes_s01_and_fails_s02_saying_what_to_build(checked):
    assert sorted(checked["build"]) == sorted(c.name for c in CHECKS if c.stage == "s02")
    assert checked["build"]["s02.tools_offered"] == (
    "Request 1 does not offer read_file; it should offer read_file with the properties "
    "['path', 'offset', 'limit'].")


def test_s06_fails_stage_s07_saying_what_to_build(checked):
    assert checked["s06 at s07"]["s07.agent_offered"] == (
        "Request 1 offers ['ask_user_question', 'bash', 'edit_file', 'enter_plan_mode', "
        "'exit_plan_mode', 'glob', 'read_file', 'todo_write', 'write_file']; it should offer the "
        "tool agent, whose input_schema has the properties description and prompt.")


def test_s07_fails_stage_s08_saying_what_to_build(checked):
    said = checked["s07 at s08"]["s08.too_long"]
    assert "unrecognized arguments: --clear-at" in said
    assert said.endswith(
        "It was run with --plan --clear-at 57000 --compact-at 108000 before the prompt: the "
        "section of the stage that checks --plan, --clear-at and --compact-at says what they "
        "do, and your program must accept them.")


NEXT_STAGE = {  # each chapter's code at the next stage: its first failing check, and what it says
    "s01 at s02": ("s02.tools_offered", "it should offer read_file with the properties"),
    "s02 at s03": ("s03.deny_rule", 'the rule "write_file(secret-ltazkz.txt)" denies it, so it '
                   "should get an is_error result"),
    "s03 at s04": ("s04.hook_stdin", "unknown key 'hooks'"),
    "s04 at s05": ("s05.valid_list", "it should offer todo_write, whose input_schema has the "
                   "property `todos`"),
    "s05 at s06": ("s06.plan_tools", "unrecognized arguments: --plan It was run with --plan "
                   "before the prompt: the section of the stage that checks --plan says what it "
                   "does, and your program must accept it."),
    "s06 at s07": ("s07.agent_offered", "it should offer the tool agent, whose input_schema has "
                   "the properties description and prompt."),
    "s07 at s08": ("s08.too_long", "unrecognized arguments: --clear-at"),
    "s08 at s09": ("s09.memory_first", "does not hold 'rule-user-wqsqrl', the text of the "
                   "user's AGENTS.md. It should hold the user's ~/.agent/AGENTS.md, then the "
                   "project root's, then the workdir's, in that order"),
    "s10 at s11": ("s11.handshake", "Read .mcp.json, ask, then start its command with its args."),
    "s09 at s10": ("s10.catalog", "Every request should carry the catalog: for each skill in "
                   ".agent/skills/NAME/SKILL.md that the model may use, its name and description"),
}


@pytest.mark.parametrize("pair", NEXT_STAGE)
def test_each_chapter_fails_the_next_stage_saying_what_to_build(checked, pair):
    name, message = next(iter(checked[pair].items()))  # the first the report prints
    assert (name, NEXT_STAGE[pair][1] in message) == (NEXT_STAGE[pair][0], True)


def test_every_check_has_a_mistake_that_fails_it():
    assert sorted({checked_by(label) for label, *_ in MISTAKES}) == sorted(
        check.name for check in CHECKS)
    assert len({label for label, *_ in MISTAKES}) == len(MISTAKES)
    assert set(ISSUE_39) <= {label for label, *_ in MISTAKES} and len(set(ISSUE_39)) == 11


@pytest.mark.parametrize("mistake", MISTAKES, ids=[mistake[0] for mistake in MISTAKES])
def test_a_learners_mistake_fails_its_check(checked, mistake):
    label, _, _, _, failing = mistake
    assert sorted(checked[label]) == sorted(failing)
    assert wrap(checked[label][checked_by(label)])[0] == FIRST_LINES[label]


# The mistakes whose first failing check, the first message a learner reads, is not their own:
# each breaks that earlier rule too (a failing command ends the loop before its results go
# back; an edit that writes new_string alone changes what read_file reads next; ...).
FIRST_READ_ELSEWHERE = {
    "s01.failing_command": "s01.tool_results", "s02.edit_file": "s02.read_file",
    "s04.post_tool_use_output": "s04.matchers", "s05.reminder_count": "s05.reminder_after_results",
    "s03.deny_spellings": "s03.deny_rule", "s04.matchers:ignored": "s04.hook_before_question",
    "s04.matchers:substring": "s04.hook_before_question",
    "s05.reminder_after_results:own_turn": "s05.invalid_list", "s07.child_hidden": "s07.child_runs",
    "s07.only_the_answer:shared": "s07.child_history", "s08.summary_request": "s08.too_long",
    "s11.asks_before_call": "s11.deny_rule",
}


@pytest.mark.parametrize("mistake", MISTAKES, ids=[mistake[0] for mistake in MISTAKES])
def test_the_first_failure_a_learner_reads_names_the_rule_they_broke(checked, mistake):
    label = mistake[0]
    assert next(iter(checked[label])) == FIRST_READ_ELSEWHERE.get(label, checked_by(label))


def test_a_program_that_replays_the_outputs_of_another_run_fails_s01(checked):
    assert sorted(checked["replay"]) == ["s01.bash_output"]


def test_a_crash_before_the_first_request_says_so_in_every_check(checked):
    said = checked["s01.first_request:crash"]
    assert set(said.values()) == {
        "Your program sent no request before it ended. It exited with status 1; its stderr "
        "ends: agent: no settings found"}


def test_a_program_that_sends_no_request_hears_what_request_1_should_be(checked):
    assert checked["s08.first_estimate:refuses"]["s08.first_estimate"].endswith(
        "Here the prompt alone is past --compact-at: before the first reply the context's size "
        "is the estimate alone, so request 1 should be a summary request of it.")


def test_a_knock_on_failure_names_the_check_it_may_follow_from(checked):
    assert checked["s06.plan_refuses"]["s06.plan_approved"].endswith(
        "This may follow from s06.plan_refuses, which failed on the same exchange: fix that "
        "first.")


def test_the_values_are_drawn_from_the_seed_and_the_seed_replays_them():
    def drawn(seed):
        draw = Draw(seed, "loop")
        return LOOP.replies(draw), draw.value("model")
    assert drawn(5) == drawn(5)
    assert drawn(5) != drawn(6)
    (replies, model) = drawn(5)
    commands = [block["input"]["command"] for reply in replies for block in reply
                if block["type"] == "tool_use"]
    assert [re.sub(r"-[a-z]{6}\b", "-xxxxxx", c) for c in commands] == [
        "echo shout-xxxxxx | tr a-z A-Z", "echo broken-xxxxxx >&2; exit " + commands[1][-3:],
        "cat data-xxxxxx.txt"]
    assert "<<" not in json.dumps(replies) and model.startswith("model-")


def test_the_command_of_a_stage():
    assert command("s03") == ".venv/bin/python -m course.stages s03 build/agent.py"
    assert command("s06", "mine.py") == ".venv/bin/python -m course.stages s06 mine.py"


def test_build_readme_gives_the_command_of_every_stage():
    readme = (ROOT / "build" / "README.md").read_text(encoding="utf-8")
    rows = [line.split(" | ")[-1].strip(" `|") for line in readme.splitlines()
            if re.match(r"\| s\d\d \|", line)]
    assert rows == [command(stage) for stage in course.stages.STAGES]


def test_the_shared_runner_leaves_no_folder_behind(tmp_path):
    """Each test process and each run of course.stages left a chapter-runs-* folder with every
    run's stdin, stdout and stderr in the temporary folder: 730 of them on this machine."""
    code = "from course.warm import shared_runner; print(shared_runner().folder.parent)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, "TMPDIR": str(tmp_path)}, timeout=60)
    assert (done.returncode, done.stdout, list(tmp_path.iterdir())) == (0, f"{tmp_path}\n", [])


def test_list_names_every_check_of_every_stage_in_order():
    done = subprocess.run([sys.executable, "-m", "course.stages", "--list"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert [line.split(":")[0] for line in done.stdout.splitlines()] == [
        check.name for check in CHECKS]
    assert [check.stage for check in CHECKS] == sorted(check.stage for check in CHECKS)


def test_the_report_has_one_line_per_check_and_says_what_to_build_next():
    first, second = (Check(stage, f"{stage}.x", None, "does x", None) for stage in ("s01", "s02"))
    message = "Request 1 does not offer read_file; it should offer it. " * 2
    assert report([(first, None), (second, message.strip())], "s02", "build/agent.py", 1.25,
                  seed=123456) == (
        "s01 · s01_loop\n"
        "  ✓ s01.x: does x\n"
        "s02 · s02_tools\n"
        "  ✗ s02.x: does x\n"
        "      Request 1 does not offer read_file; it should offer it. Request 1 does not offer\n"
        "      read_file; it should offer it.\n"
        "\n"
        "1 of 2 checks pass (1.2 s). Seed 123456: --seed 123456 replays this run.\n"
        'Next: build what s02 asks for: the contract is in s02_tools/README.md, section '
        '"Build it yourself".')
    assert report([(first, None)], "s01", "build/agent.py", 2).splitlines()[-1] == (
        'Stage s01 passes. Next: s02_tools/README.md, "Build it yourself", then '
        ".venv/bin/python -m course.stages s02 build/agent.py")
    assert report([(first, None)], "s07", "s07_subagents/code.py", 2).splitlines()[-1] == (
        'Stage s07 passes. Next: s08_compact/README.md, "Build it yourself", then '
        ".venv/bin/python -m course.stages s08 s08_compact/code.py")  # not s07's code again
    assert report([(second, None)], "s02", "build/agent.py", 2, only=True).splitlines()[-1] == (
        "Stage s02's own checks pass; without --only, .venv/bin/python -m course.stages s02 "
        "build/agent.py runs the earlier stages' checks too.")


def test_json_gives_each_check_and_the_exit_status_says_whether_all_pass(monkeypatch, capsys):
    monkeypatch.setattr(course.stages, "launcher", lambda: contextlib.nullcontext(warm_launch))
    assert main(["s02", str(ROOT / "build" / "agent.py"), "--only", "--json", "--seed", "7"]) == 1
    said = json.loads(capsys.readouterr().out)
    assert said["seed"] == 7
    assert said["checks"][-1]["message"].startswith(
        "Your program sent 1 request; it should have sent request 5, with the results of the "
        "tool calls in reply 4. It exited with status 1; its stderr ends: ")
    assert [(c["name"], c["passed"]) for c in said["checks"]] == [
        (check.name, False) for check in CHECKS if check.stage == "s02"]
    assert (said["stage"], said["passed"]) == ("s02", False)
    assert said["checks"][0]["message"] == checked_message_of_build


checked_message_of_build = (
    "Request 1 does not offer read_file; it should offer read_file with the properties "
    "['path', 'offset', 'limit'].")


def test_the_checker_needs_only_the_standard_library():
    course_folder = ROOT / "course"
    paths = [course_folder / "api.py", course_folder / "warm.py", course_folder / "warm_server.py",
             *(course_folder / "stages").glob("*.py")]
    for path in paths:
        # the warm runner's process imports anthropic if it can (and goes on without)
        allowed = {"anthropic"} if path.name == "warm_server.py" else set()
        for node in ast.walk(ast.parse(path.read_text())):
            names = [alias.name for alias in getattr(node, "names", [])]
            if isinstance(node, ast.ImportFrom):
                names = [node.module]
            if isinstance(node, ast.Import | ast.ImportFrom):
                outside = [name for name in names if name.split(".")[0] != "course"
                           and name.split(".")[0] not in sys.stdlib_module_names | allowed]
                assert outside == [], path


# Programs that show what a run forked from the warm runner shares with `python PATH`: each
# ends the same through both launches: (returncode, stdout, stderr), "PATH" its path.
FORKED_AS_ALONE = {
    "no anthropic, argv, cwd, env, stdin, exit status": (
        "import os, sys\n"
        "print(sys.argv[1:], os.path.basename(os.getcwd()), os.environ['MODEL_ID'])\n"
        "print(repr(sys.stdin.read()))\n"
        "print('to stderr', file=sys.stderr)\n"
        "sys.exit(3)\n",
        (3, "['--flag', 'prompt é'] work model-x\n'line 1\\nline 2\\n'\n", "to stderr\n")),
    "reads stdin to its end": (
        "while True:\n"
        "    try:\n"
        "        line = input('? ')\n"
        "    except EOFError:\n"
        "        print('end')\n"
        "        break\n"
        "    print('got', line)\n",
        (0, "? got line 1\n? got line 2\n? end\n", "")),
    "fails at an import": (
        "import json\nimport course_no_such_module\n",
        (1, "", 'Traceback (most recent call last):\n  File "PATH", line 2, in <module>\n'
            "    import course_no_such_module\n"
            "ModuleNotFoundError: No module named 'course_no_such_module'\n")),
    "does not compile": (
        "print('a'\n",
        (1, "", '  File "PATH", line 1\n    print(\'a\'\n         ^\n'
            "SyntaxError: '(' was never closed\n")),
    "stdout buffered as for a file": (
        "import os\nprint('a')\nos.system('echo b')\nprint('c')\n",
        (0, "b\na\nc\n", "")),
    "threads and atexit at the end": (
        "import atexit, threading\natexit.register(print, 'atexit')\n"
        "threading.Thread(target=print, args=('thread',)).start()\n",
        (0, "thread\natexit\n", "")),
    "exits with a message": ("import sys\nsys.exit('bye')\n", (1, "", "bye\n")),
    "an uncaught KeyboardInterrupt": (
        "raise KeyboardInterrupt\n",
        (-2, "", 'Traceback (most recent call last):\n  File "PATH", line 1, in <module>\n'
             "    raise KeyboardInterrupt\nKeyboardInterrupt\n")),
    "still running at the timeout": (
        "import subprocess\nprint('started', flush=True)\nsubprocess.run(['sleep', '60'])\n",
        (None, "started\n", "")),
}


def test_an_exchange_two_jobs_ask_of_one_program_runs_once_and_both_are_judged(tmp_path):
    """The tests' batch checks s04's code at its own stages and at s05's, which share the
    todos exchange: one run answers both jobs (a second would be thrown away, its folder left
    behind)."""
    program = tmp_path / "program.py"
    program.write_text("print('no request')\n")
    todos = [check for check in CHECKS if check.exchange.name == "todos"]
    launched = []

    def launch(path, args, stdin, cwd, env, timeout):
        launched.append(path)
        return 0, "no request\n", ""

    first, second = run_many([(program, todos[:1]), (program, todos)], launch=launch, seed=SEED)
    assert launched == [program]
    assert [check for check, _ in first] == todos[:1]
    assert [check for check, _ in second] == todos
    assert all(message for _, message in first + second)  # no request: every check fails


def test_a_forked_run_ends_as_python_path_would(tmp_path):
    env = environment("http://127.0.0.1:9/lane", "model-x")
    env.pop("PYTHONUNBUFFERED", None)  # as a learner's shell has it
    (tmp_path / "work").mkdir()
    # The runner started (it imports anthropic) before the clock of the run that times out
    # starts: 1.5 s is then only for a `python` to start and print, twenty times what it takes.
    (tmp_path / "nothing.py").write_text("", encoding="utf-8")
    assert warm_launch(tmp_path / "nothing.py", [], "", tmp_path / "work", env, 60) == (0, "", "")
    runs = {}
    with ThreadPoolExecutor(2 * len(FORKED_AS_ALONE)) as pool:
        for number, (name, (source, _)) in enumerate(FORKED_AS_ALONE.items()):
            path = tmp_path / f"program{number}.py"
            path.write_text(source, encoding="utf-8")
            timeout = 1.5 if name == "still running at the timeout" else 60
            for launch in (subprocess_launch, warm_launch):
                runs[name, launch] = pool.submit(launch, path, ["--flag", "prompt é"],
                                                 "line 1\nline 2\n", tmp_path / "work", env,
                                                 timeout)
    for number, (name, (_, expected)) in enumerate(FORKED_AS_ALONE.items()):
        path = str(tmp_path / f"program{number}.py")
        wanted = tuple(part.replace("PATH", path) if isinstance(part, str) else part
                       for part in expected)
        assert runs[name, warm_launch].result() == runs[name, subprocess_launch].result(), name
        assert runs[name, warm_launch].result() == wanted, name


def test_without_fork_the_checker_and_the_runner_start_plain_subprocesses(monkeypatch, tmp_path):
    monkeypatch.delattr(os, "fork")
    with course.stages.launcher() as launch:
        assert launch is subprocess_launch
    program = tmp_path / "program.py"
    program.write_text("import sys, time\nprint(sys.argv[1:], sys.stdin.read())\n"
                       "sys.exit(4) if sys.argv[1] == 'end' else time.sleep(60)\n")
    runner = Runner(tmp_path, env=environment("http://127.0.0.1:9/lane", "model-x"))
    assert not runner.forking
    ending, hanging = (runner.start(program, word, stdin="in\n", cwd=tmp_path)
                       for word in ("end", "hang"))
    done = runner.result(ending)
    assert (done.returncode, done.stdout, done.stderr) == (4, "['end'] in\n\n", "")
    with pytest.raises(TimeoutError):
        runner.result(hanging, timeout=0.5)
    assert runner.jobs[hanging][1].poll() is not None  # stopped
    runner.close()


FIRST_LINES = {  # the first line the checker prints under the failing check (seed SEED)
    's01.first_request':
    'Request 1 starts with {"role": "user", "content": "What files are here?"}; it should start',
    's01.tool_results':
    "Reply 1 asked for the tool_use ids ['toolu_yDsVoQU6yaTYvoNAORJy2eW9',",
    's01.bash_output':
    'The result of bash {"command": "echo broken-kavtsx >&2; exit 190"} is \'\'; it should hold',
    's01.history':
    'Request 3 sends 3 message(s), starting [{"role": "user", "content": [{"type":',
    's01.failing_command':
    'After reply 1 (whose second command exits 190), your program sent 0 more request(s)',
    's01.final_text':
    "Your program did not print 'final-vhtpzm' on stdout; the text of the last reply should be",
    's02.tools_offered':
    "Request 1 offers read_file with the properties ['file_path', 'limit', 'offset']; it should",
    's02.read_file':
    'The result of read_file {"path": "notes-kzczpn.md"} is \'1 beta-arxilz\'; it should hold',
    's02.write_file':
    'The call write_file {"path": "folder-ycilkt/new-jszerc.txt", "content": "made-zmwxfe\\n"}',
    's02.edit_file':
    'After edit_file {"path": "notes-kzczpn.md", "old_string": "beta-arxilz", "new_string":',
    's02.glob':
    'glob {"pattern": "*.md"} returned \'docs/deep-awjasy.md every-efbmnx.txt',
    's02.outside_paths':
    'The call write_file {"path": "link/linked-dqdmrq.txt", "content": "x"} got the result',
    's02.bad_calls':
    'Your program sent 4 requests; it should have sent request 5, with the results of the tool',
    's03.yes_runs':
    'The call write_file {"path": "written-gjacwp.txt", "content": "A\\n"} got an is_error',
    's03.question_shows_call':
    "Your program did not print 'written-gjacwp.txt' on stdout; a question must show the path,",
    's03.deny_rule':
    'The call write_file {"path": "secret-ltazkz.txt", "content": "s"} got the result \'wrote',
    's03.no_refuses':
    'The call write_file {"path": "refused-bxiwey.txt", "content": "B\\n"} got the result \'wrote',
    's03.eof_refuses':
    'The call bash {"command": "rm kept-yijowz.txt"} got the result \'[exit code 0]\' without',
    's03.reads_run':
    'The call bash {"command": "ls"} got an is_error result: \'The user said no.\'. It should',
    's03.allow_rule':
    'The call bash {"command": "touch allowed-rmdqpm.txt"} got an is_error result: \'The user',
    's04.hook_stdin':
    'The PreToolUse hook of bash got [{"hook_event_name": "PreToolUse", "cwd": "<workdir>",',
    's04.pre_tool_use_blocks':
    "The blocked call's result is 'Blocked by a PreToolUse hook.'; it should hold the hook's",
    's04.post_tool_use_output':
    'The PostToolUse hook of bash printed {"context": "postnote-nhfhud"} after ls; the user',
    's04.stop_hook':
    'After reply 8 ended the turn, the Stop hook exited 2; your program should have sent',
    's05.valid_list':
    'The call todo_write {"todos": [{"content": "Read the notes", "status": "in_progress",',
    's05.invalid_list':
    'The call todo_write {"todos": [{"content": "", "status": "pending"}]} got the result',
    's05.reminder_after_results':
    'The user turn of request 5 holds 0 text block(s) about todos after the tool results and 1',
    's05.reminder_count':
    'No reminder came in request 5; rounds 2, 3 and 4 had no successful todo_write (a failed',
    's06.plan_tools':
    "With --plan, request 1 offers ['bash', 'read_file', 'write_file', 'edit_file', 'glob',",
    's06.plan_refuses':
    'The call write_file {"path": "x-kpyucx.txt", "content": "x"} got the result \'wrote',
    's06.plan_approved':
    '.agent/plans/ holds []; after y it should hold one file with the plan.',
    's06.plan_rejected':
    "After n, then the end of stdin, .agent/plans/ holds ['plan.md']; a rejected plan is not",
    's06.ask_user_question':
    'The result of ask_user_question {"questions": [{"question": "Which database?", "header":',
    's01.bash_output:canned':
    'The result of bash {"command": "echo shout-njglkl | tr a-z A-Z"} is \'[exit code 0]\'; it',
    's01.first_request:model':
    "Request 1 names the model 'claude-sonnet-5-5'; it should name 'model-nequgj', the value of",
    's01.first_request:crash':
    'Your program sent no request before it ended. It exited with status 1; its stderr ends:',
    's01.tool_results:swapped':
    'The tool_result with the id toolu_yDsVoQU6yaTYvoNAORJy2eW9 holds the output of bash',
    's02.outside_paths:prefix':
    'The call write_file {"path": "../work-sibling-juuiao/near-jtdmqp.txt", "content": "x"} got',
    's02.edit_once':
    'The call edit_file {"path": "twice-jqoblo.txt", "old_string": "dup-figddm", "new_string":',
    's02.glob:recursive':
    'glob {"pattern": "*.md"} returned \'docs/deep-awjasy.md notes-kzczpn.md\';',
    's03.chains_ask':
    'The call bash {"command": "cat notes-feuvny.md && touch joined-ebcsry.txt"} got the result',
    's03.deny_spellings':
    'The call write_file {"path": "./secret-ltazkz.txt", "content": "s"} got the result \'wrote',
    's03.deny_wins':
    'The call bash {"command": "touch blocked-dtfrcj.txt"} got the result \'[exit code 0]\'',
    's03.deny_read':
    'The call read_file {"path": "./private-edmrdc.txt"} got the result \'1 hidden-grwiby\'',
    's04.hook_before_question':
    'write_file {"path": "asked-dgwlys.txt", "content": "w\\n"} got the is_error result \'The',
    's04.matchers:ignored':
    'read_file {"path": "notes-erhcge.md"} got the is_error result \'Blocked by a PreToolUse',
    's04.matchers:substring':
    'read_file {"path": "notes-erhcge.md"} got the is_error result \'Blocked by a PreToolUse',
    's04.hook_timeout':
    'After the PreToolUse hook of glob (timeout 1), `sleep 4 && touch .agent/late-wrwuca`,',
    's03.deny_rule:bare':
    'The call glob {"pattern": "*.md"} got the result \'notes-nhxzvf.md\' without is_error; the',
    's04.post_only_after_success':
    'A PostToolUse hook ran after bash {"command": "touch forbidden-mtztio.txt"}, which did not',
    's04.stop_limit':
    'Your program sent 7 requests. The Stop hook exits 2 every time: after replies 2, 3 and 4',
    's04.stop_hook:exit_0':
    'Your program sent 10 requests; after reply 9 the Stop hook exited 0, which ends the turn,',
    's05.valid_list:asks':
    'The call todo_write {"todos": [{"content": "Read the notes", "status": "in_progress",',
    's05.invalid_list:unknown_field':
    'The call todo_write {"todos": [{"content": "A", "status": "pending", "priority": "high"}]}',
    's05.reminder_after_results:own_turn':
    "Request 5 holds ['user', 'user'] after its last assistant turn; it should hold one user",
    's06.ask_user_question:one_pick':
    'The result of ask_user_question {"questions": [{"question": "Which database?", "header":',
    's07.agent_offered':
    "Request 1 offers agent with the properties ['description', 'task']; it should offer the",
    's07.child_history':
    'Request 2 holds 3 message(s), starting [{"role": "user", "content": "Hand a side task to a',
    's07.child_system':
    "Request 2, the subagent's first, has as its system prompt none; it should have one of its",
    's07.child_tools':
    "Request 2, the subagent's first, offers ['bash', 'read_file', 'write_file', 'edit_file',",
    's07.child_runs':
    'Request 3 sends 2 message(s), starting [{"role": "user", "content": "Read data-sqjkzt.txt',
    's07.child_checks':
    'The call write_file {"path": "secret-vrhibr.txt", "content": "s"} got the result \'wrote',
    's07.child_checks:hooks':
    'The call read_file {"path": "data-sqjkzt.txt"} got the result \'1 content-ytanlt\' without',
    's07.child_hidden':
    'Request 3 starts with the prompt of the subagent\'s own call agent {"description":',
    's07.only_the_answer':
    "Request 4, the parent's, holds 'toolu_Ix7qx2OXYoVjEj17eMOszJT5', from the subagent's",
    's07.only_the_answer:shared':
    "Request 4, the parent's, holds 'toolu_Ix7qx2OXYoVjEj17eMOszJT5', from the subagent's",
    's07.child_history:asks':
    'Request 2 answers the call agent {"description": "label-wpoucj", "prompt": "Read',
    's07.child_plan_mode:no_agent':
    "With --plan, request 1 offers ['bash', 'read_file', 'glob', 'todo_write',",
    's07.child_plan_mode':
    "With --plan, request 2, the subagent's first, offers ['bash', 'read_file', 'write_file',",
    's07.child_fails':
    "Your program sent 3 requests. The subagent's second request (request 3) got an API error;",
    's08.summary_request:two_counts':
    "Reply 8's usage says 108,500 tokens (input 1,500, cache write 4,000, output 2,500, cache",
    's08.clear_when_full:always':
    'Request 6 has the result of read_file {"path": "f2-nsebjr.txt"} cleared; reply 5\'s usage',
    's08.clear_when_full:flags':
    'In request 7 the result of read_file {"path": "f2-nsebjr.txt"} is \'1 1. c2-aagrky was read',
    's08.cleared_results':
    'In request 7 the result of bash {"command": "cat f4-mjdtfq.txt"} is \'[Cleared to save',
    's08.cleared_results:subject':
    'In request 7 the result of read_file {"path": "f2-nsebjr.txt"} is \'[Cleared to save',
    's08.summary_request':
    "Reply 8's usage says 108,500 tokens (input 1,500, cache write 4,000, output 2,500, cache",
    's08.todo_list_kept:not_carried':
    'Request 10, after the summary, starts with {"role": "user", "content": [{"type": "text",',
    's08.new_history':
    'Request 10, after the summary, holds the plan file .agent/plans/plan-ynxerd.md, which the',
    's08.new_history:orphan':
    'Message 2 of request 10 holds a tool_result for toolu_jUTuFjIR1w3Hr1Rh0jNuVDId, whose',
    's08.no_thrash':
    "Your program sent request 11, a summary request again. After the summary, reply 10's usage",
    's08.too_long':
    'Your program sent 2 requests. Request 2 got the API error "prompt is too long"; it should',
    's04.hook_timeout:blocks':
    'glob {"pattern": "*.md"} got the is_error result \'Blocked by a PreToolUse hook: the hook',
    's07.child_asks':
    'The subagent\'s write_file {"path": "child-wrote-cfdfeh.txt", "content": "c\\n"} got the',
    's07.child_asks:silent':
    'Your program printed no question for bash {"command": "touch made-tgvswy.txt"}. Stdin',
    's07.child_asks:unnamed':
    'Your program printed no question for bash {"command": "touch made-tgvswy.txt"}. Stdin',
    's07.child_asks:trace':
    'Your program printed no question for bash {"command": "touch made-tgvswy.txt"}. Stdin',
    's07.agent_call_hooked':
    'Request 4 starts with the prompt of agent {"description": "blocked-label-csvzyi",',
    's07.agent_call_denied':
    'Request 4 starts with the prompt of agent {"description": "denied-eytfbm task", "prompt":',
    's07.parent_stop_hooks':
    "Request 4 is the subagent's, with the Stop hook's stderr 'stop-words-jkpurl': the parent's",
    's08.clear_when_full':
    'In request 7 the result of read_file {"path": "f2-nsebjr.txt"} is \'1 1. c2-aagrky was read',
    's08.clear_when_full:early':
    'Request 6 has the result of read_file {"path": "f2-nsebjr.txt"} cleared; reply 5\'s usage',
    's08.clear_when_full:fixed':
    'Request 6 has the result of read_file {"path": "f2-nsebjr.txt"} cleared; reply 5\'s usage',
    's08.summary_request:early':
    "Request 8 is a summary request. Reply 7's usage says 105,000 tokens (input 1,500, cache",
    's08.summary_request:output':
    "Reply 8's usage says 108,500 tokens (input 1,500, cache write 4,000, output 2,500, cache",
    's08.too_long:retry':
    'Request 2 got the API error "prompt is too long". Request 3 is not a summary request',
    's08.todo_list_kept':
    'Request 10, after the summary, starts with {"role": "user", "content": [{"type": "text",',
    's08.plan_mode_kept':
    "With --plan, request 5 offers ['write_file', 'edit_file']; plan mode goes on across a",
    's08.still_full_stops':
    'After reply 10, still past --compact-at 108,000, your program exited with status 0; the',
    's08.still_full_stops:silent':
    'After reply 10, still past --compact-at 108,000, the last line your program printed is',
    's08.child_makes_room':
    "Reply 2, the subagent's first, says 119,500 tokens (input 1,500, cache write 4,000, output",
    's08.child_makes_room:prompt':
    'Request 4, the subagent\'s after its summary, starts with "This conversation was',
    's08.first_estimate':
    'Request 1 is not a summary request of the prompt: it ends with [{"role": "user",',
    's08.summary_estimate':
    'After the summary (reply 1), the new history holds the prompt again, 71,539 characters,',
    's06.plan_rejected:eof':
    "After n, then the end of stdin, .agent/plans/ holds ['plan.md']; a rejected plan is not",
    's07.child_hidden:ask':
    'The call ask_user_question {"questions": [{"question": "child-question-wcwren?", "header":',
    's07.only_the_answer:every_text':
    'The result of agent {"description": "label-wpoucj", "prompt": "Read data-sqjkzt.txt and',
    's08.todo_list_kept:appends':
    "Request 10, after the summary, carries 'item-a-grppon', an item of reply 1's list only;",
    's08.todo_list_kept:plan_mode':
    'With --plan, todo_write {"todos": [{"content": "item-b-bowbde", "status": "in_progress"},',
    's08.first_estimate:refuses':
    'Your program sent no request before it ended. It exited with status 1; its stderr ends:',
    's08.child_own_size':
    "Request 2, the subagent's first, starts with 'Say word-uiktep (task-ijdtrk).' and asks for",
    's08.summary_too_long':
    'The summary request itself got "prompt is too long"; the turn stops, saying so in its last',
    's09.memory_first':
    "Request 1: Its first message, 'Instructions from AGENTS.md files.",
    's09.memory_first:after':
    'Request 1: Its first message, "Follow the project\'s rules (prompt-nwsfso). Instructions',
    's09.memory_first:no_paths':
    "Request 1: In its first message, the text of the user's AGENTS.md, 'rule-user-wqsqrl', has",
    's09.system_prompt_kept':
    "The system prompt of request 1 holds ['rule-user-wqsqrl', 'rule-root-rdgmnr',",
    's09.nothing_below':
    "Request 1 holds 'rule-below-nvssry', the text of below-qraovr/AGENTS.md, a folder below",
    's09.child_memory':
    "Request 2, the subagent's first: Its first message, 'Read note-nqabrh.txt and report what",
    's09.nothing_above':
    "Request 1 holds 'rule-above-vigran', the text of <workdir>/../AGENTS.md, above the project",
    's09.asks_to_write':
    'The call write_file {"path": "AGENTS.md", "content": "- planted-eztlkv\\n"} got the result',
    's09.read_again':
    'Request 5, the first after the summary, starts with "Instructions from AGENTS.md files.',
    's09.read_again:dropped':
    'Request 5, the first after the summary, starts with "This conversation was summarised:',
    's10.catalog':
    "Request 1 does not list the skill 'two-vxtngr' with its body's first paragraph, since it",
    's10.no_body_first':
    "Request 1 holds ['one-body-gtpbhv', 'two-body-tfadje'], from the body of a skill nobody",
    's10.no_body_first:users':
    "Request 1 lists the skill 'three-ymusmm' ('three-said-ihxxji'), whose SKILL.md says",
    's10.skill_body':
    'The result of skill {"name": "one-ptrzdr", "arguments": "args-bkqmjx"} is \'Follow',
    's10.unknown_name':
    'The call skill {"name": "nope-chzrnf"} got the result \'\' without is_error; there is no',
    's10.sent_once':
    'The result of skill {"name": "one-ptrzdr"} is \'Follow one-body-gtpbhv for , then say',
    's10.body_after_summary':
    'The messages of request 5, the new history after the summary, do not hold the body of',
    's10.slash_name':
    'Request 1\'s user message is [{"role": "user", "content": "/three-pdbnnj version-shbqvo"}];',
    's11.handshake':
    'Your program sent no request before it ended. It exited with status 1; its stderr ends:',
    's11.offered':
    "Request 1 offers ['agent', 'ask_user_question', 'bash', 'edit_file', 'exit_plan_mode',",
    's11.offered:schema':
    'Request 1 offers mcp__server-kuqmnw__echo with the input_schema {"type": "object",',
    's11.call_text':
    'The server heard the tools/call requests [{"jsonrpc": "2.0", "id": 3, "method":',
    's11.is_error':
    'The call mcp__server-kuqmnw__fail {"text": "why-vyflmt"} got the result \'failed:',
    's11.deny_rule':
    "The call mcp__server-hytqob__picture {} got the result 'a transparent pixel' without",
    's11.none_left':
    'The server was still running after your program ended. End each server before the program',
    's11.asks_to_start':
    'The server server-arwczb ran, though the answers on stdin were n: ask before starting each',
    's11.asks_before_call':
    'The server heard [{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name":',
}
