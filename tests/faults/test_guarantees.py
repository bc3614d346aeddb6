"""Guarantees: idempotent re-upload, provenance-exact delete, secrets never shown, and every
user-facing error naming its cause and the next step."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from storygraph.errors import StoryGraphError
from storygraph.ingest.pipeline import prepare
from storygraph.llm.factory import build_chat_model
from storygraph.services import NoModelExtractor, Services, open_store
from storygraph.settings import Settings
from storygraph.text.decode import decode_bytes
from tests.faults.conftest import SEED_JA, ServicesFactory, make_settings, snapshot
from tests.helpers.flaky_openai_server import FlakyOpenAIServer

REPO = Path(__file__).resolve().parents[2]
# Shares 桃太郎, 桃 and 桃太郎 -[BORN_FROM]-> 桃 with SEED_JA; 鬼 and 鬼が島 are its own.
SECOND = "桃太郎は桃から生まれました。桃太郎は鬼が島へ行きました。鬼は鬼が島に住んでいました。"


def _canonical(graph: dict[str, Any]) -> dict[str, Any]:
    """The graph with list order ignored (merge order differs when documents come back)."""
    nodes = sorted(
        (n["id"], n.get("type"), tuple(sorted(n.get("chunk_ids", [])))) for n in graph["nodes"]
    )
    rels = sorted(
        (
            r["source"],
            r["type"],
            r["target"],
            tuple(sorted(zip(r.get("chunk_ids", []), r.get("evidence", []), strict=False))),
            r.get("weight"),
        )
        for r in graph["relationships"]
    )
    return {"nodes": nodes, "relationships": rels}


def test_reupload_is_idempotent(seeded: Services) -> None:
    before = snapshot(seeded.store)
    for name, data in [
        ("seed.txt", SEED_JA.encode()),
        ("renamed.txt", SEED_JA.encode()),
        ("crlf.txt", SEED_JA.replace("。", "。\r\n").strip().encode()),
        ("padded.txt", ("\n\n  " + SEED_JA + "  \n").encode()),
    ]:
        report = seeded.ingestor().ingest_bytes(name, data)
        if name == "crlf.txt":  # different line breaks are a different text
            assert report.status == "added"
            seeded.store.delete_document(report.document_id)
            continue
        assert report.status == "unchanged", (name, report.message)
        assert report.usage.calls == 0  # the model is not even asked
    assert snapshot(seeded.store) == before


def test_delete_keeps_shared_and_removes_exclusive(seeded: Services) -> None:
    store = seeded.store
    seed_id = store.list_documents()[0].id
    alone = snapshot(store)
    second = seeded.ingestor().ingest_bytes("second.txt", SECOND.encode())
    # each story has its own entities (issue #28): 桃太郎 of the second story is a new node
    assert second.status == "added" and second.entities_merged == 0
    names = [r["id"] for r in store.entity_names()]
    assert names.count("桃太郎") == 2 and names.count("桃") == 2
    both = snapshot(store)

    store.delete_document(seed_id)
    after = store.export_graph()
    nodes = {n["id"]: n for n in after["nodes"]}
    rels = {(r["source"], r["type"], r["target"]): r for r in after["relationships"]}
    for shared in ("桃太郎", "桃"):
        assert shared in nodes
        assert nodes[shared]["chunk_ids"]
        assert all(c.startswith(second.document_id) for c in nodes[shared]["chunk_ids"])
    born = rels[("桃太郎", "BORN_FROM", "桃")]
    assert all(c.startswith(second.document_id) for c in born["chunk_ids"])
    assert born["weight"] == len(born["chunk_ids"]) == len(born["evidence"])
    for exclusive in ("おじいさん", "おばあさん", "山", "川"):
        assert exclusive not in nodes
    assert not any(
        seed_id in c
        for item in [*after["nodes"], *after["relationships"]]
        for c in item.get("chunk_ids", [])
    )
    assert [d.id for d in store.list_documents()] == [second.document_id]
    assert store.chunks([f"{seed_id}:0000"]) == {}

    # Back again: the graph equals the one with both documents.
    assert seeded.ingestor().ingest_bytes("seed.txt", SEED_JA.encode()).status == "added"
    assert _canonical(store.export_graph()) == _canonical(both["graph"])
    store.delete_document(second.document_id)
    assert _canonical(store.export_graph()) == _canonical(alone["graph"])
    store.delete_document(seed_id)
    assert store.stats() == {"documents": 0, "chunks": 0, "entities": 0, "relations": 0}


def test_delete_leaves_imported_facts(seeded: Services) -> None:
    from storygraph.ingest.graph_io import import_graph

    import_graph(
        seeded.store,
        {"nodes": [], "relationships": [{"source": "桃太郎", "type": "HERO_OF", "target": "村"}]},
    )
    seed_id = seeded.store.list_documents()[0].id
    seeded.store.delete_document(seed_id)
    rels = seeded.store.export_graph()["relationships"]
    assert [(r["source"], r["type"], r["target"]) for r in rels] == [("桃太郎", "HERO_OF", "村")]


# --- secrets -----------------------------------------------------------------------------------

API_KEY = "sk-test-FAULTS-SECRET-0123456789"
PASSWORD = "pw-FAULTS-SECRET-9876"


def test_settings_never_show_secrets() -> None:
    settings = make_settings(
        Path("unused"),
        openai_api_key=API_KEY,
        neo4j_password=PASSWORD,
        azure_openai_api_key=API_KEY + "az",
    )
    shown = repr(settings) + str(settings) + settings.model_dump_json() + str(settings.model_dump())
    assert API_KEY not in shown and PASSWORD not in shown


def test_echoed_key_is_masked_in_report_and_logs(
    make_services: ServicesFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """A server that echoes the key in its 401 error must not get it shown or logged."""
    caplog.set_level(logging.DEBUG)
    message = f"Incorrect API key provided: {API_KEY}"
    with FlakyOpenAIServer([401] * 8, error_message=message) as server:
        settings = make_settings(
            Path("unused"),
            llm_provider="openai_compatible",
            openai_base_url=server.base_url,
            openai_api_key=API_KEY,
            llm_max_retries=0,
        )
        services = make_services(
            build_chat_model(settings), openai_api_key=API_KEY, neo4j_password=PASSWORD
        )
        report = services.ingestor().ingest_bytes("story.txt", SEED_JA.encode())
    assert report.status == "failed"
    assert "credentials" in report.message and "OPENAI_API_KEY" in report.message
    shown = report.message + " ".join(report.warnings) + repr(report.to_json())
    assert API_KEY not in shown
    assert API_KEY not in caplog.text and PASSWORD not in caplog.text


def _cli(args: list[str], env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "NEO4J", "AZURE"))}
    base.update({"STORYGRAPH_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(REPO)})
    base.update(env)
    return subprocess.run(
        [sys.executable, "-m", "storygraph", *args],
        cwd=tmp_path,
        env=base,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.timeout(120)
def test_cli_neo4j_unreachable_shows_cause_and_next_step_without_secrets(tmp_path: Path) -> None:
    result = _cli(
        ["stats"],
        {"NEO4J_URI": "bolt://127.0.0.1:1", "NEO4J_PASSWORD": PASSWORD, "OPENAI_API_KEY": API_KEY},
        tmp_path,
    )
    assert result.returncode == 1
    assert "error: Neo4j at bolt://127.0.0.1:1 is not reachable" in result.stderr
    assert "next step:" in result.stderr
    assert "Traceback" not in result.stderr
    assert PASSWORD not in result.stdout + result.stderr
    assert API_KEY not in result.stdout + result.stderr


@pytest.mark.timeout(120)
def test_cli_ingest_with_echoing_server_does_not_print_the_key(tmp_path: Path) -> None:
    story = tmp_path / "story.txt"
    story.write_text(SEED_JA, encoding="utf-8")
    message = f"Incorrect API key provided: {API_KEY}"
    with FlakyOpenAIServer([401] * 20, error_message=message) as server:
        result = _cli(
            ["ingest", str(story)],
            {
                "OPENAI_BASE_URL": server.base_url,
                "OPENAI_API_KEY": API_KEY,
                "STORYGRAPH_LLM_MAX_RETRIES": "0",
                "STORYGRAPH_LLM_PROVIDER": "openai_compatible",
            },
            tmp_path,
        )
    output = result.stdout + result.stderr
    assert "story.txt: failed" in output, output
    assert API_KEY not in output
    assert server.requests  # the key did reach the (echoing) server, it just never came back


# --- every user-facing error names the cause and the next step -------------------------------


def _raise_empty() -> None:
    decode_bytes(b"", "x.txt")


def _raise_binary() -> None:
    decode_bytes(b"%PDF-1.4 ...", "x.pdf")


def _raise_too_large() -> None:
    prepare("x.txt", b"x" * 100, max_bytes=10)


def _raise_no_model() -> None:
    from storygraph.models import Chunk

    NoModelExtractor("no-LLM mode is on").extract(Chunk("d:0", "d", 0, "t", 0, 1), "ja", [])


def _raise_openai_no_key() -> None:
    build_chat_model(Settings(_env_file=None, llm_provider="openai", openai_api_key=None))  # type: ignore[call-arg]


def _raise_azure_incomplete() -> None:
    build_chat_model(
        Settings(_env_file=None, llm_provider="azure", azure_openai_endpoint="http://127.0.0.1:9")  # type: ignore[call-arg]
    )


def _raise_compatible_no_url() -> None:
    build_chat_model(Settings(_env_file=None, llm_provider="openai_compatible"))  # type: ignore[call-arg]


def _raise_neo4j() -> None:
    open_store(make_settings(Path("unused"), neo4j_uri="bolt://127.0.0.1:1"))


def _raise_graph_file(tmp: Path) -> None:
    from storygraph.ingest.graph_io import load_graph_file

    bad = tmp / "graph.json"
    bad.write_text("{not json", encoding="utf-8")
    load_graph_file(bad)


ERRORS = {
    "empty-file": _raise_empty,
    "binary-file": _raise_binary,
    "too-large": _raise_too_large,
    "no-model": _raise_no_model,
    "openai-without-key": _raise_openai_no_key,
    "azure-incomplete": _raise_azure_incomplete,
    "compatible-without-url": _raise_compatible_no_url,
    "neo4j-unreachable": _raise_neo4j,
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("case", [*sorted(ERRORS), "bad-graph-file"])
def test_user_facing_errors_name_cause_and_next_step(case: str, tmp_path: Path) -> None:
    with pytest.raises(StoryGraphError) as info:
        if case == "bad-graph-file":
            _raise_graph_file(tmp_path)
        else:
            ERRORS[case]()
    err = info.value
    assert len(err.message) > 15
    assert err.hint.strip(), f"{case}: no next step in {err!r}"
    assert "Traceback" not in str(err)
