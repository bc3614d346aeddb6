"""What the support check (storygraph.qa.verify.support) reads besides the answer, each read
once per graph: the parser's frames of a source with the story around it in its chunk
(`text_around`, `source_span`), the sources' clauses (`SourceReading`); and the readers it is
handed (`FrameReader`, `NameFinder`, …), built in the composition root so that qa imports
nothing from storygraph.ingest. The question's structure, its asked slot and the analysis as
the check reads it are the question room's (storygraph.qa.question.checked: `QuestionParser`,
which the checker holds and only asks).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, TypeVar

from storygraph.errors import ModelError
from storygraph.models import Citation
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.asked_slot import AskedSlot, Clause, ClauseReader
from storygraph.qa.question.checked import QuestionParser, StructureReader
from storygraph.qa.question.question_structure import QuestionStructure
from storygraph.text.normalize import normalize_name


class Frame(Protocol):
    """What the support check reads of a parser frame (storygraph.ingest.frames.ProposedFact
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
NameFinder = Callable[[str, str], Sequence[tuple[str, str]]]
"""(an answer text, its language) → the graph entities it names, as (mention, node id)."""
ChunkText = Callable[[str], str]
"""A chunk id → the chunk's text ("" when the store has none): the story around a source."""
SPEECH_ANCHOR = 8
"""Characters of a source's start and end it is found by in its chunk."""
CONTEXT_CHARS = 240
"""Characters of the story before a source the parser reads with it (from a sentence start):
enough for the paragraph's topic, which a Japanese sentence leaves unsaid."""
MAX_CACHED_FRAMES = 4096
"""Sentences whose frames a checker keeps (it is reused while the graph is unchanged)."""
_T = TypeVar("_T")
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


class SourceReading:
    """The support check's readers and what they read, cached (the checker lives per graph)."""

    def __init__(
        self,
        names: NameFinder,
        frames: FrameReader | None = None,
        types: Mapping[str, str] | None = None,
        chunks: ChunkText | None = None,
        questions: StructureReader | None = None,
        clauses: ClauseReader | None = None,
    ) -> None:
        self.names = names
        self.clauses = clauses
        """Reads a source's clauses (storygraph.qa.verify.support_slots): an answer in the asked
        slot of the question's predicate there is supported when no frame or fact has it."""
        self.frames = frames
        self.parser = QuestionParser(questions)
        """The question's structure (its asked predicate, its participants' cases on it) as
        the question room reads it, lazily, with `questions` (storygraph.qa.question.checked);
        None: the question's words as the analysis read them."""
        self.chunks = chunks
        """The story around a source: its frames are read with the text before it, so a zero
        subject gets its paragraph's topic as at ingest (None: each source alone)."""
        self.types = {normalize_name(k): v.lower() for k, v in (types or {}).items()}
        """Node types by normalised name: a person question is not answered by a place, nor
        a where question by a person."""
        self.problem = ""
        """Why the frames could not be read ("" when they could): the check then reads the
        facts only, and the engine names that in the trace."""
        self._frame_cache: dict[tuple[str, str], tuple[Frame, ...]] = {}
        self._chunk_cache: dict[str, str] = {}
        self._parser_failed = False
        self._clause_cache: dict[tuple[str, str], tuple[Clause, ...]] = {}

    # --- reading ------------------------------------------------------------------------------
    def _frames_of(self, text: str, language: str) -> tuple[Frame, ...]:
        if self.frames is None or not text:
            return ()
        key = (text, language)
        if key not in self._frame_cache:
            if len(self._frame_cache) >= MAX_CACHED_FRAMES:  # the checker lives per graph
                self._frame_cache.clear()
            try:
                self._frame_cache[key] = tuple(self.frames(text, language))
            except ModelError as exc:  # the parser is not installed: the facts only
                self.problem = f"the parser's frames could not be read: {exc.message}"
                self.frames = None
                return ()
        return self._frame_cache[key]

    def _around(self, source: Citation) -> tuple[str, str]:
        """The story's text just before a source in its chunk (`text_around`), ("", "") when
        the chunk does not hold the source as written."""
        chunk = self._chunk(source)
        return text_around(chunk, source.text) if chunk else ("", "")

    def _chunk(self, source: Citation) -> str:
        """The text of a source's chunk ("" when the checker reads no chunks)."""
        if self.chunks is None or not source.chunk_id:
            return ""
        chunk = self._chunk_cache.get(source.chunk_id)
        if chunk is None:
            if len(self._chunk_cache) >= MAX_CACHED_FRAMES:
                self._chunk_cache.clear()
            chunk = self._chunk_cache[source.chunk_id] = self.chunks(source.chunk_id)
        return chunk

    def _structure(self, text: str, language: str) -> QuestionStructure | None:
        """The structure of `text` as the question room reads it (`QuestionParser.structure`:
        the question's, or an answer's sentence for the quote check)."""
        return self._heard(self.parser.structure(text, language))

    def _checked(self, analysis: QuestionAnalysis) -> QuestionAnalysis:
        """The analysis as the check reads it (`QuestionParser.checked`)."""
        return self._heard(self.parser.checked(analysis))

    def _heard(self, read: _T) -> _T:
        """`read`, after taking the question parser's problem as the check's when it has just
        failed (the parser not installed)."""
        if self.parser.problem and not self._parser_failed:
            self._parser_failed = True
            self.problem = self.parser.problem
        return read

    def _clauses_of(self, text: str, language: str) -> tuple[Clause, ...]:
        if self.clauses is None or not text:
            return ()
        key = (text, language)
        if key not in self._clause_cache:
            if len(self._clause_cache) >= MAX_CACHED_FRAMES:
                self._clause_cache.clear()
            try:
                self._clause_cache[key] = tuple(self.clauses(text, language))
            except ModelError as exc:  # the parser is not installed: frames and facts only
                self.problem = f"the sources' clauses could not be read: {exc.message}"
                self.clauses = None
                return ()
        return self._clause_cache[key]

    def _asked_slot(self, analysis: QuestionAnalysis) -> AskedSlot | None:
        """What the question asks of its predicate (`QuestionParser.asked_slot`; an English
        question's clauses read as the sources' are)."""
        return self._heard(self.parser.asked_slot(analysis, self._clauses_of))

    def _spoken(self, source: Citation) -> str:
        """A source with the story just before it and the rest of its sentence: a line's
        attribution before its quote (…こう言いました。⏎「…」) or after it."""
        before, after = self._around(source)
        return before + source.text + after + self._after_speech(source)

    def _after_speech(self, source: Citation) -> str:
        """The rest of the sentence after a source that ends with a speech its sentence goes
        on from (「…」と流れて来ました), found in its chunk by the source's first and last
        words (a source joins the story's lines); "" otherwise."""
        text = source.text.strip()
        chunk = self._chunk(source) if text.endswith("」") else ""
        tail = text[-SPEECH_ANCHOR:]
        at = chunk.find(text[:SPEECH_ANCHOR])
        end = chunk.find(tail, at) if at >= 0 else -1
        if end < 0:
            return ""
        end += len(tail)
        rest = chunk[end : end + CONTEXT_CHARS].lstrip(" 　\n")
        if not rest.startswith(("と", "って")):
            return ""
        return re.sub(r"\s+", "", _rest_of_sentence(rest))
