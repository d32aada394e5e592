"""Recording a chapter's run: the shown command, run offline, and what it shows of the
building machine put in fixed words."""

import json
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from course import PLAY, ScenarioError, offline_environment, read_scenario

from .chapters import Run
from .settings import PYTHON, RUN_TIMEOUT, SHOWN_SECONDS, SHOWN_SESSION_ID, SHOWN_TMPDIR, BuildError


def prompt_and_answers(chapter):
    """The scenario's prompt and its answers (the lines piped to stdin), checked by
    course.read_scenario."""
    try:
        scenario = read_scenario(chapter.folder)
    except ScenarioError as error:
        raise BuildError(f"{chapter.name}: cannot record the run: {error}") from None
    return scenario["prompt"], scenario["answers"]


def run_process(script, args, stdin, cwd, env, timeout):
    """`python SCRIPT ARGS` in its own process: the way the build launches a recording.
    (The tests pass another launcher, which forks it from a process that has imported
    anthropic already: the same run, sooner.)"""
    return subprocess.run(
        [sys.executable, str(script), *args], input=stdin, capture_output=True, text=True,
        errors="replace", timeout=timeout, cwd=cwd, env=env,
    )


def shown_command(chapter, prompt, answers):
    """The command of the recording, as a learner runs it from the repository root."""
    command = (f"{PYTHON} {chapter.name}/code.py --offline --trace {trace_path(chapter.name)} "
               f"{quote(prompt)}")
    if answers:
        command = f"printf {quote(''.join(a + chr(10) for a in answers))} | {command}"
    return command


RUN_PATH_LENGTH = 150  # characters in the path of the folder a run is recorded in


def fixed_length(temporary):
    """A folder in `temporary` whose path is RUN_PATH_LENGTH characters long (when the path of
    `temporary` is shorter), so that a run prints the same on every machine: s08 prints the
    context's size after a summary, an estimate that counts the system prompt, which holds the
    workdir's path (in the run's folder)."""
    pad = RUN_PATH_LENGTH - len(str(temporary)) - 1
    if pad < 1:
        return temporary
    folder = temporary / ("r" * pad)
    folder.mkdir()
    return folder


def trace_path(name):
    """Where the shown command of chapter `name` writes its trace, from the repository root."""
    return f"{PLAY}/{name}.trace.jsonl"


def record_run(chapter, launch=run_process, temp_root=None):
    """Run the chapter's scenario offline, exactly as the shown command does, and return what
    happened, in the words it is shown in.

    The run's current folder and TMPDIR are a fresh temporary folder of the build: the trace
    file lands there, and so does the copy of workspace/ the chapter makes for its tools.
    The folder is made in temp_root (default: the system's temporary folder).
    """
    prompt, answers = prompt_and_answers(chapter)
    piped = "".join(answer + "\n" for answer in answers)  # one line for each question
    trace_name = trace_path(chapter.name)
    with tempfile.TemporaryDirectory(prefix=f"site-{chapter.name}-", dir=temp_root) as temporary:
        folder = fixed_length(Path(temporary))
        (folder / PLAY).mkdir()  # as in a clone, where play/ holds its README.md
        started = time.time()
        try:
            process = launch(
                chapter.folder / "code.py", ["--offline", "--trace", trace_name, prompt],
                piped, folder, offline_environment(TMPDIR=str(folder)), RUN_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            raise BuildError(
                f"{chapter.name}: the recorded run took longer than {RUN_TIMEOUT} s"
            ) from None
        except OSError as error:
            raise BuildError(f"{chapter.name}: cannot start code.py: {error}") from None
        ended = time.time()
        if process.returncode != 0:
            last_line = (process.stderr.strip().splitlines() or ["no output on stderr"])[-1]
            raise BuildError(
                f"{chapter.name}: code.py exited with {process.returncode}: {last_line}"
            )
        trace_file = folder / trace_name
        trace_text = trace_file.read_text(encoding="utf-8") if trace_file.exists() else ""
        shown = Normaliser(chapter, folder, started, ended)
        stdout, stderr, trace_text = (shown(text) for text in
                                      (process.stdout, process.stderr, trace_text))
    for text in (stdout, stderr, trace_text):
        shown.check(text)
    try:
        lines = [json.loads(line) for line in trace_text.splitlines() if line.strip()]
    except json.JSONDecodeError:
        raise BuildError(f"{chapter.name}: the trace is not JSON lines") from None
    # the model's calls; from s11 on, the trace's lines of MCP messages ({"mcp": ...}) stay in
    # the trace a learner downloads, beside them
    calls = [line for line in lines if "mcp" not in line]
    if not calls:
        raise BuildError(
            f"{chapter.name}: the run wrote an empty trace (no model call was recorded)"
        )
    return Run(prompt=prompt, answers=answers, command=shown_command(chapter, prompt, answers),
               stdout=stdout, stderr=stderr, calls=calls, trace=trace_text)


class Normaliser:
    """What a recorded run shows of the machine that built it, put in fixed words.

    The paths come from the build itself, not from reading the output: the temporary folder
    it made for the run (and the workdir the chapter made in it, found on the disk), and the
    checkout. The session id is the run's start time (to the second, between the build's
    clock before and after the run) and six hex digits.
    """

    def __init__(self, chapter, folder, started, ended):
        self.chapter = chapter
        replacements = {}
        for made in sorted(path for path in folder.iterdir() if path.is_dir()):
            stem = made.name.rsplit("-", 1)[0] if "-" in made.name else "workdir"
            for form in {str(made), str(made.resolve())}:
                replacements[form] = f"{SHOWN_TMPDIR}/{stem}-xxxx"
            if re.fullmatch(r"build-an-agent-\d+", made.name):  # the learner's offline copies
                own = f"{SHOWN_TMPDIR}/build-an-agent-$UID"
                for form in {str(made), str(made.resolve())}:
                    replacements[form] = own
                for copy in sorted(path for path in made.iterdir() if path.is_dir()):
                    stem = copy.name.rsplit("-", 1)[0]
                    for form in {str(copy), str(copy.resolve())}:
                        replacements[form] = f"{own}/{stem}-xxxx"
        for form in {str(folder), str(folder.resolve())}:
            replacements[form] = SHOWN_TMPDIR
        root = chapter.folder.parent.resolve()
        replacements[f"{root}/"] = ""  # "plays /home/you/course/s01_loop/scenario.json"
        self.replacements = sorted(replacements.items(), key=lambda pair: -len(pair[0]))
        # Paths of this machine that must not be left: as whole paths, not inside other words.
        paths = {str(folder), str(folder.resolve()), str(root), str(Path.home())}
        if sys.prefix != sys.base_prefix:  # a virtual environment
            paths.add(sys.prefix)
        self.leaks = [(path, re.compile(re.escape(path) + r"(?![\w.-])"))
                      for path in sorted(paths) if len(path) > 1]
        seconds = range(int(started) - 1, int(ended) + 2)
        stamps = sorted({time.strftime("%Y%m%d-%H%M%S", time.localtime(s)) for s in seconds})
        self.session_id = re.compile(rf"\b(?:{'|'.join(stamps)})-[0-9a-f]{{6}}\b")

    def __call__(self, text):
        for path, shown in self.replacements:
            text = text.replace(path, shown)
            text = text.replace(json.dumps(path)[1:-1], json.dumps(shown)[1:-1])  # in JSON
        text = self.session_id.sub(SHOWN_SESSION_ID, text)
        return TEST_TIME.sub(lambda found: found[1] + SHOWN_SECONDS + "s", text)

    def check(self, text):
        for path, pattern in self.leaks:
            if pattern.search(text):
                raise BuildError(
                    f"{self.chapter.name}: the recorded run shows a path of this machine "
                    f"({path}); web/build.py must show it in other words"
                )


# How long a test run took: unittest's "Ran 3 tests in 0.002s", pytest's "3 passed in 0.01s".
# (Inside a trace a line break is the two characters \n: no \b before the first word.)
TEST_TIME = re.compile(r"(Ran \d+ tests? in |(?<![\d.])\d+ (?:passed|failed)\b[^\n]*? in )"
                       r"\d+\.\d+s\b")


def quote(text):
    """A shell word for the command line shown on the page."""
    return "'" + text.replace("'", "'\\''").replace("\n", "\\n") + "'"


def record_all(chapters, launch=run_process, temp_root=None):
    """Record every chapter's run at once: each run spends most of its time importing anthropic.
    Returns the futures; chapter.run is set by finish_recording."""
    pool = ThreadPoolExecutor(max_workers=max(len(chapters), 1))
    futures = [pool.submit(record_run, chapter, launch, temp_root) for chapter in chapters]
    pool.shutdown(wait=False)
    return futures


def finish_recording(chapters, futures):
    for chapter, future in zip(chapters, futures, strict=True):
        try:
            chapter.run = future.result()  # the first chapter's BuildError, in chapter order
        except BuildError:
            for rest in futures:
                rest.exception()  # let every run end before the build stops
            raise
