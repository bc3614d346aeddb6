"""Candidate relations for the start nodes (design §5.2), and how the modes combine.

A mode is a base retrieval plus optional stages joined by '+', always run in this order:

- base (exactly one): `onehop` (every relation touching a start node, both directions, one hop,
  real direction kept), or the founding memo's earlier phases `directed2` / `undirected2`, kept
  selectable so their leaks can be shown (docs/ISSUES.md#onehop-retrieval);
- `qtype` (Phase 2): detect the question type (storygraph.qa.question.question_type), add the
expansion the
  type needs
  (with-whom: co-members through the same relation type into the same node) and give every
  candidate a direction / slot adjustment used in ranking;
- `reltype` (Phase 3): keep only relation types fitting the question
  (storygraph.qa.retrieval.relation_types), never
  all of them dropped; only a model's pick filters, words alone only rank;
- `rerank` (Phase 4): score each candidate 0-10 with the model (lexical scorer without one) and
  keep the top k.

A mode without `rerank` does no scoring: candidates keep retrieval order (after the question-type
adjustment, if any) and the first top k are kept. So `onehop` alone is the memo's Phase 1 as it
was, and `onehop+rerank` is what the pipeline did before Phases 2 and 3.

A `Retriever` is the stage: `search(analysis, callbacks) -> Retrieval`. `retriever_for` turns a
mode string into one (`ModeRetriever`: its base query and its stages); the engine's factory
(storygraph.qa.pipeline.factory) picks it, and the scorer (`+rerank` or retrieval order), per mode.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from storygraph import cypher as q
from storygraph.models import Fact
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.question_type import QuestionType
from storygraph.qa.question.relation_words import type_stems
from storygraph.qa.retrieval.fact_sentences import nearest_sentence
from storygraph.qa.retrieval.modes import (  # noqa: F401 (re-exported: callers name the modes from here)
    BASE_MODES,
    DEFAULT_MODE,
    ModeSpec,
    available_modes,
    canonical_mode,
    parse_mode,
)
from storygraph.qa.retrieval.order import OrderedFacts, order_facts, order_priors
from storygraph.qa.retrieval.relation_types import (
    RelTypeSelection,
    apply_selection,
    select_relation_types,
)
from storygraph.qa.retrieval.type_priors import (
    EXPANSION_BONUS,
    expansion_wanted,
    fact_prior,
    speech_prior,
)
from storygraph.store import GraphStore
from storygraph.store.graph_store import RETRIEVAL_QUERIES
from storygraph.store.reading import EVERYTHING, Reading

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

FactKey = tuple[str, str, str]


@dataclass
class Retrieval:
    facts: list[Fact]
    cypher: str
    notes: list[str] = field(default_factory=list)
    mode: str = ""
    rerank: bool = False
    question_type: QuestionType | None = None
    relation_types: RelTypeSelection | None = None
    added: list[Fact] = field(default_factory=list)
    """Facts the question-type expansion added (co-members)."""
    filtered_out: list[Fact] = field(default_factory=list)
    """Candidates the relation-type filter removed."""
    prior: dict[FactKey, float] = field(default_factory=dict)
    """Question-type adjustment per fact, added to its score when ranking."""
    queries: list[tuple[str, str]] = field(default_factory=list)
    """(what for, Cypher) of every query this retrieval ran, in order."""
    order: OrderedFacts | None = None
    """Order questions (before / after): the anchor fact and the facts on the asked side."""

    def priors(self) -> list[float]:
        return [self.prior.get(f.key, 0.0) for f in self.facts]


def _joined(queries: Sequence[tuple[str, str]]) -> str:
    if len(queries) == 1:
        return queries[0][1].strip()
    return "\n\n".join(f"// {label}\n{text.strip()}" for label, text in queries)


def _expansion_types(
    analysis: QuestionAnalysis, facts: Sequence[Fact], chosen: RelTypeSelection | None
) -> list[str]:
    """Relation types to find co-members through: the start nodes' outgoing types that fit the
    question (the relation-type pick, else its words), else all of them."""
    ids = analysis.ids
    outgoing = list(dict.fromkeys(f.type for f in facts if f.start in ids))
    if chosen is not None and chosen.filtered:
        fitting = [t for t in outgoing if t in set(chosen.types)]
        if fitting:
            return fitting
    fitting = [t for t in outgoing if type_stems(t) & analysis.related]
    return fitting or outgoing


class Retriever(Protocol):
    """Finds a question's candidate relations (see the module doc)."""

    mode: str

    def search(self, analysis: QuestionAnalysis, callbacks: list[Any]) -> Retrieval: ...


class ModeRetriever:
    """One mode: its base query (`onehop`, `directed2`, `undirected2`) and its stages.

    `llm` is used only by +reltype when the analysis holds no model pick and none was asked of
    the entity finder (a mode run with given start entities on a capable model); the small
    model path passes None.
    """

    def __init__(
        self,
        store: GraphStore,
        spec: ModeSpec,
        llm: BaseChatModel | None = None,
        reading: Reading = EVERYTHING,
    ):
        """`reading`: how far the reader has read (storygraph.store.reading): no fact stated only
        later is a candidate."""
        self.store = store
        self.spec = spec
        self.llm = llm
        self.mode = spec.name
        self.reading = reading

    def search(self, analysis: QuestionAnalysis, callbacks: list[Any]) -> Retrieval:
        spec, store = self.spec, self.store
        llm = None if analysis.relation_pick_asked else self.llm
        ids = analysis.ids
        queries = [(f"{spec.base} retrieval", RETRIEVAL_QUERIES[spec.base])]
        read = self.reading.chunks
        terms = analysis.terms
        facts = [
            nearest_sentence(f, terms)
            for f in store.retrieve(spec.base, ids, analysis.scope.keys, read)
        ]
        found = Retrieval(facts, "", mode=spec.name, rerank=spec.rerank)

        if spec.reltype:
            queries.append(("relation types in the graph", q.RELATION_TYPES))
            available = [t for t, _ in store.relation_types()]
            found.relation_types = select_relation_types(
                analysis.question,
                available,
                llm=None if analysis.relation_pick is not None else llm,
                callbacks=callbacks,
                names=ids,
                model_pick=analysis.relation_pick,
                stems=analysis.stems,
            )

        expansion: list[str] = []
        if spec.qtype:
            found.question_type = analysis.qtype
            if expansion_wanted(found.question_type) and ids:
                expansion = _expansion_types(analysis, facts, found.relation_types)
                if expansion:
                    label = f"co-members via {', '.join(expansion)}"
                    queries.append((label, q.RETRIEVE_CO_MEMBERS))
                    seen = {f.key for f in facts}
                    for member in store.co_members(ids, expansion, analysis.scope.keys, read):
                        fact = nearest_sentence(member, terms)
                        if fact.key not in seen:
                            seen.add(fact.key)
                            facts.append(fact)
                            found.added.append(fact)

        if found.relation_types is not None:
            facts, found.filtered_out, note = apply_selection(facts, found.relation_types)
            if note:
                found.notes.append(note)
            found.added = [f for f in found.added if f in facts]

        if found.question_type is not None and facts:
            names = sorted({n for f in facts for n in (f.start, f.end)})
            documents = analysis.scope.documents
            by_keys = q.ENTITY_TYPES_BY_KEYS if documents else q.ENTITY_TYPES_OF
            queries.append(("entity types (question-type slot fit)", by_keys))
            node_types = (
                store.entity_types_in(names, documents) if documents else store.entity_types(names)
            )
            added = {f.key for f in found.added}
            for fact in facts:
                value = fact_prior(found.question_type, fact.start, fact.end, ids, node_types)
                value += speech_prior(found.question_type, fact.type)
                if expansion and (
                    fact.key in added or (fact.type in expansion and fact.start in ids)
                ):
                    value += EXPANSION_BONUS
                found.prior[fact.key] = value
            if found.question_type.order:
                qt = found.question_type
                found.order = order_facts(facts, qt.order, qt.anchor_clause, ids)
                for key, value in order_priors(facts, found.order).items():
                    found.prior[key] = found.prior.get(key, 0.0) + value

        found.facts = facts
        found.queries = queries
        found.cypher = _joined(queries)
        return found


def retriever_for(
    store: GraphStore,
    mode: str,
    llm: BaseChatModel | None = None,
    reading: Reading = EVERYTHING,
) -> ModeRetriever:
    """The retriever a mode string selects (raises ValueError for an unknown mode)."""
    return ModeRetriever(store, parse_mode(mode), llm, reading)


def retrieve(
    store: GraphStore,
    mode: str,
    analysis: QuestionAnalysis,
    *,
    llm: BaseChatModel | None = None,
    callbacks: list[Any] | None = None,
) -> Retrieval:
    """A mode's candidates for an analysed question, in one call (tests, benchmarks)."""
    return retriever_for(store, mode, llm).search(analysis, callbacks or [])
