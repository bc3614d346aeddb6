"""Which parts answer a question: decided here, once, from what the model can do
(`ModelInfo`) and the question's options (`QAOptions`).

- capable model (OpenAI, vLLM, …): the model lists the names (and, in a +reltype mode, picks
  the relation types in the same call), scores the candidates in one batched call (per fact
  when `strategy` asks for it) and writes the answer from every source, streamed: 3 calls;
- the small embedded model: names by dictionary, transliteration, words and embeddings; the
  fast scorer (the model only when `strategy` asks for it); at most `SMALL_TOP_K` facts; one
  streamed answer from a compact prompt over the sources `SourceBudget.small_model` leaves: 1
  call;
- no model (`no_llm`): as the small model, every source, and the top facts as the answer: 0
  calls (with `small_model_budget`, the small model's facts and sources: what it would read).

A question in another language than every story in its scope is brought into theirs before
names and sentences are looked up (`QAOptions.translation`, storygraph.qa.question.translation): by
JMdict, no call (the default); by the model, one call more (the small model: 2 calls); or by
JMdict and the model only for a word it lacks. A mode without +rerank gets `RetrievalOrder`
whatever the model. `compose_answer=False` (the
evaluation measuring retrieval) answers from the facts. `choose_names` gives the small model a
`ChoiceAnswerer` where its server enforces grammars (`ModelInfo.grammar_constrained`).

`build_engine` returns an engine that asks `PartsFactory.parts` for each question's options;
tests and the evaluation inject a stage (`finder=`, `scorer=`, `answerer=`, `passages=`), or
hand `QAEngine` a `QAParts` of their own.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from storygraph.llm.factory import ModelInfo
from storygraph.qa.generation.answer import Answerer, FactsAnswerer, ModelAnswerer
from storygraph.qa.generation.answer_choice import ChoiceAnswerer
from storygraph.qa.generation.answer_crosslang import SourcesLanguageAnswer, sources_language_answer
from storygraph.qa.pipeline.engine import QAEngine
from storygraph.qa.pipeline.parts import QAOptions, QAParts
from storygraph.qa.question.analysis import QuestionReader
from storygraph.qa.question.checked import StructureReader
from storygraph.qa.question.entities import EntityFinder, LocalEntityFinder, ModelEntityFinder
from storygraph.qa.question.translation import translator_for
from storygraph.qa.retrieval.context import ContextBuilder, SourceBudget
from storygraph.qa.retrieval.passages import PassageFinder, SentenceSearch
from storygraph.qa.retrieval.retrieval import parse_mode, retriever_for
from storygraph.qa.retrieval.scoring import FastScorer, ModelScorer, RetrievalOrder, Scorer
from storygraph.qa.verify import load_verifier
from storygraph.qa.verify.premise import GraphPremiseChecker
from storygraph.qa.verify.self_check import ModelSelfCheck
from storygraph.qa.verify.support_reading import FrameReader
from storygraph.store import GraphStore
from storygraph.store.reading import Reading, reading_for
from storygraph.text.embeddings import NO_EMBEDDER, Embedder, default_embedder
from storygraph.text.jmdict import open_dictionary

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

SMALL_TOP_K = 4
"""Facts the small model's answer keeps: its prompt shows at most this many sources anyway."""
EXPLICIT_STRATEGIES = ("batched", "per_fact")

DefaultEmbedder = Literal["default"]


@dataclass
class PartsFactory:
    """Builds the parts for a question's options (see the module table)."""

    store: GraphStore
    llm: BaseChatModel | None
    info: ModelInfo
    embedder: Embedder | None = None
    finder: EntityFinder | None = None
    scorer: Scorer | None = None
    """Used by the modes with +rerank."""
    answerer: Answerer | None = None
    passages: PassageFinder | None = None
    frames: FrameReader | None = None
    """The parser's frame reader for the premise check (storygraph.services gives it; None:
    the check reads the facts only)."""
    questions: StructureReader | None = None
    """The parser's reading of a question's structure for the premise check (storygraph.
    services gives it; None: the check reads the question's words as the analysis did)."""
    _premise: GraphPremiseChecker | None = field(
        default=None, init=False, repr=False, compare=False
    )
    _premise_lock: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False, compare=False
    )

    def parts(self, options: QAOptions) -> QAParts:
        spec = parse_mode(options.mode)  # an unknown mode: ValueError before any work
        llm = None if options.no_llm else self.llm
        capable = llm is not None and self.info.capable
        small = llm is not None and not self.info.capable
        finder = self.finder or (
            ModelEntityFinder(llm)
            if llm is not None and capable
            else LocalEntityFinder(self.embedder)
        )
        picks = isinstance(finder, ModelEntityFinder)  # its call can pick relation types too
        # the small model's budget; with no model too when asked (QAOptions.small_model_budget)
        budgeted = small or (llm is None and options.small_model_budget)
        budget = SourceBudget.small_model(options.sentence_sources) if budgeted else None
        reading = reading_for(self.store, options.until, options.stories)  # once a question
        verifier = load_verifier("embedded" if small else "other") if llm is not None else None
        return QAParts(
            reader=QuestionReader(
                self.store,
                finder,
                pick_types=spec.reltype and picks,
                stories=options.stories,
                translator=translator_for(options.translation, llm),
                reading=reading,
            ),
            retriever=retriever_for(self.store, spec.name, llm if capable else None, reading),
            scorer=self._scorer(llm, capable, options) if spec.rerank else RetrievalOrder(),
            context=ContextBuilder(
                self.store,
                self.passages or SentenceSearch(self.store, self.embedder),
                sentence_sources=options.sentence_sources,
                reading=reading,
                budget=budget,
            ),
            answerer=self._answerer(llm, capable, options),
            top_k=min(options.top_k, SMALL_TOP_K) if budgeted else options.top_k,
            min_score=options.min_score,
            chooser=self._chooser(llm, options, reading) if small else None,
            no_model=llm is None,
            fitting_only=llm is None and not budgeted,
            premise=self.premise_checker(),
            stories_named=self._stories_named,
            # named fallbacks (storygraph.text.embeddings; the reading position's)
            warnings=(*((NO_EMBEDDER,) if self.embedder is None else ()), *reading.warnings),
            across=self._across(llm, options) if small else None,
            verifier=verifier,
            verify_mode=options.verify,
            self_check=(
                ModelSelfCheck(llm)
                if llm is not None and verifier is not None and verifier.reads("self_check")
                else None
            ),
            reading=reading,
        )

    def premise_checker(self) -> GraphPremiseChecker:
        """The premise check (storygraph.qa.verify.premise), built once: the frames it has read
        of a sentence are kept for the next answer."""
        with self._premise_lock:
            if self._premise is None:
                self._premise = GraphPremiseChecker(self.frames, self._chunk_text, self.questions)
            return self._premise

    def _chunk_text(self, chunk_id: str) -> str:
        """A chunk's text (the story around a source the premise check reads)."""
        return str(self.store.chunks([chunk_id]).get(chunk_id, {}).get("text") or "")

    def _stories_named(self) -> dict[str, str]:
        return {d.id: d.name for d in self.store.list_documents()}

    def _scorer(self, llm: BaseChatModel | None, capable: bool, options: QAOptions) -> Scorer:
        if self.scorer is not None:
            return self.scorer
        explicit = options.strategy in EXPLICIT_STRATEGIES
        if llm is not None and (capable or explicit):
            # A capable model scores in one batched call unless asked otherwise; the small one
            # only when asked (one call per fact cost it most of a minute a question).
            return ModelScorer(llm, options.strategy if explicit else "batched")  # type: ignore[arg-type]
        return FastScorer(self.embedder)

    def _answerer(self, llm: BaseChatModel | None, capable: bool, options: QAOptions) -> Answerer:
        if self.answerer is not None:
            return self.answerer
        if llm is None or not options.compose_answer:
            return FactsAnswerer()
        return ModelAnswerer(llm, compact=not capable)

    def _across(
        self, llm: BaseChatModel | None, options: QAOptions
    ) -> SourcesLanguageAnswer | None:
        """The small model answers a question asked across languages in its sources' language
        (`crosslang_answer` "sources", storygraph.qa.generation.answer_crosslang) or in the
        question's
        ("question")."""
        if llm is None or options.crosslang_answer != "sources" or self.answerer is not None:
            return None
        return sources_language_answer(open_dictionary())

    def _chooser(
        self, llm: BaseChatModel | None, options: QAOptions, reading: Reading
    ) -> ChoiceAnswerer | None:
        """The small model chooses a name only when asked, on a server that holds it to the
        names (of the entities read: storygraph.store.reading); never when the answer is not
        composed."""
        wanted = options.choose_names and options.compose_answer and self.answerer is None
        if llm is None or not wanted or not self.info.grammar_constrained:
            return None
        store = self.store
        return ChoiceAnswerer(
            llm, lambda: [str(r["id"]) for r in reading.names(store.entity_names())]
        )


def build_engine(
    store: GraphStore,
    llm: BaseChatModel | None,
    info: ModelInfo,
    *,
    embedder: Embedder | DefaultEmbedder | None = "default",
    finder: EntityFinder | None = None,
    scorer: Scorer | None = None,
    answerer: Answerer | None = None,
    passages: PassageFinder | None = None,
    frames: FrameReader | None = None,
    questions: StructureReader | None = None,
) -> QAEngine:
    """The engine the app, the CLI and the evaluation use: parts per question's options (module
    table); `embedder` "default" is the process-wide one when it is installed."""
    chosen = default_embedder() if embedder == "default" else embedder
    factory = PartsFactory(
        store, llm, info, chosen, finder, scorer, answerer, passages, frames, questions
    )
    return QAEngine(factory.parts)
