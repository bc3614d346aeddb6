"""A plan's repeated relation is written as one row holding what the MERGE run once per
repeat would leave (storygraph.store.plan.unique_relations, docs/ISSUES.md#falkordb-same-query)."""

from __future__ import annotations

from storygraph.store.plan import RelationRecord, unique_relations


def _rel(chunks: list[str], evidence: list[str], document_id: str = "") -> RelationRecord:
    return RelationRecord("桃太郎", "MEETS", "犬", chunks, evidence, document_id=document_id)


def test_a_plan_without_repeats_is_handed_back_as_it_is() -> None:
    relations = [_rel(["a:1"], ["x"]), _rel(["a:1"], ["x"], document_id="d1")]
    assert unique_relations(relations) is relations


def test_repeats_keep_the_first_sources_then_each_later_ones_new_sources_in_order() -> None:
    first = _rel(["a:1", "a:2"], ["one", "two"])
    relations = [
        first,
        RelationRecord("犬", "MEETS", "桃太郎", ["a:9"], ["other way"]),
        _rel(["a:3", "a:1", "a:3"], ["three", "one again", "three again"]),
        _rel(["a:4", "a:5"], ["four"]),  # its evidence is shorter than its sources
    ]
    folded = unique_relations(relations)
    assert [(r.source, r.target) for r in folded] == [("桃太郎", "犬"), ("犬", "桃太郎")]
    # a:3 twice in one row: both are new to the edge before that row, as in ON MATCH
    assert folded[0].chunk_ids == ["a:1", "a:2", "a:3", "a:3", "a:4", "a:5"]
    assert folded[0].evidence == ["one", "two", "three", "three again", "four", None]
    assert first.chunk_ids == ["a:1", "a:2"] and first.evidence == ["one", "two"]  # untouched
