"""Property-based tests of the merge rules (ingest/merge.py: build_plan, plan_from_graph)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storygraph.ingest.merge import build_plan, clean_name, plan_from_graph, reading_key
from storygraph.models import Chunk, ChunkExtraction, ExtractedEntity, ExtractedRelation
from storygraph.store.plan import MergePlan
from storygraph.text.normalize import is_kana_only, normalize_name

IDENT_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"

# Names mixing the traps: kana / kanji readings, case, width, whitespace, quotes and braces.
names = st.one_of(
    st.sampled_from(
        ["桃太郎", "ももたろう", "モモタロウ", "きじ", "キジ", "雉", "鬼", "おに", "Momotaro",
         "MOMOTARO", "ｍｏｍｏｔａｒｏ", " momotaro ", "o'ni", 'the "ogre"', "}) DELETE n //",
         "a\nb", "神", "紙", "かみ", "🍑"]
    ),
    st.text(min_size=0, max_size=8),
)  # fmt: skip
types = st.one_of(
    st.sampled_from(["Character", "Animal", "Place", "人物", "動物", "", "Document", "`x`"]),
    st.text(max_size=6),
)
rel_types = st.one_of(
    st.sampled_from(["GOES_TO", "退治する", "lives in", "MENTIONS", "}) //", "", "友達"]),
    st.text(max_size=6),
)


@st.composite
def extractions(draw: st.DrawFn) -> list[ChunkExtraction]:
    count = draw(st.integers(min_value=1, max_value=4))
    result = []
    for i in range(count):
        chunk = Chunk(f"doc:{i:04d}", "doc", i, "text", 0, 4)
        ents = [
            ExtractedEntity(draw(names), draw(types), chunk.id)
            for _ in range(draw(st.integers(0, 4)))
        ]
        rels = [
            ExtractedRelation(
                draw(names), draw(types), draw(rel_types), draw(names), draw(types), chunk.id,
                draw(st.text(max_size=10)),
            )
            for _ in range(draw(st.integers(0, 5)))
        ]  # fmt: skip
        result.append(ChunkExtraction(chunk=chunk, entities=ents, relations=rels))
    # The same chunk id twice (a model that answers twice) must not duplicate provenance.
    if draw(st.booleans()):
        result.append(result[0])
    return result


def no_candidates(
    norms: Sequence[str], rkeys: Sequence[str], document_id: str = ""
) -> list[dict[str, Any]]:
    return []


@st.composite
def existing_graph(draw: st.DrawFn) -> list[dict[str, Any]]:
    picked = draw(st.lists(names.filter(lambda n: clean_name(n) != ""), max_size=4))
    rows = []
    for name in sorted({clean_name(n) for n in picked}):
        norm = normalize_name(name)
        if not norm:
            continue
        kana = is_kana_only(name)
        rows.append(
            {"id": name, "type": "Character", "norm": norm, "kana": kana,
             "rkey": reading_key(name, norm, kana), "type_votes": ["Character"]}
        )  # fmt: skip
    unique = {r["norm"]: r for r in rows}
    return list(unique.values())


def _check_plan(plan: MergePlan) -> None:
    ids = [e.id for e in plan.entities]
    assert len(ids) == len(set(ids)), "one record per node"
    norms = [normalize_name(i) for i in ids]
    assert len(norms) == len(set(norms)), "one node per normalised name"
    keys = [(r.source, r.type, r.target) for r in plan.relations]
    assert len(keys) == len(set(keys)), "one record per edge"
    for entity in plan.entities:
        assert entity.id == clean_name(entity.id) and entity.id
        assert len(entity.chunk_ids) == len(set(entity.chunk_ids))
        assert len(entity.type_votes) == len(entity.chunk_ids)
        assert entity.label and all(c in IDENT_CHARS for c in entity.label)
        assert not entity.label[0].isdigit()
        assert entity.label not in ("Document", "Chunk", "__Entity__")
    for rel in plan.relations:
        assert rel.source in ids and rel.target in ids, "endpoints are entity records"
        assert rel.source != rel.target
        assert len(rel.chunk_ids) == len(rel.evidence), "evidence aligned with chunk ids"
        assert len(rel.chunk_ids) == len(set(rel.chunk_ids)) >= 1
        assert rel.type and all(c in IDENT_CHARS for c in rel.type)
        assert rel.type not in ("MENTIONS", "PART_OF")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(extractions())
def test_build_plan_records_are_unique_and_aligned(batch: list[ChunkExtraction]) -> None:
    _check_plan(build_plan(batch, no_candidates))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(extractions(), existing_graph())
def test_build_plan_reuses_existing_ids(
    batch: list[ChunkExtraction], existing: list[dict[str, Any]]
) -> None:
    def lookup(
        norms: Sequence[str], rkeys: Sequence[str], document_id: str
    ) -> list[dict[str, Any]]:
        # as cypher.ENTITY_CANDIDATES: e.norm IN $norms OR e.rkey IN $rkeys
        return [row for row in existing if row["norm"] in norms or row["rkey"] in rkeys]

    plan = build_plan(batch, lookup)
    _check_plan(plan)
    known = {row["norm"]: row["id"] for row in existing}
    for entity in plan.entities:
        if entity.norm in known:
            assert entity.id == known[entity.norm] and entity.existing


@settings(max_examples=100, deadline=None)
@given(extractions())
def test_build_plan_is_deterministic_and_keys_idempotent(batch: list[ChunkExtraction]) -> None:
    first = build_plan(batch, no_candidates)
    second = build_plan(batch, no_candidates)
    assert [(e.id, e.label, e.chunk_ids) for e in first.entities] == [
        (e.id, e.label, e.chunk_ids) for e in second.entities
    ]
    assert [(r.source, r.type, r.target, r.chunk_ids) for r in first.relations] == [
        (r.source, r.type, r.target, r.chunk_ids) for r in second.relations
    ]
    # Every relation mentioned with two non-empty, distinct names is kept or said dropped.
    stated = sum(len(e.relations) for e in batch)
    assert len(first.dropped) <= stated


@settings(max_examples=100, deadline=None)
@given(extractions())
def test_plan_from_graph_of_an_export_is_a_fixed_point(batch: list[ChunkExtraction]) -> None:
    """Import(export(plan)) gives the same nodes and edges: re-import never adds anything."""
    plan = build_plan(batch, no_candidates)
    nodes = [{"id": e.id, "type": e.label, "chunk_ids": e.chunk_ids} for e in plan.entities]
    rels = [
        {"source": r.source, "type": r.type, "target": r.target, "chunk_ids": r.chunk_ids,
         "evidence": r.evidence}
        for r in plan.relations
    ]  # fmt: skip
    again = plan_from_graph(nodes, rels, no_candidates)
    assert again.dropped == []
    assert {(e.id, e.label) for e in again.entities} == {(e.id, e.label) for e in plan.entities}
    assert {(r.source, r.type, r.target, tuple(r.chunk_ids)) for r in again.relations} == {
        (r.source, r.type, r.target, tuple(r.chunk_ids)) for r in plan.relations
    }


def test_two_kanji_spellings_do_not_both_join_a_stored_kana_node() -> None:
    """Found by the property above: 神 and 紙 both became the stored かみ (two records, one id)."""
    chunk = Chunk("doc:0000", "doc", 0, "text", 0, 4)
    rel = ExtractedRelation("神", "Deity", "GIVES", "紙", "Object", chunk.id, "")
    stored = [{"id": "かみ", "type": "Character", "norm": "かみ", "kana": True, "rkey": "かみ"}]
    plan = build_plan([ChunkExtraction(chunk, relations=[rel])], lambda n, r, d: stored)
    _check_plan(plan)
    assert {e.id for e in plan.entities} == {"神", "紙"}
    assert [(r.source, r.target) for r in plan.relations] == [("神", "紙")]
