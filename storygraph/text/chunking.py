"""Sentence splitting (Japanese and English) and sentence-aligned chunking with overlap."""

from __future__ import annotations

import re
from collections.abc import Sequence

from storygraph.models import Chunk
from storygraph.text.chapters import Chapter
from storygraph.text.normalize import normalize_name

JA_TERMINATORS = frozenset("。！？．｡")
ASCII_TERMINATORS = frozenset(".!?")
TERMINATORS = JA_TERMINATORS | ASCII_TERMINATORS
_TRAILING = frozenset("…‥") | TERMINATORS
_PAIRS = {
    "「": "」",
    "『": "』",
    "（": "）",
    "(": ")",
    "【": "】",
    "〈": "〉",
    "《": "》",
    "“": "”",
}
_CLOSERS = frozenset(_PAIRS.values()) | frozenset("\"'’]")
_JA_QUOTE_CLOSERS = frozenset("」』")
_QUOTATIVE = ("と", "って")
_NOT_QUOTATIVE = ("とうとう", "ところ", "とき", "とたん", "とにかく", "とても", "とつぜん")
_INDENT = " \t\u3000"
_COMMAS = frozenset("、，,;；：:")
_ABBREVIATIONS = frozenset(
    {
        "mr", "mrs", "ms", "dr", "st", "jr", "sr", "prof", "vs", "etc", "no", "mt", "capt",
        "col", "gen", "lt", "sgt", "rev", "hon", "fig", "vol", "ca", "approx", "e.g", "i.e",
        "a.m", "p.m",
    }
)  # fmt: skip
_BLANK_AHEAD = re.compile(r"[^\S\n]*(?:\n|$)")

Span = tuple[int, int]


def split_sentences(text: str) -> list[Span]:
    """Character spans of the sentences of `text`, without surrounding whitespace."""
    spans: list[Span] = []
    start = 0
    for cut in [*_boundaries(text), len(text)]:
        span = _trim(text, start, cut)
        if span is not None:
            spans.append(span)
        start = cut
    return spans


def chunk_text(
    text: str,
    document_id: str,
    size: int,
    overlap: int,
    parts: Sequence[Chapter] = (),
) -> list[Chunk]:
    """Group whole sentences into chunks of at most `size` chars, repeating up to `overlap`.

    With `parts` (the text's chapters, storygraph.text.chapters) each chapter's body (after its
    heading) is chunked on its own, so no chunk (and no sentence) spans two chapters and every
    chunk carries its chapter; without, the text is one chapter 0."""
    if size < 1:
        raise ValueError(f"chunk size must be at least 1, got {size}")
    if not 0 <= overlap < size:
        raise ValueError(f"chunk overlap must be in [0, size), got {overlap} for size {size}")
    spans: list[tuple[Span, Chapter]] = []
    for part in parts or (Chapter(0, "", 0, len(text)),):
        body = text[part.body_start : part.end]  # the heading is the chunks' chapter_title
        pieces = [
            (part.body_start + p0, part.body_start + p1)
            for s, e in split_sentences(body)
            for p0, p1 in _split_long(body, s, e, size)
        ]
        spans.extend((span, part) for span in _group(pieces, size, overlap))
    return [
        Chunk(
            id=f"{document_id}:{index:04d}",
            document_id=document_id,
            index=index,
            text=text[start:end],
            start=start,
            end=end,
            chapter=part.index,
            chapter_title=part.title,
        )
        for index, ((start, end), part) in enumerate(spans)
    ]


def evidence_sentence(chunk_text: str, names: list[str]) -> str:
    """Shortest sentence naming all `names`; else the one naming most of them; else ""."""
    keys = [k for k in (normalize_name(n) for n in names) if k]
    if not keys:
        return ""
    best: tuple[int, int, str] | None = None
    for start, end in split_sentences(chunk_text):
        sentence = chunk_text[start:end]
        folded = normalize_name(sentence)
        hits = sum(1 for key in keys if key in folded)
        rank = (-hits, len(sentence), sentence)
        if hits and (best is None or rank[:2] < best[:2]):
            best = rank
    return best[2] if best is not None else ""


def _boundaries(text: str) -> list[int]:
    """Positions where a sentence ends (exclusive end offsets), in order."""
    depth = _quote_depths(text)
    cuts: list[int] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in TERMINATORS:
            end = _absorb(text, i)
            if depth[end] == 0 and _ends_sentence(text, i, end):
                cuts.append(end)
            i = end
            continue
        if ch == "\n" and _newline_ends_sentence(text, i, depth):
            cuts.append(i)
        i += 1
    return cuts


def _quote_depths(text: str) -> list[int]:
    """depth[j] = number of matched bracket pairs (o, c) with o < j <= c.

    Pairs never span a blank line; unmatched openers and closers are ignored, so a stray
    「 cannot swallow the rest of the text.
    """
    diff = [0] * (len(text) + 2)
    stack: list[tuple[str, int]] = []
    for i, ch in enumerate(text):
        if ch == "\n" and _BLANK_AHEAD.match(text, i + 1):
            stack.clear()
        elif ch in _PAIRS:
            stack.append((_PAIRS[ch], i))
        elif ch in _CLOSERS:
            for k in range(len(stack) - 1, -1, -1):
                if stack[k][0] == ch:
                    diff[stack[k][1] + 1] += 1
                    diff[i + 1] -= 1
                    del stack[k:]
                    break
    depths: list[int] = []
    running = 0
    for value in diff[: len(text) + 1]:
        running += value
        depths.append(running)
    return depths


def _absorb(text: str, i: int) -> int:
    """End of a terminator run at `i`, including trailing terminators, dots and closers."""
    j = i + 1
    while j < len(text) and text[j] in _TRAILING:
        j += 1
    while j < len(text) and text[j] in _CLOSERS:
        j += 1
    return j


def _ends_sentence(text: str, i: int, end: int) -> bool:
    if end > i + 1 and text[end - 1] in _JA_QUOTE_CLOSERS and _quotative_follows(text, end):
        return False
    if text[i] not in ASCII_TERMINATORS:
        return True
    if end < len(text) and not text[end].isspace() and (ord(text[end]) < 0x80 or text[i] == "."):
        return False
    if text[i] == "." and _is_abbreviation(text, i):
        return False
    following = text[end:].lstrip(" \t")
    return not (following and following[0].islower())


def _quotative_follows(text: str, end: int) -> bool:
    """「…。」と言いました: the quote goes on as part of the sentence (also after one newline)."""
    if text.startswith(("、", "，"), end):
        return True
    j = end
    while j < len(text) and text[j] in _INDENT:
        j += 1
    if j < len(text) and text[j] == "\n":
        j += 1
        while j < len(text) and text[j] in _INDENT:
            j += 1
    return text.startswith(_QUOTATIVE, j) and not text.startswith(_NOT_QUOTATIVE, j)


def _is_abbreviation(text: str, i: int) -> bool:
    start = i
    while start > 0 and _is_word_char(text[start - 1]):
        start -= 1
    word = text[start:i].lstrip(".")
    if not word:
        return False
    if len(word) == 1 and word.isupper():
        return True
    return word.lower() in _ABBREVIATIONS


def _is_word_char(ch: str) -> bool:
    return (ch.isascii() and ch.isalpha()) or ch == "."


def _newline_ends_sentence(text: str, i: int, depth: list[int]) -> bool:
    if _BLANK_AHEAD.match(text, i + 1):
        return True
    if depth[i] > 0:
        return False
    prev = _previous_visible(text, i)
    if prev in _COMMAS:
        return False
    if prev in _JA_QUOTE_CLOSERS and _quotative_follows(text, i):
        return False
    return not _soft_wrap(text, i)


def _previous_visible(text: str, i: int) -> str:
    j = i - 1
    while j >= 0 and text[j] in _INDENT:
        j -= 1
    return text[j] if j >= 0 else ""


def _soft_wrap(text: str, i: int) -> bool:
    """A newline inside a hard-wrapped ASCII sentence (English prose wrapped at ~70 chars)."""
    before = i - 1
    while before >= 0 and text[before] in " \t":
        before -= 1
    after = i + 1
    while after < len(text) and text[after] in " \t":
        after += 1
    if before < 0 or after >= len(text):
        return False
    prev, nxt = text[before], text[after]
    return prev.isascii() and prev not in ASCII_TERMINATORS and nxt.isascii()


def _trim(text: str, start: int, end: int) -> Span | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def _split_long(text: str, start: int, end: int, size: int) -> list[Span]:
    """Split a sentence longer than `size` after commas, else at spaces, else hard."""
    pieces: list[Span] = []
    pos = start
    while end - pos > size:
        cut = _cut_point(text, pos, pos + size)
        piece = _trim(text, pos, cut)
        if piece is not None:
            pieces.append(piece)
        pos = cut
    last = _trim(text, pos, end)
    if last is not None:
        pieces.append(last)
    return pieces


def _cut_point(text: str, lo: int, hi: int) -> int:
    for m in range(hi - 1, lo, -1):
        if text[m] in _COMMAS:
            return m + 1
    for m in range(hi, lo, -1):
        if text[m].isspace():
            return m
    return hi


def _group(pieces: list[Span], size: int, overlap: int) -> list[Span]:
    chunks: list[Span] = []
    first = 0
    while first < len(pieces):
        last = first
        while last + 1 < len(pieces) and pieces[last + 1][1] - pieces[first][0] <= size:
            last += 1
        chunks.append((pieces[first][0], pieces[last][1]))
        if last + 1 >= len(pieces):
            break
        first = _next_first(pieces, first, last, size, overlap)
    return chunks


def _next_first(pieces: list[Span], first: int, last: int, size: int, overlap: int) -> int:
    """First piece of the next chunk: the earliest that keeps overlap and size limits."""
    for k in range(first + 1, last + 1):
        repeated = pieces[last][1] - pieces[k][0]
        if repeated <= overlap and pieces[last + 1][1] - pieces[k][0] <= size:
            return k
    return last + 1
