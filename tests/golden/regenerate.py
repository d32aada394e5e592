"""Write what the model sees in each chapter to tests/golden/<chapter>.json.

    .venv/bin/python tests/golden/regenerate.py

The files are reviewed by a person: a change to a system prompt, a tool's
description or a schema shows up as a diff of these files in review, and
tests/test_golden.py fails until the files are regenerated. The workdir in the
system prompt is written as {workdir}.
"""

import importlib.util
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WORKDIR = "/WORKDIR"


def what_the_model_sees(name):
    """{"system": ..., "tools": [...]} of a chapter, as its first request sends them."""
    spec = importlib.util.spec_from_file_location(f"golden_{name}", ROOT / name / "code.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    seen = {"system": module.system_prompt(WORKDIR).replace(WORKDIR, "{workdir}"),
            "tools": module.TOOLS}
    if hasattr(module, "subagent_system_prompt"):  # s07 on: what a subagent sees, too
        seen["subagent"] = {
            "system": module.subagent_system_prompt(WORKDIR).replace(WORKDIR, "{workdir}"),
            "tools": [tool["name"] for tool in module.TOOLS
                      if tool["name"] not in module.SUBAGENT_HIDDEN],
        }
    return seen


def render(seen):
    return json.dumps(seen, indent=2, ensure_ascii=False) + "\n"


def main():
    # The chapters whose code.py is written (course.PRESENT), found here without the course
    # package: a script run by its path has only its own folder on sys.path.
    for name in sorted(code.parent.name for code in ROOT.glob("s[0-9][0-9]_*/code.py")):
        path = HERE / f"{name}.json"
        text = render(what_the_model_sees(name))
        changed = not path.exists() or path.read_text(encoding="utf-8") != text
        path.write_text(text, encoding="utf-8")
        print(f"{'wrote' if changed else 'unchanged'} {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
