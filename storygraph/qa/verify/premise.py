"""The premise check: does the story tell the act the question asks about, of anyone?

「桃太郎を倒したのは誰？」 takes as given that someone defeats 桃太郎. When no relation around the
question's participant has the question's verb (or a verb of its field of meaning) in the asked
direction, in any fact retrieval found or in any parser frame of a sentence the model read, and
no sentence read that names the participant uses the verb where the parser read no frame of it
(the parser may have missed it), the premise is told of no one: the verdict is "no premise" and
its reason says which act ("no fact or sentence has anyone defeats 桃太郎").

It is asked of a question that asks for a doer or a thing of a verb about a named participant
(who did / to whom / what, `PREMISE_KINDS`), with a verb the table knows; a question about what
someone said is not asked (a line is told by its quote, which the frames do not read as an act),
nor one that asks what a thing is (its verb only says which thing) or asks someone to do it.

Its verdict is one signal of the verifier (storygraph.qa.verify.signals.no_premise) and
decides the words of an answer the verifier withholds: "the story does not say" instead of "not
sure". The parser is reached through an injected `FrameReader` built in the composition root
(storygraph.services): this module imports nothing from storygraph.ingest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from storygraph.errors import ModelError
from storygraph.models import Citation, Fact
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.checked import QuestionParser, StructureReader
from storygraph.qa.question.relation_words import type_stems, word_in
from storygraph.qa.retrieval.context import MAX_SOURCE_CHARS
from storygraph.qa.verify.support_links import Link, as_asked, names_participant, same
from storygraph.qa.verify.support_reading import (
    MAX_CACHED_FRAMES,
    ChunkText,
    Frame,
    FrameReader,
    text_around,
)
from storygraph.text.normalize import normalize_name
from storygraph.text.vocabulary import words_by_stem

PREMISE_KINDS = frozenset({"who_did", "who_was_done_to", "who", "what"})
"""Kinds whose premise is checked: a doer or a thing of a verb. A partner or a place is asked
of relations the parser reads too sparsely to say that none exists."""


class PremiseChecker(Protocol):
    """Says whether the story tells the question's act (module doc)."""

    problem: str

    def missing(
        self,
        analysis: QuestionAnalysis,
        read: Sequence[Citation],
        citations: Sequence[Citation],
        facts: Sequence[Fact],
    ) -> str | None:
        """Why the premise is told of no one; None when it is told, or cannot be checked.
        `read`: the sources the model read; `citations`: every source; `facts`: every
        candidate of retrieval (kept ones marked)."""
        ...


class GraphPremiseChecker:
    """The premise check over injected frames, chunks and question structure (module doc)."""

    def __init__(
        self,
        frames: FrameReader | None = None,
        chunks: ChunkText | None = None,
        questions: StructureReader | None = None,
    ) -> None:
        self.frames = frames
        self.chunks = chunks
        """The story around a source: its frames are read with the text before it, so a zero
        subject gets its paragraph's topic as at ingest (None: each source alone)."""
        self.parser = QuestionParser(questions)
        self.problem = ""
        """Why the frames or the question's structure could not be read ("" when they could):
        the check then reads the facts only, and the engine names that in the trace."""
        self._frame_cache: dict[tuple[str, str], tuple[Frame, ...]] = {}

    def missing(
        self,
        analysis: QuestionAnalysis,
        read: Sequence[Citation],
        citations: Sequence[Citation],
        facts: Sequence[Fact],
    ) -> str | None:
        analysis = self.parser.checked(analysis)
        self.problem = self.problem or self.parser.problem
        wanted = [(e, s) for e, s in wanted_slots(analysis) if s != "any"]
        if not wanted or not analysis.stems or analysis.qtype.kind not in PREMISE_KINDS:
            return None
        if analysis.qtype.speech:
            return None  # a line is told by its quote, not by an act the frames read
        structure = self.parser.structure(analysis.question, analysis.language)
        if structure is not None and (not structure.predicate or structure.requested):
            # 「玉手箱に入っていた…とは何だった？」 asks what a thing is: the verb of its relative
            # clause says which thing; nor must the story hold an act someone is asked to do
            return None
        links = self.links(analysis, read, citations, facts)
        for link in links:
            if not type_stems(link.relation) & (analysis.related or analysis.stems):
                continue
            for entity, slot in wanted:
                if slot == "start" and same(link.end, entity):
                    return None
                if slot == "end" and same(link.start, entity):
                    return None
        if _unread_verb(analysis, links, read):
            return None
        entity, slot = wanted[0]
        verb = "/".join(sorted(analysis.stems)).lower()
        if slot == "start":
            return f"no fact or sentence has anyone {verb} {entity}"
        return f"no fact or sentence has {entity} {verb} anyone"

    def links(
        self,
        analysis: QuestionAnalysis,
        read: Sequence[Citation],
        citations: Sequence[Citation],
        facts: Sequence[Fact],
    ) -> list[Link]:
        """The relations of the frames of the sources read, then of the facts some source
        tells (and the kept facts), each read as the question's act reads it."""
        language = "ja" if analysis.language == "ja" else "en"
        links: list[Link] = []
        for c in read:
            if c.kind == "graph":
                continue
            chunk = self._chunk(c)
            before, after = text_around(chunk, c.text) if chunk else ("", "")
            for f in self._frames_of(before + c.text + after, c.language or language):
                if f.start + len(f.sentence) <= len(before) or f.start >= len(before + c.text):
                    continue  # a frame of the story around the source, not of the source
                links.append(
                    Link(f.subject, f.relation, f.object, c.number, c.text, "frame", f.pattern,
                         f.predicate)
                )  # fmt: skip
        by_text = {normalize_name(c.text): c for c in citations}
        for fact in facts:
            evidence = fact.evidence[:MAX_SOURCE_CHARS]
            told = by_text.get(normalize_name(evidence)) if evidence else None
            citation = told or by_text.get(normalize_name(fact.text()))
            if citation is None and not fact.kept:
                continue
            number = citation.number if citation else None
            sentence = citation.text if citation else (fact.evidence or fact.text())
            links.append(Link(fact.start, fact.type, fact.end, number, sentence, "fact"))
        return [as_asked(link, analysis) for link in links]

    def _frames_of(self, text: str, language: str) -> tuple[Frame, ...]:
        if self.frames is None or not text:
            return ()
        key = (text, language)
        if key not in self._frame_cache:
            if len(self._frame_cache) >= MAX_CACHED_FRAMES:  # the check lives as long as its engine
                self._frame_cache.clear()
            try:
                self._frame_cache[key] = tuple(self.frames(text, language))
            except ModelError as exc:  # the parser is not installed: the facts only
                self.problem = f"the parser's frames could not be read: {exc.message}"
                self.frames = None
                return ()
        return self._frame_cache[key]

    def _chunk(self, source: Citation) -> str:
        """The text of a source's chunk ("" when the check reads no chunks), asked of the store
        each time: the check lives as long as its engine, and a story ingested again with other
        chunk sizes keeps its chunk ids."""
        if self.chunks is None or not source.chunk_id:
            return ""
        return self.chunks(source.chunk_id)


def wanted_slots(analysis: QuestionAnalysis) -> list[tuple[str, str]]:
    """(participant, the slot the answer takes beside it: "start" / "end" / "any")."""
    slot = {"in": "start", "out": "end"}
    return [(entity, slot.get(d, "any")) for entity, d in analysis.qtype.roles.items()]


def _unread_verb(
    analysis: QuestionAnalysis, links: Sequence[Link], read: Sequence[Citation]
) -> bool:
    """Does a source read name a participant and use a word of the question's verb with no
    frame of that verb read from it?"""
    words = [w for stem in analysis.stems for w in words_by_stem().get(stem, ())]
    for c in read:
        if not any(names_participant(c.text, e) for e in analysis.entities):
            continue
        if not any(word_in(w, c.text.lower()) for w in words):
            continue
        framed = any(
            link.source == c.number
            and link.how == "frame"
            and type_stems(link.relation) & analysis.stems
            for link in links
        )
        if not framed:
            return True
    return False
