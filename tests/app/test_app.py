"""The Streamlit app in AppTest: real app.py and pages/, real store, scripted model."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from pages.chat import HISTORY_KEY, ChatTurn
from pages.common import SERVICES_KEY, TAB_KEY
from pages.graph import SELECTED_ENTITY_KEY
from storygraph.errors import StoreError
from storygraph.library.relation_labels import relation_label
from storygraph.qa.pipeline.explain import CUT_MARK
from storygraph.services import Services, build_services
from storygraph.settings import Settings
from tests.helpers.scripted_logic import MOMOTARO_JA, Script
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


def _after_jobs(at: AppTest, services: Services) -> AppTest:
    """Ingest runs as a background job: wait for it, then draw the app again."""
    services.job_runner().wait_idle(120)
    at.run()
    assert not at.exception, at.exception
    return at


def _open_tab(at: AppTest, label: str) -> AppTest:
    """Select a tab as a click would (the tabs are keyed, so their choice is session state)."""
    at.session_state[TAB_KEY] = label
    at.run()
    assert not at.exception, at.exception
    return at


def _ask(at: AppTest, question: str) -> AppTest:
    if not at.chat_input:
        _open_tab(at, "Chat")
    at.chat_input(key="chat_input").set_value(question).run()
    assert not at.exception, at.exception
    return at


def test_the_app_opens_with_its_tabs_and_model_badge(services: Services) -> None:
    at = _app(services)
    labels = [t.label for t in at.tabs]
    assert labels[:3] == ["Ingest", "Chat", "Graph"]
    assert "Retrieval lab" in labels
    for encoding in ("UTF-8", "UTF-16", "Shift_JIS", "EUC-JP"):
        assert encoding in _texts(at)
    assert not at.error
    _open_tab(at, "Chat")  # only the open tab is drawn
    badges = [str(m.value) for m in at.markdown if "badge[" in str(m.value)]
    assert any("embedded FalkorDB" in b for b in badges), badges
    assert not any(str(services.settings.data_dir) in b for b in badges), badges
    assert not at.error


def test_sample_story_button_ingests_and_reports(services: Services) -> None:
    at = _app(services)
    at.button(key="ingest_sample").click().run()
    assert not at.exception, at.exception
    _after_jobs(at, services)
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
    _after_jobs(at, services)
    assert [d.name for d in services.store.list_documents()] == ["momotaro.txt"]
    assert any("Estimated before the ingest vs actual" in e.label for e in at.expander)


def test_asking_shows_the_answer_its_sources_and_trace(services: Services) -> None:
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    at = _ask(_app(services), "桃太郎の仲間は誰？")
    assert [m.name for m in at.chat_message][-2:] == ["user", "assistant"]
    text = _texts(at)
    assert "桃太郎" in text and "[1]" in text
    sources = [m.value.replace("\\", "") for m in at.chat_message[-1].markdown]
    assert any(s.startswith("**[1]** momotaro.txt") for s in sources), sources
    assert any(e.label.startswith("Details") for e in at.expander)
    assert "BECOMES_COMPANION_OF" in text  # candidate facts with scores in the trace
    assert "onehop+qtype+reltype+rerank" in text  # the mode that answered


def _upload(at: AppTest, *files: tuple[str, bytes]) -> AppTest:
    at.file_uploader[0].set_value([(n, d, "text/plain") for n, d in files]).run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize(
    "name, data",
    [("empty.txt", b""), ("binary.txt", bytes(range(256)) * 8)],
    ids=["empty", "binary"],
)
def test_an_invalid_file_gets_an_error_and_add_stays_disabled(
    services: Services, name: str, data: bytes
) -> None:
    at = _upload(_app(services), (name, data))
    assert any(name in str(e.value) and "cannot be added" in str(e.value) for e in at.error), (
        _texts(at)
    )
    add = at.button(key="ingest_add")
    assert add.disabled
    assert add.label.startswith("Add 0 files")
    # With a valid file next to it, only the valid one is offered.
    at = _upload(at, (name, data), ("momotaro.txt", SAMPLE.read_bytes()))
    add = at.button(key="ingest_add")
    assert not add.disabled and add.label.startswith("Add 1 file ")
    add.click().run()
    _after_jobs(at, services)
    assert [d.name for d in services.store.list_documents()] == ["momotaro.txt"]


def test_the_parser_estimate_shows_a_line_for_every_uploaded_file(tmp_path: Path) -> None:
    # The parser path makes no model call, so the page shows the per-file lines as captions
    # rather than the full summary; it showed only the first file's (the summary's first line).
    built = build_services(Settings(data_dir=tmp_path / "data", no_llm=True))
    try:
        assert built.extractor().name.startswith("parser")
        other = "桃太郎は犬に会いました。".encode()
        at = _upload(_app(built), ("momotaro.txt", SAMPLE.read_bytes()), ("other.txt", other))
        lines = [
            str(c.value)
            for c in at.caption
            if str(c.value).startswith(("momotaro.txt: ", "other.txt: "))
        ]
        assert [line.split(":")[0] for line in lines] == ["momotaro.txt", "other.txt"], _texts(at)
        assert all("chunk" in line for line in lines), lines
        assert not at.button(key="ingest_add").disabled
    finally:
        built.close()


def test_the_estimate_uses_the_rate_measured_on_this_data_directory(services: Services) -> None:
    from storygraph.humanize import duration
    from storygraph.ingest.measured_rate import RateBook
    from storygraph.models import IngestReport, Usage

    recorded = IngestReport("earlier.txt", status="added", chunks=4, seconds=100.0)
    recorded.usage = Usage(calls=4, prompt_tokens=800, completion_tokens=200)  # 10 tokens/s
    RateBook(services.settings.data_dir).record(services.info.label, recorded)

    at = _app(services)
    sample_caption = next(c.value for c in at.caption if "The sample story" in c.value)
    assert "LLM call" in sample_caption  # the sample's estimate shows before it is ingested
    at = _upload(at, ("momotaro.txt", SAMPLE.read_bytes()))
    summary = next(str(i.value) for i in at.info if "LLM call" in str(i.value))
    assert "measured on this machine: 10.0 tokens/s, 25 s per chunk" in summary, summary
    total = re.search(r"~([\d,]+) prompt \+ ~([\d,]+) completion tokens, ~(.+?)[ ,.(]", summary)
    assert total, summary
    tokens = int(total[1].replace(",", "")) + int(total[2].replace(",", ""))
    assert total[3] == duration(tokens / 10.0).split(" ")[0]
    assert f"~{duration(tokens / 10.0)}" in summary


def _chat(at: AppTest) -> str:
    """Texts of the latest assistant message (not of the collapsed older turns)."""
    message = at.chat_message[-1]
    parts = [m.value for m in message.markdown] + [c.value for c in message.caption]
    return "\n".join(str(p) for p in parts)


def test_an_answer_lists_the_sources_it_cites_and_keeps_the_rest_one_click_away(
    services: Services,
) -> None:
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    services.llm_override = ScriptedChatModel(faults={"answer": "text:猿が仲間です。[2]"})
    # every answer shown with its verdict: the sources listed are what is tested here
    services.settings = services.settings.model_copy(update={"verify": "label"})
    at = _ask(_app(services), "桃太郎の仲間は誰？")
    answer = _last_turn(at).answer
    assert answer is not None and len(answer.citations) >= 3  # several sources behind the facts
    message = at.chat_message[-1]
    sources = [m.value for m in message.markdown if re.match(r"\*\*\[\d+\]\*\*", m.value)]
    rest = next(e for e in at.chat_message[-1].expander if "more source" in e.label)
    in_rest = [m.value for m in rest.markdown]
    assert [s for s in sources if s not in in_rest] == [
        m for m in sources if m.startswith("**[2]**")
    ]
    assert len(in_rest) == len(answer.citations) - 1
    assert not any(v.startswith("**[2]**") for v in in_rest)
    assert rest.label.startswith(f"{len(answer.citations) - 1} more sources")


def test_a_source_found_by_sentence_search_says_so(services: Services) -> None:
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    services.llm_override = ScriptedChatModel(faults={"answer": "text:十五です。[1]"})
    at = _ask(_app(services), "桃太郎は何歳になった？")
    answer = _last_turn(at).answer
    assert answer is not None
    found = [c for c in answer.citations if c.kind == "sentence"]
    assert found and len(found) < len(answer.citations)  # both kinds among the sources
    message = at.chat_message[-1]
    every = [m.value for m in message.markdown]
    every += [m.value for e in message.expander for m in e.markdown]
    for c in answer.citations:
        shown = next(v for v in every if v.startswith(f"**[{c.number}]**"))
        assert ("*sentence search*" in shown) == (c.kind == "sentence"), shown
    assert "sentence search added" in _chat(at)


def test_an_imported_graphs_fact_is_its_own_source(services: Services, shared_dir: Path) -> None:
    """A fact with no story sentence (an imported graph's) is cited as itself, labelled so,
    and has no chunk to list among the details' source chunks."""
    from storygraph.ingest.graph_io import import_graph, load_graph_file

    import_graph(services.store, load_graph_file(shared_dir / "eval" / "seed_graph.json"))
    services.llm_override = ScriptedChatModel(faults={"answer": "text:鬼です。[1]"})
    at = _ask(_app(services), "桃太郎を倒したのは誰？")
    answer = _last_turn(at).answer
    assert answer is not None and answer.citations
    assert {c.kind for c in answer.citations} == {"graph"}
    cited = next(m.value for m in at.chat_message[-1].markdown if m.value.startswith("**[1]**"))
    assert "*a fact of the graph, no story sentence*" in cited
    first = answer.citations[0]
    assert first.text.startswith("鬼 -[") and all(w in cited for w in ("鬼", "桃太郎"))
    assert "Source chunks" not in _chat(at)


def test_an_answer_citing_nothing_lists_no_source_under_it(services: Services) -> None:
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    services.llm_override = ScriptedChatModel(faults={"answer": "text:わかりません。"})
    at = _ask(_app(services), "桃太郎の仲間は誰？")
    message = at.chat_message[-1]
    assert "Sources" not in [m.value for m in message.markdown if m.value == "**Sources**"]
    assert "**Sources**" not in [m.value for m in message.markdown]
    assert any("(none cited)" in e.label for e in message.expander)
    assert "cites none of the sources" in _chat(at)


def test_the_trace_is_plain_first_with_the_technical_detail_behind_an_expander(
    services: Services,
) -> None:
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    at = _ask(_app(services), "桃太郎の仲間は誰？")
    message = at.chat_message[-1]
    plain = next(c.value for c in message.caption if "Found " in c.value)
    assert plain.startswith("Found 桃太郎") and "3 were kept for the answer" in plain
    assert "the answer used" in plain and plain.endswith(".")
    for jargon in ("onehop", "who_", "cue", ":00", "MATCH"):
        assert jargon not in plain, plain
    details = next(e for e in message.expander if e.label.startswith("Details"))
    tables = [d.value.to_csv() for d in details.dataframe]
    detail_text = "\n".join(
        [str(m.value) for m in details.markdown] + [c.value for c in details.caption] + tables
    )
    assert "onehop+qtype+reltype+rerank" in detail_text  # the mode
    assert "BECOMES_COMPANION_OF" in detail_text  # every candidate, with its score
    assert "question type" in detail_text
    assert any(c.language == "cypher" for c in details.code)
    steps = details.dataframe[-1].value
    assert list(steps["step"]) == [
        "entities",
        "retrieval",
        "rerank",
        "sentences",
        "answer",
        "support",  # the answer checked against its sources (docs/ISSUES.md#support-check)
    ]


def test_scores_are_shown_on_the_0_to_10_scale_and_a_dash_where_there_is_none(
    services: Services,
) -> None:
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    at = _ask(_app(services), "鬼はどこに住んでいる？")
    answer = _last_turn(at).answer
    assert answer is not None
    assert max(f.score for f in answer.facts if f.score is not None) > 10  # the raw score leaks
    details = next(e for e in at.chat_message[-1].expander if e.label.startswith("Details"))
    table = next(d.value for d in details.dataframe if "score (0-10)" in d.value.columns)
    shown = list(table["score (0-10)"])
    assert "–" in shown  # set aside by the relation-type stage: never scored
    numbers = [float(v) for v in shown if v != "–"]
    assert numbers and all(0.0 <= v <= 10.0 for v in numbers)
    assert "10.0" in shown
    assert "None" not in shown


def _last_turn(at: AppTest) -> ChatTurn:
    return at.session_state[HISTORY_KEY][-1]


def test_the_conversation_survives_a_new_session_until_a_new_conversation(
    services: Services,
) -> None:
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    first = _ask(_app(services), "桃太郎の仲間は誰？")
    _ask(first, "桃太郎を倒したのは誰？")
    answered = _chat(first)

    again = _open_tab(_app(services), "Chat")  # a reload: a new session on the same data dir
    assert [m.name for m in again.chat_message][-2:] == ["user", "assistant"]
    assert _chat(again) == answered
    older = [e.label for e in again.expander if e.label.startswith("桃太郎の仲間は誰？")]
    assert older, "the earlier turn is collapsed into an expander"
    assert "桃太郎を倒したのは誰？" in [m.value for m in again.chat_message[-2].markdown]

    again.button(key="chat_new").click().run()
    assert not again.chat_message
    fresh = _open_tab(_app(services), "Chat")
    assert not fresh.chat_message
    assert fresh.button(key="chat_new").disabled


def test_a_whitespace_question_gets_a_message_and_no_turn(services: Services) -> None:
    at = _ask(_app(services), "   \n ")
    assert any("Type a question first" in str(w.value) for w in at.warning)
    assert not at.chat_message
    assert at.session_state[HISTORY_KEY] == []


def test_a_failed_upload_keeps_the_last_successful_report(services: Services) -> None:
    at = _app(services)
    at.button(key="ingest_sample").click().run()
    _after_jobs(at, services)
    assert "momotaro_kusuyama.txt" in _texts(at).replace("\\", "")
    services.llm_override = ScriptedChatModel(faults={"extract": TimeoutError("slow")})
    _upload(at, ("other.txt", "桃太郎は犬に会いました。".encode()))
    at.button(key="ingest_add").click().run()
    _after_jobs(at, services)
    headers = [h.value for h in at.subheader]
    assert headers[:3] == ["Add stories", "This upload failed", "Last ingest"]
    assert any("timed out" in str(e.value) for e in at.error), _texts(at)
    # The last successful report is the sample's, also for a new session.
    reloaded = _app(services)
    headers = [h.value for h in reloaded.subheader]
    assert "Last ingest" in headers and "This upload failed" not in headers
    assert "momotaro_kusuyama.txt" in _texts(reloaded).replace("\\", "")
    assert "other.txt" not in "\n".join(str(m.value) for m in reloaded.markdown)


def test_the_doctor_warns_about_a_model_that_extracts_implausible_facts(
    services: Services,
) -> None:
    planted = ("鬼が島", "Place", "DEFEATS", "鬼", "Character")  # an island defeating the oni
    services.llm_override = ScriptedChatModel(script=Script(triples=(*MOMOTARO_JA, planted)))
    at = _open_tab(_app(services), "Doctor")
    at.button(key="doctor_run").click().run()
    assert not at.exception, at.exception
    assert not at.success, "a weak model is not reported as healthy"
    assert not at.error, _texts(at)
    verdict = [str(w.value) for w in at.warning]
    assert any(v.startswith("Works, with warnings (extraction)") for v in verdict), verdict
    text = _texts(at).replace("\\", "")  # markdown escapes
    assert "鬼が島 -[DEFEATS]→ 鬼" in text, text
    assert "a place (鬼が島) as the subject of DEFEATS" in text


def test_switching_the_mode_changes_what_answers(services: Services) -> None:
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    at = _open_tab(_app(services), "Chat")
    at.selectbox(key="chat_mode").set_value("undirected2").run()
    _ask(at, "桃太郎の仲間は誰？")
    assert "undirected2" in _texts(at)


def test_delete_asks_first_says_what_went_and_can_be_undone(services: Services) -> None:
    report = services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    doc = report.document_id
    before = services.store.stats()
    facts_before = sorted(services.store.retrieve("onehop", ["桃太郎"]), key=repr)
    assert facts_before
    at = _app(services)

    at.button(key=f"delete_{doc}").click().run()  # asks first: nothing deleted yet
    assert not at.exception, at.exception
    assert services.store.stats() == before
    question = "\n".join(str(w.value) for w in at.warning).replace("\\", "")
    preview = services.store.removal_preview(doc)
    assert preview is not None
    assert "Delete **momotaro.txt**?" in question
    assert f"{preview.chunks} chunks, {preview.entities} entities and {preview.relations} " in (
        question
    )
    at.button(key=f"delete_cancel_{doc}").click().run()  # cancel keeps it
    assert not at.warning and services.store.stats() == before

    at.button(key=f"delete_{doc}").click().run()
    at.button(key=f"delete_confirm_{doc}").click().run()
    assert not at.exception, at.exception
    assert services.store.list_documents() == []
    assert services.store.stats()["relations"] == 0
    said = "\n".join(str(s.value) for s in at.success).replace("\\", "")
    assert "Deleted **momotaro.txt** today" in said
    assert f"removed its {preview.chunks} chunks, {preview.entities} entities and " in said

    at.button(key=f"undo_delete_{doc}").click().run()
    assert not at.exception, at.exception
    assert services.store.stats() == before
    facts_after = sorted(services.store.retrieve("onehop", ["桃太郎"]), key=repr)
    assert facts_after == facts_before  # the same facts answerable again
    said = "\n".join(str(s.value) for s in at.success)
    assert "Restored momotaro.txt" in said
    assert f"undo_delete_{doc}" not in [b.key for b in at.button]  # nothing left to undo


def test_a_store_failure_is_an_error_message_and_the_app_keeps_working(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    at = _app(services)
    real = services.store.retrieve

    def broken(*args: object, **kwargs: object) -> object:
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
    assert "the model's scores were unusable, so word matching ranked them" in text
    assert "rerank fell back to the lexical scorer: TimeoutError: slow" in text
    assert "→ lexical fallback" in text  # the rerank method shown in the trace's summary
    assert "showing the facts instead" in text
    assert not at.exception


def test_a_name_with_script_tags_is_text_in_the_graph_tab(services: Services) -> None:
    from storygraph.ingest.graph_io import import_graph

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
    at = _open_tab(_ask(_app(services), "<script>alert(1)</script>は誰に会った？"), "Graph")
    frames = [str(h.proto.srcdoc) for h in at.get("iframe")]
    assert frames, "the graph tab draws the last answer in an iframe"
    html = "\n".join(frames)
    assert "alert(1)" in html  # the node is drawn ...
    assert "<script>alert(1)</script>" not in html  # ... as escaped text, never as a tag
    assert not at.exception


def test_the_doctor_tab_runs_the_checks_with_the_apps_model(services: Services) -> None:
    at = _open_tab(_app(services), "Doctor")
    at.button(key="doctor_run").click().run()
    assert not at.exception, at.exception
    text = _texts(at)
    # The scripted model answers the doctor's probe with a real tool call: every check passes.
    assert [str(e.value) for e in at.success] == ["Healthy: ScriptedChatModel (scripted)"]
    assert not at.error and not at.warning
    checks = ("settings", "japanese readings", "sentence embeddings", "graph store")
    for name in (*checks, "model answers", "tool calling"):
        assert f":material/check_circle: **{name}**" in text, text
    assert ":material/check_circle: **extraction**: LLMGraphTransformer:" in text
    store_line = next(line for line in text.splitlines() if "**graph store**" in line)
    assert store_line.startswith(":material/check_circle: **graph store**: embedded FalkorDB")
    assert store_line.endswith(r"reachable, 0 document\(s\)"), store_line  # markdown-escaped


def test_picking_an_entity_in_the_graph_tab_lists_what_the_graph_knows(
    services: Services,
) -> None:
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    at = _open_tab(_app(services), "Graph")
    at.selectbox(key=SELECTED_ENTITY_KEY).set_value("桃太郎").run()
    assert not at.exception, at.exception
    assert at.session_state[SELECTED_ENTITY_KEY] == "桃太郎"  # other pages can open it
    graph_tab = next(t for t in at.tabs if t.label == "Graph")  # the Entities tab opens it too
    table = graph_tab.dataframe[-1].value
    stored = services.store.retrieve("onehop", ["桃太郎"])
    assert len(table) == len(stored) > 3
    # relations in the story's own verbs, never the graph's types (BECOMES_COMPANION_OF, SOROERU)
    labels = {relation_label(f.type, f.evidence) for f in stored}
    assert set(table["relation"]) == labels
    assert not {f.type for f in stored} & labels
    rows = set(zip(table["direction"], table["relation"], table["other"], strict=True))
    companion = next(f for f in stored if f.type == "BECOMES_COMPANION_OF" and f.start == "犬")
    assert ("←", relation_label(companion.type, companion.evidence), "犬") in rows


def test_a_fact_hidden_as_wrong_leaves_the_graph_and_answers_and_comes_back(
    services: Services,
) -> None:
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    wrong = next(
        f for f in services.store.retrieve("onehop", ["桃太郎"]) if f.type == "BECOMES_COMPANION_OF"
    )
    at = _open_tab(_app(services), "Graph")
    at.selectbox(key=SELECTED_ENTITY_KEY).set_value("桃太郎").run()
    picker = at.selectbox(key="graph_wrong_fact")
    line = f"{wrong.start} → {relation_label(wrong.type, wrong.evidence)} → {wrong.end}"
    picker.select_index(list(picker.options).index(line)).run()
    at.button(key="graph_hide_fact").click().run()
    assert not at.exception, at.exception
    said = "\n".join(str(s.value) for s in at.success).replace("\\", "")
    assert f"Hidden as wrong: {line}" in said
    key = (wrong.start, wrong.type, wrong.end)
    facts = services.store.retrieve("onehop", ["桃太郎"])
    assert key not in {(f.start, f.type, f.end) for f in facts}
    assert len(services.store.hidden_facts()) == 1

    at.button(key="graph_show_fact_0").click().run()  # the undo, under "Hidden as wrong"
    assert not at.exception, at.exception
    assert f"Shown again: {line}" in "\n".join(str(s.value) for s in at.success).replace("\\", "")
    assert key in {(f.start, f.type, f.end) for f in services.store.retrieve("onehop", ["桃太郎"])}
    assert services.store.hidden_facts() == []


def test_a_tab_whose_module_does_not_import_shows_the_error_in_its_place(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken import is a bug to see, not a feature that quietly disappears."""
    monkeypatch.setitem(sys.modules, "pages.lab", None)  # `import pages.lab` raises ImportError
    at = _open_tab(_app(services), "Retrieval lab")
    labels = [t.label for t in at.tabs]
    assert labels == ["Ingest", "Chat", "Graph", "Entities", "Retrieval lab", "Doctor"]
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


def test_the_chat_streams_the_answer_as_the_model_writes_it(services: Services) -> None:
    """The chat hands a token callback to the engine; the pieces it shows are the answer."""
    from pages.chat import ask
    from storygraph.llm.factory import ModelInfo
    from storygraph.qa.pipeline.parts import QAOptions

    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    services.info = ModelInfo("embedded", "scripted stand-in", capable=False)
    pieces: list[str] = []
    turn = ask(services, "桃太郎の仲間は誰？", QAOptions(), pieces.append)
    assert turn.answer is not None and not turn.error
    # the pieces are what the model wrote: the answer, or the one the support check did not
    # confirm and replaced (its trace keeps it)
    check = next(s for s in turn.answer.steps if s.name == "support")
    written = check.detail.get("model_answer") or turn.answer.answer
    assert pieces and "".join(pieces).strip() == written.strip()
    assert turn.answer.usage.calls == 1  # the small-model path: one streamed call
    # The same in the app: the finished answer replaces the streamed text.
    at = _ask(_app(services), "桃太郎の仲間は誰？")
    assert [m.name for m in at.chat_message][-2:] == ["user", "assistant"]
    assert turn.answer.answer.split("[")[0].strip() in _texts(at)


def test_the_story_picker_scopes_answers_and_is_kept_with_the_conversation(
    services: Services, shared_dir: Path
) -> None:
    ingest = services.ingestor()
    momo = ingest.ingest_bytes("momotaro.txt", SAMPLE.read_bytes()).document_id
    hana = (shared_dir / "stories" / "ja" / "hanasaka_jijii_kusuyama.txt").read_bytes()
    ingest.ingest_bytes("hanasaka.txt", hana)
    at = _open_tab(_app(services), "Chat")
    picker = at.multiselect(key="chat_stories")
    assert picker.value == [] and set(picker.options) == {"momotaro.txt", "hanasaka.txt"}
    picker.set_value([momo]).run()
    _ask(at, "おじいさんは何をしましたか？")
    turn = _last_turn(at)
    assert turn.stories == [momo] and turn.answer is not None and turn.answer.citations
    assert {c.document_name for c in turn.answer.citations} == {"momotaro.txt"}
    again = _open_tab(_app(services), "Chat")  # a new session starts from the last turn's choice
    assert again.multiselect(key="chat_stories").value == [momo]


def test_the_details_show_what_a_reader_asks_first_and_the_developer_view_one_click_deeper(
    services: Services,
) -> None:
    """Reader tab first: the facts used and set aside, with the story's own verbs and their
    sentences (no relation types, ids or Cypher); the developer tab keeps all of those."""
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    at = _ask(_app(services), "桃太郎の仲間は誰？")
    details = next(e for e in at.chat_message[-1].expander if e.label.startswith("Details"))
    reader, developer = details.tabs
    assert (reader.label, developer.label) == ("What the answer used", "For developers")
    assert not reader.dataframe  # a dataframe cuts its cells off; a table shows them whole
    used, aside = (t.value for t in reader.table)
    facts = list(used["fact"]) + list(aside["fact"])
    assert facts and all(" → " in f for f in facts)
    # no type, no romaji (a model's English type the sentence has no verb for, the scripted
    # GIVES_DUMPLING_TO, reads as words: "gives dumpling to")
    assert not [f for f in facts if re.search(r"[A-Z]|_", f)], facts
    assert all(str(s) for s in used["the story says"])  # each used fact with its sentence
    verbs = {f.split(" → ")[1] for f in facts}
    assert "たおす" in verbs or "退治する" in verbs, verbs  # DEFEATS, in the story's language
    # each fact's rank and, in words, why it was kept or set aside; no score in the reader's part
    assert list(used["rank"]) == [str(n) for n in range(1, len(used) + 1)]
    assert set(used["why"]) == {"kept: names 桃太郎 and the asked act"}
    assert all(str(w).startswith("set aside: ") for w in aside["why"])
    reader_text = "\n".join(
        [str(m.value) for m in reader.markdown] + [t.value.to_csv() for t in reader.table]
    )
    assert "桃太郎" in reader_text and "onehop" not in reader_text
    assert "of 10" not in reader_text and "score" not in reader_text
    assert not reader.code
    answer = _last_turn(at).answer
    assert answer is not None
    evidence = {f.evidence for f in answer.facts if f.evidence}
    assert evidence <= set(used["the story says"]) | set(aside["the story says"])  # whole
    # the sources under the answer: whole sentences, a chunk kept only cut ends at a sentence
    sources = [str(m.value) for m in at.chat_message[-1].markdown if str(m.value).startswith("**[")]
    assert sources
    for source in sources:
        said = source.split(" — ", 1)[1].replace("\\", "").rstrip()
        assert said.endswith(("。", "」", CUT_MARK)), said[-30:]
    dev_tables = "\n".join(d.value.to_csv() for d in developer.dataframe)
    assert "BECOMES_COMPANION_OF" in dev_tables
    assert any(c.language == "cypher" for c in developer.code)


def _whole_graph_nodes(at: AppTest) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The whole graph's drawn nodes and legend (the Graph tab's last iframe)."""
    html = str(at.get("iframe")[-1].proto.srcdoc)
    nodes = json.loads(re.search(r"new vis\.DataSet\((\[.*?\])\);", html, re.S)[1])  # type: ignore[index]
    legend = json.loads(re.search(r"var legend = (\[.*?\]);", html, re.S)[1])  # type: ignore[index]
    return nodes, legend


def test_the_graph_tab_colours_a_library_by_story_and_filters_one_story(
    services: Services,
) -> None:
    ingest = services.ingestor()
    momo = ingest.ingest_bytes("momotaro.txt", SAMPLE.read_bytes()).document_id
    # A second story with the same characters (the scripted model extracts the sample's text)
    again = SAMPLE.read_bytes() + "\nめでたし、めでたし。\n".encode()
    other = ingest.ingest_bytes("momotaro_again.txt", again).document_id
    at = _open_tab(_app(services), "Graph")
    at.number_input(key="graph_cap").set_value(1000).run()
    assert at.selectbox(key="graph_colour_by").value == "story"  # a library shown whole
    nodes, legend = _whole_graph_nodes(at)
    jiji = [n for n in nodes if n["fullLabel"] == "おじいさん"]
    assert sorted(n["story"] for n in jiji) == sorted([momo, other])  # one per story
    assert jiji[0]["color"] != jiji[1]["color"]
    named = {e["label"]: e["color"] for e in legend if e["kind"] == "node"}
    assert set(named) == {"momotaro.txt", "momotaro_again.txt"}
    stories = {momo: "momotaro.txt", other: "momotaro_again.txt"}
    assert all(named[stories[n["story"]]] == n["color"] for n in nodes)

    at.selectbox(key="graph_document").set_value(momo).run()
    assert not at.exception, at.exception
    nodes, legend = _whole_graph_nodes(at)
    assert nodes and {n["story"] for n in nodes} == {momo}
    assert [e["label"] for e in legend if e["kind"] == "node"] == ["momotaro.txt"]

    at.selectbox(key="graph_colour_by").set_value("type").run()
    assert not at.exception, at.exception
    nodes, legend = _whole_graph_nodes(at)
    assert "Character" in {e["label"] for e in legend if e["kind"] == "node"}
    assert "momotaro.txt" not in {e["label"] for e in legend}


def test_one_story_is_coloured_by_type_as_before(services: Services) -> None:
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())
    at = _open_tab(_app(services), "Graph")
    assert at.selectbox(key="graph_colour_by").value == "type"
    nodes, legend = _whole_graph_nodes(at)
    assert "Character" in {e["label"] for e in legend if e["kind"] == "node"}
    assert len({n["fullLabel"] for n in nodes}) == len(nodes)


def test_the_doctor_tab_shows_a_crashed_helper_with_its_log_and_lets_it_start_again(
    services: Services,
) -> None:
    from storygraph.crashes import CrashLedger

    ledger = CrashLedger(services.settings.data_dir, "model")
    for pid in (4101, 4102):  # two crashes in a row, as the model server's would leave them
        tail = "fake-server: computing the first answer\nFatal Python error: Segmentation fault"
        ledger.record(pid, "a segmentation fault (SIGSEGV)", started_at=0.0, log_tail=tail)
    at = _open_tab(_app(services), "Doctor")
    at.button(key="doctor_run").click().run()
    assert not at.exception, at.exception
    text = _texts(at)
    assert ":material/error: **model crashes**: the model server stopped with a segmentation" in (
        text
    )
    assert any("Fatal Python error: Segmentation fault" in c.value for c in at.code)
    assert [str(e.value) for e in at.error] == ["Not healthy: ScriptedChatModel (scripted)"]
    at.button(key="doctor_clear_crashes").click().run()
    assert ledger.in_a_row() == []
    assert any("Crashes forgotten (the model server)" in str(s.value) for s in at.success)


def test_the_reading_picker_keeps_answers_within_the_chapters_read(tmp_path: Path) -> None:
    """A story of three chapters: "I have read up to" chapter 1 keeps every citation within it,
    the sources say their chapter, and a new session starts from the position (issue #41)."""
    from tests.integration.test_reading_position import KEY, STORY, TRIPLES

    model = ScriptedChatModel(script=Script(triples=TRIPLES))
    services = build_services(Settings(data_dir=tmp_path / "data"), llm=model)
    try:
        fox = services.ingestor().ingest_bytes("fox.txt", STORY.encode("utf-8")).document_id
        at = _open_tab(_app(services), "Chat")
        picker = at.selectbox(key=f"chat_read_up_to:{fox}")
        assert picker.value == -1 and picker.options == [
            "The whole story",
            "Only what comes before the first chapter",
            "Chapter 1",
            "Chapter 2",
            "Chapter 3",
        ]
        picker.set_value(1).run()
        _ask(at, KEY)
        turn = _last_turn(at)
        assert turn.until == 1 and turn.read == fox
        assert turn.answer is not None and turn.answer.citations
        assert {c.chapter for c in turn.answer.citations} <= {0, 1}
        message = at.chat_message[-1]
        shown = [m.value for m in message.markdown] + [
            m.value for e in message.expander for m in e.markdown
        ]
        for c in turn.answer.citations:
            line = next(v for v in shown if v.startswith(f"**[{c.number}]**"))
            assert ("· Chapter 1" in line) == (c.chapter == 1), line
        again = _open_tab(_app(services), "Chat")
        assert again.selectbox(key=f"chat_read_up_to:{fox}").value == 1
    finally:
        services.close()


def test_a_story_with_no_headings_has_no_reading_picker(services: Services) -> None:
    tale = "The hare laughed at the tortoise.\n\nThe tortoise won the race.\n"
    services.ingestor().ingest_bytes("hare.txt", tale.encode("utf-8"))
    at = _open_tab(_app(services), "Chat")
    assert not [s for s in at.selectbox if str(s.key).startswith("chat_read_up_to")]
    services.ingestor().ingest_bytes("momotaro.txt", SAMPLE.read_bytes())  # 一 … 四
    at = _open_tab(_app(services), "Chat")  # two stories, none picked: no one position
    assert not [s for s in at.selectbox if str(s.key).startswith("chat_read_up_to")]
