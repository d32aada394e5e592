"""Every exercise works: its check fails on the chapter as shipped and passes with its solution.

For each exercise (sNN_x/exercises/test_exN.py and solutions/exN.patch, read by
course/exercises.py):

- on the chapter as shipped, the check fails, and the first line of its message is a sentence;
- `git apply` puts the solution on a temporary copy of the chapter folder, and there the check
  passes;
- in that copy, the chapter's core tests still pass (CORE in course/chapters.py: five exact-shape
  tests per chapter, of its loop and of the sections its exercises touch, each in its first case
  for the chapter), and each test that the solution's header lists as changed on purpose fails;
- what the model sees (system prompt, tools) is the reviewed golden file, plus at its end the
  tools the header says the solution adds, and nothing else; the core tests compare the requests
  with that.

The lessons list the exercises as the checks describe them, and a plain `pytest` collects no
check (testpaths stay `tests`).

Speed: the checks run in this process (the check module is imported and its check(path)
called). The chapter tests run in one nested pytest session for all the copies (pytest.main
with the plugin Reruns below): each chosen test runs once per copy, its chapter module loaded
from the copy (support.load_chapter is pointed at it meanwhile). About a hundred chapter tests
run so, a few seconds in all with the checks (tools/time_exercises.py prints the figures). Run
alone, this file also pays for importing the chapter test modules.
"""

import contextlib
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from _pytest.runner import runtestprotocol
from _pytest.unraisableexception import gc_collect_iterations_key

import support
from course import CORE
from course import check as course_check
from course.check import Missing
from course.exercises import exercises, lesson_section, render
from support import PRESENT, ROOT

EXERCISES = {f"{e.chapter}-ex{e.number}": e for chapter in PRESENT for e in exercises(chapter)}


_checks = {}
RERUNS = 0  # how many chapter tests the nested session ran (tools/time_exercises.py prints it)


def shared_load(code):
    """course.check.load(code), but the harness finds the folders that hold its code
    (CODE_FOLDERS) once per code.py and process, as in a learner's run and as
    support.load_chapter does: each fresh module looked them up again (7 ms, 150 times here)."""
    return support.share_code_folders(course_check.load(code), code)


def check_of(exercise):
    """The check module of an exercise, imported from its file once (its load is shared_load)."""
    if exercise.check not in _checks:
        path = ROOT / exercise.check
        name = f"check_{exercise.chapter}_ex{exercise.number}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if getattr(module, "load", None) is course_check.load:
            module.load = shared_load
        _checks[exercise.check] = module
    return _checks[exercise.check]


# ======================================================================
# The checks, on the chapter as shipped and with the solution
# ======================================================================

@pytest.mark.parametrize("name", EXERCISES)
def test_on_the_chapter_as_shipped_the_check_fails_saying_what_is_missing(name):
    exercise = EXERCISES[name]
    with pytest.raises(Missing) as caught:
        check_of(exercise).check(ROOT / exercise.chapter / "code.py")
    first_line = str(caught.value).splitlines()[0]
    assert (first_line.endswith("."), first_line[:1].strip() != "") == (True, True)


def not_copied(folder, names):
    """What a solved copy does without: the lesson, the notebook, the exercises, caches."""
    if Path(folder) in {ROOT / chapter for chapter in PRESENT}:
        return {"README.md", "notebook.md", "notebook.ipynb", "exercises", "__pycache__"}
    return {"__pycache__"}


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    """Each exercise's chapter folder copied, with its solution applied by `git apply`."""
    base = tmp_path_factory.mktemp("solved")
    # git looks for a repository above the copy unless told where to stop
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(base)}
    copies = {}
    for name, exercise in EXERCISES.items():
        root = base / name
        shutil.copytree(ROOT / exercise.chapter, root / exercise.chapter, ignore=not_copied)
        applied = subprocess.run(["git", "apply", str(ROOT / exercise.solution)], cwd=root,
                                 env=env, capture_output=True, text=True, timeout=60)
        copies[name] = SimpleNamespace(exercise=exercise, code=root / exercise.chapter / "code.py",
                                       applied=applied)
    return copies


@pytest.mark.parametrize("name", EXERCISES)
def test_with_its_solution_applied_the_check_passes(solved, name):
    copy = solved[name]
    assert (copy.applied.returncode, copy.applied.stderr) == (0, "")
    check_of(copy.exercise).check(copy.code)


SLOPPY = {  # s01's exercise 1 solved with a pattern that is too wide: its check must say so
    r"(curl|wget).*\|": "bash now refuses 'curl -s https://example.com/data.json | jq .', which "
                         "pipes nothing from the internet into a shell: make the pattern narrower.",
    r"(curl|wget)[^|]*\|\s*(sudo\s+)?(ba|z)?sh": "bash now refuses 'curl -s "
    "https://example.com/lint.sh | shellcheck -', which pipes nothing from the internet into a "
    "shell: make the pattern narrower.",
    r"(curl|wget)\s.*\|": "bash now refuses 'curl -s https://example.com/data.json | jq .', which "
                        "pipes nothing from the internet into a shell: make the pattern narrower.",
}


@pytest.mark.parametrize("pattern", SLOPPY)
def test_s01_exercise_1_refuses_a_pattern_that_also_refuses_harmless_pipes(
        solved, tmp_path, pattern):
    copy = solved["s01_loop-ex1"]
    code = tmp_path / "code.py"
    right = r'(COMMAND_START + r"(curl|wget)\s[^;&|(`\n]*\|\s*(sudo\s+)?(ba|z)?sh\b",'
    shipped = copy.code.read_text(encoding="utf-8")
    assert right in shipped
    code.write_text(shipped.replace(right, f'(r"{pattern}",'), encoding="utf-8")
    with pytest.raises(Missing) as caught:
        check_of(copy.exercise).check(code)
    assert str(caught.value).splitlines()[0] == SLOPPY[pattern]


def what_the_model_sees(module):
    return {"system": module.system_prompt("/WORKDIR").replace("/WORKDIR", "{workdir}"),
            "tools": module.TOOLS}


@pytest.mark.parametrize("name", EXERCISES)
def test_a_solution_changes_what_the_model_sees_only_by_the_tools_it_adds(solved, name):
    copy = solved[name]
    seen = what_the_model_sees(course_check.load(copy.code))
    reviewed = support.golden(copy.exercise.chapter)
    added = seen["tools"][len(reviewed["tools"]):]
    assert [tool["name"] for tool in added] == copy.exercise.adds_tools
    assert seen == {"system": reviewed["system"], "tools": reviewed["tools"] + added}


# ======================================================================
# The chapter tests, in each solved copy
# ======================================================================

def loads(item, chapter):
    """Does this test item load that chapter (a parameter, or the sNN fixture)?"""
    params = getattr(getattr(item, "callspec", None), "params", {})
    return any(value == chapter for value in params.values()) or (
        chapter.split("_")[0] in item.fixturenames)


def named(item, entry):
    return item.nodeid == entry or item.nodeid.startswith(entry + "[")


@contextlib.contextmanager
def pointed_at(copy):
    """support.load_chapter (in every test module that imported it) loads the solved copy for
    the copy's chapter, and support.golden adds the tools the solution adds. Yields the list of
    the modules loaded from the copy."""
    chapter, loaded = copy.exercise.chapter, []
    load_chapter, golden = support.load_chapter, support.golden
    added = what_the_model_sees(course_check.load(copy.code))["tools"][
        len(golden(chapter)["tools"]):]

    def load_copy(name):
        if name != chapter:
            return load_chapter(name)
        loaded.append(shared_load(copy.code))
        return loaded[-1]

    def golden_with_added_tools(name):
        seen = golden(name)
        return {**seen, "tools": seen["tools"] + added} if name == chapter else seen

    modules = [module for module in list(sys.modules.values())
               if getattr(module, "load_chapter", None) is load_chapter]
    for module in modules:
        module.load_chapter = load_copy
    support.golden = golden_with_added_tools
    try:
        yield loaded
    finally:
        support.golden = golden
        for module in modules:
            module.load_chapter = load_chapter


class Reruns:
    """A pytest plugin for the nested session: runs the core tests and the listed ones of each
    exercise's chapter against its solved copy; the outcomes go to .jobs[name]."""

    def __init__(self, copies):
        self.copies = copies
        self.jobs = {}

    def pytest_configure(self, config):
        # as pytester does for a nested run: no gc.collect() at the end (a second or more here)
        config.stash[gc_collect_iterations_key] = 0

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        chapters = {copy.exercise.chapter for copy in self.copies.values()}
        loading = {chapter: [item for item in session.items if loads(item, chapter)]
                   for chapter in chapters}
        for name, copy in self.copies.items():
            chapter = copy.exercise.chapter
            here = loading[chapter]
            core = [next((item for item in here if named(item, entry)), None)
                    for entry in CORE.get(chapter, [])]
            changed = [item for item in here
                       if any(named(item, entry) for entry in copy.exercise.changes)]
            chosen = list(dict.fromkeys([item for item in core if item] + changed))
            job = self.jobs[name] = SimpleNamespace(
                unmatched=[entry for entry, item in zip(CORE.get(chapter, []), core, strict=True)
                           if item is None]
                + [entry for entry in copy.exercise.changes
                   if not any(named(item, entry) for item in changed)],
                changed=[item.nodeid for item in changed], failed={}, passed=[], unloaded=[])
            with pointed_at(copy) as loaded:
                for item in chosen:
                    before = len(loaded)
                    reports = runtestprotocol(item, nextitem=None, log=False)
                    if len(loaded) == before:
                        job.unloaded.append(item.nodeid)
                    failed = [report for report in reports if report.failed]
                    if failed:  # the end of the traceback: where the test failed, and why
                        job.failed[item.nodeid] = "\n".join(
                            failed[0].longreprtext.splitlines()[-12:])
                    else:
                        job.passed.append(item.nodeid)
        return True


@contextlib.contextmanager
def nested_session_state():
    """What a nested pytest session changes in this process, put back afterwards: it imports
    tests/conftest.py again (which wraps socket.connect once more)."""
    conftest = sys.modules.get("conftest")
    connect, connect_ex = socket.socket.connect, socket.socket.connect_ex
    try:
        yield
    finally:
        socket.socket.connect, socket.socket.connect_ex = connect, connect_ex
        if conftest is not None:
            sys.modules["conftest"] = conftest


# Plugins the nested session does without: a cache it would write, the handlers this session
# has set up already, and what no chapter test uses.
NOT_NESTED = ["cacheprovider", "faulthandler", "xdist", "xdist.looponfail", "hypothesispytest"]


@pytest.fixture(scope="module")
def reruns(solved):
    copies = {name: copy for name, copy in solved.items() if copy.applied.returncode == 0}
    files = sorted({entry.split("::")[0] for copy in copies.values()
                    for entry in CORE.get(copy.exercise.chapter, []) + copy.exercise.changes})
    plugin = Reruns(copies)
    basetemp = Path(tempfile.mkdtemp(prefix="exercise-reruns-"))
    try:
        with nested_session_state():
            pytest.main(["-q", "--tb=native", "-o", "addopts=", "--basetemp", str(basetemp),
                         "--rootdir", str(ROOT), "-W", "ignore::pytest.PytestAssertRewriteWarning",
                         *[f"-pno:{plugin}" for plugin in NOT_NESTED],
                         *[str(ROOT / file) for file in files]], plugins=[plugin])
    finally:
        shutil.rmtree(basetemp, ignore_errors=True)
    global RERUNS
    RERUNS = sum(len(job.passed) + len(job.failed) for job in plugin.jobs.values())
    return plugin.jobs


@pytest.mark.parametrize("name", EXERCISES)
def test_with_its_solution_the_core_tests_pass_and_the_listed_ones_fail(solved, reruns, name):
    assert solved[name].applied.returncode == 0
    job = reruns[name]
    assert job.unmatched == []  # a test named in CORE or the header that is no longer there
    assert job.unloaded == []  # a test that did not load the copy: it proved nothing
    changed_failed = [nodeid for nodeid in job.changed if nodeid in job.failed]
    core_failed = {nodeid: text for nodeid, text in job.failed.items() if nodeid not in job.changed}
    assert (core_failed, changed_failed) == ({}, job.changed)


# ======================================================================
# The learner's command: the check on the chapters' own install
# ======================================================================

# A program that runs `python -m course.check ARGS` (runpy, as -m does) and then prints, after
# its own lines, the top-level modules the check imported beyond the standard library and the
# packages requirements.txt installs (anthropic, python-dotenv and what they require).
ON_THE_FIRST_INSTALL = """\
import os, re, runpy, sys
from importlib import metadata

sys.path[0] = os.getcwd()  # as `python -m` has it

def closure(names):
    seen, todo = set(), list(names)
    while todo:
        name = re.sub(r"[-_.]+", "-", todo.pop()).lower()
        if name in seen:
            continue
        try:
            required = metadata.requires(name) or []
        except metadata.PackageNotFoundError:  # for another platform or Python: not installed
            continue
        seen.add(name)
        todo += [re.match(r"[A-Za-z0-9._-]+", requirement)[0] for requirement in required
                 if "extra ==" not in requirement]
    return seen

before = {name.split(".")[0] for name in sys.modules}
sys.argv = ["course.check", *sys.argv[1:]]
try:
    runpy.run_module("course.check", run_name="__main__", alter_sys=True)
    code = 0
except SystemExit as leaving:
    code = leaving.code
added = {name.split(".")[0] for name in sys.modules} - before
outside = {name for name in added - set(sys.stdlib_module_names) - {"course", "__main__"}
           if not name.startswith(("exercise_", "_"))}
if outside:  # only then read what requirements.txt installs (the metadata of every package)
    wanted = [re.match(r"[A-Za-z0-9._-]+", line)[0]
              for line in open("requirements.txt").read().splitlines()
              if line.strip() and not line.startswith("#")]
    installed = closure(wanted)
    outside -= {top for top, names in metadata.packages_distributions().items()
                if any(re.sub(r"[-_.]+", "-", name).lower() in installed for name in names)}
print("beyond the first install:", sorted(outside))
sys.exit(code)
"""

FIRST_INSTALL_CASES = ["s01_loop-ex1", "s05_todo_write-ex1", "s08_compact-ex1"]


@pytest.mark.parametrize("name", [n for n in FIRST_INSTALL_CASES if n in EXERCISES])
def test_the_lessons_check_command_runs_on_the_chapters_install_without_pytest(
        solved, tmp_path, name):
    exercise, copy = EXERCISES[name], solved[name]
    words = exercise.command.split()
    assert words[:3] == [".venv/bin/python", "-m", "course.check"]
    program = tmp_path / "course_check.py"
    program.write_text(ON_THE_FIRST_INSTALL, encoding="utf-8")
    # the solved copy gets the check beside its code.py, as in the learner's checkout
    (copy.code.parent / "exercises").mkdir(exist_ok=True)
    shutil.copy(ROOT / exercise.check, copy.code.parent / "exercises")
    solved_check = copy.code.parent / "exercises" / Path(exercise.check).name
    runner = support.shared_runner()
    runs = [runner.start(program, *words[3:], cwd=ROOT),
            runner.start(program, str(solved_check), cwd=ROOT)]
    shipped, done = [runner.result(job) for job in runs]
    label = f"Exercise {exercise.number} of {exercise.chapter}"
    with pytest.raises(Missing) as caught:
        check_of(exercise).check(ROOT / exercise.chapter / "code.py")
    assert (shipped.returncode, shipped.stderr, shipped.stdout.splitlines()[:2]) == (
        1, "", [f"{label}: not done yet.", str(caught.value).splitlines()[0]])
    assert (done.returncode, done.stderr, done.stdout) == (
        0, "", f"{label}: passed.\nbeyond the first install: []\n")
    assert shipped.stdout.splitlines()[-1] == "beyond the first install: []"


# ======================================================================
# The lessons, and what a plain pytest collects
# ======================================================================

@pytest.mark.parametrize("chapter", PRESENT)
def test_every_chapter_has_three_exercises_or_more_each_with_a_check_and_a_solution(chapter):
    numbers = [e.number for e in EXERCISES.values() if e.chapter == chapter]
    assert numbers == list(range(1, max(len(numbers), 3) + 1))


@pytest.mark.parametrize("chapter", PRESENT)
def test_the_lesson_lists_the_exercises_as_their_checks_describe_them(chapter):
    readme = (ROOT / chapter / "README.md").read_text(encoding="utf-8")
    # rewritten by: .venv/bin/python -m course.exercises
    assert lesson_section(readme) == render(chapter)
    headings = [line for line in readme.splitlines() if line.startswith("## ")]
    assert headings[-2:] == ["## Exercises", "## Next"]


def test_a_plain_pytest_collects_tests_only_and_no_exercise_check():
    import tomllib

    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert settings["tool"]["pytest"]["ini_options"]["testpaths"] == ["tests"]
    assert [e.check for e in EXERCISES.values() if e.check.startswith("tests/")] == []
