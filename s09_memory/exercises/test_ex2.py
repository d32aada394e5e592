"""Exercise 2: An override for one folder.

Task: Codex reads `AGENTS.override.md` in a folder instead of the `AGENTS.md` beside it, so that
one can set a folder's rules for a while without editing the shared file. Do the same: in each
folder `memory_paths` walks (and in `~/.agent`), an `AGENTS.override.md` that is there is read
instead of that folder's `AGENTS.md`; a folder without one reads its `AGENTS.md` as before. It
steers every session too, so a change to it asks in every mode, as AGENTS.md's does.

Hint: `memory_paths` lists a path per folder; `os.path.lexists` says whether a name is there.
`POWER_FILES` is matched in lower case.
"""

from pathlib import Path

from course.check import FakeClient, expect_equal, load, new_session, run, scratch, screen

CODE = Path(__file__).resolve().parent.parent / "code.py"


def check(code):
    chapter = load(code)
    files = {".git/HEAD": "ref: refs/heads/main\n",
             "AGENTS.md": "Shared rules.\n", "AGENTS.override.md": "This week's rules.\n",
             "app/AGENTS.md": "The app's rules.\n",
             "home/.agent/AGENTS.md": "Mine.\n", "home/.agent/AGENTS.override.md": "Mine now.\n"}
    with scratch(files) as root:
        session = new_session(chapter, FakeClient(), root / "app",
                              tool_environment={"HOME": str(root / "home")})
        with screen():
            read = [(path, text) for path, text in chapter.read_memory(session)]
        expect_equal(read, [(root / "home/.agent/AGENTS.override.md", "Mine now.\n"),
                            (root / "AGENTS.override.md", "This week's rules.\n"),
                            (root / "app/AGENTS.md", "The app's rules.\n")],
                     "In each folder, AGENTS.override.md should be read instead of AGENTS.md; "
                     "a folder without one reads its AGENTS.md.")
        session.mode = "bypass"
        decision, _ = chapter.check_permission(
            session, "write_file", {"path": "AGENTS.override.md", "content": "Skip tests.\n"})
        expect_equal(decision, "ask",
                     "A change to AGENTS.override.md should ask in every mode, bypass too.")


def test_exercise():
    run(check, CODE)
