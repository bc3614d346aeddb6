"""What the engine is handed: `QAOptions`, one question's options (`QAOptions.from_settings`:
the one place settings become options), and `QAParts`, the stages a question goes through
(built by storygraph.qa.pipeline.factory.build_engine).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from storygraph.qa.generation.answer import Answerer
from storygraph.qa.generation.answer_choice import ChoiceAnswerer
from storygraph.qa.generation.answer_crosslang import SourcesLanguageAnswer
from storygraph.qa.question.analysis import QuestionAnalysis, QuestionReader
from storygraph.qa.retrieval.context import ContextBuilder
from storygraph.qa.retrieval.retrieval import DEFAULT_MODE, Retrieval, Retriever
from storygraph.qa.retrieval.scoring import RerankResult, Scorer
from storygraph.qa.verify import Verifier
from storygraph.qa.verify.gate import VerifyMode
from storygraph.qa.verify.premise import PremiseChecker
from storygraph.qa.verify.self_check import SelfCheck
from storygraph.settings import Settings
from storygraph.store.reading import EVERYTHING, Reading


@dataclass(frozen=True)
class QAOptions:
    mode: str = DEFAULT_MODE
    top_k: int = 15
    min_score: float = 1.0
    strategy: str = "auto"
    no_llm: bool = False
    small_model_budget: bool = False
    """With no model: keep the facts and read the sources as the small embedded model would
    (`SMALL_TOP_K` facts, `SourceBudget.small_model`), so an evaluation without the model
    measures the evidence that model would read (`eval-e2e --no-llm`); False: every source."""
    sentence_sources: int = 5
    """Story sentences from sentence search the answer reads beside the facts' (0: none)."""
    choose_names: bool = False
    """The small embedded model answers a who / where question by choosing a graph name (off
    by default: measured worse than its written answers, docs/ISSUES.md#chosen-names)."""
    compose_answer: bool = True
    """False: skip the model's answer (the eval measures retrieval); the facts answer is given."""
    stories: tuple[str, ...] = ()
    """The document ids a question may be answered from (empty: every story; qa/scope/scope.py)."""
    translation: str = "dictionary"
    """How a question in another language than its stories is brought into theirs:
    "dictionary", "model", "dictionary+model" or "off" (storygraph.qa.question.translation)."""
    crosslang_answer: str = "sources"
    """What language the small model answers such a question in: "sources" (the stories', shown
    in the question's with the stories' words in brackets) or "question" (its own);
    storygraph.qa.generation.answer_crosslang."""
    deadline_s: float = 60.0
    """Seconds an answer may take: past them, the engine stops at the end of the stage that
    ran over and shows what was found so far, with a warning (storygraph.qa.pipeline.deadline)."""
    verify: VerifyMode = "gate"
    """What the verifier's confidence does to the model's answer: "gate" or "label"
    (storygraph.qa.verify.gate)."""
    until: int | None = None
    """The last chapter the reader has read (None: all of it): retrieval, sentence search and
    so the sources and citations stop there (storygraph.store.reading)."""

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
            translation=settings.question_translation,
            crosslang_answer=settings.crosslang_answer,
            deadline_s=settings.answer_deadline_s,
            verify=settings.verify,
        )
        given = {k: v for k, v in overrides.items() if v is not None}
        return replace(options, **given)


@dataclass(frozen=True)
class QAParts:
    """The stages one question goes through (built by storygraph.qa.pipeline.factory)."""

    reader: QuestionReader
    retriever: Retriever
    scorer: Scorer
    context: ContextBuilder
    answerer: Answerer
    """Writes the answer. One that calls no model (`FactsAnswerer`) is not called: the answer
    step writes the facts' answer itself (`write`)."""
    top_k: int = 15
    min_score: float = 1.0
    chooser: ChoiceAnswerer | None = None
    """Answers a who / where question by choosing a name, where it fits
    (storygraph.qa.generation.answer_choice)."""
    no_model: bool = False
    """No model in these parts (nothing can call one)."""
    fitting_only: bool = False
    """The kept facts are the answer itself (no model), so the rerank step keeps the ones whose
    relation the question's words name, when there are such facts
    (storygraph.qa.retrieval.scoring.keep_fitting). False with a model, also when it writes no
    answer (`compose_answer=False`: the evaluation measures retrieval as the model would get
    it), and with no model reading as the small one (`QAOptions.small_model_budget`)."""
    premise: PremiseChecker | None = None
    """Tells whether the story tells the question's act (storygraph.qa.verify.premise), read
    on the written answer before the verifier; None: not checked."""
    stories_named: Callable[[], dict[str, str]] | None = None
    """The stories' names by document id, for the head lines of a per-story answer."""
    warnings: tuple[str, ...] = ()
    """Fallbacks these parts run on, named in every answer's warnings (no sentence encoder:
    storygraph.text.embeddings.NO_EMBEDDER)."""
    across: SourcesLanguageAnswer | None = None
    """A question asked across languages is answered in its sources' language and shown in
    its own (storygraph.qa.generation.answer_crosslang); None: answered in the question's
    language."""
    verifier: Verifier | None = None
    """Judges the model's written answer (storygraph.qa.verify); None (no model): the answer
    is "not checked"."""
    verify_mode: VerifyMode = "gate"
    """What the verifier's verdict does to the answer shown (storygraph.qa.verify.gate)."""
    self_check: SelfCheck | None = None
    """Asks the model whether the sentences its answer cites state it (a signal of the
    verifier: storygraph.qa.verify.self_check); None: its calibration does not read it."""
    reading: Reading = EVERYTHING
    """How far the reader has read (storygraph.store.reading), read once for the question: the
    retriever and the context hold it; the answer's decline says so."""

    def rank(
        self, analysis: QuestionAnalysis, found: Retrieval, callbacks: list[Any]
    ) -> RerankResult:
        """The scorer on the retrieved candidates, with their priors (the kept ones marked)."""
        return self.scorer.score(
            analysis,
            found.facts,
            prior=found.priors(),
            top_k=self.top_k,
            min_score=self.min_score,
            callbacks=callbacks,
        )


PartsFor = Callable[["QAOptions"], QAParts]


def names_read_once(parts: QAParts) -> QAParts:
    """`parts` for one question, the stories' names read from the store at most once: the
    undecided scope, its per-story answer and the unsearched-library warning each need them."""
    if parts.stories_named is None:
        return parts
    return replace(parts, stories_named=cache(parts.stories_named))
