"""Markdown as the lessons and their translations are read: fenced blocks and headings (course/
lessons.py, course/translations.py, and the tests of both)."""

import re
from dataclasses import dataclass

FENCE = re.compile(r"(?P<indent> *)(?P<fence>`{3,})(?P<info>[^`]*)")


@dataclass
class Block:
    where: str  # "s01_loop/README.md:47", the line of the opening fence
    language: str
    lines: list
    start: int  # index of the opening fence line
    end: int  # index of the line after the closing fence


def parse_blocks(text, source):
    """Every fenced block of a markdown text, in order. An indented fence (in a list) is
    read without its indentation."""
    found, lines, index = [], text.splitlines(), 0
    while index < len(lines):
        opening = FENCE.fullmatch(lines[index])
        if not opening:
            index += 1
            continue
        indent, fence = len(opening["indent"]), opening["fence"]
        closing = re.compile(rf" *{fence}`*\s*")
        body, end = [], index + 1
        while end < len(lines) and not closing.fullmatch(lines[end]):
            line = lines[end]
            body.append(line[min(indent, len(line) - len(line.lstrip(" "))):])
            end += 1
        found.append(Block(f"{source}:{index + 1}", opening["info"].strip(), body, index,
                           end + 1))
        index = end + 1
    return found


def headings(text, level="## "):
    """[(line index, title)] of the headings of one level, outside fenced blocks."""
    inside = set()
    for block in parse_blocks(text, ""):
        inside.update(range(block.start, block.end))
    return [(number, line[len(level):].strip()) for number, line in enumerate(text.splitlines())
            if number not in inside and line.startswith(level)]


def section_text(text, title):
    """The lines of the `## title` section (without the heading), or None."""
    found = headings(text)
    lines = text.splitlines()
    for position, (number, name) in enumerate(found):
        if name == title:
            following = found[position + 1][0] if position + 1 < len(found) else len(lines)
            return lines[number + 1 : following]
    return None
