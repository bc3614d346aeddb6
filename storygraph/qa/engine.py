"""Question answering: analysis → retrieval → scoring → answer, with a full trace (design §5).

`QAEngine` composes five narrow, injected parts, in the style of neo4j-graphrag-python: an
`EntityFinder` (storygraph.qa.entities), the mode's retrieval (storygraph.qa.retrieval), a `Scorer`
(storygraph.qa.scoring), a `PassageFinder` (storygraph.qa.passages: story sentences close to the
question, sources beside the kept facts' own) and an `Answerer` (storygraph.qa.answer).
`build_engine` picks them, in one place, from what the model can do:

- capable model (OpenAI, vLLM, …): the model lists the names and picks relation types, scores
  the candidates in one batched call and writes the answer, streamed: 3 calls;
- the small embedded model: names by dictionary, transliteration, word match and embeddings;
  the fast scorer (relation words, evidence terms, embeddings); one streamed answer from a
  compact prompt: 1 call;
- no model (`--no-llm`): as the small model, and the top facts as the answer: 0 calls.

`QAOptions.from_settings` turns the settings into options, once, for the app, the CLI and the
evaluation alike.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from langchain_core.language_models import BaseChatModel

from storygraph.errors import error_text
from storygraph.llm.factory import ModelInfo
from storygraph.llm.usage import UsageCounter, usage_delta
from storygraph.models import CLOSEST_SHOWN, Answer, Citation, Fact, TraceStep, Usage
from storygraph.qa.analysis import QuestionAnalysis, analyse
from storygraph.qa.answer import (
    SMALL_MAX_SOURCES,
    UNKNOWN,
    Answerer,
    FactsAnswerer,
    ModelAnswerer,
    TokenFn,
    build_citations,
    copied_example,
    echoed_name,
    facts_answer,
    says_unknown,
    sentence_line,
    unsupported_names,
    with_passages,
)
from storygraph.qa.answer_choice import ChoiceAnswerer
from storygraph.qa.entities import EntityFinder, LocalEntityFinder, ModelEntityFinder
from storygraph.qa.passages import Passage, PassageFinder, SentenceSearch
from storygraph.qa.retrieval import DEFAULT_MODE, parse_mode, retrieve
from storygraph.qa.scoring import FastScorer, ModelScorer, Scorer, rank_without_model
from storygraph.settings import Settings
from storygraph.store import GraphStore
from storygraph.store.story_time import in_story_order
from storygraph.text.embeddings import NO_EMBEDDER, Embedder, default_embedder
from storygraph.text.language import detect_language

SMALL_TOP_K = 4
"""Facts the small model's answer keeps: its prompt shows at most this many sources anyway."""


@dataclass(frozen=True)
class QAOptions:
    mode: str = DEFAULT_MODE
    top_k: int = 15
    min_score: float = 1.0
    strategy: str = "auto"
    no_llm: bool = False
    sentence_sources: int = 5
    """Story sentences from sentence search the answer reads beside the facts' (0: none)."""
    choose_names: bool = False
    """The small embedded model answers a who / where question by choosing a graph name (off
    by default: measured worse than its written answers, docs/ISSUES.md §18.4)."""
    compose_answer: bool = True
    """False: skip the model's answer (the eval measures retrieval); the facts answer is given."""

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> QAOptions:
        """The one place settings become options (the chat, the CLI and the evals use it)."""
        options = cls(
            mode=settings.retrieval_mode,
            top_k=settings.rerank_top_k,
            min_score=settings.rerank_min_score,
            strategy=settings.rerank_strategy,
            no_llm=settings.no_llm,
            sentence_sources=settings.sentence_sources,
            choose_names=settings.answer_choice,
        )
        given = {k: v for k, v in overrides.items() if v is not None}
        return replace(options, **given)


@dataclass
class QAParts:
    """The engine's stages for one question (chosen by `QAEngine.parts`)."""

    finder: EntityFinder
    scorer: Scorer
    answerer: Answerer
    llm: BaseChatModel | None
    top_k: int
    passages: PassageFinder
    fact_slots: int | None = None
    """Fact sources placed before the sentence-search ones (None: all of them)."""
    chooser: ChoiceAnswerer | None = None
    """Answers a who / where question by choosing a name (storygraph.qa.answer_choice)."""


class QAEngine:
    """Answers questions over a GraphStore with an optional chat model."""

    def __init__(
        self,
        store: GraphStore,
        llm: BaseChatModel | None,
        info: ModelInfo,
        *,
        embedder: Embedder | None = None,
    ) -> None:
        self.store = store
        self.llm = llm
        self.info = info
        self.embedder = embedder

    def parts(self, options: QAOptions) -> QAParts:
        """Pick the stages (see the module table) for these options."""
        llm = None if options.no_llm else self.llm
        local = LocalEntityFinder(self.embedder)
        passages = SentenceSearch(self.store, self.embedder)
        if llm is None:
            return QAParts(
                local, FastScorer(self.embedder), FactsAnswerer(), None, options.top_k, passages
            )
        if self.info.capable:
            explicit = options.strategy in ("batched", "per_fact")
            strategy = options.strategy if explicit else "batched"
            return QAParts(
                ModelEntityFinder(llm),
                ModelScorer(llm, strategy),  # type: ignore[arg-type]
                ModelAnswerer(llm),
                llm,
                options.top_k,
                passages,
            )
        scorer: Scorer = FastScorer(self.embedder)
        if options.strategy in ("batched", "per_fact"):  # asked for explicitly: the model scores
            scorer = ModelScorer(llm, options.strategy)  # type: ignore[arg-type]
        # The small model reads at most SMALL_MAX_SOURCES sources (fewer when they are long,
        # `small_sources`): the sentence-search ones come after the best facts' own sentences,
        # which keep the first SMALL_MAX_SOURCES - `sentence_sources` places.
        slots = max(0, SMALL_MAX_SOURCES - options.sentence_sources)
        chooser = None
        if self.info.grammar_constrained:  # the server holds the model to the names
            chooser = ChoiceAnswerer(llm, lambda: [str(r["id"]) for r in self.store.entity_names()])
        return QAParts(
            local,
            scorer,
            ModelAnswerer(llm, compact=True),
            None,
            min(options.top_k, SMALL_TOP_K),
            passages,
            slots,
            chooser,
        )

    def warm(self, language: str, options: QAOptions) -> bool:
        """Have the model read the answer's fixed prompt prefix for `language` ahead of the
        first question (`Answerer.warm`); False when these options' answerer has none."""
        return self.parts(options).answerer.warm(language)

    def ask(
        self,
        question: str,
        options: QAOptions = QAOptions(),
        *,
        start_entities: Sequence[str] | None = None,
        on_token: TokenFn | None = None,
    ) -> Answer:
        question = question.strip()
        parts = self.parts(options)
        spec = parse_mode(options.mode)
        counter = UsageCounter()
        callbacks: list[Any] = [counter]
        answer = Answer(question=question, answer="", mode=options.mode)
        if self.embedder is None:  # a named fallback (storygraph.text.embeddings)
            answer.warnings.append(NO_EMBEDDER)

        def step(name: str, started: float, before: Usage, **detail: Any) -> None:
            answer.steps.append(
                TraceStep(
                    name,
                    time.perf_counter() - started,
                    detail,
                    usage_delta(before, counter.snapshot()),
                )
            )

        # 1. the analysis: start entities (and the model's relation-type pick), question type
        t0, u0 = time.perf_counter(), counter.snapshot()
        names = self.store.entity_names()
        # A capable model's analysis call also picks the relation types (3 calls a question);
        # retrieval then makes no pick call of its own, even when that analysis failed.
        wants_pick = (
            spec.reltype and isinstance(parts.finder, ModelEntityFinder) and not start_entities
        )
        types = [t for t, _ in self.store.relation_types()] if wants_pick else None
        analysis = analyse(
            question,
            names,
            parts.finder,
            callbacks,
            relation_types=types,
            start_entities=start_entities,
        )
        answer.entities = list(analysis.entities)
        answer.warnings.extend(analysis.warnings)
        step(
            "entities",
            t0,
            u0,
            found=analysis.ids,
            how={e.node_id: e.source for e in analysis.entities},
            graph_names=len(names),
            relation_type_pick=list(analysis.relation_pick)
            if analysis.relation_pick is not None
            else None,
        )

        # 2. retrieval
        t0, u0 = time.perf_counter(), counter.snapshot()
        pick_llm = None if wants_pick else parts.llm
        found = retrieve(self.store, options.mode, analysis, llm=pick_llm, callbacks=callbacks)
        answer.mode = found.mode
        answer.cypher = found.cypher
        answer.warnings.extend(found.notes)
        step(
            "retrieval",
            t0,
            u0,
            candidates=len(found.facts),
            mode=found.mode,
            question_type=found.question_type.describe() if found.question_type else None,
            relation_types=found.relation_types.describe() if found.relation_types else None,
            added=[f.text() for f in found.added],
            filtered_out=[f.text() for f in found.filtered_out],
            queries=[label for label, _ in found.queries],
        )

        # 3. scoring (or plain retrieval order when the mode has no +rerank)
        t0, u0 = time.perf_counter(), counter.snapshot()
        if found.rerank:
            ranked = parts.scorer.score(
                analysis,
                found.facts,
                prior=found.priors(),
                top_k=parts.top_k,
                min_score=options.min_score,
                callbacks=callbacks,
            )
        else:
            ranked = rank_without_model(found.facts, top_k=parts.top_k, prior=found.priors())
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
            top_k=parts.top_k,
            min_score=options.min_score,
        )

        # 4. sentence search: story sentences close to the question, sources beside the facts'
        t0, u0 = time.perf_counter(), counter.snapshot()
        passages: list[Passage] = []
        if options.sentence_sources > 0:
            passages = parts.passages.find(analysis, options.sentence_sources)
        step(
            "sentences",
            t0,
            u0,
            method=parts.passages.name,
            found=[
                {
                    "text": p.text,
                    "score": p.score,
                    "bm25": p.lexical,
                    "cosine": p.semantic,
                    "found_by": p.found_by,
                }
                for p in passages
            ],
        )

        # 5. the answer
        t0, u0 = time.perf_counter(), counter.snapshot()
        kept = answer.kept_facts
        if found.order is not None:
            # A before / after question: the sources go to the answer in story order.
            kept = in_story_order(kept)
        chunk_ids = [c for f in kept for c in f.chunk_ids]
        answer.citations = with_passages(
            build_citations(kept, self.store.chunks(chunk_ids)), passages, parts.fact_slots
        )
        method, read = self._compose(answer, analysis, parts, options, callbacks, on_token)
        unsupported = (
            unsupported_names(
                answer.answer,
                [str(r["id"]) for r in names],
                kept,
                answer.citations,
                question,
            )
            if method.startswith("llm")
            else []
        )
        if unsupported:
            answer.warnings.append(
                "the answer names what the kept facts and their sentences do not: "
                + ", ".join(unsupported)
            )
        step(
            "answer",
            t0,
            u0,
            method=method,
            citations=len(answer.citations),
            sources_read=read,
            unsupported_names=unsupported,
        )
        answer.usage = counter.snapshot()
        return answer

    def _compose(
        self,
        answer: Answer,
        analysis: QuestionAnalysis,
        parts: QAParts,
        options: QAOptions,
        callbacks: list[Any],
        on_token: TokenFn | None,
    ) -> tuple[str, int]:
        """Fill `answer.answer`; return how it was written and how many of the citations (the
        first ones) it was written from."""
        kept = answer.kept_facts
        if not kept and not answer.citations:
            answer.answer = _nothing_found(analysis, answer.facts)
            if on_token is not None:
                on_token(answer.answer)
            return "nothing found", 0
        answerer: Answerer = parts.answerer
        if (
            parts.chooser is not None
            and options.choose_names
            and parts.chooser.fits(analysis, answer.citations)
        ):
            answerer = parts.chooser
        if answerer.calls_model and options.compose_answer:
            shown = answerer.read(answer.citations)
            read = len(shown)
            try:
                answer.answer = answerer.answer(
                    analysis, kept, answer.citations, callbacks, on_token
                )
                got = detect_language(answer.answer)
                if analysis.language != got:
                    answer.warnings.append(
                        f"the model answered in {got}, not in the question's language "
                        f"({analysis.language})"
                    )
                language = "ja" if analysis.language == "ja" else "en"
                rejected = _not_an_answer(answer.answer, analysis, answerer, shown, language)
                if rejected is not None:
                    answer.warnings.append(f"{rejected}: treated as no answer")
                    answer.answer = UNKNOWN[language]
                sentences = [c for c in answer.citations if c.kind != "graph"]
                if says_unknown(answer.answer) and sentences:
                    # The model found no answer in the sentences: say so, and show the closest
                    # one (the first source: the best fact's, measured better than sentence
                    # search's best) rather than leave the user with nothing.
                    best = sentences[0]
                    extra = f" {CLOSEST_LEAD[language]}「{best.text}」[{best.number}]"
                    answer.answer += extra
                    if on_token is not None:
                        on_token(extra)
                    return f"{answerer.name}, {CLOSEST_SHOWN}", read
                return answerer.name, read
            except Exception as exc:  # noqa: BLE001 - a model fault still yields an answer
                answer.warnings.append(
                    f"the model could not answer ({error_text(exc)}); showing the facts instead"
                )
        if kept:
            answer.answer = facts_answer(analysis.question, kept, answer.citations)
        else:
            # No fact, only sentence-search sources: say so, and point at those sentences.
            language = "ja" if analysis.language == "ja" else "en"
            lines = sentence_line(answer.citations, japanese=language == "ja")
            answer.answer = "\n".join([_nothing_found(analysis, answer.facts), *lines])
        if on_token is not None:
            on_token(answer.answer)
        return "facts", len(answer.citations)


CLOSEST_LEAD = {"ja": "いちばん近い文：", "en": "The closest sentence is: "}


def _not_an_answer(
    text: str,
    analysis: QuestionAnalysis,
    answerer: Answerer,
    shown: Sequence[Citation],
    language: str,
) -> str | None:
    """Why the model's `text` is no answer to the question, or None: a worked example's answer
    that no sentence it read holds (the small model's prompt only; docs/ISSUES.md §33), or the
    very person a person question names (§36)."""
    if isinstance(answerer, ModelAnswerer) and answerer.compact:
        copied = copied_example(text, language, shown)
        if copied is not None:
            return (
                f"the model repeated a worked example's answer ({copied}), which no sentence "
                "it read holds"
            )
    echoed = echoed_name(text, analysis)
    if echoed is not None:
        return f"the model answered with {echoed}, whom the question itself names"
    return None


def _nothing_found(analysis: QuestionAnalysis, candidates: Sequence[Fact]) -> str:
    """No kept fact: say so, and show the closest evidence sentence when there is one."""
    language = "ja" if analysis.language == "ja" else "en"
    if not analysis.entities:
        return (
            "この質問の人物や物がグラフに見つかりませんでした。"
            if language == "ja"
            else "I could not find who or what this question is about in the graph."
        )
    closest = next((f.evidence for f in candidates if f.evidence), "")
    if not closest:
        return UNKNOWN[language]
    return f"{UNKNOWN[language]} {CLOSEST_LEAD[language]}{closest}"


def build_engine(store: GraphStore, llm: BaseChatModel | None, info: ModelInfo) -> QAEngine:
    """The engine the app and the CLI use: the process-wide embedder when it is installed."""
    return QAEngine(store, llm, info, embedder=default_embedder())
