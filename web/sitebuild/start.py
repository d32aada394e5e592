"""Get started: what the home page says to go from nothing to a running s01.

The commands are the README's own: the ```bash blocks of its "## Start" section, read at
build time, so the site says what the README says when the README changes. The address of
the repository is the environment variable COURSE_REPOSITORY, or else the address the checkout
was cloned from (its `origin` remote): the clone command is written from it. Without either,
the site invents none: it says "the course's repository".
"""

import os
import re
import subprocess

REPOSITORY_SETTING = "COURSE_REPOSITORY"  # e.g. https://example.org/you/course.git
START_HEADING = "Start"  # the README's section the commands come from


def repository(root=None):
    """The address of the course's repository: COURSE_REPOSITORY, else (given the checkout's
    root) the address its `origin` remote was cloned from, made an https:// one without any
    user or password in it; "" when neither says one."""
    told = os.environ.get(REPOSITORY_SETTING, "").strip()
    if told or root is None:
        return told
    try:
        found = subprocess.run(["git", "-C", str(root), "config", "--get", "remote.origin.url"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return public_address(found)


def public_address(url):
    """git@host:owner/repo.git and https://user:token@host/owner/repo.git as
    https://host/owner/repo.git; another kind of address (a folder, ssh://) as ""."""
    scp = re.fullmatch(r"[\w.-]+@([\w.-]+):([\w./-]+)", url)
    if scp:
        return f"https://{scp[1]}/{scp[2].lstrip('/')}"
    web = re.fullmatch(r"https://(?:[^@/\s]*@)?([\w.-]+(?::\d+)?/[\w./-]+)", url)
    return f"https://{web[1]}" if web else ""


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
