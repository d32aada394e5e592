"""The stage checker (course/stages): fair to the course's own chapters, and able to fail.

Every program here is checked in one batch (`course.stages.run_many`), on one loopback API,
its runs forked from the warm runner (tests/runner.py): each chapter against its own stage and
every one before, build/agent.py against s02, tests/stage_programs/good.py (an agent written
from the lessons' "Build it yourself" sections) against s06, and each of the learners' mistakes
of tests/stage_programs/mistakes.py against the exchange of the check it must fail.
"""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import course.stages
from course import CHAPTERS, ROOT
from course.stages import Check, command, main, report, run_many, selected, wrap
from course.stages.checks import CHECKS
from stage_programs.mistakes import MISTAKES
from support import shared_runner

PROGRAMS = Path(__file__).resolve().parent / "stage_programs"
GOOD = (PROGRAMS / "good.py").read_text()


def warm_launch(path, args, stdin, cwd, env, timeout):
    """course.stages' launch, through the warm runner: the same run, without the import."""
    runner = shared_runner()
    job = runner.start(path, *args, stdin=stdin, cwd=cwd, env=env)
    try:
        done = runner.result(job, timeout=timeout)
    except TimeoutError:
        return None, "", ""
    return done.returncode, done.stdout, done.stderr


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
    jobs["good"] = (PROGRAMS / "good.py", selected("s06"))
    for name, _, old, new, _ in MISTAKES:
        assert GOOD.count(old) == 1, name  # each mistake edits one place of good.py
        program = folder / f"{name}.py"
        program.write_text(GOOD.replace(old, new))
        exchange = next(check.exchange for check in CHECKS if check.name == name)
        jobs[name] = (program, [check for check in CHECKS if check.exchange is exchange])
    results = run_many(list(jobs.values()), launch=warm_launch)
    return {label: failures(result) for label, result in zip(jobs, results, strict=True)}


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_each_chapter_passes_its_own_stage_and_every_one_before(checked, chapter):
    assert checked[chapter] == {}


def test_the_agent_written_from_the_lessons_sections_passes_all_six_stages(checked):
    assert checked["good"] == {}


def test_build_agent_passes_s01_and_fails_s02_saying_what_to_build(checked):
    assert sorted(checked["build"]) == sorted(c.name for c in CHECKS if c.stage == "s02")
    assert checked["build"]["s02.tools_offered"] == (
    "Request 1 does not offer read_file; it should offer read_file with the properties "
    "['path', 'offset', 'limit'].")


def test_every_check_has_a_mistake_that_fails_it():
    assert sorted(name for name, *_ in MISTAKES) == sorted(check.name for check in CHECKS)


@pytest.mark.parametrize("mistake", MISTAKES, ids=[mistake[0] for mistake in MISTAKES])
def test_a_learners_mistake_fails_its_check(checked, mistake):
    name, _, _, _, failing = mistake
    assert sorted(checked[name]) == sorted(failing)
    assert wrap(checked[name][name])[0] == FIRST_LINES[name]


def test_the_command_of_a_stage():
    assert command("s03") == ".venv/bin/python -m course.stages s03 build/agent.py"
    assert command("s06", "mine.py") == ".venv/bin/python -m course.stages s06 mine.py"


def test_build_readme_gives_the_command_of_every_stage():
    readme = (ROOT / "build" / "README.md").read_text(encoding="utf-8")
    rows = [line.split(" | ")[-1].strip(" `|") for line in readme.splitlines()
            if line.startswith("| s0")]
    assert rows == [command(stage) for stage in course.stages.STAGES]


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
    assert report([(first, None), (second, message.strip())], "s02", "build/agent.py", 1.25) == (
        "s01 · s01_loop\n"
        "  ✓ s01.x: does x\n"
        "s02 · s02_tools\n"
        "  ✗ s02.x: does x\n"
        "      Request 1 does not offer read_file; it should offer it. Request 1 does not offer\n"
        "      read_file; it should offer it.\n"
        "\n"
        "1 of 2 checks pass (1.2 s).\n"
        'Next: build what s02 asks for: the contract is in s02_tools/README.md, section '
        '"Build it yourself".')
    assert report([(first, None)], "s01", "build/agent.py", 2).splitlines()[-1] == (
        'Stage s01 passes. Next: s02_tools/README.md, "Build it yourself", then '
        ".venv/bin/python -m course.stages s02 build/agent.py")
    assert report([(second, None)], "s02", "build/agent.py", 2, only=True).splitlines()[-1] == (
        "Stage s02's own checks pass; without --only, .venv/bin/python -m course.stages s02 "
        "build/agent.py runs the earlier stages' checks too.")


def test_json_gives_each_check_and_the_exit_status_says_whether_all_pass(monkeypatch, capsys):
    monkeypatch.setattr(course.stages, "subprocess_launch", warm_launch)
    assert main(["s02", str(ROOT / "build" / "agent.py"), "--only", "--json"]) == 1
    said = json.loads(capsys.readouterr().out)
    assert [(c["name"], c["passed"]) for c in said["checks"]] == [
        (check.name, False) for check in CHECKS if check.stage == "s02"]
    assert (said["stage"], said["passed"]) == ("s02", False)
    assert said["checks"][0]["message"] == checked_message_of_build


checked_message_of_build = (
    "Request 1 does not offer read_file; it should offer read_file with the properties "
    "['path', 'offset', 'limit'].")


def test_the_checker_needs_only_the_standard_library():
    for path in [ROOT / "course" / "api.py", *(ROOT / "course" / "stages").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            names = [alias.name for alias in getattr(node, "names", [])]
            if isinstance(node, ast.ImportFrom):
                names = [node.module]
            if isinstance(node, ast.Import | ast.ImportFrom):
                outside = [name for name in names if name.split(".")[0] != "course"
                           and name.split(".")[0] not in sys.stdlib_module_names]
                assert outside == [], path


FIRST_LINES = {  # the first line the checker prints under the failing check
    's01.first_request':
    'Request 1 starts with {"role": "user", "content": "What files are here?"}; it should start',
    's01.tool_results':
    "Reply 1 asked for the tool_use ids ['toolu_s01_a', 'toolu_s01_b']; the user turn of",
    's01.bash_output':
    'The result of bash {"command": "echo broken >&2; exit 37"} is \'\'; it should hold its',
    's01.history':
    'Request 3 sends 3 message(s), starting [{"role": "user", "content": [{"type":',
    's01.failing_command':
    'After reply 1 (whose second command exits 37), your program sent 0 more request(s) instead',
    's01.final_text':
    "Your program did not print 'FINAL-ANSWER-42' on stdout; the text of the last reply should",
    's02.tools_offered':
    "Request 1 offers read_file with the properties ['file_path', 'limit', 'offset']; it should",
    's02.read_file':
    'The result of read_file {"path": "notes.md"} is \'1 beta\'; it should hold \'alpha\' (request',
    's02.write_file':
    'The call write_file {"path": "docs/new.txt", "content": "made by write_file\\n"} got an',
    's02.edit_file':
    "After edit_file beta -> gamma, notes.md holds 'gamma'; it should hold 'alpha\\ngamma\\n'.",
    's02.glob':
    'glob {"pattern": "*.md"} returned \'docs/new.txt notes.md\'; docs/new.txt does not match',
    's02.outside_paths':
    'The call write_file {"path": "link/x.txt", "content": "x"} got the result \'wrote',
    's02.bad_calls':
    'Your program sent 4 requests; it should have sent request 5, with the results of the tool',
    's03.yes_runs':
    'The call write_file {"path": "a.txt", "content": "A\\n"} got an is_error result: \'The user',
    's03.question_shows_call':
    "Your program did not print 'a.txt' on stdout; a question must show the path, or the whole",
    's03.deny_rule':
    'The call write_file {"path": "secret.txt", "content": "s"} got the result \'wrote',
    's03.no_refuses':
    'The call write_file {"path": "b.txt", "content": "B\\n"} got the result \'wrote b.txt\'',
    's03.eof_refuses':
    'The call edit_file {"path": "notes.md", "old_string": "beta", "new_string": "gamma"} got',
    's03.reads_run':
    'The call bash {"command": "ls"} got an is_error result: \'The user said no.\'. It should',
    's03.allow_rule':
    'The call bash {"command": "touch allowed.txt"} got an is_error result: \'The user said',
    's04.hook_stdin':
    'The PreToolUse hook got {"hook_event_name": "PreToolUse", "cwd": "<workdir>", "tool":',
    's04.pre_tool_use_blocks':
    "The blocked call's result is 'Blocked by a PreToolUse hook.'; it should hold the hook's",
    's04.post_tool_use_output':
    'The PostToolUse hook printed {"context": "POST-NOTE-7"} after ls; the user turn of request',
    's04.stop_hook':
    'After reply 2 ended the turn, the Stop hook exited 2; your program should have sent',
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
    'The call write_file {"path": "x.txt", "content": "x"} got the result \'wrote x.txt\' without',
    's06.plan_approved':
    '.agent/plans/ holds []; after y it should hold one file with the plan.',
    's06.plan_rejected':
    "After n, .agent/plans/ holds ['plan.md']; a rejected plan is not saved.",
    's06.ask_user_question':
    'The result of ask_user_question {"questions": [{"question": "Which database?", "header":',
}
