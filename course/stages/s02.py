"""Stage s02: the file tools, and the workspace guard.

Its contract is its lesson's section "Build it yourself"; each check is named by the rule
it judges."""


from course.stages import Exchange, Fail, cut
from course.stages.common import NOTES, YES, check, text, use


def outside(root, draw):
    """Beside the workdir: a file, a folder whose name starts with the workdir's ("work-..."),
    and a symlink from the workdir to a folder outside."""
    (root / draw.fill("<<outside>>.txt")).write_text("outside\n")
    (root / draw.fill("work-<<sibling>>")).mkdir()
    (root / "elsewhere").mkdir()
    (root / "work" / "link").symlink_to(root / "elsewhere")


FILES = Exchange("files", "Read, write, edit, find (<<prompt>>).", [
    [use("read", "read_file", path="<<notes>>.md"),
     use("write", "write_file", path="<<folder>>/<<new>>.txt", content="<<made>>\n"),
     use("edit", "edit_file", path="<<notes>>.md", old_string="<<beta>>",
         new_string="<<gamma>>"),
     use("glob", "glob", pattern="*.md"),
     use("twice", "edit_file", path="<<twice>>.txt", old_string="<<dup>>",
         new_string="<<other>>"),
     use("every", "edit_file", path="<<every>>.txt", old_string="<<rep>>",
         new_string="<<all>>", replace_all=True)],
    [use("part", "read_file", path="<<notes>>.md", offset=2, limit=1)],
    [use("up", "read_file", path="../<<outside>>.txt"),
     use("upwrite", "write_file", path="../<<escape>>.txt", content="x"),
     use("abs", "read_file", path="{root}/<<outside>>.txt"),
     use("link", "write_file", path="link/<<linked>>.txt", content="x"),
     use("upedit", "edit_file", path="../<<outside>>.txt", old_string="outside",
         new_string="changed"),
     use("sibling", "write_file", path="../work-<<sibling>>/<<near>>.txt", content="x"),
     use("sibabs", "write_file", path="{root}/work-<<sibling>>/<<nearabs>>.txt",
         content="x")],
    [use("unknown", "<<teleport>>", to="mars"),
     {"type": "tool_use", "id": "<<id_nocontent>>", "name": "write_file",
      "input": {"path": "<<half>>.txt"}},
     use("missing", "read_file", path="<<missing>>.txt"),
     use("notfound", "edit_file", path="<<notes>>.md", old_string="<<omega>>",
         new_string="x")],
    [text("<<files_done>>")],
], stdin=YES, setup=outside, files={
    **NOTES, "docs/<<deep>>.md": "deep\n", "<<twice>>.txt": "<<dup>>\n<<dup>>\n",
    "<<every>>.txt": "<<rep>> <<rep>>\n"})

TOOL_FIELDS = {"read_file": ["path", "offset", "limit"], "write_file": ["path", "content"],
               "edit_file": ["path", "old_string", "new_string", "replace_all"],
               "glob": ["pattern"]}


@check(FILES, "read_file, write_file, edit_file and glob are offered, "
       "with the course's fields")
def tools_offered(run):
    tools = {tool.get("name"): tool for tool in run.request(1).get("tools") or []}
    for name, fields in TOOL_FIELDS.items():
        have = sorted(tools.get(name, {}).get("input_schema", {}).get("properties", {}))
        if name not in tools or not set(fields) <= set(have):
            shown = f"offers {name} with the properties {have}" if name in tools else (
                f"does not offer {name}")
            raise Fail(f"Request 1 {shown}; it should offer {name} with the properties "
                       f"{fields}.")


@check(FILES, "read_file returns the file's lines; offset (from 1) and "
       "limit choose some", follows=["edit_file"])  # the part read is the edited line
def read_file(run):
    run.ok(1, "read", "<<alpha>>", "<<beta>>")
    part = run.ok(2, "part", "<<gamma>>")
    if run.v("<<alpha>>") in part:
        raise Fail(f"{run.call(2, 'part')} returned {cut(part)!r}; it should return line 2 "
                   "only (request 3).")


@check(FILES, "write_file writes the whole file, making its folders")
def write_file(run):
    run.ok(1, "write")
    run.expect_file("<<folder>>/<<new>>.txt", "<<made>>\n", f"After {run.call(1, 'write')}")


@check(FILES, "edit_file replaces old_string, found once, by new_string")
def edit_file(run):
    run.ok(1, "edit")
    run.expect_file("<<notes>>.md", "<<alpha>>\n<<gamma>>\n", f"After {run.call(1, 'edit')}")


@check(FILES, "an old_string found twice is an is_error result and "
       "changes nothing; with replace_all, every one is replaced")
def edit_once(run):
    run.refused(1, "twice", "old_string occurs twice, and replace_all is not set")
    run.expect_file("<<twice>>.txt", "<<dup>>\n<<dup>>\n", f"After {run.call(1, 'twice')}",
                    ": old_string occurs twice, so nothing may change")
    run.ok(1, "every")
    run.expect_file("<<every>>.txt", "<<all>> <<all>>\n", f"After {run.call(1, 'every')}",
                    ", since replace_all replaces every one")


@check(FILES, "glob returns the paths that match the pattern; * does not "
       "cross a folder")
def glob(run):
    found = run.ok(1, "glob", "<<notes>>.md")
    for wrong in (run.v("<<folder>>/<<new>>.txt"), run.v("docs/<<deep>>.md")):
        if wrong in found:
            raise Fail(f"glob {{\"pattern\": \"*.md\"}} returned {cut(found)!r}; {wrong} does "
                       "not match *.md, whose * does not cross a folder (request 2).")


@check(FILES, "a path out of the workdir (.., absolute, a symlink out, "
       "a sibling folder whose name starts like the workdir's) is an is_error result and "
       "touches nothing")
def outside_paths(run):
    for key in ("up", "upwrite", "abs", "link", "upedit", "sibling", "sibabs"):
        run.refused(3, key, "the path leads out of the workdir")
    for name, expected in (("<<outside>>.txt", "outside\n"), ("<<escape>>.txt", None),
                           ("elsewhere/<<linked>>.txt", None),
                           ("work-<<sibling>>/<<near>>.txt", None),
                           ("work-<<sibling>>/<<nearabs>>.txt", None)):
        run.expect_file(f"../{name}", expected, "Beside the workdir",
                        ": nothing outside the workdir may change")


@check(FILES, "an unknown tool or a bad input is an is_error result, and "
       "the loop goes on")
def bad_calls(run):
    run.refused(4, "unknown", "there is no tool <<teleport>>")
    run.refused(4, "nocontent", "write_file needs content")
    run.refused(4, "missing", "<<missing>>.txt does not exist")
    run.refused(4, "notfound", "old_string is not in <<notes>>.md")
    run.expect_file("<<half>>.txt", None, "After write_file without content",
                    ": a bad input touches nothing")
    run.printed("<<files_done>>", why="the loop should go on after the errors, to the last "
                "reply")
    run.exited_well()
