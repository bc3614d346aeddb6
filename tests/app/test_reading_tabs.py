"""The Chat tab's "I have read up to…" holds the Graph and Entities tabs too (issue #41.2,
docs/ISSUES.md#chapters): with the made-up three-chapter story read up to chapter 1, neither
tab draws, lists or opens anything of chapters 2 and 3; the Graph tab's chapter range starts at
that position."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pages.chat import READ_KEY, READ_STORY_KEY
from pages.common import SERVICES_KEY, TAB_KEY
from pages.entities import SELECTED_KEY
from storygraph.services import Services, build_services
from storygraph.settings import Settings
from tests.app.test_app import _whole_graph_nodes
from tests.helpers import scripted_logic
from tests.helpers.scripted_model import ScriptedChatModel
from tests.integration.test_reading_position import LATER, STORY, TRIPLES

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    model = ScriptedChatModel(script=scripted_logic.Script(triples=TRIPLES))
    built = build_services(Settings(data_dir=tmp_path / "data", no_llm=True), llm=model)
    report = built.ingestor().ingest_bytes("fox.txt", STORY.encode("utf-8"))
    assert report.status == "added", report.message
    yield built
    built.close()


def _tab(services: Services, label: str, until: int | None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state[SERVICES_KEY] = services
    doc = services.store.list_documents()[0].id
    if until is not None:
        at.session_state[READ_STORY_KEY] = doc
        at.session_state[f"{READ_KEY}:{doc}"] = until
    at.session_state[TAB_KEY] = label
    at.run()
    assert not at.exception, at.exception
    return at


def test_the_graph_tab_draws_nothing_past_the_chats_position(services: Services) -> None:
    nodes, _ = _whole_graph_nodes(_tab(services, "Graph", 1))
    drawn = {str(n["fullLabel"]).lower() for n in nodes}
    assert drawn == {"fox", "forest", "lantern"}, drawn
    nodes, _ = _whole_graph_nodes(_tab(services, "Graph", None))
    assert {"owl", "castle"} <= {str(n["fullLabel"]).lower() for n in nodes}


def test_the_entities_tab_lists_and_opens_nothing_past_the_chats_position(
    services: Services,
) -> None:
    at = _tab(services, "Entities", 1)
    listed = " ".join(b.label for b in at.button).lower()
    assert "fox" in listed and not [w for w in LATER if w in listed], listed
    at.session_state[SELECTED_KEY] = "owl"
    at.run()
    assert any("read so far" in w.value for w in at.warning)


def test_the_graph_tabs_chapter_range_starts_at_the_position_and_draws_those_chapters(
    services: Services,
) -> None:
    doc = services.store.list_documents()[0].id
    at = _tab(services, "Graph", 1)
    at.selectbox(key="graph_document").set_value(doc).run()
    assert not at.exception, at.exception
    chapters = at.select_slider(key=f"graph_chapters:{doc}:1")
    assert tuple(chapters.value) == (0, 1)  # up to the chat's position
    nodes, _ = _whole_graph_nodes(at)
    assert {str(n["fullLabel"]).lower() for n in nodes} == {"fox", "forest", "lantern"}
    chapters.set_value((2, 2)).run()
    assert not at.exception, at.exception
    nodes, _ = _whole_graph_nodes(at)
    assert {str(n["fullLabel"]).lower() for n in nodes} == {"fox", "forest", "owl"}
