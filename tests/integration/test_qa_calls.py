"""A capable model answers a question in three calls: analysis, one batched rerank, answer."""

from __future__ import annotations

from pathlib import Path

from storygraph.ingest.graph_io import import_graph, load_graph_file
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.services import Services
from tests.helpers.scripted_model import ScriptedChatModel


def test_default_mode_makes_three_calls_and_uses_the_models_type_pick(
    services: Services, shared_dir: Path
) -> None:
    import_graph(services.store, load_graph_file(shared_dir / "eval" / "seed_graph.json"))
    model = ScriptedChatModel()
    services.llm_override = model
    answer = services.qa().ask("桃太郎の仲間は誰？", QAOptions(mode="onehop+qtype+reltype+rerank"))
    assert model.calls == ["entities", "rerank", "answer"]
    assert answer.usage.calls == 3
    assert [e.node_id for e in answer.entities] == ["桃太郎"]
    entities_step = next(s for s in answer.steps if s.name == "entities")
    assert entities_step.detail["relation_type_pick"] == ["BECOMES_COMPANION_OF"]
    kept = {(f.start, f.type, f.end) for f in answer.kept_facts}
    assert ("桃太郎", "BECOMES_COMPANION_OF", "犬") in kept
    assert ("鬼", "DEFEATS", "桃太郎") not in kept


def test_a_failed_analysis_call_falls_back_without_a_second_pick_call(
    services: Services, shared_dir: Path
) -> None:
    import_graph(services.store, load_graph_file(shared_dir / "eval" / "seed_graph.json"))
    model = ScriptedChatModel(faults={"entities": TimeoutError("slow")})
    services.llm_override = model
    answer = services.qa().ask("桃太郎の仲間は誰？")
    assert model.calls == ["entities", "rerank", "answer"]
    assert [e.node_id for e in answer.entities] == ["桃太郎"]  # dictionary match
    assert any("dictionary" in w for w in answer.warnings)
