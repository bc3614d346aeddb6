"""What the answer reads: the kept facts' sources and sentence search's, numbered, within the
answering model's budget (design §5.4).

`ContextBuilder` is the stage between ranking and answering. It finds the story sentences close
to the question (`sentences`, storygraph.qa.retrieval.passages), then `sources` turns the kept
facts and
those sentences into one numbered list of citations (`build_citations`, `with_passages`) and
cuts the part the answerer reads (`SourceBudget`):

- capable models and no model read every source (`budget` None);
- the small embedded model reads the first ones, at most `SMALL_MAX_SOURCES` and
  `SMALL_SOURCE_TOKENS` (`small_sources`): the best facts' own sentences keep the first
  `SMALL_MAX_SOURCES - sentence_sources` places (`fact_slots`), sentence search's come next;
  a passage that does not fit with its neighbours is read, and cited, as its matched sentence.

The answerer receives `Sources` and writes from `Sources.read`; every citation stays in the
answer for the user.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from storygraph.models import Citation, CitationKind, Fact
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.retrieval.passages import Passage, PassageFinder
from storygraph.store import GraphStore
from storygraph.store.reading import EVERYTHING, Reading
from storygraph.store.story_time import in_story_order
from storygraph.text.normalize import normalize_name
from storygraph.text.token_estimate import estimated_tokens

MAX_SOURCE_CHARS = 300
SMALL_MAX_SOURCES = 6
"""Sources the small model reads at most (English ones: ~45 prompt tokens each); in Japanese the
token budget below ends them first."""
SMALL_SOURCE_TOKENS = 300
"""The small model's sources stop before they pass this many prompt tokens (estimated,
storygraph.text.token_estimate); the first is always read. A Japanese character costs ~3 times
an English one, so this is two to four Japanese passages (three at the median) and four to six
English ones; the Japanese questions were answered better as well as sooner than from four
passages, the English ones better from six (docs/ISSUES.md#small-model-sources: 180-350 measured,
300 best)."""


@dataclass(frozen=True)
class Sources:
    """The answer's numbered citations, and the first ones the answerer reads."""

    citations: list[Citation]
    read: list[Citation]

    @property
    def sentences(self) -> list[Citation]:
        """The citations that are story sentences (not an imported graph's facts)."""
        return [c for c in self.citations if c.kind != "graph"]


def _source_text(fact: Fact, index: int, chunks: dict[str, dict[str, Any]]) -> str:
    """What a fact's `index`-th chunk says for it: its evidence sentence, else the chunk."""
    chunk_id = fact.chunk_ids[index]
    if index == 0 and fact.evidence:
        return fact.evidence[:MAX_SOURCE_CHARS]
    return str(chunks.get(chunk_id, {}).get("text") or "")[:MAX_SOURCE_CHARS]


def _chapter(row: dict[str, Any]) -> int | None:
    """A chunk row's chapter; None for no chunk, or one stored before chapters were read."""
    value = row.get("chapter")
    return None if value is None else int(value)


def build_citations(facts: Sequence[Fact], chunks: dict[str, dict[str, Any]]) -> list[Citation]:
    """One citation per distinct source sentence behind the kept facts, numbered in rank order:
    a fact's evidence sentence (in its first chunk), else its chunk's text. Two facts of one
    chunk with different sentences get two numbers, so each number points at what it says. A
    fact with no chunk in the store (an imported graph's) is cited as itself (kind "graph"), so
    a mark in the answer always points at something the user can read."""
    citations: dict[tuple[str, str], Citation] = {}
    for fact in facts:
        keys = [
            (c, _source_text(fact, i, chunks)) for i, c in enumerate(fact.chunk_ids) if c in chunks
        ]
        kind: CitationKind = "fact" if keys else "graph"
        for chunk_id, text in keys or [("", fact.text())]:
            if (chunk_id, text) in citations:
                continue
            row = chunks[chunk_id] if chunk_id else {}
            citations[(chunk_id, text)] = Citation(
                number=len(citations) + 1,
                chunk_id=chunk_id,
                document_name=str(row.get("document") or ""),
                text=text,
                kind=kind,
                language=str(row.get("language") or ""),
                chapter=_chapter(row),
                chapter_title=str(row.get("chapter_title") or ""),
            )
    return list(citations.values())


def with_passages(
    citations: Sequence[Citation], passages: Sequence[Passage], fact_slots: int | None
) -> list[Citation]:
    """The facts' citations and the sentence-search passages as one list, renumbered: the
    first `fact_slots` fact sources (all when None), then the passages (one already among the
    fact sources is left out), then the other fact sources."""
    have = {normalize_name(c.text) for c in citations}
    found = [
        Citation(
            0,
            p.chunk_id,
            p.document_name,
            p.text[:MAX_SOURCE_CHARS],
            "sentence",
            p.language,
            p.chapter,
            p.chapter_title,
            p.sentence[:MAX_SOURCE_CHARS],
        )
        for p in passages
        if normalize_name(p.text[:MAX_SOURCE_CHARS]) not in have
    ]
    split = len(citations) if fact_slots is None else fact_slots
    ordered = [*citations[:split], *found, *citations[split:]]
    return [replace(c, number=i) for i, c in enumerate(ordered, start=1)]


def small_sources(citations: Sequence[Citation]) -> list[Citation]:
    """The citations the small model reads: the first ones, at most `SMALL_MAX_SOURCES`, while
    they stay within `SMALL_SOURCE_TOKENS` (the first one whatever its length). A passage that
    does not fit with its neighbours is read as its matched sentence alone when that fits (the
    returned citation then says only that sentence); the first source that fits neither way
    ends the list, so the rank is kept."""
    read: list[Citation] = []
    tokens = 0.0
    for citation in citations[:SMALL_MAX_SOURCES]:
        cost = estimated_tokens(citation.text)
        if read and tokens + cost > SMALL_SOURCE_TOKENS:
            cost = estimated_tokens(citation.sentence)
            if not citation.sentence or tokens + cost > SMALL_SOURCE_TOKENS:
                break
            citation = replace(citation, text=citation.sentence, sentence="")
        read.append(citation)
        tokens += cost
    return read


@dataclass(frozen=True)
class SourceBudget:
    """How much of the sources a small model reads (see the module doc)."""

    fact_slots: int
    """Fact sources placed before the sentence-search ones."""

    @classmethod
    def small_model(cls, sentence_sources: int) -> SourceBudget:
        return cls(max(0, SMALL_MAX_SOURCES - sentence_sources))

    def cut(self, citations: Sequence[Citation]) -> list[Citation]:
        return small_sources(citations)


class ContextBuilder:
    """Sentence search, then the numbered sources the answer reads (see the module doc)."""

    def __init__(
        self,
        store: GraphStore,
        passages: PassageFinder,
        *,
        sentence_sources: int,
        reading: Reading = EVERYTHING,
        budget: SourceBudget | None = None,
    ) -> None:
        """`reading`: how far the reader has read (storygraph.store.reading): sentence search
        reads no further."""
        self.store = store
        self.passages = passages
        self.sentence_sources = sentence_sources
        self.reading = reading
        self.budget = budget

    @property
    def method(self) -> str:
        return self.passages.name

    def sentences(self, analysis: QuestionAnalysis) -> list[Passage]:
        """Story sentences close to the question (none when sentence sources are off)."""
        if self.sentence_sources <= 0:
            return []
        return self.passages.find(analysis, self.sentence_sources, self.reading)

    def sources(
        self, kept: Sequence[Fact], passages: Sequence[Passage], *, story_order: bool = False
    ) -> Sources:
        """The kept facts' citations (in story order for a before / after question) with the
        passages placed among them, and the part the answerer reads."""
        if story_order:
            kept = in_story_order(kept)
        chunks = self.store.chunks([c for f in kept for c in f.chunk_ids])
        slots = self.budget.fact_slots if self.budget is not None else None
        return self.within_budget(with_passages(build_citations(kept, chunks), passages, slots))

    def within_budget(self, citations: Sequence[Citation]) -> Sources:
        """The citations, and the first ones the answerer reads (all of them without a budget);
        a passage the budget reads as its sentence alone is cited as that sentence."""
        if self.budget is None:
            return Sources(list(citations), list(citations))
        read = self.budget.cut(citations)
        return Sources([*read, *citations[len(read) :]], read)
