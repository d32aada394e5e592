"""The chapter notebooks: generated, committed clean, and they run offline from top to bottom.

A session fixture executes every notebook once, a few at a time, each on a real Jupyter kernel
forked warm (tests/warm_kernel.py: a cold start and `import anthropic` cost 2 CPU-seconds a
kernel), and the tests per chapter look at the results. The runs share one
asyncio event loop: nbclient's blocking execute() in threads would leave one event loop per
thread unclosed, which pytest (filterwarnings = error) turns into a ResourceWarning failure.
"""

import asyncio
import importlib.util
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from course import read_scenario
from support import PRESENT, ROOT, loopback_messages_api, message_json
from warm_kernel import WarmKernels

pytestmark = pytest.mark.slow

CELL_TIMEOUT = 60  # seconds one cell may take
AT_ONCE = 3  # notebooks executed at the same time
LIVE_CHAPTER = (
    "s01_loop"  # the notebook whose live cell is also run, against a fake API on loopback
)
FAKE_KEY = "sk-fake-notebook-key"

# What each notebook's "idea at work" cell (tagged "idea") must show.
IDEA_SHOWS = {
    "s01_loop": [r"ids answered: \['toolu_02', 'toolu_03'\]", r'"type": "tool_result"'],
    "s02_tools": [r"Refused: '\.\./CHANGELOG\.md' contains '\.\.'", r'"is_error": true'],
    "s03_permissions": [
        r"Denied: this command deletes the root or home folder",
        r'"is_error": true',
    ],
    "s04_hooks": [
        r"Blocked by a PreToolUse hook: Network access is off here",
        r'<hook event=\\"Stop\\">',
    ],
    "s05_todo_write": [
        re.escape("<reminder>Update your todos.</reminder>"),
        r"The reminder is block 1 of messages\[14\], a user turn of 2 blocks \(the last one\)",
    ],
    "s06_plan_mode": [
        re.escape('"content": "User has answered your questions: '
                  '\\"Should README.md show the new option too?\\"=\\"No\\".'),
        r"plan file: \S+/\.agent/plans/plan-\d{8}-\d{6}-[0-9a-f]{6}\.md",
        r"## Plan: a --shout option for greet\.py",
    ],
    "s07_subagents": [
        r"the subagent's first request:\n  system is subagent_system_prompt\(workdir\): True\n"
        r"  tools: bash, read_file, write_file, edit_file, glob\n",
        re.escape('[subagent \\"Find the greeting\'s definition\\": 3 model calls, 2 tool calls'),
        r"the grep's output in the subagent's requests: True\n"
        r"the grep's output in the agent's history: False",
    ],
    "s08_compact": [
        re.escape('"content": "[Cleared to save context: the result of read_file: tally.py, '
                  '682 characters. Call the tool again if you need it.]"'),
        r"the summary request's last message ends with the instruction: True",
        r"tool_results without their tool_use, in all requests: 0",
    ],
    "s09_memory": [
        r"<file path=\"/[^\"]*/\.agent/AGENTS\.md\">\n +- Keep the final answer short",
        r"<file path=\"/[^\"]*/workspace/AGENTS\.md\">\n +# tally: notes for agents",
        r"system prompt unchanged: True",
        r"every request starts with the same block: True",
    ],
    "s10_skills": [
        r"<skills>\n +The skills below are instructions for particular tasks",
        r"- review: Check a change to tally before it is handed over\.\n +</skills>",
        r"a body in the first request: False",
        r"the skill's result:\n +Record this change in CHANGELOG\.md: tally\.py takes",
    ],
    "s11_mcp": [
        r"tracker send    initialize\ntracker receive the answer to id 1\n"
        r"tracker send    notifications/initialized\ntracker send    tools/list\n",
        r"tracker send    tools/call\ntracker receive the answer to id 3\n-- a model call",
        re.escape("offered: ['mcp__tracker__list_issues', 'mcp__tracker__read_issue', "
                  "'mcp__tracker__close_issue']"),
    ],
}

# The chapter's questions, and the scripted answer printed after each, in order.
QUESTIONS = {
    "s03_permissions": ["[n] no: [scripted] y\n"],
    "s09_memory": ["[n] no: [scripted] n\n"],
    "s11_mcp": ["[n] no: [scripted] y\n"] * 3,  # the server, read_issue, close_issue
    "s06_plan_mode": [  # the model's question (ask_user_question), then the plan approval
        "      2. No: Change greet.py only; README.md stays as it is.\n"
        "    a number (1-2), your own answer, or empty to skip: [scripted] 2\n",
        "or type feedback to keep planning: [scripted] a\n",
    ],
}


def load_generator():
    import_nbformat()  # the generator's own `import nbformat` then finds it imported
    spec = importlib.util.spec_from_file_location(
        "notebooks_generator", ROOT / "web" / "notebooks.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def notebook_path(name):
    return ROOT / name / "notebook.ipynb"


def import_nbformat():
    """nbformat, imported here rather than at the top: every test process would pay for it just
    to collect. Its jsonschema imports rfc3987_syntax, if installed, for the "iri" format check,
    and that builds 38 parsers as it is imported (1.7 s); nbformat checks no format (its
    validator has no format checker), so it is imported without: rfc3987_syntax is kept out
    while jsonschema is imported, and importable again afterwards."""
    if "nbformat" not in sys.modules and "rfc3987_syntax" not in sys.modules:
        sys.modules["rfc3987_syntax"] = None  # `import rfc3987_syntax` raises ImportError
        try:
            import nbformat  # noqa: F401
        finally:
            del sys.modules["rfc3987_syntax"]
    import nbformat

    return nbformat


def read_notebook(name):
    """The committed notebook."""
    return import_nbformat().read(notebook_path(name), as_version=4)


def output_text(cell):
    """Everything a code cell printed or showed, as one string."""
    parts = []
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            parts.append(output["text"])
        elif output["output_type"] == "error":
            parts.append("\n".join(output["traceback"]))
        else:
            parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def all_output(notebook):
    return "".join(output_text(cell) for cell in notebook.cells if cell.cell_type == "code")


def repository_state():
    """What an executed notebook could leave in the chapter folders.

    New files (untracked or ignored: a __pycache__, an .agent/ folder, a hello.txt) and any change
    inside a workspace/. Edits to tracked files elsewhere, and a chapter's README.md and
    notebook.ipynb, are the work of people and generators (perhaps going on while this test
    runs), so they are left out.
    """
    done = subprocess.run(
        ["git", "status", "--porcelain", "--ignored", "--untracked-files=all", "--", *PRESENT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return [line for line in done.stdout.splitlines()
            if (line.startswith(("??", "!!")) or "/workspace/" in line)
            and not re.fullmatch(r"..\s\"?s\d\d_\w+/(README\.md|notebook\.ipynb)\"?", line)]


def kernel_env(tmp, **extra):
    """The kernel's environment: no key, no .env, and temporary folders under pytest's tmp."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key
        not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "MODEL_ID")
    }
    env.update(PYTHON_DOTENV_DISABLED="1", TMPDIR=str(tmp), **extra)
    return env


@dataclass
class Run:
    notebook: object  # the executed notebook
    seconds: float = 0.0
    error: str = ""  # empty, or which cell failed and how


async def execute(name, env, at_once, kernel_manager_class):
    """Run one notebook as Jupyter would, in its own folder; a failure names the cell."""
    import_nbformat()
    from nbclient import NotebookClient  # slow to import, and only this needs it
    from nbclient.exceptions import CellControlSignal, CellExecutionError

    run = Run(read_notebook(name))
    current = {"index": None}

    def on_cell_start(cell, cell_index):
        current["index"] = cell_index

    client = NotebookClient(
        run.notebook,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        kernel_manager_class=kernel_manager_class,
        resources={"metadata": {"path": str(ROOT / name)}},
        on_cell_start=on_cell_start,
    )
    async with at_once:
        started = time.monotonic()
        try:
            await client.async_execute(env=env)
        except (CellExecutionError, CellControlSignal, TimeoutError, RuntimeError) as failure:
            index = current["index"]
            head = (
                run.notebook.cells[index].source.splitlines()[0]
                if index is not None
                else "(no cell yet)"
            )
            plain = re.sub(r"\x1b\[[0-9;]*m", "", str(failure))  # the traceback without its colours
            run.error = f"{name}/notebook.ipynb, cell {index} ({head!r}) failed:\n{plain}"
        run.seconds = time.monotonic() - started
    return run


def fake_live_reply(body, seen):
    return message_json(
        [{"type": "text", "text": "Hello from the fake live model."}], model=body["model"]
    )


@pytest.fixture(scope="session")
def executed(tmp_path_factory):
    """Every notebook executed offline, and one again with a key (the fake API); the repository
    state before and after."""
    async def execute_all(live_env, manager):
        at_once = asyncio.Semaphore(AT_ONCE)
        jobs = [
            execute(name, kernel_env(tmp_path_factory.mktemp(name)), at_once, manager)
            for name in PRESENT
        ]
        jobs.append(execute(LIVE_CHAPTER, live_env, at_once, manager))
        *runs, live = await asyncio.gather(*jobs)
        return dict(zip(PRESENT, runs, strict=True)), live

    before = repository_state()
    with (
        WarmKernels(kernel_env(tmp_path_factory.mktemp("kernels"))) as kernels,
        loopback_messages_api(fake_live_reply) as (base_url, seen),
    ):
        live_env = kernel_env(
            tmp_path_factory.mktemp("live"),
            ANTHROPIC_API_KEY=FAKE_KEY,
            MODEL_ID="test-model",
            ANTHROPIC_BASE_URL=base_url,
        )
        runs, live = asyncio.run(execute_all(live_env, kernels.manager_class()))
    return SimpleNamespace(
        runs=runs, live=live, api_requests=seen, before=before, after=repository_state(),
        launched=kernels.launched,
    )


def ran(executed, name):
    run = executed.runs[name]
    if run.error:
        pytest.skip("the notebook did not run (see test_notebook_runs_offline)")
    return run.notebook


# ---- the committed files -------------------------------------------------------

def test_every_chapter_has_a_notebook():
    assert [name for name in PRESENT if not notebook_path(name).exists()] == []


@pytest.mark.parametrize("name", PRESENT)
def test_notebook_is_valid_and_clean(name):
    nbformat = import_nbformat()
    notebook = read_notebook(name)
    nbformat.validate(notebook)
    assert notebook.nbformat == 4
    assert notebook.metadata["kernelspec"] == {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert [(cell.outputs, cell.execution_count) for cell in code] == [([], None)] * len(code)
    label = name.split("_")[0]
    assert [cell.id for cell in notebook.cells] == [
        f"{label}-{index:02d}" for index in range(len(notebook.cells))
    ]


@pytest.mark.parametrize("name", PRESENT)
def test_notebook_runs_the_chapters_own_code(name):
    source = "\n".join(
        cell.source for cell in read_notebook(name).cells
    )
    for used in (
        "chapter = load_chapter(HERE)",
        "chapter.make_session(",
        "chapter.ScriptedModel(script)",
        "chapter.run_turn(session, ",
    ):
        assert used in source
    for copied in (
        "def agent_loop",
        "def run_turn",
        "def run_tool",
        "class ScriptedModel",
        "def load_script",
    ):
        assert copied not in source


def test_regenerating_changes_nothing(tmp_path):
    generator = load_generator()
    generator.generate(dest=tmp_path)
    for name in PRESENT:
        assert (tmp_path / name / "notebook.ipynb").read_bytes() == notebook_path(
            name
        ).read_bytes(), name
    assert generator.stale() == []


def test_check_flag(capsys):
    assert load_generator().main(["--check"]) == 0
    assert capsys.readouterr().out == ""


# ---- the notebooks, executed ---------------------------------------------------------

@pytest.mark.parametrize("name", PRESENT)
def test_notebook_runs_offline(name, executed):
    if executed.runs[name].error:
        pytest.fail(executed.runs[name].error, pytrace=False)


@pytest.mark.parametrize("name", PRESENT)
def test_notebook_shows_the_idea_at_work(name, executed):
    idea = [cell for cell in ran(executed, name).cells if "idea" in cell.metadata.get("tags", [])]
    assert len(idea) == 1
    shown = output_text(idea[0])
    for pattern in IDEA_SHOWS[name]:
        assert re.search(pattern, shown), (
            f"{name}: the idea cell does not show {pattern!r}:\n{shown}"
        )


@pytest.mark.parametrize("name", PRESENT)
def test_questions_get_the_scripted_answers(name, executed):
    printed = all_output(ran(executed, name))
    if name in QUESTIONS:
        places = [printed.find(question) for question in QUESTIONS[name]]
        assert -1 not in places and places == sorted(places)
    else:
        assert "[scripted]" not in printed and "[no answer left" not in printed


@pytest.mark.parametrize("name", PRESENT)
def test_live_cell_stays_offline_without_a_key(name, executed):
    last = ran(executed, name).cells[-1]
    assert "chapter.has_key()" in last.source
    assert output_text(last).startswith("No ANTHROPIC_API_KEY is set, so this cell stops here")


def test_live_cell_with_a_key(executed):
    """With a key, the last cell talks to the API (here a fake one on loopback), and the key is
    never shown."""
    if executed.live.error:
        pytest.fail(executed.live.error, pytrace=False)
    prompt = read_scenario(ROOT / LIVE_CHAPTER)["prompt"]
    assert [
        (request["path"], request["body"]["model"], request["body"]["messages"])
        for request in executed.api_requests
    ] == [
        (
            "/v1/messages",
            "test-model",
            [{"role": "user", "content": [{"type": "text", "text": prompt}]}],
        )
    ]
    shown = output_text(executed.live.notebook.cells[-1])
    assert re.match(r"s01_loop · live: test-model at http://127\.0\.0\.1:\d+", shown)
    assert shown.endswith("Hello from the fake live model.\n")
    assert FAKE_KEY not in all_output(executed.live.notebook)


def test_notebooks_write_nothing_into_the_repository(executed):
    assert executed.after == executed.before


def test_every_kernel_started_warm(executed):
    """Each run's kernel was forked from the warm server (tests/warm_kernel.py), none started
    cold: a kernel environment that differs from the server's in more than warm_kernel's
    MAY_DIFFER would start cold, correct but 2 CPU-seconds slower, and fail this test."""
    assert executed.launched == {"warm": len(PRESENT) + 1, "cold": 0}
