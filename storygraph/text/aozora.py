"""Strip Aozora Bunko markup (ruby, notes, header and credits footer) from a decoded text."""

from __future__ import annotations

import re

HEADER_MARKER = "【テキスト中に現れる記号について】"
_DASH_LINE = re.compile(r"^-{10,}[ \t]*$", re.MULTILINE)
_FOOTER = re.compile(r"^底本[：:]", re.MULTILINE)
_NOTE = re.compile(r"［＃[^］\n]*］")
_RUBY = re.compile(r"《[^《》\n]*》")
_RUBY_START = re.compile(r"｜(?=[^｜《\n]*《)")
_BLANK_RUN = re.compile(r"\n{3,}")
_HEADING_NOTE = re.compile(r"［＃「([^」\n]+)」は(?:同行|窓)?[大中]見出し］")
_HEADING_BLOCK = re.compile(
    r"［＃(?:ここから)?(?:同行|窓)?([大中])見出し］(.*?)［＃(?:ここで)?(?:同行|窓)?\1見出し終わり］",
    re.DOTALL,
)
_MIN_RUBY_FOR_DETECTION = 3


def is_aozora(text: str) -> bool:
    """True when the text carries Aozora Bunko markup or its credits footer."""
    if HEADER_MARKER in text or _NOTE.search(text):
        return True
    if _FOOTER.search(text) and "青空文庫" in text:
        return True
    return len(_RUBY.findall(text)) >= _MIN_RUBY_FOR_DETECTION


def heading_titles(text: str) -> tuple[str, ...]:
    """The titles of the raw text's 大見出し and 中見出し notes, in order, as they read once
    the notes and ruby are stripped: ［＃「一」は中見出し］ → 一;
    ［＃大見出し］第一章［＃大見出し終わり］ → 第一章. `strip_aozora` removes the notes, so a
    story's chapters are read from them before (storygraph.text.chapters,
    docs/ISSUES.md#chapters). 小見出し (a section within a chapter) is not a chapter."""
    text = _strip_header(text.replace("\r\n", "\n").replace("\r", "\n"))
    found = [(m.start(), m[1]) for m in _HEADING_NOTE.finditer(text)]
    found += [(m.start(), m[2]) for m in _HEADING_BLOCK.finditer(text)]
    titles = (_clean(title).strip(" \t\u3000\n") for _, title in sorted(found))
    return tuple(t for t in titles if t)


def _clean(text: str) -> str:
    return _RUBY.sub("", _RUBY_START.sub("", _NOTE.sub("", text)))


def strip_aozora(text: str) -> str:
    """Remove header, credits footer, ruby (《》 and ｜) and ［＃…］ notes; keep the body.

    A gaiji note such as ※［＃「言＋墟のつくり」、第4水準2-88-74］ leaves its ※ mark behind,
    as the cleaned Aozora texts in shared/stories do. Lines that held only a note stay as
    empty lines; runs of blank lines collapse to one; the result is stripped (so the first
    line loses its indent) and ends with one newline.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _strip_header(text)
    text = _strip_footer(text)
    text = _NOTE.sub("", text)
    text = _RUBY_START.sub("", text)
    text = _RUBY.sub("", text)
    text = _BLANK_RUN.sub("\n\n", text).strip()
    return text + "\n" if text else ""


def _strip_header(text: str) -> str:
    """Drop title, author and the symbol explanation, up to the second line of dashes."""
    marker = text.find(HEADER_MARKER)
    if marker < 0:
        return text
    dashes = list(_DASH_LINE.finditer(text))
    before = [m for m in dashes if m.start() < marker]
    after = [m for m in dashes if m.start() > marker]
    if not before or not after:
        return text
    return text[after[0].end() :]


def _strip_footer(text: str) -> str:
    """Cut from the first line that begins with 底本：."""
    match = _FOOTER.search(text)
    return text[: match.start()] if match else text
