"""Merging one story's chunk extractions into write-ready records (storygraph.ingest.merge)."""

from __future__ import annotations

from storygraph.ingest.merge import build_plan
from storygraph.models import Chunk, ChunkExtraction, ExtractedEntity, ExtractedRelation


def _extraction(index: int, names: list[str], facts: list[tuple[str, str, str]]) -> ChunkExtraction:
    chunk = Chunk(f"doc:{index:04d}", "doc", index, "text", index * 10, index * 10 + 4)
    return ChunkExtraction(
        chunk=chunk,
        entities=[ExtractedEntity(n, "Character", chunk.id) for n in names],
        relations=[
            ExtractedRelation(s, "Character", t, o, "Character", chunk.id, "text")
            for s, t, o in facts
        ],
    )


def test_a_name_in_no_fact_is_not_stored_and_is_listed() -> None:
    # issue 29: a model's list of names (おやおや, 様子) or a self-loop's end made nodes that
    # answer nothing and crowd the entity pages
    plan = build_plan(
        [
            _extraction(0, ["犬", "桃太郎", "おやおや"], [("犬", "FOLLOWS", "桃太郎")]),
            _extraction(1, ["様子", "猿"], [("猿", "MEETS", "猿")]),
        ],
        lambda _norms, _keys, _document: [],
    )
    assert {e.id for e in plan.entities} == {"犬", "桃太郎"}
    assert sorted(plan.unlinked) == ["おやおや", "様子", "猿"]
    assert [(r.source, r.type, r.target) for r in plan.relations] == [("犬", "FOLLOWS", "桃太郎")]
    assert any("self-loop" in d for d in plan.dropped)
