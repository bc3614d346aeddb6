"""Question answering: entities → retrieval → rerank → answer, with a full trace (design §5)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel

from storygraph.answer import build_citations, facts_answer, llm_answer
from storygraph.entities import find_entities
from storygraph.llm.factory import ModelInfo
from storygraph.llm.usage import UsageCounter, usage_delta
from storygraph.models import Answer, ResolvedEntity, TraceStep, Usage
from storygraph.rerank import Strategy, rank_without_model, rerank
from storygraph.retrieval import DEFAULT_MODE, parse_mode, retrieve
from storygraph.store import GraphStore
from storygraph.text.language import detect_language


@dataclass(frozen=True)
class QAOptions:
    mode: str = DEFAULT_MODE
    top_k: int = 15
    min_score: float = 1.0
    strategy: str = "auto"
    no_llm: bool = False
    compose_answer: bool = True
    """False: skip the model's answer (the eval measures retrieval); the facts answer is given."""


class QAEngine:
    """Answers questions over a GraphStore with an optional chat model."""

    def __init__(self, store: GraphStore, llm: BaseChatModel | None, info: ModelInfo) -> None:
        self.store = store
        self.llm = llm
        self.info = info

    def _strategy(self, requested: str) -> Strategy:
        if requested in ("batched", "per_fact"):
            return requested  # type: ignore[return-value]
        return "batched" if self.info.capable else "per_fact"

    def ask(
        self,
        question: str,
        options: QAOptions = QAOptions(),
        *,
        start_entities: Sequence[str] | None = None,
    ) -> Answer:
        question = question.strip()
        llm = None if options.no_llm else self.llm
        counter = UsageCounter()
        callbacks: list[Any] = [counter]
        answer = Answer(question=question, answer="", mode=options.mode)

        def step(name: str, started: float, before: Usage, **detail: Any) -> None:
            answer.steps.append(
                TraceStep(
                    name,
                    time.perf_counter() - started,
                    detail,
                    usage_delta(before, counter.snapshot()),
                )
            )

        # 1. entities
        t0, u0 = time.perf_counter(), counter.snapshot()
        names = self.store.entity_names()
        # With +reltype and a model, one call finds the names and picks the relation types.
        analysed = bool(parse_mode(options.mode).reltype and llm is not None and not start_entities)
        model_pick: list[str] | None = None
        if start_entities:
            answer.entities = [ResolvedEntity(n, n, "given") for n in start_entities]
        else:
            types = [t for t, _ in self.store.relation_types()] if analysed else None
            finding = find_entities(question, names, llm, callbacks, relation_types=types)
            answer.entities, model_pick = finding.entities, finding.relation_types
            answer.warnings.extend(finding.warnings)
        step(
            "entities",
            t0,
            u0,
            found=[e.node_id for e in answer.entities],
            how={e.node_id: e.source for e in answer.entities},
            graph_names=len(names),
            relation_type_pick=model_pick,
        )

        # 2. retrieval
        t0, u0 = time.perf_counter(), counter.snapshot()
        found = retrieve(
            self.store,
            options.mode,
            [e.node_id for e in answer.entities],
            question=question,
            llm=None if analysed else llm,  # analysed: the pick is made (or failed) already
            callbacks=callbacks,
            model_pick=model_pick,
        )
        answer.mode = found.mode
        answer.cypher = found.cypher
        answer.warnings.extend(found.notes)
        qtype = found.question_type
        reltypes = found.relation_types
        step(
            "retrieval",
            t0,
            u0,
            candidates=len(found.facts),
            mode=found.mode,
            question_type=qtype.describe() if qtype else None,
            relation_types=reltypes.describe() if reltypes else None,
            added=[f.text() for f in found.added],
            filtered_out=[f.text() for f in found.filtered_out],
            queries=[label for label, _ in found.queries],
        )

        # 3. rerank (or plain retrieval order when the mode has no +rerank)
        t0, u0 = time.perf_counter(), counter.snapshot()
        if found.rerank:
            ranked = rerank(
                question,
                found.facts,
                llm=llm,
                strategy=self._strategy(options.strategy),
                top_k=options.top_k,
                min_score=options.min_score,
                callbacks=callbacks,
                prior=found.priors(),
            )
        else:
            ranked = rank_without_model(found.facts, top_k=options.top_k, prior=found.priors())
        # Candidates the relation-type stage set aside stay in the trace, dropped, last.
        for fact in found.filtered_out:
            fact.kept = False
            fact.reason = "relation type does not fit the question"
        answer.facts = ranked.facts + list(found.filtered_out)
        answer.rerank_fell_back = ranked.fell_back
        if ranked.fell_back:
            answer.warnings.append(f"rerank fell back to the lexical scorer: {ranked.reason}")
        step(
            "rerank",
            t0,
            u0,
            method=ranked.method,
            kept=len(answer.kept_facts),
            fell_back=ranked.fell_back,
            top_k=options.top_k,
            min_score=options.min_score,
        )

        # 4. answer
        t0, u0 = time.perf_counter(), counter.snapshot()
        kept = answer.kept_facts
        chunk_ids = [c for f in kept for c in f.chunk_ids]
        answer.citations = build_citations(kept, self.store.chunks(chunk_ids))
        method = "facts"
        if llm is not None and kept and options.compose_answer:
            try:
                answer.answer = llm_answer(question, kept, answer.citations, llm, callbacks)
                method = "llm"
                asked, got = detect_language(question), detect_language(answer.answer)
                if asked != got:
                    answer.warnings.append(
                        f"the model answered in {got}, not in the question's language ({asked})"
                    )
            except Exception as exc:  # noqa: BLE001 - a model fault still yields an answer
                answer.warnings.append(
                    f"the model could not answer ({type(exc).__name__}); showing the facts instead"
                )
        if not answer.answer:
            answer.answer = facts_answer(question, kept, answer.citations)
        step("answer", t0, u0, method=method, citations=len(answer.citations))
        answer.usage = counter.snapshot()
        return answer
