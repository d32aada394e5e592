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
"""

import argparse
import ast
import colorsys
import difflib
import functools
import html
import http.server
import itertools
import json
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import mistune
import pygments
from pygments.lexers import PythonLexer, TextLexer, get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.token import STANDARD_TYPES, Comment, Keyword, Name, Operator, String
from pygments.util import ClassNotFound

# The course package (the banner grammar, the offline environment, scenario.json) sits at the
# repository root, which is not on sys.path when this runs as `python web/build.py`.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from course import (  # noqa: E402  (after the sys.path line above, which it needs)
    PLAY,
    ScenarioError,
    offline_environment,
    read_scenario,
    section_above,
)
from course.translations import (  # noqa: E402
    LANGUAGE,
    LANGUAGES,
    SITE_FOLDER,
    TRANSLATION,
    is_language_line,
)
from course.translations import MARKER as TRANSLATION_MARKER  # noqa: E402

# ======================================================================
# PATHS AND SETTINGS
# ======================================================================

WEB = Path(__file__).resolve().parent  # web/
ROOT = WEB.parent  # the repository: where the chapters live
ASSETS = WEB / "assets"  # the CSS, JavaScript and icon copied into every build
DEFAULT_OUT = WEB / "dist"

RUN_TIMEOUT = 120  # seconds one chapter's recorded run may take
MARKER = ".course-site"  # a file that says "this folder is a build of the site"
PYTHON = ".venv/bin/python"  # the Python of the commands shown, as the README gives them

# What a recording shows instead of what belongs to the machine that built the site.
SHOWN_TMPDIR = "$TMPDIR"  # the temporary folder the run's workdir was made in
SHOWN_SESSION_ID = "YYYYMMDD-HHMMSS-xxxxxx"  # s06: the start time and six random hex digits
SHOWN_SECONDS = "x.xxx"  # how long a test run took ("Ran 3 tests in x.xxxs")

LIGHT_STYLE = "default"  # pygments styles for code: light, and dark (prefers-color-scheme)
DARK_STYLE = "github-dark"
MIN_CONTRAST = 4.6  # WCAG AA asks 4.5:1 for text; a little more, against rounding


class BuildError(Exception):
    """The site cannot be built. The message is one line and names the chapter."""


# ======================================================================
# THE TWO LANGUAGES: every word the build and site.js write
# ======================================================================
# The site is built twice, in English and in Simplified Chinese (the lessons' README.md and
# README.zh-CN.md), from the same recordings. The English pages sit at the top of the build,
# the Chinese ones in zh-CN/; both use the one copy of assets/, traces/, notebooks/ and images/.
# Every word of the page chrome is here, by language, in the terms of GLOSSARY.zh-CN.md:
# code, identifiers, tool names, commands and output stay as they are. A value is a
# str.format template ("{n}"); a key ending in "_one" is the form for one, where it differs.
# STRINGS[lang]["script"] is what site.js shows, embedded in each page as JSON.

ZH = LANGUAGE  # "zh-CN", from course.translations
SUBFOLDER = SITE_FOLDER  # where a language's pages go in the build: "", "zh-CN/"
UP = {"en": "", ZH: "../"}  # from a language's pages to the shared files: assets/, traces/...
LESSON_FILE = {"en": "README.md", ZH: TRANSLATION}

STRINGS = {
    "en": {
        "course_title": "Build a coding agent",
        "language_name": "English",  # the switch to this language, written in it
        "language_label": "English: this page in English",
        "skip": "Skip to the content",
        "nav_label": "Course",
        "compare": "Compare",
        "footer": "Built from the course repository by <code>web/build.py</code>.\n"
                  "Everything on this site is local: it works offline.",
        # the home page
        "n_chapters": "{n} chapters",
        "n_chapters_one": "{n} chapter",
        "intro": "A Claude-Code-style coding agent, built in\n{chapters}.\n"
                 "Each chapter is the whole program so far plus one idea: read the lesson, the "
                 "code,\nthe diff against the chapter before, and step through a recorded run.\n"
                 'To put any two chapters side by side, use <a href="compare.html">Compare</a>.',
        "how_heading": "How to use this course",
        "how_run": "<strong>Run a chapter</strong>, offline, from the repository root:\n"
                   "<code>{command}</code>, and type the prompt its banner shows.",
        "how_read": "<strong>Read the lesson</strong>: the <em>Lesson</em> tab, then the "
                    "<em>Code</em> tab, where\nthe lines new in the chapter are marked.",
        "how_diff": "<strong>Diff it</strong> against the chapter before: the <em>Diff</em> "
                    'tab, <a href="compare.html">Compare</a> for any two chapters, or '
                    "<code>{command}</code>. The diff is the lesson: one new idea, and what it "
                    "changed.",
        "how_replay": "<strong>Replay a run</strong>: the <em>Run</em> tab steps through a run "
                      "recorded when this\nsite was built, call by call, with what the user "
                      "answered. The Run tab's command saves its trace, and this plays\n"
                      "it again: <code>{command}</code>.",
        "chapters_heading": "The chapters",
        "card_stats": '<span class="plus">+{added}</span> <span class="minus">−{removed}</span> '
                      "lines against {previous}",
        "card_first": '<span class="plus">+{lines}</span> lines: the first chapter',
        "card_calls": "{n} model calls in the recorded run",
        "card_calls_one": "{n} model call in the recorded run",
        "diagram_label": "The diagram of {name}, as its code.py draws it",
        "diagram_caption": "From the docstring of <code>{name}/code.py</code>",
        # a chapter page
        "notebook": "The chapter as a walk-through to run in Jupyter: ",
        "tabs_label": "Views of this chapter",
        "tab_lesson": "Lesson",
        "tab_code": "Code",
        "tab_diff": "Diff",
        "tab_run": "Run",
        "pager_label": "Previous and next chapter",
        "no_lesson_heading": "The lesson is not written yet",
        "no_lesson": "This chapter has no <code>{file}</code> yet. Until it does, here is what "
                     "its\n<code>code.py</code> says about itself:",
        "no_docstring": "(code.py has no docstring yet)",
        "untranslated": "This lesson has no translation yet: here it is in English.",
        "code_new": 'The <span class="plus">{n} lines</span> marked <strong>+</strong> are new '
                    "in this chapter: <code>{previous}/code.py</code> does not have them.",
        "code_first": "The first chapter: all {n} lines are new.",
        # diffs
        "diff_against": "Diff against {name}",
        "diff_first_heading": "Diff",
        "diff_first": "This is the first chapter: there is no chapter before it to compare with.",
        "diff_lines": "The lines",
        "diff_layout": "Diff layout",
        "unified": "Unified",
        "split": "Side by side",
        "unified_label": "Unified diff: {old}/code.py → {new}/code.py",
        "old_label": "Old: {old}/code.py",
        "new_label": "New: {new}/code.py",
        "same_files": "The two files are the same.",
        "whats_new": "What is new in {new}, against {old}",
        "whats_new_lines": '<span class="plus">+{added}</span> <span class="minus">−{removed}'
                           "</span>\n  lines: <code>{old}/code.py</code> →\n  "
                           "<code>{new}/code.py</code>",
        "tools_added": "Tools added",
        "tools_removed": "Tools removed",
        "functions_added": "Functions added",
        "functions_changed": "Functions changed",
        "functions_removed": "Functions removed",
        "summary_item": "<li><strong>{label}</strong>{count}: {names}</li>",
        "count": " ({n})",
        "none": "none",
        "list_separator": ", ",
        "whats_new_note": "Computed from the two files: tools are the dicts with an\n"
                          "<code>input_schema</code>, functions are compared by their source.",
        # the Run tab
        "run_heading": "Run: “{prompt}”",
        "n_model_calls": "{n} model calls",
        "n_model_calls_one": "{n} model call",
        "recorded": "Recorded when the site was built, by this command, from the repository "
                    "root\n({calls}).{answers}",
        "recorded_answers": " The <code>printf</code> gives the answers to its questions, one a "
                            "line: {answers}.",
        "shown_note": "Shown as recorded, but for the machine that built the site: its "
                      "temporary\nfolder reads <code>{tmpdir}</code>, a random part of a name "
                      "<code>xxxx</code>, a session id\n<code>{session}</code>, and the time a "
                      "test run took <code>{seconds}s</code>.\n"
                      'The command writes its trace in <code>play/</code> (or <a href="{trace}" '
                      'download="{saved}">download it</a> there); replay it:\n'
                      "<code>{replay}</code>",
        "calls_heading": "The model calls, one by one",
        "noscript": "The step player needs JavaScript. The chart, the numbers and the terminal\n"
                    "below show the whole run.",
        "previous": "← Previous",
        "next": "Next →",
        "step_counter": "Step {step} of {steps}",
        "keys_hint": "or the ← and → keys",
        "size_heading": "How the request grows",
        "terminal_heading": "The terminal",
        "stderr": "What it wrote to stderr",
        "size_label": "Step {n}: {total} characters ({fixed} fixed + {history} history)",
        "mini_label": "Characters sent per call\n    (<span class=\"key fixed\"></span> fixed, "
                      "<span class=\"key history\"></span> history)",
        "n_calls": "{n} calls",
        "n_calls_one": "{n} call",
        "chart_caption": "Request size per model call, in characters of JSON (not tokens):\n  "
                         '<span class="key fixed"></span> fixed part (system prompt + tools) '
                         'and\n  <span class="key history"></span> history (messages). The '
                         "request grows from\n  {first} to {last} characters over\n  {calls}; "
                         "a bar opens its step.",
        "chart_label": "Stacked bars, one per model call",
        "numbers": "The numbers",
        "numbers_head": "<th>call</th><th>fixed</th><th>history</th><th>total (characters)</th>",
        # the captions of the steps, computed from the trace and the terminal
        "caption_separator": "; ",
        "caption_end": ".",
        "prompt_sent": "the prompt goes to the model",
        "refused": "{name} was refused: {reason}",
        "error": "{name} returned an error: {reason}",
        "refused_unknown": "a tool was refused: {reason}",  # a tool_use id not seen before
        "error_unknown": "a tool returned an error: {reason}",
        "plan_saved": "plan approved: saved to {path}",
        "plan_approved": "plan approved",
        "answer_back": "the user's answer goes back: {text}",
        "reminder_added": "reminder added to this turn: {text}",
        "hook_added": "the {event} hook's words added to this turn",
        "a_hook_added": "a hook's words added to this turn",
        "words_added": "the user's words added to this turn",
        "cut_off": "the reply was cut off (stop_reason max_tokens)",
        "no_tool": "the model answered without a tool (stop_reason {stop}): the turn ends",
        "asks_user": "the model asked the user a question",
        "submits_plan": "the model submitted its plan",
        "asks_for": "the model asked for {tools}",
        "asks_for_many": "the model asked for {n} tools: {tools}",
        "approve_asked": "the harness asked to approve the plan; the user answered {answer}",
        "allow_asked": "the harness asked to allow {name}; the user answered {answer}",
        "answered": "the user answered {answer}",
        "empty_line": "an empty line",
        # the compare pages
        "compare_heading": "Compare two chapters",
        "compare_intro": "Pick two chapters to see how <code>code.py</code> changed from one to "
                         "the other.",
        "every_pair": "Every pair",
        "one_chapter": "There is only one chapter so far.",
        "picker_from": "From",
        "picker_to": "to",
        "from_to": 'From <a href="{old_page}">{old}</a>\nto <a href="{new_page}">{new}</a>.',
        "compare_title": "Compare {old} and {new}",
        "script": {
            "pick_two": "Pick two different chapters.",
            "step_counter": "Step {step} of {steps}",
            "input_as_sent": "The input as sent",
            "tool_result_for": "tool_result for {name} ({id})",
            "tag_new": "new",
            "tag_reminder": "reminder",
            "tag_user": "user",
            "asked": "in the terminal, the user is asked ",
            "answered": "The user answered: ",
            "empty_line": "(an empty line)",
            "tools_offered": "Tools offered",
            "no_longer_offered": " (no longer offered: {names})",
            "plan_mode": "Plan mode",
            "plan_on": "on (exit_plan_mode is offered, enter_plan_mode is not)",
            "plan_off": "off (enter_plan_mode is offered)",
            "todo_list": "Todo list (the last todo_write that succeeded)",
            "system_prompt": "System prompt",
            "system_prompt_changed": "System prompt (changed since the last call)",
            "model_and_limits": "Model and limits",
            "system": "System",
            "sent": "Sent: {n} messages",
            "sent_one": "Sent: {n} message",
            "earlier": "{n} earlier messages, sent in the last call too",
            "earlier_one": "{n} earlier message, sent in the last call too",
            "received": "Received: stop_reason {stop}",
            "session_state": "Session state, as the request shows it",
        },
    },
    ZH: {
        "course_title": "构建一个编程 agent",
        "language_name": "中文",
        "language_label": "中文：本页的简体中文版",
        "skip": "跳到正文",
        "nav_label": "课程",
        "compare": "对比",
        "footer": "由课程仓库里的 <code>web/build.py</code> 生成。\n"
                  "本站的一切都在本地：离线也能用。",
        "n_chapters": "{n} 章",
        "n_chapters_one": "{n} 章",
        "intro": "一个 Claude Code 风格的编程 agent，分 {chapters}搭建。\n"
                 "每一章都是到这一章为止的完整程序，再加一个新概念：读讲义、读代码、看它和前一章的 "
                 "diff，\n再一步一步看一次录下的运行。\n"
                 '要把任意两章放在一起看，用<a href="compare.html">对比</a>。',
        "how_heading": "怎样使用这门课",
        "how_run": "<strong>运行一章</strong>，离线，在仓库根目录：\n"
                   "<code>{command}</code>，然后输入它的横幅显示的提示词。",
        "how_read": "<strong>读讲义</strong>：先看<em>讲义</em>标签页，再看<em>代码</em>标签页，"
                    "\n那里标出了这一章新增的行。",
        "how_diff": "<strong>和前一章做 diff</strong>：<em>Diff</em> 标签页；任意两章用"
                    '<a href="compare.html">对比</a>；或者 <code>{command}</code>。'
                    "diff 就是讲义：一个新概念，以及它改了什么。",
        "how_replay": "<strong>回放一次运行</strong>：<em>运行</em>标签页一步一步展示构建本站时"
                      "录下的一次运行，\n每次调用模型一步，连同用户的回答。"
                      "运行标签页上的命令会存下它的 trace，\n"
                      "这条命令再放一遍：<code>{command}</code>。",
        "chapters_heading": "各章",
        "card_stats": '相对 {previous}：<span class="plus">+{added}</span> '
                      '<span class="minus">−{removed}</span> 行',
        "card_first": '<span class="plus">+{lines}</span> 行：第一章',
        "card_calls": "录下的运行调用了 {n} 次模型",
        "card_calls_one": "录下的运行调用了 {n} 次模型",
        "diagram_label": "{name} 的示意图，照它的 code.py 所画",
        "diagram_caption": "取自 <code>{name}/code.py</code> 的文档字符串",
        "notebook": "这一章的 notebook（英文），可以在 Jupyter 里一步步运行：",
        "tabs_label": "这一章的几种视图",
        "tab_lesson": "讲义",
        "tab_code": "代码",
        "tab_diff": "Diff",
        "tab_run": "运行",
        "pager_label": "上一章和下一章",
        "no_lesson_heading": "讲义还没有写",
        "no_lesson": "这一章还没有 <code>{file}</code>。在那之前，这里是它的\n"
                     "<code>code.py</code> 对自己的介绍：",
        "no_docstring": "（code.py 还没有文档字符串）",
        "untranslated": "这一章的讲义还没有中文版，下面是英文原文。",
        "code_new": '标着 <strong>+</strong> 的 <span class="plus">{n} 行</span>是这一章新增的：'
                    "<code>{previous}/code.py</code> 里没有它们。",
        "code_first": "第一章：全部 {n} 行都是新的。",
        "diff_against": "与 {name} 的 diff",
        "diff_first_heading": "Diff",
        "diff_first": "这是第一章：前面没有可以比较的章。",
        "diff_lines": "逐行",
        "diff_layout": "diff 的排版",
        "unified": "单栏",
        "split": "并排",
        "unified_label": "单栏 diff：{old}/code.py → {new}/code.py",
        "old_label": "旧：{old}/code.py",
        "new_label": "新：{new}/code.py",
        "same_files": "两个文件完全相同。",
        "whats_new": "{new} 相对 {old} 新增了什么",
        "whats_new_lines": '<span class="plus">+{added}</span> <span class="minus">−{removed}'
                           "</span>\n  行：<code>{old}/code.py</code> →\n  "
                           "<code>{new}/code.py</code>",
        "tools_added": "新增的工具",
        "tools_removed": "去掉的工具",
        "functions_added": "新增的函数",
        "functions_changed": "改动的函数",
        "functions_removed": "去掉的函数",
        "summary_item": "<li><strong>{label}</strong>{count}：{names}</li>",
        "count": "（{n}）",
        "none": "无",
        "list_separator": "、",
        "whats_new_note": "由两个文件算出：工具是带 <code>input_schema</code> 的 dict，\n"
                          "函数按源码比较。",
        "run_heading": "运行：“{prompt}”",
        "n_model_calls": "调用了 {n} 次模型",
        "n_model_calls_one": "调用了 {n} 次模型",
        "recorded": "构建本站时，在仓库根目录用这条命令录下（{calls}）。{answers}",
        "recorded_answers": "<code>printf</code> 给出它所提问题的回答，每行一个：{answers}。",
        "shown_note": "照录下的样子显示，只是构建本站的机器的信息换成了固定的写法：它的临时目录"
                      "写作 <code>{tmpdir}</code>，\n名字里随机的部分写作 <code>xxxx</code>，"
                      "会话 id 写作 <code>{session}</code>，\n一次测试运行的用时写作 "
                      "<code>{seconds}s</code>。\n"
                      '这条命令把 trace 写在 <code>play/</code> 里（也可以<a href="{trace}" '
                      'download="{saved}">下载</a>到那里），再回放：\n'
                      "<code>{replay}</code>",
        "calls_heading": "逐次查看模型调用",
        "noscript": "逐步播放需要 JavaScript。下面的图表、数字和终端输出展示了整次运行。",
        "previous": "← 上一步",
        "next": "下一步 →",
        "step_counter": "第 {step} 步，共 {steps} 步",
        "keys_hint": "也可以按 ← 和 → 键",
        "size_heading": "请求怎样变大",
        "terminal_heading": "终端",
        "stderr": "它写到 stderr 的内容",
        "size_label": "第 {n} 步：{total} 个字符（固定部分 {fixed} + 对话历史 {history}）",
        "mini_label": "每次调用发送的字符数\n    （<span class=\"key fixed\"></span> 固定部分，"
                      "<span class=\"key history\"></span> 对话历史）",
        "n_calls": "{n} 次调用",
        "n_calls_one": "{n} 次调用",
        "chart_caption": "每次调用模型时请求的大小，按 JSON 的字符数计（不是 token）：\n  "
                         '<span class="key fixed"></span> 固定部分（系统提示词 + 工具）和\n  '
                         '<span class="key history"></span> 对话历史（messages）。'
                         "经过 {calls}，\n  请求从 {first} 个字符增长到 {last} 个字符；"
                         "点一根柱子打开它那一步。",
        "chart_label": "堆叠柱状图，每次调用模型一根柱子",
        "numbers": "具体数字",
        "numbers_head": "<th>调用</th><th>固定部分</th><th>对话历史</th><th>合计（字符）</th>",
        "caption_separator": "；",
        "caption_end": "。",
        "prompt_sent": "提示词发给模型",
        "refused": "{name} 被拒绝：{reason}",
        "error": "{name} 返回了错误：{reason}",
        "refused_unknown": "某个工具被拒绝：{reason}",
        "error_unknown": "某个工具返回了错误：{reason}",
        "plan_saved": "计划已批准：保存在 {path}",
        "plan_approved": "计划已批准",
        "answer_back": "用户的回答发回给模型：{text}",
        "reminder_added": "这一轮加入了提醒：{text}",
        "hook_added": "这一轮加入了 {event} hook 的话",
        "a_hook_added": "这一轮加入了一个 hook 的话",
        "words_added": "这一轮加入了用户的话",
        "cut_off": "回复被截断了（stop_reason max_tokens）",
        "no_tool": "模型没有调用工具就作答（stop_reason {stop}）：这一轮结束",
        "asks_user": "模型向用户提了一个问题",
        "submits_plan": "模型提交了计划",
        "asks_for": "模型要调用 {tools}",
        "asks_for_many": "模型要调用 {n} 个工具：{tools}",
        "approve_asked": "harness 请用户批准计划；用户回答 {answer}",
        "allow_asked": "harness 询问是否允许 {name}；用户回答 {answer}",
        "answered": "用户回答 {answer}",
        "empty_line": "空行",
        "compare_heading": "对比两章",
        "compare_intro": "选两章，看 <code>code.py</code> 从一章到另一章怎样变化。",
        "every_pair": "所有组合",
        "one_chapter": "目前只有一章。",
        "picker_from": "从",
        "picker_to": "到",
        "from_to": '从 <a href="{old_page}">{old}</a>\n到 <a href="{new_page}">{new}</a>。',
        "compare_title": "对比 {old} 和 {new}",
        "script": {
            "pick_two": "请选两个不同的章。",
            "step_counter": "第 {step} 步，共 {steps} 步",
            "input_as_sent": "发送的原始输入",
            "tool_result_for": "tool_result，对应 {name}（{id}）",
            "tag_new": "新",
            "tag_reminder": "提醒",
            "tag_user": "用户",
            "asked": "在终端里，用户被问到 ",
            "answered": "用户的回答：",
            "empty_line": "（空行）",
            "tools_offered": "提供的工具",
            "no_longer_offered": "（不再提供：{names}）",
            "plan_mode": "计划模式",
            "plan_on": "开（提供 exit_plan_mode，不提供 enter_plan_mode）",
            "plan_off": "关（提供 enter_plan_mode）",
            "todo_list": "待办清单（最后一次成功的 todo_write）",
            "system_prompt": "系统提示词",
            "system_prompt_changed": "系统提示词（上次调用以来有变化）",
            "model_and_limits": "模型和限制",
            "system": "系统",
            "sent": "发送：{n} 条消息",
            "sent_one": "发送：{n} 条消息",
            "earlier": "前面 {n} 条消息，上次调用也发送过",
            "earlier_one": "前面 {n} 条消息，上次调用也发送过",
            "received": "收到：stop_reason {stop}",
            "session_state": "会话状态（从请求中看出）",
        },
    },
}


def say(lang, key, n=None, **values):
    """The chrome string `key` in `lang`, filled in; with n, its form for that number. Its
    <code> (a command, a file name) is marked as English on a page in another language."""
    table = STRINGS[lang]
    if n == 1 and f"{key}_one" in table:
        key = f"{key}_one"
    text = table[key].format(n=n, **values) if n is not None else table[key].format(**values)
    return text.replace("<code>", f"<code{english_inside(lang)}>")


def link_to(lang, target_lang, name):
    """The address of the page `name` of target_lang, from a page of lang (relative, so that
    the site works from the disk)."""
    return name if lang == target_lang else UP[lang] + SUBFOLDER[target_lang] + name


def english_inside(lang):
    """The attribute that marks English content (code, output) inside a page of `lang`."""
    return "" if lang == "en" else ' lang="en"'


def in_english(lang, fragment):
    """HTML that is English, marked so on a page of another language."""
    return fragment if lang == "en" else f'<span lang="en">{fragment}</span>'


# ======================================================================
# THE CHAPTERS
# ======================================================================

@dataclass
class Run:
    """One recorded run of a chapter's scenario, in the words it is shown in."""
    prompt: str
    answers: list
    command: str  # the command line, as a learner types it from the repository root
    stdout: str
    stderr: str
    calls: list  # one {"request": ..., "response": ...} per model call
    trace: str  # the trace file as the chapter wrote it (machine paths replaced)


@dataclass
class Chapter:
    name: str  # "s02_tools"
    folder: Path
    code: str  # the text of code.py
    previous: "Chapter | None" = None
    run: Run | None = None
    lesson: str | None = field(default=None, repr=False)  # README.md, if there is one yet
    lesson_zh: str | None = field(default=None, repr=False)  # README.zh-CN.md, if there is one

    def lesson_in(self, lang):
        return self.lesson if lang == "en" else self.lesson_zh

    @property
    def label(self):
        """The short name, as the REPL prompt and the navigation show it: "s02"."""
        return self.name.split("_")[0]

    @functools.cached_property
    def docstring(self):
        try:
            return ast.get_docstring(ast.parse(self.code)) or ""
        except SyntaxError:
            return ""

    @property
    def summary(self):
        """The first line of the docstring, without its "sNN_x: " prefix."""
        first = self.docstring.splitlines()[0] if self.docstring else ""
        return first.removeprefix(f"{self.name}:").strip()

    @property
    def title(self):
        return self.title_in("en")

    def summary_in(self, lang):
        """The summary in a language: the docstring's in English, the title of the
        translated lesson ("# s02_tools: 分发表和文件工具。") in Chinese (or the English one)."""
        lesson = self.lesson_in(lang)
        if lang == "en" or not lesson or not lesson.startswith("# "):
            return self.summary
        return lesson.partition("\n")[0][2:].removeprefix(f"{self.name}:").strip()

    def title_in(self, lang):
        summary = self.summary_in(lang).rstrip(".。")
        return f"{self.label} · {summary}" if summary else self.name

    @property
    def page(self):
        return f"{self.name}.html"

    @property
    def notebook(self):
        """The chapter's notebook (made by web/notebooks.py), which the site offers as a
        download."""
        return self.folder / "notebook.ipynb"

    @property
    def diagram(self):
        """The diagram of the docstring: its first block of four or more indented lines."""
        return docstring_diagram(self.docstring)

    @property
    def run_command(self):
        """The "Run it:" command of the docstring, or "" if it has none."""
        found = re.search(r"^Run it:\s+(\S.*)$", self.docstring, re.M)
        return found.group(1).strip() if found else ""


def docstring_diagram(docstring):
    lines = docstring.splitlines()
    block = []
    for line in [*lines, ""]:
        if line.startswith("    ") or (block and not line.strip()):
            block.append(line)
            continue
        while block and not block[-1].strip():
            block.pop()
        if sum(1 for part in block if part.strip()) >= 4:
            return textwrap.dedent("\n".join(block))
        block = []
    return ""


def find_chapters(root):
    """Every folder sNN_* under root that has a code.py, in order, each linked to the one before."""
    chapters = []
    for folder in sorted(root.glob("s[0-9][0-9]_*")):
        if not (folder / "code.py").is_file():
            continue
        readme, translated = folder / "README.md", folder / TRANSLATION
        chapter = Chapter(
            name=folder.name,
            folder=folder,
            code=(folder / "code.py").read_text(encoding="utf-8"),
            previous=chapters[-1] if chapters else None,
            lesson=readme.read_text(encoding="utf-8") if readme.is_file() else None,
            lesson_zh=translated.read_text(encoding="utf-8") if translated.is_file() else None,
        )
        chapters.append(chapter)
    return chapters


# ======================================================================
# RECORDING A CHAPTER'S RUN
# ======================================================================

def prompt_and_answers(chapter):
    """The scenario's prompt and its answers (the lines piped to stdin), checked by
    course.read_scenario."""
    try:
        scenario = read_scenario(chapter.folder)
    except ScenarioError as error:
        raise BuildError(f"{chapter.name}: cannot record the run: {error}") from None
    return scenario["prompt"], scenario["answers"]


def run_process(script, args, stdin, cwd, env, timeout):
    """`python SCRIPT ARGS` in its own process: the way the build launches a recording.
    (The tests pass another launcher, which forks it from a process that has imported
    anthropic already: the same run, sooner.)"""
    return subprocess.run(
        [sys.executable, str(script), *args], input=stdin, capture_output=True, text=True,
        errors="replace", timeout=timeout, cwd=cwd, env=env,
    )


def shown_command(chapter, prompt, answers):
    """The command of the recording, as a learner runs it from the repository root."""
    command = (f"{PYTHON} {chapter.name}/code.py --offline --trace {trace_path(chapter.name)} "
               f"{quote(prompt)}")
    if answers:
        command = f"printf {quote(''.join(a + chr(10) for a in answers))} | {command}"
    return command


def trace_path(name):
    """Where the shown command of chapter `name` writes its trace, from the repository root."""
    return f"{PLAY}/{name}.trace.jsonl"


def record_run(chapter, launch=run_process, temp_root=None):
    """Run the chapter's scenario offline, exactly as the shown command does, and return what
    happened, in the words it is shown in.

    The run's current folder and TMPDIR are a fresh temporary folder of the build: the trace
    file lands there, and so does the copy of workspace/ the chapter makes for its tools.
    The folder is made in temp_root (default: the system's temporary folder).
    """
    prompt, answers = prompt_and_answers(chapter)
    piped = "".join(answer + "\n" for answer in answers)  # one line for each question
    trace_name = trace_path(chapter.name)
    with tempfile.TemporaryDirectory(prefix=f"site-{chapter.name}-", dir=temp_root) as temporary:
        folder = Path(temporary)
        (folder / PLAY).mkdir()  # as in a clone, where play/ holds its README.md
        started = time.time()
        try:
            process = launch(
                chapter.folder / "code.py", ["--offline", "--trace", trace_name, prompt],
                piped, folder, offline_environment(TMPDIR=str(folder)), RUN_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            raise BuildError(
                f"{chapter.name}: the recorded run took longer than {RUN_TIMEOUT} s"
            ) from None
        except OSError as error:
            raise BuildError(f"{chapter.name}: cannot start code.py: {error}") from None
        ended = time.time()
        if process.returncode != 0:
            last_line = (process.stderr.strip().splitlines() or ["no output on stderr"])[-1]
            raise BuildError(
                f"{chapter.name}: code.py exited with {process.returncode}: {last_line}"
            )
        trace_file = folder / trace_name
        trace_text = trace_file.read_text(encoding="utf-8") if trace_file.exists() else ""
        shown = Normaliser(chapter, folder, started, ended)
        stdout, stderr, trace_text = (shown(text) for text in
                                      (process.stdout, process.stderr, trace_text))
    for text in (stdout, stderr, trace_text):
        shown.check(text)
    try:
        calls = [json.loads(line) for line in trace_text.splitlines() if line.strip()]
    except json.JSONDecodeError:
        raise BuildError(f"{chapter.name}: the trace is not JSON lines") from None
    if not calls:
        raise BuildError(
            f"{chapter.name}: the run wrote an empty trace (no model call was recorded)"
        )
    return Run(prompt=prompt, answers=answers, command=shown_command(chapter, prompt, answers),
               stdout=stdout, stderr=stderr, calls=calls, trace=trace_text)


class Normaliser:
    """What a recorded run shows of the machine that built it, put in fixed words.

    The paths come from the build itself, not from reading the output: the temporary folder
    it made for the run (and the workdir the chapter made in it, found on the disk), and the
    checkout. The session id is the run's start time (to the second, between the build's
    clock before and after the run) and six hex digits.
    """

    def __init__(self, chapter, folder, started, ended):
        self.chapter = chapter
        replacements = {}
        for made in sorted(path for path in folder.iterdir() if path.is_dir()):
            stem = made.name.rsplit("-", 1)[0] if "-" in made.name else "workdir"
            for form in {str(made), str(made.resolve())}:
                replacements[form] = f"{SHOWN_TMPDIR}/{stem}-xxxx"
            if re.fullmatch(r"build-an-agent-\d+", made.name):  # the learner's offline copies
                own = f"{SHOWN_TMPDIR}/build-an-agent-$UID"
                for form in {str(made), str(made.resolve())}:
                    replacements[form] = own
                for copy in sorted(path for path in made.iterdir() if path.is_dir()):
                    stem = copy.name.rsplit("-", 1)[0]
                    for form in {str(copy), str(copy.resolve())}:
                        replacements[form] = f"{own}/{stem}-xxxx"
        for form in {str(folder), str(folder.resolve())}:
            replacements[form] = SHOWN_TMPDIR
        root = chapter.folder.parent.resolve()
        replacements[f"{root}/"] = ""  # "plays /home/you/course/s01_loop/scenario.json"
        self.replacements = sorted(replacements.items(), key=lambda pair: -len(pair[0]))
        # Paths of this machine that must not be left: as whole paths, not inside other words.
        paths = {str(folder), str(folder.resolve()), str(root), str(Path.home())}
        if sys.prefix != sys.base_prefix:  # a virtual environment
            paths.add(sys.prefix)
        self.leaks = [(path, re.compile(re.escape(path) + r"(?![\w.-])"))
                      for path in sorted(paths) if len(path) > 1]
        seconds = range(int(started) - 1, int(ended) + 2)
        stamps = sorted({time.strftime("%Y%m%d-%H%M%S", time.localtime(s)) for s in seconds})
        self.session_id = re.compile(rf"\b(?:{'|'.join(stamps)})-[0-9a-f]{{6}}\b")

    def __call__(self, text):
        for path, shown in self.replacements:
            text = text.replace(path, shown)
            text = text.replace(json.dumps(path)[1:-1], json.dumps(shown)[1:-1])  # in JSON
        text = self.session_id.sub(SHOWN_SESSION_ID, text)
        return TEST_TIME.sub(lambda found: found[1] + SHOWN_SECONDS + "s", text)

    def check(self, text):
        for path, pattern in self.leaks:
            if pattern.search(text):
                raise BuildError(
                    f"{self.chapter.name}: the recorded run shows a path of this machine "
                    f"({path}); web/build.py must show it in other words"
                )


# How long a test run took: unittest's "Ran 3 tests in 0.002s", pytest's "3 passed in 0.01s".
# (Inside a trace a line break is the two characters \n: no \b before the first word.)
TEST_TIME = re.compile(r"(Ran \d+ tests? in |(?<![\d.])\d+ (?:passed|failed)\b[^\n]*? in )"
                       r"\d+\.\d+s\b")


def quote(text):
    """A shell word for the command line shown on the page."""
    return "'" + text.replace("'", "'\\''").replace("\n", "\\n") + "'"


def record_all(chapters, launch=run_process, temp_root=None):
    """Record every chapter's run at once: each run spends most of its time importing anthropic.
    Returns the futures; chapter.run is set by finish_recording."""
    pool = ThreadPoolExecutor(max_workers=max(len(chapters), 1))
    futures = [pool.submit(record_run, chapter, launch, temp_root) for chapter in chapters]
    pool.shutdown(wait=False)
    return futures


def finish_recording(chapters, futures):
    for chapter, future in zip(chapters, futures, strict=True):
        try:
            chapter.run = future.result()  # the first chapter's BuildError, in chapter order
        except BuildError:
            for rest in futures:
                rest.exception()  # let every run end before the build stops
            raise


# ======================================================================
# WHAT HAPPENED AT EACH STEP: USER EVENTS AND CAPTIONS
# ======================================================================

def tool_uses(message):
    content = message.get("content", [])
    if isinstance(content, str):
        return []
    return [block for block in content if block.get("type") == "tool_use"]


def blocks_of(message):
    content = message.get("content", [])
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def terminal_events(calls, stdout, answers):
    """The user's answers, found in the recorded terminal: {tool_use id: [event]}.

    The harness prints "  > NAME: ..." when it runs a tool, in the order of the tool_use
    blocks; a question to the user comes after it, and a piped answer is echoed after its
    question, so each answer belongs to the tool whose line came last. An event is
    {"question": the question's lines, "answer": the line the user gave}.
    """
    lines = stdout.split("\n")
    starts, position = [], 0
    for call in calls:
        for block in tool_uses(call["response"]):
            marker = f"  > {block['name']}"
            for index in range(position, len(lines)):
                if lines[index] == marker or lines[index].startswith(marker + ":"):
                    starts.append((block, index))
                    position = index + 1
                    break
    events, pending = {}, list(answers)
    for (block, start), following in itertools.zip_longest(starts, starts[1:]):
        end = following[1] if following else len(lines)
        for index in range(start + 1, end):
            line = lines[index]
            if not pending or not line.startswith(" ") or not re.search(
                    r"[:?>] " + re.escape(pending[0]) + "$", line):
                continue  # a question ends with ": ", "? " or "> ", then the echoed answer
            answer = pending.pop(0)
            first = index
            for back in range(index - 1, start, -1):  # a permission question: "  ? allow ..."
                if lines[back].startswith("  ? "):
                    first = back
                    break
            asked = [*lines[first:index], line[: len(line) - len(answer)].rstrip()]
            events.setdefault(block["id"], []).append(
                {"question": textwrap.dedent("\n".join(asked)).strip("\n"), "answer": answer}
            )
    return events


def result_text(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return json.dumps(content)


def first_sentence(text, limit=90):
    text = re.sub(r"\s+", " ", text).strip()
    found = re.match(r"(.+?)[.;](?:\s|$)", text)
    sentence = found.group(1) if found else text.rstrip(".")
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def said(answer, lang):
    if answer == "":
        return say(lang, "empty_line")
    return answer if len(answer) <= 40 else answer[:39] + "…"


def step_captions(calls, events, lang="en"):
    """One line per model call, saying what is new in it: what the request brings back
    (refusals, reminders, an approved plan), what the model asked for, and what the user
    answered in the terminal before the next call. In the words of STRINGS[lang]; what the
    tools and the model wrote is quoted as it is."""
    names, captions = {}, []
    for number, call in enumerate(calls):
        request, response = call["request"], call["response"]
        messages = request.get("messages", [])
        parts = []
        if number == 0:
            parts.append(say(lang, "prompt_sent"))
        elif messages and messages[-1].get("role") == "user":
            parts += news_of_the_turn(blocks_of(messages[-1]), names, lang)
        asked = tool_uses(response)
        for block in asked:
            names[block["id"]] = block["name"]
        parts += model_move(response, asked, lang)
        for block in asked:
            for event in events.get(block["id"], []):
                parts.append(event_caption(block, event, lang))
        captions.append(say(lang, "caption_separator").join(parts) + say(lang, "caption_end"))
    return captions


def news_of_the_turn(blocks, names, lang):
    parts = []
    for block in blocks:
        if block.get("type") == "tool_result":
            name = names.get(block.get("tool_use_id"))
            text = result_text(block.get("content"))
            if block.get("is_error"):
                refused = re.match(r"(Denied|Blocked|Refused)\b", text)
                reason = first_sentence(re.sub(r"^Denied: ", "", text))
                key = ("refused" if refused else "error") + ("" if name else "_unknown")
                parts.append(say(lang, key, name=name, reason=reason))
            elif name == "exit_plan_mode":
                saved = re.search(r"saved in (\S+?)\.?(?:\s|$)", text)
                parts.append(say(lang, "plan_saved", path=saved.group(1)) if saved
                             else say(lang, "plan_approved"))
            elif name == "ask_user_question":
                parts.append(say(lang, "answer_back", text=first_sentence(text, 60)))
        elif block.get("type") == "text":
            tag = re.match(r"\s*<(\w+)([^>]*)>(.*?)(?:</\1>|$)", block.get("text", ""), re.S)
            if tag and tag[1] == "reminder":
                parts.append(say(lang, "reminder_added", text=first_sentence(tag[3], 60)))
            elif tag and tag[1] == "hook":
                event = re.search(r'event="(\w+)"', tag[2])
                parts.append(say(lang, "hook_added", event=event[1]) if event
                             else say(lang, "a_hook_added"))
            else:
                parts.append(say(lang, "words_added"))
    return parts


def model_move(response, asked, lang):
    stop = response.get("stop_reason")
    if not asked:
        if stop == "max_tokens":
            return [say(lang, "cut_off")]
        return [say(lang, "no_tool", stop=stop)]
    moves, plain = [], []
    for block in asked:
        if block["name"] == "ask_user_question":
            moves.append(say(lang, "asks_user"))
        elif block["name"] == "exit_plan_mode":
            moves.append(say(lang, "submits_plan"))
        else:
            plain.append(block["name"])
    if plain:
        tools = say(lang, "list_separator").join(plain)
        moves.insert(0, say(lang, "asks_for_many", n=len(plain), tools=tools) if len(plain) > 1
                     else say(lang, "asks_for", tools=tools))
    return moves


def event_caption(block, event, lang):
    answer = said(event["answer"], lang)
    if block["name"] == "exit_plan_mode":
        return say(lang, "approve_asked", answer=answer)
    if event["question"].startswith("? allow"):
        return say(lang, "allow_asked", name=block["name"], answer=answer)
    return say(lang, "answered", answer=answer)


# ======================================================================
# HIGHLIGHTING
# ======================================================================

LIGHT = get_style_by_name(LIGHT_STYLE)
DARK = get_style_by_name(DARK_STYLE)


def css_class(token_type):
    """The short CSS class pygments gives a token type ("k" for a keyword)."""
    while token_type not in STANDARD_TYPES:
        token_type = token_type.parent
    return STANDARD_TYPES[token_type]


def look(style, token_type):
    """What a token looks like in a style: colour, bold, italic, underline."""
    found = style.style_for_token(token_type)
    return found["color"], found["bold"], found["italic"], found["underline"]


# The kinds of token the site colours, each with the colours pygments' styles give it: the
# words of the language, strings, docstrings, comments, and the names a def, a class or a
# decorator introduces. Everything else (names, numbers, operators) is plain text: a page of
# code then has half the elements, which is what the browser and an accessibility check
# spend their time on.
COLOURED = (String.Doc, String, Comment, Operator.Word, Keyword, Name.Function, Name.Class,
            Name.Decorator)
LOOK_OF = {Operator.Word: Keyword}  # "and", "not in": words of the language, like keywords


@functools.cache
def token_kind(token_type):
    """The kind of token it is coloured as (one of COLOURED, or Operator.Word's Keyword), or
    None for plain text."""
    for kind in COLOURED:
        if token_type in kind:
            return LOOK_OF.get(kind, kind)
    return None


@functools.cache
def token_look(token_type):
    """(light, dark) look of a token type, or None when it is plain text."""
    kind = token_kind(token_type)
    return None if kind is None else (look(LIGHT, kind), look(DARK, kind))


def highlight_pieces(code, lexer):
    """Highlighted HTML, one string per source line.

    Neighbouring tokens that look the same in both styles share one <span> (with the class
    of the first), and plain text gets none: the page has a few thousand elements less,
    which is what an accessibility check spends its time on, and looks exactly the same.
    Tokens that span lines (docstrings) are cut at each newline, so that every line stands
    alone.
    """
    lines, run, run_class, run_look, spaces = [[]], [], "", None, ""

    def close():
        nonlocal run, run_look
        if run:
            text = html.escape("".join(run), quote=False)
            lines[-1].append(f'<span class="{run_class}">{text}</span>' if run_look else text)
        run, run_look = [], None

    for token_type, value in pygments.lex(code, lexer):
        for number, piece in enumerate(value.split("\n")):
            if number:
                close()
                lines[-1].append(html.escape(spaces, quote=False))
                spaces = ""
                lines.append([])
            if not piece:
                continue
            if piece.isspace():
                spaces += piece  # goes with the run if the next token looks the same
                continue
            kind = token_look(token_type)
            if kind != run_look or not run:
                close()
                lines[-1].append(html.escape(spaces, quote=False))
                run_class = css_class(token_kind(token_type)) if kind else ""
                run_look = kind
            else:
                run.append(spaces)
            spaces = ""
            run.append(piece)
    close()
    lines[-1].append(html.escape(spaces, quote=False))
    return ["".join(line) for line in lines]


@functools.cache  # each code.py is shown in several diffs
def highlight_lines(source):
    """Python source as a list of HTML lines, one per source line."""
    return highlight_pieces(source, PythonLexer(stripnl=False))[: len(source.splitlines())]


def highlight_block(code, language, lang="en"):
    """A fenced code block of the lesson, highlighted for its language (plain text if unknown).
    It may scroll sideways, so it can take the keyboard's focus. (`lang`: the page's.)"""
    try:
        lexer = get_lexer_by_name(language, stripnl=False) if language else TextLexer()
    except ClassNotFound:
        lexer = TextLexer()
    code = code.rstrip("\n")
    body = "\n".join(highlight_pieces(code, lexer)[: len(code.splitlines())])
    return f'<div class="hl"{english_inside(lang)}><pre tabindex="0">{body}\n</pre></div>\n'


# ---- the colours of code, readable on every background they sit on ----

def site_colours():
    """The colour variables of site.css: ({name: colour} light, {name: colour} dark)."""
    css = (ASSETS / "site.css").read_text(encoding="utf-8")
    light_block = re.search(r":root\s*{(.*?)}", css, re.S).group(1)
    dark_block = re.search(r"prefers-color-scheme:\s*dark\)\s*{\s*:root\s*{(.*?)}", css, re.S)
    variables = re.compile(r"--([\w-]+):\s*(#[0-9a-fA-F]{6})\b")
    return dict(variables.findall(light_block)), dict(variables.findall(dark_block.group(1)))


# The backgrounds code sits on: the code block, the page, diff lines added and removed.
CODE_BACKGROUNDS = ("code-bg", "page", "panel", "plus-bg", "minus-bg", "empty-bg")


def luminance(colour):
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(one, other):
    high, low = sorted((luminance(one), luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def readable(colour, backgrounds, dark):
    """The colour, made darker (light pages) or lighter (dark pages) in small steps, keeping
    its hue, until it reaches MIN_CONTRAST against every background."""
    red, green, blue = (int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    hue, lightness, saturation = colorsys.rgb_to_hls(red, green, blue)
    for _ in range(100):
        channels = colorsys.hls_to_rgb(hue, lightness, saturation)
        candidate = "#" + "".join(f"{round(c * 255):02x}" for c in channels)
        if min(contrast(candidate, b) for b in backgrounds) >= MIN_CONTRAST:
            return candidate
        lightness = min(lightness + 0.01, 1) if dark else max(lightness - 0.01, 0)
    return "#ffffff" if dark else "#000000"


def token_rule(selector, token_look_, backgrounds, dark):
    colour, bold, italic, underline = token_look_
    parts = [f"color: {readable('#' + colour, backgrounds, dark)}" if colour
             else "color: inherit"]
    parts.append(f"font-weight: {'bold' if bold else 'normal'}")
    parts.append(f"font-style: {'italic' if italic else 'normal'}")
    if underline:
        parts.append("text-decoration: underline")
    return f"{selector} {{ {'; '.join(parts)} }}"


def pygments_css():
    """The colours of the highlighted code, light and dark: the two pygments styles, each
    colour adjusted to be readable on every background code has on the site."""
    light_colours, dark_colours = site_colours()
    light_backgrounds = [light_colours[name] for name in CODE_BACKGROUNDS]
    dark_backgrounds = [dark_colours[name] for name in CODE_BACKGROUNDS]
    light, dark = [], []
    for kind in dict.fromkeys(token_kind(kind) for kind in COLOURED):
        short, pair = css_class(kind), token_look(kind)
        light.append(token_rule(f".hl .{short}", pair[0], light_backgrounds, dark=False))
        dark.append(token_rule(f"  .hl .{short}", pair[1], dark_backgrounds, dark=True))
    return ("/* The colours of code: pygments' " + LIGHT_STYLE + " and " + DARK_STYLE +
            " styles\n   for the kinds of token the site colours, made readable on the site's "
            "   backgrounds by web/build.py. */\n"
            + "\n".join(light) + "\n\n@media (prefers-color-scheme: dark) {\n"
            + "\n".join(dark) + "\n}\n")


# ======================================================================
# DIFFS
# ======================================================================

@functools.cache
def line_matcher(old_code, new_code):
    """difflib's matcher for two files, line by line (made once per pair of files).

    The same matcher as difflib.unified_diff, so the counts agree with the
    chapter table of the course README.
    """
    return difflib.SequenceMatcher(None, old_code.splitlines(), new_code.splitlines())


@dataclass
class Diff:
    """code.py of one chapter against another, line by line."""
    old: Chapter
    new: Chapter

    @property
    def opcodes(self):
        return line_matcher(self.old.code, self.new.code).get_opcodes()

    @property
    def added(self):
        return sum(j2 - j1 for tag, i1, i2, j1, j2 in self.opcodes if tag in ("insert", "replace"))

    @property
    def removed(self):
        return sum(i2 - i1 for tag, i1, i2, j1, j2 in self.opcodes if tag in ("delete", "replace"))

    @property
    def added_line_numbers(self):
        """The lines of the new file (from 1) that the old one does not have."""
        return {j + 1 for tag, i1, i2, j1, j2 in self.opcodes if tag in ("insert", "replace")
                for j in range(j1, j2)}

    def hunks(self, context=3):
        """The changes in groups with `context` lines around them, as in diff -u."""
        return list(line_matcher(self.old.code, self.new.code).get_grouped_opcodes(context))


def hunk_header(group, new_lines):
    first, last = group[0], group[-1]
    old_start, old_count = first[1] + 1, last[2] - first[1]
    new_start, new_count = first[3] + 1, last[4] - first[3]
    section = section_above(new_lines, first[3])
    return f"@@ -{old_start},{old_count} +{new_start},{new_count} @@ {section}".rstrip()


class Column:
    """A gutter (line numbers, signs) and lines of code, built line by line; lines of one
    kind in a row share one element (<ins>, <del>, or a span), and so does their gutter."""

    TAGS = {"added": "ins", "removed": "del", "context": "span", "empty": "span", "hunk": "span"}

    def __init__(self):
        self.gutter, self.code = [], []
        self.kind, self.run_gutter, self.run_code = None, [], []

    def add(self, kind, gutter, code_html):
        if kind != self.kind:
            self.flush()
            self.kind = kind
        self.run_gutter.append(html.escape(gutter) + "\n")
        self.run_code.append(code_html + "\n")

    def flush(self):
        if self.kind:
            tag = self.TAGS[self.kind]
            self.gutter.append(f'<span class="{self.kind}">{"".join(self.run_gutter)}</span>')
            self.code.append(f'<{tag} class="{self.kind}">{"".join(self.run_code)}</{tag}>')
        self.kind, self.run_gutter, self.run_code = None, [], []

    def html(self, label, lang="en"):
        self.flush()
        return (f'<div class="scroll hl" tabindex="0" role="region" '
                f'aria-label="{html.escape(label)}"><div class="rows"{english_inside(lang)}>'
                f'<pre class="gutter" aria-hidden="true">{"".join(self.gutter)}</pre>'
                f'<pre class="lines"><code>{"".join(self.code)}</code></pre></div></div>')


def number_width(diff):
    return len(str(max(len(diff.old.code.splitlines()), len(diff.new.code.splitlines()), 1)))


def unified_view(diff, lang):
    """The diff as in diff -u: old and new line numbers and a sign in the gutter, then the
    line; lines added are <ins>, lines removed <del>."""
    old_html, new_html = highlight_lines(diff.old.code), highlight_lines(diff.new.code)
    new_lines = diff.new.code.splitlines()
    width = number_width(diff)
    column = Column()
    for group in diff.hunks():
        column.add("hunk", "", html.escape(hunk_header(group, new_lines)))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                    column.add("context", f"{i + 1:>{width}} {j + 1:>{width}}  ", new_html[j])
                continue
            for i in range(i1, i2):
                column.add("removed", f"{i + 1:>{width}} {'':>{width}} -", old_html[i])
            for j in range(j1, j2):
                column.add("added", f"{'':>{width}} {j + 1:>{width}} +", new_html[j])
    if not diff.hunks():
        column.add("context", "", say(lang, "same_files"))
    return column.html(say(lang, "unified_label", old=diff.old.name, new=diff.new.name), lang)


def side_by_side_view(diff, lang):
    """The same changes, old on the left and new on the right, line beside line: each side
    scrolls on its own, and both have the same lines, so they stay level."""
    old_html, new_html = highlight_lines(diff.old.code), highlight_lines(diff.new.code)
    new_lines = diff.new.code.splitlines()
    width = number_width(diff)
    left, right = Column(), Column()
    for group in diff.hunks():
        header = html.escape(hunk_header(group, new_lines))
        left.add("hunk", "", header)
        right.add("hunk", "", header)
        for tag, i1, i2, j1, j2 in group:
            for i, j in itertools.zip_longest(range(i1, i2), range(j1, j2)):
                for column, index, lines, kind, sign in (
                    (left, i, old_html, "removed", "-"), (right, j, new_html, "added", "+")
                ):
                    if index is None:
                        column.add("empty", "", "")
                    elif tag == "equal":
                        column.add("context", f"{index + 1:>{width}}  ", lines[index])
                    else:
                        column.add(kind, f"{index + 1:>{width}} {sign}", lines[index])
    if not diff.hunks():
        left.add("context", "", say(lang, "same_files"))
        right.add("context", "", say(lang, "same_files"))
    return (f'<div class="split">{left.html(say(lang, "old_label", old=diff.old.name), lang)}'
            f'{right.html(say(lang, "new_label", new=diff.new.name), lang)}</div>')


def diff_views(diff, id_prefix, lang, heading_level=3):
    """The summary, then both views of a diff, with buttons to switch between them (site.js;
    the layout chosen goes in the address: #diff-split)."""
    h = f"h{heading_level}"
    return f"""
{diff_summary(diff, id_prefix, h, lang)}
<{h} id="{id_prefix}-lines">{say(lang, "diff_lines")}</{h}>
<div class="view-switch" role="group" aria-label="{say(lang, "diff_layout")}">
  <button type="button" data-view="{id_prefix}-unified" aria-pressed="true">\
{say(lang, "unified")}</button>
  <button type="button" data-view="{id_prefix}-split" aria-pressed="false">\
{say(lang, "split")}</button>
</div>
<div class="diff-view unified" id="{id_prefix}-unified">{unified_view(diff, lang)}</div>
<div class="diff-view" id="{id_prefix}-split">{side_by_side_view(diff, lang)}</div>"""


# ---- what is new: computed from the two files ----

@functools.cache
def tool_names(code):
    """The tools a code.py defines: every dict literal with a "name" and an "input_schema"."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    names = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        keys = {key.value: value for key, value in zip(node.keys, node.values, strict=True)
                if isinstance(key, ast.Constant)}
        name = keys.get("name")
        if "input_schema" in keys and isinstance(name, ast.Constant):
            names.append(name.value)
    return sorted(set(names), key=names.index)


@functools.cache
def functions(code):
    """{name: source} of the functions of a code.py, methods as Class.method, in file order.
    The source is its whole lines, decorators included."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return {}
    lines = code.splitlines()
    found = {}

    def visit(nodes, prefix):
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                found[prefix + node.name] = "\n".join(lines[first - 1 : node.end_lineno])
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return found


@dataclass
class WhatIsNew:
    tools_added: list
    tools_removed: list
    functions_added: list
    functions_changed: list
    functions_removed: list
    lines_added: int
    lines_removed: int


def what_is_new(diff):
    old_tools, new_tools = tool_names(diff.old.code), tool_names(diff.new.code)
    old_functions, new_functions = functions(diff.old.code), functions(diff.new.code)
    return WhatIsNew(
        tools_added=[name for name in new_tools if name not in old_tools],
        tools_removed=[name for name in old_tools if name not in new_tools],
        functions_added=[name for name in new_functions if name not in old_functions],
        functions_changed=[name for name, source in new_functions.items()
                           if name in old_functions and old_functions[name] != source],
        functions_removed=[name for name in old_functions if name not in new_functions],
        lines_added=diff.added,
        lines_removed=diff.removed,
    )


def name_list(names, lang, suffix=""):
    if not names:
        return say(lang, "none")
    return say(lang, "list_separator").join(
        f"<code{english_inside(lang)}>{html.escape(name)}{suffix}</code>" for name in names)


def diff_summary(diff, id_prefix, h, lang):
    new = what_is_new(diff)
    rows = [
        ("tools_added", name_list(new.tools_added, lang), len(new.tools_added)),
        ("tools_removed", name_list(new.tools_removed, lang), len(new.tools_removed)),
        ("functions_added", name_list(new.functions_added, lang, "()"),
         len(new.functions_added)),
        ("functions_changed", name_list(new.functions_changed, lang, "()"),
         len(new.functions_changed)),
        ("functions_removed", name_list(new.functions_removed, lang, "()"),
         len(new.functions_removed)),
    ]
    items = "".join(
        say(lang, "summary_item", label=say(lang, key), names=names,
            count=say(lang, "count", n=count) if count else "")
        for key, names, count in rows if count or key != "tools_removed"
    )
    heading = say(lang, "whats_new", new=html.escape(diff.new.label),
                  old=html.escape(diff.old.label))
    lines = say(lang, "whats_new_lines", added=diff.added, removed=diff.removed,
                old=html.escape(diff.old.name), new=html.escape(diff.new.name))
    return f"""<section class="whats-new" aria-labelledby="{id_prefix}-new">
<{h} id="{id_prefix}-new">{heading}</{h}>
<p class="stats">{lines}</p>
<ul>{items}</ul>
<p class="note">{say(lang, "whats_new_note")}</p>
</section>"""


# ======================================================================
# THE LESSON (README.md)
# ======================================================================

def slug(text):
    """A heading's anchor, as GitHub makes it: "How to run it?" -> "how-to-run-it"."""
    text = re.sub(r"<[^>]+>", "", html.unescape(text)).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


class LessonRenderer(mistune.HTMLRenderer):
    """HTML for a chapter's README, fitted into the chapter page.

    - headings keep their level, but none is above <h2> (the page's <h1> is the
      chapter), and get ids "lesson-<slug>", so a README's own #links keep working; a
      translated heading gets the id of the English one it translates (its marker names it),
      so that the language switch keeps the section;
    - fenced code is highlighted by pygments;
    - a link to another chapter, its code or its scenario goes to that page of
      the site, a README.md to the English page, a README.zh-CN.md to the Chinese one;
      a link off the site, or to a file the site does not have, becomes
      text that shows where it points (the site links to no other host);
    - raw HTML is shown as text.
    """

    def __init__(self, chapter, chapter_names, known_ids, lang="en", anchors=None):
        super().__init__(escape=True)
        self.chapter = chapter
        self.lang = lang  # the page's language
        self.anchors = anchors or {}  # {slug of a translated heading: slug of the English one}
        self.chapter_names = chapter_names
        self.known_ids = known_ids  # ids of the headings (from a first pass), for #links
        self.ids = []
        self.images = []  # (source file, name in the site) to copy

    def heading(self, text, level, **attrs):
        own = slug(text) or "section"
        anchor = "lesson-" + self.anchors.get(own, own)
        while anchor in self.ids:
            anchor += "-1"
        self.ids.append(anchor)
        level = min(max(level, 2), 6)
        return f'<h{level} id="{anchor}">{text}</h{level}>\n'

    def block_code(self, code, info=None):
        language = info.split()[0] if info and info.strip() else ""
        return highlight_block(code, language, self.lang)

    def codespan(self, text):
        return super().codespan(text).replace("<code>", f"<code{english_inside(self.lang)}>", 1)

    def link(self, text, url, title=None):
        target = self.site_target(url)
        if target is None:  # text, and where it points
            if strip_tags(text) == url:
                return f"<code>{text}</code>"
            return f'{text} <span class="where">({html.escape(url)})</span>'
        title_attribute = f' title="{html.escape(title)}"' if title else ""
        return f'<a href="{html.escape(target)}"{title_attribute}>{text}</a>'

    def image(self, text, url, title=None):
        source = self.local_file(url)
        if source is None or not source.is_file():
            return f'<span class="where">[image: {html.escape(text)} ({html.escape(url)})]</span>'
        name = f"{self.chapter.name}-{source.name}"
        self.images.append((source, name))
        return f'<img src="{UP[self.lang]}images/{html.escape(name)}" alt="{html.escape(text)}">'

    def local_file(self, url):
        """The repository file a relative url points at, or None."""
        if re.match(r"^[a-z][a-z0-9+.-]*:", url, re.I) or url.startswith("//"):
            return None
        path = url.split("#")[0].split("?")[0]
        return (self.chapter.folder / path).resolve() if path else None

    def site_target(self, url):
        """Where a README link goes in the site, or None when the site has no such page."""
        lang = self.lang
        if url.startswith("#"):
            own = slug(unquote(url[1:]))
            anchor = "lesson-" + self.anchors.get(own, own)
            return f"#{anchor}" if anchor in self.known_ids else None
        source = self.local_file(url)
        if source is None:
            return None
        root = self.chapter.folder.parent.resolve()
        pages = {"": None, **{name: f"{name}.html" for name in self.chapter_names}}
        for name, page_name in pages.items():
            folder = root / name if name else root
            page_name = page_name or "index.html"
            if source == folder:
                return page_name
            for target_lang in LANGUAGES:
                if source == folder / LESSON_FILE[target_lang]:
                    return link_to(lang, target_lang, page_name)
            if not name:
                continue
            if source == folder / "code.py":
                return f"{page_name}#code"
            if source == folder / "scenario.json":
                return f"{page_name}#run"
            if source == folder / "notebook.ipynb" and source.is_file():
                return f"{UP[lang]}notebooks/{name}.ipynb"
        return None


def strip_tags(text):
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def render_lesson(chapter, chapter_names, lang="en"):
    """The README (README.zh-CN.md for lang "zh-CN") as HTML, and the images it uses. Two
    passes: the first finds the headings.

    A title line ("# s01_loop: the agent loop.") is left out: the page's <h1> says it, and so
    is the language line under it (the page has its own switch), and a line that holds only
    an HTML comment, such as the markers of the generated "What changed" table and of a
    translation (raw HTML would be shown as text).
    """
    markdown = chapter.lesson_in(lang)
    if markdown.startswith("# "):
        markdown = markdown.partition("\n")[2]
    anchors = english_anchors(markdown)
    markdown = "".join(line for line in markdown.splitlines(keepends=True)
                       if not re.fullmatch(r"\s*<!--.*-->\s*", line)
                       and not is_language_line(line))
    plugins = ["table", "strikethrough"]
    first = LessonRenderer(chapter, chapter_names, set(), lang, anchors)
    mistune.create_markdown(renderer=first, plugins=plugins)(markdown)
    renderer = LessonRenderer(chapter, chapter_names, set(first.ids), lang, anchors)
    body = mistune.create_markdown(renderer=renderer, plugins=plugins)(markdown)
    return body, renderer.images


def english_anchors(markdown):
    """{slug of a translated heading: slug of the English heading it translates}, from the
    marker under each heading of a translation (nothing for an English page)."""
    lines = markdown.splitlines()
    found = {}
    for line, following in zip(lines, lines[1:], strict=False):
        heading = re.fullmatch(r"#{1,6}\s+(.*?)\s*", line)
        marker = TRANSLATION_MARKER.fullmatch(following.strip())
        if heading and marker:
            found.setdefault(slug(heading[1]), slug(marker["title"]))
    return found


def lesson_placeholder(chapter, lang):
    docstring = html.escape(chapter.docstring) or say(lang, "no_docstring")
    return f"""<h2 id="lesson-not-written">{say(lang, "no_lesson_heading")}</h2>
<p>{say(lang, "no_lesson", file=LESSON_FILE[lang])}</p>
<pre class="docstring"{english_inside(lang)}>{docstring}</pre>"""


# ======================================================================
# THE CODE TAB
# ======================================================================

def code_view(chapter, lang):
    """code.py with line numbers; the lines that are new in this chapter marked "+"."""
    new = Diff(chapter.previous, chapter).added_line_numbers if chapter.previous else set()
    lines = highlight_lines(chapter.code)
    width = len(str(len(lines)))
    column = Column()
    for number, line_html in enumerate(lines, 1):
        if number in new:
            column.add("added", f"{number:>{width}} +", line_html)
        else:
            column.add("context", f"{number:>{width}}  ", line_html)
    if chapter.previous:
        note = say(lang, "code_new", n=len(new), previous=html.escape(chapter.previous.name))
    else:
        note = say(lang, "code_first", n=len(lines))
    return (f'<p>{note}</p><div class="code-view">{column.html(f"{chapter.name}/code.py", lang)}'
            "</div>")


# ======================================================================
# THE RUN TAB
# ======================================================================

def request_sizes(call):
    """(fixed, history) in characters of JSON: system + tools, and messages."""
    request = call["request"]
    fixed = len(json.dumps(request.get("system", ""))) + len(json.dumps(request.get("tools", [])))
    return fixed, len(json.dumps(request.get("messages", [])))


def size_label(index, fixed, history, lang):
    return say(lang, "size_label", n=index + 1, total=f"{fixed + history:,}", fixed=f"{fixed:,}",
               history=f"{history:,}")


def mini_chart(calls, lang):
    """The chart beside the step buttons: one bar per model call, a button to that step."""
    sizes = [request_sizes(call) for call in calls]
    top = max(fixed + history for fixed, history in sizes)
    bars = []
    for index, (fixed, history) in enumerate(sizes):
        share = round(100 * (fixed + history) / top)
        fixed_share = round(100 * fixed / (fixed + history)) if fixed + history else 0
        bars.append(
            f'<li><button type="button" class="bar" id="step-{index + 1}" data-step="{index}" '
            f'aria-label="{size_label(index, fixed, history, lang)}" '
            f'style="--size: {share}%; --part: {fixed_share}%"><span class="fill"></span>'
            f'</button></li>'
        )
    return f"""<div class="mini-chart">
  <p class="mini-label"><span id="mini-label">{say(lang, "mini_label")}</span>
    <span class="mini-value" id="mini-value"></span></p>
  <ol class="bars" aria-labelledby="mini-label">{''.join(bars)}</ol>
</div>"""


def size_chart(calls, lang):
    """An inline SVG of stacked bars, one per model call: the fixed part and the history.
    Each bar links to its step in the player."""
    sizes = [request_sizes(call) for call in calls]
    top = max(fixed + history for fixed, history in sizes)
    scale = nice_ceiling(top)
    bar, gap, left, height, bottom = 34, 14, 56, 160, 26
    width = left + len(sizes) * (bar + gap) + gap
    parts = []
    for tick in (0, scale / 2, scale):  # grid lines and their labels
        y = height - tick / scale * (height - 10)
        parts.append(
            f'<line class="grid" x1="{left}" x2="{width}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="axis" x="{left - 6}" y="{y + 4:.1f}" '
            f'text-anchor="end">{short_number(tick)}</text>'
        )
    for index, (fixed, history) in enumerate(sizes):
        x = left + gap + index * (bar + gap)
        fixed_height = fixed / scale * (height - 10)
        history_height = history / scale * (height - 10)
        parts.append(
            f'<a class="bar" href="#step-{index + 1}" data-step="{index}" '
            f'aria-label="{size_label(index, fixed, history, lang)}">'
            f'<rect class="fixed" x="{x}" y="{height - fixed_height:.1f}" width="{bar}" '
            f'height="{fixed_height:.1f}"/>'
            f'<rect class="history" x="{x}" y="{height - fixed_height - history_height:.1f}" '
            f'width="{bar}" height="{history_height:.1f}"/>'
            f'<text class="axis" x="{x + bar / 2}" y="{height + 16}" '
            f'text-anchor="middle">{index + 1}</text></a>'
        )
    rows = "".join(f"<tr><td>{n}</td><td>{f:,}</td><td>{h:,}</td><td>{f + h:,}</td></tr>"
                   for n, (f, h) in enumerate(sizes, 1))
    caption = say(lang, "chart_caption", first=short_number(sum(sizes[0])),
                  last=short_number(sum(sizes[-1])), calls=say(lang, "n_calls", n=len(sizes)))
    return f"""<figure class="chart">
<figcaption>{caption}</figcaption>
<svg viewBox="0 0 {width} {height + bottom}" width="{width}" height="{height + bottom}"
  aria-label="{say(lang, "chart_label")}">
{''.join(parts)}
</svg>
<details><summary>{say(lang, "numbers")}</summary>
<table class="numbers"><thead><tr>{say(lang, "numbers_head")}</tr></thead>
<tbody>{rows}</tbody></table></details>
</figure>"""


def nice_ceiling(value):
    """The smallest of 1, 2, 2.5, 5 times a power of ten that is at least value."""
    power = 10 ** max(len(str(int(value))) - 1, 0)
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= value:
            return step * power
    return 10 * power


def short_number(value):
    return f"{value / 1000:g}k" if value >= 1000 else f"{value:g}"


def run_steps(run, lang):
    """For the player: a caption and the user's answers for each step."""
    events = terminal_events(run.calls, run.stdout, run.answers)
    captions = step_captions(run.calls, events, lang)
    steps = []
    for call, caption in zip(run.calls, captions, strict=True):
        here = {block["id"]: events[block["id"]] for block in tool_uses(call["response"])
                if block["id"] in events}
        steps.append({"caption": caption, "events": here})
    return steps


def run_data_json(chapter, lang):
    """The trace and the scenario as JSON for the player, safe inside a <script> element."""
    run = chapter.run
    data = {
        "chapter": chapter.name,
        "prompt": run.prompt,
        "answers": run.answers,
        "calls": run.calls,
        "steps": run_steps(run, lang),
    }
    return script_json(data)


def script_json(data):
    """JSON, safe inside a <script> element."""
    return json.dumps(data, ensure_ascii=False).replace("<", "\\u003c")


class PlanRenderer(mistune.HTMLRenderer):
    """A plan's Markdown inside the player, whose headings are <h4>: its own go below."""

    def heading(self, text, level, **attrs):
        return f"<h{min(level + 3, 6)}>{text}</h{min(level + 3, 6)}>\n"


def plan_templates(run):
    """Each plan the model submitted (exit_plan_mode), rendered from its Markdown at build
    time, for the player to show (mistune escapes any HTML in it)."""
    markdown = mistune.create_markdown(renderer=PlanRenderer(escape=True),
                                       plugins=["table", "strikethrough"])
    templates = []
    for call in run.calls:
        for block in tool_uses(call["response"]):
            plan = block.get("input", {}).get("plan") if isinstance(block.get("input"),
                                                                    dict) else None
            if block["name"] == "exit_plan_mode" and isinstance(plan, str):
                templates.append(f'<template id="plan-{html.escape(block["id"])}">'
                                 f"{markdown(plan)}</template>")
    return "\n".join(templates)


def run_view(chapter, lang):
    """The Run tab: the command, the player (site.js fills it from the embedded trace) with
    its caption and chart, the full chart, the terminal."""
    run = chapter.run
    calls = len(run.calls)
    en = english_inside(lang)
    stderr = (
        f'<details><summary>{say(lang, "stderr")}</summary><pre '
        f'class="terminal"{en}>{html.escape(run.stderr)}</pre></details>'
        if run.stderr.strip()
        else ""
    )
    answers = (say(lang, "recorded_answers", answers=say(lang, "list_separator").join(
        f'<code{en}>{html.escape(a)}</code>' for a in run.answers)) if run.answers else "")
    replay = (f"{PYTHON} {chapter.name}/code.py --script {trace_path(chapter.name)} "
              f"{quote(run.prompt)}")
    if run.answers:
        replay = f"printf {quote(''.join(a + chr(10) for a in run.answers))} | {replay}"
    note = say(lang, "shown_note", tmpdir=SHOWN_TMPDIR, session=SHOWN_SESSION_ID,
               seconds=SHOWN_SECONDS, trace=f"{UP[lang]}traces/{chapter.name}.jsonl",
               saved=Path(trace_path(chapter.name)).name,
               replay=html.escape(replay))
    return f"""
<p>{say(lang, "recorded", calls=say(lang, "n_model_calls", n=calls), answers=answers)}</p>
<pre class="terminal command"{en}><code>$ {html.escape(run.command)}</code></pre>
<p class="note">{note}</p>
<h3 id="run-calls">{say(lang, "calls_heading")}</h3>
<noscript><p>{say(lang, "noscript")}</p></noscript>
<div class="player" id="player" hidden>
  <div class="player-bar">
    <div class="player-controls">
      <button type="button" id="step-previous" aria-keyshortcuts="ArrowLeft">\
{say(lang, "previous")}</button>
      <output id="step-counter" aria-live="polite">{say(lang, "step_counter", step=1, steps=calls)}\
</output>
      <button type="button" id="step-next" aria-keyshortcuts="ArrowRight">{say(lang, "next")}\
</button>
      <span class="hint">{say(lang, "keys_hint")}</span>
    </div>
    {mini_chart(run.calls, lang)}
    <p class="caption" id="step-caption" aria-live="polite"></p>
  </div>
  <div id="step-view"></div>
</div>
<script type="application/json" id="run-data">{run_data_json(chapter, lang)}</script>
{plan_templates(run)}
<h3 id="run-size">{say(lang, "size_heading")}</h3>
{size_chart(run.calls, lang)}
<h3 id="run-terminal">{say(lang, "terminal_heading")}</h3>
<pre class="terminal"{en}><span class="prompt">$ {html.escape(run.command)}</span>
{html.escape(run.stdout)}</pre>
{stderr}"""


# ======================================================================
# PAGES
# ======================================================================

def page(title, body, chapters, lang, name, current=""):
    """A whole HTML page of language `lang`: head, the course navigation with the switch to
    the other language's page of the same name, the main part, the footer."""
    up = UP[lang]
    links = []
    for chapter in chapters:
        here = ' aria-current="page"' if chapter.name == current else ""
        links.append(
            f'<li><a href="{chapter.page}"{here} '
            f'title="{html.escape(chapter.title_in(lang))}">{chapter.label}</a></li>'
        )
    compare_here = ' aria-current="page"' if current == "compare" else ""
    home_here = ' aria-current="page"' if current == "home" else ""
    other = next(other for other in LANGUAGES if other != lang)
    switch = link_to(lang, other, name)
    return f"""<!doctype html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<link rel="alternate" hreflang="{other}" href="{switch}">
<link rel="icon" href="{up}assets/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="{up}assets/site.css">
<link rel="stylesheet" href="{up}assets/pygments.css">
<script>document.documentElement.classList.add("js")</script>
<script src="{up}assets/site.js" defer></script>
<script type="application/json" id="site-strings">{script_json(STRINGS[lang]["script"])}</script>
</head>
<body>
<a class="skip" href="#main">{say(lang, "skip")}</a>
<header class="site">
<nav aria-label="{say(lang, "nav_label")}">
  <a class="home" href="index.html"{home_here}>{html.escape(say(lang, "course_title"))}</a>
  <ul>{''.join(links)}
    <li><a href="compare.html"{compare_here}>{say(lang, "compare")}</a></li></ul>
  <a class="language-switch" href="{switch}" hreflang="{other}" lang="{other}" \
aria-label="{say(other, "language_label")}">{say(other, "language_name")}</a>
</nav>
</header>
<main id="main">
{body}
</main>
<footer><p>{say(lang, "footer")}</p></footer>
</body>
</html>
"""


def how_to_use(chapters, lang):
    """The four ways into a chapter, with commands taken from the chapters themselves."""
    first, second = chapters[0], chapters[1] if len(chapters) > 1 else None
    run = first.run_command or f"{PYTHON} {first.name}/code.py --offline"
    command = f"diff -u {first.name}/code.py {second.name}/code.py" if second else ""
    diff = f"<li>{say(lang, 'how_diff', command=command)}</li>" if second else ""
    replay = f"{PYTHON} {first.name}/code.py --script {trace_path(first.name)}"
    items = f"""<li>{say(lang, "how_run", command=html.escape(run))}</li>
<li>{say(lang, "how_read")}</li>
{diff}
<li>{say(lang, "how_replay", command=html.escape(replay))}</li>"""
    return f"""<h2 id="how-to-use">{say(lang, "how_heading")}</h2>
<ol class="how">
{items}
</ol>"""


def home_page(chapters, lang):
    en = english_inside(lang)
    cards = []
    for chapter in chapters:
        if chapter.previous:
            diff = Diff(chapter.previous, chapter)
            stats = say(lang, "card_stats", added=diff.added, removed=diff.removed,
                        previous=chapter.previous.label)
        else:
            stats = say(lang, "card_first", lines=len(chapter.code.splitlines()))
        topic = html.escape(chapter.name.split("_", 1)[1].replace("_", " "))
        diagram = (
            f'<figure class="diagram"><pre tabindex="0"{en} aria-label="'
            f'{html.escape(say(lang, "diagram_label", name=chapter.name))}">'
            f'{html.escape(chapter.diagram)}</pre>'
            f'<figcaption>{say(lang, "diagram_caption", name=chapter.name)}</figcaption>'
            f'</figure>' if chapter.diagram else ""
        )
        cards.append(f"""<li class="card">
  <h3><a href="{chapter.page}"><span class="label">{chapter.label}</span> \
<span{en}>{topic}</span></a></h3>
  <p>{html.escape(capitalise(chapter.summary_in(lang), lang))}</p>
  <p class="stats">{stats}</p>
  <p class="calls">{say(lang, "card_calls", n=len(chapter.run.calls))}</p>
  {diagram}
</li>""")
    chapters_count = say(lang, "n_chapters", n=len(chapters))
    title = html.escape(say(lang, "course_title"))
    body = f"""<h1>{title}</h1>
<p class="intro">{say(lang, "intro", chapters=chapters_count)}</p>
{how_to_use(chapters, lang)}
<h2 id="chapters">{say(lang, "chapters_heading")}</h2>
<ol class="cards">
{''.join(cards)}
</ol>"""
    return page(say(lang, "course_title"), body, chapters, lang, "index.html", current="home")


def capitalise(text, lang="en"):
    """A summary as a sentence. (Chinese has no capitals, and an English word in it, such as
    "agent", keeps its small letter: GLOSSARY.zh-CN.md.)"""
    return text[:1].upper() + text[1:] if lang == "en" else text


def chapter_parts(chapter, names, lang):
    """What a chapter page shows that does not need its recorded run: lesson, code, diff.
    A chapter whose lesson has no translation yet shows the English one, marked so."""
    if chapter.lesson_in(lang) is not None:
        lesson, images = render_lesson(chapter, names, lang)
    elif chapter.lesson is not None:
        lesson, images = render_lesson(chapter, names)
        lesson = f'<p class="note">{say(lang, "untranslated")}</p>\n<div lang="en">{lesson}</div>'
    else:
        lesson, images = lesson_placeholder(chapter, lang), []
    if chapter.previous:
        diff = f"<h2>{say(lang, 'diff_against', name=html.escape(chapter.previous.name))}</h2>"
        diff += diff_views(Diff(chapter.previous, chapter), "diff", lang)
    else:
        diff = f"<h2>{say(lang, 'diff_first_heading')}</h2><p>{say(lang, 'diff_first')}</p>"
    return {"lesson": lesson, "images": images, "code": code_view(chapter, lang), "diff": diff}


TABS = ("lesson", "code", "diff", "run")


def chapter_page(chapter, chapters, parts, lang):
    """The page of one chapter: four panels (site.js shows one at a time) and the pager."""
    index = chapters.index(chapter)
    pager = []
    if index > 0:
        pager.append(
            f'<a rel="prev" href="{chapters[index - 1].page}">← '
            f'{html.escape(chapters[index - 1].title_in(lang))}</a>'
        )
    if index + 1 < len(chapters):
        pager.append(
            f'<a rel="next" href="{chapters[index + 1].page}">'
            f'{html.escape(chapters[index + 1].title_in(lang))} →</a>'
        )
    tab_links = "".join(
        f'<li><a id="tab-{key}" href="#{key}">{say(lang, "tab_" + key)}</a></li>' for key in TABS
    )
    notebook = (f'<p class="files">{say(lang, "notebook")}'
                f'<a href="{UP[lang]}notebooks/{chapter.name}.ipynb" download'
                f'{english_inside(lang)}>{chapter.name}.ipynb</a></p>'
                if chapter.notebook.is_file() else "")
    prompt = in_english(lang, html.escape(chapter.run.prompt))
    body = f"""<h1>{html.escape(chapter.title_in(lang))}</h1>
{notebook}
<nav class="tabs" aria-label="{say(lang, "tabs_label")}"><ul>{tab_links}</ul></nav>
<section class="panel lesson" id="lesson" aria-labelledby="tab-lesson">
{parts["lesson"]}
</section>
<section class="panel" id="code" aria-labelledby="tab-code">
<h2><code{english_inside(lang)}>{html.escape(chapter.name)}/code.py</code></h2>
{parts["code"]}
</section>
<section class="panel" id="diff" aria-labelledby="tab-diff">
{parts["diff"]}
</section>
<section class="panel" id="run" aria-labelledby="tab-run">
<h2>{say(lang, "run_heading", prompt=prompt)}</h2>
{run_view(chapter, lang)}
</section>
<nav class="pager" aria-label="{say(lang, "pager_label")}">{''.join(pager)}</nav>"""
    title = f"{chapter.title_in(lang)} · {say(lang, 'course_title')}"
    return page(title, body, chapters, lang, chapter.page, current=chapter.name)


def compare_name(old, new):
    return f"compare-{old.name}-vs-{new.name}.html"


def compare_picker(chapters, lang, old=None, new=None):
    """Two lists of chapters and a button; site.js opens the page of the pair."""
    old = old or (chapters[-2] if len(chapters) > 1 else chapters[0])
    new = new or chapters[-1]

    def options(selected):
        return "".join(
            f'<option value="{c.name}"{" selected" if c is selected else ""}>'
            f"{html.escape(c.title_in(lang))}</option>"
            for c in chapters
        )

    return f"""<form class="picker" id="compare-picker">
  <label>{say(lang, "picker_from")} <select name="old" id="compare-old">{options(old)}</select>\
</label>
  <label>{say(lang, "picker_to")} <select name="new" id="compare-new">{options(new)}</select>\
</label>
  <button type="submit">{say(lang, "compare")}</button>
  <p class="picker-message" id="compare-message" role="status"></p>
</form>"""


def compare_index(chapters, lang):
    pairs = "".join(f'<li><a href="{compare_name(a, b)}">{a.label} → {b.label}</a></li>'
                    for a, b in itertools.combinations(chapters, 2))
    body = f"""<h1>{say(lang, "compare_heading")}</h1>
<p>{say(lang, "compare_intro")}</p>
{compare_picker(chapters, lang)}
<h2>{say(lang, "every_pair")}</h2>
<ul class="pairs">{pairs or f'<li>{say(lang, "one_chapter")}</li>'}</ul>"""
    title = f"{say(lang, 'compare')} · {say(lang, 'course_title')}"
    return page(title, body, chapters, lang, "compare.html", current="compare")


def compare_page(old, new, chapters, lang):
    from_to = say(lang, "from_to", old_page=old.page, old=html.escape(old.title_in(lang)),
                  new_page=new.page, new=html.escape(new.title_in(lang)))
    body = f"""<h1>{html.escape(old.label)} → {html.escape(new.label)}</h1>
<p>{from_to}</p>
{compare_picker(chapters, lang, old, new)}
{diff_views(Diff(old, new), "compare", lang, heading_level=2)}"""
    title = (f"{say(lang, 'compare_title', old=old.label, new=new.label)} · "
             f"{say(lang, 'course_title')}")
    return page(title, body, chapters, lang, compare_name(old, new), current="compare")


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
    futures = record_all(chapters, launch, temp_root)
    names = [chapter.name for chapter in chapters]
    pages, parts = {}, {}  # pages by their path in the build: "s01_loop.html", "zh-CN/..."
    try:
        for lang in LANGUAGES:
            folder = SUBFOLDER[lang]
            pages[folder + "compare.html"] = compare_index(chapters, lang)
            for old, new in itertools.combinations(chapters, 2):
                pages[folder + compare_name(old, new)] = compare_page(old, new, chapters, lang)
            for chapter in chapters:
                parts[lang, chapter.name] = chapter_parts(chapter, names, lang)
    finally:
        finish_recording(chapters, futures)
    for lang in LANGUAGES:  # the pages that show the recorded runs
        pages[SUBFOLDER[lang] + "index.html"] = home_page(chapters, lang)
        for chapter in chapters:
            pages[SUBFOLDER[lang] + chapter.page] = chapter_page(
                chapter, chapters, parts[lang, chapter.name], lang)

    prepare_out_dir(out_dir)
    shutil.copytree(ASSETS, out_dir / "assets")
    (out_dir / "assets" / "pygments.css").write_text(pygments_css(), encoding="utf-8")
    (out_dir / "traces").mkdir()
    (out_dir / "images").mkdir()
    (out_dir / "notebooks").mkdir()
    for lang in LANGUAGES:
        (out_dir / SUBFOLDER[lang]).mkdir(exist_ok=True)
    for name, text in sorted(pages.items()):
        write(out_dir / name, text)
    images = dict(image for part in parts.values() for image in part["images"])
    for source, name in sorted(images.items()):
        shutil.copyfile(source, out_dir / "images" / name)
    for chapter in chapters:
        write(out_dir / "traces" / f"{chapter.name}.jsonl", chapter.run.trace)
        if chapter.notebook.is_file():
            shutil.copyfile(chapter.notebook, out_dir / "notebooks" / f"{chapter.name}.ipynb")
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
