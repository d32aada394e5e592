"""The shape of the Chinese prose, per page: how often a colon, how often a pronoun, how long a
sentence.

    .venv/bin/python -m course.zh_style      (prints the table; asserts nothing)

English chains clauses with colons ("X: Y: Z") and refers back with "it"; a translation that
keeps those shapes reads as English in Chinese characters (issue 58: 13.5 to 25 full-width colons
per 1,000 Chinese characters, against about 4 in learn-claude-code's Chinese lessons). For each
Chinese page, for its core (to `## 深入`; the top README has none, so its core is all of it) and
for the whole page:

  - colons: full-width colons (：) per 1,000 Chinese characters
  - pronouns: 它 (它们 counts once) and the pronoun 其 (not 其他, 其余, 其中, 其实, 其次, 尤其,
    极其) per 1,000 Chinese characters
  - sentence: the mean length of a sentence, in Chinese characters and Latin words (a word or a
    code span counts one), a sentence ending in 。, ！ or ？ or at the end of its paragraph

The prose is what a reader reads (course/reading_time.py's rules): no code blocks, no generated
What changed table, no HTML comments, no link addresses, no headings, no table rows, no images (a
figure's title is the diagram's); a code span
counts as one word. tests/test_lessons_zh.py holds the limits (COLON_LIMIT) with these functions.
"""

import re
from dataclasses import dataclass

from course import reading_time
from course.translations import LANGUAGE, is_language_line, pages, translation

COLON_LIMIT = 8  # per 1,000 Chinese characters, in a core and in a whole page (learn-claude-code:
# about 4; the exercises' fixed 提示： and 检查： lines count in a whole page)
PRONOUN_LIMIT = 8  # per 1,000 Chinese characters, in a core
WHOLE_PRONOUN_LIMIT = 10  # per 1,000 Chinese characters, in a whole page

CJK = reading_time.CJK
CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)")
ADDRESS = re.compile(r"\]\([^)\s]*\)|<https?://[^>\s]*>|https?://[^\s)）>]+")
LATIN_WORD = re.compile(r"[A-Za-z0-9_][\w.'’/-]*")
PRONOUN = re.compile(r"它|(?<![尤极])其(?![他余中实次])")
SENTENCE_END = re.compile(r"[。！？]")


def prose_lines(text):
    """The paragraphs and list items of a markdown text, as a reader reads them."""
    lines, inside = [], None
    text = reading_time.COMMENT.sub("", reading_time.GENERATED.sub("", text))
    for line in text.splitlines():
        fence = reading_time.FENCE.fullmatch(line.rstrip())
        if inside is None and fence:
            inside = fence.group(1)
        elif inside is not None:
            if line.strip().startswith(inside) and not line.strip().strip("`"):
                inside = None
        elif (line.strip() and not line.lstrip().startswith(("#", "|", "!["))
              and not is_language_line(line)):
            lines.append(CODE_SPAN.sub(" code ", ADDRESS.sub("]", line)).strip())
    return lines


@dataclass
class Shape:
    characters: int  # Chinese characters
    colons: int
    pronouns: int
    sentences: int
    length: int  # the sentences' length in all: Chinese characters and Latin words

    def per_thousand(self, count):
        return round(1000 * count / self.characters, 1) if self.characters else 0.0

    @property
    def colon_rate(self):
        return self.per_thousand(self.colons)

    @property
    def pronoun_rate(self):
        return self.per_thousand(self.pronouns)

    @property
    def sentence_length(self):
        return round(self.length / self.sentences, 1) if self.sentences else 0.0


def shape(text):
    """The Shape of a markdown text's Chinese prose."""
    lines = prose_lines(text)
    sentences = [part for line in lines for part in SENTENCE_END.split(line) if CJK.search(part)]
    joined = "\n".join(lines)
    return Shape(
        characters=len(CJK.findall(joined)),
        colons=joined.count("："),
        pronouns=len(PRONOUN.findall(joined)),
        sentences=len(sentences),
        length=sum(len(CJK.findall(part)) + len(LATIN_WORD.findall(CJK.sub(" ", part)))
                   for part in sentences))


def page_shapes():
    """{page: (the core's Shape, the whole page's Shape)} for every Chinese page."""
    found = {}
    for name in pages():
        path = translation(name)
        if path.exists():
            text = path.read_text(encoding="utf-8")
            found[name] = (shape(reading_time.core(text, LANGUAGE)), shape(text))
    return found


def main():
    print(f"| page | core: colons / pronouns per 1,000 characters, mean sentence | whole page "
          f"| limits: colons {COLON_LIMIT}; pronouns {PRONOUN_LIMIT} (core), "
          f"{WHOLE_PRONOUN_LIMIT} (whole) |")
    print("| --- | --- | --- | --- |")
    for name, (core, whole) in page_shapes().items():
        cells = [f"{part.colon_rate} / {part.pronoun_rate}, {part.sentence_length} "
                 f"({part.characters} characters)" for part in (core, whole)]
        print(f"| {name} | {cells[0]} | {cells[1]} | |")


if __name__ == "__main__":
    main()
