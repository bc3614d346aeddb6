"""The graph's names are read once and kept until the graph changes (issue 30): another
session's write on the same data directory shows up at the next question, with no wait, and
an unchanged graph is not read again."""

from __future__ import annotations

from pathlib import Path

from storygraph import cypher as q
from storygraph.services import build_services
from storygraph.settings import Settings
from tests.faults.conftest import SEED_EN, SEED_JA, stop_server
from tests.helpers.scripted_model import ScriptedChatModel


def test_names_are_kept_until_another_session_writes(tmp_path: Path) -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, data_dir=tmp_path, llm_provider="none", neo4j_uri=None, chunk_size=200,
        chunk_overlap=0,
    )  # fmt: skip
    reader = build_services(settings, llm=ScriptedChatModel())
    writer = build_services(settings, llm=ScriptedChatModel())
    try:
        assert writer.ingestor().ingest_bytes("ja.txt", SEED_JA.encode()).status == "added"
        first = reader.store.entity_names()
        reads: list[str] = []
        original = reader.store.runner.run

        def counting(query: str, params: dict[str, object] | None = None) -> list[dict]:
            if query == q.ENTITY_NAMES:
                reads.append(query)
            return original(query, params)

        reader.store.runner.run = counting  # type: ignore[method-assign]
        assert reader.store.entity_names() is first  # unchanged graph: the same list
        assert reads == []
        assert writer.ingestor().ingest_bytes("en.txt", SEED_EN.encode()).status == "added"
        after = reader.store.entity_names()  # at once: no expiry to wait for
        assert len(reads) == 1
        assert {r["id"] for r in after} > {r["id"] for r in first}
        assert {r["id"] for r in after} == {r["id"] for r in writer.store.entity_names()}
        assert reader.store.entity_names() is after
    finally:
        reader.close()
        writer.close()
        stop_server(tmp_path)
