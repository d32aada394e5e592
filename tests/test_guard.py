"""s03 on: the permission check cannot be walked past (issue 27, part A).

Each class of trick that once ran unasked is a test here, in every chapter that carries the
PERMISSIONS section: a shortened option, a glob that makes `..`, a path glued to an option,
git's config, a write to a file that gives power (by a file tool or by bash, in every mode),
and a deny rule written another way. Each asserts the exact decision, and the exact question
or refusal. Then a property: every command the allowlist's own grammar makes that
`is_read_only` accepts runs, and no file in the workdir or beside it has changed.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import support
from support import FakeClient, load_chapter, new_session, reply, result, text, tool_use, user

# The guard, from s03 on: what decides (PERMISSIONS and its mechanics), what runs (RUNNING
# BASH SAFELY) and the paths (THE WORKSPACE GUARD), on each chapter that changes one of them.
CHAPTERS = [name for name in support.chapters_that_change(
    "PERMISSIONS", "THE PERMISSION MECHANICS", "RUNNING BASH SAFELY", "THE WORKSPACE GUARD")
    if name >= "s03"]
PLAN_CHAPTERS = [name for name in CHAPTERS if name >= "s06"]

ASK_ONCE = "    [y] yes  [n] no: "
ASK = "    [y] yes  [a] always (saved to .agent/settings.json)  [n] no: "
DEFAULT_ASKS = ("ask", "default mode asks before this")
PLAN_DENIED = ("deny", "Denied: plan mode is on, and bash may change things. Only reading tools "
                       "and read-only bash run now. Finish the plan and submit it with "
                       "exit_plan_mode.")
USER_DENIED = (
    "The user denied this call. Do not try it again as it is; ask the user, or find another way."
)
GIT_WHY = "git runs the programs its config and hooks name"
ENV_WHY = "the next start reads the API key and the endpoint from it"
AGENT_WHY = "the agent's settings, hooks and plans are there"
SETTINGS_WHY = "the file that sets what the agent may do"
START_WHY = "a shell or a tool reads it at start-up, with HOME the workdir"
MADE_UP = ("a file the shell names for it",
           "with $, ` or a glob, it may be .git, .env or another file that gives power")


def decide(chapter, workdir, name, tool_input, **extra):
    session = new_session(chapter, FakeClient(), workdir, **extra)
    return chapter.check_permission(session, name, tool_input)


def bash(chapter, workdir, command, **extra):
    return decide(chapter, workdir, "bash", {"command": command}, **extra)


# ---- read-only: every word accounted for --------------------------------------------

SHORTENED = ["sort --o=out.txt notes.md", "sort -S 1 --compress-prog=sh notes.md",
             "file --comp x", "grep --fil=notes.md x", "ls --al", "wc --line notes.md"]


@pytest.mark.parametrize("command", SHORTENED)
def test_a_shortened_long_option_asks(chapter, tmp_path, command):
    assert bash(chapter, tmp_path, command) == DEFAULT_ASKS


def test_a_shortened_option_that_writes_asks_and_n_writes_nothing(chapter, tmp_path, keyboard,
                                                                  capsys):
    (tmp_path / "notes.md").write_text("b\na\n")
    keyboard.feed("n")
    call = tool_use("toolu_1", "bash", {"command": "sort --o=out.txt notes.md"})
    client = FakeClient(reply(call), reply(text("Done.")))
    session = new_session(chapter, client, tmp_path)

    chapter.run_turn(session, "sort")

    assert keyboard.asked == [ASK]
    assert "  ? allow bash: sort --o=out.txt notes.md" in capsys.readouterr().out.splitlines()
    assert session.messages[2] == user(result("toolu_1", USER_DENIED, is_error=True))
    assert sorted(path.name for path in tmp_path.iterdir()) == ["notes.md"]


MAY_NAME = ("ask", "it changes {}: {}".format(*MADE_UP))  # a glob on a dot name, or a $
GLOBS = {"cat .?/.?/etc/hostname": MAY_NAME, "grep x .?/.?/.?/proc/self/environ": MAY_NAME,
         "cat [.][.]/x": MAY_NAME, "ls ..?": MAY_NAME, "cat {a,b}": MAY_NAME,
         "cat $HOME/x": MAY_NAME, "cat *.txt": DEFAULT_ASKS, "cat ~/x": DEFAULT_ASKS,
         "cat n?tes.md": DEFAULT_ASKS}


def test_a_glob_or_an_expansion_asks(chapter, tmp_path):
    assert {command: bash(chapter, tmp_path, command) for command in GLOBS} == GLOBS


GLUED = ["grep -f/etc/hostname x", "grep -f /etc/hostname x", "grep --file=/etc/hostname x",
         "grep -nf/etc/hostname x", "grep -f../x y", "diff --from-file=/etc/hostname x",
         "cat -- /etc/hostname", "head -n 1 -- ../x"]


def test_a_path_glued_to_an_option_or_after_dashes_is_checked_as_a_path(chapter, tmp_path):
    assert {command: bash(chapter, tmp_path, command) for command in GLUED} == dict.fromkeys(
        GLUED, DEFAULT_ASKS)


def test_a_read_only_command_has_at_most_word_limit_words(chapter, tmp_path):
    words = ["notes.md"] * (chapter.WORD_LIMIT - 1)
    assert [chapter.is_read_only(" ".join(["cat", *words]), tmp_path),
            chapter.is_read_only(" ".join(["cat", *words, "notes.md"]), tmp_path)] == [True, False]


def test_a_path_through_a_symlink_that_leads_out_asks(chapter, tmp_path):
    (tmp_path / "etc").symlink_to("/etc")
    (tmp_path / "patterns").symlink_to("/etc/hostname")
    assert [bash(chapter, tmp_path, command) for command in
            ("cat etc/hostname", "grep -f patterns x", "ls etc")] == [DEFAULT_ASKS] * 3


@pytest.mark.parametrize("name", PLAN_CHAPTERS)
def test_in_plan_mode_none_of_them_runs(name, tmp_path):
    chapter = load_chapter(name)
    tricks = SHORTENED + list(GLOBS) + GLUED + ["git status", "git log"]
    assert {command: bash(chapter, tmp_path, command, plan_mode=True) for command in tricks} == (
        dict.fromkeys(tricks, PLAN_DENIED))


# ---- git is not read-only -------------------------------------------------------------

@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_status_asks_so_a_command_in_the_git_config_never_runs_unasked(chapter, tmp_path,
                                                                          keyboard):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "config", "core.fsmonitor", "touch ran"], cwd=tmp_path, check=True)
    call = tool_use("toolu_1", "bash", {"command": "git status"})
    client = FakeClient(reply(call), reply(text("Done.")))
    session = new_session(chapter, client, tmp_path)

    chapter.run_turn(session, "status")

    assert keyboard.asked == [ASK]  # EOF: no
    assert session.messages[2] == user(result("toolu_1", USER_DENIED, is_error=True))
    assert not (tmp_path / "ran").exists()


# ---- files that give power always ask ------------------------------------------------

POWER_PATHS = {
    ".git/config": GIT_WHY,
    "sub/.git/hooks/pre-commit": GIT_WHY,
    ".env": ENV_WHY,
    ".agent/settings.json": SETTINGS_WHY,
    ".agent/hooks/check.sh": AGENT_WHY,
    ".bashrc": START_WHY,
    ".ssh/authorized_keys": START_WHY,
    ".GIT/config": GIT_WHY,  # on a case-insensitive disk (macOS) this is .git/config
    ".Env": ENV_WHY,
}


@pytest.mark.parametrize("mode", ["default", "accept_edits", "bypass"])
@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
def test_a_file_tool_on_a_file_that_gives_power_asks_in_every_mode(chapter, tmp_path, mode,
                                                                   tool):
    allow_all = {"permissions": {"allow": ["write_file", "edit_file"]}}
    tool_input = {"write_file": {"content": "x"}, "edit_file": {"old_string": "a",
                                                                "new_string": "b"}}[tool]
    decided = {path: decide(chapter, tmp_path, tool, {"path": path, **tool_input}, mode=mode,
                            settings=allow_all) for path in POWER_PATHS}
    assert decided == {path: ("ask", f"it changes {path}: {why}")
                       for path, why in POWER_PATHS.items()}
    # and no more than these: a name that only looks like one is an ordinary file
    assert [decide(chapter, tmp_path, tool, {"path": path, **tool_input}, mode=mode,
                   settings=allow_all) for path in (".gitignore", ".env.example", "src/env")
            ] == [("allow", f"rule {tool!r}")] * 3
    # a deny rule still denies
    deny = {"permissions": {"deny": [f"{tool}(.env)"]}}
    assert decide(chapter, tmp_path, tool, {"path": ".env", **tool_input}, mode=mode,
                  settings=deny) == (
        "deny", f"Denied by the rule '{tool}(.env)' in .agent/settings.json.")


def test_a_path_that_leads_to_git_through_a_symlink_made_earlier_asks(chapter, tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "g").symlink_to(".git")
    assert decide(chapter, tmp_path, "write_file", {"path": "g/config", "content": "x"},
                  mode="bypass") == ("ask", f"it changes .git/config: {GIT_WHY}")


@pytest.mark.parametrize("mode", ["default", "accept_edits", "bypass"])
def test_a_write_to_git_config_asks_shows_why_offers_no_always_and_n_keeps_it(
        chapter, tmp_path, keyboard, capsys, mode):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    keyboard.feed("n")
    tool_input = {"path": ".git/config", "content": "[core]\n\tfsmonitor = touch ran\n"}
    call = tool_use("toolu_1", "write_file", tool_input)
    client = FakeClient(reply(call), reply(text("Done.")))
    session = new_session(chapter, client, tmp_path, mode=mode)

    chapter.run_turn(session, "configure")

    out = capsys.readouterr().out.splitlines()
    start = out.index("  ? allow write_file: .git/config")
    assert out[start + 4:start + 6] == [f"    This call changes .git/config: {GIT_WHY}.", "n"]
    assert keyboard.asked == [ASK_ONCE]
    assert (tmp_path / ".git" / "config").read_text() == "[core]\n"


BASH_POWER = {
    "echo x > .env": (".env", ENV_WHY),
    "echo x > .ENV": (".env", ENV_WHY),
    "echo x > .e''nv": (".env", ENV_WHY),
    'echo x > ".e"nv': (".env", ENV_WHY),
    "echo x > .e\\nv": (".env", ENV_WHY),
    "cd .git && echo x > config": (".git", GIT_WHY),
    "cp evil sub/.git/hooks/pre-commit": (".git", GIT_WHY),
    "echo x >> .bashrc": (".bashrc", START_WHY),
    "tee .agent/settings.json": (".agent/settings.json", SETTINGS_WHY),
    "ln -s .agent a": (".agent", AGENT_WHY),
    "cp x .gi?/config": MADE_UP,
    "touch .e*": MADE_UP,
    "cp x [.]git/config": MADE_UP,
    "echo x > $HOME/.e''nv": (".env", ENV_WHY),
    "echo x > $NAME": MADE_UP,
    "echo x > `echo .env`": (".env", ENV_WHY),
}


@pytest.mark.parametrize("mode", ["default", "accept_edits", "bypass"])
def test_a_bash_command_that_may_change_a_file_that_gives_power_asks_in_every_mode(
        chapter, tmp_path, mode):
    allow_all = {"permissions": {"allow": ["bash"]}}
    assert {command: bash(chapter, tmp_path, command, mode=mode, settings=allow_all)
            for command in BASH_POWER} == {command: ("ask", f"it changes {what}: {why}")
                                           for command, (what, why) in BASH_POWER.items()}
    # reading such a file is no change, and a glob cannot name a dot file unless it says the dot
    by_mode = (("allow", "bypass mode") if mode == "bypass"
               else ("ask", f"{mode} mode asks before this"))
    (tmp_path / ".git").mkdir(exist_ok=True)
    assert [bash(chapter, tmp_path, command, mode=mode, settings=allow_all)
            for command in ("ls .git", "rm *.tmp", "echo x > notes.txt")] == [
        ("allow", "rule 'bash'")] + [by_mode] * 2  # an allow rule covers no glob, no ">"
    # a deny rule still denies
    deny = {"permissions": {"deny": ["bash(*.env*)"]}}
    assert bash(chapter, tmp_path, "echo x > .env", mode=mode, settings=deny) == (
        "deny", "Denied by the rule 'bash(*.env*)' in .agent/settings.json.")


# ---- deny rules see through spellings and wrappers -----------------------------------------

SPELLINGS = ["\\rm -f x", "'rm' -f x", '"rm" -f x', "r''m -f x", "/bin/rm -f x",
             "command rm -f x", "env FOO=1 rm x", "env -i rm x", "env -S 'rm x'", "FOO=1 rm x",
             "exec rm x", "nice -n 5 rm x", "nohup rm x", "time rm x", "timeout 5 rm x",
             "timeout -s KILL 5 rm x", "ls | xargs rm", "ls | xargs -0 -n 1 rm",
             "find . -name x -delete", "find . -exec rm {} ;", "find . -execdir rm -f {} +",
             "sh -c 'ls; rm x'", "bash -c 'rm x'", "nice timeout 5 env A=1 rm x",
             "ls && \\rm x", "ls;'rm' x", "sudo rm x", "busybox rm x", "setsid rm x",
             "stdbuf -o0 rm x", "ionice -c 3 rm x"]
RM_DENIED = ("deny", "Denied by the rule 'bash(rm*)' in .agent/settings.json.")


def test_a_deny_rule_sees_through_quotes_backslashes_and_wrappers(chapter, tmp_path):
    deny = {"permissions": {"deny": ["bash(rm*)"], "allow": ["bash"]}}
    assert {command: bash(chapter, tmp_path, command, mode="bypass", settings=deny)
            for command in SPELLINGS} == dict.fromkeys(SPELLINGS, RM_DENIED)
    # but not through a word that is no command
    assert [bash(chapter, tmp_path, command, settings=deny)
            for command in ("echo rm", "grep rm notes.md")] == [("allow", "rule 'bash'")] * 2


def test_an_ask_rule_sees_through_them_too(chapter, tmp_path):
    rules = {"permissions": {"ask": ["bash(rm*)"], "allow": ["bash"]}}
    assert {command: bash(chapter, tmp_path, command, mode="bypass", settings=rules)
            for command in SPELLINGS} == dict.fromkeys(SPELLINGS, ("ask", "rule 'bash(rm*)'"))


def test_an_allow_rule_covers_one_plain_command_only(chapter, tmp_path):
    allow = {"permissions": {"allow": ["bash(python3 greet.py*)"]}}
    commands = ["python3 greet.py Ada", "python3 greet.py *", "python3 greet.py $(rm x)",
                "python3 greet.py Ada; rm x", "python3 greet.py Ada\nrm x",
                "python3 greet.py Ada > out", "python3 greet.py Ada & rm x"]
    assert [bash(chapter, tmp_path, command, settings=allow)[0] for command in commands] == [
        "allow", "ask", "ask", "ask", "ask", "ask", "ask"]


# ---- the property: what is read-only changes nothing ----------------------------------------

WORDS = ["notes.md", "sub", "sub/b.txt", "link", "inside", "-", "x", "a b", "../outside/secret",
         "/etc/hostname", ".env", "", "1", "+2", "-n", "-x", "--", "--all", "-la", "-o",
         "out.txt", "--output=out.txt", "-fnotes.md", "-f../outside/secret",
         # links made earlier, a hard link to a file outside, folders that hold them
         "hard.md", "d", "d/notes.md", "e", ".", "+1f", "-r", "-e", "secret"]
OPERATORS = [" && ", " || ", "; ", " | "]


def commands(chapter):
    """Commands of the allowlist's own grammar: its programs, their options (a value glued, after
    "=", or the next word), and words that are paths inside, outside, through a link, or none."""
    table = chapter.READ_ONLY

    def quoted(word):
        return f"'{word}'" if " " in word or not word else word

    @st.composite
    def one(draw):
        program = draw(st.sampled_from(sorted(table)))
        words = [program]
        for _ in range(draw(st.integers(0, 3))):
            if table[program] and draw(st.booleans()):
                option = draw(st.sampled_from(sorted(table[program])))
                value = quoted(draw(st.sampled_from(WORDS)))
                if table[program][option] == chapter.FLAG:
                    words.append(option)
                elif option.startswith("--"):
                    words.append(draw(st.sampled_from([f"{option}={value}", f"{option} {value}"])))
                else:
                    words.append(draw(st.sampled_from([f"{option}{value}", f"{option} {value}"])))
            else:
                words.append(quoted(draw(st.sampled_from(WORDS))))
        return " ".join(words)

    @st.composite
    def chain(draw):
        parts = draw(st.lists(one(), min_size=1, max_size=3))
        joined = parts[0]
        for part in parts[1:]:
            joined += draw(st.sampled_from(OPERATORS)) + part
        return joined

    return chain()


def snapshot(root):
    """Every file and folder under root: name, kind, size, mtime, contents."""
    seen = {}
    for folder, names, files in os.walk(root):
        for name in sorted(names + files):
            path = os.path.join(folder, name)
            status = os.lstat(path)
            plain_file = os.path.isfile(path) and not os.path.islink(path)
            content = Path(path).read_bytes() if plain_file else b""
            seen[os.path.relpath(path, root)] = (status.st_mode, status.st_size,
                                                 status.st_mtime_ns, content)
    return seen


@pytest.mark.parametrize("name", [CHAPTERS[0], CHAPTERS[-1]])  # the same code in between
def test_every_command_the_allowlist_accepts_changes_no_file_in_or_beside_the_workdir(
        name, tmp_path_factory):
    chapter = load_chapter(name)
    root = tmp_path_factory.mktemp("guard")
    workdir, outside = root / "work", root / "outside"
    (workdir / "sub").mkdir(parents=True)
    outside.mkdir()
    (workdir / "notes.md").write_text("b\na\nb\n")
    (workdir / "sub" / "b.txt").write_text("b\n")
    (workdir / ".env").write_text("KEY=x\n")
    (outside / "secret").write_text("FROM-OUTSIDE\n")
    (workdir / "link").symlink_to(outside)
    (workdir / "inside").symlink_to("notes.md")
    (workdir / "d").mkdir()
    (workdir / "d" / "notes.md").symlink_to(outside / "secret")
    (workdir / "e").mkdir()
    (workdir / "e" / "notes.md").write_text("e\n")
    os.link(outside / "secret", workdir / "hard.md")
    before = snapshot(root)
    accepted = []
    session = new_session(chapter, FakeClient(), workdir, tool_environment={"HOME": str(workdir)})

    @settings(max_examples=60, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(commands(chapter))
    @example("cat hard.md")  # each read outside, unasked, by the check before issue 37
    @example("diff -u d e")
    @example("grep -r OUTSIDE")
    def property(command):
        if chapter.is_read_only(command, workdir):
            accepted.append(command)
            output = chapter.run_bash(session, command)
            assert snapshot(root) == before, command
            assert "FROM-OUTSIDE" not in output, command  # nothing read from outside

    property()
    assert len(accepted) >= 10  # the grammar reaches commands the check accepts


# ---- reads judged by what is opened (issue 37) ------------------------------------------------

@pytest.fixture
def linked(tmp_path):
    """A workdir with a link made earlier to a file outside, a hard link to it, and a plain
    folder; the file outside says SECRET."""
    work, outside = tmp_path / "work", tmp_path / "outside.txt"
    work.mkdir()
    outside.write_text("SECRET\n")
    (work / "README.md").write_text("hi\n")
    for folder in ("d", "e", "plain"):
        (work / folder).mkdir()
    (work / "d" / "notes.md").symlink_to(outside)
    (work / "e" / "notes.md").write_text("e\n")
    (work / "plain" / "a.txt").write_text("a\n")
    os.link(outside, work / "notes-copy.md")
    return work


LINKED_READS = ["diff d e", "diff -u README.md d", "diff e d", "cat notes-copy.md",
                "grep -r SECRET", "grep -r SECRET .", "grep -rh x d", "wc -l notes-copy.md",
                "cat d/notes.md", "ls d/notes.md",
                # words a program takes as something else
                "tail +1f README.md", "sort +1 README.md", "tail -n 1 +1f"]


@pytest.mark.parametrize("command", LINKED_READS)
def test_a_read_through_a_link_or_a_hard_link_asks_and_plan_mode_refuses_it(
        chapter, linked, command):
    assert bash(chapter, linked, command) == DEFAULT_ASKS
    if chapter.CHAPTER >= "s06":
        assert bash(chapter, linked, command, plan_mode=True) == PLAN_DENIED


def test_read_file_asks_for_a_file_with_a_second_hard_link_or_through_a_link(chapter, linked):
    (linked / "own.md").symlink_to("README.md")
    asks = ("ask", "the path passes a symlink, or the file has another hard link")
    assert [decide(chapter, linked, "read_file", {"path": path})
            for path in ("notes-copy.md", "own.md", "README.md", str(linked / "own.md"))] == [
        asks, asks, ("allow", "changes nothing"), asks]


def test_a_folder_read_into_with_more_names_than_the_limit_asks(chapter, linked, monkeypatch):
    plain = ["diff e plain", "grep -r x plain", "grep -rn x e", "cat README.md", "ls d",
             "tail -n +1 README.md"]
    assert [bash(chapter, linked, command) for command in plain] == [
        ("allow", "changes nothing")] * len(plain)
    monkeypatch.setattr(chapter, "FOLDER_LIMIT", 1)
    (linked / "plain" / "b.txt").write_text("b\n")
    assert bash(chapter, linked, "grep -r x plain") == DEFAULT_ASKS


def test_grep_reads_every_argument_as_a_path_once_e_or_f_gave_the_pattern(chapter, tmp_path):
    # if the first argument were skipped as "the pattern" here, ../outside would be read unasked
    (tmp_path / "notes.md").write_text("x\n")
    assert [bash(chapter, tmp_path, command)[0] for command in (
        "grep -e x ../outside", "grep --regexp=x ../outside", "grep -fnotes.md ../outside",
        "grep -e x notes.md", "grep x notes.md")] == ["ask", "ask", "ask", "allow", "allow"]


# ---- a rule on a file means the file, whatever reads it; secrets ask ---------------------------

@pytest.mark.parametrize("rule, command", [
    ("read_file(.env)", "cat .env"), ("read_file(.env)", "head -c 9 ./.env"),
    ("read_file(.env)", "grep -rh KEY ."), ("read_file(secrets/*)", "grep -r -h KEY secrets"),
    ("read_file(secrets/*)", "cat secrets/k.txt"),
    ("edit_file(notes.md)", "sed -i s/a/b/ notes.md"), ("edit_file(notes.md)", "cp x notes.md"),
    ("read_file(secrets/*)", "env A=1 cat secrets/k.txt"),
])
@pytest.mark.parametrize("mode", ["default", "bypass"])
def test_a_deny_rule_on_a_file_tool_covers_a_bash_command_that_names_the_path(
        chapter, tmp_path, rule, command, mode):
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "k.txt").write_text("KEY\n")
    denied = ("deny", f"Denied by the rule {rule!r} in .agent/settings.json.")
    assert bash(chapter, tmp_path, command, mode=mode,
                settings={"permissions": {"deny": [rule]}}) == denied


SECRET_READS = {
    ("read_file", ".env"): ".env", ("read_file", "./.env.local"): ".env.local",
    ("read_file", ".ssh/id_ed25519"): ".ssh/id_ed25519",
    ("read_file", "certs/a.pem"): "certs/a.pem",
    ("bash", "cat .env"): ".env", ("bash", "head -n 1 ./.ENV"): ".ENV",
    ("bash", "grep KEY .netrc"): ".netrc", ("bash", "cat .aws/credentials"): ".aws/credentials"}


@pytest.mark.parametrize("mode", ["default", "accept_edits", "bypass"])
def test_a_file_that_holds_keys_asks_before_it_is_read_in_every_mode(chapter, tmp_path, mode):
    allow_all = {"permissions": {"allow": ["bash", "read_file"]}}
    field = {"read_file": "path", "bash": "command"}
    assert {call: decide(chapter, tmp_path, call[0], {field[call[0]]: call[1]}, mode=mode,
                         settings=allow_all) for call in SECRET_READS} == {
        call: ("ask", f"it reads {found}: a file that holds keys")
        for call, found in SECRET_READS.items()}


def test_the_question_for_a_secret_says_why_and_offers_no_always(chapter, tmp_path, keyboard,
                                                                  capsys):
    (tmp_path / ".env").write_text("KEY=1\n")
    keyboard.feed("n")
    call = tool_use("toolu_1", "read_file", {"path": ".env"})
    session = new_session(chapter, FakeClient(reply(call), reply(text("Ok."))), tmp_path)
    chapter.run_turn(session, "read it")
    assert keyboard.asked == [ASK_ONCE]
    shown = capsys.readouterr().out.splitlines()
    assert "    This call reads .env: a file that holds keys." in shown


# Read by another spelling: is_read_only does not follow the shell's quotes and backslashes,
# so the power-file check sees a command that may change .env; it asks, and says "reads".
SPELLED_READS = {"cat .e\\nv": ".env", "head -n 1 .e'n'v": ".env", 'grep KEY ".env"': ".env"}
SPELLED_CHANGES = {"cat .e\\nv > x": ".env", "cp .e\\nv x && rm .env": ".env"}


@pytest.mark.parametrize("mode", ["default", "accept_edits", "bypass"])
def test_a_read_of_a_file_that_holds_keys_by_another_spelling_is_asked_as_a_read(
        chapter, tmp_path, keyboard, capsys, mode):
    allow_all = {"permissions": {"allow": ["bash"]}}
    assert {command: bash(chapter, tmp_path, command, mode=mode, settings=allow_all)
            for command in SPELLED_READS | SPELLED_CHANGES} == {
        **{command: ("ask", f"it reads {found}: a file that holds keys")
           for command, found in SPELLED_READS.items()},
        **{command: ("ask", f"it changes {found}: {ENV_WHY}")
           for command, found in SPELLED_CHANGES.items()}}
    (tmp_path / ".env").write_text("KEY=1\n")
    keyboard.feed("n")
    call = tool_use("toolu_1", "bash", {"command": "cat .e\\nv"})
    session = new_session(chapter, FakeClient(reply(call), reply(text("Ok."))), tmp_path,
                          mode=mode, settings=allow_all)
    chapter.run_turn(session, "read it")
    assert keyboard.asked == [ASK_ONCE]
    out = capsys.readouterr().out.splitlines()
    start = out.index("  ? allow bash: cat .e\\nv")
    assert out[start + 1] == "    This call reads .env: a file that holds keys."


@pytest.mark.parametrize("mode", ["default", "accept_edits", "bypass"])
def test_a_command_that_names_a_link_to_a_file_that_holds_keys_asks_in_every_mode(
        chapter, tmp_path, mode):
    """A link made earlier opens what it leads to: naming notes.txt is reading .env."""
    (tmp_path / ".env").write_text("KEY=1\n")
    (tmp_path / "notes.txt").symlink_to(tmp_path / ".env")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "keys").symlink_to("../.env")
    allow_all = {"permissions": {"allow": ["bash"]}}
    assert {command: bash(chapter, tmp_path, command, mode=mode, settings=allow_all)
            for command in ("cat notes.txt", "wc -c sub/keys", "cat ./sub/../notes.txt")} == {
        "cat notes.txt": ("ask", "it reads notes.txt (a link to .env): a file that holds keys"),
        "wc -c sub/keys": ("ask", "it reads sub/keys (a link to .env): a file that holds keys"),
        "cat ./sub/../notes.txt": ("ask", "it reads notes.txt (a link to .env): a file that "
                                          "holds keys")}


# ---- start-up files by rule --------------------------------------------------------------------

DOT_WHY = "a program may read a dot file at the top of HOME when it starts"
CODE_WHY = "the harness runs the code in this folder when it starts"


@pytest.mark.parametrize("mode", ["default", "accept_edits", "bypass"])
def test_a_write_to_a_dot_name_at_the_top_of_home_asks_in_every_mode(chapter, tmp_path, mode):
    home = {"HOME": str(tmp_path)}
    writes = {("write_file", ".lesskey"): ".lesskey", ("edit_file", ".curlrc"): ".curlrc",
              ("bash", "echo x > .wgetrc"): ".wgetrc", ("bash", "cp a .gdbinit"): ".gdbinit",
              ("bash", "echo x > ~/.foorc"): "~/.foorc", ("write_file", ".tool/conf"): ".tool/conf"}
    inputs = {"write_file": lambda path: {"path": path, "content": "x"},
              "edit_file": lambda path: {"path": path, "old_string": "a", "new_string": "b"},
              "bash": lambda command: {"command": command}}
    assert {call: decide(chapter, tmp_path, call[0], inputs[call[0]](call[1]), mode=mode,
                         tool_environment=home)
            for call in writes} == {call: ("ask", f"it changes {what}: {DOT_WHY}")
                                    for call, what in writes.items()}
    assert decide(chapter, tmp_path, "write_file", {"path": "sub/.x", "content": "x"},
                  mode="bypass", tool_environment=home) == ("allow", "bypass mode")


@pytest.mark.parametrize("mode", ["accept_edits", "bypass"])
def test_a_write_to_the_harness_code_asks_when_the_workdir_holds_the_chapter(chapter, mode):
    workdir = chapter.HERE.parent  # the checkout, the live default when run from its root
    folder = chapter.HERE.name
    for path in (f"{folder}/code.py", f"{folder}/readline.py"):
        assert decide(chapter, workdir, "write_file", {"path": path, "content": "x"},
                      mode=mode) == ("ask", f"it changes {path}: {CODE_WHY}")


# ---- each spelling of an option's value that the guard accepts --------------------------------

OPTION_SPELLINGS = {
    "head -n5 notes.md": ([("-n", "5")], ["notes.md"]),
    "head -n 5 notes.md": ([("-n", "5")], ["notes.md"]),
    "head --lines=5 notes.md": ([("--lines", "5")], ["notes.md"]),
    "head --lines 5 notes.md": ([("--lines", "5")], ["notes.md"]),
    "grep -nm3 x notes.md": ([("-n", None), ("-m", "3")], ["x", "notes.md"]),
    "grep -nm 3 x notes.md": ([("-n", None), ("-m", "3")], ["x", "notes.md"]),
    "ls -la": ([("-l", None), ("-a", None)], []),
    "cat -- -n": ([], ["-n"]),
    "cat - notes.md": ([], ["-", "notes.md"]),
    "head -n": None,  # a value missing
    "head --lines": None,
    "wc --lines=5 notes.md": None,  # a flag given a value
    "ls -lZ": None,  # an option not listed
}


def test_each_spelling_of_an_option_and_its_value_is_read_as_one(chapter):
    assert {command: chapter.parse_options(command.split()[1:],
                                           chapter.READ_ONLY[command.split()[0]])
            for command in OPTION_SPELLINGS} == OPTION_SPELLINGS


PATH_SPELLINGS = ["grep -f{} x", "grep -f {} x", "grep --file={} x", "grep --file {} x",
                  "grep -nf{} x", "grep -e x {}", "grep -- x {}"]


def test_a_path_is_checked_as_a_path_in_each_spelling_of_its_option(chapter, tmp_path):
    (tmp_path / "notes.md").write_text("x\n")
    assert {spelling: [chapter.is_read_only(spelling.format(path), tmp_path)
                       for path in ("notes.md", "/etc/hostname", "../x")]
            for spelling in PATH_SPELLINGS} == dict.fromkeys(PATH_SPELLINGS, [True, False, False])


# ---- a file that gives power glued to a short option, or globbed without a dot ---------------

GUESS = " if {} (not all its letters are known here)"  # a name that is one of two readings

GLUED_POWER = {
    "sort -o.agent/settings.json notes.txt": (".agent/settings.json", SETTINGS_WHY),
    "sort -o.git/config notes.txt": (".git", GIT_WHY),
    "sort -o./.git/config notes.txt": (".git", GIT_WHY),
    "sort -ro.git/config notes.txt": (".git", GIT_WHY),
    "sort --output=.git/config notes.txt": (".git", GIT_WHY),
    "sort -o .git/config notes.txt": (".git", GIT_WHY),
    "sort -o.bashrc notes.txt": (".bashrc", START_WHY),
    "sort -o~/.bashrc notes.txt": (".bashrc", START_WHY),
    "sort -o.wgetrc notes.txt": (".wgetrc", DOT_WHY),
}
GLUED_BY_KEY = {  # the keys a later chapter adds; sort lists no -o, -A, -G...: -S may take .md
    "agents.md": {"sort -oAGENTS.md notes.txt": GUESS.format("-oAGENTS.md means -o AGENTS.md"),
                  'sort -o"AGENTS.md" notes.txt': GUESS.format("-oAGENTS.md means -o AGENTS.md"),
                  "sort -roAGENTS.md notes.txt": GUESS.format(
                      "-roAGENTS.md means -ro AGENTS.md")},
    ".mcp.json": {"sort -o.mcp.json notes.txt": ""},
}


@pytest.mark.parametrize("mode", ["default", "bypass"])
def test_a_file_that_gives_power_glued_to_a_short_option_asks_in_every_mode(chapter, tmp_path,
                                                                             mode):
    glued = {command: ("ask", f"it changes {what}: {why}")
             for command, (what, why) in GLUED_POWER.items()}
    glued.update({command: ("ask", f"it changes {key}{guess}: {chapter.POWER_FILES[key]}")
                  for key, commands in GLUED_BY_KEY.items() if key in chapter.POWER_FILES
                  for command, guess in commands.items()})
    # an allow rule does not let it through either; a name that only ends in one is no such file
    glued.update({"sort -onotes.txt notes.txt": ("allow", "rule 'bash(sort *)'"),
                  "sort -rosorted.txt notes.txt": ("allow", "rule 'bash(sort *)'"),
                  "sort -o myAGENTS.md notes.txt": ("allow", "rule 'bash(sort *)'")})
    allow = {"permissions": {"allow": ["bash(sort *)"]}}
    assert {command: bash(chapter, tmp_path, command, mode=mode, settings=allow,
                          tool_environment={"HOME": str(tmp_path)})
            for command in glued} == glued


# Which letter of a cluster takes the rest as its value is the program's to say: sort's -r and
# -n are flags and its -o takes a file, so -ro.wgetrc writes .wgetrc (it ran unasked in bypass
# mode, read as o.wgetrc). A name after any letter not listed as a flag is the target.
CLUSTERS = {
    "sort -ro.wgetrc notes.txt": (".wgetrc", DOT_WHY),
    "sort -rno.lesskey notes.txt": (".lesskey", DOT_WHY),
    "sort -rno.bashrc notes.txt": (".bashrc", START_WHY),
    "sort -ro .wgetrc notes.txt": (".wgetrc", DOT_WHY),
    "sort -ro~/.wgetrc notes.txt": ("~/.wgetrc", DOT_WHY),
    "sort -so.wgetrc notes.txt": (".wgetrc" + GUESS.format("-so.wgetrc means -so .wgetrc"),
                                  DOT_WHY),  # -s is sort's, and not listed: it may take the rest
    "timeout 5 sort -ro.wgetrc notes.txt": (".wgetrc", DOT_WHY),
    # read as sort too (the path dropped, as for a deny rule): -r is a flag there
    "/usr/bin/sort -ro.wgetrc notes.txt": (".wgetrc", DOT_WHY),
    "/opt/bin/foo -ro.wgetrc notes.txt": (".wgetrc" + GUESS.format("-ro.wgetrc means -ro .wgetrc"),
                                          DOT_WHY),  # no list: every letter may
    f"sort -{'r' * 1000}o.wgetrc notes.txt": (".wgetrc", DOT_WHY),
    "foo -ro/../.wgetrc notes.txt": (".wgetrc", DOT_WHY),  # o/../.wgetrc is .wgetrc
    "sort -rosorted.txt notes.txt": None,  # o takes sorted.txt; else -t takes ed.txt
    "sort -rk1o.wgetrc notes.txt": None,  # -k takes 1o.wgetrc
    "sort -rn notes.txt": None,
}


@pytest.mark.parametrize("command", list(CLUSTERS))
def test_a_name_glued_after_any_letter_of_a_cluster_that_may_take_it_asks_in_bypass_mode(
        chapter, tmp_path, command):
    what = CLUSTERS[command]
    assert bash(chapter, tmp_path, command, mode="bypass",
                tool_environment={"HOME": str(tmp_path)}) == (
        ("ask", f"it changes {what[0]}: {what[1]}") if what else ("allow", "bypass mode"))


# The name is said as a fact only where it is one: a program with no list may take the rest
# after another letter (gcc -ofoo.o writes foo.o). Still asked, and a sure name comes first.
GUESSED = {
    "gcc -ofoo.o x.c": (".o" + GUESS.format("-ofoo.o means -ofoo .o"), DOT_WHY),
    "pip install -rrequirements.txt": (
        ".txt" + GUESS.format("-rrequirements.txt means -rrequirements .txt"), DOT_WHY),
    "foo -ro~/.wgetrc": ("~/.wgetrc" + GUESS.format("-ro~/.wgetrc means -ro ~/.wgetrc"), DOT_WHY),
    "gcc -ofoo.o .zz": (".zz", DOT_WHY),  # named for sure: before .o, the guess
    "cp a .zz; gcc -ofoo.o": (".zz", DOT_WHY),
    "gcc -ofoo.o .o": (".o", DOT_WHY),  # the same name, once for sure
    "gcc -o.o x.c": (".o", DOT_WHY),  # one letter: whichever takes the rest, it is .o
    "gcc -ofoo.o -o.git": (".git", GIT_WHY),
    "gcc -ofoo.o -o.bashrc": (".bashrc", START_WHY),
    # a key of POWER_FILES too: guessed when only a cluster's reading names it, sure elsewhere
    "gcc -ofoo.git x.c": (".git" + GUESS.format("-ofoo.git means -ofoo .git"), GIT_WHY),
    "gcc -ofoo.git/config x.c": (
        ".git" + GUESS.format("-ofoo.git/config means -ofoo .git/config"), GIT_WHY),
    "gcc -ofoo.git .zz": (".zz", DOT_WHY),  # sure, from the other list: before .git, the guess
    "gcc -ofoo.git -o.bashrc": (".bashrc", START_WHY),
    "gcc -ofoo.git .git": (".git", GIT_WHY),
    "sort -o.git x": (".git", GIT_WHY),
    "cp x .git": (".git", GIT_WHY),
}
GUESSED_BY_KEY = {  # the keys a later chapter adds
    "agents.md": {"cp x AGENTS.md": "agents.md", "gcc -ofooAGENTS.md AGENTS.md": "agents.md",
                  "gcc -ofooAGENTS.md x.c": "agents.md" + GUESS.format(
                      "-ofooAGENTS.md means -ofoo AGENTS.md"),
                  "gcc -ofooAGENTS.md .zz": ".zz"},
}


def test_a_name_that_is_one_reading_of_a_cluster_is_asked_as_one(chapter, tmp_path):
    assert {command: bash(chapter, tmp_path, command, mode="bypass",
                          tool_environment={"HOME": str(tmp_path)}) for command in GUESSED} == {
        command: ("ask", f"it changes {what}: {why}") for command, (what, why) in GUESSED.items()}


def test_a_key_added_later_that_is_one_reading_of_a_cluster_is_asked_as_one(chapter, tmp_path):
    keys = {key: commands for key, commands in GUESSED_BY_KEY.items() if key in chapter.POWER_FILES}
    guessed = {command: ("ask", f"it changes {what}: "
                                + (DOT_WHY if what == ".zz" else chapter.POWER_FILES[key]))
               for key, commands in keys.items() for command, what in commands.items()}
    assert {command: bash(chapter, tmp_path, command, mode="bypass",
                          tool_environment={"HOME": str(tmp_path)})
            for command in guessed} == guessed


GLOB_POWER = {  # a glob without a leading dot, and the keys of POWER_FILES it may match
    "cp notes.txt AGENTS.m?": {"agents.md"}, "sed -i s/a/b/ *.md": {"agents.md", "skill.md"},
    "cp x AGENT*": {"agents.md"}, "cp x agents.[m]d": {"agents.md"},
    "rm *": {"agents.md", "skill.md"}, "cp x skills/pdf/SKILL.*": {"skill.md"},
    "echo x>AGENTS.m?": {"agents.md"}, "rm *.tmp": set(),
}


@pytest.mark.parametrize("mode", ["default", "bypass"])
def test_a_glob_that_may_match_a_file_that_gives_power_asks_in_every_mode(chapter, tmp_path,
                                                                          mode):
    by_mode = ("allow", "bypass mode") if mode == "bypass" else DEFAULT_ASKS
    assert {command: bash(chapter, tmp_path, command, mode=mode) for command in GLOB_POWER} == {
        command: MAY_NAME if keys & set(chapter.POWER_FILES) else by_mode
        for command, keys in GLOB_POWER.items()}
