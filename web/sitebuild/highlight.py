"""Highlighting with pygments, and the colours of code."""

import functools
import html

import pygments
from pygments.lexers import PythonLexer, TextLexer, get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.token import STANDARD_TYPES, Comment, Keyword, Name, Operator, String
from pygments.util import ClassNotFound

from course import sections

from .settings import DARK_STYLE, LIGHT_STYLE
from .strings import english_inside

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

    Neighbouring tokens that look the same in both styles share one <i> (with the class of
    the first; an <i class=k>, not a <span class="k">: 8 characters less a token, 50 KB of
    s08's page, and pygments.css sets each class's style and weight), and plain text gets
    none: the page has a few thousand elements less, which is what an accessibility check
    spends its time on, and looks exactly the same.
    Tokens that span lines (docstrings) are cut at each newline, so that every line stands
    alone.
    """
    lines, run, run_class, run_look, spaces = [[]], [], "", None, ""

    def close():
        nonlocal run, run_look
        if run:
            text = html.escape("".join(run), quote=False)
            lines[-1].append(f'<i class={run_class}>{text}</i>' if run_look else text)
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
    """Python source as a list of HTML lines, one per source line.

    Highlighted a section at a time (course.sections), and what comes before the first banner:
    a banner is a comment that starts a line outside any string, where the lexer is back in
    its first state, so a section alone gives the lines it gives in the whole file; and most
    sections are carried unchanged from chapter to chapter, so each is highlighted once.
    """
    texts = [text for _, _, text in sections(source)]
    before = source[: len(source) - sum(len(text) for text in texts)]
    return [line for text in [before, *texts] for line in highlight_python(text)]


@functools.cache  # a section is the same text in every chapter that carries it
def highlight_python(source):
    return highlight_pieces(source, PythonLexer(stripnl=False))[: len(source.splitlines())]


COMMAND_LANGUAGES = {"bash", "sh", "shell", "console"}  # blocks of commands: they wrap


def highlight_block(code, language, lang="en"):
    """A fenced code block of the lesson, highlighted for its language (plain text if unknown).
    It may scroll sideways, so it can take the keyboard's focus. (`lang`: the page's.)"""
    kind = "hl command" if language in COMMAND_LANGUAGES else "hl"
    body = highlight_code(code.rstrip("\n"), language)
    return f'<div class="{kind}"{english_inside(lang)}><pre tabindex="0">{body}\n</pre></div>\n'


@functools.cache  # a lesson is rendered in two passes, and a translation has the same blocks
def highlight_code(code, language):
    try:
        lexer = get_lexer_by_name(language, stripnl=False) if language else TextLexer()
    except ClassNotFound:
        lexer = TextLexer()
    return "\n".join(highlight_pieces(code, lexer)[: len(code.splitlines())])


# ---- the colours of code ----
# Two pygments styles whose colours are readable as they are (4.5:1 or more) on every
# background code sits on here (the code block, the page, the diff lines added and removed):
# xcode on the light pages, github-dark on the dark ones. The build computes no contrast:
# axe-core checks it on the pages (tests/test_web.py, web/check_pages.py).

def token_rule(selector, token_look_):
    colour, bold, italic, underline = token_look_
    parts = [f"color: #{colour}" if colour else "color: inherit"]
    parts.append(f"font-weight: {'bold' if bold else 'normal'}")
    parts.append(f"font-style: {'italic' if italic else 'normal'}")
    if underline:
        parts.append("text-decoration: underline")
    return f"{selector} {{ {'; '.join(parts)} }}"


def pygments_css():
    """The colours of the highlighted code, light and dark: the two pygments styles' own."""
    light, dark = [], []
    for kind in dict.fromkeys(token_kind(kind) for kind in COLOURED):
        short, pair = css_class(kind), token_look(kind)
        light.append(token_rule(f".hl .{short}", pair[0]))
        dark.append(token_rule(f"  .hl .{short}", pair[1]))
    return ("/* The colours of code: pygments' " + LIGHT_STYLE + " and " + DARK_STYLE +
            " styles\n   for the kinds of token the site colours (web/sitebuild/highlight.py). */\n"
            + "\n".join(light) + "\n\n@media (prefers-color-scheme: dark) {\n"
            + "\n".join(dark) + "\n}\n")
