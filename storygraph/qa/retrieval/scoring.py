"""Scoring candidate relations 0-10 for a question and keeping the best (design §5.3).

A scorer is one narrow port (`Scorer.score(analysis, facts, ...) -> RerankResult`), two kinds:

- `ModelScorer`: the LLM scores every fact, batched (one call for all facts, for capable
  models) or per fact. When the model fails or answers nonsense, the lexical scorer takes over
  and the result says it fell back.
- `FastScorer`: no model call (the small embedded model's default: one call per fact cost it
  most of a minute per question): relation words, the question's terms in the evidence
  sentence and their embedding similarity, plus the question-type prior.

A mode without +rerank gets `RetrievalOrder` (no score but the prior).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, Field

from storygraph.models import Fact
from storygraph.prompt_files import fill
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.relation_words import mask_names, relation_words, type_stems, word_in
from storygraph.text.embeddings import Embedder
from storygraph.text.normalize import normalize_name
from storygraph.text.terms import content_terms

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

Strategy = Literal["batched", "per_fact"]


class FactScore(BaseModel):
    """Relevance of one fact to the question."""

    index: int = Field(description="the fact's number")
    score: float = Field(description="0 (useless) to 10 (answers the question)")


class FactScores(BaseModel):
    """Relevance scores of the numbered facts."""

    scores: list[FactScore] = Field(default_factory=list)


class SingleScore(BaseModel):
    """Relevance of the fact to the question."""

    score: float = Field(description="0 (useless) to 10 (answers the question)")


class RerankFailed(Exception):
    """The model's scores cannot be used."""


def lexical_scores(analysis: QuestionAnalysis, facts: Sequence[Fact]) -> list[float]:
    """Cheap deterministic score: relation words and names of the fact found in the question."""
    text = analysis.folded
    raw = analysis.lowered
    scores: list[float] = []
    for fact in facts:
        score = 2.0
        words = relation_words(fact.type)
        unnamed = mask_names(raw, (fact.start, fact.end))
        if any(word_in(w, unnamed) for w in words):
            score += 5.0
        elif any(part and part.lower() in raw for part in fact.type.split("_") if len(part) > 2):
            score += 4.0
        names = [normalize_name(fact.start), normalize_name(fact.end)]
        score += 1.5 * sum(1 for n in names if n and n in text)
        scores.append(min(score, 10.0))
    return scores


def _numbered(facts: Sequence[Fact]) -> str:
    return "\n".join(f"{i}. {f.text()}" for i, f in enumerate(facts, start=1))


def _valid(score: Any) -> float:
    value = float(score)
    if not 0.0 <= value <= 10.0:
        raise RerankFailed(f"score {value} outside 0-10")
    return value


def llm_scores_batched(
    question: str, facts: Sequence[Fact], llm: BaseChatModel, callbacks: list[Any]
) -> list[float]:
    structured = llm.with_structured_output(FactScores, method="function_calling")
    result = structured.invoke(
        fill("rerank_batch", question=question, facts=_numbered(facts)),
        config={"callbacks": callbacks},
    )
    items = result.scores if isinstance(result, FactScores) else []
    by_index: dict[int, float] = {}
    for item in items:
        if 1 <= item.index <= len(facts):
            by_index[item.index] = _valid(item.score)
    if len(by_index) < len(facts):
        raise RerankFailed(f"scores for {len(by_index)} of {len(facts)} facts")
    values = [by_index[i] for i in range(1, len(facts) + 1)]
    if len(values) > 2 and not any(values):
        # The small model scoring a list answered all zeros (design §6); identical non-zero
        # scores are fine: after the relation-type filter the candidates are often equals.
        raise RerankFailed("every fact scored 0")
    return values


def llm_score_one(question: str, fact: Fact, llm: BaseChatModel, callbacks: list[Any]) -> float:
    structured = llm.with_structured_output(SingleScore, method="function_calling")
    result = structured.invoke(
        fill("rerank_single", question=question, fact=fact.text()), config={"callbacks": callbacks}
    )
    if not isinstance(result, SingleScore):
        raise RerankFailed("no score")
    return _valid(result.score)


@dataclass
class RerankResult:
    facts: list[Fact]
    fell_back: bool
    method: str
    reason: str = ""

    @property
    def warnings(self) -> list[str]:
        """What the answer's warnings say of this scoring (a fallback, or nothing)."""
        if not self.fell_back:
            return []
        return [f"rerank fell back to the lexical scorer: {self.reason}"]


def rerank(
    analysis: QuestionAnalysis,
    facts: Sequence[Fact],
    *,
    llm: BaseChatModel | None,
    strategy: Strategy,
    top_k: int,
    min_score: float,
    callbacks: list[Any],
    prior: Sequence[float] | None = None,
) -> RerankResult:
    """Score, sort (stable: ties keep retrieval order) and mark the kept facts.

    `prior` (one value per fact, e.g. the question-type adjustment) is added to each score before
    sorting, so a fact's final score may leave the 0-10 range by that much.
    """
    facts = list(facts)
    fell_back = False
    reason = ""
    method = "lexical"
    if not facts:
        return RerankResult([], False, "none")
    if llm is None:
        scores = lexical_scores(analysis, facts)
    elif strategy == "batched":
        method = "llm-batched"
        try:
            scores = llm_scores_batched(analysis.question, facts, llm, callbacks)
        except Exception as exc:  # noqa: BLE001 - any model fault: fall back, say so
            fell_back, reason = True, f"{type(exc).__name__}: {exc}"
            scores = lexical_scores(analysis, facts)
    else:
        method = "llm-per-fact"
        fallback = lexical_scores(analysis, facts)
        scores = []
        failures = 0
        for fact, cheap in zip(facts, fallback, strict=True):
            try:
                scores.append(llm_score_one(analysis.question, fact, llm, callbacks))
            except Exception as exc:  # noqa: BLE001
                failures += 1
                reason = f"{type(exc).__name__}: {exc}"
                scores.append(cheap)
        if failures:
            fell_back = True
            reason = f"{failures} of {len(facts)} facts scored lexically ({reason})"
    adjust = list(prior) if prior is not None else [0.0] * len(facts)
    for fact, score, extra in zip(facts, scores, adjust, strict=True):
        fact.score = round(score + extra, 2)
    if any(adjust):
        method += " + question-type adjustment"
    if fell_back:
        method += " → lexical fallback"
    return RerankResult(_keep(facts, top_k, min_score), fell_back, method, reason)


NEUTRAL_SCORE = 5.0
"""Score of every candidate when no scorer runs (a mode without +rerank)."""


def _keep(facts: Sequence[Fact], top_k: int, min_score: float) -> list[Fact]:
    ranked = sorted(facts, key=lambda f: -(f.score or 0.0))
    for rank, fact in enumerate(ranked):
        fact.kept = rank < top_k and (fact.score or 0.0) >= min_score
        fact.reason = ""
        if not fact.kept:
            fact.reason = (
                "below minimum score" if (fact.score or 0.0) < min_score else "beyond top-k"
            )
    return ranked


NOT_FITTING = "relation does not fit the question's words"


def keep_fitting(facts: Sequence[Fact], fitting: Sequence[str]) -> int:
    """Un-keep the kept facts whose type is not among `fitting` (the types the question's
    relation words name, widened to their field:
    storygraph.qa.retrieval.relation_types.lexical_pick),
    when at least one kept fact's type is among them: the facts the answer lists are then those
    the question asks about (「桃太郎の仲間は誰？」 keeps 犬 -[MEETS]-> 桃太郎, not
    鬼 -[DEFEATS]-> 桃太郎). Nothing changes when none fits or the question names no relation.
    Returns how many were set aside."""
    wanted = set(fitting)
    kept = [f for f in facts if f.kept]
    if not wanted or not any(f.type in wanted for f in kept):
        return 0
    dropped = 0
    for fact in kept:
        if fact.type not in wanted:
            fact.kept = False
            fact.reason = NOT_FITTING
            dropped += 1
    return dropped


def rank_without_model(
    facts: Sequence[Fact], *, top_k: int, prior: Sequence[float] | None = None
) -> RerankResult:
    """No scorer: every fact gets the neutral score plus its prior; stable sort; first top k."""
    facts = list(facts)
    if not facts:
        return RerankResult([], False, "none")
    adjust = list(prior) if prior is not None else [0.0] * len(facts)
    for fact, extra in zip(facts, adjust, strict=True):
        fact.score = round(NEUTRAL_SCORE + extra, 2)
    method = "question-type order" if any(adjust) else "retrieval order (no rerank)"
    return RerankResult(_keep(facts, top_k, 0.0), False, method)


# --- the scorer port ---------------------------------------------------------------------------
class Scorer(Protocol):
    """Scores a question's candidate facts 0-10 and marks the kept ones."""

    name: str

    def score(
        self,
        analysis: QuestionAnalysis,
        facts: Sequence[Fact],
        *,
        prior: Sequence[float],
        top_k: int,
        min_score: float,
        callbacks: list[Any],
    ) -> RerankResult: ...


class RetrievalOrder:
    """A mode without +rerank: no scoring, retrieval order after the prior (`rank_without_model`;
    no minimum score)."""

    name = "retrieval order"

    def score(
        self,
        analysis: QuestionAnalysis,
        facts: Sequence[Fact],
        *,
        prior: Sequence[float],
        top_k: int,
        min_score: float,
        callbacks: list[Any],
    ) -> RerankResult:
        return rank_without_model(facts, top_k=top_k, prior=prior)


class ModelScorer:
    """The model scores every fact (batched or one call per fact); lexical fallback."""

    def __init__(self, llm: BaseChatModel | None, strategy: Strategy) -> None:
        self.llm = llm
        self.strategy = strategy
        self.name = f"llm-{strategy}" if llm is not None else "lexical"

    def score(
        self,
        analysis: QuestionAnalysis,
        facts: Sequence[Fact],
        *,
        prior: Sequence[float],
        top_k: int,
        min_score: float,
        callbacks: list[Any],
    ) -> RerankResult:
        return rerank(
            analysis,
            facts,
            llm=self.llm,
            strategy=self.strategy,
            top_k=top_k,
            min_score=min_score,
            callbacks=callbacks,
            prior=prior,
        )


RELATION_WORD_POINTS = 3.0
RELATED_FIELD_POINTS = 1.5
OVERLAP_POINTS = 3.0
EMBEDDING_POINTS = 3.0
EMBEDDING_FLOOR = 0.15
EMBEDDING_SPAN = 0.45
FAST_BASE = 1.0


def fact_sentence(fact: Fact) -> str:
    """What a fact says in words: its evidence sentence, else its triple with spaced type."""
    if fact.evidence:
        return fact.evidence
    return f"{fact.start} {fact.type.replace('_', ' ').lower()} {fact.end}"


class FastScorer:
    """No model call: relation words, the question's terms in the evidence, and the embedding
    similarity of question and evidence (each worth up to 3 points on 0-10), plus the
    question-type prior; the sum is clamped to 0-10."""

    name = "fast"

    def __init__(self, embedder: Embedder | None) -> None:
        self.embedder = embedder

    def score(
        self,
        analysis: QuestionAnalysis,
        facts: Sequence[Fact],
        *,
        prior: Sequence[float],
        top_k: int,
        min_score: float,
        callbacks: list[Any],
    ) -> RerankResult:
        facts = list(facts)
        if not facts:
            return RerankResult([], False, "none")
        sentences = [fact_sentence(f) for f in facts]
        similarity = self._similarity(analysis.question, sentences)
        wanted = set(analysis.terms)
        parts = ["relation words", "evidence terms"]
        if similarity is not None:
            parts.append(f"embedding ({getattr(self.embedder, 'name', 'embedder')})")
        for i, fact in enumerate(facts):
            value = FAST_BASE
            stems = type_stems(fact.type)
            if stems & analysis.stems:
                value += RELATION_WORD_POINTS
            elif stems & analysis.related:
                value += RELATED_FIELD_POINTS
            if wanted:
                have = set(content_terms(sentences[i], analysis.reply_language))
                value += OVERLAP_POINTS * len(wanted & have) / len(wanted)
            if similarity is not None:
                lifted = (float(similarity[i]) - EMBEDDING_FLOOR) / EMBEDDING_SPAN
                value += EMBEDDING_POINTS * min(1.0, max(0.0, lifted))
            value += prior[i] if i < len(prior) else 0.0
            fact.score = round(min(10.0, max(0.0, value)), 2)
        method = "fast: " + " + ".join(parts)
        if any(prior):
            method += " + question-type adjustment"
        return RerankResult(_keep(facts, top_k, min_score), False, method)

    def _similarity(self, question: str, sentences: Sequence[str]) -> Any:
        if self.embedder is None:
            return None
        unique = list(dict.fromkeys(sentences))
        vectors = self.embedder.embed([question, *unique])
        by_text = dict(zip(unique, vectors[1:] @ vectors[0], strict=True))
        return [by_text[s] for s in sentences]
