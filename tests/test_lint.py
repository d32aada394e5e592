"""The whole repository passes ruff (configured in pyproject.toml): one test command checks it.
And the imports go one way: tests may import the tools, never the other way round."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_check_passes_on_the_whole_repository():
    process = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.returncode == 0, process.stdout + process.stderr


def imported_modules(path):
    """The modules a Python file imports, wherever it does (top-level names, `course.lessons`
    as `course`)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


TEST_MODULES = {path.stem for path in (ROOT / "tests").glob("*.py")} | {"tests", "conftest"}


def test_the_tools_and_the_site_import_no_test_what_they_share_with_the_tests_is_in_course():
    # tests may import a tool (to test it); a tool, the site or course/ never imports a test
    files = [*(ROOT / "tools").glob("*.py"), *(ROOT / "course").rglob("*.py"),
             *(ROOT / "web").rglob("*.py")]
    imports = {path.relative_to(ROOT).as_posix(): imported_modules(path) & TEST_MODULES
               for path in files}
    assert {path: sorted(tests) for path, tests in imports.items() if tests} == {}
