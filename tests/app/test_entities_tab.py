"""The Entities tab in AppTest: real app.py and pages/, real store, scripted model."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pages.common import SERVICES_KEY, TAB_KEY, md_escape
from pages.entities import SELECTED_KEY, widget_key
from storygraph.services import Services, build_services
from storygraph.settings import Settings
from tests.helpers.scripted_model import ScriptedChatModel

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "storygraph" / "samples" / "momotaro_kusuyama.txt"


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    built = build_services(Settings(data_dir=tmp_path / "data"), llm=ScriptedChatModel())
    report = built.ingestor().ingest_bytes("momotaro_kusuyama.txt", SAMPLE.read_bytes())
    assert report.status == "added", report.message
    yield built
    built.close()


def _app(services: Services, selected: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state[SERVICES_KEY] = services
    at.session_state[TAB_KEY] = "Entities"  # only the open tab is drawn
    if selected is not None:
        at.session_state[SELECTED_KEY] = selected
    at.run()
    assert not at.exception, at.exception
    return at


def _texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [i.value for i in at.info] + [w.value for w in at.warning]
    parts += [d.value.to_csv() for d in at.dataframe]
    return "\n".join(str(p) for p in parts)


def test_the_entities_tab_lists_searches_and_opens_one_page(services: Services) -> None:
    at = _app(services)
    assert "Entities" in [t.label for t in at.tabs]
    assert "Pick an entity on the left" in _texts(at)
    labels = [b.label for b in at.button]
    assert any(label.startswith("桃太郎 · ") for label in labels)

    at.text_input(key="entities_search").set_value("きじ").run()
    assert not at.exception, at.exception
    listed = [b.label for b in at.button if b.key and b.key.startswith("entity_open_")]
    assert listed and all("きじ" in label for label in listed), listed

    at.text_input(key="entities_search").set_value("").run()
    key = next(r["key"] for r in services.store.entity_names() if r["id"] == "桃太郎")
    at.button(key=widget_key("entity_open", key)).click().run()
    assert not at.exception, at.exception
    assert at.session_state[SELECTED_KEY] == key  # the key: one story's entity
    text = _texts(at)
    assert "### 桃太郎" in text
    # both directions, each relation by the label people see (the type stays in Cypher)
    assert re.search(r"\*\*Relations from it\*\* \([1-9]", text), text
    assert re.search(r"\*\*Relations to it\*\* \([1-9]", text), text
    assert "gives dumpling to" in text  # a model's English type, as words
    assert "Timeline" in " ".join(e.label for e in at.expander)
    # the page and its mentions name the document; the sources, their places in it
    assert md_escape("momotaro_kusuyama.txt") in text

    # one page at a time: opening a neighbour replaces it
    at.button(key=widget_key("entity_related", "犬")).click().run()
    assert at.session_state[SELECTED_KEY] == key.replace("桃太郎", "犬")  # in the same story
    assert "### 犬" in _texts(at) and "### 桃太郎" not in _texts(at)
    at.button(key="entity_close").click().run()
    assert at.session_state[SELECTED_KEY] is None


def test_the_session_state_route_opens_a_page(services: Services) -> None:
    """What a node click in the Graph tab does: set `selected_entity`, by id or by name."""
    at = _app(services, selected="桃太郎")
    text = _texts(at)
    assert "### 桃太郎" in text and "history" in " ".join(e.label for e in at.expander).lower()
    at = _app(services, selected="竜宮城")
    assert "No entity called 「竜宮城」" in _texts(at)


def test_a_name_with_markup_is_text_on_its_page(services: Services) -> None:
    from storygraph.ingest.graph_io import import_graph

    nasty = "<script>alert(1)</script> *Ogre*"
    import_graph(
        services.store,
        {
            "nodes": [{"id": nasty, "type": "Character"}],
            "relationships": [{"source": nasty, "type": "FIGHTS", "target": "桃太郎"}],
        },
    )
    at = _app(services, selected=nasty)
    headings = [m.value for m in at.markdown if str(m.value).startswith("### ")]
    assert headings == ["### \\<script\\>alert\\(1\\)\\</script\\> \\*Ogre\\*"]
    assert "FIGHTS" in _texts(at)


def test_a_name_two_stories_use_is_listed_once_per_story(
    services: Services, shared_dir: Path
) -> None:
    other = shared_dir / "stories" / "ja" / "momotaro_akutagawa.txt"
    report = services.ingestor().ingest_bytes("momotaro_akutagawa.txt", other.read_bytes())
    assert report.status == "added", report.message
    at = _app(services)
    at.text_input(key="entities_search").set_value("桃太郎").run()
    assert not at.exception, at.exception  # no duplicate widget for the shared name
    listed = [b.label for b in at.button if b.key and b.key.startswith("entity_open_")]
    assert sorted(listed) == [  # labels are Markdown-escaped
        "桃太郎 · Character · momotaro\\_akutagawa\\.txt",
        "桃太郎 · Character · momotaro\\_kusuyama\\.txt",
    ]
    keys = sorted(r["key"] for r in services.store.entity_names() if r["id"] == "桃太郎")
    at.button(key=widget_key("entity_open", keys[0])).click().run()
    story = next(r["document_id"] for r in services.store.entity_names() if r["key"] == keys[0])
    name = {d.id: d.name for d in services.store.list_documents()}[story]
    assert f"**Story:** {md_escape(name)}" in _texts(at)
    # the deliberate act: "same one" links the two stories' 桃太郎, recorded and undoable
    picker = at.selectbox(key=widget_key("entity_same_pick", keys[0]))
    assert picker.options[0].startswith("桃太郎 · ")  # the same name first
    picker.set_value(keys[1]).run()
    at.button(key=widget_key("entity_merge", keys[0])).click().run()
    assert not at.exception, at.exception
    node = services.store.entity_page_node(keys[0])
    assert node is not None and node["twins"] == [keys[1]]
    at.button(key=widget_key("entity_unmerge", keys[0] + keys[1])).click().run()
    assert not at.exception, at.exception
    node = services.store.entity_page_node(keys[0])
    assert node is not None and node["twins"] == []


def test_an_entity_page_reads_in_the_storys_words(services: Services) -> None:
    """Relations and the timeline show the story's verbs (no Cypher type, no romaji), each
    timeline row its sentence, and the summary's date is a date, not a raw timestamp."""
    import re

    at = _app(services, selected="桃太郎")
    tables = [d.value for d in at.dataframe if {"relation", "with"} <= set(d.value.columns)]
    labels = [str(v) for t in tables for v in t["relation"]]
    assert labels, _texts(at)
    assert not [v for v in labels if re.search(r"[A-Z]{3,}|_", v)], labels
    timeline = next(e for e in at.expander if e.label.startswith("Timeline"))
    rows = [str(m.value) for m in timeline.markdown]
    assert rows and all("→" in r and "-[" not in r for r in rows), rows
    assert len(timeline.caption) >= len(rows) // 2  # the rows' sentences
    summary = next(c.value for c in at.caption if str(c.value).startswith("Summary:"))
    assert not re.search(r"\d{4}-\d\d-\d\dT", summary), summary


def test_an_entity_page_lists_the_character_s_lines(services: Services) -> None:
    at = _app(services, selected="桃太郎")
    lines = next(e for e in at.expander if e.label.startswith("Lines ("))
    rows = [str(m.value) for m in lines.markdown]
    assert rows and all(r.startswith("- 「") for r in rows), rows
    assert any("鬼が島へ鬼せいばつに行こうと思います。" in r for r in rows), rows


def test_an_entity_pages_relation_tables_keep_their_sources_in_sight(services: Services) -> None:
    """The short columns come first at fixed widths and the long evidence last, so the sources
    show whole in the page's column of a 1400 px window (~720 px); a chunk of the page's own
    story is named by its place there, not by the story's name again, and the story order is a
    character offset, not the internal key it sorts by."""
    import json

    from pages.entities import RELATION_COLUMNS

    at = _app(services, selected="桃太郎")
    grids = [d for d in at.dataframe if {"relation", "with"} <= set(d.value.columns)]
    assert grids, _texts(at)
    for grid in grids:
        assert list(grid.proto.column_order) == list(RELATION_COLUMNS)
        assert list(grid.proto.column_order)[-1] == "evidence"
        config = json.loads(grid.proto.columns)
        fixed = [config[name]["width"] for name in list(RELATION_COLUMNS)[:-1]]
        assert all(isinstance(w, int) for w in fixed) and sum(fixed) <= 720 - 100, config
        assert config["sources"]["width"] >= 150, config
        sources = [str(s) for s in grid.value["sources"]]
        assert sources and all(s.startswith("#") or "章" in s for s in sources), sources
        assert not any("momotaro_kusuyama.txt" in s for s in sources), sources
        # story order: the character where the story first states it, not its internal key
        order = grid.value["story order"].dropna()
        assert len(order) and all(float(o).is_integer() and o >= 0 for o in order), order
