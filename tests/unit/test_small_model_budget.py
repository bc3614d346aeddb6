"""With no model, the facts kept and the sources read can be the small embedded model's
(`QAOptions.small_model_budget`), so `eval-e2e --no-llm` measures the evidence it would read."""

from __future__ import annotations

from typing import Any
from unittest.mock import MagicMock

from storygraph.llm.factory import ModelInfo
from storygraph.models import Citation, Fact
from storygraph.qa.pipeline.factory import SMALL_TOP_K, PartsFactory
from storygraph.qa.pipeline.parts import QAOptions, QAParts
from storygraph.qa.pipeline.writing import facts_written
from storygraph.qa.retrieval.context import SMALL_MAX_SOURCES, Sources


def _parts(**options: Any) -> QAParts:
    factory = PartsFactory(MagicMock(), None, ModelInfo("none", "", capable=False), None)
    return factory.parts(QAOptions(no_llm=True, **options))


def test_no_model_reads_every_source_unless_asked_for_the_small_models_budget() -> None:
    every = _parts()
    assert every.context.budget is None and every.top_k == QAOptions().top_k
    assert every.fitting_only  # the kept facts are the answer: only the fitting ones
    small = _parts(small_model_budget=True, sentence_sources=5)
    assert small.top_k == SMALL_TOP_K
    assert small.context.budget is not None
    assert small.context.budget.fact_slots == SMALL_MAX_SOURCES - 5
    assert small.chooser is None and small.across is None  # no model: nothing to call
    assert small.no_model and not small.fitting_only  # kept as the small model keeps them


def test_the_answer_without_a_model_reports_the_sources_within_the_budget_as_read() -> None:
    citations = [Citation(i, f"d:000{i}", "d.txt", f"Sentence {i}.") for i in (1, 2, 3)]
    sources = Sources(citations, citations[:2])  # the budget cut the third
    analysis = MagicMock(language="en", reply_language="en", entities=[])
    kept = [Fact("Hare", "RACES", "Tortoise", ["d:0001"], "Sentence 1.", kept=True)]
    assert facts_written(analysis, kept, kept, sources, None).read == 2
    assert facts_written(analysis, [], [], sources, None).read == 2  # sentence search's only
