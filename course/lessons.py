"""The lessons read and their commands run: one source for tests/test_lessons.py, which checks
them, and tools/sync_lessons.py, which brings their quotes and transcripts in step (and the
Chinese pages' checks and tools/sync_zh.py, which read their blocks and headings).

    parse_blocks, headings          (course.markdown) a markdown text's fenced blocks, headings
    quotes(name), code_lines(name)  a lesson's ```python quotes, and the lines they quote
    where_runs_stand(block, lines)  None if a block is runs of `lines` joined by `...` lines
    all_scripts()                   every command of the README, the lessons and the docstrings
    Run(script, scratch, url, seen) one script run as the text says, its problems found
    live_answer                     what the loopback Messages API answers a lesson's live run
    skipped_headings, names_a_skipped_section
                                    the headings after a deeper part, and those a core quotes
"""

import ast
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import tokenize
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from course import chapters
from course.api import message_json
from course.chapters import PRESENT, ROOT, offline_environment, read_scenario
from course.markdown import Block, headings, parse_blocks, section_text  # noqa: F401
from course.warm import shared_runner

LESSONS = [name for name in PRESENT if (ROOT / name / "README.md").exists()]

HONEST = "(This is a scripted model, and its script was written for the prompt:"


def lesson(name):
    return (ROOT / name / "README.md").read_text(encoding="utf-8")


# ======================================================================
# Quotes: contiguous runs of lines, joined by `...`
# ======================================================================


def is_gap(line):
    return line.strip() == "..."


def split_runs(lines):
    """The runs of a block between its `...` lines; (runs, cut at start, cut at end)."""
    runs, current = [], []
    for line in lines:
        if is_gap(line):
            runs.append(current)
            current = []
        else:
            current.append(line)
    runs.append(current)
    cut_start, cut_end = runs[0] == [], runs[-1] == []
    if cut_start:
        runs = runs[1:]
    if cut_end and runs:
        runs = runs[:-1]
    return runs, cut_start, cut_end


def first_unfollowed(run, lines, start):
    """For a run found nowhere from `start` on: the index of its first line that does not
    follow (the longest prefix of it that does stand in `lines`, contiguous, is before it)."""
    best = 0
    for position in range(start, len(lines)):
        length = 0
        while (length < len(run) and position + length < len(lines)
               and lines[position + length] == run[length]):
            length += 1
        best = max(best, length)
    return best


def where_runs_stand(block_lines, lines, anchored=False):
    """Check that block_lines are runs of `lines` joined by `...` lines: each run contiguous,
    the runs in order, each `...` standing for at least one line. With anchored (a transcript),
    the block also starts at the first line and ends at the last, unless it starts or ends with
    `...`. Returns None if so, else what is wrong, in one sentence."""
    runs, cut_start, cut_end = split_runs(block_lines)
    if not runs or any(run == [] for run in runs):
        return "the block is empty, or has two `...` lines in a row"
    position = 0
    for number, run in enumerate(runs):
        last = number == len(runs) - 1
        earliest = position + (1 if number or (anchored and cut_start) else 0)
        candidates = range(earliest, len(lines) - len(run) + 1)
        if number == 0 and anchored and not cut_start:
            candidates = [at for at in candidates if at == 0]
        if last and anchored and not cut_end:
            candidates = [at for at in candidates if at == len(lines) - len(run)]
        found = next((at for at in candidates if lines[at : at + len(run)] == run), None)
        if found is None:
            bad = first_unfollowed(run, lines, earliest)
            if bad == len(run):
                return (f"the run ending with {run[-1]!r} is not where it should be (the end "
                        "of the output, or at least one line after the run before it)")
            return (f"line {sum(len(r) + 1 for r in runs[:number]) + bad + 1} of the block, "
                    f"{run[bad]!r}, does not follow the line before it"
                    + (f" ({run[bad - 1]!r})" if bad else " in order after the run before it"))
        position = found + len(run)
    return None


def is_sketch(block):
    return bool(block.lines) and block.lines[0].strip() == "# sketch"


def quotes(name):
    """The ```python blocks of a lesson that quote its code.py."""
    return [block for block in parse_blocks(lesson(name), f"{name}/README.md")
            if block.language == "python" and not is_sketch(block)]


def code_lines(name):
    return (ROOT / name / "code.py").read_text(encoding="utf-8").splitlines()



# ======================================================================
# Commands: parsed from the text, run, checked
# ======================================================================


@dataclass
class Command:
    words: list  # the command's own words
    text: str  # the line it came from
    stdin: str | None = None  # what printf pipes in; "" for < /dev/null
    env: dict = field(default_factory=dict)  # VAR=value before it
    live: bool = False  # a `# live` comment
    cut: tuple | None = None  # ("head" or "tail", N): the output piped through head/tail -n N


@dataclass
class Script:
    where: str  # "s01_loop/README.md:120" or "s06_plan_mode/code.py (Run it)"
    commands: list
    expected: list | None = None  # the ```text block after it: the last command's output
    transcript: Block | None = None  # that block, where it stands (tools/sync_lessons.py)


def split_comment(line):
    """(the command, its comment): the comment starts at a # outside quotes, after a space."""
    quote = None
    for index, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index].strip(), line[index + 1 :].strip()
    return line.strip(), ""


def printf_text(format_string):
    """What printf prints for a format without conversions: \\n, \\t, \\\\ and %% only."""
    if re.search(r"%[^%]", format_string.replace("%%", "")):
        raise ValueError(f"printf with a conversion: {format_string!r}")
    return (format_string.replace("\\\\", "\0").replace("\\n", "\n").replace("\\t", "\t")
            .replace("\0", "\\").replace("%%", "%"))


def parse_line(line):
    """The commands of one shell line: [printf '...' |] [VAR=value] words [< /dev/null], joined
    by &&."""
    command_text, comment = split_comment(line)
    if not command_text:
        return []
    lexer = shlex.shlex(command_text, posix=True, punctuation_chars=True)
    lexer.whitespace_split, lexer.commenters = True, ""
    tokens, commands, current = list(lexer), [], []
    for token in tokens + ["&&"]:
        if token != "&&":
            current.append(token)
            continue
        command = Command(words=current, text=line, live=comment.startswith("live"))
        if len(current) > 3 and current[0] == "printf" and current[2] == "|":
            command.stdin, command.words = printf_text(current[1]), current[3:]
        if (len(command.words) > 4 and command.words[-4:-2] in (["|", "head"], ["|", "tail"])
                and command.words[-2] == "-n" and command.words[-1].isdigit()):
            command.cut = (command.words[-3], int(command.words[-1]))
            command.words = command.words[:-4]
        if command.words[-2:] == ["<", "/dev/null"]:
            command.stdin, command.words = "", command.words[:-2]
        while command.words and re.fullmatch(r"[A-Z_]+=\S*", command.words[0]):
            variable, _, value = command.words.pop(0).partition("=")
            command.env[variable] = value
        commands.append(command)
        current = []
    return commands


def bash_scripts(text, source):
    """A Script for every ```bash block, with the ```text block that directly follows it."""
    blocks, lines, found = parse_blocks(text, source), text.splitlines(), []
    for number, block in enumerate(blocks):
        if block.language != "bash":
            continue
        joined, commands = "\n".join(block.lines).replace("\\\n", " "), []
        for line in joined.splitlines():
            commands += parse_line(line)
        expected = None
        following = blocks[number + 1] if number + 1 < len(blocks) else None
        if (following and following.language == "text"
                and all(not line.strip() for line in lines[block.end : following.start])):
            expected = following.lines
        found.append(Script(block.where, commands, expected, following if expected else None))
    return found


def module_docstring(path):
    """ast.get_docstring of the module at path, from its first statement alone when that parses
    on its own (a docstring does): a whole code.py takes 60 ms to parse, in every process that
    collects this file."""
    source = Path(path).read_text("utf-8")
    lines = source.splitlines(keepends=True)
    tokens = tokenize.generate_tokens(iter(lines).__next__)
    end = next((token.end[0] for token in tokens if token.type == tokenize.NEWLINE), None)
    try:
        return ast.get_docstring(ast.parse("".join(lines[:end])))
    except SyntaxError:  # a compound statement first: its body is on the lines after
        return ast.get_docstring(ast.parse(source))


def docstring_scripts(name):
    """A Script for each command of the docstring's "Run it" (its notes in parentheses aside)."""
    docstring = module_docstring(ROOT / name / "code.py")
    run_it = docstring.split("Run it:", 1)[1] if "Run it:" in docstring else ""
    lines = [line.strip() for line in run_it.splitlines()]
    return [Script(f"{name}/code.py (Run it, command {number})", parse_line(line))
            for number, line in enumerate((line for line in lines
                                           if line and not line.startswith("(")), 1)]


def all_scripts():
    found = bash_scripts((ROOT / "README.md").read_text(encoding="utf-8"), "README.md")
    for name in LESSONS:
        found += bash_scripts(lesson(name), f"{name}/README.md")
    for name in PRESENT:
        found += docstring_scripts(name)
    return found



# A command in the prose is a command nobody checks: commands go in ```bash blocks.
INLINE_COMMAND = re.compile(r"(\.venv/bin/|printf |diff -u |cp -r |python3? s\d\d_)")


def commands_in_prose(text, exercises="Exercises", following="Next"):
    """The inline code spans of a lesson's prose, outside the exercises, that are commands."""
    skipped = set()
    for block in parse_blocks(text, ""):
        skipped.update(range(block.start, block.end))
    start = [number for number, title in headings(text) if title == exercises]
    after = [number for number, title in headings(text) if title == following]
    if start:
        skipped.update(range(start[0], after[0] if after else len(text.splitlines())))
    spans = [span for number, line in enumerate(text.splitlines()) if number not in skipped
             for span in re.findall(r"`([^`]+)`", line)]
    return [span for span in spans if INLINE_COMMAND.match(span)]


# ---- normalizing output ------------------------------------------------------------------------


def normalize(text, scratch=None):
    """Output as the lesson shows it: temporary paths and ports made stable, trailing spaces
    gone."""
    if scratch is not None:
        text = text.replace(str(scratch), "$TMPDIR")
    # The offline copies' folder of the learner's own, $TMPDIR/build-an-agent-<uid>/sNN-xxxxxxxx
    text = re.sub(r"(\$TMPDIR/build-an-agent-)\d+(?!\d)", r"\1$UID", text)
    copy = r"(\$TMPDIR/(?:build-an-agent-\$UID/)?s\d\d-)[a-z0-9_]{8}(?![a-z0-9_])"
    text = re.sub(copy, r"\1xxxx", text)
    text = re.sub(r"(?<![\w.])/\S*?/(?=s\d\d_\w+/)", ".../", text)
    text = text.replace(str(ROOT), "...")
    text = re.sub(r"http://127\.0\.0\.1:\d+", "http://127.0.0.1:PORT", text)
    text = re.sub(r"\b\d{8}-\d{6}-[0-9a-f]{6}\b", "YYYYMMDD-HHMMSS-xxxxxx", text)  # s06 session
    text = re.sub(r"(Ran \d+ tests? in )\d+\.\d+s", r"\g<1>0.000s", text)  # unittest's time
    return [line.rstrip() for line in text.rstrip("\n").split("\n")]



CHAPTER_SCRIPT = re.compile(r"(?P<name>s\d\d_\w+)/code\.py")
VALUED = {"--script", "--trace", "--workdir", "--mode", "--clear-at", "--compact-at"}
PLAY = f"{chapters.PLAY}/"  # a word of a command that starts so: one of the learner's copies


def script_options(path):
    """The options a script's argparse parser defines: the strings given to add_argument."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return {argument.value for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, "attr", None) == "add_argument"
            for argument in node.args if isinstance(argument, ast.Constant)}


def ci_commands():
    """The commands .ci/run runs, pip's -q left out."""
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    return {" ".join(word for word in line.split() if word != "-q") for line in lines
            if line.strip() and not line.lstrip().startswith("#")}


def skipped_headings(texts, deeper):
    """The headings after the deeper part's heading, in every page of `texts`."""
    found = set()
    for text in texts:
        titles = [title for _, title in headings(text)]
        if deeper in titles:
            found.update(titles[titles.index(deeper) + 1:])
    return found


def names_a_skipped_section(core, skipped):
    """The quoted names in a core's prose that are headings a core reader has skipped."""
    prose = re.sub(r"```.*?```", "", core, flags=re.S)
    quoted = re.findall(r'"([^"\n]+)"|“([^”\n]+)”', prose)
    return sorted({a or b for a, b in quoted} & skipped)


# Offline runs with the same command line and stdin, made once: {key: Future}
SHARED_RUNS, SHARED_LOCK = {}, threading.Lock()


class Run:
    """The state of one script as it runs: its scratch folder, its traces, its problems."""

    def __init__(self, script, scratch, api_url, seen):
        self.script, self.scratch, self.api_url, self.seen = script, scratch, api_url, seen
        self.traces = {}  # a trace file written in this script: the tool calls of its run
        self.problems = []
        self.actual = None  # the output its transcript was compared with, normalized
        if (ROOT / PLAY).is_dir():  # as in a clone, where play/ holds its README.md
            (scratch / PLAY).mkdir()

    def path(self, word):
        """A play/... path of the text (the learner's copies): in this script's scratch folder."""
        return str(self.scratch / word) if word.startswith(PLAY) else word

    def problem(self, command, what):
        self.problems.append(f"{' '.join(command.words)}: {what}")

    def compare(self, command, output, scratch):
        expected = normalize("\n".join(self.script.expected))
        expected = [line[2:] if line.startswith("^C") else line for line in expected]
        actual = self.actual = normalize(output, scratch)
        wrong = where_runs_stand(expected, actual, anchored=True)
        if wrong:
            self.problem(command, f"the transcript is not the output: {wrong}.\nThe output:\n"
                         + "\n".join(actual))

    def run(self):
        """Run the commands, each as soon as the ones before it that use one of its play/ paths
        have ended (the others run side by side)."""
        commands = self.script.commands
        with ThreadPoolExecutor(max_workers=max(len(commands), 1)) as pool:
            started = []
            for number, command in enumerate(commands):
                paths = {word for word in command.words if word.startswith(PLAY)}
                before = [started[earlier] for earlier in range(number)
                          if paths & {w for w in commands[earlier].words if w.startswith(PLAY)}]
                expected = self.script.expected if number == len(commands) - 1 else None
                started.append(pool.submit(self.run_after, before, command, expected))
            for future in started:
                future.result()
        return self.problems

    def run_after(self, before, command, expected):
        for future in before:
            future.result()
        try:
            self.run_one(command, expected)
        except Exception as error:  # one sentence in the report, not a crashed fixture
            self.problem(command, f"{type(error).__name__}: {error}")

    def run_one(self, command, expected):
        words = command.words
        if not words:
            return self.problem(command, "nothing to run")
        if len(words) > 1 and words[0] in ("python", ".venv/bin/python") and (
                CHAPTER_SCRIPT.fullmatch(words[1])):
            return self.chapter(command, CHAPTER_SCRIPT.fullmatch(words[1])["name"], words[2:],
                                expected)
        if words[:2] == ["diff", "-u"] and len(words) == 4:
            result = subprocess.run(words, cwd=ROOT, capture_output=True, text=True, check=False)
            if result.returncode != 1 or not result.stdout.startswith(f"--- {words[2]}"):
                self.problem(command, f"exit {result.returncode}, not a diff: {result.stderr}")
            if expected is not None:
                self.compare(command, result.stdout, self.scratch)
            return None
        if expected is not None:
            return self.problem(command, "a ```text block follows a command with no output")
        if words[:2] == ["cp", "-r"] and len(words) == 4 and words[3].startswith(PLAY):
            shutil.copytree(ROOT / words[2], self.path(words[3]))
            return None
        if words == ["python3", "-m", "venv", ".venv"] or words[:2] == [".venv/bin/pip",
                                                                           "install"]:
            if " ".join(words) not in ci_commands():
                self.problem(command, ".ci/run does not run this set-up step")
            return None
        if words[:3] == [".venv/bin/python", "-m", "pytest"]:
            return self.pytest(command)
        if words[:3] == [".venv/bin/python", "-m", "tools.context_estimate"]:
            return self.context_estimate(command)
        if words[:3] == [".venv/bin/python", "-m", "course.stages"]:
            return self.stages(command, expected)
        if words[:2] == [".venv/bin/python", "web/build.py"]:
            options = [word.split("=")[0] for word in words[2:] if word.startswith("-")]
            missing = [option for option in options if option not in script_options(words[1])]
            if missing:
                self.problem(command, f"{words[1]} has no option {missing}")
            return None
        if words == [".venv/bin/jupyter", "lab"]:
            if not (ROOT / ".venv" / "bin" / "jupyter-lab").exists():
                self.problem(command, ".venv/bin/jupyter-lab is not installed")
            return None
        return self.problem(command, "the lesson test cannot check this command: extend the "
                            "grammar in course/lessons.py")

    def pytest(self, command):
        words, environment = command.words, command.env
        if words[3:] in ([], ["-n", "2"]) and not environment:  # the whole suite
            if " ".join(words) not in ci_commands():
                self.problem(command, "this is not the test command .ci/run runs")
            return
        for variable, value in environment.items():
            registered = f'register_profile("{value}"'
            if variable != "HYPOTHESIS_PROFILE" or not any(
                    registered in path.read_text(encoding="utf-8")
                    for path in (ROOT / "tests").glob("*.py")):
                self.problem(command, f"{variable}={value} is set nowhere in tests/")
        paths = [word for word in words[3:] if not word.startswith("-")
                 and not re.fullmatch(r"\w+", word)]
        if not all((ROOT / path.split("::")[0]).exists() for path in paths):
            self.problem(command, f"no such test file: {paths}")

    def context_estimate(self, command):
        """tools.context_estimate on a trace an earlier command of the block recorded."""
        words = command.words
        if len(words) != 4 or self.path(words[3]) not in self.traces:
            return self.problem(command, "the estimate reads a --trace recorded before it")
        result = subprocess.run([sys.executable, *words[1:3], self.path(words[3])], cwd=ROOT,
                                capture_output=True, text=True, check=False)
        if result.returncode != 0 or not result.stdout.startswith("call 1: "):
            self.problem(command, f"exit {result.returncode}: {result.stderr or result.stdout}")
        return None

    def stages(self, command, expected):
        """The stage checker on the learner's build/agent.py, or on a chapter's code.py at its
        own stage or one before: tests/test_stages.py runs the checks of every chapter at its
        own stage (which holds every stage before it) and shows that they pass."""
        from course import stages  # the checker's package, only where a lesson names it

        words = command.words[3:]
        if command.env or expected is not None or len(words) != 2 or (
                words[0] not in stages.STAGES):
            return self.problem(command, "the checker's command is `.venv/bin/python -m "
                                "course.stages sNN PATH`, with no output shown after it")
        label, path = words
        chapter = CHAPTER_SCRIPT.fullmatch(path)
        if path != "build/agent.py" and not (chapter and chapter["name"][:3] >= label):
            return self.problem(command, f"{path} is not build/agent.py, nor a chapter that "
                                f"passes stage {label}")
        if " ".join(command.words) != stages.command(label, path):
            self.problem(command, "not the command course.stages.command() gives")
        return None

    def chapter(self, command, name, arguments, expected):
        arguments = [self.path(word) for word in arguments]
        options, prompt, index = {}, None, 0
        while index < len(arguments):
            word = arguments[index]
            if word in VALUED:
                options[word] = arguments[index + 1]
                index += 2
                continue
            if word.startswith("--"):
                options[word] = True
            elif prompt is None:
                prompt = word
            else:
                return self.problem(command, f"two prompts: {prompt!r} and {word!r}")
            index += 1
        scenario = read_scenario(ROOT / name)
        label = name.split("_")[0]
        # A REPL the text does not feed: the learner reads the banner's prompt, types q.
        stdin = command.stdin
        repl = stdin is None and prompt is None
        if stdin is None:
            stdin = "q\n" if repl else ""
        interrupt = [n for n, line in enumerate(expected or []) if line.startswith("^C")]
        after = normalize(expected[interrupt[0] - 1])[0] if interrupt else None
        result, scratch = self.start(command, name, arguments, stdin, after)
        output = result.stdout
        if command.cut:
            kept = output.splitlines(keepends=True)
            head, count = command.cut[0] == "head", command.cut[1]
            output = "".join(kept[:count] if head else kept[-count:] if count else [])
        if expected is not None:
            self.compare(command, output + result.stderr, scratch)
        elif (result.returncode, result.stderr) != (0, ""):
            self.problem(command, f"exit {result.returncode}: {result.stderr or result.stdout}")
        if not command.live and "--script" not in options and prompt is not None and (
                prompt != scenario["prompt"]):
            self.problem(command, f"the script was written for {scenario['prompt']!r}")
        if not command.live and HONEST in result.stdout and not any(
                HONEST in line for line in expected or []):
            self.problem(command, "the scripted model was given another prompt than its own:\n"
                         + result.stdout)
        if repl and not command.live and "--script" not in options and (
                f"the script was written for: {scenario['prompt']}" not in result.stdout):
            self.problem(command, "the banner does not say which prompt the script plays")
        if repl and result.stdout.splitlines()[-1:] != [f"{label} >> q"]:
            self.problem(command, "the REPL did not end at q")
        calls = [line for line in result.stdout.splitlines() if line.startswith("  > ")]
        if "--trace" in options:
            records = [json.loads(line) for line in
                       Path(options["--trace"]).read_text(encoding="utf-8").splitlines()]
            marks = {"agent", "compaction"}  # s07's subagent calls, s08's summary requests
            # s11's lines of a server's messages: {"mcp": SERVER, "send" | "receive" | "exited"}
            served = [record for record in records if "mcp" in record]
            records = [record for record in records if "mcp" not in record]
            if not records or any(set(record) - marks != {"request", "response"}
                                  for record in records) or any(
                    len((set(record) - {"agent", "mcp"}) & {"send", "receive", "exited"}) != 1
                    for record in served):
                self.problem(command, "the trace has no model calls, or other lines")
            self.traces[options["--trace"]] = calls
        if options.get("--script") in self.traces and calls != self.traces[options["--script"]]:
            self.problem(command, f"the replay ran {calls}, the recording "
                         f"{self.traces[options['--script']]}")
        if command.live:
            self.check_live(command, name, result.stdout, options, prompt)
            self.check_keyless(command, name, arguments, prompt, scenario)

    def start(self, command, name, arguments, stdin, after):
        """Run the chapter; (the CompletedProcess, the scratch folder its TMPDIR was). Two
        scripts that give the same offline command with no play/ path share one run."""
        env = offline_environment(TMPDIR=str(self.scratch), **command.env)
        if command.live:
            env.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=self.api_url)
        key = (name, tuple(arguments), stdin, tuple(sorted(command.env.items())))
        shared = not command.live and after is None and not any(
            word.startswith(PLAY) for word in command.words)
        with SHARED_LOCK:
            if shared and key in SHARED_RUNS:
                return SHARED_RUNS[key].result()
            future = SHARED_RUNS[key] = Future() if shared else None
        runner = shared_runner()
        try:
            job = runner.start(ROOT / name / "code.py", *arguments, stdin=stdin, cwd=ROOT,
                               env=env)
            if after is not None:
                self.press_ctrl_c(runner, job, after)
            outcome = runner.result(job, timeout=60), self.scratch
        except BaseException as error:
            if future:
                future.set_exception(error)
            raise
        if future:
            future.set_result(outcome)
        return outcome

    def press_ctrl_c(self, runner, job, after):
        """SIGINT to the run's process group, as the terminal sends it, once `after` is on the
        screen and the command it shows has started (the run has a child process)."""
        pid, output = runner.pid(job), runner.output_file(job)
        children = Path(f"/proc/{pid}/task/{pid}/children")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            printed = output.read_text(encoding="utf-8") if output.exists() else ""
            shown = after in normalize(printed, self.scratch)
            if shown and (not children.exists() or children.read_text().strip()):
                os.killpg(pid, signal.SIGINT)
                return
            time.sleep(0.01)  # waits for the line, not for a time
        raise TimeoutError(f"{after!r} was never shown")

    def check_keyless(self, command, name, arguments, prompt, scenario):
        """Without a key, a live one-shot command says in one line that it needs one, and how to
        play the chapter's script instead, and sends nothing (exit 2)."""
        if prompt is None:
            return
        runner = shared_runner()
        env = offline_environment(TMPDIR=str(self.scratch), **command.env)
        result = runner.result(runner.start(ROOT / name / "code.py", *arguments, cwd=ROOT,
                                            env=env), timeout=60)
        offline = f'.venv/bin/python {name}/code.py --offline {json.dumps(scenario["prompt"])}'
        wanted = (2, "", f"{name}: this prompt needs a real model: set ANTHROPIC_API_KEY in .env "
                  f"(see .env.example). Without a key, play the chapter's script: {offline}\n")
        if (result.returncode, result.stdout, result.stderr) != wanted:
            self.problem(command, f"without a key: exit {result.returncode}, "
                         f"{result.stdout + result.stderr!r}, not {wanted!r}")

    def check_live(self, command, name, stdout, options, prompt):
        banner = stdout.splitlines()[0] if stdout else ""
        if not banner.startswith(f"{name} · live: ") or not banner.endswith(self.api_url):
            self.problem(command, f"not a live run: {banner!r}")
        if prompt is None:
            return
        workdir = Path(options.get("--workdir", ROOT)).resolve()
        results = [block["content"] for call in self.seen
                   if str(workdir) in system_text(call["body"])
                   for message in call["body"]["messages"] if isinstance(message["content"], list)
                   for block in message["content"] if block.get("type") == "tool_result"]
        listed = sorted(path.name for path in workdir.iterdir() if not path.name.startswith("."))
        if not listed or not results or any(entry not in results[0] for entry in listed):
            self.problem(command, f"the live run's ls did not list the files of {workdir} "
                         f"({listed}): {results}")


def system_text(body):
    """The system prompt of a request: a string, or (live) text blocks marked for the cache."""
    system = body["system"]
    return system if isinstance(system, str) else "".join(block["text"] for block in system)


def live_answer(body, seen):
    """The loopback Messages API: the prompt gets one bash `ls` call; everything after it (the
    tool result, a Stop hook's note) gets the answer."""
    if any(message["role"] == "assistant" for message in body["messages"]):
        return message_json([{"type": "text", "text": "Done: I listed the files."}])
    return message_json([{"type": "tool_use", "id": f"toolu_live_{len(seen)}", "name": "bash",
                          "input": {"command": "ls"}}], stop_reason="tool_use")


