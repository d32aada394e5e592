"""Build the course site: one static page per chapter, a home page, and a compare page.

    python web/build.py                  build into web/dist/
    python web/build.py --serve          build, then serve web/dist/ on 127.0.0.1
    python web/build.py --serve --port 8000

What goes into the site, for every folder sNN_*/ that has a code.py:

    Lesson   the chapter's README.md (mistune), fenced code highlighted (pygments)
    Code     code.py with line numbers; the lines new in this chapter are marked
    Diff     code.py against the previous chapter (difflib), unified and side by side,
             after a summary computed from the two files: tools, functions, lines
    Run      the chapter's scenario, recorded now by running code.py offline with
             --trace; a player steps through the model calls, each step captioned from
             the trace and the terminal, with the user's answers where they happen

Every page is built twice: in English, and in Simplified Chinese in zh-CN/ (the Lesson tab
from README.zh-CN.md, the words around it from STRINGS), each with a switch to the other.
Both share assets/, images/, traces/ and notebooks/, and the one recording of each chapter.

The recordings run in parallel, one process per chapter. A chapter whose run
cannot be recorded stops the build (exit 1) with one line that names it.

Two builds give the same bytes: what a run shows of the machine that built it (its
temporary folder, the checkout, the session id, the time a test run took) is put
in fixed words before anything is written, and the build stops if a path of this
machine is left in a recording.

The site is plain HTML, CSS and a little JavaScript (web/assets/). It requests
nothing from another host, so it works offline, even opened from the disk.

This file is the command line and the build's order of work; the parts are in the package
web/sitebuild/, one module per concern (settings, strings, chapters, recording, captions,
highlight, diffs, lessons, charts, run_tab, pages).
"""

import argparse
import functools
import http.server
import itertools
import shutil
import sys
from pathlib import Path

# The course package (the banner grammar, the offline environment, scenario.json) sits at the
# repository root, and the builder's package beside this file: neither is on sys.path when
# this runs as `python web/build.py` from elsewhere, or is loaded from its path by a test.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
# What other scripts and the tests use of the builder is importable from here too.
from course import offline_environment  # noqa: E402, F401
from course.translations import LANGUAGES  # noqa: E402
from sitebuild import search  # noqa: E402
from sitebuild.captions import (  # noqa: E402, F401
    USER_DENIED,
    conversations,
    first_sentence,
    option_chosen,
    result_text,
    step_captions,
    terminal_events,
)
from sitebuild.chapters import Chapter, docstring_diagram, find_chapters  # noqa: E402, F401
from sitebuild.charts import short_number  # noqa: E402, F401
from sitebuild.code_tab import code_view, linked_lines  # noqa: E402
from sitebuild.diffs import Diff, WhatIsNew, what_is_new  # noqa: E402, F401
from sitebuild.highlight import highlight_lines, pygments_css  # noqa: E402, F401
from sitebuild.lessons import README_PAGE, render_lesson  # noqa: E402, F401
from sitebuild.pages import (  # noqa: E402
    chapter_page,
    chapter_parts,
    compare_index,
    compare_name,
    compare_page,
    home_page,
    keep_options_whole,
    readme_chapter,
    readme_page,
    search_page,
)
from sitebuild.recording import (  # noqa: E402, F401
    Normaliser,
    finish_recording,
    record_all,
    run_process,
)
from sitebuild.settings import ASSETS, DEFAULT_OUT, MARKER, ROOT, BuildError  # noqa: E402
from sitebuild.stages import build_it_yourself  # noqa: E402, F401
from sitebuild.start import clone_command, readme_commands, repository  # noqa: E402, F401
from sitebuild.strings import (  # noqa: E402, F401
    CJK,
    STRINGS,
    SUBFOLDER,
    join_cjk_lines,
    mark_english_quotes,
)

# ======================================================================
# THE BUILD
# ======================================================================

def prepare_out_dir(out_dir):
    """Empty the output folder, but only if it is empty or an earlier build of the site."""
    if out_dir.exists() and any(out_dir.iterdir()):
        if not (out_dir / MARKER).exists():
            raise BuildError(
                f"{out_dir} is not empty and is not a build of the site: not overwriting it"
            )
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / MARKER).write_text("Built by web/build.py; emptied by the next build.\n")


def build(out_dir: Path, chapters_root: Path = ROOT, launch=run_process, temp_root=None) -> list:
    """Build the site into out_dir; return the names of the chapters in it.

    Raises BuildError (naming the chapter) if a chapter's run cannot be recorded.
    Nothing is written before every run is recorded, so a failed build leaves
    the last site as it was. `launch` starts a recording (run_process, or the tests'
    own), in a folder made in temp_root; the pages that need no recording are made while
    the runs go on.
    """
    out_dir = Path(out_dir).resolve()
    chapters = find_chapters(Path(chapters_root).resolve())
    if not chapters:
        raise BuildError(f"no chapters (folders sNN_* with a code.py) in {chapters_root}")
    root = Path(chapters_root).resolve()
    readme = readme_chapter(root)
    futures = record_all(chapters, launch, temp_root)
    names = [chapter.name for chapter in chapters]
    pages, parts = {}, {}  # pages by their path in the build: "s01_loop.html", "zh-CN/..."
    try:
        for lang in LANGUAGES:
            folder = SUBFOLDER[lang]
            pages[folder + "compare.html"] = compare_index(chapters, lang)
            pages[folder + "search.html"] = search_page(chapters, lang)
            for old, new in itertools.combinations(chapters, 2):
                pages[folder + compare_name(old, new)] = compare_page(old, new, chapters, lang)
            for chapter in chapters:
                parts[lang, chapter.name] = chapter_parts(chapter, names, lang)
            if readme:
                pages[folder + README_PAGE], images = readme_page(readme, chapters, lang)
                parts[lang, README_PAGE] = {"images": images}
        # The Code tabs last: each writes the anchors of the lines the pages above link to.
        linked = linked_lines([*pages.values(),
                               *(part.get("lesson", "") for part in parts.values())])
        for lang in LANGUAGES:
            for chapter in chapters:
                parts[lang, chapter.name]["code"] = code_view(chapter, lang,
                                                              linked.get(chapter.name, set()))
    finally:
        finish_recording(chapters, futures)
    for lang in LANGUAGES:  # the pages that show the recorded runs
        pages[SUBFOLDER[lang] + "index.html"] = home_page(chapters, lang, root)
        for chapter in chapters:
            pages[SUBFOLDER[lang] + chapter.page] = chapter_page(
                chapter, chapters, parts[lang, chapter.name], lang)

    prepare_out_dir(out_dir)
    shutil.copytree(ASSETS, out_dir / "assets")
    (out_dir / "assets" / "pygments.css").write_text(pygments_css(), encoding="utf-8")
    (out_dir / "traces").mkdir()
    (out_dir / "code").mkdir()  # each code.py, which a search hit in code shows lines of
    (out_dir / "images").mkdir()
    (out_dir / "notebooks").mkdir()
    for lang in LANGUAGES:
        (out_dir / SUBFOLDER[lang]).mkdir(exist_ok=True)
    for name, text in sorted(pages.items()):
        write(out_dir / name, keep_options_whole(text))
    images = dict(image for part in parts.values() for image in part["images"])
    for source, name in sorted(images.items()):
        shutil.copyfile(source, out_dir / "images" / name)
    for chapter in chapters:
        write(out_dir / "traces" / f"{chapter.name}.jsonl", chapter.run.trace)
        write(out_dir / "code" / f"{chapter.name}.py", chapter.code)
        for svg in sorted(chapter.folder.glob("diagram*.svg")):  # the lesson's diagrams
            shutil.copyfile(svg, out_dir / "images" / f"{chapter.name}-{svg.name}")
        if chapter.notebook.is_file():
            shutil.copyfile(chapter.notebook, out_dir / "notebooks" / f"{chapter.name}.ipynb")
    search.index(out_dir)  # last: Pagefind reads the pages written
    return names


def write(path, text):
    path.write_text(text, encoding="utf-8")


# ======================================================================
# SERVING AND THE COMMAND LINE
# ======================================================================

def serve(directory, port):
    """Serve the built site on 127.0.0.1 until Ctrl-C."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        print(
            f"Serving {directory} at http://127.0.0.1:{server.server_address[1]}/  (Ctrl-C to "
            f"stop)",
            flush=True,
        )
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print()


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python web/build.py", description="Build the course site."
    )
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="where the site goes (default: web/dist)"
    )
    parser.add_argument(
        "--chapters",
        type=Path,
        default=ROOT,
        help="the folder that holds the chapters (default: the repository)",
    )
    parser.add_argument(
        "--serve", action="store_true", help="after building, serve the site on 127.0.0.1"
    )
    parser.add_argument(
        "--port", type=int, default=0, help="the port for --serve (default: a free one)"
    )
    args = parser.parse_args(argv)
    try:
        names = build(args.out, args.chapters)
    except BuildError as error:
        print(f"build.py: {error}", file=sys.stderr)
        return 1
    print(f"Built {len(names)} chapters ({', '.join(names)}) into {args.out.resolve()}")
    if args.serve:
        serve(args.out.resolve(), args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
