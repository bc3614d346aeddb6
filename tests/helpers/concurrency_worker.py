"""One process of the concurrency test (tests/faults/test_concurrency.py).

    python -m tests.helpers.concurrency_worker ingest DATA_DIR GRAPH OUT.json FIRST COUNT
    python -m tests.helpers.concurrency_worker open   DATA_DIR GRAPH OUT.json
    python -m tests.helpers.concurrency_worker ask    DATA_DIR GRAPH OUT.json FIRST

`ingest` ingests documents FIRST .. FIRST+COUNT-1 of `story(i)` with the scripted model (faked at
the model boundary only: chunking, LangChain's transformer, merging and the store run for real)
and writes one report per document, with the time its write was over. Before `go` it ingests one
story into a scratch graph of its own (`warm_up`), so that loading the extraction stack (20 s and
more on a busy machine) is not counted as writing. `open` opens and closes the store in a loop,
as every CLI command, app start and doctor run does, until the file `stop` appears in the data
directory, and writes how often it opened it and what its cleanup removed.

`ask` asks questions about the stories' names (the question FIRST of `questions()` first, then
round the list) through the whole QAEngine with the scripted model, back to back until `stop`
appears (its last question asked after that), and writes every answer with its start and end, or
the error it raised, and the ready documents it could see before it started whose names it did
not have (`stale`, docs/ISSUES.md#names-cache). Before that it asks one question about a story in a
scratch graph of its own (`warm_up`: the sentence encoder and the parser load only when a
question finds something, 10-25 s) and one on the shared graph, then touches `asking-FIRST`. All
start when `go` appears, so that they overlap.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

from storygraph.qa.pipeline.parts import QAOptions
from storygraph.services import build_services, open_store
from storygraph.settings import Settings
from tests.helpers.scripted_logic import MOMOTARO_JA
from tests.helpers.scripted_model import ScriptedChatModel

START_TIMEOUT_S = 120.0
READY_DOCUMENTS = "MATCH (d:Document) WHERE d.status = 'ready' RETURN d.id AS id"


def story(index: int) -> str:
    """A distinct story per index (own document id), whose names are shared with the others,
    so the documents merge into the same entities from both ingesting processes."""
    sentences = [
        f"{s}は{t}のところにいました。{s}と{t}の話です。{t}も{s}をおぼえていました。"
        for s, _, _, t, _ in MOMOTARO_JA
    ]
    start = index % len(sentences)
    picked = sentences[start:] + sentences[:start]
    return f"第{index}話。" + "".join(picked[: 10 + index % 5]) + f"これで第{index}話はおしまい。"


def questions() -> list[tuple[str, str]]:
    """(question, the name it asks about) for every subject of the stories."""
    subjects = dict.fromkeys(s for s, _, _, _, _ in MOMOTARO_JA)
    return [(f"{s}は誰のところにいましたか？", s) for s in subjects]


def settings_for(data_dir: Path, graph: str) -> Settings:
    return Settings(  # type: ignore[call-arg]
        _env_file=None,
        data_dir=data_dir,
        graph_name=graph,
        llm_provider="none",
        neo4j_uri=None,
        chunk_size=200,
        chunk_overlap=0,
    )


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not path.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"{path} never appeared")
        time.sleep(0.01)


def warm_up(settings: Settings, first: int, *, ask: bool) -> None:
    """Load what the first document (and, with `ask`, the first question that finds something)
    loads, on a scratch graph of this process, so that the shared graph's counts stay exact."""
    role = "ask" if ask else "ingest"
    scratch = settings.model_copy(
        update={"graph_name": f"{settings.graph_name}_warm_{role}_{first}"}
    )
    services = build_services(scratch, llm=ScriptedChatModel())
    try:
        services.ingestor().ingest_bytes(f"warm-{first}.txt", story(first).encode())
        if ask:
            services.qa().ask(questions()[first % len(questions())][0], QAOptions())
    finally:
        services.close()


def ingest(settings: Settings, out: Path, first: int, count: int) -> None:
    warm_up(settings, first, ask=False)
    services = build_services(settings, llm=ScriptedChatModel())
    reports = []
    try:
        _wait_for(Path(settings.data_dir) / "go")
        for index in range(first, first + count):
            report = services.ingestor().ingest_bytes(f"story-{index}.txt", story(index).encode())
            reports.append(
                {
                    "index": index,
                    "document_id": report.document_id,
                    "status": report.status,
                    "message": report.message,
                    "at": time.time(),
                }
            )
    finally:
        services.close()
        out.write_text(json.dumps(reports, ensure_ascii=False), encoding="utf-8")


class _Cleanups(logging.Handler):
    """Counts the documents `open_store`'s cleanup removed (it logs each time it removes any)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def open_loop(settings: Settings, out: Path) -> None:
    data_dir = Path(settings.data_dir)
    cleanups = _Cleanups()
    logging.getLogger("storygraph.services").addHandler(cleanups)
    _wait_for(data_dir / "go")
    iterations = 0
    removed: list[str] = []
    while not (data_dir / "stop").exists():
        store = open_store(settings)  # schema, then cleanup of half-written documents
        try:
            removed.extend(store.cleanup_pending())  # and once more, as a second opener would
            store.stats()
        finally:
            store.close()
        iterations += 1
    result = {"iterations": iterations, "removed": removed, "open_cleanups": cleanups.messages}
    out.write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")


def ask_loop(settings: Settings, out: Path, first: int) -> None:
    warm_up(settings, first, ask=True)
    services = build_services(settings, llm=ScriptedChatModel())
    store = services.store
    read_names = store.entity_names
    used: list[list[dict[str, Any]]] = []

    def names_of_this_ask() -> list[dict[str, Any]]:
        names = read_names()
        used.append(names)
        return names

    store.entity_names = names_of_this_ask  # type: ignore[method-assign]
    asked = questions()
    answers: list[dict[str, object]] = []
    data_dir = Path(settings.data_dir)
    try:
        services.qa().ask(asked[first % len(asked)][0], QAOptions())
        (data_dir / f"asking-{first}").touch()  # ready: the test starts everyone together
        _wait_for(data_dir / "go")
        index = first
        stopping = False
        while not stopping:  # the last question is asked after `stop` appeared
            stopping = (data_dir / "stop").exists()
            question, name = asked[index % len(asked)]
            index += 1
            record: dict[str, object] = {"question": question, "name": name, "from": time.time()}
            try:
                ready = {row["id"] for row in store.runner.run(READY_DOCUMENTS)}
                used.clear()
                answer = services.qa().ask(question, QAOptions())
                had = {row["document_id"] for row in used[0]} if used else set()
                record["stale"] = sorted(ready - had)
                record.update(
                    answered_question=answer.question,
                    answer=answer.answer,
                    entities=[e.node_id for e in answer.entities],
                    facts=len(answer.facts),  # candidates read from the graph being written
                )
            except Exception as exc:  # noqa: BLE001 - counted by the test
                record["error"] = f"{type(exc).__name__}: {exc}"
            record["at"] = time.time()
            answers.append(record)
    finally:
        services.close()
        out.write_text(json.dumps(answers, ensure_ascii=False), encoding="utf-8")


def main(argv: list[str]) -> int:
    command, data_dir, graph, out = argv[0], Path(argv[1]), argv[2], Path(argv[3])
    settings = settings_for(data_dir, graph)
    if command == "ingest":
        ingest(settings, out, int(argv[4]), int(argv[5]))
    elif command == "open":
        open_loop(settings, out)
    elif command == "ask":
        ask_loop(settings, out, int(argv[4]))
    else:
        raise SystemExit(f"unknown command {command!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
