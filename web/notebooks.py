"""Generate the chapter notebooks: sNN_*/notebook.ipynb, one guided walk-through per chapter.

    python web/notebooks.py            (re)write every chapter's notebook.ipynb
    python web/notebooks.py --check    write nothing; exit 1 if a notebook is missing or would
                                       change

Every notebook follows the same path through its chapter:

    load code.py as a module     the chapter's own code, never a copy; the chapter before, to
                                 compare
    what the model is told       SYSTEM and the tools, and what this chapter added to them
    the scenario                 scenario.json, and the scripted answers to the chapter's questions
    run it                       the chapter's own run_turn() in a scratch copy of workspace/,
                                 with --trace on: call_model() records every model call in a
                                 file of the scratch folder, and the notebook reads it back
    one model call at a time     what each call sent (the messages new since the call before) and
                                 what came back: the history grows before your eyes
    the idea at work             the exact block that shows this chapter's idea
    the piece on its own         the chapter's new function, called by hand
    exercises, and a live cell   the live cell runs only when ANTHROPIC_API_KEY is set

What differs from chapter to chapter is each chapter's own words, in sNN_*/notebook.md next to
its code.py (read by chapter_prose() below). The cells every notebook shares are made by the
small functions after it. Notebooks are written without
outputs, and a cell's id comes from its chapter and its position, so generating twice writes the
same bytes and a notebook's diff shows only what changed in its cells.
"""

import argparse
import sys
import textwrap
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent  # the repository: where the chapters live
NOTEBOOK = "notebook.ipynb"
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}


def text(source):
    """A cell's source from an indented triple-quoted string."""
    return textwrap.dedent(source).strip("\n")


# ======================================================================
# WHAT EACH CHAPTER SAYS: sNN_*/notebook.md
# ======================================================================
# Each chapter's own words sit next to its code, in notebook.md: parts that start with a line
# "%% name" (an HTML comment at the top says so to whoever edits it):
#
# title, intro         the first cell
# new, new_code        what to look for in the comparison with the chapter before (code optional)
# idea, idea_code      the chapter's idea at work: the exact block that shows it
# piece, piece_code    the new piece of code, called by hand
# exercises            two or three, in markdown

PROSE = "notebook.md"
PARTS = ("title", "intro", "new", "new_code", "idea", "idea_code", "piece", "piece_code",
         "exercises")
REQUIRED = set(PARTS) - {"new_code"}


def chapter_prose(name, root=ROOT):
    """{part: text} from <name>/notebook.md; SystemExit naming the file if it is missing or
    lacks a part."""
    path = Path(root) / name / PROSE
    if not path.is_file():
        raise SystemExit(f"{path}: missing; each chapter's notebook cells come from its {PROSE}")
    parts, current = {}, None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("%% "):
            current = line[3:].strip()
            if current not in PARTS or current in parts:
                raise SystemExit(f"{path}: unknown or repeated part '%% {current}'")
            parts[current] = []
        elif current is not None:
            parts[current].append(line)
    missing = sorted(REQUIRED - set(parts))
    if missing:
        raise SystemExit(f"{path}: no part {', '.join('%% ' + part for part in missing)}")
    return {part: "\n".join(lines).strip("\n") for part, lines in parts.items()}


# ======================================================================
# THE CELLS EVERY NOTEBOOK SHARES
# ======================================================================

def load_cells(name, previous):
    code = [text(r'''
        import builtins
        import contextlib
        import difflib
        import importlib.util
        import json
        import shutil
        import sys
        import tempfile
        import textwrap
        from pathlib import Path

        sys.dont_write_bytecode = True  # loading code.py leaves no __pycache__ in the repository

        HERE = Path.cwd()  # the chapter's folder
        if not (HERE / "code.py").is_file():
            raise RuntimeError(
                f"Open this notebook from its chapter folder: there is no code.py in {HERE}")


        def load_chapter(folder):
            """A fresh module made from <folder>/code.py."""
            name, path = f"{folder.name}_code", folder / "code.py"
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module


        chapter = load_chapter(HERE)
        print(f"chapter:  {chapter.CHAPTER}  ({HERE / 'code.py'})")
    ''')]
    if previous is not None:
        code += [
            "# the chapter before, to compare with",
            f'previous = load_chapter(HERE.parent / "{previous}")',
            'print(f"previous: {previous.CHAPTER}")',
        ]
    return [
        ("markdown", """
            ## Load the chapter

            Jupyter starts the kernel in the notebook's folder, so `Path.cwd()` is this chapter's
            folder. The cell below loads `code.py` from there as a module: everything that runs in
            this notebook is the chapter's own code. Importing it needs no key and changes nothing.
        """),
        ("code", "\n".join(code)),
    ]


def told_cells():
    return [
        ("markdown", """
            ## What the model is told

            Every request carries the system prompt (`system_prompt(workdir)`) and the tool list
            (`TOOLS`). This is all the model knows about the harness.
        """),
        ("code", r'''
            WORKDIR = "<workdir>"  # system_prompt() names the working directory: a placeholder here
            print("SYSTEM")
            print(textwrap.indent(chapter.system_prompt(WORKDIR), "  "))
            print(f"\nTOOLS ({len(chapter.TOOLS)})")
            for tool in chapter.TOOLS:
                schema = tool["input_schema"]
                required = schema.get("required", [])
                fields = ", ".join(
                    key if key in required else key + "?"  # ? marks an optional field
                    for key in schema["properties"]
                )
                print(f"  {tool['name']}({fields})")
                print(textwrap.indent(textwrap.fill(tool["description"], 88), "      "))
        '''),
    ]


def compare_cells():
    """What this chapter added to SYSTEM and the tools, computed from the two modules."""
    return [("code", r'''
        def wrapped(prompt):
            """The prompt's lines, each paragraph wrapped to 78 columns (an empty one stays)."""
            return [
                line
                for paragraph in prompt.splitlines()
                for line in (textwrap.wrap(paragraph, 78) or [""])
            ]


        old_tools = {tool["name"]: tool for tool in previous.TOOLS}
        new_tools = {tool["name"]: tool for tool in chapter.TOOLS}
        added = [name for name in new_tools if name not in old_tools]
        changed = [
            name for name in new_tools if name in old_tools and new_tools[name] != old_tools[name]
        ]
        print(f"tools new in {chapter.CHAPTER}:", ", ".join(added) or "none")
        print("tools changed:", ", ".join(changed) or "none")
        for name in added:
            print(json.dumps(new_tools[name], indent=2))

        old_prompt, new_prompt = previous.system_prompt(WORKDIR), chapter.system_prompt(WORKDIR)
        if old_prompt == new_prompt:
            print(f"\nThe system prompt is the same as in {previous.CHAPTER}.")
        else:
            print(f"\nThe system prompt, {previous.CHAPTER} -> {chapter.CHAPTER}:")
            diff = difflib.unified_diff(
                wrapped(old_prompt), wrapped(new_prompt),
                previous.CHAPTER, chapter.CHAPTER, lineterm="",
            )
            for line in diff:
                print(line)
    ''')]


def scenario_cells():
    return [
        ("markdown", """
            ## The scenario

            `scenario.json` is the script the scripted model plays: one turn per model call. A turn
            with `when` is taken only if the newest user turn contains that text, so one script can
            show both sides of a decision. `ANSWERS` holds the lines that answer the chapter's
            questions (a permission prompt, a plan approval), in order; change it to take the other
            branch. With no answer left, a question gets end-of-file: the safe answer.
        """),
        ("code", r'''
            # the chapter's own loader: it checks every turn
            script = chapter.load_script(HERE / "scenario.json")
            ANSWERS = list(script.get("answers", []))


            def summary(block):
                if block["type"] == "text":
                    return repr(textwrap.shorten(block["text"], 48))
                return f"{block['name']} {textwrap.shorten(json.dumps(block['input']), 48)}"


            print("prompt: ", script["prompt"])
            print("answers:", ANSWERS)
            print(f"turns:    {len(script['turns'])}")
            for number, turn in enumerate(script["turns"], 1):
                blocks = turn.get("content", turn.get("response", {}).get("content", []))
                shown = " + ".join(summary(block) for block in blocks)
                if "when" in turn:
                    shown += f"   [only when the newest user turn has {turn['when']!r}]"
                print(f"  {number:2}. {shown}")
        '''),
    ]


def session_cells(mcp=False):
    # From s11, the trace holds a line for each message to or from an MCP server too.
    calls = ('[call for call in map(json.loads, lines) if "mcp" not in call]' if mcp
             else "[json.loads(line) for line in lines]")
    return [
        ("markdown", """
            ## A session in a scratch folder

            The tools act in a fresh temporary copy of `workspace/`, so the repository stays as it
            is. `make_session()` is the chapter's own set-up (settings, hooks, the banner), given
            the same options as the command line, `--trace` among them: the chapter's
            `call_model()` then appends one JSON line per model call to `trace.jsonl`, next to the
            copy, with exactly what was sent and what came back. `model_calls()` reads them back.
            The client becomes the chapter's `ScriptedModel`, playing the script above, and
            `scripted_answers()` answers the chapter's `input()` from `ANSWERS`.
        """),
        ("code", r'''
            def model_calls():
                """Every model call so far, as --trace recorded it, one line per call:
                {"request": the keyword arguments of messages.create,
                 "response": the reply as JSON}.
                """
                lines = session.trace.read_text(encoding="utf-8").splitlines()
                return CALLS


            @contextlib.contextmanager
            def scripted_answers(answers):
                """While active, each input() takes the next answer from the list."""
                queue = list(answers)

                def answer(question=""):
                    # code.py's read_line() echoes an answer that does not come from a terminal,
                    # as here: print the question, and the answer follows it on the same line.
                    if not queue:
                        print(question + "[no answer left: end of file] ", end="")
                        raise EOFError
                    print(question + "[scripted] ", end="")
                    return queue.pop(0)

                real_input, builtins.input = builtins.input, answer
                try:
                    yield
                finally:
                    builtins.input = real_input


            def show_json(value, indent=4):
                shown = json.dumps(value, indent=2, ensure_ascii=False)
                print(textwrap.indent(shown, " " * indent))


            def reply_blocks(response):
                """The content of a recorded response, each block with its type first, as in the
                history."""
                return [{"type": block["type"], **block} for block in response["content"]]


            def find_blocks(test):
                """(message index, block index, block) for each block of the history that passes
                test()."""
                found = []
                for m, message in enumerate(session.messages):
                    if isinstance(message["content"], list):
                        found += [(m, b, block) for b, block in enumerate(message["content"])
                                  if test(block)]
                return found


            def tool_use_of(result):
                """The tool_use block that a tool_result answers."""
                def answered(block):
                    return block.get("type") == "tool_use" and block["id"] == result["tool_use_id"]

                return find_blocks(answered)[0][2]
        '''.replace("CALLS", calls)),
        ("code", r'''
            scratch = Path(tempfile.mkdtemp(prefix=f"{chapter.PROMPT_LABEL}-notebook-"))
            workdir = scratch / "workspace"  # where the tools act
            shutil.copytree(HERE / "workspace", workdir)
            trace = scratch / "trace.jsonl"  # outside the workdir: the tools do not see it
            options = ["--offline", "--workdir", str(workdir), "--trace", str(trace)]
            session, banner = chapter.make_session(chapter.parse_args(options))
            session.client = chapter.ScriptedModel(script)
            print("\n".join(banner))
            print("client:", type(session.client).__name__, "playing the script above")
            print("trace: ", session.trace)
        '''),
    ]


def run_cells(mcp=False):
    # From s11, the first prompt starts the MCP servers of .mcp.json, each after its question.
    start = ("\n" + " " * 16 + "chapter.start_servers(session)  # asked first: at the first prompt"
             if mcp else "")
    return [
        ("markdown", """
            ## Run it

            The chapter's own `run_turn()`, exactly as the command line runs it: what it prints is
            what a user would see. Each model call it makes lands in the trace.
        """),
        ("code", r'''
            print(f"{chapter.PROMPT_LABEL} >> {script['prompt']}")
            with scripted_answers(ANSWERS):START
                finished = chapter.run_turn(session, script["prompt"])
            print(f"\nrun_turn() returned {finished}: {len(model_calls())} model calls "
                  f"in {session.trace.name}, {len(session.messages)} messages in the history")
        '''.replace("START", start)),
        ("markdown", """
            ## One model call at a time

            Each call sends the whole history. Below, for every call in the trace: the keyword
            arguments of `messages.create`, the messages that are new since the call before, and
            what came back. Call `show_call(n)` to look at one call.
        """),
        ("code", r'''
            def show_call(number):
                calls = model_calls()
                request, response = calls[number - 1]["request"], calls[number - 1]["response"]
                if number > 1:
                    before = calls[number - 2]["request"]
                else:  # the first call: everything in it is new
                    before = {"system": None, "tools": None, "messages": []}
                sent, old = request["messages"], before["messages"]
                first_new = next(
                    (i for i, message in enumerate(sent) if i >= len(old) or message != old[i]),
                    len(sent),
                )
                print(f"=== call {number} of {len(calls)}: create({', '.join(request)})")
                if request["system"] != before["system"]:
                    same = request["system"] == chapter.system_prompt(session.workdir)
                    print("  system:", "system_prompt(workdir)" if same else request["system"])
                if request["tools"] != before["tools"]:
                    print("  tools: ", ", ".join(tool["name"] for tool in request["tools"]))
                print(f"  messages: {len(sent)}, new since the call before:")
                for index in range(first_new, len(sent)):
                    print(f"  messages[{index}] {sent[index]['role']}:")
                    show_json(sent[index]["content"])
                print(f"  came back, stop_reason {response['stop_reason']!r}:")
                show_json(reply_blocks(response))
                print()


            for number in range(1, len(model_calls()) + 1):
                show_call(number)
        '''),
        ("code", r'''
            # The history at the end: one line per message, the blocks it holds.
            for index, message in enumerate(session.messages):
                kinds = [block["type"] + (" (is_error)" if block.get("is_error") else "")
                         for block in message["content"]]
                print(f"messages[{index:2}]  {message['role']:9}  {', '.join(kinds)}")
        '''),
    ]


def live_cells():
    return [
        ("markdown", """
            ## Live, with a real model (optional)

            This cell runs the same prompt with the real API, in another scratch copy of
            `workspace/`, and only if a key is set: `ANTHROPIC_API_KEY` in the environment or in a
            `.env` file at the top of the repository (see `.env.example`; `MODEL_ID` picks the
            model). Questions are asked for real here: answer them in the box Jupyter shows.
        """),
        ("code", r'''
            from dotenv import find_dotenv, load_dotenv

            # as code.py does: .env from this folder or a folder above it
            load_dotenv(find_dotenv(usecwd=True))
            LIVE_PROMPT = script["prompt"]
            if not chapter.has_key():
                print("No ANTHROPIC_API_KEY is set, so this cell stops here: everything above "
                      "ran offline,\nwith the scripted model. To try it live, set the key (or "
                      "put it in .env) and run this cell again.")
            else:
                live_workdir = Path(tempfile.mkdtemp(prefix=f"{chapter.PROMPT_LABEL}-live-"))
                shutil.copytree(HERE / "workspace", live_workdir, dirs_exist_ok=True)
                live_args = chapter.parse_args(["--workdir", str(live_workdir)])
                live, banner = chapter.make_session(live_args)
                print("\n".join(banner))  # the model and the endpoint; never the key
                chapter.run_turn(live, LIVE_PROMPT)
        '''),
    ]


# ======================================================================
# ONE NOTEBOOK
# ======================================================================

def chapter_names(root=ROOT):
    """The chapters of the repository, in order: every sNN_*/ folder with a code.py."""
    return sorted(path.parent.name for path in root.glob("s[0-9][0-9]_*/code.py"))


def cells_for(name, previous, root=ROOT):
    """The cells of one chapter's notebook, as (kind, source, tags)."""
    data = chapter_prose(name, root)
    cells = [("markdown", f"# {data['title']}\n\n" + text(data["intro"]))]
    cells += load_cells(name, previous)
    cells += told_cells()
    cells.append(("markdown", data["new"]))
    if "new_code" in data:
        cells.append(("code", data["new_code"]))
    if previous is not None:
        cells += compare_cells()
    cells += scenario_cells()
    mcp = "def start_servers(" in (root / name / "code.py").read_text(encoding="utf-8")
    cells += session_cells(mcp)
    cells += run_cells(mcp)
    cells.append(("markdown", data["idea"]))
    cells.append(("code", data["idea_code"], ["idea"]))
    cells.append(("markdown", data["piece"]))
    cells.append(("code", data["piece_code"]))
    cells.append(("markdown", data["exercises"]))
    cells += live_cells()
    return cells


def build(name, previous=None, root=ROOT):
    """The notebook of one chapter: no outputs, ids from the chapter and the cell's position."""
    label = name.split("_")[0]
    metadata = {"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}}
    notebook = new_notebook(metadata=metadata)
    for index, (kind, source, *tags) in enumerate(cells_for(name, previous, root)):
        make = new_code_cell if kind == "code" else new_markdown_cell
        cell = make(text(source), id=f"{label}-{index:02d}")
        if tags:  # a cell given as (kind, source, ["idea"]): the tests find it by its tag
            cell.metadata["tags"] = tags[0]
        notebook.cells.append(cell)
    nbformat.validate(notebook)
    return notebook


def render(name, previous=None, root=ROOT):
    """The exact text of one chapter's notebook.ipynb."""
    return nbformat.writes(build(name, previous, root), version=4) + "\n"


def notebooks(root=ROOT):
    """{chapter folder name: the text of its notebook}, for every chapter of the repository."""
    names = chapter_names(root)
    return {
        name: render(name, names[index - 1] if index else None, root)
        for index, name in enumerate(names)
    }


def generate(dest=ROOT, root=ROOT):
    """Write every chapter's notebook under dest (the repository, or a folder to compare with)."""
    written = []
    for name, content in notebooks(root).items():
        path = Path(dest) / name / NOTEBOOK
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != content:
            # newline="\n": the same bytes on every system
            path.write_text(content, encoding="utf-8", newline="\n")
            written.append(path)
    return written


def stale(root=ROOT):
    """The notebooks that are missing or differ from what the generator makes now."""
    outdated = []
    for name, content in notebooks(root).items():
        path = root / name / NOTEBOOK
        if not path.exists() or path.read_text(encoding="utf-8") != content:
            outdated.append(path)
    return outdated


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python web/notebooks.py", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a notebook would change"
    )
    args = parser.parse_args(argv)
    if args.check:
        outdated = stale()
        for path in outdated:
            print(f"out of date: {path.relative_to(ROOT)} (run: python web/notebooks.py)")
        return 1 if outdated else 0
    written = generate()
    for path in written:
        print(f"wrote {path.relative_to(ROOT)}")
    print(f"{len(written)} of {len(chapter_names())} notebooks changed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
