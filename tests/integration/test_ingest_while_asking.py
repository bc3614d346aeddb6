"""Two sessions upload while two others ask, on one data directory (issue 30).

Four processes share one data directory and its embedded FalkorDB, as four sessions of one app
(or the app and the CLI) do: two ingest documents, two ask questions through the whole
`QAEngine` for as long as the ingests last. The model is scripted (the model boundary); the
chunking, the store, its write lock and the retrieval are real. Counted at the end: every
document is in the graph exactly once, with the same chunks, entities and relations as a run of
one process alone; every question got an answer to itself, none raised, answers kept coming
while the documents were being written, and no answer was read with names older than a
document it could already see (docs/ISSUES.md#names-cache). The readers ask back to back, with no
pause: that is what found the stale names.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from storygraph.services import build_services
from storygraph.store.falkordb_server import EmbeddedFalkorDB
from tests.faults.conftest import make_settings, stop_server
from tests.faults.test_concurrency import _provenance, _worker, assert_consistent
from tests.helpers.concurrency_worker import story
from tests.helpers.scripted_model import ScriptedChatModel

WRITERS = 2
READERS = 2
DOCUMENTS_PER_WRITER = 10  # a writing window of several answers (4-8 s warm, loaded machine)
MIN_ANSWERS_WHILE_WRITING = 3
"""Answers of all readers whose question overlapped the writing (from the first document's commit
to the last), and each reader at least one: with warm writers the writing lasts a few answers
(2-3 per reader in the runs in the git history of docs/ISSUES.md#names-cache), so a per-reader 2
would fail whenever one answer outlasts it."""


@pytest.mark.timeout(900)
def test_two_writers_and_two_readers_on_one_data_directory(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    graph = settings.graph_name
    server = EmbeddedFalkorDB(tmp_path)
    server.ensure_running()  # the app's server; every worker process attaches to it
    try:
        out = tmp_path / "results"
        out.mkdir()
        writers = [
            _worker(
                "ingest", str(tmp_path), graph, str(out / f"ingest-{i}.json"),
                str(i * DOCUMENTS_PER_WRITER), str(DOCUMENTS_PER_WRITER),
            )
            for i in range(WRITERS)
        ]  # fmt: skip
        readers = [
            _worker("ask", str(tmp_path), graph, str(out / f"ask-{i}.json"), str(i * 3))
            for i in range(READERS)
        ]
        deadline = time.monotonic() + 300
        while not all((tmp_path / f"asking-{i * 3}").exists() for i in range(READERS)):
            assert time.monotonic() < deadline, "the asking processes never got ready"
            assert all(r.poll() is None for r in readers), "an asking process ended early"
            time.sleep(0.1)
        time.sleep(1.0)  # the writers warm up on a scratch graph before `go` too
        (tmp_path / "go").touch()
        for worker in writers:
            output, _ = worker.communicate(timeout=600)
            assert worker.returncode == 0, output.decode(errors="replace")[-3000:]
        written = time.time()
        (tmp_path / "stop").touch()  # each reader asks once more, after every write
        for worker in readers:
            output, _ = worker.communicate(timeout=240)
            assert worker.returncode == 0, output.decode(errors="replace")[-3000:]

        # every document exactly once, whole, as a process alone would have written it
        reports = [
            r for i in range(WRITERS) for r in json.loads((out / f"ingest-{i}.json").read_text())
        ]
        assert len(reports) == WRITERS * DOCUMENTS_PER_WRITER
        first_commit, last_commit = min(r["at"] for r in reports), max(r["at"] for r in reports)
        assert [r for r in reports if r["status"] != "added"] == [], reports
        shared = build_services(make_settings(tmp_path, graph_name=graph))
        alone = build_services(make_settings(tmp_path), llm=ScriptedChatModel())
        try:
            stored = [d.id for d in shared.store.list_documents()]
            assert sorted(stored) == sorted(r["document_id"] for r in reports)
            counts = assert_consistent(shared.store)  # no duplicate entity, relation or chunk
            for r in sorted(reports, key=lambda r: r["index"]):
                index = r["index"]
                done = alone.ingestor().ingest_bytes(f"story-{index}.txt", story(index).encode())
                assert done.status == "added" and done.document_id == r["document_id"]
            for r in reports:
                assert _provenance(shared.store, r["document_id"]) == _provenance(
                    alone.store, r["document_id"]
                ), f"document {r['index']} differs from a run of one process alone"
            assert counts == assert_consistent(alone.store)
        finally:
            shared.close()
            alone.close()

        # every question answered, to itself, with names as new as the documents it could see,
        # and answers kept coming during the writes
        during: list[int] = []
        for i in range(READERS):
            answers = json.loads((out / f"ask-{i}.json").read_text())
            assert [a for a in answers if "error" in a] == [], answers
            assert all(a["answered_question"] == a["question"] for a in answers)
            mixed = [a for a in answers if a["entities"] and a["name"] not in a["entities"]]
            assert mixed == [], mixed
            stale = [a for a in answers if a["stale"]]
            assert stale == [], f"{len(stale)} answers read names older than a seen commit"
            while_writing = [
                a for a in answers if a["from"] < last_commit and a["at"] > first_commit
            ]
            assert while_writing, (i, len(answers))
            during.append(len(while_writing))
            after = [a for a in answers if a["from"] > written]
            assert after, "no question was asked after the writes"
            assert all(a["facts"] > 0 for a in after), ("found no fact after the writes", after)
        assert sum(during) >= MIN_ANSWERS_WHILE_WRITING, during
        print(
            f"ingest while asking: {WRITERS} writers, {READERS} readers, {len(reports)} documents "
            f"once each, {counts}; answers "
            + ", ".join(
                str(len(json.loads((out / f"ask-{i}.json").read_text()))) for i in range(READERS)
            )
            + f", {during} of them during the {last_commit - first_commit:.1f} s of writing"
        )
    finally:
        server.stop()
        stop_server(tmp_path)
