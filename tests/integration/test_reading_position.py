"""Chapters and the reading position on the real embedded FalkorDB (issue #41 items 1-2,
docs/ISSUES.md#chapters): a made-up story of three chapters ingested with the scripted model at
the model boundary; every citation carries its chapter, and an answer asked "up to chapter 1"
cites nothing later, while the same question up to chapter 3 cites chapter 3."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storygraph.cli import main
from storygraph.llm.factory import ModelInfo
from storygraph.models import Answer
from storygraph.qa.pipeline.engine import QAEngine
from storygraph.qa.pipeline.factory import build_engine
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.scope.reading import SO_FAR
from storygraph.services import Services
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
    return _engine(services).ask(question, QAOptions(until=until, verify="rules"))


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
