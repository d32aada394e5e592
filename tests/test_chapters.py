"""Every chapter, as a learner runs it, and the contract between chapters (CONTRIBUTING.md).

Generic over support.PRESENT: a chapter is checked here as soon as its code.py exists.

  - the scenario, one shot (with a key it must not show) and through the REPL with piped
    stdin, offline
  - --trace writes one JSON line per model call; --script replays such a trace
  - a missing or broken --script is one line on stderr and exit code 2
  - importing a chapter writes nothing, reads no key, opens no connection
  - the section contract: carried-over sections are byte-identical to the
    previous chapter's, and banners say what is new or changed; every carried
    definition too, wherever it lives (course/chapters.py: CHANGED_DEFINITIONS)
  - a chapter imports only the standard library, anthropic and dotenv

There are five runs per chapter, made by the warm runner of course/warm.py
(one `import anthropic`, a fresh forked process per run). All runs start
together in one module-scoped fixture and the tests share their results.
"""

import ast
import difflib
import hashlib
import json
import os
import re
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from course import CHANGED_DEFINITIONS, CHANGES, definitions, read_scenario
from course import section_map as sections
from course import sections as section_list
from course.chapters import parsed
from support import CHAPTERS, PRESENT, ROOT, clean_env, load_chapter, read_trace, shared_runner

# ======================================================================
# What a run should print
# ======================================================================

def scenario(name):
    return read_scenario(ROOT / name)


# Turns at the end of a scenario that its run does not reach: they answer a later prompt.
PRACTICE_TURNS = {"s01_loop": 2}  # `wait`: a slow command, to practise Ctrl-C on


def final_text(name):
    """The text of the script's last turn (before any practice turns): what the run must end
    by printing."""
    last = scenario(name)["turns"][-1 - PRACTICE_TURNS.get(name, 0)]
    return "\n".join(block["text"] for block in last["content"] if block["type"] == "text")


def label(name):
    return name.split("_")[0]


def lines(*items):
    return "".join(f"{item}\n" for item in items)


def call_lines(stdout):
    """The lines where a run shows a tool call ("  > bash: ls"; a subagent's, from s07, four
    spaces further in, under its agent call)."""
    return [line for line in stdout.splitlines() if re.match(r"(?:    )*  > ", line)]


def lanes(calls):
    """The calls of a trace, one list per agent: the main agent's (no "agent" key), then each
    subagent's run (s07: marked "agent"; a run starts with a history of one message)."""
    main, runs = [], []
    for call in calls:
        if "agent" not in call:
            main.append(call)
        elif len(call["request"]["messages"]) == 1:
            runs.append([call])
        else:
            runs[-1].append(call)
    return [main, *runs]


def snapshot(name):
    """Every file of a chapter folder with its hash (Python's caches aside: git ignores them)."""
    folder = ROOT / name
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


# The API key in the environment of the one-shot run: it must show nowhere.
KEY = "sk-ant-test-SECRET123"

# Run by the runner in a fresh folder: import one chapter as a module and report
# what the import did (tests/import_check.py says how).
IMPORT_CHECK = ROOT / "tests" / "import_check.py"


# ======================================================================
# All the runs, started at once
# ======================================================================


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root_before = sorted(os.listdir(ROOT))
    before = {name: snapshot(name) for name in PRESENT}
    runner = shared_runner()
    checker = IMPORT_CHECK
    chapters = {}
    for name in PRESENT:
        base = tmp_path_factory.mktemp(name)
        script = scenario(name)
        answers = script.get("answers", [])
        shutil.copytree(ROOT / name / "workspace", base / "oneshot")
        (base / "tmp").mkdir()
        (base / "import" / "home").mkdir(parents=True)
        (base / "import" / "cwd").mkdir()
        (base / "broken.json").write_text('{"turns": [\n')
        code = ROOT / name / "code.py"
        # A key in the environment, so that reading it (even by copying os.environ) shows.
        import_env = clean_env(
            HOME=str(base / "import" / "home"), ANTHROPIC_AUTH_TOKEN="sk-ant-in-env"
        )
        chapters[name] = SimpleNamespace(
            name=name,
            base=base,
            prompt=script["prompt"],
            answers=answers,
            jobs={
                # One shot, in a copy of the workspace, recording a trace; run from the
                # repository root, where a stray relative write would show. With an API key
                # in its environment (offline, nothing reads it): the key must reach no
                # screen and no trace (test_the_key_reaches_no_trace_and_no_screen).
                "oneshot": runner.start(
                    code,
                    "--offline",
                    "--workdir",
                    base / "oneshot",
                    "--trace",
                    base / "trace.jsonl",
                    script["prompt"],
                    stdin=lines(*answers),
                    env=clean_env(ANTHROPIC_API_KEY=KEY),
                ),
                # The REPL with its default offline workdir: a fresh copy under TMPDIR.
                "repl": runner.start(
                    code,
                    "--offline",
                    stdin=lines(script["prompt"], *answers, "q"),
                    env=clean_env(TMPDIR=str(base / "tmp")),
                ),
                "missing": runner.start(
                    code, "--offline", "--script", "missing.json", cwd=base
                ),
                "broken": runner.start(code, "--offline", "--script", "broken.json", cwd=base),
                "imported": runner.start(
                    checker, code, cwd=base / "import" / "cwd", env=import_env
                ),
            },
        )
    for chapter in chapters.values():  # the replays need the finished traces
        chapter.oneshot = runner.result(chapter.jobs["oneshot"])
        shutil.copytree(ROOT / chapter.name / "workspace", chapter.base / "replay")
        chapter.jobs["replay"] = runner.start(
            ROOT / chapter.name / "code.py",
            "--offline",
            "--script",
            chapter.base / "trace.jsonl",
            "--workdir",
            chapter.base / "replay",
            "--trace",
            chapter.base / "replay.jsonl",
            chapter.prompt,
            stdin=lines(*chapter.answers),
        )
    for chapter in chapters.values():
        for kind in ("repl", "missing", "broken", "imported", "replay"):
            setattr(chapter, kind, runner.result(chapter.jobs[kind]))
    for chapter in chapters.values():  # the chapter's files, and the names at the root
        chapter.before = (before[chapter.name], root_before)
        chapter.after = (snapshot(chapter.name), sorted(os.listdir(ROOT)))
    return chapters


@pytest.fixture(params=PRESENT)
def run(request, runs):
    return runs[request.param]


# ======================================================================
# The scenario, one shot and in the REPL
# ======================================================================


def test_scenario_one_shot_exits_0_and_ends_with_the_scripts_final_text(run):
    result = run.oneshot
    assert (result.returncode, result.stderr) == (0, "")
    out = result.stdout.splitlines()
    played = ROOT / run.name / "scenario.json"
    assert out[0] == f"{run.name} · offline (--offline): the scripted model plays {played}"
    # Offline, the tools' HOME is the workdir: a `~` in a script means the scratch copy.
    assert f"workdir: {(run.base / 'oneshot').resolve()}  (also HOME for the tools, offline)" in out
    # --workdir is the learner's own folder: no word about removing it.
    assert [line for line in out if line.startswith("(a fresh copy of workspace/")] == []
    assert out[-len(final_text(run.name).splitlines()) :] == final_text(run.name).splitlines()


def test_scenario_in_the_repl_runs_the_prompt_then_q_ends_it(run):
    result = run.repl
    assert (result.returncode, result.stderr) == (0, "")
    out = result.stdout.splitlines()
    final = final_text(run.name).splitlines()
    # Piped input is echoed after the prompt, so the transcript reads like a session.
    assert out[-1] == f"{label(run.name)} >> q"
    assert out[-1 - len(final) : -1] == final
    assert f"{label(run.name)} >> {run.prompt}" in out
    # Without --workdir, offline, the tools act in a fresh copy of workspace/ under TMPDIR.
    workdirs = [
        line.removeprefix("workdir: ").removesuffix("  (also HOME for the tools, offline)")
        for line in out
        if line.startswith("workdir: ")
    ]
    # In a folder of the learner's own under TMPDIR: on a shared /tmp, no one else's copies.
    own = (run.base / "tmp").resolve() / f"build-an-agent-{os.getuid()}"
    assert [Path(workdir).parent for workdir in workdirs] == [own]
    # The copy stays after the run, so that the learner can look at it; the banner says how
    # to remove such copies, and the REPL how to get help.
    at = out.index(f"workdir: {workdirs[0]}  (also HOME for the tools, offline)")
    assert out[at + 1 : at + 2] == [
        f"(a fresh copy of workspace/, kept after the run to look at; "
        f"rm -rf {own} removes them all)"
    ]
    assert Path(workdirs[0]).is_dir()
    assert "/help lists the commands; q leaves." in out
    assert call_lines(result.stdout) == call_lines(run.oneshot.stdout)


def test_scenario_runs_leave_the_repository_untouched(run):
    assert run.after == run.before


def test_the_key_reaches_no_trace_and_no_screen(run):
    """The one-shot run had ANTHROPIC_API_KEY in its environment: a whole scenario, played
    offline, shows it on no screen and writes it to no trace. (This was a run of its own in
    tests/test_robustness.py, the same scenario with the same key; the one-shot run here is that
    run, so the key costs no run of its own. The key reaching no tool: test_robustness.py.)"""
    trace = (run.base / "trace.jsonl").read_text()
    assert len(model_calls(run.base / "trace.jsonl")) >= 2  # the scenario really ran
    assert [where for where, seen in [("stdout", run.oneshot.stdout),
                                      ("stderr", run.oneshot.stderr), ("trace", trace)]
            if KEY in seen or "SECRET123" in seen] == []


# ======================================================================
# --trace and replaying a trace with --script
# ======================================================================


def model_calls(path):
    """The trace's lines of model calls: from s11 on, a server's messages have lines of their
    own, {"mcp": SERVER, ...} (pinned in tests/test_s11_mcp.py)."""
    return [line for line in read_trace(path) if "mcp" not in line]


def test_trace_has_one_line_per_model_call_with_exactly_the_request_and_response(run):
    calls = model_calls(run.base / "trace.jsonl")
    chapter = load_chapter(run.name)
    # each other line is one message to or from a server (or its exit), and only from s11 on
    servers = [line for line in read_trace(run.base / "trace.jsonl") if "mcp" in line]
    assert [sorted(line) for line in servers if sorted(line) not in (
        ["mcp", "send"], ["mcp", "receive"], ["exited", "mcp"])] == []
    assert bool(servers) == hasattr(chapter, "start_servers")

    summaries = summary_calls(chapter, calls)
    # a subagent's call (s07) is marked with its description, and a summary request (s08) with
    # {"compaction": "summary"}, before the request
    assert [list(call) for call in calls] == [
        ["agent"] * ("agent" in call) + ["compaction"] * (number in summaries)
        + ["request", "response"]
        for number, call in enumerate(calls)
    ]
    assert [sorted(call["request"]) for call in calls] == [
        ["max_tokens", "messages", "model", "system", "tools"]
    ] * len(calls)
    assert {(call["request"]["model"], call["request"]["max_tokens"]) for call in calls} == {
        ("scripted-model", chapter.MAX_TOKENS)
    }
    # From s09 on, the AGENTS.md files come first, in the first user message (their block is
    # pinned in tests/test_s09_memory.py); the scenario's answer leaves them as they were.
    workdir = (run.base / "oneshot").resolve()
    # From s10 on, the skills' catalog comes after the prompt (pinned in tests/test_s10_skills.py).
    memory, catalog = [], []
    session = chapter.Session(
        client=None, model="", workdir=workdir, tool_environment={"HOME": str(workdir)})
    if hasattr(chapter, "memory_blocks"):
        memory = chapter.memory_blocks(session)
    if hasattr(chapter, "catalog_blocks"):
        catalog = chapter.catalog_blocks(session)
    assert calls[0]["request"]["messages"] == [
        {"role": "user", "content": [*memory, {"type": "text", "text": run.prompt}, *catalog]}
    ]
    last = calls[-1]["response"]
    assert "\n".join(
        block["text"] for block in last["content"] if block["type"] == "text"
    ) == final_text(run.name)


def test_trace_requests_grow_by_the_answer_and_a_result_for_each_tool_use(run):
    # Each call sends the previous history, the previous answer as it came, and one
    # tool_result for each of its tool_use blocks, in order: a valid history. Each agent's own
    # (s07: a subagent's calls are not in its parent's history). From s08 on, an old result may
    # be cleared to its one line, and after a summary request the history starts again from
    # the summary.
    chapter = load_chapter(run.name)
    pairs = []
    for calls in lanes(model_calls(run.base / "trace.jsonl")):
        summaries = summary_calls(chapter, calls)
        loop = [call for number, call in enumerate(calls) if number not in summaries]
        # the pairs (by their second call's place in `loop`) that a summary request came between
        after_summary = {number - summaries.index(number) for number in summaries}
        for number, (sent, following) in enumerate(zip(loop, loop[1:], strict=False), 1):
            if number in after_summary:
                first = following["request"]["messages"][0]["content"][0]["text"]
                assert first.startswith(chapter.SUMMARY_INTRO)
            else:
                pairs.append((sent, following))
    for sent, following in pairs:
        history, reply = sent["request"]["messages"], sent["response"]
        new = following["request"]["messages"][len(history) :]
        assert following["request"]["messages"][: len(history)] == cleared_as_sent(
            chapter, history, following["request"]["messages"]
        )
        assert [turn["role"] for turn in new] == ["assistant", "user"]
        assert new[0]["content"] == reply["content"]
        assert [b["tool_use_id"] for b in new[1]["content"] if b["type"] == "tool_result"] == [
            b["id"] for b in reply["content"] if b["type"] == "tool_use"
        ]


def summary_calls(chapter, calls):
    """The numbers of the trace lines that are summary requests (s08 on), by their mark."""
    mark = getattr(chapter, "SUMMARY_MARK", {})
    return [number for number, call in enumerate(calls)
            if mark and all(call.get(key) == value for key, value in mark.items())]


def cleared_as_sent(chapter, history, sent):
    """`history` with each tool_result that `sent` has cleared (s08 on) as its one line says
    it: the tool, its subject, and the characters the result had."""
    if not hasattr(chapter, "cleared_line"):
        return history
    calls = {block["id"]: block for message in history if message["role"] == "assistant"
             for block in message["content"] if block["type"] == "tool_use"}
    expected = json.loads(json.dumps(history))
    for message, later in zip(expected, sent, strict=False):
        for block, later_block in zip(message["content"], later["content"], strict=False):
            was = block.get("content")
            if block.get("type") == "tool_result" and later_block.get("content") != was:
                block["content"] = chapter.cleared_line(calls[block["tool_use_id"]], len(was))
    return expected


def test_the_run_shows_every_tool_call_of_the_trace(run):
    chapter = load_chapter(run.name)
    calls = model_calls(run.base / "trace.jsonl")
    expected = []
    for call in calls:
        chapter.TOOLS = call["request"]["tools"]  # from s11 on, a server's tools are among them
        expected += [" " * (4 if "agent" in call else 0) + f"  > {chapter.call_summary(block)}"
                     for block in call["response"]["content"] if block["type"] == "tool_use"]
    assert call_lines(run.oneshot.stdout) == expected


def test_a_trace_replayed_with_script_runs_the_same_tool_calls_and_ends_the_same(run):
    assert (run.replay.returncode, run.replay.stderr) == (0, "")
    assert call_lines(run.replay.stdout) == call_lines(run.oneshot.stdout)
    assert (
        run.replay.stdout.splitlines()[-len(final_text(run.name).splitlines()) :]
        == final_text(run.name).splitlines()
    )
    recorded = model_calls(run.base / "trace.jsonl")
    replayed = model_calls(run.base / "replay.jsonl")
    assert [call["response"] for call in replayed] == [call["response"] for call in recorded]
    # the replay started the servers as the run did, and they heard the same
    assert [line for line in read_trace(run.base / "replay.jsonl") if "mcp" in line] == [
        line for line in read_trace(run.base / "trace.jsonl") if "mcp" in line]


# ======================================================================
# A --script that cannot be used
# ======================================================================


def test_a_missing_script_is_one_line_on_stderr_and_exit_2(run):
    assert (run.missing.returncode, run.missing.stdout, run.missing.stderr) == (
        2,
        "",
        f"{run.name}: missing.json: No such file or directory\n",
    )


def test_a_script_that_is_not_json_is_one_line_on_stderr_and_exit_2(run):
    assert (run.broken.returncode, run.broken.stdout, run.broken.stderr) == (
        2,
        "",
        f"{run.name}: broken.json is neither a script (JSON) nor a trace (JSON lines)\n",
    )


# ======================================================================
# Importing a chapter
# ======================================================================


def test_importing_a_chapter_writes_nothing_reads_no_key_and_opens_no_connection(run):
    assert (run.imported.returncode, run.imported.stderr) == (0, "")
    assert json.loads(run.imported.stdout) == {
        "writes": [],
        "network": [],
        "processes": [],
        "asked": [],
        "key_reads": [],
        "dotenv_loads": 0,
        "cwd": [],
        "home": [],
    }


STANDARD = set(sys.stdlib_module_names)


def top_imports(name):
    """The top-level names of every module a chapter's code.py imports, wherever it does."""
    tree = parsed((ROOT / name / "code.py").read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add("." * node.level + (node.module or "").split(".")[0])
    return imported


@pytest.mark.parametrize("name", PRESENT)
def test_a_chapter_imports_only_the_standard_library_anthropic_and_dotenv(name):
    assert sorted(top_imports(name) - STANDARD - {"anthropic", "dotenv"}) == []


def test_the_warm_runner_imports_before_the_fork_only_modules_every_chapter_imports():
    """A run forked from the warm runner starts with warm_server.PREIMPORTED imported: as a
    learner's `python code.py` would be by then only if every chapter imports them itself."""
    server = ast.parse((ROOT / "course" / "warm_server.py").read_text(encoding="utf-8"))
    preimported = next(
        ast.literal_eval(node.value) for node in server.body
        if isinstance(node, ast.Assign) and [t.id for t in node.targets] == ["PREIMPORTED"]
    )
    assert preimported == ("argparse", "dotenv")
    assert {name: sorted(set(preimported) - top_imports(name)) for name in PRESENT} == {
        name: [] for name in PRESENT
    }


# ======================================================================
# The section contract: the diff is the lesson
# ======================================================================
# CONTRIBUTING.md, "The chapter contract". Each code.py is in sections under
# banners. The idea comes first (the loop, the tools, then each chapter's own
# sections, in the order the chapters added them), then the harness banner,
# then the machinery. A section carried over is byte-identical to the previous
# chapter's, unless course/chapters.py's CHANGES says the chapter changes it, and so is each
# definition it carries, unless CHANGED_DEFINITIONS says so; a chapter's own sections say
# "(new in sNN)" in their banner.

HARNESS = "THE HARNESS: what keeps it safe and runnable (skip on a first read)"



PAIRS = [(old, new) for old, new in zip(CHAPTERS, CHAPTERS[1:], strict=False)
         if old in PRESENT and new in PRESENT]


@pytest.mark.parametrize("name", PRESENT)
def test_a_chapter_is_in_sections_under_banners_tagged_only_new_in_an_earlier_chapter(name):
    found = sections(name)
    assert {"THE AGENT LOOP", "THE TOOLS", HARNESS} <= set(found)
    assert sorted({kind for (kind, _), _ in found.values() if kind}) in ([], ["new"])
    assert (
        sorted({chapter for (_, chapter), _ in found.values() if chapter and chapter > label(name)})
        == []
    )


@pytest.mark.parametrize("name", PRESENT)
def test_the_idea_comes_before_the_harness_banner_and_the_new_sections_end_it(name):
    found = list(sections(name).items())
    idea = [section for section, _ in found[: [section for section, _ in found].index(HARNESS)]]
    below = [section for section, _ in found[len(idea) + 1 :]]
    own = [section for section, ((kind, chapter), _) in found if chapter == label(name)]
    assert idea[:4] == ["CONFIGURATION", "SYSTEM PROMPT", "THE AGENT LOOP", "THE TOOLS"]
    own_idea = [section for section in own if section in idea]
    assert idea[len(idea) - len(own_idea) :] == own_idea
    # The chapters' own machinery opens the harness, in the order the chapters added it.
    tagged = [section for section, ((_, chapter), _) in found[len(idea) + 1 :] if chapter]
    assert below[: len(tagged)] == tagged
    own_below = [section for section in own if section in below]
    assert tagged[len(tagged) - len(own_below) :] == own_below
    harness = "".join(text for section, (_, text) in found if section not in idea)
    assert [
        definition
        for definition in ("def agent_loop(", "def run_turn(", "\nTOOLS = ",
                           # the steps the loop takes, and what a tool gives back
                           "def build_request(", "def block_to_dict(", "def add_user_blocks(",
                           "def add_assistant_blocks(", "def finish_reply(", "class TurnStopped(",
                           "def tool_result(", "class ToolError(")
        if definition in harness
    ] == []


LIVE_ONLY = "LIVE ONLY: retries, usage, blocks of unknown types"
MACHINERY = ["RUNNING BASH SAFELY", "TOOL RESULTS AND INPUT CHECKS", "CALLING THE MODEL",
             LIVE_ONLY, "THE SESSION", "THE SCRIPTED MODEL", "THE COMMAND LINE"]


@pytest.mark.parametrize("name", PRESENT)
def test_the_machinery_keeps_its_order_and_what_only_the_live_api_needs_is_one_section(name):
    found = sections(name)
    live = found[LIVE_ONLY][1]

    assert [section for section in found if section in MACHINERY] == MACHINERY
    assert [
        definition
        for definition in ("def live_client(", "def sdk_knows(", "def show_usage(",
                           "class RetryLines(", "def spend_limit_reached(")
        if definition not in live
    ] == []


def lines_above_the_harness_banner(name):
    source = (ROOT / name / "code.py").read_text(encoding="utf-8")
    return source[: source.index("# " + HARNESS)].count("\n") - 1


@pytest.mark.parametrize("old, new", [(None, PRESENT[0]), *PAIRS])
def test_no_chapter_adds_more_than_300_lines_above_the_harness_banner(old, new):
    before = lines_above_the_harness_banner(old) if old else 0
    assert lines_above_the_harness_banner(new) - before <= 300


@pytest.mark.parametrize("name", PRESENT)
def test_a_chapters_docstring_is_at_most_25_lines(name):
    tree = parsed((ROOT / name / "code.py").read_text(encoding="utf-8"))
    # The closing quotes stand on a line of their own.
    assert len(ast.get_docstring(tree, clean=False).splitlines()) + 1 <= 25


def test_in_s01_the_loop_is_on_the_first_screens():
    source = (ROOT / "s01_loop" / "code.py").read_text(encoding="utf-8").splitlines()
    assert source.index("def agent_loop(session):") < 170


@pytest.mark.parametrize("name", PRESENT)
def test_no_code_line_is_over_100_characters(name):
    source = (ROOT / name / "code.py").read_text(encoding="utf-8").splitlines()
    assert [number for number, line in enumerate(source, 1) if len(line) > 100] == []


def describe_difference(old, new, section_name, old_text, new_text):
    return "".join(
        difflib.unified_diff(
            old_text.splitlines(True),
            new_text.splitlines(True),
            f"{old}: {section_name}",
            f"{new}: {section_name}",
        )
    )


@pytest.mark.parametrize("old, new", PAIRS)
def test_a_chapter_changes_exactly_the_sections_it_says_and_carries_the_rest_byte_identical(
    old, new
):
    before, after = sections(old), sections(new)
    carried = [name for name in after if name in before]
    differing = {name for name in carried if before[name][1] != after[name][1]}
    unexpected = sorted(differing - CHANGES[new])
    assert unexpected == [], "\n".join(
        describe_difference(old, new, name, before[name][1], after[name][1]) for name in unexpected
    )
    assert sorted(CHANGES[new] - differing) == []


# Definition by definition: a section CHANGES lets a chapter change may still hold helpers the
# chapter carries, and those stay byte-identical too (CHANGED_DEFINITIONS says which do not).

TABLE = "course/chapters.py"


def chapter_span(chapters):
    """['s03_permissions', ..., 's08_compact'] -> 's03..s08'; one chapter: 's03'."""
    first, last = label(chapters[0]), label(chapters[-1])
    return first if first == last else f"{first}..{last}"


def carried_definition_problems(sources, changed):
    """What breaks the definition contract, one line a problem that says what to do, for the
    chapters' code.py texts `sources` ({chapter: source}, in chapter order) and the table
    `changed` (CHANGED_DEFINITIONS)."""
    names = list(sources)
    found = {name: definitions(sources[name]) for name in names}
    problems = []

    def declare(key, new):
        return f'in {TABLE}, add "{key}" to CHANGED_DEFINITIONS["{new}"].'

    for index, (old, new) in enumerate(zip(names, names[1:], strict=False), 1):
        before, after = found[old], found[new]
        carried = {title for title, _, _ in section_list(sources[old])}
        declared = changed.get(new, set())
        for key, (title, text) in after.items():
            if key in before and text != before[key][1] and key not in declared:
                lacking = [new]  # the chapters on from here that carry the same text, or
                # (past a change of their own) still hold its lines and none the other has
                only_here = set(text.splitlines()) - set(before[key][1].splitlines())
                only_before = set(before[key][1].splitlines()) - set(text.splitlines())
                for name in names[index + 1 :]:
                    later = found[name].get(key, (None, ""))[1]
                    lines = set(later.splitlines())
                    if later != text and (not only_here <= lines or only_before & lines):
                        break
                    lacking.append(name)
                fixed = [old]  # the chapters up to here that carry the other text
                for name in reversed(names[: index - 1]):
                    if found[name].get(key, (None, None))[1] != before[key][1]:
                        break
                    fixed.insert(0, name)
                problems.append(
                    f"{key} differs from {label(old)} in {chapter_span(lacking)}: a fix made in "
                    f"{chapter_span(fixed)} and not carried on? Carry it into "
                    f"{chapter_span(lacking)}, or declare the change: {declare(key, new)}")
            elif key not in before and title in carried and key not in declared:
                problems.append(
                    f"{key} is new in {label(new)}, in the section it carries, {title}: move it "
                    f"to a section new in {label(new)}, or declare it: {declare(key, new)}")
        for key in before:
            if key not in after and key not in declared:
                problems.append(
                    f"{key} is in {label(old)} but not in {label(new)}: put it back, or declare "
                    f"its removal: {declare(key, new)}")
        for key in sorted(declared):
            if key in before and key in after and before[key][1] == after[key][1]:
                why = f"{label(new)} carries it unchanged from {label(old)}"
            elif key not in before and key not in after:
                why = f"there is no {key} in {label(old)} or {label(new)}"
            elif key not in before and after[key][0] not in carried:
                why = f"it is in {after[key][0]}, a section new in {label(new)}"
            else:
                continue
            problems.append(
                f'CHANGED_DEFINITIONS["{new}"] in {TABLE} lists "{key}", but {why}: remove it.')
    problems += [f'CHANGED_DEFINITIONS in {TABLE} names "{name}", which is no chapter after the '
                 f"first: remove it." for name in changed if name not in names[1:]]
    return problems


def chapter_sources():
    return {name: (ROOT / name / "code.py").read_text(encoding="utf-8") for name in PRESENT}


def test_every_carried_definition_is_byte_identical_unless_the_chapter_declares_its_change():
    problems = carried_definition_problems(chapter_sources(), CHANGED_DEFINITIONS)
    assert problems == [], "\n".join(problems)


def test_a_fix_to_a_helper_made_in_some_chapters_only_names_the_helper_and_the_rest():
    sources = chapter_sources()
    old = "def preview(text, lines=6):"
    assert all(sources[name].count(old) == 1 for name in PRESENT)
    for name in PRESENT[:2]:  # fixed in s01 and s02, not carried on
        sources[name] = sources[name].replace(old, old + "\n    text = str(text)")
    # and a fix made in s01 alone to Session, which later chapters change (s03 on): those lack
    # it too, as long as they hold the line it changed and not the new one
    sources["s01_loop"] = sources["s01_loop"].replace("@dataclass\nclass Session:",
                                                      "@dataclass(eq=False)\nclass Session:")
    last = label(PRESENT[-1])
    assert carried_definition_problems(sources, CHANGED_DEFINITIONS) == [
        f"Session differs from s01 in s02..{last}: a fix made in s01 and not carried on? Carry "
        f"it into s02..{last}, or declare the change: in course/chapters.py, add \"Session\" to "
        'CHANGED_DEFINITIONS["s02_tools"].',
        f"preview() differs from s02 in s03..{last}: a fix made in s01..s02 and not carried on? "
        f"Carry it into s03..{last}, or declare the change: in course/chapters.py, add "
        '"preview()" to CHANGED_DEFINITIONS["s03_permissions"].',
    ]


def test_a_definition_added_to_or_removed_from_a_reopened_section_must_be_declared():
    sources = chapter_sources()
    old, new = PRESENT[-2:]
    session = "@dataclass\nclass Session:"
    helper = "def forget(session):\n    session.messages.clear()\n\n\n"
    for name in (old, new):  # added to THE SESSION, which the chapter carries
        assert sources[name].count(session) == 1
        sources[name] = sources[name].replace(session, helper + session)
    start = sources[new].index("def command_help(")  # and one removed from THE COMMAND LINE
    sources[new] = sources[new][:start] + sources[new][sources[new].index("\ndef ", start) + 1 :]
    changed = {**CHANGED_DEFINITIONS, new: {*CHANGED_DEFINITIONS[new], "forget()", "nothing()"}}
    assert carried_definition_problems(sources, changed) == [
        f"forget() is new in {label(old)}, in the section it carries, THE SESSION: move it to a "
        f'section new in {label(old)}, or declare it: in course/chapters.py, add "forget()" to '
        f'CHANGED_DEFINITIONS["{old}"].',
        f"command_help() is in {label(old)} but not in {label(new)}: put it back, or declare "
        f'its removal: in course/chapters.py, add "command_help()" to '
        f'CHANGED_DEFINITIONS["{new}"].',
        f'CHANGED_DEFINITIONS["{new}"] in course/chapters.py lists "forget()", but {label(new)} '
        f"carries it unchanged from {label(old)}: remove it.",
        f'CHANGED_DEFINITIONS["{new}"] in course/chapters.py lists "nothing()", but there is no '
        f"nothing() in {label(old)} or {label(new)}: remove it.",
    ]


@pytest.mark.parametrize("old, new", PAIRS)
def test_the_sections_tagged_new_in_a_chapter_are_exactly_the_ones_it_adds(old, new):
    before, after = sections(old), sections(new)
    tagged_here = [
        name
        for name, ((kind, chapter), _) in after.items()
        if (kind, chapter) == ("new", label(new))
    ]
    assert tagged_here == [name for name in after if name not in before]
    assert [name for name in before if name not in after] == []


@pytest.mark.parametrize("old, new", PAIRS)
def test_a_carried_section_keeps_the_banner_it_was_born_with_tag_included(old, new):
    before, after = sections(old), sections(new)
    banner = {name: text.split("\n", 3)[:3] for name, (_, text) in after.items()}
    assert {name: banner[name] for name in after if name in before} == {
        name: text.split("\n", 3)[:3] for name, (_, text) in before.items() if name in after
    }


@pytest.mark.parametrize("old, new", PAIRS)
def test_sections_keep_their_order_from_one_chapter_to_the_next(old, new):
    before, after = list(sections(old)), list(sections(new))
    assert [name for name in after if name in before] == [name for name in before if name in after]
