"""Get started: what the home page says to go from nothing to a running s01.

The commands are the README's own: the ```bash blocks of its "## Start" section, read at
build time, so the site says what the README says when the README changes. The address of
the repository is one setting, the environment variable COURSE_REPOSITORY (the checkout the
site is built from may have none, and the site must not invent one): with it, the clone
command is written from it; without, the site says "the course's repository".
"""

import os
import re

REPOSITORY_SETTING = "COURSE_REPOSITORY"  # e.g. https://example.org/you/course.git
START_HEADING = "Start"  # the README's section the commands come from


def repository():
    """The address of the course's repository, or "" when the build was not told it."""
    return os.environ.get(REPOSITORY_SETTING, "").strip()


def clone_command(address):
    """The clone, then into its folder (the name git gives it: the address's last part without
    .git), so that the README's commands that follow run where they should."""
    if not address:
        return ""
    folder = address.rstrip("/").rpartition("/")[2].removesuffix(".git")
    return f"git clone {address} && cd {folder}" if folder else f"git clone {address}"


def readme_commands(root):
    """The commands of the README's Start section: each ```bash block, as written."""
    readme = root / "README.md"
    if not readme.is_file():
        return []
    text = readme.read_text(encoding="utf-8")
    found = re.search(rf"^## {START_HEADING}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    if not found:
        return []
    return [block.rstrip("\n") for block in
            re.findall(r"^```bash\n(.*?)^```$", found.group(1), re.S | re.M)]
