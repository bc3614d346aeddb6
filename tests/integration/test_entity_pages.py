"""Entity pages and story time end to end: real embedded FalkorDB, scripted model.

A hand-made English story with one sentence per chunk (chunk size 40), so the scripted
extraction (a triple whenever both names occur in a chunk) states each fact exactly where the
story does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest

from storygraph.ingest.graph_io import import_graph
from storygraph.library.entity_pages import EntityPages
from storygraph.library.wiki import INDEX, export_wiki
from storygraph.llm.factory import ModelInfo
from storygraph.qa.generation.answer import facts_answer
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.retrieval.order import order_for_question
from storygraph.services import Services, build_services
from storygraph.settings import Settings
from storygraph.store.story_time import parse_position, supersession_lines
from tests.helpers.scripted_logic import Script
from tests.helpers.scripted_model import ScriptedChatModel

TRIPLES = (
    ("dragon", "Character", "LIVES_IN", "cave", "Place"),
    ("dragon", "Character", "OWNS", "gold", "Object"),
    ("knight", "Character", "MEETS", "dog", "Animal"),
    ("knight", "Character", "MEETS", "monkey", "Animal"),
    ("knight", "Character", "GOES_TO", "cave", "Place"),
    ("knight", "Character", "DEFEATS", "dragon", "Character"),
    ("knight", "Character", "OWNS", "gold", "Object"),
    ("knight", "Character", "RETURNS_TO", "village", "Place"),
    ("bat", "Animal", "LIVES_IN", "cave", "Place"),
)
STORY = (
    "The dragon lived in the cave.\n"
    "The dragon owned the gold.\n"
    "The knight met the dog.\n"
    "The knight met the monkey.\n"
    "The knight went to the cave.\n"
    "The knight defeated the dragon.\n"
    "Then the knight owned the gold.\n"
    "The knight went to the village.\n"
)
DOC_A = "The dragon lived in the cave.\nThe dragon owned the gold.\n"
DOC_B = "The knight met the dog.\nThe knight defeated the dragon.\nThe dragon lived in the cave.\n"
DOC_C = "A bat lived in the cave.\n"


@pytest.fixture
def model() -> ScriptedChatModel:
    return ScriptedChatModel(script=Script(triples=TRIPLES))


@pytest.fixture
def story_services(tmp_path: Path, model: ScriptedChatModel) -> Iterator[Services]:
    settings = Settings(data_dir=tmp_path / "data", chunk_size=40, chunk_overlap=0)
    built = build_services(settings, llm=model)
    yield built
    built.close()


def _ingest(services: Services, name: str, text: str) -> str:
    report = services.ingestor().ingest_bytes(name, text.encode("utf-8"))
    assert report.status == "added", report.message
    return report.document_id


def _pages(services: Services, model: ScriptedChatModel | None = None) -> EntityPages:
    info = ModelInfo("scripted", "scripted", capable=model is not None)
    return EntityPages(services.store, model, info)


def _answer_calls(model: ScriptedChatModel) -> int:
    return model.calls.count("answer")


def test_each_story_has_its_own_entity_page_and_history(story_services: Services) -> None:
    """Issue #28: the same name in two documents is two entities, each with its own relations,
    mentions and history; `name@story` opens one of them."""
    a = _ingest(story_services, "a.txt", DOC_A)
    b = _ingest(story_services, "b.txt", DOC_B)
    pages = _pages(story_services)

    both = pages.pages("Dragon")  # names resolve like question entities do
    assert sorted(p.document for p in both) == ["a.txt", "b.txt"]
    assert all(p.id == "Dragon" and p.type == "Character" for p in both)
    dragon_a = pages.page("Dragon@a.txt")
    dragon_b = pages.page(f"Dragon@{b}")  # by document id too
    assert dragon_a is not None and dragon_b is not None and dragon_a.key != dragon_b.key
    assert {(r.start, r.type, r.end) for r in dragon_a.relations} == {
        ("Dragon", "LIVES_IN", "Cave"),
        ("Dragon", "OWNS", "Gold"),
    }
    relations_b = {(r.start, r.type, r.end): r for r in dragon_b.relations}
    assert set(relations_b) == {("Dragon", "LIVES_IN", "Cave"), ("Knight", "DEFEATS", "Dragon")}
    assert relations_b[("Knight", "DEFEATS", "Dragon")].direction == "in"
    lives = relations_b[("Dragon", "LIVES_IN", "Cave")]
    assert {c.document for c in lives.citations} == {"b.txt"}
    assert all(c.evidence == "The dragon lived in the cave." for c in lives.citations)
    assert [m.document for m in dragon_a.mentions] == ["a.txt"]
    assert [m.document for m in dragon_b.mentions] == ["b.txt"]

    assert [(h.document, h.kind) for h in dragon_a.history] == [("a.txt", "created")]
    assert "type Character" in dragon_a.history[0].changes
    assert [(h.document, h.kind) for h in dragon_b.history] == [("b.txt", "created")]
    assert "+ Knight -[DEFEATS]→ Dragon" in dragon_b.history[0].changes

    cave_b = pages.page("Cave@b.txt")
    assert cave_b is not None and [h.kind for h in cave_b.history] == ["created"]
    lived = [e for e in cave_b.statements if e.relation == "Dragon -[LIVES_IN]→ Cave"]
    assert [(e.document, e.first, e.statements) for e in lived] == [("b.txt", True, 1)]
    assert pages.list("Cave") and {i.document for i in pages.list("Cave")} == {"a.txt", "b.txt"}

    # Deleting b removes its entities; a's are untouched.
    story_services.store.delete_document(b)
    assert [p.document for p in pages.pages("Dragon")] == ["a.txt"]
    dragon = pages.page("Dragon")
    assert dragon is not None and dragon.key == dragon_a.key
    assert [h.document for h in dragon.history] == ["a.txt"]
    assert {r.type for r in dragon.relations} == {"LIVES_IN", "OWNS"}
    lives = next(r for r in dragon.relations if r.type == "LIVES_IN")
    assert lives.positions and all(p.startswith(f"{a}:") for p in lives.positions)
    assert pages.page("Knight") is None


def test_a_summary_is_written_once_and_another_story_leaves_it_alone(
    story_services: Services, model: ScriptedChatModel
) -> None:
    _ingest(story_services, "a.txt", DOC_A)
    pages = _pages(story_services, model)

    before = _answer_calls(model)
    first = pages.page("Cave")
    assert first is not None and first.summary_method == "model" and first.summary
    assert _answer_calls(model) == before + 1
    assert first.summary_sources == ["a.txt"]

    again = pages.page("Cave")
    assert again is not None and _answer_calls(model) == before + 1  # a view changes nothing
    assert again.summary_updated_at == first.summary_updated_at

    _ingest(story_services, "b.txt", DOC_B)  # its own Cave: a's is not touched
    calls = _answer_calls(model)
    same = pages.page("Cave@a.txt")
    assert same is not None and _answer_calls(model) == calls
    assert same.summary_updated_at == first.summary_updated_at and len(same.history) == 1
    other = pages.page("Cave@b.txt")
    assert other is not None and _answer_calls(model) == calls + 1
    assert other.summary_sources == ["b.txt"]

    # Without a capable model the summary is composed from the facts.
    _ingest(story_services, "c.txt", DOC_C)
    plain = _pages(story_services).page("Bat")
    assert plain is not None and plain.summary_method == "facts"
    assert "lives in Cave" in plain.summary


def test_timeline_and_the_treasure_changing_hands(story_services: Services) -> None:
    doc = _ingest(story_services, "story.txt", STORY)
    pages = _pages(story_services)
    knight = pages.page("Knight")
    assert knight is not None
    assert [e.relation for e in knight.timeline] == [
        "Knight -[MEETS]→ Dog",
        "Knight -[MEETS]→ Monkey",
        "Knight -[GOES_TO]→ Cave",
        "Knight -[DEFEATS]→ Dragon",
        "Knight -[OWNS]→ Gold",
        "Knight -[RETURNS_TO]→ Village",
    ]
    positions = [e.position for e in knight.timeline]
    assert positions == sorted(positions)
    chunks = [e.chunk for e in knight.timeline]
    assert chunks == sorted(chunks) and chunks[0] == 2  # the third sentence is the third chunk

    gold = {(r.start, r.type): r for r in pages.page("Gold").relations}  # type: ignore[union-attr]
    dragon_owned, knight_owns = gold[("Dragon", "OWNS")], gold[("Knight", "OWNS")]
    assert dragon_owned.invalid_at == knight_owns.story_order  # superseded, not deleted
    assert knight_owns.invalid_at == ""
    where = parse_position(knight_owns.story_order)
    assert where is not None and where.document_id == doc and where.chunk_index == 6
    assert STORY[where.offset :].startswith("Then the knight owned the gold.")

    # Retrieval carries story time, and an answer can say "at first … later …".
    facts = story_services.store.retrieve("onehop", ["Gold"])
    assert supersession_lines(facts) == ["At first Dragon owns Gold; later Knight owns Gold."]

    # The export carries positions; re-importing it into an empty graph restores story time.
    exported = story_services.store.export_graph()
    rel = next(
        r for r in exported["relationships"] if r["source"] == "Dragon" and r["type"] == "OWNS"
    )
    assert rel["invalid_at"] == knight_owns.story_order and rel["positions"]
    story_services.store.reset()
    import_graph(story_services.store, exported)
    facts = story_services.store.retrieve("onehop", ["Gold"])
    again = {(f.start, f.type): f for f in facts}
    assert again[("Dragon", "OWNS")].invalid_at == knight_owns.story_order
    node = next(n for n in exported["nodes"] if n["id"] == "Knight")
    assert node["summary"]  # summaries travel too
    restored = pages.page("Knight")
    assert restored is not None and restored.summary == node["summary"]


def test_another_story_never_supersedes_a_fact(story_services: Services) -> None:
    story = _ingest(story_services, "story.txt", STORY)
    other = _ingest(story_services, "a.txt", DOC_A)  # states Dragon OWNS Gold again, alone
    pages = _pages(story_services)
    in_story = pages.page("Gold@story.txt")
    in_other = pages.page("Gold@a.txt")
    assert in_story is not None and in_other is not None
    owned = next(r for r in in_story.relations if r.start == "Dragon")
    assert owned.invalid_at  # superseded within story.txt
    owned = next(r for r in in_other.relations if r.start == "Dragon")
    assert owned.invalid_at == ""
    assert owned.positions and all(p.startswith(f"{other}:") for p in owned.positions)
    assert owned.story_order == min(owned.positions)
    story_services.store.delete_document(story)
    assert [p.document for p in pages.pages("Gold")] == ["a.txt"]


def test_an_order_question_is_answered_in_story_order(story_services: Services) -> None:
    _ingest(story_services, "story.txt", STORY)
    question = "Who did the knight meet before he went to the cave?"
    answer = story_services.qa().ask(question, QAOptions(mode="onehop+qtype", no_llm=True))
    retrieval = next(s for s in answer.steps if s.name == "retrieval")
    assert "before" in str(retrieval.detail["question_type"])
    ids = [e.node_id for e in answer.entities]
    assert set(ids) == {"Knight", "Cave"}
    # the qtype stage ranked the facts before the anchor first
    top = {f.end for f in answer.facts[:2]}
    assert top == {"Dog", "Monkey"}
    ordered = order_for_question(question, answer.facts, ids, language="en")
    assert ordered.anchor is not None and ordered.anchor.text() == "Knight -[GOES_TO]-> Cave"
    assert [f.text() for f in ordered.facts] == [
        "Knight -[MEETS]-> Dog",
        "Knight -[MEETS]-> Monkey",
    ]
    text = facts_answer("en", ordered.facts, answer.citations)
    assert text.index("Dog") < text.index("Monkey") and "Dragon" not in text
    # The engine hands an order question's sources to the answer in story order.
    placed = [c.text for c in answer.citations]
    story_positions = [STORY.index(t) for t in placed if t in STORY]
    assert len(story_positions) >= 2 and story_positions == sorted(story_positions), placed


def test_the_wiki_export_links_resolve(story_services: Services, tmp_path: Path) -> None:
    _ingest(story_services, "story.txt", STORY)

    out = tmp_path / "wiki"
    written = export_wiki(_pages(story_services), out)
    names = {p.name for p in written}
    assert INDEX in names
    ids = {r["id"] for r in story_services.store.entity_names()}
    assert len(written) == len(ids) + 1  # one page per entity, and the index
    links = 0
    for path in written:
        text = path.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            assert not target.startswith(("/", "http")), target
            assert (out / unquote(target)).is_file(), f"{path.name} links to missing {target}"
            links += 1
    assert links > len(ids)
    knight = (out / "Knight.md").read_text(encoding="utf-8")
    assert "[Dog](Dog.md)" in knight and "## Timeline" in knight


def test_an_answer_says_at_first_and_later_for_the_treasure(story_services: Services) -> None:
    _ingest(story_services, "story.txt", STORY)
    answer = story_services.qa().ask("Who owned the gold?", QAOptions(mode="onehop", no_llm=True))
    kept = {(f.start, f.type, f.end) for f in answer.kept_facts}
    assert {("Dragon", "OWNS", "Gold"), ("Knight", "OWNS", "Gold")} <= kept
    # after the facts (only the sentence-search sources' numbers may follow it)
    lines = answer.answer.splitlines()
    at = lines.index("At first Dragon owns Gold; later Knight owns Gold.")
    assert all(line.startswith("Story sentences close") for line in lines[at + 1 :]), lines
