"""The two languages: every word the build and site.js write (STRINGS), and the helpers
that fill them in."""

import re

from course.translations import LANGUAGE, SITE_FOLDER, TRANSLATION

# Chinese is written without spaces: a line break (which a browser shows as a space) or a
# space between two Chinese characters or full-width punctuation marks is taken out of the
# text of a Chinese page, the tags between them kept (「见<a>首页</a>，\n再看」 gives
# 「见<a>首页</a>，再看」; 「**粗体。** 正文」 gives 「<strong>粗体。</strong>正文」). Between
# Chinese and Latin text a space stays, as the glossary spaces them. Code (<pre>) is as it is.
CJK = ("\u2e80-\u2fff\u3000-\u303f\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
       "\uf900-\ufaff\uff00-\uffef")  # CJK characters and full-width punctuation
SOFT_BREAK = "\x00"  # what the lesson renderer writes for a soft line break, until it is placed
INLINE_TAG = (r"</?(?:a|abbr|b|code|del|em|i|ins|kbd|mark|q|s|small|span|strong|sub|sup|wbr)"
              r"\b[^<>]*>")
BETWEEN_CJK = re.compile(rf"(?<=[{CJK}])((?:{INLINE_TAG}|[ \t\n{SOFT_BREAK}])+)(?=[{CJK}])")
PRE = re.compile(r"(<pre\b.*?</pre>)", re.S)


# English quoted in Chinese text (“Plan mode is on”): marked as English inside its quotes.
ENGLISH_QUOTE = re.compile(rf"“([^“”<>{CJK}]*[A-Za-z][^“”<>{CJK}]*)”")


def mark_english_quotes(text):
    """Each “...” of a Chinese page that holds only Latin text gets <span lang="en"> (outside
    <pre>)."""
    parts = PRE.split(text)
    for index in range(0, len(parts), 2):
        parts[index] = ENGLISH_QUOTE.sub(r'“<span lang="en">\1</span>”', parts[index])
    return "".join(parts)


def join_cjk_lines(text):
    """The text with the spaces and line breaks between two CJK characters taken out (outside
    <pre>), and every other soft break (SOFT_BREAK) made a newline again."""
    def joined(found):
        return "".join(re.findall(r"<[^<>]*>", found[1]))

    parts = PRE.split(text)
    for index in range(0, len(parts), 2):  # the parts outside <pre>
        parts[index] = BETWEEN_CJK.sub(joined, parts[index])
    return "".join(parts).replace(SOFT_BREAK, "\n")


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
        "search": "Search",
        "search_heading": "Search the lessons and the code",
        "search_intro": "Every chapter's lesson and <code>code.py</code>, and the course README.",
        "search_label": "Words to find",
        "search_button": "Search",
        "search_noscript": "The search needs JavaScript.",
        "footer": "Built from the course repository by <code>web/build.py</code>.\n"
                  "Everything on this site is local: it works offline.",
        # the home page
        "n_chapters": "{n} chapters",
        "n_chapters_one": "{n} chapter",
        "intro": "A Claude-Code-style coding agent, built in\n{chapters}.\n"
                 "Each chapter is the whole program so far plus one idea: read the lesson, the "
                 "code,\nthe diff against the chapter before, and step through a recorded run.\n"
                 'To put any two chapters side by side, use <a href="compare.html">Compare</a>.',
        "start_heading": "Get started",
        "start_clone": "Clone the course's repository, then work from its folder:",
        "start_no_address": "Get a copy of the course's repository (<code>git clone</code> "
                            "with the address you have it from), and open a terminal in its "
                            "folder.",
        "start_commands": "Then, with Python 3.11 or newer, the commands of the README's\n"
                          '<a href="{start}">Start</a> section: a virtual environment in '
                          "<code>.venv</code>, the requirements, and chapter 1; then the "
                          "tests.",
        "start_live": "Without a key, everything runs offline against a scripted model; with "
                      "<code>ANTHROPIC_API_KEY</code>\nset, the same code talks to the API: "
                      '<a href="{live}">Live or offline</a>.',
        "readme_title": "The course README",
        "readme_link": "The whole course README, on this site: "
                       '<a href="{readme}">setup, the command line, exit codes, tests</a>.',
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
        "build_it": "Build it yourself: write your own <code>build/agent.py</code>, then check "
                    "it against this chapter with",
        "contents": "Contents",
        # the line a chapter opens with (course.changes)
        "opening": "New here: {news}. {lines} lines, <span class=\"plus\">+{added}</span> "
                   "<span class=\"minus\">−{removed}</span> against {previous}.",
        "opening_first": "{lines} lines, all new: the first chapter.",
        "opening_sections": "the sections {names}",
        "opening_sections_one": "the section {names}",
        "opening_tools": "the tools {names}",
        "opening_tools_one": "the tool {names}",
        "opening_changed": "changes to {names}",
        "contents_count": "Contents ({n} sections)",
        "code_sections": "The sections of code.py",
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
        "split_needs_js": "The side-by-side view is drawn by JavaScript, which is off: the "
                          "unified view above shows the same changes.",
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
        "memory_and_prompt_sent": "the AGENTS.md files, then the prompt, go to the model",
        "memory_prompt_and_skills_sent": "the AGENTS.md files, the prompt, then the skills' "
                                         "catalog go to the model",
        "skill_loaded": "the skill's instructions come back",
        "denied": "the user denied the {name} call, and the model is told so",
        "denied_unknown": "the user denied a call, and the model is told so",
        "refused": "the {name} call was refused: {reason}",
        "error": "the {name} call returned an error: {reason}",
        "refused_unknown": "a tool was refused: {reason}",  # a tool_use id not seen before
        "error_unknown": "a tool returned an error: {reason}",
        "plan_saved": "plan approved: saved to {path}",
        "plan_approved": "plan approved",
        "answer_back": "the user's answer goes back: {text}",
        "reminder_added": "a reminder added to this turn: {text}",
        "reminders_added": "reminders added to this turn: {text}",
        "quoted": "“{text}”",
        "hook_added": "the {event} hook's words added to this turn",
        "a_hook_added": "a hook's words added to this turn",
        "words_added": "the user's words added to this turn",
        "cut_off": "the reply was cut off (stop_reason max_tokens)",
        "no_tool": "the model answered without a tool (stop_reason {stop}): the turn ends",
        "the_model": "the model",
        "the_subagent": "the subagent",
        "asks_user": "{who} asked the user a question",
        "submits_plan": "{who} submitted its plan",
        "asks_for": "{who} asked for {tools}",
        "asks_for_many": "{who} asked for {n} tools: {tools}",
        # a subagent's calls (s07: the trace line's "agent"), and what goes back
        "hands_over": "{who} handed a task to a subagent: {task}",
        "subagent_starts": "the subagent's call {k} of {n}, for {task}: its task is its only "
                           "message, in a context of its own",
        "subagent_call": "the subagent's call {k} of {n}, for {task}",
        "subagent_done": "the subagent answered without a tool (stop_reason {stop}): this text "
                         "goes back to the agent as the agent tool's result, and its context "
                         "ends",
        "subagent_back": "the subagent's answer comes back as the agent tool's result ({chars} "
                         "characters; none of its own calls): {text}",
        # compaction (s08: results cleared, and the trace line's "compaction": "summary")
        "results_cleared": "{n} old tool results cleared to save context, {before} characters "
                           "now {after}: {text}",
        "results_cleared_one": "{n} old tool result cleared to save context, {before} "
                               "characters now {after}: {text}",
        "summary_asked": "a summary request: the whole history ({n} messages, {chars} "
                         "characters) and an instruction: {text}",
        "summary_written": "the model wrote its summary ({chars} characters, stop_reason "
                           "{stop}), which replaces the history",
        "new_history": "the summary replaced the history: {n} messages ({chars} characters) "
                       "became {new} ({new_chars} characters)",
        "approve_asked": "the harness asked to approve the plan; {answered}",
        "allow_asked": "the harness asked to allow {name}; {answered}",
        "answered": "the user answered “{answer}”",
        "answered_empty": "the user answered with an empty line",
        "chose": "the user chose {answer}, {option}",
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
            "searching": "Searching…",
            "found": "{n} pages found.",
            "found_one": "{n} page found.",
            "found_none": "Nothing found.",
            "search_served": "The search works when the site is served (python web/build.py "
                             "--serve), not opened from the disk.",
            "copy": "Copy",
            "copied": "Copied",
            "copy_label": "Copy this command",
            "copy_code_label": "Copy this code",
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
        "search": "搜索",
        "search_heading": "搜索讲义和代码",
        "search_intro": "每一章的讲义和 <code>code.py</code>，以及课程 README。",
        "search_label": "要找的词",
        "search_button": "搜索",
        "search_noscript": "搜索需要 JavaScript。",
        "footer": "由课程仓库里的 <code>web/build.py</code> 生成。\n"
                  "本站的一切都在本地：离线也能用。",
        "n_chapters": "{n} 章",
        "n_chapters_one": "{n} 章",
        "intro": "一个 Claude Code 风格的编程 agent，分 {chapters}搭建。\n"
                 "每一章都是到这一章为止的完整程序，再加一个新概念：读讲义、读代码、看它和前一章的"
                 "差异，\n再一步一步看一次录下的运行。\n"
                 '要把任意两章放在一起看，用<a href="compare.html">对比</a>。',
        "start_heading": "开始上手",
        "start_clone": "克隆课程仓库，然后在它的目录里操作：",
        "start_no_address": "取得课程仓库的一份副本（用 <code>git clone</code> 和你拿到的地址），"
                            "在它的目录里打开终端。",
        "start_commands": "然后，用 Python 3.11 或更新版本，运行 README 的\n"
                          '<a href="{start}">开始</a>一节里的命令：在 <code>.venv</code> '
                          "建虚拟环境、安装依赖、运行第 1 章；再运行测试。",
        "start_live": "没有 key 时，一切都离线运行，对着一个按脚本回复的模型；设置了 "
                      "<code>ANTHROPIC_API_KEY</code>，同样的代码就和 API 对话："
                      '<a href="{live}">在线还是离线</a>。',
        "readme_title": "课程 README",
        "readme_link": "完整的课程 README 也在本站："
                       '<a href="{readme}">安装、命令行、退出码、测试</a>。',
        "how_heading": "怎样使用这门课",
        "how_run": "<strong>运行一章</strong>，离线，在仓库根目录：\n"
                   "<code>{command}</code>，然后输入启动信息里显示的提示词。",
        "how_read": "<strong>读讲义</strong>：先看<em>讲义</em>标签页，再看<em>代码</em>标签页，"
                    "\n那里标出了这一章新增的行。",
        "how_diff": "<strong>和前一章比较差异</strong>：<em>差异</em>标签页；任意两章用"
                    '<a href="compare.html">对比</a>；或者 <code>{command}</code>。'
                    "差异就是讲义：一个新概念，以及它改了什么。",
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
        "build_it": "自己动手：写好你自己的 <code>build/agent.py</code>，"
                    "再用这条命令对照这一章检查：",
        "contents": "目录",
        "opening": "新内容：{news}。共 {lines} 行，相对 {previous} <span class=\"plus\">+{added}"
                   "</span> <span class=\"minus\">−{removed}</span>。",
        "opening_first": "共 {lines} 行，全部是新的：这是第一章。",
        "opening_sections": "新的几节 {names}",
        "opening_sections_one": "新的一节 {names}",
        "opening_tools": "新工具 {names}",
        "opening_tools_one": "新工具 {names}",
        "opening_changed": "改动了 {names}",
        "contents_count": "目录（{n} 节）",
        "code_sections": "code.py 的各节",
        "tab_lesson": "讲义",
        "tab_code": "代码",
        "tab_diff": "差异",
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
        "diff_first_heading": "差异",
        "diff_first": "这是第一章：前面没有可以比较的章。",
        "diff_lines": "逐行",
        "diff_layout": "diff 的排版",
        "unified": "单栏",
        "split": "并排",
        "unified_label": "单栏 diff：{old}/code.py → {new}/code.py",
        "old_label": "旧：{old}/code.py",
        "new_label": "新：{new}/code.py",
        "same_files": "两个文件完全相同。",
        "split_needs_js": "并排视图由 JavaScript 绘制，而 JavaScript 已关闭："
                          "上面的单栏视图显示同样的改动。",
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
        "noscript": "逐步回放需要 JavaScript。下面的图表、数字和终端输出展示了整次运行。",
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
        "memory_and_prompt_sent": "AGENTS.md 文件和随后的提示词一起发给模型",
        "memory_prompt_and_skills_sent": "AGENTS.md 文件、提示词和随后的 skill 清单一起发给模型",
        "skill_loaded": "skill 的正文发回给模型",
        "denied": "用户拒绝了 {name} 调用，模型会收到这个结果",
        "denied_unknown": "用户拒绝了一次调用，模型会收到这个结果",
        "refused": "{name} 被拒绝：{reason}",
        "error": "{name} 返回了错误：{reason}",
        "refused_unknown": "某个工具被拒绝：{reason}",
        "error_unknown": "某个工具返回了错误：{reason}",
        "plan_saved": "计划已批准：保存在 {path}",
        "plan_approved": "计划已批准",
        "answer_back": "用户的回答发回给模型：{text}",
        "reminder_added": "这个轮次加入了一条提醒：{text}",
        "reminders_added": "这个轮次加入了几条提醒：{text}",
        "quoted": "“{text}”",
        "hook_added": "这个轮次加入了 {event} hook 的话",
        "a_hook_added": "这个轮次加入了一个 hook 的话",
        "words_added": "这个轮次加入了用户的话",
        "cut_off": "回复被截断了（stop_reason max_tokens）",
        "no_tool": "模型没有调用工具就作答（stop_reason {stop}）：这个轮次结束",
        "the_model": "模型",
        "the_subagent": "subagent",
        "asks_user": "{who} 向用户提了一个问题",
        "submits_plan": "{who} 提交了计划",
        "asks_for": "{who} 要调用 {tools}",
        "asks_for_many": "{who} 要调用 {n} 个工具：{tools}",
        "hands_over": "{who} 把一个任务交给了 subagent：{task}",
        "subagent_starts": "subagent 为{task}做的第 {k} 次调用，共 {n} 次：它的任务是它唯一的"
                           "消息，上下文是它自己的",
        "subagent_call": "subagent 为{task}做的第 {k} 次调用，共 {n} 次",
        "subagent_done": "subagent 没有调用工具就作答（stop_reason {stop}）：这段文字作为 agent "
                         "工具的结果交回给 agent，它的上下文到此结束",
        "subagent_back": "subagent 的回答作为 agent 工具的结果回来了（{chars} 个字符；它自己的"
                         "调用一个也不带回）：{text}",
        "results_cleared": "为节省上下文清除了 {n} 个旧的工具结果，{before} 个字符变成 {after} "
                           "个：{text}",
        "results_cleared_one": "为节省上下文清除了 {n} 个旧的工具结果，{before} 个字符变成 {after} "
                               "个：{text}",
        "summary_asked": "请求摘要：整个对话历史（{n} 条消息，{chars} 个字符）加上一条要求：{text}",
        "summary_written": "模型写好了摘要（{chars} 个字符，stop_reason {stop}），它将取代对话历史",
        "new_history": "摘要取代了对话历史：{n} 条消息（{chars} 个字符）变成 {new} 条（{new_chars} "
                       "个字符）",
        "approve_asked": "harness 请用户批准计划；{answered}",
        "allow_asked": "harness 询问是否允许 {name}；{answered}",
        "answered": "用户回答“{answer}”",
        "answered_empty": "用户回答了一个空行",
        "chose": "用户选了 {answer}，即“{option}”",
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
            "searching": "正在搜索……",
            "found": "找到 {n} 个页面。",
            "found_one": "找到 {n} 个页面。",
            "found_none": "没有找到。",
            "search_served": "搜索要在网站由服务器提供时才能用（python web/build.py --serve），"
                             "直接从磁盘打开时不行。",
            "copy": "复制",
            "copied": "已复制",
            "copy_label": "复制这条命令",
            "copy_code_label": "复制这段代码",
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
    if lang != "en":
        text = join_cjk_lines(text)
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


# The words of the sidebar, the menu, the header's search and the folded parts (a block of
# their own, merged into STRINGS below).
NAVIGATION = {
    "en": {
        "menu": "Menu",
        "home_link": "Home",
        "header_search_label": "Search the lessons and the code",
        "header_search_placeholder": "Search (press /)",
        "footer_repository": 'The course\'s repository: <a href="{address}">{address}</a>.',
        "script": {
            "more": "More",
            "less": "Less",
            "code_line": "{name}/code.py, line {n}",
            "line_link": "Line {n}: click for a link to it",
            "search_other": "Search the Chinese pages for “{words}”",
        },
    },
    ZH: {
        "menu": "菜单",
        "home_link": "首页",
        "header_search_label": "搜索讲义和代码",
        "header_search_placeholder": "搜索（按 /）",
        "footer_repository": '课程仓库：<a href="{address}">{address}</a>。',
        "script": {
            "more": "展开",
            "less": "收起",
            "code_line": "{name}/code.py 第 {n} 行",
            "line_link": "第 {n} 行：点击得到指向它的链接",
            "search_other": "在英文页面里搜索“{words}”",
        },
    },
}
for _lang, _words in NAVIGATION.items():
    STRINGS[_lang].update({key: value for key, value in _words.items() if key != "script"})
    STRINGS[_lang]["script"].update(_words["script"])
