"""Parser-only ingest (no model) of a real story into embedded FalkorDB, with provenance."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from storygraph.ingest.frames.extractor import ParserExtractor
from storygraph.ingest.frames.ja import read_facts
from storygraph.services import Services, build_services
from storygraph.settings import Settings
from storygraph.text.vocabulary import CHARACTER_RELATIONS


@pytest.fixture
def parser_services(tmp_path: Path) -> Iterator[Services]:
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", no_llm=True)  # type: ignore[call-arg]
    built = build_services(settings, extractor=ParserExtractor())
    yield built
    built.close()


def test_momotaro_without_a_model_has_the_companions_with_provenance(
    parser_services: Services, shared_dir: Path
) -> None:
    data = (shared_dir / "stories" / "ja" / "momotaro_kusuyama.txt").read_bytes()
    report = parser_services.ingestor().ingest_bytes("momotaro_kusuyama.txt", data)
    assert report.status == "added", report.message
    assert report.extractor == "parser+verbs" and report.usage.calls == 0
    assert report.untyped_dropped > 0  # verbs the table lacks are counted (typed by the verb)

    export = parser_services.store.export_graph()
    doc_id = report.document_id
    rels = export["relationships"]
    for rel in rels:
        assert rel["chunk_ids"] and all(c.startswith(doc_id + ":") for c in rel["chunk_ids"])
        assert len(rel["evidence"]) == len(rel["chunk_ids"])
        assert all(ev and ev in data.decode("utf-8") for ev in rel["evidence"])

    def linked(a: str, b: str) -> list[dict]:
        return [r for r in rels if {r["source"], r["target"]} == {a, b}]

    for animal in ("犬", "猿", "きじ"):
        assert linked(animal, "桃太郎"), animal
    assert ("犬", "FOLLOWS", "桃太郎") in {(r["source"], r["type"], r["target"]) for r in rels}
    assert linked("桃太郎", "鬼")
    # the passive read right: 桃太郎 defeats the oni chief, not the other way round
    defeats = {(r["source"], r["target"]) for r in rels if r["type"] == "DEFEATS"}
    assert ("桃太郎", "鬼の大将") in defeats and ("鬼の大将", "桃太郎") not in defeats


def test_momotaro_nodes_each_take_part_in_a_fact_and_acting_animals_are_characters(
    parser_services: Services, shared_dir: Path
) -> None:
    """Issue 29: the dog and the pheasant were "Entity" beside the monkey's Character; ぐあい,
    様子, 刈り, 馬乗り were stored as entities (刈り and 馬乗り as places)."""
    data = (shared_dir / "stories" / "ja" / "momotaro_kusuyama.txt").read_bytes()
    report = parser_services.ingestor().ingest_bytes("momotaro_kusuyama.txt", data)
    assert report.status == "added", report.message
    export = parser_services.store.export_graph()
    types = {n["id"]: n["type"] for n in export["nodes"]}
    rels = export["relationships"]
    in_facts = {end for r in rels for end in (r["source"], r["target"])}
    assert set(types) == in_facts  # no node without a fact
    actors = {r["source"] for r in rels if r["type"] in CHARACTER_RELATIONS}
    assert {name for name in actors if types[name] != "Character"} == set()
    assert {types[a] for a in ("犬", "猿", "きじ", "桃太郎")} == {"Character"}
    assert not {"ぐあい", "様子", "刈り", "しば刈り", "馬乗り", "力だめし"} & set(types)


def test_every_fact_of_a_whole_story_cites_its_own_sentence(shared_dir: Path) -> None:
    text = (shared_dir / "stories" / "ja" / "momotaro_kusuyama.txt").read_text(encoding="utf-8")
    facts = read_facts(text)
    assert len(facts) > 50
    for fact in facts:
        assert fact.sentence and text[fact.start :].startswith(fact.sentence), fact
        assert fact.subject != fact.object
