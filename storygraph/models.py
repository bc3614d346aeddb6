"""Plain data types passed between the layers. No I/O here."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

EntitySource = Literal[
    "llm",
    "dictionary",
    "normalised",
    "transliteration",
    "contained",
    "fuzzy",
    "given",
    "embedding",
]
ExtractionOrigin = Literal["model", "parser"]
"""Which path produced an extracted entity or relation: a language model or a syntactic parser."""


@dataclass(frozen=True)
class Chunk:
    """A piece of a document that one extraction call sees."""

    id: str
    document_id: str
    index: int
    text: str
    start: int
    end: int
    chapter: int = 0
    """The chapter it is part of (storygraph.text.chapters: 0 before any heading, or in a text
    with none); a chunk never spans two chapters."""
    chapter_title: str = ""


@dataclass(frozen=True)
class DocumentInfo:
    """A stored (or about to be stored) document."""

    id: str
    name: str
    sha256: str
    language: str
    chars: int
    uploaded_at: str = ""
    status: str = "ready"
    chunks: int = 0


@dataclass(frozen=True)
class ExtractedEntity:
    name: str
    type: str
    chunk_id: str
    origin: ExtractionOrigin = "model"


@dataclass(frozen=True)
class ExtractedRelation:
    source: str
    source_type: str
    type: str
    target: str
    target_type: str
    chunk_id: str
    evidence: str = ""
    origin: ExtractionOrigin = "model"


@dataclass
class ChunkExtraction:
    """What the extractor (a model or the parser) found in one chunk.

    `untyped` counts facts the parser read whose predicate the verb table has no type for (the
    parser types them by their own verb, or drops them; the ingest report shows how many). A
    chunk whose extraction fails has no ChunkExtraction: the extractor raises and the document
    fails whole, before anything is written.
    """

    chunk: Chunk
    entities: list[ExtractedEntity] = field(default_factory=list)
    relations: list[ExtractedRelation] = field(default_factory=list)
    untyped: int = 0


@dataclass
class Fact:
    """One relation of the graph, as retrieval returns it and rerank scores it."""

    start: str
    type: str
    end: str
    chunk_ids: list[str] = field(default_factory=list)
    evidence: str = ""
    score: float | None = None
    kept: bool = False
    reason: str = ""
    story_order: str = ""
    """First position where the story states it (storygraph.store.story_time); "" when unknown."""
    story_order_last: str = ""
    invalid_at: str = ""
    """Position of the later fact that superseded it (exclusive relations); "" while valid."""
    sentences: list[str] = field(default_factory=list)
    """Each chunk's evidence sentence, aligned with `chunk_ids` ("" where a chunk has none);
    `evidence` is the one the fact is read by (storygraph.qa.retrieval.fact_sentences)."""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.start, self.type, self.end)

    def text(self) -> str:
        return f"{self.start} -[{self.type}]-> {self.end}"

    def to_json(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "type": self.type,
            "end": self.end,
            "score": self.score,
            "kept": self.kept,
            "reason": self.reason,
            "chunk_ids": list(self.chunk_ids),
            "evidence": self.evidence,
            "story_order": self.story_order,
            "story_order_last": self.story_order_last,
            "invalid_at": self.invalid_at,
        }


@dataclass(frozen=True)
class ResolvedEntity:
    """A name from the question matched to a node of the graph."""

    mention: str
    node_id: str
    source: EntitySource
    score: float = 1.0


@dataclass
class Usage:
    """LLM calls and tokens, summed over a piece of work."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    unreported: int = 0
    """Calls whose response carried no token counts (llama-cpp-python's server sends none in a
    stream): their tokens are not in the sums above."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def known_tokens(self) -> int | None:
        """`total_tokens` when every call reported its tokens, else None (not a false 0)."""
        return self.total_tokens if self.unreported == 0 else None

    def add(self, other: Usage) -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.unreported += other.unreported


def usage_delta(before: Usage, after: Usage) -> Usage:
    """What was used between two snapshots."""
    return Usage(
        after.calls - before.calls,
        after.prompt_tokens - before.prompt_tokens,
        after.completion_tokens - before.completion_tokens,
        after.unreported - before.unreported,
    )


@dataclass
class TraceStep:
    name: str
    seconds: float
    detail: dict[str, Any] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)


CLOSEST_SHOWN = "no answer: closest sentence shown"
"""The end of an answer step's method when the model found no answer and the closest sentence
was shown instead (qa writes it; the trace's plain text and the e2e summary read it)."""

CitationKind = Literal["fact", "sentence", "graph"]
"""A kept fact's own sentence, a sentence found by sentence search
(storygraph.qa.retrieval.passages), or
a kept fact with no story sentence behind it (an imported graph's): its text is the fact."""


CITATION_MARK = re.compile(r"\[(\d+)\]")
"""A citation mark in an answer's text ([3]), its source's number the group: the one pattern the
answer's explanation, the per-story parts and the evaluation read marks by."""


@dataclass
class Citation:
    number: int
    chunk_id: str
    document_name: str
    text: str
    kind: CitationKind = "fact"
    language: str = ""
    """The language of the cited chunk's document, as stored at ingest ("ja" / "en"); "" for a
    fact with no chunk (kind "graph") and for answers saved before it was kept."""
    chapter: int | None = None
    """The cited chunk's chapter (storygraph.text.chapters: 0 before any heading); None for a
    fact with no chunk and a story stored before chapters were read. Shown by
    `storygraph.text.chapters.chapter_label` (「第三章」, "Chapter 3"; nothing for 0)."""
    chapter_title: str = ""
    """The chapter's heading as the story writes it ("" for chapter 0 and None)."""
    sentence: str = ""
    """For a sentence-search passage, the sentence that matched without its neighbours ("" when
    it is the whole text): a small model's budget reads it alone when the passage does not fit
    (storygraph.qa.retrieval.context.small_sources)."""


SupportVerdict = Literal["supported", "not supported", "no premise", "declined", "not checked"]
"""What the support step (storygraph.qa.verify.gate) found of an answer."""


@dataclass(frozen=True)
class Support:
    """The verdict on one answer: `supported` (by `source`), `not supported`, `no premise`
    (nothing in the story does what the question asks about), `declined` (the answer says
    the story does not say) or `not checked` (no model sentence to check: the facts list)."""

    verdict: SupportVerdict
    source: int | None = None
    named: tuple[str, ...] = ()
    reason: str = ""
    check: str = ""
    """Which check decided it: "verifier", "premise", "" (none ran); a chat saved before
    2026-12-03 may name a check of the rule check removed then ("name", "role", "quote", …)."""

    @property
    def supported(self) -> bool:
        return self.verdict == "supported"

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "source": self.source,
            "named": list(self.named),
            "reason": self.reason,
            "check": self.check,
        }


@dataclass
class Answer:
    question: str
    answer: str
    mode: str
    entities: list[ResolvedEntity] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    steps: list[TraceStep] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    rerank_fell_back: bool = False
    warnings: list[str] = field(default_factory=list)
    cypher: str = ""
    support: Support | None = None
    """The support check's verdict (None: not run, e.g. an answer from before the check)."""
    language: str = ""
    """The language of the chat's own words about this answer, "ja" or "en": the question's, as
    the question reader read it once (QuestionAnalysis.reply_language). "" only in a chat saved
    before answers carried it (the view then reads the question's language itself)."""

    @property
    def kept_facts(self) -> list[Fact]:
        return [f for f in self.facts if f.kept]

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "mode": self.mode,
            "language": self.language,
            "entities": [e.node_id for e in self.entities],
            "entity_matches": [asdict(e) for e in self.entities],
            "facts": [f.to_json() for f in self.facts],
            "citations": [asdict(c) for c in self.citations],
            "rerank_fell_back": self.rerank_fell_back,
            "warnings": list(self.warnings),
            "support": self.support.to_json() if self.support else None,
            "usage": asdict(self.usage),
            "steps": [
                {
                    "name": s.name,
                    "seconds": round(s.seconds, 4),
                    "usage": asdict(s.usage),
                    **s.detail,
                }
                for s in self.steps
            ],
        }


@dataclass
class IngestReport:
    document: str
    document_id: str = ""
    status: Literal["added", "unchanged", "failed", "cancelled"] = "added"
    chunks: int = 0
    chunks_cached: int = 0
    """Chunks whose extraction came from the extraction cache (no model call)."""
    chunks_extracted: int = 0
    """Chunks the model extracted in this run."""
    entities_added: int = 0
    entities_merged: int = 0
    relations_added: int = 0
    relations_merged: int = 0
    extractor: str = ""
    untyped_dropped: int = 0
    entities_unlinked: int = 0
    """Extracted names in no fact, left out of the graph (storygraph.ingest.merge)."""
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0
    message: str = ""
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["seconds"] = round(self.seconds, 3)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> IngestReport:
        """The report `to_json` wrote (the job runner keeps reports in the data directory)."""
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        fields["usage"] = Usage(**data.get("usage", {}))
        fields["warnings"] = list(data.get("warnings", []))
        return cls(**fields)
