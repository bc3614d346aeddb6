"""The engine's factory: which parts a question gets for what the model can do and for the
question's options (storygraph.qa.pipeline.factory), and stages injected by tests and the
evaluation.
Real store (embedded FalkorDB with the seed graph), real stages; only the model is scripted."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from storygraph.ingest.graph_io import import_graph, load_graph_file
from storygraph.llm.factory import ModelInfo
from storygraph.models import Fact
from storygraph.qa.generation.answer import FactsAnswerer, ModelAnswerer
from storygraph.qa.pipeline.engine import QAEngine
from storygraph.qa.pipeline.factory import SMALL_TOP_K, build_engine
from storygraph.qa.pipeline.parts import QAOptions, QAParts
from storygraph.qa.question.analysis import QuestionAnalysis, QuestionReader
from storygraph.qa.question.entities import LocalEntityFinder, ModelEntityFinder
from storygraph.qa.retrieval.context import SMALL_MAX_SOURCES, ContextBuilder, Sources
from storygraph.qa.retrieval.passages import SentenceSearch
from storygraph.qa.retrieval.retrieval import retriever_for
from storygraph.qa.retrieval.scoring import FastScorer, ModelScorer, RerankResult, RetrievalOrder
from storygraph.qa.verify.premise import GraphPremiseChecker
from storygraph.services import Services
from storygraph.text.embeddings import NO_EMBEDDER, default_embedder
from tests.helpers.scripted_model import ScriptedChatModel

NONE = ModelInfo("none", "", capable=False)
SMALL = ModelInfo("embedded", "scripted-small", capable=False)
REMOTE_SMALL = ModelInfo("openai_compatible", "scripted-small", capable=False)
CAPABLE = ModelInfo("scripted", "scripted-capable", capable=True)


@pytest.fixture
def seeded(services: Services, shared_dir: Path) -> Services:
    import_graph(services.store, load_graph_file(shared_dir / "eval" / "seed_graph.json"))
    return services


def _parts(services: Services, info: ModelInfo, **options: Any) -> QAParts:
    llm = None if info is NONE else ScriptedChatModel()
    engine = build_engine(services.store, llm, info, embedder=None)
    return engine.parts_for(QAOptions(**options))


def test_no_model_finds_names_locally_scores_fast_and_answers_from_the_facts(
    services: Services,
) -> None:
    for parts in (_parts(services, NONE), _parts(services, CAPABLE, no_llm=True)):
        assert isinstance(parts.reader.finder, LocalEntityFinder)
        assert not parts.reader.pick_types
        assert isinstance(parts.scorer, FastScorer)
        assert isinstance(parts.answerer, FactsAnswerer)
        assert parts.context.budget is None and parts.chooser is None
        assert parts.top_k == QAOptions().top_k
        assert getattr(parts.retriever, "llm", None) is None


def test_the_small_model_answers_from_a_compact_prompt_within_its_budget(
    services: Services,
) -> None:
    parts = _parts(services, SMALL, top_k=15, sentence_sources=2)
    assert isinstance(parts.reader.finder, LocalEntityFinder)
    assert isinstance(parts.scorer, FastScorer)
    assert isinstance(parts.answerer, ModelAnswerer) and parts.answerer.compact
    assert parts.top_k == SMALL_TOP_K
    assert parts.context.budget is not None
    assert parts.context.budget.fact_slots == SMALL_MAX_SOURCES - 2
    assert parts.chooser is None  # choosing a name is off unless asked
    assert getattr(parts.retriever, "llm", None) is None  # it picks no relation types
    # asked for: the model scores, per fact
    scorer = _parts(services, SMALL, strategy="per_fact").scorer
    assert isinstance(scorer, ModelScorer) and scorer.strategy == "per_fact"


def test_only_a_grammar_enforcing_server_chooses_names_and_only_when_asked(
    services: Services,
) -> None:
    assert _parts(services, SMALL, choose_names=True).chooser is not None
    assert _parts(services, REMOTE_SMALL, choose_names=True).chooser is None
    assert _parts(services, SMALL, choose_names=True, compose_answer=False).chooser is None


def test_a_capable_model_names_picks_scores_and_writes(services: Services) -> None:
    parts = _parts(services, CAPABLE)
    assert isinstance(parts.reader.finder, ModelEntityFinder)
    assert parts.reader.pick_types  # the default mode has +reltype: one call does both
    assert isinstance(parts.scorer, ModelScorer) and parts.scorer.strategy == "batched"
    assert isinstance(parts.answerer, ModelAnswerer) and not parts.answerer.compact
    assert parts.context.budget is None and parts.chooser is None
    assert getattr(parts.retriever, "llm", None) is not None
    assert not _parts(services, CAPABLE, mode="onehop+rerank").reader.pick_types


def test_running_without_a_sentence_encoder_is_named_in_the_parts(services: Services) -> None:
    """A missing embedder is a named fallback (storygraph.text.embeddings): the parts carry
    the warning every answer starts with."""
    assert _parts(services, SMALL).warnings == (NO_EMBEDDER,)
    fitted = build_engine(services.store, None, NONE, embedder=default_embedder())
    assert fitted.parts_for(QAOptions()).warnings == ()


def test_the_mode_selects_the_retriever_and_whether_anything_scores(services: Services) -> None:
    for info in (NONE, SMALL, CAPABLE):
        parts = _parts(services, info, mode="directed2")
        assert parts.retriever.mode == "directed2"
        assert isinstance(parts.scorer, RetrievalOrder)
    assert _parts(services, NONE, mode="onehop+qtype+rerank").retriever.mode == (
        "onehop+qtype+rerank"
    )
    with pytest.raises(ValueError, match="unknown retrieval mode"):
        _parts(services, NONE, mode="twohop")


def test_without_composing_the_answer_comes_from_the_facts(services: Services) -> None:
    for info in (SMALL, CAPABLE):
        assert isinstance(_parts(services, info, compose_answer=False).answerer, FactsAnswerer)
    # the small model's source order stays: its budget belongs to the model, not the answer
    assert _parts(services, SMALL, compose_answer=False).context.budget is not None


def test_the_facts_are_fitted_to_the_question_s_words_only_with_no_model(
    services: Services,
) -> None:
    """keep_fitting (storygraph.qa.retrieval.scoring) runs when the kept facts are the answer
    itself: no
    model, not a model that only writes no answer (the evaluation's retrieval run), nor no
    model reading as the small one (`small_model_budget`: eval-e2e --no-llm)."""
    assert _parts(services, NONE).fitting_only
    assert _parts(services, CAPABLE, no_llm=True).fitting_only
    assert not _parts(services, NONE, small_model_budget=True).fitting_only
    for info in (SMALL, CAPABLE):
        assert not _parts(services, info).fitting_only
        assert not _parts(services, info, compose_answer=False).fitting_only


def test_the_premise_check_is_built_once_with_the_given_readers(seeded: Services) -> None:
    """The factory builds the premise check with the parser's frame reader and question reader
    it was given (storygraph.services passes `sentence_frames` and `question_structure`), once:
    the frames it has read are kept for the next answer."""

    def frames(text: str, language: str) -> list[Any]:
        return []

    def questions(text: str, language: str) -> None:
        return None

    engine = build_engine(
        seeded.store, None, NONE, embedder=None, frames=frames, questions=questions
    )
    first = engine.parts_for(QAOptions()).premise
    assert isinstance(first, GraphPremiseChecker)
    assert first.frames is frames and first.parser.reader is questions
    again = engine.parts_for(QAOptions(mode="directed2", compose_answer=False)).premise
    assert again is first
    answer = engine.ask("桃太郎を倒したのは誰？")
    assert answer.steps[-1].name == "support"
    # with no model the answer is the facts list, which the check leaves as it is
    assert answer.support.verdict == "not checked"
    assert answer.steps[-1].detail["reason"] == "the answer is the facts list"


class _RecordingScorer:
    """A scorer handed to the engine: keeps the first fact, records what it was given."""

    name = "recording"

    def __init__(self) -> None:
        self.seen: list[tuple[QuestionAnalysis, int, int]] = []

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
        self.seen.append((analysis, len(facts), top_k))
        for i, fact in enumerate(facts):
            fact.kept, fact.score = i == 0, 10.0 - i
        return RerankResult(list(facts), False, "recording")


def test_an_injected_scorer_scores_the_rerank_modes(seeded: Services) -> None:
    scorer = _RecordingScorer()
    engine = build_engine(seeded.store, None, NONE, embedder=None, scorer=scorer)
    answer = engine.ask("桃太郎を倒したのは誰？", QAOptions(top_k=3))
    (analysis, candidates, top_k), *_ = scorer.seen
    assert analysis.ids == ["桃太郎"] and candidates > 1 and top_k == 3
    rerank = next(s for s in answer.steps if s.name == "rerank")
    assert rerank.detail["method"] == "recording" and rerank.detail["kept"] == 1
    assert len(answer.kept_facts) == 1
    # a mode without +rerank keeps retrieval order: the injected scorer is not asked
    engine.ask("桃太郎を倒したのは誰？", QAOptions(mode="onehop"))
    assert len(scorer.seen) == 1


class _FixedAnswerer:
    """An answerer handed to the engine: "answers" with the first source it reads."""

    name = "llm-fixed"
    calls_model = True
    worked_examples = False

    def warm(self, language: str) -> bool:
        return False

    def answer(
        self,
        analysis: QuestionAnalysis,
        facts: Sequence[Fact],
        sources: Sources,
        callbacks: list[Any],
        on_token: Any = None,
    ) -> str:
        return f"{sources.read[0].text} [{sources.read[0].number}]"


def test_an_engine_handed_its_parts_answers_with_them(seeded: Services) -> None:
    store = seeded.store
    parts = QAParts(
        reader=QuestionReader(store, LocalEntityFinder(), pick_types=False),
        retriever=retriever_for(store, "onehop+qtype+rerank"),
        scorer=FastScorer(None),
        context=ContextBuilder(store, SentenceSearch(store), sentence_sources=0),
        answerer=_FixedAnswerer(),
        top_k=2,
    )
    engine = QAEngine(parts)
    assert engine.parts_for(QAOptions(no_llm=True)) is parts  # options select nothing here
    answer = engine.ask("桃太郎を倒したのは誰？")
    assert answer.answer == f"{answer.citations[0].text} [1]"
    assert [s.name for s in answer.steps] == [
        "entities",
        "retrieval",
        "rerank",
        "sentences",
        "answer",
        "support",
    ]
    # parts without a verifier: the answer says so instead of a verdict
    assert answer.support.verdict == "not checked"
    assert answer.support.reason == "no verifier"
    step = next(s for s in answer.steps if s.name == "answer")
    assert step.detail["method"] == "llm-fixed"
    assert step.detail["sources_read"] == len(answer.citations)
    assert len(answer.kept_facts) <= 2 and answer.mode == "onehop+qtype+rerank"
