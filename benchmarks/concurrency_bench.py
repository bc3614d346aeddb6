"""Several people asking at once on the embedded default: 1, 2, 4 and 8 chat sessions.

One library (the stories the e2e question sets name, ingested by the parser into one store),
one embedded model server, and at each level that many sessions asking at once. A session is a
thread with the app's own path: one shared `Services` (the app shares one among its Streamlit
sessions) and `QAEngine.ask` with the answer streamed, as the chat does, inside
`waiting_for_the_model` so it hears its place in the model queue. Each session asks its
questions one after another; all sessions start together.

Per level: first token and whole answer p50 / p90 over every question of every session, their
ratio to the single-user figures of the same run, errors, answers that came back to another
question than the one asked (the answer's `question`) or whose streamed text is not the text
streamed to that session, and the most requests a waiting session heard ahead of it.

The real model must be installed (STORYGRAPH_MODEL_DIR); it is started for the run in a
temporary data directory and stopped afterwards. Run under `flock /tmp/model.lock` on a shared
machine. llama-cpp-python's server (0.3.x) has no parallel slots or continuous batching: one
model, one prompt at a time, so the queue is the only order there is.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common import REPO, STORIES, BenchResult, Table, percentile, ratio
from storygraph.evaluation.e2e import E2EQuestion, Stopwatch, load_e2e_questions
from storygraph.evaluation.harness import configured_model
from storygraph.llm.factory import model_info
from storygraph.llm.model_files import model_path
from storygraph.llm.model_queue import waiting_for_the_model
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.services import Services, build_services
from storygraph.settings import Settings

SETS = ("ja.jsonl", "en_fresh.jsonl")
LEVELS = (1, 2, 4, 8)
QUESTIONS_PER_SESSION = 3


@dataclass
class Asked:
    session: int
    question: str
    first_token_s: float = 0.0
    seconds: float = 0.0
    error: str = ""
    mixed: bool = False
    most_ahead: int = 0
    heard: list[int] = field(default_factory=list)


def _questions(count: int) -> list[E2EQuestion]:
    """`count` questions taking the sets in turn (Japanese, English, …), one story after
    another within each set, so sessions ask about different stories in both languages."""
    per_set = []
    for name in SETS:
        cases = load_e2e_questions(REPO / "eval" / "e2e" / name)
        by_story: dict[str, list[E2EQuestion]] = {}
        for case in cases:
            by_story.setdefault(case.story, []).append(case)
        spread = [c for i in range(max(map(len, by_story.values()))) for c in
                  (group[i] for group in by_story.values() if i < len(group))]  # fmt: skip
        per_set.append(spread)
    mixed = [c for pair in zip(*per_set, strict=False) for c in pair]
    return mixed[:count]


def _ask(services: Services, session: int, case: E2EQuestion, options: QAOptions) -> Asked:
    asked = Asked(session, case.question)
    pieces: list[str] = []
    watch = Stopwatch()

    def on_token(piece: str) -> None:
        watch.on_token(piece)
        pieces.append(piece)

    try:
        with waiting_for_the_model(asked.heard.append):
            answer = services.qa().ask(case.question, options, on_token=on_token)
        asked.mixed = answer.question != case.question.strip() or (
            bool(pieces) and "".join(pieces).strip() not in answer.answer and not answer.warnings
        )
    except Exception as exc:  # noqa: BLE001 - counted in the table
        asked.error = f"{type(exc).__name__}: {exc}"[:200]
    asked.seconds = watch.elapsed()
    asked.first_token_s = watch.first_token(asked.seconds)
    asked.most_ahead = max(asked.heard, default=0)
    return asked


def _level(
    services: Services, sessions: int, cases: list[E2EQuestion], per_session: int
) -> tuple[list[Asked], float]:
    options = QAOptions.from_settings(services.settings)
    results: list[Asked] = []
    lock = threading.Lock()
    barrier = threading.Barrier(sessions)

    def session(index: int) -> None:
        barrier.wait()
        for k in range(per_session):
            case = cases[(index * per_session + k) % len(cases)]
            asked = _ask(services, index, case, options)
            with lock:
                results.append(asked)

    threads = [threading.Thread(target=session, args=(i,)) for i in range(sessions)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, time.perf_counter() - started


def _progress(sessions: int, asked: list[Asked], wall: float) -> None:
    """One line per level on stderr as it ends (a long run interrupted keeps what it measured)."""
    first = [a.first_token_s for a in asked if not a.error]
    whole = [a.seconds for a in asked if not a.error]
    print(
        f"concurrency: {sessions} sessions, {len(asked)} questions in {wall:.0f} s, "
        f"{sum(1 for a in asked if a.error)} errors, {sum(1 for a in asked if a.mixed)} mixed, "
        f"first token p50 {percentile(first, 50):.1f} s p90 {percentile(first, 90):.1f} s, "
        f"whole p50 {percentile(whole, 50):.1f} s p90 {percentile(whole, 90):.1f} s, "
        f"most ahead {max((a.most_ahead for a in asked), default=0)}",
        file=sys.stderr,
        flush=True,
    )


def _settings(data_dir: Path) -> Settings:
    base = Settings(_env_file=None)  # type: ignore[call-arg]
    return base.model_copy(
        update={
            "data_dir": data_dir,
            "neo4j_uri": None,
            "llm_provider": "embedded",
            "model_dir": model_path(base).parent,
        }
    )


def _build_library(settings: Settings, cases: list[E2EQuestion]) -> dict[str, Any]:
    """Ingest every story the questions name into the data dir's store, by the parser (no
    model call: the library is there before anyone asks)."""
    parser_only = settings.model_copy(update={"llm_provider": "none"})
    services = build_services(parser_only)
    try:
        stories = sorted({c.story for c in cases})
        for story in stories:
            path = STORIES / story
            report = services.ingestor().ingest_bytes(path.name, path.read_bytes())
            if report.status != "added":
                raise RuntimeError(f"{story}: {report.status}: {report.message}")
        stats = services.store.stats()
        return {"stories": len(stories), **stats}
    finally:
        services.close()


def run(quick: bool = False) -> BenchResult:
    levels = (1, 2) if quick else LEVELS
    per_session = 1 if quick else QUESTIONS_PER_SESSION
    cases = _questions(max(levels) * per_session)
    by_level: dict[int, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="sg-bench-concurrency-") as tmp:
        settings = _settings(Path(tmp))
        if not model_path(settings).is_file():
            raise SystemExit(
                f"the embedded model is not installed at {model_path(settings)}: "
                "set STORYGRAPH_MODEL_DIR or run `make model`"
            )
        library = _build_library(settings, cases)
        with configured_model(settings) as (llm, _info):
            services = build_services(settings, llm=llm, info=model_info(settings))
            try:
                options = QAOptions.from_settings(settings)
                for language_case in (cases[0], cases[1]):  # read ahead both prompt prefixes
                    _ask(services, -1, language_case, options)
                for sessions in levels:
                    asked, wall = _level(services, sessions, cases, per_session)
                    by_level[sessions] = {"asked": asked, "wall_s": wall}
                    _progress(sessions, asked, wall)
            finally:
                services.close()

    base = by_level[levels[0]]["asked"]
    base_first_p90 = percentile([a.first_token_s for a in base if not a.error], 90)
    base_whole_p90 = percentile([a.seconds for a in base if not a.error], 90)
    table = Table(
        "Concurrent chat sessions on the embedded model (QAEngine.ask, streamed, one library)",
        ["sessions", "questions", "errors", "mixed", "first token p50 s", "first token p90 s",
         "p90 × 1 user", "whole answer p50 s", "whole answer p90 s", "p90 × 1 user",
         "most ahead heard", "answers / min"],
    )  # fmt: skip
    data: dict[str, Any] = {"library": library, "levels": {}}
    for sessions, got in by_level.items():
        asked = got["asked"]
        ok = [a for a in asked if not a.error]
        first = [a.first_token_s for a in ok]
        whole = [a.seconds for a in ok]
        first_p90, whole_p90 = percentile(first, 90), percentile(whole, 90)
        table.add(
            sessions, len(asked), sum(1 for a in asked if a.error),
            sum(1 for a in asked if a.mixed), percentile(first, 50), first_p90,
            ratio(first_p90, base_first_p90), percentile(whole, 50), whole_p90,
            ratio(whole_p90, base_whole_p90), max((a.most_ahead for a in asked), default=0),
            len(ok) / got["wall_s"] * 60,
        )  # fmt: skip
        data["levels"][sessions] = {
            "wall_s": got["wall_s"],
            "asked": [a.__dict__ for a in asked],
        }
    table.notes.append(
        f"library: {library['stories']} stories ({', '.join(SETS)}), "
        f"{library.get('entities', 0):,} entities, {library.get('relations', 0):,} relations, "
        f"ingested by the parser; {per_session} questions per session, the sets' questions "
        "in turn (Japanese, English); every session starts at once"
    )
    table.notes.append(
        "× 1 user = p90 at this level / p90 of the single session in the same run; mixed = an "
        "answer to another question, or streamed text that is not in the session's answer; "
        "most ahead = the largest count a waiting session heard from the model queue"
    )
    table.notes.append(
        "targets at 4 sessions: first token p90 ≤ 4 × the single-user p90, 0 errors; "
        f"model threads {os.environ.get('STORYGRAPH_EMBEDDED_THREADS', '2 (default)')}"
    )
    return BenchResult("concurrency", [table], data=data)
