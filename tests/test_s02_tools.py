"""s02_tools: the dispatch map, the file tools and the workspace guard.

The loop itself is tested for s02 as well in test_s01_loop.py (its CHAPTERS).
Here: what s02 adds. Every tool result is compared whole, text and is_error.
"""

import json
import os
import stat

import httpx2
import pytest

from support import (
    WIRE_KEY,
    FakeClient,
    assistant,
    load_chapter,
    new_session,
    read_trace,
    reply,
    request,
    result,
    sent_key,
    text,
    tool_use,
    user,
    wire_client,
)


@pytest.fixture
def s02():
    return load_chapter("s02_tools")


@pytest.fixture
def work(tmp_path):
    """An empty workdir, with a folder beside it that the tools must never reach."""
    (tmp_path / "work").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("the secret\n")
    return tmp_path / "work"


def run(s02, workdir, name, tool_input):
    """One tool call, as the loop makes it (dispatch, input check, handler)."""
    session = new_session(s02, FakeClient(), workdir)
    return s02.run_tool(session, tool_use("toolu_1", name, tool_input))


def ok(content):
    return result("toolu_1", content)


def error(content):
    return result("toolu_1", content, is_error=True)


def listing(folder):
    """Every path under folder, relative, sorted: shows leftovers such as temporary files."""
    return sorted(path.relative_to(folder).as_posix() for path in folder.rglob("*"))


# ======================================================================
# The dispatch map and input checks
# ======================================================================

def test_unknown_tool_is_an_error_listing_the_tools(s02, work):
    call = tool_use("toolu_1", "delete_file", {"path": "a.txt"})
    client = FakeClient(reply(call), reply(text("I'll do without.")))
    session = new_session(s02, client, work)

    s02.run_turn(session, "go")

    history = [
        user(text("go")),
        assistant(call),
        user(
            result(
                "toolu_1",
                "There is no tool named 'delete_file'. The tools are: bash, read_file, write_file, "
                "edit_file, glob.",
                is_error=True,
            )
        ),
    ]
    assert client.calls == [request(s02, session, history[:1]), request(s02, session, history)]
    assert session.messages == history + [assistant(text("I'll do without."))]


def test_the_tools_sent_to_the_model_are_bash_and_the_four_file_tools(s02):
    assert [tool["name"] for tool in s02.TOOLS] == [
        "bash",
        "read_file",
        "write_file",
        "edit_file",
        "glob",
    ]
    assert list(s02.TOOL_HANDLERS) == ["bash", "read_file", "write_file", "edit_file", "glob"]
    assert {tool["name"]: tool["input_schema"]["required"] for tool in s02.TOOLS} == {
        "bash": ["command"], "read_file": ["path"], "write_file": ["path", "content"],
        "edit_file": ["path", "old_string", "new_string"], "glob": ["pattern"]}


@pytest.mark.parametrize(
    "name, tool_input, message",
    [
        ("read_file", {}, "read_file needs the field 'path'."),
        ("read_file", {"path": 5}, "The field 'path' of read_file must be of type string."),
        (
            "read_file",
            {"path": "a.txt", "offset": "2"},
            "The field 'offset' of read_file must be of type integer.",
        ),
        (
            "read_file",
            {"path": "a.txt", "limit": True},
            "The field 'limit' of read_file must be of type integer.",
        ),
        (
            "read_file",
            {"path": "a.txt", "lines": 3},
            "read_file has no field 'lines'. Its fields: path, offset, limit.",
        ),
        ("write_file", {"path": "a.txt"}, "write_file needs the field 'content'."),
        (
            "write_file",
            {"path": "a.txt", "content": None},
            "The field 'content' of write_file must be of type string.",
        ),
        (
            "edit_file",
            {"path": "a.txt", "old_string": "a"},
            "edit_file needs the field 'new_string'.",
        ),
        (
            "edit_file",
            {"path": "a.txt", "old_string": "a", "new_string": "b", "replace_all": "yes"},
            "The field 'replace_all' of edit_file must be of type boolean.",
        ),
        ("glob", {"pattern": "*", "path": "."}, "glob has no field 'path'. Its fields: pattern."),
        ("glob", "*.py", "The input of glob must be a JSON object."),
    ],
)
def test_bad_file_tool_input_is_an_error_and_touches_nothing(s02, work, name, tool_input, message):
    (work / "a.txt").write_text("a\n")

    assert run(s02, work, name, tool_input) == error(message)
    assert (work / "a.txt").read_text() == "a\n"
    assert listing(work) == ["a.txt"]


# ======================================================================
# read_file
# ======================================================================

def test_read_file_numbers_the_lines_from_one(s02, work):
    (work / "a.txt").write_text("alpha\nbeta\n\ngamma")

    assert run(s02, work, "read_file", {"path": "a.txt"}) == ok(
        "     1\talpha\n     2\tbeta\n     3\t\n     4\tgamma")


def test_read_file_offset_and_limit_read_a_part_and_say_where_to_go_on(s02, work):
    (work / "five.txt").write_text("".join(f"line {n}\n" for n in range(1, 6)))

    assert run(s02, work, "read_file", {"path": "five.txt", "offset": 2, "limit": 2}) == ok(
        "     2\tline 2\n     3\tline 3\n(2 more lines; read on with offset=4)")
    assert run(s02, work, "read_file", {"path": "five.txt", "offset": 4}) == ok(
        "     4\tline 4\n     5\tline 5")
    assert run(s02, work, "read_file", {"path": "five.txt", "offset": 5, "limit": 10}) == ok(
        "     5\tline 5")


def test_read_file_without_a_limit_stops_at_2000_lines(s02, work):
    (work / "long.txt").write_text("".join(f"{n}\n" for n in range(1, 2003)))

    expected = (
        "\n".join(f"{n:>6}\t{n}" for n in range(1, 2001))
        + "\n(2 more lines; read on with offset=2001)"
    )
    assert run(s02, work, "read_file", {"path": "long.txt"}) == ok(expected)


def test_read_file_past_the_end_is_an_error_that_says_how_long_the_file_is(s02, work):
    (work / "five.txt").write_text("1\n2\n3\n4\n5\n")

    assert run(s02, work, "read_file", {"path": "five.txt", "offset": 6}) == error(
        "five.txt has 5 lines; offset 6 is past the end.")


@pytest.mark.parametrize("tool_input", [{"offset": 0}, {"offset": -3}, {"limit": 0}])
def test_read_file_offset_and_limit_below_one_are_errors(s02, work, tool_input):
    (work / "a.txt").write_text("a\n")

    assert run(s02, work, "read_file", {"path": "a.txt", **tool_input}) == error(
        "offset and limit must be 1 or more (offset counts lines from 1).")


def test_read_file_of_an_empty_file_says_it_is_empty(s02, work):
    (work / "empty.txt").write_text("")

    assert run(s02, work, "read_file", {"path": "empty.txt"}) == ok("(empty.txt is empty)")


def test_read_file_of_a_folder_points_to_glob(s02, work):
    (work / "src").mkdir()

    assert run(s02, work, "read_file", {"path": "src"}) == error(
        "src is a folder. Use glob or bash ls to list it."
    )


def test_read_file_of_a_missing_file_is_an_error(s02, work):
    assert run(s02, work, "read_file", {"path": "nope.txt"}) == error(
        "Cannot read nope.txt: No such file or directory.")


def test_read_file_counts_only_newlines_as_line_ends(s02, work):
    (work / "page.c").write_text("int a;\f\nint b;\u2028int c;\n")

    assert run(s02, work, "read_file", {"path": "page.c"}) == ok(
        "     1\tint a;\f\n     2\tint b;\u2028int c;"
    )


# ======================================================================
# write_file
# ======================================================================

def test_write_file_creates_the_file_and_missing_folders(s02, work):
    assert run(s02, work, "write_file", {"path": "a/b/c.txt", "content": "hello\n"}) == ok(
        "Created a/b/c.txt (6 characters).")
    assert (work / "a" / "b" / "c.txt").read_text() == "hello\n"
    assert listing(work) == ["a", "a/b", "a/b/c.txt"]  # no temporary file left beside it


def test_write_file_over_an_existing_file_says_it_overwrote_it(s02, work):
    (work / "notes.txt").write_text("old text\n")

    assert run(s02, work, "write_file", {"path": "notes.txt", "content": "new"}) == ok(
        "Overwrote notes.txt (3 characters).")
    assert (work / "notes.txt").read_text() == "new"
    assert listing(work) == ["notes.txt"]


def test_write_file_with_an_absolute_path_inside_reports_the_relative_one(s02, work):
    target = work.resolve() / "sub" / "x.txt"

    assert run(s02, work, "write_file", {"path": str(target), "content": ""}) == ok(
        "Created sub/x.txt (0 characters).")
    assert target.read_text() == ""


def test_write_file_that_fails_midway_keeps_the_old_file_and_leaves_no_temporary_file(s02, work):
    # A lone surrogate (valid in JSON, not in UTF-8) fails while the content is
    # being written: the old file must be untouched and the temporary file gone.
    (work / "notes.txt").write_text("keep me\n")

    assert run(s02, work, "write_file", {"path": "notes.txt", "content": "ok \ud800"}) == error(
        "The tool failed: UnicodeEncodeError: 'utf-8' codec can't encode character '\\ud800' in "
        "position 3: "
        "surrogates not allowed"
    )
    assert (work / "notes.txt").read_text() == "keep me\n"
    assert listing(work) == ["notes.txt"]


def test_write_file_onto_a_folder_is_an_error_and_leaves_no_temporary_file(s02, work):
    (work / "src").mkdir()

    assert run(s02, work, "write_file", {"path": "src", "content": "x"}) == error(
        "src is a folder. write_file needs the path of a file."
    )
    assert listing(work) == ["src"]


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_write_file_creates_files_with_the_usual_permissions(s02, work):
    run(s02, work, "write_file", {"path": "new.txt", "content": "x"})

    assert stat.S_IMODE((work / "new.txt").stat().st_mode) == 0o666 & ~current_umask()


# ======================================================================
# edit_file
# ======================================================================

def test_edit_file_replaces_the_one_occurrence(s02, work):
    (work / "greet.py").write_text('def greet(name):\n    return "Hello, " + name\n')

    assert run(s02, work, "edit_file", {"path": "greet.py", "old_string": '"Hello, " + name',
                                        "new_string": '"Hello, " + name + "!"'}) == ok(
        "Replaced 1 occurrence in greet.py.")
    assert (
        work / "greet.py"
    ).read_text() == 'def greet(name):\n    return "Hello, " + name + "!"\n'
    assert listing(work) == ["greet.py"]


def test_edit_file_with_text_that_is_not_there_changes_nothing(s02, work):
    (work / "a.txt").write_text("one two\n")

    assert run(
        s02, work, "edit_file", {"path": "a.txt", "old_string": "three", "new_string": "3"}
    ) == error("old_string was not found in a.txt. Read the file and copy the text exactly.")
    assert (work / "a.txt").read_text() == "one two\n"


def test_edit_file_with_text_found_several_times_asks_for_context_and_changes_nothing(s02, work):
    (work / "a.txt").write_text("x = 1\nx = 1\nx = 1\n")

    assert run(
        s02, work, "edit_file", {"path": "a.txt", "old_string": "x = 1", "new_string": "x = 2"}
    ) == error(
        "old_string occurs 3 times in a.txt. Add context to make it unique, or set replace_all."
    )
    assert (work / "a.txt").read_text() == "x = 1\nx = 1\nx = 1\n"


def test_edit_file_replace_all_replaces_every_occurrence(s02, work):
    (work / "a.txt").write_text("x = 1\nx = 1\nx = 1\n")

    assert run(
        s02,
        work,
        "edit_file",
        {"path": "a.txt", "old_string": "x = 1", "new_string": "x = 2", "replace_all": True},
    ) == ok("Replaced 3 occurrences in a.txt.")
    assert (work / "a.txt").read_text() == "x = 2\nx = 2\nx = 2\n"


def test_edit_file_replace_all_with_one_occurrence_says_one(s02, work):
    (work / "sub").mkdir()
    (work / "sub" / "a.txt").write_text("only once\n")

    assert run(
        s02,
        work,
        "edit_file",
        {"path": "sub/a.txt", "old_string": "once", "new_string": "twice", "replace_all": True},
    ) == ok("Replaced 1 occurrence in sub/a.txt.")
    assert (work / "sub" / "a.txt").read_text() == "only twice\n"


def test_edit_file_with_an_empty_old_string_points_to_write_file(s02, work):
    (work / "a.txt").write_text("text\n")

    assert run(
        s02, work, "edit_file", {"path": "a.txt", "old_string": "", "new_string": "x"}
    ) == error("old_string is empty. To create a file, use write_file.")
    assert (work / "a.txt").read_text() == "text\n"


def test_edit_file_with_the_same_old_and_new_string_is_an_error(s02, work):
    (work / "a.txt").write_text("text\n")

    assert run(
        s02, work, "edit_file", {"path": "a.txt", "old_string": "text", "new_string": "text"}
    ) == error("old_string and new_string are the same: nothing would change.")


def test_edit_file_of_a_missing_file_is_an_error(s02, work):
    assert run(
        s02, work, "edit_file", {"path": "nope.txt", "old_string": "a", "new_string": "b"}
    ) == error("Cannot read nope.txt: No such file or directory.")
    assert listing(work) == []


def test_edit_file_keeps_windows_line_endings(s02, work):
    (work / "win.txt").write_bytes(b"one\r\ntwo\r\n")

    assert run(
        s02, work, "edit_file", {"path": "win.txt", "old_string": "one", "new_string": "uno"}
    ) == ok("Replaced 1 occurrence in win.txt.")
    assert (work / "win.txt").read_bytes() == b"uno\r\ntwo\r\n"


def test_edit_file_across_lines_of_a_windows_file(s02, work):
    (work / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    assert run(s02, work, "read_file", {"path": "win.txt"}) == ok(
        "     1\tone\n     2\ttwo\n     3\tthree"
    )

    assert run(
        s02,
        work,
        "edit_file",
        {"path": "win.txt", "old_string": "one\ntwo", "new_string": "uno\ndos"},
    ) == ok("Replaced 1 occurrence in win.txt.")
    assert (work / "win.txt").read_bytes() == b"uno\r\ndos\r\nthree\r\n"


def test_edit_file_keeps_the_file_mode(s02, work):
    script = work / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)

    run(s02, work, "edit_file", {"path": "run.sh", "old_string": "hi", "new_string": "hello"})

    assert stat.S_IMODE(script.stat().st_mode) == 0o755


# ======================================================================
# glob
# ======================================================================

def test_glob_lists_matching_files_sorted_and_relative(s02, work):
    for name in ["b.py", "a.py", "src/c.py", "src/d.txt", "src/deep/e.py"]:
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text("")
    (work / "folder.py").mkdir()  # a folder whose name matches is not a file

    assert run(s02, work, "glob", {"pattern": "**/*.py"}) == ok(
        "a.py\nb.py\nsrc/c.py\nsrc/deep/e.py"
    )
    assert run(s02, work, "glob", {"pattern": "src/*"}) == ok("src/c.py\nsrc/d.txt")


def test_glob_shows_at_most_the_limit_and_says_how_many_more(s02, work, monkeypatch):
    monkeypatch.setattr(s02, "GLOB_LIMIT", 3)
    for n in range(5, 0, -1):
        (work / f"f{n}.txt").write_text("")

    assert run(s02, work, "glob", {"pattern": "*.txt"}) == ok(
        "f1.txt\nf2.txt\nf3.txt\n(2 more not shown)"
    )


def test_glob_with_no_match_says_so(s02, work):
    (work / "a.py").write_text("")

    assert run(s02, work, "glob", {"pattern": "*.rs"}) == ok("No files match '*.rs'.")


def test_glob_skips_files_that_symlinks_lead_outside_to(s02, work):
    outside = work.parent / "outside"
    (work / "own.txt").write_text("")
    (work / "leak.txt").symlink_to(outside / "secret.txt")
    (work / "out").symlink_to(outside, target_is_directory=True)

    assert run(s02, work, "glob", {"pattern": "**/*.txt"}) == ok("own.txt")
    assert run(s02, work, "glob", {"pattern": "*"}) == ok("own.txt")


@pytest.mark.parametrize(
    "pattern, message",
    [
        ("/etc/*", "Refused: the pattern must be relative to the working directory."),
        ("../*", "Refused: '../*' contains '..'. Paths stay inside the working directory."),
        (
            "src/../../*",
            "Refused: 'src/../../*' contains '..'. Paths stay inside the working directory.",
        ),
        ("~/*", "Refused: '~/*' starts with '~'. Use a path relative to the working directory."),
        ("out/*", "Refused: 'out/*' is outside the working directory."),
    ],
)
def test_glob_patterns_that_lead_out_are_refused(s02, work, pattern, message):
    (work / "out").symlink_to(work.parent / "outside", target_is_directory=True)

    assert run(s02, work, "glob", {"pattern": pattern}) == error(message)


def test_glob_lists_a_symlink_inside_the_workdir_under_its_own_name(s02, work):
    (work / "a.py").write_text("")
    (work / "link.py").symlink_to("a.py")

    assert run(s02, work, "glob", {"pattern": "*.py"}) == ok("a.py\nlink.py")


# ======================================================================
# The workspace guard
# ======================================================================

@pytest.fixture
def guarded(work):
    """A workdir with a file, a folder, and symlinks that lead out or stay in."""
    outside = work.parent / "outside"
    (work / "notes.txt").write_text("inside\n")
    (work / "src").mkdir()
    (work / "leak.txt").symlink_to("../outside/secret.txt")  # relative link out
    (work / "out").symlink_to(outside, target_is_directory=True)  # absolute link to a folder out
    (work / "chain1.txt").symlink_to("chain2.txt")  # a chain: in, in, then out
    (work / "chain2.txt").symlink_to(work / "src" / "chain3.txt")
    (work / "src" / "chain3.txt").symlink_to(outside / "secret.txt")
    (work / "alias.txt").symlink_to("notes.txt")  # a link that stays inside
    return work


OUTSIDE = "Refused: {path!r} is outside the working directory."
DOTDOT = "Refused: {path!r} contains '..'. Paths stay inside the working directory."
TILDE = "Refused: {path!r} starts with '~'. Use a path relative to the working directory."


@pytest.mark.parametrize("path, message", [
    ("../outside/secret.txt", DOTDOT),
    ("src/../../outside/secret.txt", DOTDOT),
    ("src/../notes.txt", DOTDOT),  # even when it would end up inside: no '..' at all
    ("{outside}/secret.txt", OUTSIDE),
    ("/etc/passwd", OUTSIDE),
    ("~/secret.txt", TILDE),
    ("~", TILDE),
    ("notes.txt\0.png", "Refused: the path contains a NUL byte."),
    ("leak.txt", OUTSIDE),
    ("out/secret.txt", OUTSIDE),
    ("chain1.txt", OUTSIDE),
    ("", "A path must be a non-empty string."),
    ("   ", "A path must be a non-empty string."),
])
def test_guard_refuses_paths_that_lead_out(s02, guarded, path, message):
    path = path.format(outside=guarded.parent / "outside")

    assert run(s02, guarded, "read_file", {"path": path}) == error(message.format(path=path))


@pytest.mark.parametrize("path", ["notes.txt", "./notes.txt", "{work}/notes.txt", "alias.txt"])
def test_guard_allows_paths_inside_including_absolute_ones_and_links_that_stay_in(
    s02, guarded, path
):
    path = path.format(work=guarded.resolve())

    assert run(s02, guarded, "read_file", {"path": path}) == ok("     1\tinside")


@pytest.mark.parametrize("name, tool_input, message", [
    ("write_file", {"path": "leak.txt", "content": "overwritten"}, OUTSIDE),
    ("write_file", {"path": "out/new.txt", "content": "planted"}, OUTSIDE),
    ("write_file", {"path": "chain1.txt", "content": "overwritten"}, OUTSIDE),
    ("write_file", {"path": "../outside/new.txt", "content": "planted"}, DOTDOT),
    ("write_file", {"path": "{outside}/new.txt", "content": "planted"}, OUTSIDE),
    ("edit_file", {"path": "leak.txt", "old_string": "secret", "new_string": "public"}, OUTSIDE),
    ("edit_file", {"path": "chain1.txt", "old_string": "secret", "new_string": "public"}, OUTSIDE),
])
def test_guard_keeps_writes_and_edits_from_changing_anything_outside(
    s02, guarded, name, tool_input, message
):
    outside = guarded.parent / "outside"
    path = tool_input["path"].format(outside=outside)

    assert run(s02, guarded, name, {**tool_input, "path": path}) == error(message.format(path=path))
    assert listing(outside) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "the secret\n"


# ======================================================================
# The file tools in the loop, and on the wire
# ======================================================================

def test_a_turn_with_file_tools_writes_reads_and_edits_with_exact_results(s02, work):
    first_calls = [
        tool_use("toolu_1", "write_file", {"path": "src/app.py", "content": "print('hi')\n"}),
        tool_use("toolu_2", "read_file", {"path": "src/app.py"}),
        tool_use("toolu_3", "read_file", {"path": "../outside/secret.txt"}),
    ]
    second_calls = [tool_use("toolu_4", "edit_file", {"path": "src/app.py", "old_string": "hi",
                                                      "new_string": "hello"}),
                    tool_use("toolu_5", "glob", {"pattern": "**/*.py"}),
                    tool_use("toolu_6", "bash", {"command": "python3 src/app.py"})]
    client = FakeClient(
        reply(text("Writing it."), *first_calls), reply(*second_calls), reply(text("Done."))
    )
    session = new_session(s02, client, work)

    assert s02.run_turn(session, "make an app") is True

    one = [user(text("make an app"))]
    two = one + [assistant(text("Writing it."), *first_calls), user(
        result("toolu_1", "Created src/app.py (12 characters)."),
        result("toolu_2", "     1\tprint('hi')"),
        result("toolu_3", DOTDOT.format(path="../outside/secret.txt"), is_error=True))]
    three = two + [assistant(*second_calls), user(
        result("toolu_4", "Replaced 1 occurrence in src/app.py."),
        result("toolu_5", "src/app.py"),
        result("toolu_6", "hello\n[exit code: 0]"))]
    assert client.calls == [
        request(s02, session, one),
        request(s02, session, two),
        request(s02, session, three),
    ]
    assert session.messages == three + [assistant(text("Done."))]
    assert (work / "src" / "app.py").read_text() == "print('hello')\n"


def test_wire_bodies_carry_the_file_tools_and_their_results(s02, work):
    (work / "notes.md").write_text("# Notes\n")
    sent = []
    answers = [
        {
            "id": "msg_w1",
            "type": "message",
            "role": "assistant",
            "model": "test-model",
            "content": [tool_use("toolu_w1", "read_file", {"path": "notes.md"})],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 2},
        },
        {
            "id": "msg_w2",
            "type": "message",
            "role": "assistant",
            "model": "test-model",
            "content": [text("The title is Notes.")],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 2},
        },
    ]

    def handler(http_request):
        sent.append(http_request)
        return httpx2.Response(200, json=answers[len(sent) - 1])

    trace = work.parent / "trace.jsonl"
    session = new_session(s02, wire_client(handler), work, trace=trace)

    s02.run_turn(session, "title?")

    first = [user(text("title?"))]
    second = first + [assistant(tool_use("toolu_w1", "read_file", {"path": "notes.md"})),
                      user(result("toolu_w1", "     1\t# Notes"))]
    assert [json.loads(r.content) for r in sent] == [
        request(s02, session, first),
        request(s02, session, second),
    ]
    assert [tool["name"] for tool in json.loads(sent[0].content)["tools"]] == [
        "bash", "read_file", "write_file", "edit_file", "glob"]
    assert [sent_key(r) for r in sent] == [WIRE_KEY, WIRE_KEY]
    assert trace.read_text().count(WIRE_KEY) == 0
    assert [call["response"] for call in read_trace(trace)] == answers
