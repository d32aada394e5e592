"""Exercise 1: Keep the file tools out of .git.

Task: The workdir's `.git` folder is where git keeps the repository: a model that edits
`.git/config` or writes a hook into `.git/hooks` can change what git runs. Make the workspace
guard refuse every path inside the workdir's own `.git` folder, with
`Refused: '.git/config' is inside .git, where git keeps the repository.` (the path as given),
and make glob list nothing inside it. A link that leads into `.git` is refused too: the guard
looks at where a path leads. `.gitignore` and other files stay reachable; bash is not guarded.

Hint: In `resolve_path`, after the path is resolved, look at its first part below the workdir;
in `glob_files`, leave out the hits that resolve into `.git`.
"""

import os
from pathlib import Path

from course.check import (
    FakeClient,
    expect,
    expect_equal,
    load,
    new_session,
    result,
    run,
    scratch,
    tool_use,
)

CODE = Path(__file__).resolve().parent.parent / "code.py"
FILES = {".git/config": "[core]\n", ".git/HEAD": "ref: refs/heads/main\n",
         ".gitignore": "*.pyc\n", "notes.md": "# Notes\n", "src/a.py": "print('a')\n"}


def refused(path):
    return f"Refused: {path!r} is inside .git, where git keeps the repository."


def check(code):
    chapter = load(code)
    with scratch(FILES) as work:
        os.symlink(".git", work / "repo")  # a link into .git, under another name
        session = new_session(chapter, FakeClient(), work)

        def call(name, tool_input):
            return chapter.run_tool(session, tool_use("toolu_1", name, tool_input))

        expect_equal(call("read_file", {"path": ".git/config"}),
                     result("toolu_1", refused(".git/config"), is_error=True),
                     "read_file still reads .git/config: make the guard refuse paths inside .git.")
        written = call("write_file", {"path": ".git/hooks/pre-commit", "content": "echo hi\n"})
        expect_equal(written, result("toolu_1", refused(".git/hooks/pre-commit"), is_error=True),
                     "write_file can still write into .git.")
        expect(not (work / ".git" / "hooks").exists(), "write_file changed .git.")
        edit = {"path": "./.git/HEAD", "old_string": "main", "new_string": "x"}
        expect_equal(call("edit_file", edit),
                     result("toolu_1", refused("./.git/HEAD"), is_error=True),
                     "edit_file can still edit ./.git/HEAD.")
        expect_equal(call("read_file", {"path": "repo/config"}),
                     result("toolu_1", refused("repo/config"), is_error=True),
                     "A link into .git (repo -> .git) still lets read_file read repo/config: "
                     "check where the path leads, not how it is written.")
        expect_equal(call("glob", {"pattern": "**/*"}),
                     result("toolu_1", ".gitignore\nnotes.md\nsrc/a.py"),
                     "glob still lists files inside .git.")
        expect_equal(call("read_file", {"path": ".gitignore"}),
                     result("toolu_1", "     1\t*.pyc"),
                     "read_file no longer reads .gitignore, which is not inside .git.")


def test_exercise():
    run(check, CODE)
