"""Highlighting with pygments, and the colours of code."""

import colorsys
import functools
import html
import re

import pygments
from pygments.lexers import PythonLexer, TextLexer, get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.token import STANDARD_TYPES, Comment, Keyword, Name, Operator, String
from pygments.util import ClassNotFound

from .settings import ASSETS, DARK_STYLE, LIGHT_STYLE, MIN_CONTRAST
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


COMMAND_LANGUAGES = {"bash", "sh", "shell", "console"}  # blocks of commands: they wrap


def highlight_block(code, language, lang="en"):
    """A fenced code block of the lesson, highlighted for its language (plain text if unknown).
    It may scroll sideways, so it can take the keyboard's focus. (`lang`: the page's.)"""
    try:
        lexer = get_lexer_by_name(language, stripnl=False) if language else TextLexer()
    except ClassNotFound:
        lexer = TextLexer()
    code = code.rstrip("\n")
    body = "\n".join(highlight_pieces(code, lexer)[: len(code.splitlines())])
    kind = "hl command" if language in COMMAND_LANGUAGES else "hl"
    return f'<div class="{kind}"{english_inside(lang)}><pre tabindex="0">{body}\n</pre></div>\n'


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
