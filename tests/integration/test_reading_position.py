"""Chapters and the reading position on the real embedded FalkorDB (issue #41 items 1-2,
docs/ISSUES.md#chapters): a made-up story of three chapters ingested with the scripted model at
the model boundary; every citation carries its chapter, and an answer asked "up to chapter 1"
cites nothing later, while the same question up to chapter 3 cites chapter 3."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from storygraph.cli import main
from storygraph.library.entity_pages import METHOD_READ, EntityPages
from storygraph.llm.factory import ModelInfo
from storygraph.models import Answer
from storygraph.qa.pipeline.engine import QAEngine
from storygraph.qa.pipeline.factory import build_engine
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.services import Services, build_services
from storygraph.settings import Settings
from storygraph.store.reading import NOT_YET, SO_FAR, reading_for
from storygraph.store.story_time import parse_position
from storygraph.ui.visualize import read_rows, whole_graph
from tests.helpers import scripted_logic
from tests.helpers.scripted_model import ScriptedChatModel

STORY = """The Fox and the Lantern

Chapter 1

A fox lived in the forest. One night the fox found a lantern by the river.

Chapter 2

The fox met an owl in the forest. The owl told the fox a secret about the hill.

Chapter 3

The fox carried the lantern to the castle. In the castle the fox found a golden key.
"""

TRIPLES: tuple[scripted_logic.Triple, ...] = (
    ("fox", "Character", "LIVES_IN", "forest", "Place"),  # chapters 1 and 2
    ("fox", "Character", "FINDS", "lantern", "Object"),  # chapters 1 and 3
    ("fox", "Character", "MEETS", "owl", "Character"),  # chapter 2
    ("fox", "Character", "GOES_TO", "castle", "Place"),  # chapter 3
    ("fox", "Character", "FINDS", "golden key", "Object"),  # chapter 3
)
KEY = "What did the fox find in the castle?"
SMALL = ModelInfo("embedded", "scripted-small", capable=False)


@pytest.fixture
def fox(services: Services, monkeypatch: pytest.MonkeyPatch) -> Services:
    model = ScriptedChatModel(script=scripted_logic.Script(triples=TRIPLES))
    monkeypatch.setattr(services, "llm_override", model)
    report = services.ingestor().ingest_bytes("fox.txt", STORY.encode("utf-8"))
    assert report.status == "added", report.message
    return services


def _engine(services: Services) -> QAEngine:
    model = ScriptedChatModel(script=scripted_logic.Script(triples=TRIPLES))
    return build_engine(services.store, model, SMALL, embedder=None)


def _ask(services: Services, question: str, until: int | None) -> Answer:
    return _engine(services).ask(question, QAOptions(until=until, verify="label"))


def test_every_chunk_of_the_story_carries_its_chapter(fox: Services) -> None:
    doc = fox.store.list_documents()[0]
    assert fox.store.document_chapters(doc.id) == [
        (0, ""),
        (1, "Chapter 1"),
        (2, "Chapter 2"),
        (3, "Chapter 3"),
    ]


def test_up_to_chapter_one_nothing_later_is_cited_or_retrieved(fox: Services) -> None:
    answer = _ask(fox, KEY, 1)
    assert answer.citations, answer.answer
    assert {c.chapter for c in answer.citations} <= {0, 1}
    assert not any("golden key" in c.text or "castle" in c.text for c in answer.citations)
    assert all("golden key" not in (f.start.lower(), f.end.lower()) for f in answer.facts)
    # a fact stated in chapters 1 and 3 (and the title, chapter 0) keeps only its early chunks
    lantern = next(f for f in answer.facts if f.end.lower() == "lantern")
    chunks = fox.store.chunks(lantern.chunk_ids)
    assert {row["chapter"] for row in chunks.values()} == {0, 1}
    # nor does its story time say it is stated again later (`ask --json` shows it)
    for value in (lantern.story_order, lantern.story_order_last):
        where = parse_position(value)
        assert where is not None and _chapters(fox, [where.chunk_id]) <= {0, 1}, value


def test_up_to_chapter_three_the_castle_is_cited_with_its_chapter(fox: Services) -> None:
    answer = _ask(fox, KEY, 3)
    later = [c for c in answer.citations if c.chapter == 3]
    assert later and any("golden key" in c.text for c in later)
    assert all(c.chapter_title == "Chapter 3" for c in later)


def test_a_question_about_a_later_chapter_is_declined_as_not_read_yet(fox: Services) -> None:
    answer = _ask(fox, "Who is the owl?", 1)
    assert SO_FAR["en"] in answer.answer
    assert not answer.citations
    read_all = _ask(fox, "Who is the owl?", None)
    assert 2 in {c.chapter for c in read_all.citations}
    assert SO_FAR["en"] not in read_all.answer


def test_a_name_first_written_later_is_neither_found_nor_shown(fox: Services) -> None:
    """The entity finder reads only the names read so far: the owl (chapter 2) is not found up
    to chapter 1, the castle (chapter 3) not up to chapter 2, and their answers name neither."""
    for question, until, later in (("Who is the owl?", 1, "owl"),
                                   ("What is in the castle?", 2, "castle")):  # fmt: skip
        answer = _ask(fox, question, until)
        found = {e.node_id.lower() for e in answer.entities}
        assert later not in found, (until, found)
        assert SO_FAR["en"] in answer.answer
        assert all(later not in (f.start.lower(), f.end.lower()) for f in answer.facts)
        entities_step = next(s for s in answer.steps if s.name == "entities")
        assert later not in json.dumps(entities_step.detail, ensure_ascii=False).lower()
        assert _ask(fox, question, None).entities  # read whole, the name is found


LATER = ("owl", "castle", "golden key", "secret", "hill")
"""Words of chapters 2 and 3 alone."""


def _chapters(services: Services, chunk_ids: list[str]) -> set[int]:
    return {int(row["chapter"]) for row in services.store.chunks(chunk_ids).values()}


def test_the_entity_page_up_to_chapter_one_shows_nothing_later(fox: Services) -> None:
    pages = EntityPages(fox.store)
    reading = reading_for(fox.store, 1)
    page = pages.page("fox", reading=reading)
    assert page is not None
    shown = json.dumps(page.to_json(), ensure_ascii=False).lower()
    assert not [w for w in LATER if w in shown], shown
    assert {r.other.lower() for r in page.relations} == {"forest", "lantern"}
    cited = [c.chunk_id for r in page.relations for c in r.citations]
    assert _chapters(fox, cited) <= {0, 1}
    assert page.timeline and all(e.chunk is not None for e in page.timeline)
    mentioned = [f"{m.document_id}:{c:04d}" for m in page.mentions for c in m.chunks]
    assert _chapters(fox, mentioned) <= {0, 1}
    assert page.summary_method == METHOD_READ and page.history == []
    # the whole story's page has the later facts, and its stored summary is left as it was
    whole = pages.page("fox")
    assert whole is not None and {"owl", "castle"} <= {r.other.lower() for r in whole.relations}


def test_an_entity_first_named_later_has_no_page_and_is_not_listed(fox: Services) -> None:
    pages = EntityPages(fox.store)
    assert pages.page("owl", reading=reading_for(fox.store, 1)) is None
    assert pages.page("castle", reading=reading_for(fox.store, 2)) is None
    assert pages.page("castle", reading=reading_for(fox.store, 3)) is not None
    listed = pages.list(reading=reading_for(fox.store, 1))
    assert listed and not {i.id.lower() for i in listed} & set(LATER)
    fox_item = next(i for i in listed if i.id.lower() == "fox")
    assert fox_item.relations == 2 and "castle" not in fox_item.summary.lower()


def test_the_graph_drawn_up_to_chapter_one_holds_nothing_later(fox: Services) -> None:
    rows = read_rows(fox.store, reading_for(fox.store, 1), limit=100)
    ends = {n.lower() for row in rows for n in (row["start"], row["end"])}
    assert ends == {"fox", "forest", "lantern"}
    assert _chapters(fox, [c for row in rows for c in row["chunk_ids"]]) <= {0, 1}
    drawn = json.dumps(whole_graph(rows, max_nodes=50).edges, ensure_ascii=False).lower()
    assert "lantern" in drawn and not [w for w in LATER if w in drawn]
    whole = read_rows(fox.store, reading_for(fox.store, None), limit=100)
    assert {"owl", "castle", "golden key"} <= {row["end"].lower() for row in whole}


def test_the_graph_of_a_chapter_range_holds_those_chapters_alone(fox: Services) -> None:
    doc = fox.store.list_documents()[0].id
    rows = read_rows(fox.store, reading_for(fox.store, 2, (doc,), since=2), limit=100)
    assert {row["end"].lower() for row in rows} == {"forest", "owl"}
    assert _chapters(fox, [c for row in rows for c in row["chunk_ids"]]) == {2}


def test_entity_until_on_the_command_line(
    fox: Services, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STORYGRAPH_DATA_DIR", str(fox.settings.data_dir))
    fox.close()
    assert main(["entity", "fox", "--until", "1", "--json"]) == 0
    shown = capsys.readouterr().out.lower()
    assert "lantern" in shown and not [w for w in LATER if w in shown]
    assert main(["entity", "owl", "--until", "1"]) == 1
    assert "read" in capsys.readouterr().err


def test_a_model_naming_a_later_character_is_caught_and_not_repeated(
    fox: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model that knows the tale may name the owl up to chapter 1: the checks still know
    every name, so the answer is not shown (even where every answer is shown with its label),
    and no warning or verdict spells the name out."""
    monkeypatch.setattr(scripted_logic, "answer", lambda prompt: "The owl. [1]")
    answer = _ask(fox, "Who did the fox meet?", 1)
    assert "owl" not in answer.answer.lower()
    assert not [w for w in answer.warnings if "owl" in w.lower()], answer.warnings
    assert any(NOT_YET in w for w in answer.warnings)
    assert answer.support is not None and answer.support.check == "reading"
    assert "owl" not in answer.support.reason.lower()


def test_ask_until_json_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI with no model (the parser reads the story): `--until 1` cites chapter 1 only."""
    monkeypatch.setenv("STORYGRAPH_DATA_DIR", str(tmp_path / "data"))
    story = tmp_path / "fox.txt"
    story.write_text(STORY, encoding="utf-8")
    assert main(["ingest", str(story), "--no-llm"]) == 0
    capsys.readouterr()
    assert main(["ask", KEY, "--no-llm", "--until", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["citations"]
    assert all(c["chapter"] in (0, 1) for c in result["citations"])
    assert main(["ask", KEY, "--no-llm", "--until", "3", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert any(c["chapter"] == 3 for c in result["citations"])
    assert all(isinstance(c["chapter"], int) and c["chapter"] <= 3 for c in result["citations"])


def test_ask_until_json_holds_nothing_later_anywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ask --until 2 --json`: every citation names its chapter, none past 2, and no chunk id
    or story position anywhere in the JSON (facts, entities, trace) is of a later chapter."""
    monkeypatch.setenv("STORYGRAPH_DATA_DIR", str(tmp_path / "data"))
    story = tmp_path / "fox.txt"
    story.write_text(STORY, encoding="utf-8")
    assert main(["ingest", str(story), "--no-llm"]) == 0
    capsys.readouterr()
    assert main(["ask", "What did the fox find?", "--no-llm", "--until", "2", "--json"]) == 0
    out = capsys.readouterr().out
    result = json.loads(out)
    assert result["citations"]
    assert all(isinstance(c["chapter"], int) and c["chapter"] <= 2 for c in result["citations"])
    assert "golden key" not in out.lower() and "castle" not in out.lower()
    built = build_services(Settings(data_dir=tmp_path / "data"), llm=ScriptedChatModel())
    try:
        doc = built.store.list_documents()[0].id
        indexes = {int(i) for i in re.findall(re.escape(doc) + r":(?:\d{8}:)?(\d{4})", out)}
        assert indexes
        chapters = _chapters(built, [f"{doc}:{i:04d}" for i in indexes])
        assert chapters and max(chapters) <= 2, chapters
    finally:
        built.close()
