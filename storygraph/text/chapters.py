"""A story's chapters: where each begins and ends in its (cleaned) text, read from its headings
(docs/ISSUES.md#chapters).

A heading is a line of its own, of one of these constructions:

- an Aozora Bunko heading note (［＃「一」は大見出し］, 中見出し, and the ［＃大見出し］…
  ［＃大見出し終わり］ block), read from the raw text before its notes are stripped
  (`storygraph.text.aozora.heading_titles`) and handed in as `marked`: the first line equal to
  each marked title, in order;
- 第N章 / 第N話 / 第N回 (N in kanji or digits), alone or followed by a title;
- "Chapter I" / "CHAPTER I" / "Chapter 1", alone, or followed by a title after a mark
  ("CHAPTER I. Down the Rabbit-Hole"), one that is no sentence, or one in capitals, which may
  ask or exclaim ("Chapter 13 DO YOU BELIEVE IN FAIRIES?");
- a line of kanji numerals alone (一, 二, 十三), or of a Roman numeral alone (I., II, XIV), the
  latter with a blank line (or the text's edge) on each side. These two are the ambiguous ones
  (a line "I" of wrapped prose, a numeral of a poem): they count only in sequence, each one more
  than the number the heading before printed (1 when none did). A part that numbers its
  chapters from 一 again is read only where Aozora notes mark its headings.

Chapters are numbered 1, 2, … in the order of their headings (not by the numerals they print,
which may start again in each part); the title is the heading line as the text writes it (with
the next line when the heading is "CHAPTER I." alone and its title follows at once). The text
before the first heading, and the whole of a text with no heading, is chapter 0, labelled as
nothing (`chapter_label`); so are headings that print no number before the first that does (序
of 河童: 序, 一, 二 … are chapters 0, 1, 2 …, as printed), chapter 0 then titled by the first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

KANJI_DIGITS = "〇一二三四五六七八九"
_KANJI_UNITS = {"十": 10, "百": 100, "千": 1000}
_KANJI_NUMERAL = f"[{KANJI_DIGITS}十百千]+"
_INDENT = " \t\u3000"
MAX_HEADING_CHARS = 60
"""A heading line longer than this is prose (a sentence that opens with 第三章 or "Chapter")."""

_JA_NUMBERED = re.compile(rf"^第(?:{_KANJI_NUMERAL}|[0-9０-９]+)[章話回](?:[{_INDENT}　・：:].*)?$")
_KANJI_ALONE = re.compile(rf"^{_KANJI_NUMERAL}$")
_ROMAN = r"[IVXLC]+"
_CHAPTER = re.compile(rf"^(?:Chapter|CHAPTER)[ \t]+({_ROMAN}|[0-9]+)\b(.*)$")
_ROMAN_ALONE = re.compile(rf"^({_ROMAN})\.?$")
_ROMAN_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100}
_TITLE_MARKS = ".:-—–"
_SENTENCE_END = tuple(".!?。！？,;")


@dataclass(frozen=True)
class Chapter:
    """One chapter: its number (0 for the text before any heading), its heading as written
    ("" for chapter 0) and its span in the text (`start` at its heading line)."""

    index: int
    title: str
    start: int
    end: int
    body: int | None = None
    """Where the text after its heading line(s) begins (None: at `start`, no heading): chunks
    hold the body, so no source opens with 「二」; the heading is the chapter's title."""

    @property
    def body_start(self) -> int:
        return self.start if self.body is None else self.body


@dataclass(frozen=True)
class _Line:
    start: int
    end: int
    text: str
    """The line without its indent and trailing spaces."""


def chapters(text: str, marked: Sequence[str] = ()) -> list[Chapter]:
    """The chapters of `text`, in order, covering it whole (see the module doc). `marked`: the
    titles Aozora heading notes gave (in order), each the first line equal to it not yet
    taken."""
    lines = _lines(text)
    starts: list[tuple[int, str]] = []  # (line number, title: the heading as written)
    wanted = [t.strip(_INDENT) for t in marked if t.strip(_INDENT)]
    last = [0]  # the number the last heading printed (0: none, or not a number)
    for i, line in enumerate(lines):
        if not line.text:
            continue
        if wanted and line.text == wanted[0]:
            wanted.pop(0)
            starts.append((i, line.text))
            last[0] = _printed_number(line.text) or 0
            continue
        title = _heading(lines, i, last)
        if title is not None:
            starts.append((i, title))
            last[0] = _printed_number(title) or 0
    if not starts:
        return [Chapter(0, "", 0, len(text))]
    # Headings printing no number before the first that does (序, a preface) open chapter 0:
    # the numbered ones then count from 1, as they print (序, 一, 二 … → 0, 1, 2 …).
    numbered = [k for k, (_, title) in enumerate(starts) if _printed_number(title)]
    lead = numbered[0] if numbered else 0
    found: list[Chapter] = []
    first = lines[starts[lead][0]].start
    if text[:first].strip():
        found.append(Chapter(0, starts[0][1] if lead else "", 0, first))
    for n, (i, title) in enumerate(starts[lead:]):
        start = lines[i].start if found or n else 0
        end = lines[starts[lead + n + 1][0]].start if lead + n + 1 < len(starts) else len(text)
        heading = 1 if title == lines[i].text else 2  # "CHAPTER I." + its title's line
        body = lines[i + heading].start if i + heading < len(lines) else end
        found.append(Chapter(n + 1, title, start, end, min(body, end)))
    return found


def chapter_label(index: int | None, language: str) -> str:
    """How a chapter is named to the reader: 「第三章」 in Japanese, "Chapter 3" in English; ""
    for chapter 0 (no heading before it) and None (not known)."""
    if not index:
        return ""
    return f"第{kanji_number(index)}章" if language == "ja" else f"Chapter {index}"


_NUMBER_ONLY = re.compile(
    r"(?:第\s*)?[〇一二三四五六七八九十百千0-9０-９]+\s*[章話回]?"
    r"|(?:chapter\s+)?(?:[ivxlcdm]+|[0-9]+)",
    re.IGNORECASE,
)


def chapter_name(index: int | None, title: str, language: str) -> str:
    """A chapter as a reader picks it: its label (`chapter_label`) and, when the heading says
    more than its number, the heading (「第三章 · 鬼ヶ島」, "Chapter 1 · Down the Rabbit-Hole");
    a heading that only prints the number (「三」, 「第三章」, "CHAPTER III.") adds nothing. ""
    for chapter 0 and None without a heading."""
    label = chapter_label(index, language)
    words = title.strip().rstrip(".。．")
    if not words or _NUMBER_ONLY.fullmatch(words):
        return label
    return f"{label} · {title.strip()}" if label else title.strip()


def kanji_number(n: int) -> str:
    """`n` (1 … 9999) in kanji numerals as a chapter is numbered: 3 → 三, 13 → 十三, 20 → 二十."""
    if n <= 0:
        return KANJI_DIGITS[0]
    out = ""
    for unit, value in (("千", 1000), ("百", 100), ("十", 10)):
        digit, n = divmod(n, value)
        if digit:
            out += ("" if digit == 1 else KANJI_DIGITS[digit]) + unit
    return out + (KANJI_DIGITS[n] if n else "")


def kanji_value(numeral: str) -> int | None:
    """The value of a kanji numeral (十三 → 13, 二十 → 20, 一〇 → 10), None when it is none."""
    if not numeral or any(ch not in KANJI_DIGITS and ch not in _KANJI_UNITS for ch in numeral):
        return None
    if not any(ch in _KANJI_UNITS for ch in numeral):  # positional: 一〇 → 10
        return int("".join(str(KANJI_DIGITS.index(ch)) for ch in numeral))
    total, digit = 0, None
    for ch in numeral:
        if ch in _KANJI_UNITS:
            total += (1 if digit is None else digit) * _KANJI_UNITS[ch]
            digit = None
        elif digit is not None:
            return None  # two digits in a row with units elsewhere: not a numeral
        else:
            digit = KANJI_DIGITS.index(ch)
    return total + (digit or 0)


def roman_value(numeral: str) -> int | None:
    """The value of a well-formed Roman numeral (XIV → 14), None otherwise (IIII, VX, IC)."""
    total = 0
    values = [_ROMAN_VALUES.get(ch, 0) for ch in numeral]
    if not values or 0 in values:
        return None
    for k, value in enumerate(values):
        following = values[k + 1] if k + 1 < len(values) else 0
        total += -value if value < following else value
    return total if 0 < total < 400 and _roman(total) == numeral else None


def _roman(n: int) -> str:
    out = ""
    for value, mark in (
        (100, "C"), (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"),
        (4, "IV"), (1, "I"),
    ):  # fmt: skip
        while n >= value:
            out += mark
            n -= value
    return out


def _lines(text: str) -> list[_Line]:
    found: list[_Line] = []
    pos = 0
    for raw in text.splitlines(keepends=True):
        found.append(_Line(pos, pos + len(raw), raw.strip(_INDENT + "\r\n")))
        pos += len(raw)
    return found


def _blank_around(lines: Sequence[_Line], i: int) -> bool:
    before = i == 0 or not lines[i - 1].text
    after = i + 1 >= len(lines) or not lines[i + 1].text
    return before and after


def _in_sequence(value: int | None, last: Sequence[int]) -> bool:
    """A bare numeral heading counts when it is one more than the number the last heading
    printed (1 for the first heading): a line "I" of prose after chapter II is no heading."""
    return value is not None and value == last[0] + 1


def _printed_number(title: str) -> int | None:
    """The number a heading prints: 第十三章 → 13, CHAPTER XIV → 14, 二 → 2; None for none."""
    words = title.replace("第", " ").replace("章", " ").replace("話", " ").replace("回", " ")
    for word in re.split(r"[\s.:　・：]+", words):
        if word.startswith(("Chapter", "CHAPTER")) or not word:
            continue
        if word.isdigit():
            return int(word)
        return kanji_value(word) or roman_value(word)
    return None


def _heading(lines: Sequence[_Line], i: int, last: Sequence[int]) -> str | None:
    """The title of line `i` when it is a heading (see the module doc), else None."""
    line = lines[i].text
    if len(line) > MAX_HEADING_CHARS:
        return None
    if _JA_NUMBERED.match(line):
        return None if line.endswith(("。", "、")) else line
    if _KANJI_ALONE.match(line):
        return line if _in_sequence(kanji_value(line), last) else None
    roman = _ROMAN_ALONE.match(line)
    if roman:
        fits = _blank_around(lines, i) and _in_sequence(roman_value(roman[1]), last)
        return line if fits else None
    chapter = _CHAPTER.match(line)
    if chapter is None:
        return None
    number, rest = chapter[1], chapter[2].strip()
    if not number.isdigit() and roman_value(number) is None:
        return None
    shouted = rest.isupper()  # cased letters, all capitals (kana and kanji have no case)
    if rest and rest[0] not in _TITLE_MARKS and rest.endswith(_SENTENCE_END) and not shouted:
        return None  # "Chapter 3 was the longest." is prose; "Chapter 3 COME AWAY!" a title
    if rest.strip(_TITLE_MARKS):
        return line
    following = lines[i + 1].text if i + 1 < len(lines) else ""
    then_blank = i + 2 >= len(lines) or not lines[i + 2].text
    # a title may ask or exclaim ("Who Stole the Tarts?"); a stop or comma ends prose
    short = len(following) <= MAX_HEADING_CHARS and not following.endswith(tuple(".,;。、"))
    if following and short and then_blank:
        return f"{line} {following}"  # CHAPTER I.\nDown the Rabbit-Hole\n\n
    return line
