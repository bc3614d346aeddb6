"""One process of the concurrency test (tests/faults/test_concurrency.py).

    python -m tests.helpers.concurrency_worker ingest DATA_DIR GRAPH OUT.json FIRST COUNT
    python -m tests.helpers.concurrency_worker open   DATA_DIR GRAPH OUT.json
    python -m tests.helpers.concurrency_worker ask    DATA_DIR GRAPH OUT.json FIRST

`ingest` ingests documents FIRST .. FIRST+COUNT-1 of `story(i)` with the scripted model (faked at
the model boundary only: chunking, LangChain's transformer, merging and the store run for real)
and writes one report per document. `open` opens and closes the store in a loop, as every CLI
command, app start and doctor run does, until the file `stop` appears in the data directory, and
writes how often it opened it and what its cleanup removed. `ask` asks questions about the
stories' names (the question FIRST of `questions()` first, then round the list) through the
whole QAEngine with the scripted model, one after another until `stop` appears, and writes
every answer with its time, or the error it raised; it asks one question unrecorded first (the
encoders load) and then touches `asking-FIRST`. All start when `go` appears, so that they
overlap.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path

from storygraph.qa.engine import QAOptions
from storygraph.services import build_services, open_store
from storygraph.settings import Settings
from tests.helpers.scripted_logic import MOMOTARO_JA
from tests.helpers.scripted_model import ScriptedChatModel

START_TIMEOUT_S = 120.0
ASK_PAUSE_S = 0.05


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


def ingest(settings: Settings, out: Path, first: int, count: int) -> None:
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
    services = build_services(settings, llm=ScriptedChatModel())
    asked = questions()
    answers: list[dict[str, object]] = []
    data_dir = Path(settings.data_dir)
    try:
        services.qa().ask(asked[first % len(asked)][0], QAOptions())  # loads what a first asks
        (data_dir / f"asking-{first}").touch()  # ready: the test starts everyone together
        _wait_for(data_dir / "go")
        index = first
        while not (data_dir / "stop").exists():
            question, name = asked[index % len(asked)]
            index += 1
            record: dict[str, object] = {"question": question, "name": name}
            try:
                answer = services.qa().ask(question, QAOptions())
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
            # A person's pace, not a tight loop: back-to-back reads kept embedded FalkorDB's
            # writers from the graph (its read-preferring lock) until the readers stopped.
            time.sleep(ASK_PAUSE_S)
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
