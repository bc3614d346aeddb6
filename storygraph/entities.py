"""Finding the question's entities in the graph (design §5.1).

1. The LLM lists the names it sees (structured output), each resolved against the graph:
   exact → normalised → contains / contained-in → fuzzy.
2. Names of graph nodes found literally in the question (dictionary match) are added; without a
   model this alone works.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field
from rapidfuzz import fuzz, process

from storygraph.models import ResolvedEntity
from storygraph.prompt_files import fill
from storygraph.text.normalize import normalize_name

FUZZY_THRESHOLD = 85.0
MAX_LISTED_TYPES = 200
MIN_CONTAINS_CHARS = 2


class QuestionEntities(BaseModel):
    """Names of the characters, places and things a question is about."""

    names: list[str] = Field(default_factory=list, description="names as written in the question")


class QuestionAnalysis(BaseModel):
    """The names a question is about and the relation types that could answer it."""

    names: list[str] = Field(default_factory=list, description="names as written in the question")
    relation_types: list[str] = Field(
        default_factory=list, description="relation types from the list, spelled exactly"
    )


class UnexpectedReply(ValueError):
    """The model's structured reply had a shape we did not ask for (not silently "nothing")."""


def string_list(value: Any, what: str) -> list[str]:
    """`value` as a list of non-empty strings; UnexpectedReply when it is not a list of strings
    (a bare string would otherwise be read character by character)."""
    if value is None:
        return []
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise UnexpectedReply(f"the model's {what} are not a list of strings: {value!r}"[:200])
    return [v.strip() for v in value if v.strip()]


def _fields(result: Any, model: type[BaseModel]) -> dict[str, Any]:
    """The fields of a structured reply (the pydantic object or its dict form)."""
    if isinstance(result, model):
        return result.model_dump()
    if isinstance(result, dict):
        return result
    raise UnexpectedReply(
        f"the model's reply is a {type(result).__name__}, not {model.__name__}: {result!r}"[:200]
    )


def analyse_question(
    question: str, relation_types: Sequence[str], llm: BaseChatModel, callbacks: list[Any]
) -> tuple[list[str], list[str]]:
    """One call for both the names and the fitting relation types (keeps a question at three
    calls with reranking: analysis, rerank, answer). Raises whatever the client raises, and
    UnexpectedReply for a reply of another shape."""
    structured = llm.with_structured_output(QuestionAnalysis, method="function_calling")
    listed = "\n".join(f"- {t}" for t in relation_types[:MAX_LISTED_TYPES]) or "(none)"
    result = structured.invoke(
        fill("question_analysis", question=question, types=listed),
        config={"callbacks": callbacks},
    )
    fields = _fields(result, QuestionAnalysis)
    return (
        string_list(fields.get("names"), "names"),
        string_list(fields.get("relation_types"), "relation types"),
    )


def llm_names(question: str, llm: BaseChatModel, callbacks: list[Any]) -> list[str]:
    """Names the model sees in the question; raises whatever the client raises, and
    UnexpectedReply for a reply of another shape."""
    structured = llm.with_structured_output(QuestionEntities, method="function_calling")
    result = structured.invoke(
        fill("question_entities", question=question), config={"callbacks": callbacks}
    )
    return string_list(_fields(result, QuestionEntities).get("names"), "names")


def resolve_name(mention: str, names: Sequence[dict[str, Any]]) -> ResolvedEntity | None:
    """Match one mention to a graph node: exact, normalised, contains, then fuzzy."""
    for row in names:
        if row["id"] == mention:
            return ResolvedEntity(mention, row["id"], "llm", 1.0)
    norm = normalize_name(mention)
    if not norm:
        return None
    for row in names:
        if row.get("norm") == norm:
            return ResolvedEntity(mention, row["id"], "llm", 1.0)
    if len(norm) >= MIN_CONTAINS_CHARS:
        contained = [
            r
            for r in names
            if r.get("norm")
            and len(r["norm"]) >= MIN_CONTAINS_CHARS
            and (r["norm"] in norm or norm in r["norm"])
        ]
        if contained:
            best = min(contained, key=lambda r: abs(len(r["norm"]) - len(norm)))
            return ResolvedEntity(mention, best["id"], "fuzzy", 0.9)
    choices = {r["id"]: r.get("norm") or "" for r in names}
    match = process.extractOne(norm, choices, scorer=fuzz.ratio, score_cutoff=FUZZY_THRESHOLD)
    if match:
        return ResolvedEntity(mention, match[2], "fuzzy", float(match[1]) / 100)
    return None


def dictionary_match(question: str, names: Sequence[dict[str, Any]]) -> list[ResolvedEntity]:
    """Graph node names that occur literally (after normalisation) in the question.

    A name contained in a longer matched name at the same place is dropped (鬼 inside 鬼ヶ島).
    """
    text = normalize_name(question)
    spans: list[tuple[int, int, str]] = []
    for row in names:
        norm = row.get("norm") or ""
        if not norm:
            continue
        start = text.find(norm)
        while start != -1:
            spans.append((start, start + len(norm), row["id"]))
            start = text.find(norm, start + 1)
    spans.sort(key=lambda s: (-(s[1] - s[0]), s[0]))
    taken: list[tuple[int, int]] = []
    found: dict[str, ResolvedEntity] = {}
    for start, end, node_id in spans:
        if any(start >= a and end <= b for a, b in taken):
            continue
        taken.append((start, end))
        found.setdefault(node_id, ResolvedEntity(text[start:end], node_id, "dictionary", 1.0))
    return sorted(found.values(), key=lambda e: text.find(normalize_name(e.mention)))


@dataclass
class EntityFinding:
    entities: list[ResolvedEntity]
    warnings: list[str] = field(default_factory=list)
    relation_types: list[str] | None = None
    """The model's relation-type pick when it was asked for one (None: not asked or failed)."""


def find_entities(
    question: str,
    names: Sequence[dict[str, Any]],
    llm: BaseChatModel | None,
    callbacks: list[Any],
    *,
    relation_types: Sequence[str] | None = None,
) -> EntityFinding:
    """Start nodes for a question. With `relation_types`, the same model call also picks the
    types that fit the question (Phase 3), so no second call is needed."""
    finding = EntityFinding([])
    resolved: dict[str, ResolvedEntity] = {}
    if llm is not None:
        mentions: list[str] = []
        try:
            if relation_types is not None:
                mentions, finding.relation_types = analyse_question(
                    question, relation_types, llm, callbacks
                )
            else:
                mentions = llm_names(question, llm, callbacks)
        except Exception as exc:  # noqa: BLE001 - any model fault falls back to the dictionary
            finding.warnings.append(
                f"entity extraction by the model failed ({type(exc).__name__}: {exc})"[:300]
                + "; used dictionary matching only"
            )
        for mention in mentions:
            match = resolve_name(mention, names)
            if match and match.node_id not in resolved:
                resolved[match.node_id] = match
    for match in dictionary_match(question, names):
        resolved.setdefault(match.node_id, match)
    finding.entities = list(resolved.values())
    return finding
