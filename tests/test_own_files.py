"""read_own_file: the one way the harness reads a file of its own (a --script file, settings.json,
a plan file; later AGENTS.md, SKILL.md, .mcp.json), born in s01's load_script and carried byte
for byte (tests/test_chapters.py). Each case is an attack on it: it must refuse with one line
that names the file and the reason (OwnFileError), never hang, never read a file it should not.
Its users' own messages: tests/test_odd_input.py (scripts, settings), tests/test_s08_compact.py
(the approved plan)."""

import os
import socket
import threading

import pytest

from support import load_chapter, run_chapter

LINK = "a symbolic link is on its way (the harness reads no file of its own through a link)"
SPECIAL = "not a regular file (a named pipe, a socket or a device)"
HARD_LINK = "it has a second hard link (the same file by another name, which may be outside)"


@pytest.fixture(scope="module")
def s01():
    return load_chapter("s01_loop")


@pytest.fixture
def place(tmp_path):
    """A folder the files belong to, and a folder outside it with a secret in it."""
    folder, outside = tmp_path / "work", tmp_path / "home"
    (folder / ".agent").mkdir(parents=True)
    (outside / ".ssh").mkdir(parents=True)
    (outside / ".ssh" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    return folder, outside


def refusal(chapter, path, folder, limit=1000):
    """What read_own_file says, from a thread: a read that waits fails the test, not the suite."""
    said = []

    def read():
        try:
            said.append(("read", chapter.read_own_file(path, folder, limit)))
        except chapter.OwnFileError as error:
            said.append(("refused", str(error)))

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(10)
    assert said, f"read_own_file({path}) did not return within 10 s: it waits on something"
    return said[0]


def test_each_attack_on_a_file_of_its_own_is_refused_in_one_line(s01, place):
    folder, outside = place
    agent = folder / ".agent"
    made = {}
    made["fifo"] = agent / "plan-fifo.md"
    os.mkfifo(made["fifo"])
    made["socket"] = agent / "plan-socket.md"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(made["socket"]))
    made["link to a key"] = agent / "plan-key.md"
    made["link to a key"].symlink_to(outside / ".ssh" / "id_rsa")
    made["link inside"] = agent / "plan-inside.md"
    (folder / "notes.md").write_text("notes\n")
    made["link inside"].symlink_to(folder / "notes.md")
    made["link to nowhere"] = agent / "plan-gone.md"
    made["link to nowhere"].symlink_to(outside / "gone.md")
    (folder / "through").symlink_to(outside / ".ssh")
    made["a linked folder on the way"] = folder / "through" / "id_rsa"
    made["hard link"] = agent / "plan-hard.md"
    os.link(outside / ".ssh" / "id_rsa", made["hard link"])
    made["folder"] = agent / "plans"
    made["folder"].mkdir()
    made["50 MB"] = agent / "plan-big.md"
    with open(made["50 MB"], "wb") as big:
        big.truncate(50_000_000)  # sparse: no disk, but 50 MB to read
    made["not UTF-8"] = agent / "plan-latin.md"
    made["not UTF-8"].write_bytes(b"caf\xe9\n")
    made["outside"] = folder / ".agent" / ".." / ".." / "home" / ".ssh" / "id_rsa"
    made["missing"] = agent / "plan-missing.md"
    try:
        said = {kind: refusal(s01, path, folder) for kind, path in made.items()}
    finally:
        server.close()
    assert said == {
        "fifo": ("refused", f"{made['fifo']}: {SPECIAL}"),
        "socket": ("refused", f"{made['socket']}: {SPECIAL}"),
        "link to a key": ("refused", f"{made['link to a key']}: {LINK}"),
        "link inside": ("refused", f"{made['link inside']}: {LINK}"),
        "link to nowhere": ("refused", f"{made['link to nowhere']}: {LINK}"),
        "a linked folder on the way": ("refused", f"{made['a linked folder on the way']}: {LINK}"),
        "hard link": ("refused", f"{made['hard link']}: {HARD_LINK}"),
        "folder": ("refused", f"{made['folder']}: a folder, not a file"),
        "50 MB": ("refused", f"{made['50 MB']}: larger than 1,000 bytes"),
        "not UTF-8": ("refused", f"{made['not UTF-8']}: not UTF-8 text"),
        "outside": ("refused", f"{made['outside']}: outside {folder}, where it belongs"),
        "missing": ("refused", f"{made['missing']}: No such file or directory"),
    }


def test_the_size_limit_holds_at_its_value_and_not_a_byte_past_it(s01, place):
    folder, _ = place
    path = folder / ".agent" / "settings.json"
    for size, expected in ((999, ("read", "x" * 999)), (1000, ("read", "x" * 1000)),
                           (1001, ("refused", f"{path}: larger than 1,000 bytes"))):
        path.write_text("x" * size)
        assert refusal(s01, path, folder) == expected


def test_a_path_the_user_named_is_read_as_named_links_too_but_never_a_pipe(s01, place):
    folder, outside = place
    named = folder / "my-script.json"
    named.symlink_to(outside / ".ssh" / "id_rsa")  # the user's own choice, on the command line
    fifo = folder / "script.fifo"
    os.mkfifo(fifo)
    assert [refusal(s01, path, None) for path in (named, fifo, folder)] == [
        ("read", "-----BEGIN OPENSSH PRIVATE KEY-----\n"),
        ("refused", f"{fifo}: {SPECIAL}"),
        ("refused", f"{folder}: a folder, not a file"),
    ]


def test_a_folder_that_is_itself_a_link_is_where_the_files_are(s01, place):
    """The folder is resolved first (the workdir may be a link, as /tmp is on macOS): only a
    link below it is refused."""
    folder, outside = place
    (folder / ".agent" / "settings.json").write_text("{}")
    (outside / "work").symlink_to(folder)
    assert refusal(s01, outside / "work" / ".agent" / "settings.json", outside / "work") == (
        "read", "{}")


@pytest.mark.parametrize("kind", ["link to a key", "hard link"])
def test_a_settings_file_that_leads_elsewhere_stops_the_program_with_one_line(place, kind):
    folder, outside = place
    path = folder / ".agent" / "settings.json"
    secret = outside / "settings.json"
    secret.write_text('{"permissions": {"allow": ["bash"]}}')
    if kind == "hard link":
        os.link(secret, path)
    else:
        path.symlink_to(secret)
    run = run_chapter("s03_permissions", "--offline", "--workdir", str(folder), "go")
    reason = HARD_LINK if kind == "hard link" else LINK
    assert (run.returncode, run.stdout, run.stderr) == (
        2, "", f"s03_permissions: {path}: {reason}\n")


def test_a_nul_byte_or_a_folder_that_loops_is_one_line_too(s01, place):
    folder, _ = place
    loop = folder / "loop"
    loop.symlink_to(loop)
    assert [refusal(s01, path, where) for path, where in (
        (str(folder / ".agent" / "a\0b"), folder), (loop / "settings.json", loop))] == [
        ("refused", f"{folder / '.agent' / 'a'}\0b: embedded null byte"),
        ("refused", f"{loop / 'settings.json'}: Too many levels of symbolic links"),
    ]
