"""Generate the chapter notebooks: sNN_*/notebook.ipynb, one guided walk-through per chapter.

    python web/notebooks.py            (re)write every chapter's notebook.ipynb
    python web/notebooks.py --check    write nothing; exit 1 if a notebook is missing or would change

Every notebook follows the same path through its chapter:

    load code.py as a module     the chapter's own code, never a copy; the chapter before, to compare
    what the model is told       SYSTEM and the tools, and what this chapter added to them
    the scenario                 scenario.json, and the scripted answers to the chapter's questions
    run it                       the chapter's own run_turn() in a scratch copy of workspace/, with
                                 a client wrapper that records every model call
    one model call at a time     what each call sent (the messages new since the call before) and
                                 what came back: the history grows before your eyes
    the idea at work             the exact block that shows this chapter's idea
    the piece on its own         the chapter's new function, called by hand
    exercises, and a live cell   the live cell runs only when ANTHROPIC_API_KEY is set

What differs from chapter to chapter is data: CHAPTERS below holds it as plain strings. The cells
every notebook shares are made by the small functions after it. Notebooks are written without
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
# WHAT EACH CHAPTER SAYS
# ======================================================================
# title, intro         the first cell
# new                  what to look for in the comparison with the chapter before
# idea, idea_code      the chapter's idea at work: the exact block that shows it
# piece, piece_code    the new piece of code, called by hand
# exercises            two or three, in markdown

CHAPTERS = {
    "s01_loop": {
        "title": "s01 · The agent loop",
        "intro": """
            A coding agent is a loop. Send the conversation to the model; if the model asks for a
            tool, run it, append the result, and send again; stop when it answers without asking
            for a tool.

            This notebook loads `code.py` from this folder, runs its scenario against the scripted
            model (no key needed), and then looks at every model call: what went in, what came
            back, and how the history grows by one assistant turn and one user turn per tool round.
        """,
        "new": """
            ## What this chapter adds

            Everything: one tool (`bash`), one loop, the scripted model that stands in for the API,
            and the trace. Here is the one tool in full, exactly as it goes to the API in `tools`.
        """,
        "new_code": r'''
            print(json.dumps(chapter.TOOLS, indent=2))
        ''',
        "idea": """
            ## The idea at work: a tool round

            The model asked for two commands in one turn. The harness ran both and answered them in
            **one** user turn, with one `tool_result` per `tool_use`, matched by id and in the same
            order. Then it called the model again with the whole history.
        """,
        "idea_code": r'''
            # The assistant turn with the most tool_use blocks, and the user turn that answers it.
            rounds = [(m, message) for m, message in enumerate(session.messages) if message["role"] == "assistant"
                      and any(block["type"] == "tool_use" for block in message["content"])]
            m, asked = max(rounds, key=lambda pair: sum(block["type"] == "tool_use" for block in pair[1]["content"]))
            answered = session.messages[m + 1]

            print(f"messages[{m}]: the assistant asks for tools")
            show_json(asked)
            print(f"messages[{m + 1}]: the next user turn answers every tool_use, by id, in order")
            show_json(answered)

            ids_asked = [block["id"] for block in asked["content"] if block["type"] == "tool_use"]
            ids_answered = [block["tool_use_id"] for block in answered["content"]]
            print("ids asked:   ", ids_asked)
            print("ids answered:", ids_answered)
            assert ids_asked == ids_answered
        ''',
        "piece": """
            ## The piece on its own: `run_tool`

            `run_tool()` turns one `tool_use` block into one `tool_result`, and never raises: a
            wrong input or an unknown tool becomes a result with `"is_error": true`, so the model
            hears what went wrong and the loop goes on. The commands run in the scratch folder.
        """,
        "piece_code": r'''
            tries = [
                {"id": "try_1", "name": "bash", "input": {"command": "wc -l notes.md"}},
                {"id": "try_2", "name": "bash", "input": {"cmd": "ls"}},  # a wrong field name
                {"id": "try_3", "name": "python", "input": {"code": "print(1)"}},  # no such tool
                {"id": "try_4", "name": "bash", "input": {"command": "exit 3"}},  # a failing command is not an error
            ]
            for block in tries:
                print(f"{block['name']} {json.dumps(block['input'])}")
                show_json(chapter.run_tool(session, block))

            # Some commands are refused before they run; asking only checks, it runs nothing.
            print("rm -rf ~  ->", chapter.catastrophic_reason("rm -rf ~"))
        ''',
        "exercises": """
            ## Exercises

            1. **Predict, then check.** Add a turn to the script before its last one, e.g.
               `script["turns"].insert(2, {"content": [{"type": "tool_use", "name": "bash", "input": {"command": "wc -l notes.md"}}]})`,
               then run the cells again from *A session in a scratch folder*. How many model calls
               and messages do you expect? Which tool-use id does the new call get?
            2. **The whole history, every time.** Compare `len(json.dumps(call["request"]))` over
               `session.client.calls`. What would break if the loop sent only the newest message?
            3. **Stop reasons.** Give a turn `"stop_reason": "max_tokens"` in the script. What does
               `agent_loop()` do with a `tool_use` block in a reply that did not stop for tools?
        """,
    },
    "s02_tools": {
        "title": "s02 · Tools and the workspace guard",
        "intro": """
            With only `bash`, the model reads files with `cat` and writes them with heredocs:
            clumsy, fragile, and anything goes. s02 gives it tools made for files (`read_file`,
            `write_file`, `edit_file`, `glob`), a dispatch map from tool name to handler that
            checks every input against the tool's schema, and one **workspace guard**,
            `resolve_path()`, that every path goes through.
        """,
        "new": """
            ## What this chapter adds

            Four file tools, and a system prompt that tells the model to use them. The comparison
            below is computed from the two modules, s01 and s02.
        """,
        "idea": """
            ## The idea at work: the guard refuses a path

            The scripted model asked for `../CHANGELOG.md`, one folder above the working directory.
            The guard refused it before any file was opened, and the model got the reason back as
            a `tool_result` with `"is_error": true`. It then kept its note inside the workdir.
        """,
        "idea_code": r'''
            m, b, refusal = find_blocks(lambda block: block.get("is_error") and str(block.get("content")).startswith("Refused:"))[0]
            print("the model asked:")
            show_json(tool_use_of(refusal))
            print(f"messages[{m}], block {b}: the workspace guard's answer")
            show_json(refusal)
        ''',
        "piece": """
            ## The piece on its own: `resolve_path`

            A few paths through the guard, against the scratch workdir. One of them goes through a
            symlink that leads out of the workdir: the guard resolves links first, so it sees where
            the path really ends.
        """,
        "piece_code": r'''
            (workdir / "outside").symlink_to(workdir.parent)  # a link inside the workdir that leads out of it
            paths = ["notes.md", "src/greet.py", str(workdir / "notes.md"), "src/../notes.md",
                     "../CHANGELOG.md", "/etc/hostname", "~/.bashrc", "outside/anything.txt"]
            for path in paths:
                try:
                    print(f"  {path!r:40} -> {chapter.shown(workdir, chapter.resolve_path(workdir, path))}")
                except chapter.ToolError as error:
                    print(f"  {path!r:40} -> {error}")
        ''',
        "exercises": """
            ## Exercises

            1. **A tool of your own, at run time.** The dispatch map is a dict. Register a tool from
               this notebook: `chapter.TOOL_HANDLERS["count_lines"] = lambda workdir, path: str(len(chapter.resolve_path(workdir, path).read_text().splitlines()))`,
               append its schema to `chapter.TOOLS`, add a turn that calls it to `script`, and run
               again. Which check rejects `{"path": 3}` before your handler runs?
            2. **Not unique.** Call `chapter.edit_file(workdir, "notes.md", "- ", "* ")`. What does
               the model hear, and what are its two ways out?
            3. **The guard's blind spot.** `bash` does not go through `resolve_path()`:
               `chapter.run_tool(session, {"id": "t", "name": "bash", "input": {"command": "cat ../*/notes.md"}})`.
               s03 puts a decision point in front of every call: does it ask before this
               command? What would you change?
        """,
    },
    "s03_permissions": {
        "title": "s03 · Permissions: allow, deny, or ask",
        "intro": """
            s02 runs whatever the model asks for. A harness must decide first: some calls are always
            fine (reading), some never (`rm -rf ~`), and the rest are the user's call. s03 puts one
            decision point, `check_permission()`, in front of every tool call: a hard deny list,
            then the rules in `.agent/settings.json` (deny > ask > allow), then the mode's default.

            When the chapter asks the user, this notebook answers from a visible list, `ANSWERS`.
        """,
        "new": """
            ## What this chapter adds

            No new tool and the same system prompt: s03 changes what happens *between* the model's
            request and the tool, so the model is told nothing new. Look for `check_permission` in
            `code.py`.
        """,
        "idea": """
            ## The idea at work: a denial

            The scripted model asked to run `rm -rf ~`. That command is on the hard deny list, so
            it was refused in every mode, without asking; the model heard why. The `write_file`
            that followed asked the user, and the scripted answer said yes (see the run above).
        """,
        "idea_code": r'''
            m, b, denial = find_blocks(lambda block: block.get("is_error") and str(block.get("content")).startswith("Denied"))[0]
            print("the model asked:")
            show_json(tool_use_of(denial))
            print(f"messages[{m}], block {b}: the decision point's answer")
            show_json(denial)

            m, b, allowed = find_blocks(lambda block: str(block.get("content")).startswith("Created hello.txt"))[0]
            print(f"messages[{m}], block {b}: the write the user allowed with {ANSWERS[:1]}")
            show_json(allowed)
        ''',
        "piece": """
            ## The piece on its own: `check_permission`

            The same calls in each mode, and then with rules. `check_permission()` only decides: it
            runs nothing and asks nothing, so it is safe to try anything here.
        """,
        "piece_code": r'''
            calls = [
                ("read_file", {"path": "notes.md"}),
                ("bash", {"command": "grep -c Hello src/greet.py"}),
                ("bash", {"command": "ls > files.txt"}),
                ("write_file", {"path": "hello.txt", "content": "hi\n"}),
                ("bash", {"command": "python3 src/greet.py"}),
                ("bash", {"command": "rm -rf ~"}),
            ]


            def decide_all(probe):
                for name, tool_input in calls:
                    decision, reason = chapter.check_permission(probe, name, tool_input)
                    print(f"  {decision:5}  {chapter.call_summary({'name': name, 'input': tool_input}):34} {reason}")


            for mode in chapter.MODES:
                print(f"mode {mode}:")
                decide_all(chapter.Session(client=None, model="none", workdir=workdir, mode=mode))

            rules = {"permissions": {"allow": ["bash(python3 src/greet.py)"], "deny": ["write_file(*.txt)"]}}
            print(f"mode default, with the rules {json.dumps(rules)}:")
            decide_all(chapter.Session(client=None, model="none", workdir=workdir, settings=rules))
        ''',
        "exercises": """
            ## Exercises

            1. **The other branch.** Set `ANSWERS = ["n"]` in the scenario cell and run again from
               there. Which turn of the script comes next, and why (look at its `when`)?
            2. **Always.** Answer `"a"` instead. What lands in `workdir / ".agent" / "settings.json"`?
               Would the rule also allow a write to `hello.txt.bak`?
            3. **Conservative on purpose.** Try `chapter.is_read_only()` on `git log | head`,
               `echo $(rm notes.md)`, `find . -delete` and `sort -o notes.md notes.md`. Why is a
               wrong `False` cheap here and a wrong `True` expensive?
        """,
    },
    "s04_hooks": {
        "title": "s04 · Hooks: your code at fixed points of the loop",
        "intro": """
            A harness cannot know every rule a team wants ("never curl", "run the tests before you
            say done"). Hooks let the user plug code into four fixed points of the loop:
            `UserPromptSubmit`, `PreToolUse`, `PostToolUse` and `Stop`. A hook sees the event as
            JSON and may block it or add to it. It is a Python function registered with
            `add_hook()`, or a shell command in `.agent/settings.json`.

            This chapter's workspace has two command hooks: a `PreToolUse` hook that blocks `curl`,
            and a `Stop` hook that runs the tests before the model may finish.
        """,
        "new": """
            ## What this chapter adds

            No new tool and the same system prompt: hooks work around the model, not through it.
            Here are the hooks of the workspace, as `.agent/settings.json` declares them.
        """,
        "new_code": r'''
            print((HERE / "workspace" / ".agent" / "settings.json").read_text())
        ''',
        "idea": """
            ## The idea at work: a hook blocks a call

            The `PreToolUse` hook saw `curl` in the command and exited with code 2: the call was
            blocked before it ran, and its stderr went to the model as the reason. Later the `Stop`
            hook ran the tests, found them failing, and sent the model back to work with a user
            turn of its own.
        """,
        "idea_code": r'''
            m, b, blocked = find_blocks(lambda block: "Blocked by a PreToolUse hook" in str(block.get("content")))[0]
            print("the model asked:")
            show_json(tool_use_of(blocked))
            print(f"messages[{m}], block {b}: the hook's answer")
            show_json(blocked)

            m, b, sent_back = find_blocks(lambda block: block.get("text", "").startswith('<hook event="Stop">'))[0]
            print(f"messages[{m}], block {b}: the Stop hook sends the model back to work")
            show_json(sent_back)

            print("the hooks of this session, in the order they run:")
            for hook in session.hooks:
                print(f"  {hook.event:11} matcher={hook.matcher!r:22} {hook.label}")
        ''',
        "piece": """
            ## The piece on its own: `add_hook` with Python functions

            Two hooks on a fresh session: one that keeps `.env` private, one that adds a note to the
            result of every edit. `run_tool()` runs the whole path: hooks, permission check, tool.
        """,
        "piece_code": r'''
            probe = chapter.Session(client=None, model="none", workdir=workdir, mode="accept_edits")


            def keep_env_private(event):
                if ".env" in json.dumps(event["tool_input"]):
                    return {"decision": "block", "reason": "This project keeps .env private."}
                return None


            def remind_to_test(event):
                return {"context": f"{event['tool_input']['path']} changed: run the tests before you finish."}


            chapter.add_hook(probe, "PreToolUse", keep_env_private)
            chapter.add_hook(probe, "PostToolUse", remind_to_test, matcher="edit_file|write_file")

            tries = [
                {"id": "try_1", "name": "read_file", "input": {"path": ".env"}},
                {"id": "try_2", "name": "read_file", "input": {"path": "calc.py"}},
                {"id": "try_3", "name": "edit_file", "input": {"path": "calc.py", "old_string": "def add(a, b):",
                                                               "new_string": "def add(a, b):  # the sum"}},
            ]
            for block in tries:
                print(chapter.call_summary(block))
                show_json(chapter.run_tool(probe, block))
        ''',
        "exercises": """
            ## Exercises

            1. **Add context to a prompt.** Register a `UserPromptSubmit` hook on `session` (after
               the session cell, before the run) that returns `{"context": "Keep functions short."}`.
               Where does that text land in the history, and how is it marked?
            2. **A Stop hook that never gives up.** Add a `Stop` hook that always returns
               `{"decision": "block", "reason": "Not yet."}`. How many times is the model sent
               back, and which constant says so?
            3. **A broken hook.** Add `chapter.add_hook(session, "PreToolUse", chapter.command_hook("exit 1"))`
               after the session cell and run again. Does the session stop? What does the user
               see, and what does the model hear?
        """,
    },
    "s05_todo_write": {
        "title": "s05 · A todo list, and a nudge when it falls behind",
        "intro": """
            On a long task a model drifts: it forgets a step, or stops half-way. s05 gives it a todo
            list to keep with the `todo_write` tool. Each call sends the whole list, which replaces
            the old one after the whole list is validated, and the list comes back rendered so the
            model sees its plan. If three rounds of tool calls pass without an update, the harness
            adds a reminder to that round's user turn.
        """,
        "new": """
            ## What this chapter adds

            The `todo_write` tool, and two sentences in the system prompt asking the model to plan
            with it. The tool changes no file: it acts on the session, like a notepad.
        """,
        "idea": """
            ## The idea at work: the reminder fires

            After three tool rounds without a successful `todo_write`, the harness added the
            reminder as the **last block of the same user turn** that carries that round's tool
            results (roles must alternate, so it cannot be a message of its own). The model's next
            call brought the list up to date.
        """,
        "idea_code": r'''
            m, b, reminder = find_blocks(lambda block: block == chapter.REMINDER)[0]
            turn = session.messages[m]
            where = "the last one" if b == len(turn["content"]) - 1 else "not the last one"
            print(f"The reminder is block {b} of messages[{m}], a {turn['role']} turn of {len(turn['content'])} blocks ({where}):")
            show_json(reminder)
            print(f"the whole of messages[{m}]:")
            show_json(turn)

            print(f"the {chapter.REMINDER_ROUNDS} tool rounds before it, none with a todo_write that passed:")
            for message in [message for message in session.messages[:m] if message["role"] == "assistant"][-chapter.REMINDER_ROUNDS:]:
                print("   ", ", ".join(chapter.call_summary(block) for block in message["content"] if block["type"] == "tool_use"))

            number = next(n for n, call in enumerate(session.client.calls, 1) if len(call["request"]["messages"]) > m)
            print(f"It reached the model in call {number}, which answered:")
            show_json(reply_blocks(session.client.calls[number - 1]["response"]))
        ''',
        "piece": """
            ## The piece on its own: `todo_write` validates first, then replaces

            A fresh session with a list, then a few lists that should not replace it. A refused list
            leaves the old one as it was.
        """,
        "piece_code": r'''
            probe = chapter.Session(client=None, model="none", workdir=workdir)
            print(chapter.todo_write(probe, [{"content": "Write the test", "status": "in_progress", "activeForm": "Writing the test"},
                                             {"content": "Run it", "status": "pending"}]))
            tries = {
                "two items in progress": [{"content": "A", "status": "in_progress"}, {"content": "B", "status": "in_progress"}],
                "an unknown status": [{"content": "Run it", "status": "done"}],
                "an empty item": [{"content": "  ", "status": "pending"}],
                "a JSON string, as some models send": '[{"content": "Run it", "status": "completed"}]',
            }
            for label, todos in tries.items():
                try:
                    rendered = chapter.todo_write(probe, todos)
                    print(f"{label}: accepted, the list is now\n{textwrap.indent(rendered, '    ')}")
                except chapter.ToolError as error:
                    print(f"{label}: refused: {error}\n    the list stays: {[item['content'] for item in probe.todos]}")
        ''',
        "exercises": """
            ## Exercises

            1. **Sooner.** Set `chapter.REMINDER_ROUNDS = 2` and run again from the session cell.
               Where does the reminder land now, and does the script still fit?
            2. **A failed update is no update.** In the scenario the second `todo_write` is refused.
               Find it in the steps above. Why must a refused list not reset the round counter?
            3. **Out of the loop.** `/todos` in the REPL shows the list. Print
               `chapter.render_todos(session.todos)` here: is it the list of the last call?
        """,
    },
    "s06_plan_mode": {
        "title": "s06 · Plan mode, enforced by the harness",
        "intro": """
            Before a large change the user may want a plan first. Asking the model nicely is not
            enough: a prompt persuades, but the tool list and the permission check decide. In plan
            mode the changing tools are not offered, and a changing call that arrives anyway is
            refused. The model submits its plan with `exit_plan_mode`; the user approves it (the
            plan is saved under `.agent/plans/`), answers with feedback, or rejects it.

            The approval question is answered here from a visible list, `ANSWERS`.
        """,
        "new": """
            ## What this chapter adds

            Two tools, `enter_plan_mode` and `exit_plan_mode`, and a tool list that depends on the
            session (`tools_for()`). The system prompt stays the same: plan mode speaks to the model
            through reminders in the user turns.
        """,
        "idea": """
            ## The idea at work: the plan file after approval

            The scripted answer approved the plan. The harness left plan mode, saved the plan in
            `.agent/plans/plan-<session id>.md`, and told the model where. Below: that file, the
            tools offered in every call (plan mode hides the changing ones), the reminders that
            told the model where it stood, and the `write_file` that arrived in plan mode anyway
            and was refused.
        """,
        "idea_code": r'''
            plan_path = chapter.plan_file(session)
            print("plan file:", plan_path)
            print("in the workdir:", chapter.shown(session.workdir, plan_path))
            print(textwrap.indent(plan_path.read_text(), "    "))
            assert chapter.newest_plan(session.workdir) == plan_path

            print("the tools offered in each model call:")
            all_names = [tool["name"] for tool in chapter.TOOLS]
            for number, call in enumerate(session.client.calls, 1):
                offered = [tool["name"] for tool in call["request"]["tools"]]
                hidden = [name for name in all_names if name not in offered]
                print(f"  call {number:2}: " + (f"plan mode, hidden: {', '.join(hidden)}" if hidden else "all tools"))

            m, b, note = find_blocks(lambda block: block.get("text") == chapter.PLAN_MODE_ENTERED)[0]
            print(f"messages[{m}], block {b}: the model hears that plan mode is on, and how to work in it")
            print(textwrap.indent(note["text"], "    "))
            m, b, refusal = find_blocks(lambda block: str(block.get("content")).startswith("Denied: plan mode is on"))[0]
            print(f"messages[{m}], block {b}: a write in plan mode, refused")
            show_json(refusal)
            m, b, note = find_blocks(lambda block: block.get("text") == chapter.PLAN_MODE_ENDED)[0]
            print(f"messages[{m}], block {b}: the model hears that plan mode has ended")
            show_json(note)
        ''',
        "piece": """
            ## The piece on its own: the plan-mode filter

            The tool list and the permission check of a fresh session, with plan mode off and on.
            Plan mode comes before every rule and every mode: even `bypass` cannot write in it.
        """,
        "piece_code": r'''
            probe = chapter.Session(client=None, model="none", workdir=workdir, mode="bypass")
            calls = [("read_file", {"path": "greet.py"}), ("bash", {"command": "grep -n greet greet.py"}),
                     ("bash", {"command": "python3 greet.py"}), ("edit_file", {"path": "greet.py", "old_string": "a", "new_string": "b"})]
            for plan_mode in (False, True):
                probe.plan_mode = plan_mode
                print(f"plan mode {'on' if plan_mode else 'off'} (permission mode {probe.mode}):")
                print("  tools:", ", ".join(tool["name"] for tool in chapter.tools_for(probe)))
                for name, tool_input in calls:
                    decision, reason = chapter.check_permission(probe, name, tool_input)
                    print(f"  {decision:5}  {chapter.call_summary({'name': name, 'input': tool_input}):30} {textwrap.shorten(reason, 70)}")
        ''',
        "exercises": """
            ## Exercises

            1. **Feedback.** Set `ANSWERS = ["Also mention --shout in README.md."]` and run again
               from the scenario cell. Which turns of the script are taken, where does your
               feedback sit in the history, and what happens at the second question?
            2. **No.** Set `ANSWERS = ["n"]`. How many model calls follow the rejection, and which
               field of the session ends the turn?
            3. **Belt and braces.** The tool list already hides `write_file` in plan mode. Why does
               `check_permission()` refuse it as well? Find the call in this scenario that shows why.
        """,
    },
}


# ======================================================================
# THE CELLS EVERY NOTEBOOK SHARES
# ======================================================================

def load_cells(name, previous):
    code = [text(r'''
        import builtins
        import contextlib
        import copy
        import difflib
        import importlib.util
        import json
        import shutil
        import sys
        import tempfile
        import textwrap
        from pathlib import Path
        from types import SimpleNamespace

        sys.dont_write_bytecode = True  # loading code.py leaves no __pycache__ in the repository

        HERE = Path.cwd()  # the chapter's folder
        if not (HERE / "code.py").is_file():
            raise RuntimeError(f"Open this notebook from its chapter folder: there is no code.py in {HERE}")


        def load_chapter(folder):
            """A fresh module made from <folder>/code.py."""
            spec = importlib.util.spec_from_file_location(f"{folder.name}_code", folder / "code.py")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module


        chapter = load_chapter(HERE)
        print(f"chapter:  {chapter.CHAPTER}  ({HERE / 'code.py'})")
    ''')]
    if previous is not None:
        code += [f'previous = load_chapter(HERE.parent / "{previous}")  # the chapter before, to compare with',
                 'print(f"previous: {previous.CHAPTER}")']
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
                fields = ", ".join(key + ("" if key in schema.get("required", []) else "?") for key in schema["properties"])
                print(f"  {tool['name']}({fields})")
                print(textwrap.indent(textwrap.fill(tool["description"], 88), "      "))
        '''),
    ]


def compare_cells():
    """What this chapter added to SYSTEM and the tools, computed from the two modules."""
    return [("code", r'''
        def wrapped(prompt):
            return [line for paragraph in prompt.splitlines() for line in (textwrap.wrap(paragraph, 78) or [""])]


        old_tools = {tool["name"]: tool for tool in previous.TOOLS}
        new_tools = {tool["name"]: tool for tool in chapter.TOOLS}
        added = [name for name in new_tools if name not in old_tools]
        changed = [name for name in new_tools if name in old_tools and new_tools[name] != old_tools[name]]
        print(f"tools new in {chapter.CHAPTER}:", ", ".join(added) or "none")
        print("tools changed:", ", ".join(changed) or "none")
        for name in added:
            print(json.dumps(new_tools[name], indent=2))

        old_prompt, new_prompt = previous.system_prompt(WORKDIR), chapter.system_prompt(WORKDIR)
        if old_prompt == new_prompt:
            print(f"\nThe system prompt is the same as in {previous.CHAPTER}.")
        else:
            print(f"\nThe system prompt, {previous.CHAPTER} -> {chapter.CHAPTER}:")
            for line in difflib.unified_diff(wrapped(old_prompt), wrapped(new_prompt), previous.CHAPTER, chapter.CHAPTER, lineterm=""):
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
            script = chapter.load_script(HERE / "scenario.json")  # the chapter's own loader checks every turn
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
                when = f"   [only when the newest user turn has {turn['when']!r}]" if "when" in turn else ""
                print(f"  {number:2}. " + " + ".join(summary(block) for block in blocks) + when)
        '''),
    ]


def session_cells():
    return [
        ("markdown", """
            ## A session in a scratch folder

            The tools act in a fresh temporary copy of `workspace/`, so the repository stays as it
            is. `make_session()` is the chapter's own set-up (settings, hooks, the banner). The
            client becomes the chapter's `ScriptedModel`, playing the script above, wrapped in a
            `RecordingClient` that keeps a copy of every `messages.create` call: what was sent, and
            what came back. `scripted_answers()` answers the chapter's `input()` from `ANSWERS`.
        """),
        ("code", r'''
            class RecordingClient:
                """Stands between the session and its client, and keeps a copy of every model call."""

                def __init__(self, inner):
                    self.inner = inner
                    self.calls = []  # one {"request": ..., "response": ...} per messages.create call
                    self.messages = SimpleNamespace(create=self.create)

                def create(self, **request):
                    sent = copy.deepcopy(request)  # the history keeps growing: keep it as it is now
                    response = self.inner.messages.create(**request)
                    self.calls.append({"request": sent, "response": response.to_dict(mode="json")})
                    print(f"--- model call {len(self.calls)}: sent {len(sent['messages'])} messages, "
                          f"stop_reason {response.stop_reason!r} ---")
                    return response


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
                print(textwrap.indent(json.dumps(value, indent=2, ensure_ascii=False), " " * indent))


            def reply_blocks(response):
                """The content of a recorded response, each block with its type first, as in the history."""
                return [{"type": block["type"], **block} for block in response["content"]]


            def find_blocks(test):
                """(message index, block index, block) for each block of the history that passes test()."""
                return [(m, b, block) for m, message in enumerate(session.messages) if isinstance(message["content"], list)
                        for b, block in enumerate(message["content"]) if test(block)]


            def tool_use_of(result):
                """The tool_use block that a tool_result answers."""
                return find_blocks(lambda block: block.get("type") == "tool_use" and block["id"] == result["tool_use_id"])[0][2]
        '''),
        ("code", r'''
            workdir = Path(tempfile.mkdtemp(prefix=f"{chapter.PROMPT_LABEL}-notebook-"))
            shutil.copytree(HERE / "workspace", workdir, dirs_exist_ok=True)
            args = chapter.parse_args(["--offline", "--workdir", str(workdir)])
            session, banner = chapter.make_session(args)
            session.client = RecordingClient(chapter.ScriptedModel(script))
            print("\n".join(banner))
            print("client:", type(session.client.inner).__name__, "in a RecordingClient")
        '''),
    ]


def run_cells():
    return [
        ("markdown", """
            ## Run it

            The chapter's own `run_turn()`, exactly as the command line runs it. The lines between
            `---` marks are what the chapter prints after each model call.
        """),
        ("code", r'''
            print(f"{chapter.PROMPT_LABEL} >> {script['prompt']}")
            with scripted_answers(ANSWERS):
                finished = chapter.run_turn(session, script["prompt"])
            print(f"\nrun_turn() returned {finished}: {len(session.client.calls)} model calls, "
                  f"{len(session.messages)} messages in the history")
        '''),
        ("markdown", """
            ## One model call at a time

            Each call sends the whole history. Below, for every call: the keyword arguments of
            `messages.create`, the messages that are new since the call before, and what came back.
            Call `show_call(n)` to look at one call.
        """),
        ("code", r'''
            def show_call(number):
                calls = session.client.calls
                request, response = calls[number - 1]["request"], calls[number - 1]["response"]
                before = calls[number - 2]["request"] if number > 1 else {"system": None, "tools": None, "messages": []}
                sent, old = request["messages"], before["messages"]
                first_new = next((i for i, message in enumerate(sent) if i >= len(old) or message != old[i]), len(sent))
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


            for number in range(1, len(session.client.calls) + 1):
                show_call(number)
        '''),
        ("code", r'''
            # The history at the end: one line per message, the blocks it holds.
            for index, message in enumerate(session.messages):
                kinds = [block["type"] + (" (is_error)" if block.get("is_error") else "") for block in message["content"]]
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

            load_dotenv(find_dotenv(usecwd=True))  # as code.py does: .env from this folder or a folder above it
            LIVE_PROMPT = script["prompt"]
            if not chapter.has_key():
                print("No ANTHROPIC_API_KEY is set, so this cell stops here: everything above ran offline,\n"
                      "with the scripted model. To try it live, set the key (or put it in .env) and run this cell again.")
            else:
                live_workdir = Path(tempfile.mkdtemp(prefix=f"{chapter.PROMPT_LABEL}-live-"))
                shutil.copytree(HERE / "workspace", live_workdir, dirs_exist_ok=True)
                live, banner = chapter.make_session(chapter.parse_args(["--workdir", str(live_workdir)]))
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


def cells_for(name, previous):
    """The cells of one chapter's notebook, as (kind, source, tags)."""
    data = CHAPTERS[name]
    cells = [("markdown", f"# {data['title']}\n\n" + text(data["intro"]))]
    cells += load_cells(name, previous)
    cells += told_cells()
    cells.append(("markdown", data["new"]))
    if "new_code" in data:
        cells.append(("code", data["new_code"]))
    if previous is not None:
        cells += compare_cells()
    cells += scenario_cells()
    cells += session_cells()
    cells += run_cells()
    cells.append(("markdown", data["idea"]))
    cells.append(("code", data["idea_code"], ["idea"]))
    cells.append(("markdown", data["piece"]))
    cells.append(("code", data["piece_code"]))
    cells.append(("markdown", data["exercises"]))
    cells += live_cells()
    return cells


def build(name, previous=None):
    """The notebook of one chapter: no outputs, ids from the chapter and the cell's position."""
    label = name.split("_")[0]
    notebook = new_notebook(metadata={"kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}})
    for index, (kind, source, *tags) in enumerate(cells_for(name, previous)):
        make = new_code_cell if kind == "code" else new_markdown_cell
        cell = make(text(source), id=f"{label}-{index:02d}")
        if tags:  # a cell given as (kind, source, ["idea"]): the tests find it by its tag
            cell.metadata["tags"] = tags[0]
        notebook.cells.append(cell)
    nbformat.validate(notebook)
    return notebook


def render(name, previous=None):
    """The exact text of one chapter's notebook.ipynb."""
    return nbformat.writes(build(name, previous), version=4) + "\n"


def notebooks(root=ROOT):
    """{chapter folder name: the text of its notebook}, for every chapter of the repository."""
    names = chapter_names(root)
    missing = [name for name in names if name not in CHAPTERS]
    if missing:
        raise SystemExit(f"web/notebooks.py has no cells for {', '.join(missing)}: add them to CHAPTERS")
    return {name: render(name, names[index - 1] if index else None) for index, name in enumerate(names)}


def generate(dest=ROOT, root=ROOT):
    """Write every chapter's notebook under dest (the repository, or a folder to compare with)."""
    written = []
    for name, content in notebooks(root).items():
        path = Path(dest) / name / NOTEBOOK
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != content:
            path.write_text(content, encoding="utf-8", newline="\n")  # the same bytes on every system
            written.append(path)
    return written


def stale(root=ROOT):
    """The notebooks that are missing or differ from what the generator makes now."""
    return [root / name / NOTEBOOK for name, content in notebooks(root).items()
            if not (root / name / NOTEBOOK).exists()
            or (root / name / NOTEBOOK).read_text(encoding="utf-8") != content]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python web/notebooks.py", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a notebook would change")
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
