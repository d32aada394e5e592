"""The Chinese pages are checked like the English ones, and against them.

A translated page is README.zh-CN.md beside an English one: a lesson (sNN_x/) or the top README
(course/translations.py names them, and the lines that tie them to the English). For each:

  - the same quote checks as tests/test_lessons.py, with its own functions: every ```python
    block that is not a `# sketch` is a run of code.py lines (or runs joined by `...`), every
    fence names its language, no command hides in the prose outside the exercises
  - the same commands and transcripts: the ```bash blocks and the ```text blocks after them are
    the English page's, in the same sections, paired the same way. They are checked for
    equality only, not run again: tests/test_lessons.py runs every one of them on the English
    page, so a transcript that is true there is true here
  - structure parity: the sections (## and ###) of the English, in the same order, each with
    the code blocks of its English section, in order; the same inline code and links; the same
    exercises (as many, each with the inline code of its English one). The What changed table
    is the generated one, as in the English; the top README's chapter table is its Chinese
    form (generated from the same data, linking to the Chinese lessons). A figure in the prose
    is the code's (ZH_FIGURES), the s01 stop-reason table is STOP_MESSAGES
  - staleness: under each heading, `<!-- en: HASH TITLE -->` says which English section it
    translates, and the hash of that section's prose as it was translated (its code blocks and
    generated tables left out: they are checked for equality instead). When the English prose
    changes and the Chinese does not, a test fails and names the section; re-wrapping the
    English changes no hash
  - the Chinese is Chinese: every section holds Chinese text, and no page uses a rendering of a
    term that GLOSSARY.zh-CN.md rejects (its third column); a section whose English uses a term
    of the glossary uses the glossary's Chinese for it; 轮 never stands alone; the typography
    the glossary sets (one paragraph a line, no space after a bold phrase run on in Chinese,
    、 between code spans, the hook's JSON words as code)
  - each translated page and its English page link to each other in their first line after
    the title; an English page without a translation links to none

tools/sync_zh.py keeps the pages in step (it copies the code blocks, the tables and the links,
and names stale sections; it records a new hash only with --accept). No test here starts a
process: they read files and load chapters, in about a second in all.
"""

import re
import shutil

import pytest

from course import CHAPTERS, changes, diagrams, lessons, reading_time
from course.translations import (
    GLOSSARY,
    LANGUAGE,
    LANGUAGE_LINES,
    TRANSLATION,
    alignment,
    english,
    expected_table,
    is_language_line,
    language_line,
    pages,
    read,
    read_sections,
    sections_of,
    source,
    translated,
    translation,
)
from support import ROOT, load_chapter

PAGES = pages()
TRANSLATED = translated()
TRANSLATED_LESSONS = [name for name in TRANSLATED if name != "README"]

CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
CHINESE = re.compile(r"[\u3400-\u9fff]")
EXERCISE = re.compile(r"\d+\. ")


# ======================================================================
# Sections: a heading, the marker under it, its prose and its code blocks (course/translations.py
# reads them)
# ======================================================================


def paired(english_sections, chinese_sections):
    """(English section, the Chinese section that translates it), for the sections that match."""
    return [pair for tag, e1, e2, c1, c2 in alignment(english_sections, chinese_sections)
            if tag == "equal"
            for pair in zip(english_sections[e1:e2], chinese_sections[c1:c2], strict=True)]


def structure_problems(english_sections, chinese_sections):
    """What stands between the Chinese sections and the English ones, in sentences."""
    problems = []
    for tag, e1, e2, c1, c2 in alignment(english_sections, chinese_sections):
        for section in english_sections[e1:e2] if tag in ("delete", "replace") else []:
            problems.append(f"the English section {section.heading!r} ({section.where}) has no "
                            "Chinese section that translates it, in this place")
        for section in chinese_sections[c1:c2] if tag in ("insert", "replace") else []:
            if section.marker is None:
                problems.append(f"{section.where}: {section.heading!r} has no "
                                "`<!-- en: HASH TITLE -->` line under its heading")
            else:
                problems.append(f"{section.where}: {section.heading!r} says it translates "
                                f"{'#' * section.level} {section.marker['title']!r}, which the "
                                "English does not have in this place")
    return problems


def stale_sections(english_sections, chinese_sections):
    """One sentence per Chinese section that translates an older English text than the one
    that stands now."""
    found = []
    for ours, theirs in ((e, c) for e, c in paired(english_sections, chinese_sections)):
        recorded = theirs.marker["hash"]
        if recorded == "new":
            found.append(f"{theirs.where}: {theirs.heading!r} is not translated yet (marked new)")
        elif recorded != ours.hash:
            found.append(f"{theirs.where}: {theirs.heading!r} translates {ours.heading!r} as it "
                         f"was ({recorded}); the English is now {ours.hash}")
    return found


# ======================================================================
# What the Chinese must keep of the English: code, inline code, links, exercises
# ======================================================================


def paragraphs(lines):
    """The paragraphs of some prose, each on one line (inline code may span lines)."""
    return [" ".join(paragraph.split()) for paragraph in re.split(r"\n\s*\n", "\n".join(lines))]


def code_spans(lines):
    return {match[2].strip() for text in paragraphs(lines) for match in CODE_SPAN.finditer(text)}


def without_code_spans(lines):
    return " ".join(CODE_SPAN.sub(" ", text) for text in paragraphs(lines))


# JSON words and names of the code that the English prose writes bare and the Chinese writes as
# code (GLOSSARY.zh-CN.md: "这些名字出现在正文里时写成行内代码"): in Chinese text a bare English
# word reads as a stray.
CODE_WORDS = {"allow", "block", "context", "tool_use", "tool_result", "true", "false", "None",
              "ToolError", "multiSelect"}


def chinese_code_spans(chinese_lines, english_lines):
    """The inline code of a Chinese text, less the CODE_WORDS it writes as code where the
    English text writes them bare."""
    bare = {word for word in CODE_WORDS
            if re.search(rf"\b{word}\b", without_code_spans(english_lines))}
    return code_spans(chinese_lines) - (bare - code_spans(english_lines))


def links(lines):
    return set(LINK.findall(without_code_spans(lines)))


def chinese_target(target, folder, root=ROOT):
    """Where a link of the English page should go in the Chinese one: a page that has a
    translation, to its translation; the chapter's diagram, to its Chinese one; anything else,
    to the same place."""
    path, _, anchor = target.partition("#")
    resolved = (folder / path).resolve() if path and "://" not in path else None
    if resolved is not None and resolved.name == "diagram.svg" and (
            resolved.with_name("diagram.zh-CN.svg").exists()):
        return str(re.sub(r"diagram\.svg$", "diagram.zh-CN.svg", path))  # the chapter's diagram
    if resolved is not None and resolved.name == "README.md" and (
            resolved.with_name(TRANSLATION).exists()):
        return str(re.sub(r"README\.md$", TRANSLATION, path)) + (f"#{anchor}" if anchor else "")
    return target


def exercises(section):
    """The items of an exercises section: [their lines], one list per `N. ` item."""
    items = []
    for line in section.lines:
        if EXERCISE.match(line):
            items.append([])
        if items:
            items[-1].append(line)
    return items


def blocks_as_written(section):
    return [(block.language, block.lines) for block in section.blocks]


# ======================================================================
# The generated tables, the language lines, the glossary
# ======================================================================

def glossary():
    """[(English term, Chinese, [renderings not to use])] from the table of GLOSSARY.zh-CN.md."""
    rows = []
    for line in (ROOT / GLOSSARY).read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 3 and not set(cells[0]) <= set("- ") and (
                cells[0] != "English"):
            avoided = [word.strip() for word in cells[2].split("、") if word.strip()]
            rows.append((cells[0], cells[1], avoided))
    return rows


# ======================================================================
# The tests
# ======================================================================


@pytest.mark.parametrize("name", TRANSLATED)
def test_every_code_fence_names_its_language(name):
    blocks = lessons.parse_blocks(read(name, LANGUAGE), source(name, LANGUAGE))
    assert [block.where for block in blocks if not block.language] == []


@pytest.mark.parametrize("name", TRANSLATED_LESSONS)
def test_every_python_block_is_a_run_of_code_py_lines_or_runs_joined_by_dots(name):
    lines = lessons.code_lines(name)
    quotes = [block for block in lessons.parse_blocks(read(name, LANGUAGE), source(name, LANGUAGE))
              if block.language == "python" and not lessons.is_sketch(block)]
    wrong = {block.where: lessons.where_runs_stand(block.lines, lines) for block in quotes}
    assert {where: why for where, why in wrong.items() if why} == {}


@pytest.mark.parametrize("name", TRANSLATED)
def test_the_sections_are_the_english_ones_in_the_same_order(name):
    assert structure_problems(sections_of(name), sections_of(name, LANGUAGE)) == []


@pytest.mark.parametrize("name", TRANSLATED)
def test_no_section_translates_an_older_english_text(name):
    # Bring the Chinese up to date, then: .venv/bin/python -m tools.sync_zh --accept TITLE name
    assert stale_sections(sections_of(name), sections_of(name, LANGUAGE)) == []


@pytest.mark.parametrize("name", TRANSLATED)
def test_each_section_has_the_code_blocks_of_its_english_section(name):
    # To copy them: .venv/bin/python -m tools.sync_zh name
    differ = [f"{theirs.where} ({theirs.heading!r}) against {ours.where}"
              for ours, theirs in paired(sections_of(name), sections_of(name, LANGUAGE))
              if blocks_as_written(ours) != blocks_as_written(theirs)]
    assert differ == []


@pytest.mark.parametrize("name", TRANSLATED)
def test_the_commands_and_their_transcripts_are_the_english_ones(name):
    """Checked for equality, not run: tests/test_lessons.py runs each of them on the English
    page. A ```text block is a transcript when it follows a ```bash block with only blank lines
    between them, so the pairs must be the same too."""
    def scripts(language):
        return [([command.text for command in script.commands], script.expected)
                for script in lessons.bash_scripts(read(name, language), source(name, language))]

    assert scripts(LANGUAGE) == scripts("en")


@pytest.mark.parametrize("name", TRANSLATED)
def test_each_section_keeps_the_inline_code_and_the_links_of_its_english_section(name):
    folder = english(name).parent
    differ = {}
    for ours, theirs in paired(sections_of(name), sections_of(name, LANGUAGE)):
        spans = chinese_code_spans(theirs.lines, ours.lines), code_spans(ours.lines)
        wanted = {chinese_target(target, folder) for target in links(ours.lines)}
        found = links(theirs.lines) - {GLOSSARY, f"../{GLOSSARY}"}
        if spans[0] != spans[1] or found != wanted:
            differ[theirs.where] = {"code only here": sorted(spans[0] - spans[1]),
                                    "code only in the English": sorted(spans[1] - spans[0]),
                                    "links only here": sorted(found - wanted),
                                    "links the English has": sorted(wanted - found)}
    assert differ == {}


@pytest.mark.parametrize("name", TRANSLATED_LESSONS)
def test_the_exercises_are_the_english_ones(name):
    found = {language: next(section for section in sections_of(name, language)
                            if (section.marker or {}).get("title", section.title) == "Exercises")
             for language in ("en", LANGUAGE)}
    ours, theirs = exercises(found["en"]), exercises(found[LANGUAGE])
    assert len(theirs) == len(ours)
    assert [chinese_code_spans(item, english_item) for item, english_item in zip(
        theirs, ours, strict=True)] == [code_spans(item) for item in ours]


@pytest.mark.parametrize("name", TRANSLATED)
def test_every_section_is_written_in_chinese(name):
    english_only = [section.where for section in sections_of(name, LANGUAGE)
                    if not CHINESE.search(without_code_spans(section.lines))]
    assert english_only == []


@pytest.mark.parametrize("name", TRANSLATED)
def test_the_generated_table_is_the_one_the_code_gives(name):
    # To rewrite it: .venv/bin/python -m tools.sync_zh name
    begin, end, table = expected_table(name)
    assert changes.between(read(name, LANGUAGE), begin, end) == table


def test_a_lesson_table_reads_in_the_language_of_its_lesson():
    shared = dict(previous="s01_loop", lines=1203, added=228, removed=19, carried=8)
    sections = [
        changes.SectionChange(changes.PREAMBLE, "changed", 1, 22, 19),
        changes.SectionChange("THE FILE TOOLS", "new", 231, 193, 0,
                              functions={"new": ["read_file", "write_file"]},
                              tools={"new": ["read_file", "glob"]}),
        changes.SectionChange("TOOL RESULTS AND INPUT CHECKS", "changed", 518, 13, 0,
                              functions={"removed": ["bash_input_problem"]},
                              tools={"changed": ["bash"]}),
    ]
    found = changes.Changes("s02_tools", sections=sections, **shared)
    assert changes.lesson_table(found, LANGUAGE) == "\n".join([
        "| 节 | 行数 | 函数、类、常量和工具 |",
        "| --- | --- | --- |",
        "| 文档字符串和 import | +22 −19 |  |",
        "| [THE FILE TOOLS](code.py#L231)（新增） | +193 "
        "| 新增 `read_file`、`write_file`；新增工具 `read_file`、`glob` |",
        "| [TOOL RESULTS AND INPUT CHECKS](code.py#L518) | +13 "
        "| 删除 `bash_input_problem`；修改工具 `bash` |",
        "",
        "共 1203 行：相对 s01_loop +228 −19；其余 8 节原样沿用。",
    ])
    assert changes.lesson_table(found) == "\n".join([
        "| section | lines | functions, classes, constants and tools |",
        "| --- | --- | --- |",
        "| docstring and imports | +22 −19 |  |",
        "| [THE FILE TOOLS](code.py#L231) (new) | +193 "
        "| new `read_file`, `write_file`; new tools `read_file`, `glob` |",
        "| [TOOL RESULTS AND INPUT CHECKS](code.py#L518) | +13 "
        "| removed `bash_input_problem`; changed tool `bash` |",
        "",
        "1203 lines: +228 −19 against s01_loop; the other 8 sections are carried over unchanged.",
    ])
    first = changes.Changes("s01_loop", None, 952, 952, 0, sections=[], carried=0)
    assert changes.lesson_table(first, LANGUAGE).endswith("\n\n共 952 行，全部是新的：这是第一章。")


@pytest.mark.parametrize("name", TRANSLATED_LESSONS)
def test_the_title_names_the_chapter(name):
    title = read(name, LANGUAGE).splitlines()[0]
    assert title.startswith(f"# {name}: ") and CHINESE.search(title)


@pytest.mark.parametrize("name", TRANSLATED_LESSONS)
def test_no_command_hides_in_the_prose_outside_the_exercises(name):
    text = read(name, LANGUAGE)
    titles = {section.marker["title"]: section.title for section in read_sections(text, "")
              if section.marker}
    assert lessons.commands_in_prose(text, titles["Exercises"], titles["Next"]) == []


@pytest.mark.parametrize("name", PAGES)
def test_a_translated_page_and_its_english_page_link_to_each_other(name):
    english_text = read(name)
    if name not in TRANSLATED:
        assert [line for line in english_text.splitlines() if is_language_line(line)] == []
        return
    assert (language_line(english_text), language_line(read(name, LANGUAGE))) == (
        LANGUAGE_LINES["en"], LANGUAGE_LINES[LANGUAGE])


# Figures the Chinese prose gives: (chapter, the constant in code.py, the words around it)
def test_every_chinese_core_reads_in_five_minutes_and_every_lesson_in_twelve():
    # the English pace, Chinese prose at 300 characters a minute: course/reading_time.py
    times = {name: (round(reading_time.minutes(reading_time.core(read(name, LANGUAGE),
                                                                   LANGUAGE)), 1),
                    round(reading_time.minutes(read(name, LANGUAGE)), 1))
             for name in TRANSLATED_LESSONS}
    assert {name: time for name, time in times.items()
            if time[0] > reading_time.CORE_LIMIT or time[1] > reading_time.LESSON_LIMIT} == {}


@pytest.mark.parametrize("name", TRANSLATED_LESSONS)
def test_the_chinese_core_ends_at_its_deeper_heading_and_shows_the_chinese_diagram(name):
    text = read(name, LANGUAGE)
    source = (ROOT / name / "diagram.zh-CN.dot").read_text(encoding="utf-8")
    image = f"![{diagrams.header(source)['title']}](diagram.zh-CN.svg)"
    core = reading_time.core(text, LANGUAGE)
    assert (core != text, image in core) == (True, True)


ZH_FIGURES = [
    ("s01_loop", "BASH_TIMEOUT", "{} 秒超时"),
    ("s01_loop", "OUTPUT_LIMIT", "只保留输出的前 {:,} 字节"),
    ("s01_loop", "MAX_TOKENS", "max_tokens ({})"),
    ("s02_tools", "READ_LIMIT", "`READ_LIMIT`（{:,}）行"),
    ("s02_tools", "LINE_LIMIT", "超过 {:,} 个字符的行"),
    ("s02_tools", "READ_CHAR_LIMIT", "读到 {:,} 个字符为止"),
    ("s02_tools", "GLOB_LIMIT", "最多返回 {} 个路径"),
    ("s03_permissions", "ASK_LIMIT", "最多问 {} 次"),
]


@pytest.mark.parametrize("name, constant, words",
                         [row for row in ZH_FIGURES if row[0] in TRANSLATED])
def test_a_figure_in_the_prose_is_the_one_in_the_code(name, constant, words):
    def spaced(text):  # a line may break anywhere in Chinese prose
        return " ".join(text.split())

    assert spaced(words.format(getattr(load_chapter(name), constant))) in spaced(
        read(name, LANGUAGE))


@pytest.mark.skipif("s01_loop" not in TRANSLATED, reason="s01_loop is not translated")
def test_the_s01_stop_reason_table_prints_what_finish_reply_prints():
    """Each row `| `reason` | 打印 `line`[，收回这个轮次][（a note）] |`: the lines are
    STOP_MESSAGES, and the rows that take the turn back are FORGET_PROMPT's reasons (as in the
    English)."""
    rows = [re.fullmatch(r"\| `(\w+)` \| 打印 `([^`]*)`(，收回这个轮次)?(（.*）)? \|", line)
            for line in read("s01_loop", LANGUAGE).splitlines()]
    chapter = load_chapter("s01_loop")
    table = {row[1]: row[2] for row in rows if row}
    taken_back = {row[1] for row in rows if row and row[3]}
    assert (table, taken_back) == (chapter.STOP_MESSAGES, chapter.FORGET_PROMPT)


# The terms the course names in its issue; the glossary fixes their Chinese.
GLOSSARY_TERMS = ["harness", "agent loop", "tool call", "tool result", "permission mode", "rule",
                  "hook", "plan mode", "reminder", "scripted model", "transcript", "workspace"]


def test_the_glossary_fixes_the_recurring_terms_and_no_page_uses_a_rejected_one():
    rows = glossary()
    assert [term for term in GLOSSARY_TERMS if term not in {row[0] for row in rows}] == []
    used = {}
    for name in TRANSLATED:
        for section in sections_of(name, LANGUAGE):
            prose = without_code_spans(section.lines)
            for _term, chinese, avoided in rows:
                for word in avoided:
                    if word in prose:
                        used.setdefault(section.where, []).append(f"{word} (say {chinese})")
    assert used == {}


# Where an English section uses a glossary term, its Chinese section uses the glossary's Chinese
# for it. The English is matched as written (case and all, plural too), outside code and quotes.
# Terms whose Chinese is the English word are left out (nothing to check), and so are the rows
# with two renderings (allow / deny / ask, offline / live).
# The form the Chinese must hold, where it is not the glossary's word as a whole: a round is
# counted (“三轮工具调用”), so its form is 轮工具调用 (no short form: “工具轮” read as a coinage).
# The prompt of "prompt cache" and "prompt caching" is rendered in 提示缓存, which holds no 提示词.
TERM_FORMS = {"round": ("轮工具调用",), "prompt": ("提示词", "提示缓存")}
# English words spelt like a term that are not the term: verbs and set phrases; "refusal", which
# the English also says of a guard's or a rule's refusal (拒绝), not only of the model's; a chain
# of symlinks, which is no chain of commands; ZCode's design notes, which are no notes of s06.
NOT_THE_TERM = [r"\bgoes round\b", r"\bof course\b", r"\bchange course\b",
                r"\bturns (?=each|a|an|the)\b",
                r"\bonly turns\b", r"\bnot guard\b", r"\bto plan\b", r"\bplans\b",
                r"\brefusals?\b", r"\bchains of links\b",
                r"\bdesign notes\b", r"\bsame notes\b",
                # the lines a run prints first are its startup banner (启动信息), not a section's
                r"\b[Tt]he banner (shows|prints|says)\b", r"\bin the banner\b"]
QUOTE = re.compile(r'"[^"]*"|“[^”]*”')


def english_terms(lines):
    """The glossary's English terms that a section's prose uses."""
    prose = QUOTE.sub(" ", without_code_spans(lines))
    for pattern in NOT_THE_TERM:
        prose = re.sub(pattern, " ", prose)
    return {term for term, chinese, _ in glossary()
            if "/" not in term and CHINESE.search(chinese)
            and re.search(rf"(?<![\w-]){re.escape(term)}s?(?![\w-])", prose)}


def missing_terms(english_lines, chinese_lines):
    """'term (say 中文)' for each term the English uses and the Chinese does not render."""
    rows = {term: chinese for term, chinese, _ in glossary()}
    prose = without_code_spans(chinese_lines)
    return sorted(f"{term} (say {rows[term]})" for term in english_terms(english_lines)
                  if not any(form in prose for form in TERM_FORMS.get(term, (rows[term],))))


@pytest.mark.parametrize("name", TRANSLATED)
def test_a_section_renders_each_glossary_term_its_english_section_uses(name):
    missing = {theirs.where: found
               for ours, theirs in paired(sections_of(name), sections_of(name, LANGUAGE))
               if (found := missing_terms(ours.lines, theirs.lines))}
    assert missing == {}


def site_strings():
    """The site's Chinese strings (web/sitebuild/strings.py, which imports only the standard
    library and course.translations), by key."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("site_strings",
                                                  ROOT / "web" / "sitebuild" / "strings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.STRINGS[LANGUAGE]


def test_the_site_strings_use_no_rendering_the_glossary_rejects_and_no_lone_round():
    # The captions of the Run tab are made of these strings too (web/sitebuild/captions.py).
    rejected = [word for _term, _chinese, avoided in glossary() for word in avoided]
    texts = {key: " ".join(value.values()) if isinstance(value, dict) else str(value)
             for key, value in site_strings().items()}
    found = {key: [word for word in rejected if word in text] + LONE_ROUND.findall(text)
             for key, text in texts.items()}
    assert {key: words for key, words in found.items() if words} == {}


# 轮 alone is ambiguous: a turn is 轮次, a round of tool calls 一轮工具调用 (GLOSSARY.zh-CN.md);
# 轮到 (“轮到模型”) is another word.
LONE_ROUND = re.compile(r"轮(?!次|到|工具调用)")


@pytest.mark.parametrize("name", TRANSLATED)
def test_no_chinese_section_says_a_lone_round_for_a_turn_or_a_round(name):
    found = {section.where: LONE_ROUND.findall(without_code_spans(section.lines))
             for section in sections_of(name, LANGUAGE)}
    assert {where: hits for where, hits in found.items() if hits} == {}


# The Chinese typography the glossary sets: a paragraph on one line (a soft break inside a
# paragraph is a space between two characters on the page); a bold phrase keeps its closing
# punctuation outside ("**停止原因**。"), since Markdown does not close a bold that ends in
# punctuation and runs on into a Chinese character, and has no space after it where Chinese
# follows; 、 between code spans; the hook's JSON words and the API's block types as code.
NEW_LINE = re.compile(r"(#|\||<|\[English\]|- |\d+\. |   (提示|检查)：)")
SENTENCE_PUNCTUATION = "。，：；、！？"
PUNCTUATION = SENTENCE_PUNCTUATION + "“”「」（）`"
COMMA_BETWEEN_CODE = re.compile(r"`, `")
URL = re.compile(r"https?://[^\s>)）]+")  # a word in an address is no JSON word
BARE_CODE_WORD = re.compile(r"(?<![\w`])(block|context|tool_use|tool_result|ToolError)(?![\w`])")


def bold_problems(line):
    """What is wrong with the bold phrases of a line (its code spans left out)."""
    parts = CODE_SPAN.sub("`x`", line).split("**")
    problems = []
    for bold, after in zip(parts[1:-1:2], parts[2::2], strict=True):
        if bold and bold[-1] in SENTENCE_PUNCTUATION:
            problems.append(f"{bold!r} ends in {bold[-1]}: put it after the **")
        elif bold and bold[-1] in PUNCTUATION and CHINESE.match(after):
            problems.append(f"{bold!r} is not closed: it ends in {bold[-1]} and runs on")
        elif bold and re.match(rf"{CHINESE.pattern}|[“”「」（）]", bold[-1]) and re.match(
                rf" ({CHINESE.pattern}|[{PUNCTUATION}])", after):
            problems.append(f"a space after {bold!r}")
    return problems


def typography_problems(section):
    problems = []
    previous = ""
    for line in section.lines:
        if line.strip() and previous.strip() and not NEW_LINE.match(line):
            problems.append(f"a paragraph wrapped before {line.strip()[:20]!r}")
        previous = line
    for line in section.lines:
        problems += bold_problems(line)
        if COMMA_BETWEEN_CODE.search(line):
            problems.append(f"', ' between code spans in {line.strip()[:30]!r}")
    problems += [f"{word} not as code" for word in
                 BARE_CODE_WORD.findall(URL.sub(" ", without_code_spans(section.lines)))]
    return problems


@pytest.mark.parametrize("name", TRANSLATED)
def test_the_chinese_follows_the_glossary_typography(name):
    found = {section.where: typography_problems(section) for section in sections_of(name, LANGUAGE)}
    assert {where: problems for where, problems in found.items() if problems} == {}


# ---- the checks themselves, on pages changed on purpose ------------------------------------


FIRST = TRANSLATED_LESSONS[0] if TRANSLATED_LESSONS else None


@pytest.mark.skipif(FIRST is None, reason="no lesson is translated yet")
def test_a_changed_english_section_makes_its_translation_stale_and_is_named():
    english_text, chinese_text = read(FIRST), read(FIRST, LANGUAGE)
    chinese = read_sections(chinese_text, "zh")
    assert stale_sections(read_sections(english_text, "en"), chinese) == []
    problem = read_sections(english_text, "en")[1]  # the first ## section
    lines = english_text.splitlines()
    changed = lines[: problem.start + 2] + ["One more sentence."] + lines[problem.start + 2 :]
    found = stale_sections(read_sections("\n".join(changed), "en"), chinese)
    assert len(found) == 1 and f"translates {problem.heading!r} as it was" in found[0]
    # the same paragraph wrapped at other places, or a changed code block: no prose is stale
    lines = english_text.splitlines()
    first = lines[problem.start + 2]
    lines[problem.start + 2] = first.replace(" ", "\n", 1).replace(" ", "   ", 1) + "  "
    block = next(section for section in read_sections(english_text, "en") if section.blocks)
    lines[block.blocks[0].start + 1] = "# a changed line"
    assert stale_sections(read_sections("\n".join(lines), "en"), chinese) == []


def copy_pages(tmp_path, names):
    """The files a page's checks read, copied into tmp_path (for the sync tool)."""
    wanted = ["README.md", TRANSLATION, *(f"{name}/{file}" for name in CHAPTERS
                                          for file in ("README.md", TRANSLATION, "code.py"))]
    for relative in wanted:
        if (ROOT / relative).exists():
            (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / relative, tmp_path / relative)
    return tmp_path


@pytest.mark.skipif(FIRST is None, reason="no lesson is translated yet")
def test_the_sync_tool_copies_code_and_tables_names_stale_prose_and_accepts_it_only_when_asked(
        tmp_path):
    from tools import sync_zh

    root = copy_pages(tmp_path, [FIRST])
    path = english(FIRST, root)
    before = translation(FIRST, root).read_text(encoding="utf-8")
    assert sync_zh.sync(FIRST, root, history=False) == ([], False)
    sections = read_sections(path.read_text(encoding="utf-8"), "en")
    target = next(s for s in sections if s.blocks and s.level == 2)
    block = target.blocks[0]
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[block.start + 1] += "  "  # a changed code block (trailing spaces: still a quote)
    lines.insert(target.start + 1, "A new first sentence.")  # and changed prose
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    report, changed = sync_zh.sync(FIRST, root, history=False)
    after = translation(FIRST, root).read_text(encoding="utf-8")
    assert changed and after != before
    chinese = read_sections(after, "zh")
    english_now = read_sections(path.read_text(encoding="utf-8"), "en")
    assert [blocks_as_written(c) for _, c in paired(english_now, chinese)] == [
        blocks_as_written(e) for e, _ in paired(english_now, chinese)]
    assert len(report) == 1 and f"{target.heading!r} as it was" in report[0]
    assert "A new first sentence." in report[0]  # the English to translate
    assert len(stale_sections(english_now, chinese)) == 1  # the tool did not accept it

    report, changed = sync_zh.sync(FIRST, root, accept=[target.title], history=False)
    assert (report, changed) == ([], True)
    assert stale_sections(english_now, read_sections(
        translation(FIRST, root).read_text(encoding="utf-8"), "zh")) == []


@pytest.mark.skipif(FIRST is None, reason="no lesson is translated yet")
def test_the_sync_tool_adds_a_new_english_section_untranslated_and_the_test_names_it(tmp_path):
    from tools import sync_zh

    root = copy_pages(tmp_path, [FIRST])
    path = english(FIRST, root)
    lines = path.read_text(encoding="utf-8").splitlines()
    at = read_sections("\n".join(lines), "en")[2].start
    lines[at:at] = ["## A new section", "", "Its prose.", ""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    english_now = read_sections(path.read_text(encoding="utf-8"), "en")
    before = read_sections(translation(FIRST, root).read_text(encoding="utf-8"), "zh")
    assert structure_problems(english_now, before) == [
        f"the English section '## A new section' (en:{at + 1}) has no Chinese section that "
        "translates it, in this place"]

    report, changed = sync_zh.sync(FIRST, root, history=False)
    after = read_sections(translation(FIRST, root).read_text(encoding="utf-8"), "zh")
    assert changed and structure_problems(english_now, after) == []
    assert [line for line in report if "'## A new section'" in line] != []
    assert [s for s in stale_sections(english_now, after) if "marked new" in s] != []


@pytest.mark.skipif(FIRST is None, reason="no lesson is translated yet")
def test_the_sync_tool_starts_a_page_with_every_section_marked_new(tmp_path):
    from tools import sync_zh

    root = copy_pages(tmp_path, [FIRST])
    translation(FIRST, root).unlink()
    path = english(FIRST, root)
    path.write_text("\n".join(line for line in path.read_text(encoding="utf-8").splitlines()
                              if not is_language_line(line)) + "\n", encoding="utf-8")
    sync_zh.start(FIRST, root)
    english_now = read_sections(path.read_text(encoding="utf-8"), "en")
    started = read_sections(translation(FIRST, root).read_text(encoding="utf-8"), "zh")
    assert structure_problems(english_now, started) == []
    assert [section.marker["hash"] for section in started] == ["new"] * len(english_now)
    assert [blocks_as_written(section) for section in started] == [
        blocks_as_written(section) for section in english_now]
    assert (language_line(path.read_text(encoding="utf-8")), language_line(
        translation(FIRST, root).read_text(encoding="utf-8"))) == (
        LANGUAGE_LINES["en"], LANGUAGE_LINES[LANGUAGE])


def test_every_page_has_its_chinese_translation():
    # A new lesson: .venv/bin/python -m tools.sync_zh --start sNN_x, translate it, --accept '*'
    assert [name for name in PAGES if name not in TRANSLATED] == []


def test_no_chinese_core_sends_its_reader_to_a_section_of_the_deeper_part():
    # as tests/test_lessons.py holds it for the English cores
    pages = {name: read(name, LANGUAGE) for name in CHAPTERS}
    skipped = lessons.skipped_headings(pages.values(), "深入")
    assert {name: lessons.names_a_skipped_section(reading_time.core(text, LANGUAGE), skipped)
            for name, text in pages.items()} == {name: [] for name in CHAPTERS}


# ---- the shape of the prose: course/zh_style.py ---------------------------------------------


def test_the_style_figures_count_colons_pronouns_and_sentences_in_the_prose_alone():
    from course import zh_style

    text = "\n".join([
        "# 标题：不算",
        "<!-- en: 0123456789ab The problem -->",
        "它读文件：`a：b` 不算。其他不算，尤其不算；其结果算。",
        "",
        "```text",
        "代码：不算",
        "```",
        "| 表格：不算 |",
        "![图：不算](diagram.zh-CN.svg)",
        "- 列表项[链接](https://example.com/：)",
    ])
    found = zh_style.shape(text)
    # characters: 它读文件 不算 其他不算 尤其不算 其结果算 (4+2+4+4+4) and 列表项链接 (5)
    assert (found.characters, found.colons, found.pronouns, found.sentences, found.length) == (
        23, 1, 2, 3, 23 + 1)  # three sentences: 。 ends two, the list item is the third
    assert (found.colon_rate, found.pronoun_rate, found.sentence_length) == (43.5, 87.0, 8.0)


@pytest.mark.parametrize("name", TRANSLATED)
def test_the_chinese_prose_is_chinese_in_shape_few_colons_and_pronouns(name):
    """English chains clauses with colons and refers back with "it"; a Chinese page that keeps
    those shapes reads as English (issue 58). The top README's core is all of it."""
    from course import reading_time, zh_style

    text = read(name, LANGUAGE)
    core, whole = zh_style.shape(reading_time.core(text, LANGUAGE)), zh_style.shape(text)
    found = {"core colons": core.colon_rate, "core pronouns": core.pronoun_rate,
             "page colons": whole.colon_rate, "page pronouns": whole.pronoun_rate}
    limits = {"core colons": zh_style.COLON_LIMIT, "core pronouns": zh_style.PRONOUN_LIMIT,
              "page colons": zh_style.COLON_LIMIT, "page pronouns": zh_style.WHOLE_PRONOUN_LIMIT}
    assert {what: rate for what, rate in found.items() if rate > limits[what]} == {}
