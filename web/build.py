"""Build the course site: one static page per chapter, a home page, and a compare page.

    python web/build.py                  build into web/dist/
    python web/build.py --serve          build, then serve web/dist/ on 127.0.0.1
    python web/build.py --serve --port 8000

What goes into the site, for every folder sNN_*/ that has a code.py:

    Lesson   the chapter's README.md (mistune), fenced code highlighted (pygments)
    Code     code.py with line numbers; the lines new in this chapter are marked
    Diff     code.py against the previous chapter (difflib), unified and side by side,
             after a summary computed from the two files: tools, functions, lines
    Run      the chapter's scenario, recorded now by running code.py offline with
             --trace; a player steps through the model calls, each step captioned from
             the trace and the terminal, with the user's answers where they happen

The recordings run in parallel, one process per chapter. A chapter whose run
cannot be recorded stops the build (exit 1) with one line that names it.

Two builds give the same bytes: what a run shows of the machine that built it (its
temporary folder, the checkout, the session id, the time a test run took) is put
in fixed words before anything is written, and the build stops if a path of this
machine is left in a recording.

The site is plain HTML, CSS and a little JavaScript (web/assets/). It requests
nothing from another host, so it works offline, even opened from the disk.
"""

import argparse
import ast
import colorsys
import difflib
import functools
import html
import http.server
import itertools
import json
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import mistune
import pygments
from pygments.lexers import PythonLexer, TextLexer, get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.token import STANDARD_TYPES, Comment, Keyword, Name, Operator, String
from pygments.util import ClassNotFound

# The course package (the banner grammar, the offline environment, scenario.json) sits at the
# repository root, which is not on sys.path when this runs as `python web/build.py`.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from course import (  # noqa: E402  (after the sys.path line above, which it needs)
    ScenarioError,
    offline_environment,
    read_scenario,
    section_above,
)

# ======================================================================
# PATHS AND SETTINGS
# ======================================================================

WEB = Path(__file__).resolve().parent  # web/
ROOT = WEB.parent  # the repository: where the chapters live
ASSETS = WEB / "assets"  # the CSS, JavaScript and icon copied into every build
DEFAULT_OUT = WEB / "dist"

COURSE_TITLE = "Build a coding agent"
RUN_TIMEOUT = 120  # seconds one chapter's recorded run may take
MARKER = ".course-site"  # a file that says "this folder is a build of the site"
PYTHON = ".venv/bin/python"  # the Python of the commands shown, as the README gives them

# What a recording shows instead of what belongs to the machine that built the site.
SHOWN_TMPDIR = "$TMPDIR"  # the temporary folder the run's workdir was made in
SHOWN_SESSION_ID = "YYYYMMDD-HHMMSS-xxxxxx"  # s06: the start time and six random hex digits
SHOWN_SECONDS = "x.xxx"  # how long a test run took ("Ran 3 tests in x.xxxs")

LIGHT_STYLE = "default"  # pygments styles for code: light, and dark (prefers-color-scheme)
DARK_STYLE = "github-dark"
MIN_CONTRAST = 4.6  # WCAG AA asks 4.5:1 for text; a little more, against rounding


class BuildError(Exception):
    """The site cannot be built. The message is one line and names the chapter."""


# ======================================================================
# THE CHAPTERS
# ======================================================================

@dataclass
class Run:
    """One recorded run of a chapter's scenario, in the words it is shown in."""
    prompt: str
    answers: list
    command: str  # the command line, as a learner types it from the repository root
    stdout: str
    stderr: str
    calls: list  # one {"request": ..., "response": ...} per model call
    trace: str  # the trace file as the chapter wrote it (machine paths replaced)


@dataclass
class Chapter:
    name: str  # "s02_tools"
    folder: Path
    code: str  # the text of code.py
    previous: "Chapter | None" = None
    run: Run | None = None
    lesson: str | None = field(default=None, repr=False)  # README.md, if there is one yet

    @property
    def label(self):
        """The short name, as the REPL prompt and the navigation show it: "s02"."""
        return self.name.split("_")[0]

    @functools.cached_property
    def docstring(self):
        try:
            return ast.get_docstring(ast.parse(self.code)) or ""
        except SyntaxError:
            return ""

    @property
    def summary(self):
        """The first line of the docstring, without its "sNN_x: " prefix."""
        first = self.docstring.splitlines()[0] if self.docstring else ""
        return first.removeprefix(f"{self.name}:").strip()

    @property
    def title(self):
        return f"{self.label} · {self.summary.rstrip('.')}" if self.summary else self.name

    @property
    def page(self):
        return f"{self.name}.html"

    @property
    def notebook(self):
        """The chapter's notebook (made by web/notebooks.py), which the site offers as a
        download."""
        return self.folder / "notebook.ipynb"

    @property
    def diagram(self):
        """The diagram of the docstring: its first block of four or more indented lines."""
        return docstring_diagram(self.docstring)

    @property
    def run_command(self):
        """The "Run it:" command of the docstring, or "" if it has none."""
        found = re.search(r"^Run it:\s+(\S.*)$", self.docstring, re.M)
        return found.group(1).strip() if found else ""


def docstring_diagram(docstring):
    lines = docstring.splitlines()
    block = []
    for line in [*lines, ""]:
        if line.startswith("    ") or (block and not line.strip()):
            block.append(line)
            continue
        while block and not block[-1].strip():
            block.pop()
        if sum(1 for part in block if part.strip()) >= 4:
            return textwrap.dedent("\n".join(block))
        block = []
    return ""


def find_chapters(root):
    """Every folder sNN_* under root that has a code.py, in order, each linked to the one before."""
    chapters = []
    for folder in sorted(root.glob("s[0-9][0-9]_*")):
        if not (folder / "code.py").is_file():
            continue
        readme = folder / "README.md"
        chapter = Chapter(
            name=folder.name,
            folder=folder,
            code=(folder / "code.py").read_text(encoding="utf-8"),
            previous=chapters[-1] if chapters else None,
            lesson=readme.read_text(encoding="utf-8") if readme.is_file() else None,
        )
        chapters.append(chapter)
    return chapters


# ======================================================================
# RECORDING A CHAPTER'S RUN
# ======================================================================

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
    command = (f"{PYTHON} {chapter.name}/code.py --offline --trace {chapter.name}.jsonl "
               f"{quote(prompt)}")
    if answers:
        command = f"printf {quote(''.join(a + chr(10) for a in answers))} | {command}"
    return command


def record_run(chapter, launch=run_process, temp_root=None):
    """Run the chapter's scenario offline, exactly as the shown command does, and return what
    happened, in the words it is shown in.

    The run's current folder and TMPDIR are a fresh temporary folder of the build: the trace
    file lands there, and so does the copy of workspace/ the chapter makes for its tools.
    The folder is made in temp_root (default: the system's temporary folder).
    """
    prompt, answers = prompt_and_answers(chapter)
    piped = "".join(answer + "\n" for answer in answers)  # one line for each question
    trace_name = f"{chapter.name}.jsonl"
    with tempfile.TemporaryDirectory(prefix=f"site-{chapter.name}-", dir=temp_root) as temporary:
        folder = Path(temporary)
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
        calls = [json.loads(line) for line in trace_text.splitlines() if line.strip()]
    except json.JSONDecodeError:
        raise BuildError(f"{chapter.name}: the trace is not JSON lines") from None
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


# ======================================================================
# WHAT HAPPENED AT EACH STEP: USER EVENTS AND CAPTIONS
# ======================================================================

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
    text = re.sub(r"\s+", " ", text).strip()
    found = re.match(r"(.+?)[.;](?:\s|$)", text)
    sentence = found.group(1) if found else text.rstrip(".")
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def said(answer):
    if answer == "":
        return "an empty line"
    return answer if len(answer) <= 40 else answer[:39] + "…"


def step_captions(calls, events):
    """One line per model call, saying what is new in it: what the request brings back
    (refusals, reminders, an approved plan), what the model asked for, and what the user
    answered in the terminal before the next call."""
    names, captions = {}, []
    for number, call in enumerate(calls):
        request, response = call["request"], call["response"]
        messages = request.get("messages", [])
        parts = []
        if number == 0:
            parts.append("the prompt goes to the model")
        elif messages and messages[-1].get("role") == "user":
            parts += news_of_the_turn(blocks_of(messages[-1]), names)
        asked = tool_uses(response)
        for block in asked:
            names[block["id"]] = block["name"]
        parts += model_move(response, asked)
        for block in asked:
            for event in events.get(block["id"], []):
                parts.append(event_caption(block, event))
        captions.append("; ".join(parts) + ".")
    return captions


def news_of_the_turn(blocks, names):
    parts = []
    for block in blocks:
        if block.get("type") == "tool_result":
            name = names.get(block.get("tool_use_id"), "a tool")
            text = result_text(block.get("content"))
            if block.get("is_error"):
                refused = re.match(r"(Denied|Blocked|Refused)\b", text)
                reason = re.sub(r"^Denied: ", "", text)
                verb = "was refused" if refused else "returned an error"
                parts.append(f"{name} {verb}: {first_sentence(reason)}")
            elif name == "exit_plan_mode":
                saved = re.search(r"saved in (\S+?)\.?(?:\s|$)", text)
                parts.append(f"plan approved: saved to {saved.group(1)}" if saved
                             else "plan approved")
            elif name == "ask_user_question":
                parts.append(f"the user's answer goes back: {first_sentence(text, 60)}")
        elif block.get("type") == "text":
            tag = re.match(r"\s*<(\w+)([^>]*)>(.*?)(?:</\1>|$)", block.get("text", ""), re.S)
            if tag and tag[1] == "reminder":
                parts.append(f"reminder added to this turn: {first_sentence(tag[3], 60)}")
            elif tag and tag[1] == "hook":
                event = re.search(r'event="(\w+)"', tag[2])
                hook = f"the {event[1]} hook's" if event else "a hook's"
                parts.append(f"{hook} words added to this turn")
            else:
                parts.append("the user's words added to this turn")
    return parts


def model_move(response, asked):
    stop = response.get("stop_reason")
    if not asked:
        if stop == "max_tokens":
            return ["the reply was cut off (stop_reason max_tokens)"]
        return [f"the model answered without a tool (stop_reason {stop}): the turn ends"]
    moves, plain = [], []
    for block in asked:
        if block["name"] == "ask_user_question":
            moves.append("the model asked the user a question")
        elif block["name"] == "exit_plan_mode":
            moves.append("the model submitted its plan")
        else:
            plain.append(block["name"])
    if plain:
        count = f"{len(plain)} tools: " if len(plain) > 1 else ""
        moves.insert(0, f"the model asked for {count}{', '.join(plain)}")
    return moves


def event_caption(block, event):
    if block["name"] == "exit_plan_mode":
        return f"the harness asked to approve the plan; the user answered {said(event['answer'])}"
    if event["question"].startswith("? allow"):
        return f"the harness asked to allow {block['name']}; the user answered " + said(
            event["answer"])
    return f"the user answered {said(event['answer'])}"


# ======================================================================
# HIGHLIGHTING
# ======================================================================

LIGHT = get_style_by_name(LIGHT_STYLE)
DARK = get_style_by_name(DARK_STYLE)


def css_class(token_type):
    """The short CSS class pygments gives a token type ("k" for a keyword)."""
    while token_type not in STANDARD_TYPES:
        token_type = token_type.parent
    return STANDARD_TYPES[token_type]


def look(style, token_type):
    """What a token looks like in a style: colour, bold, italic, underline."""
    found = style.style_for_token(token_type)
    return found["color"], found["bold"], found["italic"], found["underline"]


# The kinds of token the site colours, each with the colours pygments' styles give it: the
# words of the language, strings, docstrings, comments, and the names a def, a class or a
# decorator introduces. Everything else (names, numbers, operators) is plain text: a page of
# code then has half the elements, which is what the browser and an accessibility check
# spend their time on.
COLOURED = (String.Doc, String, Comment, Operator.Word, Keyword, Name.Function, Name.Class,
            Name.Decorator)
LOOK_OF = {Operator.Word: Keyword}  # "and", "not in": words of the language, like keywords


@functools.cache
def token_kind(token_type):
    """The kind of token it is coloured as (one of COLOURED, or Operator.Word's Keyword), or
    None for plain text."""
    for kind in COLOURED:
        if token_type in kind:
            return LOOK_OF.get(kind, kind)
    return None


@functools.cache
def token_look(token_type):
    """(light, dark) look of a token type, or None when it is plain text."""
    kind = token_kind(token_type)
    return None if kind is None else (look(LIGHT, kind), look(DARK, kind))


def highlight_pieces(code, lexer):
    """Highlighted HTML, one string per source line.

    Neighbouring tokens that look the same in both styles share one <span> (with the class
    of the first), and plain text gets none: the page has a few thousand elements less,
    which is what an accessibility check spends its time on, and looks exactly the same.
    Tokens that span lines (docstrings) are cut at each newline, so that every line stands
    alone.
    """
    lines, run, run_class, run_look, spaces = [[]], [], "", None, ""

    def close():
        nonlocal run, run_look
        if run:
            text = html.escape("".join(run), quote=False)
            lines[-1].append(f'<span class="{run_class}">{text}</span>' if run_look else text)
        run, run_look = [], None

    for token_type, value in pygments.lex(code, lexer):
        for number, piece in enumerate(value.split("\n")):
            if number:
                close()
                lines[-1].append(html.escape(spaces, quote=False))
                spaces = ""
                lines.append([])
            if not piece:
                continue
            if piece.isspace():
                spaces += piece  # goes with the run if the next token looks the same
                continue
            kind = token_look(token_type)
            if kind != run_look or not run:
                close()
                lines[-1].append(html.escape(spaces, quote=False))
                run_class = css_class(token_kind(token_type)) if kind else ""
                run_look = kind
            else:
                run.append(spaces)
            spaces = ""
            run.append(piece)
    close()
    lines[-1].append(html.escape(spaces, quote=False))
    return ["".join(line) for line in lines]


@functools.cache  # each code.py is shown in several diffs
def highlight_lines(source):
    """Python source as a list of HTML lines, one per source line."""
    return highlight_pieces(source, PythonLexer(stripnl=False))[: len(source.splitlines())]


def highlight_block(code, language):
    """A fenced code block of the lesson, highlighted for its language (plain text if unknown).
    It may scroll sideways, so it can take the keyboard's focus."""
    try:
        lexer = get_lexer_by_name(language, stripnl=False) if language else TextLexer()
    except ClassNotFound:
        lexer = TextLexer()
    code = code.rstrip("\n")
    body = "\n".join(highlight_pieces(code, lexer)[: len(code.splitlines())])
    return f'<div class="hl"><pre tabindex="0">{body}\n</pre></div>\n'


# ---- the colours of code, readable on every background they sit on ----

def site_colours():
    """The colour variables of site.css: ({name: colour} light, {name: colour} dark)."""
    css = (ASSETS / "site.css").read_text(encoding="utf-8")
    light_block = re.search(r":root\s*{(.*?)}", css, re.S).group(1)
    dark_block = re.search(r"prefers-color-scheme:\s*dark\)\s*{\s*:root\s*{(.*?)}", css, re.S)
    variables = re.compile(r"--([\w-]+):\s*(#[0-9a-fA-F]{6})\b")
    return dict(variables.findall(light_block)), dict(variables.findall(dark_block.group(1)))


# The backgrounds code sits on: the code block, the page, diff lines added and removed.
CODE_BACKGROUNDS = ("code-bg", "page", "panel", "plus-bg", "minus-bg", "empty-bg")


def luminance(colour):
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(one, other):
    high, low = sorted((luminance(one), luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def readable(colour, backgrounds, dark):
    """The colour, made darker (light pages) or lighter (dark pages) in small steps, keeping
    its hue, until it reaches MIN_CONTRAST against every background."""
    red, green, blue = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    hue, lightness, saturation = colorsys.rgb_to_hls(red, green, blue)
    for _ in range(100):
        channels = colorsys.hls_to_rgb(hue, lightness, saturation)
        candidate = "#" + "".join(f"{round(c * 255):02x}" for c in channels)
        if min(contrast(candidate, b) for b in backgrounds) >= MIN_CONTRAST:
            return candidate
        lightness = min(lightness + 0.01, 1) if dark else max(lightness - 0.01, 0)
    return "#ffffff" if dark else "#000000"


def token_rule(selector, token_look_, backgrounds, dark):
    colour, bold, italic, underline = token_look_
    parts = [f"color: {readable('#' + colour, backgrounds, dark)}" if colour
             else "color: inherit"]
    parts.append(f"font-weight: {'bold' if bold else 'normal'}")
    parts.append(f"font-style: {'italic' if italic else 'normal'}")
    if underline:
        parts.append("text-decoration: underline")
    return f"{selector} {{ {'; '.join(parts)} }}"


def pygments_css():
    """The colours of the highlighted code, light and dark: the two pygments styles, each
    colour adjusted to be readable on every background code has on the site."""
    light_colours, dark_colours = site_colours()
    light_backgrounds = [light_colours[name] for name in CODE_BACKGROUNDS]
    dark_backgrounds = [dark_colours[name] for name in CODE_BACKGROUNDS]
    light, dark = [], []
    for kind in dict.fromkeys(token_kind(kind) for kind in COLOURED):
        short, pair = css_class(kind), token_look(kind)
        light.append(token_rule(f".hl .{short}", pair[0], light_backgrounds, dark=False))
        dark.append(token_rule(f"  .hl .{short}", pair[1], dark_backgrounds, dark=True))
    return ("/* The colours of code: pygments' " + LIGHT_STYLE + " and " + DARK_STYLE +
            " styles\n   for the kinds of token the site colours, made readable on the site's "
            "   backgrounds by web/build.py. */\n"
            + "\n".join(light) + "\n\n@media (prefers-color-scheme: dark) {\n"
            + "\n".join(dark) + "\n}\n")


# ======================================================================
# DIFFS
# ======================================================================

@functools.cache
def line_matcher(old_code, new_code):
    """difflib's matcher for two files, line by line (made once per pair of files).

    The same matcher as difflib.unified_diff, so the counts agree with the
    chapter table of the course README.
    """
    return difflib.SequenceMatcher(None, old_code.splitlines(), new_code.splitlines())


@dataclass
class Diff:
    """code.py of one chapter against another, line by line."""
    old: Chapter
    new: Chapter

    @property
    def opcodes(self):
        return line_matcher(self.old.code, self.new.code).get_opcodes()

    @property
    def added(self):
        return sum(j2 - j1 for tag, i1, i2, j1, j2 in self.opcodes if tag in ("insert", "replace"))

    @property
    def removed(self):
        return sum(i2 - i1 for tag, i1, i2, j1, j2 in self.opcodes if tag in ("delete", "replace"))

    @property
    def added_line_numbers(self):
        """The lines of the new file (from 1) that the old one does not have."""
        return {j + 1 for tag, i1, i2, j1, j2 in self.opcodes if tag in ("insert", "replace")
                for j in range(j1, j2)}

    def hunks(self, context=3):
        """The changes in groups with `context` lines around them, as in diff -u."""
        return list(line_matcher(self.old.code, self.new.code).get_grouped_opcodes(context))


def hunk_header(group, new_lines):
    first, last = group[0], group[-1]
    old_start, old_count = first[1] + 1, last[2] - first[1]
    new_start, new_count = first[3] + 1, last[4] - first[3]
    section = section_above(new_lines, first[3])
    return f"@@ -{old_start},{old_count} +{new_start},{new_count} @@ {section}".rstrip()


class Column:
    """A gutter (line numbers, signs) and lines of code, built line by line; lines of one
    kind in a row share one element (<ins>, <del>, or a span), and so does their gutter."""

    TAGS = {"added": "ins", "removed": "del", "context": "span", "empty": "span", "hunk": "span"}

    def __init__(self):
        self.gutter, self.code = [], []
        self.kind, self.run_gutter, self.run_code = None, [], []

    def add(self, kind, gutter, code_html):
        if kind != self.kind:
            self.flush()
            self.kind = kind
        self.run_gutter.append(html.escape(gutter) + "\n")
        self.run_code.append(code_html + "\n")

    def flush(self):
        if self.kind:
            tag = self.TAGS[self.kind]
            self.gutter.append(f'<span class="{self.kind}">{"".join(self.run_gutter)}</span>')
            self.code.append(f'<{tag} class="{self.kind}">{"".join(self.run_code)}</{tag}>')
        self.kind, self.run_gutter, self.run_code = None, [], []

    def html(self, label):
        self.flush()
        return (f'<div class="scroll hl" tabindex="0" role="region" '
                f'aria-label="{html.escape(label)}"><div class="rows">'
                f'<pre class="gutter" aria-hidden="true">{"".join(self.gutter)}</pre>'
                f'<pre class="lines"><code>{"".join(self.code)}</code></pre></div></div>')


def number_width(diff):
    return len(str(max(len(diff.old.code.splitlines()), len(diff.new.code.splitlines()), 1)))


def unified_view(diff):
    """The diff as in diff -u: old and new line numbers and a sign in the gutter, then the
    line; lines added are <ins>, lines removed <del>."""
    old_html, new_html = highlight_lines(diff.old.code), highlight_lines(diff.new.code)
    new_lines = diff.new.code.splitlines()
    width = number_width(diff)
    column = Column()
    for group in diff.hunks():
        column.add("hunk", "", html.escape(hunk_header(group, new_lines)))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                    column.add("context", f"{i + 1:>{width}} {j + 1:>{width}}  ", new_html[j])
                continue
            for i in range(i1, i2):
                column.add("removed", f"{i + 1:>{width}} {'':>{width}} -", old_html[i])
            for j in range(j1, j2):
                column.add("added", f"{'':>{width}} {j + 1:>{width}} +", new_html[j])
    if not diff.hunks():
        column.add("context", "", "The two files are the same.")
    return column.html(f"Unified diff: {diff.old.name}/code.py → {diff.new.name}/code.py")


def side_by_side_view(diff):
    """The same changes, old on the left and new on the right, line beside line: each side
    scrolls on its own, and both have the same lines, so they stay level."""
    old_html, new_html = highlight_lines(diff.old.code), highlight_lines(diff.new.code)
    new_lines = diff.new.code.splitlines()
    width = number_width(diff)
    left, right = Column(), Column()
    for group in diff.hunks():
        header = html.escape(hunk_header(group, new_lines))
        left.add("hunk", "", header)
        right.add("hunk", "", header)
        for tag, i1, i2, j1, j2 in group:
            for i, j in itertools.zip_longest(range(i1, i2), range(j1, j2)):
                for column, index, lines, kind, sign in (
                    (left, i, old_html, "removed", "-"), (right, j, new_html, "added", "+")
                ):
                    if index is None:
                        column.add("empty", "", "")
                    elif tag == "equal":
                        column.add("context", f"{index + 1:>{width}}  ", lines[index])
                    else:
                        column.add(kind, f"{index + 1:>{width}} {sign}", lines[index])
    if not diff.hunks():
        left.add("context", "", "The two files are the same.")
        right.add("context", "", "The two files are the same.")
    return (f'<div class="split">{left.html(f"Old: {diff.old.name}/code.py")}'
            f'{right.html(f"New: {diff.new.name}/code.py")}</div>')


def diff_views(diff, id_prefix, heading_level=3):
    """The summary, then both views of a diff, with buttons to switch between them (site.js;
    the layout chosen goes in the address: #diff-split)."""
    h = f"h{heading_level}"
    return f"""
{diff_summary(diff, id_prefix, h)}
<{h} id="{id_prefix}-lines">The lines</{h}>
<div class="view-switch" role="group" aria-label="Diff layout">
  <button type="button" data-view="{id_prefix}-unified" aria-pressed="true">Unified</button>
  <button type="button" data-view="{id_prefix}-split" aria-pressed="false">Side by side</button>
</div>
<div class="diff-view unified" id="{id_prefix}-unified">{unified_view(diff)}</div>
<div class="diff-view" id="{id_prefix}-split">{side_by_side_view(diff)}</div>"""


# ---- what is new: computed from the two files ----

@functools.cache
def tool_names(code):
    """The tools a code.py defines: every dict literal with a "name" and an "input_schema"."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    names = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        keys = {key.value: value for key, value in zip(node.keys, node.values, strict=True)
                if isinstance(key, ast.Constant)}
        name = keys.get("name")
        if "input_schema" in keys and isinstance(name, ast.Constant):
            names.append(name.value)
    return sorted(set(names), key=names.index)


@functools.cache
def functions(code):
    """{name: source} of the functions of a code.py, methods as Class.method, in file order.
    The source is its whole lines, decorators included."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return {}
    lines = code.splitlines()
    found = {}

    def visit(nodes, prefix):
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                found[prefix + node.name] = "\n".join(lines[first - 1 : node.end_lineno])
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return found


@dataclass
class WhatIsNew:
    tools_added: list
    tools_removed: list
    functions_added: list
    functions_changed: list
    functions_removed: list
    lines_added: int
    lines_removed: int


def what_is_new(diff):
    old_tools, new_tools = tool_names(diff.old.code), tool_names(diff.new.code)
    old_functions, new_functions = functions(diff.old.code), functions(diff.new.code)
    return WhatIsNew(
        tools_added=[name for name in new_tools if name not in old_tools],
        tools_removed=[name for name in old_tools if name not in new_tools],
        functions_added=[name for name in new_functions if name not in old_functions],
        functions_changed=[name for name, source in new_functions.items()
                           if name in old_functions and old_functions[name] != source],
        functions_removed=[name for name in old_functions if name not in new_functions],
        lines_added=diff.added,
        lines_removed=diff.removed,
    )


def name_list(names, suffix=""):
    if not names:
        return "none"
    return ", ".join(f"<code>{html.escape(name)}{suffix}</code>" for name in names)


def diff_summary(diff, id_prefix, h):
    new = what_is_new(diff)
    rows = [
        ("Tools added", name_list(new.tools_added), len(new.tools_added)),
        ("Tools removed", name_list(new.tools_removed), len(new.tools_removed)),
        ("Functions added", name_list(new.functions_added, "()"), len(new.functions_added)),
        ("Functions changed", name_list(new.functions_changed, "()"),
         len(new.functions_changed)),
        ("Functions removed", name_list(new.functions_removed, "()"),
         len(new.functions_removed)),
    ]
    items = "".join(
        f'<li><strong>{label}</strong>{f" ({count})" if count else ""}: {names}</li>'
        for label, names, count in rows if count or label != "Tools removed"
    )
    return f"""<section class="whats-new" aria-labelledby="{id_prefix}-new">
<{h} id="{id_prefix}-new">What is new in {html.escape(diff.new.label)}, against \
{html.escape(diff.old.label)}</{h}>
<p class="stats"><span class="plus">+{diff.added}</span> <span class="minus">−{diff.removed}</span>
  lines: <code>{html.escape(diff.old.name)}/code.py</code> →
  <code>{html.escape(diff.new.name)}/code.py</code></p>
<ul>{items}</ul>
<p class="note">Computed from the two files: tools are the dicts with an
<code>input_schema</code>, functions are compared by their source.</p>
</section>"""


# ======================================================================
# THE LESSON (README.md)
# ======================================================================

def slug(text):
    """A heading's anchor, as GitHub makes it: "How to run it?" -> "how-to-run-it"."""
    text = re.sub(r"<[^>]+>", "", html.unescape(text)).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


class LessonRenderer(mistune.HTMLRenderer):
    """HTML for a chapter's README, fitted into the chapter page.

    - headings keep their level, but none is above <h2> (the page's <h1> is the
      chapter), and get ids "lesson-<slug>", so a README's own #links keep working;
    - fenced code is highlighted by pygments;
    - a link to another chapter, its code or its scenario goes to that page of
      the site; a link off the site, or to a file the site does not have, becomes
      text that shows where it points (the site links to no other host);
    - raw HTML is shown as text.
    """

    def __init__(self, chapter, chapter_names, known_ids):
        super().__init__(escape=True)
        self.chapter = chapter
        self.chapter_names = chapter_names
        self.known_ids = known_ids  # ids of the headings (from a first pass), for #links
        self.ids = []
        self.images = []  # (source file, name in the site) to copy

    def heading(self, text, level, **attrs):
        anchor = "lesson-" + (slug(text) or "section")
        while anchor in self.ids:
            anchor += "-1"
        self.ids.append(anchor)
        level = min(max(level, 2), 6)
        return f'<h{level} id="{anchor}">{text}</h{level}>\n'

    def block_code(self, code, info=None):
        language = info.split()[0] if info and info.strip() else ""
        return highlight_block(code, language)

    def link(self, text, url, title=None):
        target = self.site_target(url)
        if target is None:  # text, and where it points
            if strip_tags(text) == url:
                return f"<code>{text}</code>"
            return f'{text} <span class="where">({html.escape(url)})</span>'
        title_attribute = f' title="{html.escape(title)}"' if title else ""
        return f'<a href="{html.escape(target)}"{title_attribute}>{text}</a>'

    def image(self, text, url, title=None):
        source = self.local_file(url)
        if source is None or not source.is_file():
            return f'<span class="where">[image: {html.escape(text)} ({html.escape(url)})]</span>'
        name = f"{self.chapter.name}-{source.name}"
        self.images.append((source, name))
        return f'<img src="images/{html.escape(name)}" alt="{html.escape(text)}">'

    def local_file(self, url):
        """The repository file a relative url points at, or None."""
        if re.match(r"^[a-z][a-z0-9+.-]*:", url, re.I) or url.startswith("//"):
            return None
        path = url.split("#")[0].split("?")[0]
        return (self.chapter.folder / path).resolve() if path else None

    def site_target(self, url):
        """Where a README link goes in the site, or None when the site has no such page."""
        if url.startswith("#"):
            anchor = "lesson-" + slug(url[1:])
            return f"#{anchor}" if anchor in self.known_ids else None
        source = self.local_file(url)
        if source is None:
            return None
        root = self.chapter.folder.parent.resolve()
        if source == root / "README.md" or source == root:
            return "index.html"
        for name in self.chapter_names:
            folder = root / name
            if source in (folder, folder / "README.md"):
                return f"{name}.html"
            if source == folder / "code.py":
                return f"{name}.html#code"
            if source == folder / "scenario.json":
                return f"{name}.html#run"
            if source == folder / "notebook.ipynb" and source.is_file():
                return f"notebooks/{name}.ipynb"
        return None


def strip_tags(text):
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def render_lesson(chapter, chapter_names):
    """The README as HTML, and the images it uses. Two passes: the first finds the headings.

    A title line ("# s01_loop: the agent loop.") is left out: the page's <h1> says it, and so
    is a line that holds only an HTML comment, such as the markers of the generated "What
    changed" table (raw HTML would be shown as text).
    """
    markdown = chapter.lesson
    if markdown.startswith("# "):
        markdown = markdown.partition("\n")[2]
    markdown = "".join(line for line in markdown.splitlines(keepends=True)
                       if not re.fullmatch(r"\s*<!--.*-->\s*", line))
    plugins = ["table", "strikethrough"]
    first = LessonRenderer(chapter, chapter_names, known_ids=set())
    mistune.create_markdown(renderer=first, plugins=plugins)(markdown)
    renderer = LessonRenderer(chapter, chapter_names, known_ids=set(first.ids))
    body = mistune.create_markdown(renderer=renderer, plugins=plugins)(markdown)
    return body, renderer.images


def lesson_placeholder(chapter):
    docstring = html.escape(chapter.docstring) or "(code.py has no docstring yet)"
    return f"""<h2 id="lesson-not-written">The lesson is not written yet</h2>
<p>This chapter has no <code>README.md</code> yet. Until it does, here is what its
<code>code.py</code> says about itself:</p>
<pre class="docstring">{docstring}</pre>"""


# ======================================================================
# THE CODE TAB
# ======================================================================

def code_view(chapter):
    """code.py with line numbers; the lines that are new in this chapter marked "+"."""
    new = Diff(chapter.previous, chapter).added_line_numbers if chapter.previous else set()
    lines = highlight_lines(chapter.code)
    width = len(str(len(lines)))
    column = Column()
    for number, line_html in enumerate(lines, 1):
        if number in new:
            column.add("added", f"{number:>{width}} +", line_html)
        else:
            column.add("context", f"{number:>{width}}  ", line_html)
    if chapter.previous:
        note = (
            f'<p>The <span class="plus">{len(new)} lines</span> marked <strong>+</strong> are new '
            f'in this chapter: <code>{html.escape(chapter.previous.name)}/code.py</code> does '
            f'not have them.</p>'
        )
    else:
        note = f"<p>The first chapter: all {len(lines)} lines are new.</p>"
    return note + '<div class="code-view">' + column.html(f"{chapter.name}/code.py") + "</div>"


# ======================================================================
# THE RUN TAB
# ======================================================================

def request_sizes(call):
    """(fixed, history) in characters of JSON: system + tools, and messages."""
    request = call["request"]
    fixed = len(json.dumps(request.get("system", ""))) + len(json.dumps(request.get("tools", [])))
    return fixed, len(json.dumps(request.get("messages", [])))


def size_label(index, fixed, history):
    return (f"Step {index + 1}: {fixed + history:,} characters "
            f"({fixed:,} fixed + {history:,} history)")


def mini_chart(calls):
    """The chart beside the step buttons: one bar per model call, a button to that step."""
    sizes = [request_sizes(call) for call in calls]
    top = max(fixed + history for fixed, history in sizes)
    bars = []
    for index, (fixed, history) in enumerate(sizes):
        share = round(100 * (fixed + history) / top)
        fixed_share = round(100 * fixed / (fixed + history)) if fixed + history else 0
        bars.append(
            f'<li><button type="button" class="bar" id="step-{index + 1}" data-step="{index}" '
            f'aria-label="{size_label(index, fixed, history)}" '
            f'style="--size: {share}%; --part: {fixed_share}%"><span class="fill"></span>'
            f'</button></li>'
        )
    return f"""<div class="mini-chart">
  <p class="mini-label"><span id="mini-label">Characters sent per call
    (<span class="key fixed"></span> fixed, <span class="key history"></span> history)</span>
    <span class="mini-value" id="mini-value"></span></p>
  <ol class="bars" aria-labelledby="mini-label">{''.join(bars)}</ol>
</div>"""


def size_chart(calls):
    """An inline SVG of stacked bars, one per model call: the fixed part and the history.
    Each bar links to its step in the player."""
    sizes = [request_sizes(call) for call in calls]
    top = max(fixed + history for fixed, history in sizes)
    scale = nice_ceiling(top)
    bar, gap, left, height, bottom = 34, 14, 56, 160, 26
    width = left + len(sizes) * (bar + gap) + gap
    parts = []
    for tick in (0, scale / 2, scale):  # grid lines and their labels
        y = height - tick / scale * (height - 10)
        parts.append(
            f'<line class="grid" x1="{left}" x2="{width}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="axis" x="{left - 6}" y="{y + 4:.1f}" '
            f'text-anchor="end">{short_number(tick)}</text>'
        )
    for index, (fixed, history) in enumerate(sizes):
        x = left + gap + index * (bar + gap)
        fixed_height = fixed / scale * (height - 10)
        history_height = history / scale * (height - 10)
        parts.append(
            f'<a class="bar" href="#step-{index + 1}" data-step="{index}" '
            f'aria-label="{size_label(index, fixed, history)}">'
            f'<rect class="fixed" x="{x}" y="{height - fixed_height:.1f}" width="{bar}" '
            f'height="{fixed_height:.1f}"/>'
            f'<rect class="history" x="{x}" y="{height - fixed_height - history_height:.1f}" '
            f'width="{bar}" height="{history_height:.1f}"/>'
            f'<text class="axis" x="{x + bar / 2}" y="{height + 16}" '
            f'text-anchor="middle">{index + 1}</text></a>'
        )
    rows = "".join(f"<tr><td>{n}</td><td>{f:,}</td><td>{h:,}</td><td>{f + h:,}</td></tr>"
                   for n, (f, h) in enumerate(sizes, 1))
    head = "<th>call</th><th>fixed</th><th>history</th><th>total (characters)</th>"
    return f"""<figure class="chart">
<figcaption>Request size per model call, in characters of JSON (not tokens):
  <span class="key fixed"></span> fixed part (system prompt + tools) and
  <span class="key history"></span> history (messages). The request grows from
  {short_number(sum(sizes[0]))} to {short_number(sum(sizes[-1]))} characters over
  {len(sizes)} call{'s' if len(sizes) != 1 else ''}; a bar opens its step.</figcaption>
<svg viewBox="0 0 {width} {height + bottom}" width="{width}" height="{height + bottom}"
  aria-label="Stacked bars, one per model call">
{''.join(parts)}
</svg>
<details><summary>The numbers</summary>
<table class="numbers"><thead><tr>{head}</tr></thead>
<tbody>{rows}</tbody></table></details>
</figure>"""


def nice_ceiling(value):
    """The smallest of 1, 2, 2.5, 5 times a power of ten that is at least value."""
    power = 10 ** max(len(str(int(value))) - 1, 0)
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= value:
            return step * power
    return 10 * power


def short_number(value):
    return f"{value / 1000:g}k" if value >= 1000 else f"{value:g}"


def run_steps(run):
    """For the player: a caption and the user's answers for each step."""
    events = terminal_events(run.calls, run.stdout, run.answers)
    captions = step_captions(run.calls, events)
    steps = []
    for call, caption in zip(run.calls, captions, strict=True):
        here = {block["id"]: events[block["id"]] for block in tool_uses(call["response"])
                if block["id"] in events}
        steps.append({"caption": caption, "events": here})
    return steps


def run_data_json(chapter):
    """The trace and the scenario as JSON for the player, safe inside a <script> element."""
    run = chapter.run
    data = {
        "chapter": chapter.name,
        "prompt": run.prompt,
        "answers": run.answers,
        "calls": run.calls,
        "steps": run_steps(run),
    }
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


def run_view(chapter):
    """The Run tab: the command, the player (site.js fills it from the embedded trace) with
    its caption and chart, the full chart, the terminal."""
    run = chapter.run
    calls = len(run.calls)
    stderr = (
        f'<details><summary>What it wrote to stderr</summary><pre '
        f'class="terminal">{html.escape(run.stderr)}</pre></details>'
        if run.stderr.strip()
        else ""
    )
    answers = (f" The <code>printf</code> gives the answers to its questions, one a line: "
               f"{', '.join(f'<code>{html.escape(a)}</code>' for a in run.answers)}."
               if run.answers else "")
    replay = f"{PYTHON} {chapter.name}/code.py --script {chapter.name}.jsonl {quote(run.prompt)}"
    if run.answers:
        replay = f"printf {quote(''.join(a + chr(10) for a in run.answers))} | {replay}"
    return f"""
<p>Recorded when the site was built, by this command, from the repository root
({calls} model call{'s' if calls != 1 else ''}).{answers}</p>
<pre class="terminal command"><code>$ {html.escape(run.command)}</code></pre>
<p class="note">Shown as recorded, but for the machine that built the site: its temporary
folder reads <code>{SHOWN_TMPDIR}</code>, a random part of a name <code>xxxx</code>, a session id
<code>{SHOWN_SESSION_ID}</code>, and the time a test run took <code>{SHOWN_SECONDS}s</code>.
<a href="traces/{chapter.name}.jsonl" download>Download the trace</a> and replay it:
<code>{html.escape(replay)}</code></p>
<h3 id="run-calls">The model calls, one by one</h3>
<noscript><p>The step player needs JavaScript. The chart, the numbers and the terminal
below show the whole run.</p></noscript>
<div class="player" id="player" hidden>
  <div class="player-bar">
    <div class="player-controls">
      <button type="button" id="step-previous" aria-keyshortcuts="ArrowLeft">← Previous</button>
      <output id="step-counter" aria-live="polite">Step 1 of {calls}</output>
      <button type="button" id="step-next" aria-keyshortcuts="ArrowRight">Next →</button>
      <span class="hint">or the ← and → keys</span>
    </div>
    {mini_chart(run.calls)}
    <p class="caption" id="step-caption" aria-live="polite"></p>
  </div>
  <div id="step-view"></div>
</div>
<script type="application/json" id="run-data">{run_data_json(chapter)}</script>
{plan_templates(run)}
<h3 id="run-size">How the request grows</h3>
{size_chart(run.calls)}
<h3 id="run-terminal">The terminal</h3>
<pre class="terminal"><span class="prompt">$ {html.escape(run.command)}</span>
{html.escape(run.stdout)}</pre>
{stderr}"""


# ======================================================================
# PAGES
# ======================================================================

def page(title, body, chapters, current=""):
    """A whole HTML page: head, the course navigation, the main part, the footer."""
    links = []
    for chapter in chapters:
        here = ' aria-current="page"' if chapter.name == current else ""
        links.append(
            f'<li><a href="{chapter.page}"{here} '
            f'title="{html.escape(chapter.title)}">{chapter.label}</a></li>'
        )
    compare_here = ' aria-current="page"' if current == "compare" else ""
    home_here = ' aria-current="page"' if current == "home" else ""
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<link rel="icon" href="assets/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="assets/site.css">
<link rel="stylesheet" href="assets/pygments.css">
<script>document.documentElement.classList.add("js")</script>
<script src="assets/site.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to the content</a>
<header class="site">
<nav aria-label="Course">
  <a class="home" href="index.html"{home_here}>{html.escape(COURSE_TITLE)}</a>
  <ul>{''.join(links)}
    <li><a href="compare.html"{compare_here}>Compare</a></li></ul>
</nav>
</header>
<main id="main">
{body}
</main>
<footer><p>Built from the course repository by <code>web/build.py</code>.
Everything on this site is local: it works offline.</p></footer>
</body>
</html>
"""


def how_to_use(chapters):
    """The four ways into a chapter, with commands taken from the chapters themselves."""
    first, second = chapters[0], chapters[1] if len(chapters) > 1 else None
    run = first.run_command or f"{PYTHON} {first.name}/code.py --offline"
    diff = (f"<li><strong>Diff it</strong> against the chapter before: the <em>Diff</em> tab, "
            f"<a href=\"compare.html\">Compare</a> for any two chapters, or "
            f"<code>diff -u {first.name}/code.py {second.name}/code.py</code>. The diff is the "
            f"lesson: one new idea, and what it changed.</li>" if second else "")
    replay = f"{PYTHON} {first.name}/code.py --script {first.name}.jsonl"
    return f"""<h2 id="how-to-use">How to use this course</h2>
<ol class="how">
<li><strong>Run a chapter</strong>, offline, from the repository root:
<code>{html.escape(run)}</code>, and type the prompt its banner shows.</li>
<li><strong>Read the lesson</strong>: the <em>Lesson</em> tab, then the <em>Code</em> tab, where
the lines new in the chapter are marked.</li>
{diff}
<li><strong>Replay a run</strong>: the <em>Run</em> tab steps through a run recorded when this
site was built, call by call, with what the user answered. Download its trace and play it
again: <code>{html.escape(replay)}</code>.</li>
</ol>"""


def home_page(chapters):
    cards = []
    for chapter in chapters:
        if chapter.previous:
            diff = Diff(chapter.previous, chapter)
            stats = (
                f'<span class="plus">+{diff.added}</span> <span '
                f'class="minus">−{diff.removed}</span> '
                f'lines against {chapter.previous.label}'
            )
        else:
            lines = len(chapter.code.splitlines())
            stats = f'<span class="plus">+{lines}</span> lines: the first chapter'
        topic = html.escape(chapter.name.split("_", 1)[1].replace("_", " "))
        diagram = (
            f'<figure class="diagram"><pre tabindex="0" aria-label="The diagram of '
            f'{chapter.name}, as its code.py draws it">{html.escape(chapter.diagram)}</pre>'
            f'<figcaption>From the docstring of <code>{chapter.name}/code.py</code></figcaption>'
            f'</figure>' if chapter.diagram else ""
        )
        cards.append(f"""<li class="card">
  <h3><a href="{chapter.page}"><span class="label">{chapter.label}</span> {topic}</a></h3>
  <p>{html.escape(capitalise(chapter.summary))}</p>
  <p class="stats">{stats}</p>
  <p class="calls">{len(chapter.run.calls)} model calls in the recorded run</p>
  {diagram}
</li>""")
    body = f"""<h1>{html.escape(COURSE_TITLE)}</h1>
<p class="intro">A Claude-Code-style coding agent, built in
{len(chapters)} chapter{'s' if len(chapters) != 1 else ''}.
Each chapter is the whole program so far plus one idea: read the lesson, the code,
the diff against the chapter before, and step through a recorded run.
To put any two chapters side by side, use <a href="compare.html">Compare</a>.</p>
{how_to_use(chapters)}
<h2 id="chapters">The chapters</h2>
<ol class="cards">
{''.join(cards)}
</ol>"""
    return page(COURSE_TITLE, body, chapters, current="home")


def capitalise(text):
    return text[:1].upper() + text[1:]


def chapter_parts(chapter, names):
    """What a chapter page shows that does not need its recorded run: lesson, code, diff."""
    if chapter.lesson is not None:
        lesson, images = render_lesson(chapter, names)
    else:
        lesson, images = lesson_placeholder(chapter), []
    if chapter.previous:
        diff = f"<h2>Diff against {html.escape(chapter.previous.name)}</h2>" + diff_views(
            Diff(chapter.previous, chapter), "diff"
        )
    else:
        diff = (
            "<h2>Diff</h2>"
            "<p>This is the first chapter: there is no chapter before it to compare with.</p>"
        )
    return {"lesson": lesson, "images": images, "code": code_view(chapter), "diff": diff}


def chapter_page(chapter, chapters, parts):
    """The page of one chapter: four panels (site.js shows one at a time) and the pager."""
    index = chapters.index(chapter)
    pager = []
    if index > 0:
        pager.append(
            f'<a rel="prev" href="{chapters[index - 1].page}">← '
            f'{html.escape(chapters[index - 1].title)}</a>'
        )
    if index + 1 < len(chapters):
        pager.append(
            f'<a rel="next" '
            f'href="{chapters[index + 1].page}">{html.escape(chapters[index + 1].title)} →</a>'
        )
    tabs = [("lesson", "Lesson"), ("code", "Code"), ("diff", "Diff"), ("run", "Run")]
    tab_links = "".join(
        f'<li><a id="tab-{key}" href="#{key}">{name}</a></li>' for key, name in tabs
    )
    notebook = (f'<p class="files">The chapter as a walk-through to run in Jupyter: '
                f'<a href="notebooks/{chapter.name}.ipynb" download>{chapter.name}.ipynb</a></p>'
                if chapter.notebook.is_file() else "")
    body = f"""<h1>{html.escape(chapter.title)}</h1>
{notebook}
<nav class="tabs" aria-label="Views of this chapter"><ul>{tab_links}</ul></nav>
<section class="panel lesson" id="lesson" aria-labelledby="tab-lesson">
{parts["lesson"]}
</section>
<section class="panel" id="code" aria-labelledby="tab-code">
<h2><code>{html.escape(chapter.name)}/code.py</code></h2>
{parts["code"]}
</section>
<section class="panel" id="diff" aria-labelledby="tab-diff">
{parts["diff"]}
</section>
<section class="panel" id="run" aria-labelledby="tab-run">
<h2>Run: “{html.escape(chapter.run.prompt)}”</h2>
{run_view(chapter)}
</section>
<nav class="pager" aria-label="Previous and next chapter">{''.join(pager)}</nav>"""
    return page(f"{chapter.title} · {COURSE_TITLE}", body, chapters, current=chapter.name)


def compare_name(old, new):
    return f"compare-{old.name}-vs-{new.name}.html"


def compare_picker(chapters, old=None, new=None):
    """Two lists of chapters and a button; site.js opens the page of the pair."""
    old = old or (chapters[-2] if len(chapters) > 1 else chapters[0])
    new = new or chapters[-1]

    def options(selected):
        return "".join(
            f'<option value="{c.name}"{" selected" if c is selected else ""}>'
            f"{html.escape(c.title)}</option>"
            for c in chapters
        )

    return f"""<form class="picker" id="compare-picker">
  <label>From <select name="old" id="compare-old">{options(old)}</select></label>
  <label>to <select name="new" id="compare-new">{options(new)}</select></label>
  <button type="submit">Compare</button>
  <p class="picker-message" id="compare-message" role="status"></p>
</form>"""


def compare_index(chapters):
    pairs = "".join(f'<li><a href="{compare_name(a, b)}">{a.label} → {b.label}</a></li>'
                    for a, b in itertools.combinations(chapters, 2))
    body = f"""<h1>Compare two chapters</h1>
<p>Pick two chapters to see how <code>code.py</code> changed from one to the other.</p>
{compare_picker(chapters)}
<h2>Every pair</h2>
<ul class="pairs">{pairs or '<li>There is only one chapter so far.</li>'}</ul>"""
    return page(f"Compare · {COURSE_TITLE}", body, chapters, current="compare")


def compare_page(old, new, chapters):
    body = f"""<h1>{html.escape(old.label)} → {html.escape(new.label)}</h1>
<p>From <a href="{old.page}">{html.escape(old.title)}</a>
to <a href="{new.page}">{html.escape(new.title)}</a>.</p>
{compare_picker(chapters, old, new)}
{diff_views(Diff(old, new), "compare", heading_level=2)}"""
    return page(
        f"Compare {old.label} and {new.label} · {COURSE_TITLE}", body, chapters, current="compare"
    )


# ======================================================================
# THE BUILD
# ======================================================================

def prepare_out_dir(out_dir):
    """Empty the output folder, but only if it is empty or an earlier build of the site."""
    if out_dir.exists() and any(out_dir.iterdir()):
        if not (out_dir / MARKER).exists():
            raise BuildError(
                f"{out_dir} is not empty and is not a build of the site: not overwriting it"
            )
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / MARKER).write_text("Built by web/build.py; emptied by the next build.\n")


def build(out_dir: Path, chapters_root: Path = ROOT, launch=run_process, temp_root=None) -> list:
    """Build the site into out_dir; return the names of the chapters in it.

    Raises BuildError (naming the chapter) if a chapter's run cannot be recorded.
    Nothing is written before every run is recorded, so a failed build leaves
    the last site as it was. `launch` starts a recording (run_process, or the tests'
    own), in a folder made in temp_root; the pages that need no recording are made while
    the runs go on.
    """
    out_dir = Path(out_dir).resolve()
    chapters = find_chapters(Path(chapters_root).resolve())
    if not chapters:
        raise BuildError(f"no chapters (folders sNN_* with a code.py) in {chapters_root}")
    futures = record_all(chapters, launch, temp_root)
    names = [chapter.name for chapter in chapters]
    try:
        pages = {"compare.html": compare_index(chapters)}
        for old, new in itertools.combinations(chapters, 2):
            pages[compare_name(old, new)] = compare_page(old, new, chapters)
        parts = {chapter.name: chapter_parts(chapter, names) for chapter in chapters}
    finally:
        finish_recording(chapters, futures)
    pages["index.html"] = home_page(chapters)
    for chapter in chapters:
        pages[chapter.page] = chapter_page(chapter, chapters, parts[chapter.name])

    prepare_out_dir(out_dir)
    shutil.copytree(ASSETS, out_dir / "assets")
    (out_dir / "assets" / "pygments.css").write_text(pygments_css(), encoding="utf-8")
    (out_dir / "traces").mkdir()
    (out_dir / "images").mkdir()
    (out_dir / "notebooks").mkdir()
    for name, text in sorted(pages.items()):
        write(out_dir / name, text)
    for chapter in chapters:
        for source, name in parts[chapter.name]["images"]:
            shutil.copyfile(source, out_dir / "images" / name)
        write(out_dir / "traces" / f"{chapter.name}.jsonl", chapter.run.trace)
        if chapter.notebook.is_file():
            shutil.copyfile(chapter.notebook, out_dir / "notebooks" / f"{chapter.name}.ipynb")
    return names


def write(path, text):
    path.write_text(text, encoding="utf-8")


# ======================================================================
# SERVING AND THE COMMAND LINE
# ======================================================================

def serve(directory, port):
    """Serve the built site on 127.0.0.1 until Ctrl-C."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        print(
            f"Serving {directory} at http://127.0.0.1:{server.server_address[1]}/  (Ctrl-C to "
            f"stop)",
            flush=True,
        )
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print()


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python web/build.py", description="Build the course site."
    )
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="where the site goes (default: web/dist)"
    )
    parser.add_argument(
        "--chapters",
        type=Path,
        default=ROOT,
        help="the folder that holds the chapters (default: the repository)",
    )
    parser.add_argument(
        "--serve", action="store_true", help="after building, serve the site on 127.0.0.1"
    )
    parser.add_argument(
        "--port", type=int, default=0, help="the port for --serve (default: a free one)"
    )
    args = parser.parse_args(argv)
    try:
        names = build(args.out, args.chapters)
    except BuildError as error:
        print(f"build.py: {error}", file=sys.stderr)
        return 1
    print(f"Built {len(names)} chapters ({', '.join(names)}) into {args.out.resolve()}")
    if args.serve:
        serve(args.out.resolve(), args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
