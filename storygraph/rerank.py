"""Scoring candidate relations 0-10 for a question and keeping the best (design §5.3).

A reranker is one narrow port: `score(question, facts, callbacks) -> list[float]`. The LLM
scorer works batched (one call for all facts, for capable models) or per fact (the small
embedded model returned all zeros for lists, design §6). When the model fails or answers
nonsense, the lexical scorer takes over and the result says it fell back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from storygraph.lexicon import mask_names, relation_words, word_in
from storygraph.models import Fact
from storygraph.prompt_files import fill
from storygraph.text.normalize import normalize_name

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


def lexical_scores(question: str, facts: Sequence[Fact]) -> list[float]:
    """Cheap deterministic score: relation words and names of the fact found in the question."""
    text = normalize_name(question)
    raw = question.lower()
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


def rerank(
    question: str,
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
        scores = lexical_scores(question, facts)
    elif strategy == "batched":
        method = "llm-batched"
        try:
            scores = llm_scores_batched(question, facts, llm, callbacks)
        except Exception as exc:  # noqa: BLE001 - any model fault: fall back, say so
            fell_back, reason = True, f"{type(exc).__name__}: {exc}"
            scores = lexical_scores(question, facts)
    else:
        method = "llm-per-fact"
        fallback = lexical_scores(question, facts)
        scores = []
        failures = 0
        for fact, cheap in zip(facts, fallback, strict=True):
            try:
                scores.append(llm_score_one(question, fact, llm, callbacks))
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
