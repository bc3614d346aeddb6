"""What the premise check (storygraph.qa.verify.premise) reads besides the question: the
parser's frames of a source (`FrameReader`, built in the composition root so that qa imports
nothing from storygraph.ingest), read with the story around it in its chunk (`text_around`,
`source_span`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol


class Frame(Protocol):
    """What the premise check reads of a parser frame (storygraph.ingest.frames.ProposedFact
    has these fields): `subject -[relation]-> object` as the sentence writes them."""

    @property
    def subject(self) -> str: ...
    @property
    def relation(self) -> str: ...
    @property
    def object(self) -> str: ...
    @property
    def predicate(self) -> str: ...
    @property
    def pattern(self) -> str: ...
    @property
    def sentence(self) -> str: ...
    @property
    def start(self) -> int:
        """The frame's sentence's offset in the text read."""
        ...


FrameReader = Callable[[str, str], Sequence[Frame]]
"""(sentence, language) → the parser's frames of that sentence."""
ChunkText = Callable[[str], str]
"""A chunk id → the chunk's text ("" when the store has none): the story around a source."""
CONTEXT_CHARS = 240
"""Characters of the story before a source the parser reads with it (from a sentence start):
enough for the paragraph's topic, which a Japanese sentence leaves unsaid."""
MAX_CACHED_FRAMES = 4096
"""Sentences whose frames the premise check keeps (it lives as long as its engine)."""
_SENTENCE_END = re.compile(r"[。！？!?」\n]|\.\s")
_CLOSED = re.compile(r"[。！？!?.」]$")


def text_around(chunk: str, source: str) -> tuple[str, str]:
    """The text before `source` in `chunk` (its last `CONTEXT_CHARS` characters, starting after
    a sentence end so that no sentence is read from its middle) and, when the source stops
    inside a sentence (「川上から、大きな桃が一つ、」 before a speech), the rest of that sentence
    (「…」と流れて来ました。); ("", "") when `source` is not in the chunk (`source_span`)."""
    span = source_span(chunk, source)
    if span is None:
        return "", ""
    at, end = span
    window = chunk[max(0, at - CONTEXT_CHARS) : at]
    if at > CONTEXT_CHARS:
        cut = _SENTENCE_END.search(window)
        window = window[cut.end() :] if cut else ""
    after = ""
    if not _CLOSED.search(source.rstrip()):
        after = _rest_of_sentence(chunk[end : end + CONTEXT_CHARS])
    return window, after


def source_span(chunk: str, source: str) -> tuple[int, int] | None:
    """Where `source` stands in `chunk` (start, end), its spaces and line breaks aside: a source
    is the story's text with other whitespace between its words and sentences than the chunk
    keeps (sentence search joins a passage's sentences side by side in Japanese and with one
    space in English, storygraph.qa.retrieval.passages, where the chunk has a line break and an
    indent;
    the English parser reads a line break as a space); None when it is not in the chunk."""
    at = chunk.find(source) if source else -1
    if at >= 0:
        return at, at + len(source)
    kept = [i for i, ch in enumerate(chunk) if not ch.isspace()]
    bare = "".join(chunk[i] for i in kept)
    wanted = "".join(ch for ch in source if not ch.isspace())
    at = bare.find(wanted) if wanted else -1
    if at < 0:
        return None
    return kept[at], kept[at + len(wanted) - 1] + 1


def _rest_of_sentence(text: str) -> str:
    """`text` up to its first sentence end outside speech 「…」 ("" when there is none)."""
    depth = 0
    for i, ch in enumerate(text):
        if ch == "「":
            depth += 1
        elif ch == "」":
            depth = max(0, depth - 1)
        elif depth == 0 and ch in "。！？!?.":
            return text[: i + 1]
    return ""
