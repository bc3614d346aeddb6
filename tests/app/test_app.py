"""The Streamlit app in AppTest: real app.py and pages/, real store, scripted model."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from pages.common import SERVICES_KEY
from storygraph.errors import StoreError
from storygraph.services import Services, build_services
from storygraph.settings import Settings
from tests.helpers.scripted_model import ScriptedChatModel

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "storygraph" / "samples" / "momotaro_kusuyama.txt"


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    built = build_services(Settings(data_dir=tmp_path / "data"), llm=ScriptedChatModel())
    yield built
    built.close()


def _app(services: Services) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state[SERVICES_KEY] = services
    at.run()
    assert not at.exception, at.exception
    return at


def _texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += (
        [e.value for e in at.error] + [w.value for w in at.warning] + [i.value for i in at.info]
    )
    parts += [d.value.to_csv() for d in at.dataframe]  # the trace tables
    return "\n".join(str(p) for p in parts)


def _ask(at: AppTest, question: str) -> AppTest:
    at.chat_input(key="chat_input").set_value(question).run()
    assert not at.exception, at.exception
    return at


def test_the_app_opens_with_its_tabs_and_model_badge(services: Services) -> None:
    at = _app(services)
    labels = [t.label for t in at.tabs]
    assert labels[:3] == ["Ingest", "Chat", "Graph"]
    assert "Retrieval lab" in labels
    assert "embedded FalkorDB" in _texts(at)
    assert not at.error


def test_sample_story_button_ingests_and_reports(services: Services) -> None:
    at = _app(services)
    at.button(key="ingest_sample").click().run()
    assert not at.exception, at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Chunks"]) > 1
    added, _merged = metrics["Entities added / merged"].split(" / ")
    assert int(added) > 5
    assert int(metrics["LLM calls"]) == int(metrics["Chunks"])
    docs = services.store.list_documents()
    assert [d.name for d in docs] == ["momotaro_kusuyama.txt"]
    assert at.button(key=f"delete_{docs[0].id}")  # listed with its delete button


def test_upload_shows_an_estimate_then_ingests(services: Services) -> None:
    at = _app(services)
    uploader = at.file_uploader[0]
    uploader.set_value(("momotaro.txt", SAMPLE.read_bytes(), "text/plain")).run()
    assert not at.exception, at.exception
    assert any("call" in str(i.value).lower() for i in at.info), _texts(at)  # the estimate
    at.button(key="ingest_add").click().run()
    assert not at.exception, at.exception
    assert [d.name for d in services.store.list_documents()] == ["momotaro.txt"]
    assert any("Estimated before the ingest vs actual" in e.label for e in at.expander)


def test_an_empty_upload_gets_a_clear_error_and_stores_nothing(services: Services) -> None:
    at = _app(services)
    at.file_uploader[0].set_value(("empty.txt", b"", "text/plain")).run()
    at.button(key="ingest_add").click().run()
    assert not at.exception, at.exception
    assert any("empty" in str(e.value).lower() for e in at.error), _texts(at)
    assert services.store.list_documents() == []


def test_asking_shows_the_answer_citations_and_trace(services: Services) -> None:
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    at = _ask(_app(services), "桃太郎の仲間は誰？")
    assert [m.name for m in at.chat_message][-2:] == ["user", "assistant"]
    text = _texts(at)
    assert "桃太郎" in text and "[1]" in text
    expanders = [e.label for e in at.expander]
    assert any(label.startswith("[1] momotaro.txt") for label in expanders)
    assert any("How this was answered" in label for label in expanders)
    assert "BECOMES_COMPANION_OF" in text  # candidate facts with scores in the trace
    assert "onehop+qtype+reltype+rerank" in text  # the mode that answered


def test_switching_the_mode_changes_what_answers(services: Services) -> None:
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    at = _app(services)
    at.selectbox(key="chat_mode").set_value("undirected2").run()
    _ask(at, "桃太郎の仲間は誰？")
    assert "undirected2" in _texts(at)


def test_deleting_a_document_from_the_list(services: Services) -> None:
    report = services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    at = _app(services)
    at.button(key=f"delete_{report.document_id}").click().run()
    assert not at.exception, at.exception
    assert services.store.list_documents() == []
    assert services.store.stats()["relations"] == 0
    assert "Deleted momotaro.txt" in "\n".join(str(s.value) for s in at.success)


def test_a_store_failure_is_an_error_message_and_the_app_keeps_working(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    at = _app(services)
    real = services.store.retrieve

    def broken(mode: str, ids: object) -> object:
        raise StoreError("The graph database is not answering.", "Restart the app.")

    monkeypatch.setattr(services.store, "retrieve", broken)
    _ask(at, "桃太郎の仲間は誰？")
    assert any("not answering" in str(e.value) for e in at.error)
    assert any("Restart the app" in str(i.value) for i in at.info)
    monkeypatch.setattr(services.store, "retrieve", real)
    _ask(at, "桃太郎の仲間は誰？")
    assert [m.name for m in at.chat_message][-2:] == ["user", "assistant"]
    assert "BECOMES_COMPANION_OF" in _texts(at)


def test_a_failing_model_falls_back_and_says_so(services: Services) -> None:
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    services.llm_override = ScriptedChatModel(
        faults={"rerank": TimeoutError("slow"), "answer": TimeoutError("slow")}
    )
    at = _ask(_app(services), "桃太郎の仲間は誰？")
    text = _texts(at)
    # the trace names the fallback and its cause, and the answer says it shows the facts
    assert "the rerank fell back to a lexical score" in text
    assert "rerank fell back to the lexical scorer: TimeoutError: slow" in text
    assert "→ lexical fallback" in text  # the rerank method shown in the trace's summary
    assert "showing the facts instead" in text
    assert not at.exception


def test_a_name_with_script_tags_is_text_in_the_graph_tab(services: Services) -> None:
    from storygraph.graph_io import import_graph

    import_graph(
        services.store,
        {
            "nodes": [
                {"id": "<script>alert(1)</script>", "type": "Character"},
                {"id": "桃太郎", "type": "Character"},
            ],
            "relationships": [
                {"source": "<script>alert(1)</script>", "type": "MEETS", "target": "桃太郎"}
            ],
        },
    )
    at = _ask(_app(services), "<script>alert(1)</script>は誰に会った？")
    frames = [str(h.proto.srcdoc) for h in at.get("iframe")]
    assert frames, "the graph tab draws the last answer in an iframe"
    html = "\n".join(frames)
    assert "alert(1)" in html  # the node is drawn ...
    assert "<script>alert(1)</script>" not in html  # ... as escaped text, never as a tag
    assert not at.exception


def test_the_doctor_tab_runs_the_checks_with_the_apps_model(services: Services) -> None:
    at = _app(services)
    at.button(key="doctor_run").click().run()
    assert not at.exception, at.exception
    text = _texts(at)
    # The scripted model answers the doctor's probe without a tool call and with no JSON, so
    # the verdict is "not healthy" because of tool calling, and every check is listed.
    assert [str(e.value) for e in at.error] == ["Not healthy: ScriptedChatModel (scripted)"]
    assert ":material/error: **tool calling**" in text
    assert not at.success
    for name in ("settings", "japanese readings", "graph store", "model answers", "tool calling"):
        assert f"**{name}**" in text, text
    store_line = next(line for line in text.splitlines() if "**graph store**" in line)
    assert store_line.startswith(":material/check_circle: **graph store**: embedded FalkorDB")
    assert store_line.endswith(r"reachable, 0 document\(s\)"), store_line  # markdown-escaped


def test_a_tab_whose_module_does_not_import_shows_the_error_in_its_place(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken import is a bug to see, not a feature that quietly disappears."""
    monkeypatch.setitem(sys.modules, "pages.lab", None)  # `import pages.lab` raises ImportError
    at = _app(services)
    assert [t.label for t in at.tabs] == ["Ingest", "Chat", "Graph", "Retrieval lab", "Doctor"]
    errors = [str(e.value) for e in at.error]
    assert any(e.startswith("The Retrieval lab tab failed: ModuleNotFoundError") for e in errors)


def test_a_broken_estimate_module_is_an_error_not_a_missing_estimate(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "pages.ingest", raising=False)  # imported afresh
    monkeypatch.setitem(sys.modules, "storygraph.estimate", None)
    at = _app(services)
    errors = [str(e.value) for e in at.error]
    assert any(e.startswith("The Ingest tab failed: ") for e in errors), errors
