"""Ingest jobs: the runner with the scripted model and the real embedded FalkorDB.

The scripted model counts its calls by kind, so "resumes without repeating a model call" is
checked by counting extraction calls, not by timing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from storygraph.ingest.extraction_cache import cache_stats
from storygraph.ingest.jobs import Job, JobRunner
from storygraph.ingest.pipeline import Progress
from storygraph.llm.factory import ModelInfo
from storygraph.services import Services, build_services
from storygraph.settings import Settings
from tests.helpers.faulty_models import CountingFaultModel
from tests.helpers.scripted_model import ScriptedChatModel

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "storygraph" / "samples" / "momotaro_kusuyama.txt"
STORY = (
    "桃太郎は犬と猿ときじを家来にしました。桃太郎は鬼が島へ行きました。"
    "桃太郎は鬼を退治しました。おじいさんとおばあさんは村に住んでいました。"
)
WAIT_S = 120


MODEL = ModelInfo("scripted", "scripted-model", capable=True)
"""One name for every scripted model here (as a configured model has), so that a model swapped
in after a fault, or another process's, shares the saved extractions."""


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    settings = Settings(data_dir=tmp_path / "data")
    built = build_services(settings, llm=ScriptedChatModel(), info=MODEL)
    yield built
    built.close()


class Gate:
    """Holds the model before its `at`-th extraction call until `release()`."""

    def __init__(self, at: int) -> None:
        self.at = at
        self.seen = 0
        self.reached = threading.Event()
        self.open = threading.Event()

    def __call__(self, kind: str) -> None:
        if kind != "extract":
            return
        self.seen += 1
        if self.seen == self.at:
            self.reached.set()
            assert self.open.wait(WAIT_S), "the test never released the gate"

    def release(self) -> None:
        self.open.set()


def _model(services: Services) -> ScriptedChatModel:
    model = services.llm_override
    assert isinstance(model, ScriptedChatModel)
    return model


def _gated(services: Services, at: int) -> Gate:
    gate = Gate(at)
    _model(services).on_call = gate
    return gate


def _extract_calls(services: Services) -> int:
    return _model(services).calls.count("extract")


def _chunks(services: Services, data: bytes) -> int:
    from storygraph.ingest.pipeline import prepare

    ingestor = services.ingestor()
    return len(ingestor.chunks_for(prepare("x.txt", data, max_bytes=ingestor.max_bytes)))


def test_submit_returns_at_once_and_reports_progress_rate_and_eta(services: Services) -> None:
    data = SAMPLE.read_bytes()
    total = _chunks(services, data)
    assert total >= 3
    gate = _gated(services, at=1)
    events: list[tuple[Progress, float | None, float | None]] = []
    runner = services.job_runner()
    job = runner.submit("momotaro.txt", data, lambda j, e: events.append((e, j.rate, j.eta_s)))
    assert job.state == "queued"  # returned before a single chunk was extracted
    assert gate.reached.wait(WAIT_S)
    running = runner.load(job.id)
    assert running is not None and running.state == "running"
    assert services.store.list_documents() == []  # nothing visible while the job runs
    gate.release()
    done = runner.wait(job.id, WAIT_S)
    assert done.state == "done", done.message
    report = done.ingest_report()
    assert report is not None and report.status == "added"
    assert report.chunks == total and report.chunks_extracted == total
    assert report.chunks_cached == 0
    assert _extract_calls(services) == total
    extract = [e for e, _, _ in events if e.stage == "extract"]
    assert [e.done for e in extract] == list(range(total + 1))
    assert [e.stage for e, _, _ in events][-1] == "done"
    rated = [(rate, eta) for e, rate, eta in events if e.stage == "extract" and e.extracted]
    assert rated and all(rate and rate > 0 and eta is not None for rate, eta in rated)
    assert [d.name for d in services.store.list_documents()] == ["momotaro.txt"]
    # The state is on disk: another runner of the data directory sees the finished job.
    other = JobRunner(Path(services.settings.data_dir), services.ingestor, resume=False)
    try:
        seen = {j.id: j for j in other.jobs()}
        assert seen[job.id].state == "done" and seen[job.id].chunks_done == total
    finally:
        other.close()


def test_cancel_keeps_the_graph_and_the_resubmit_repeats_no_model_call(
    services: Services,
) -> None:
    data = SAMPLE.read_bytes()
    total = _chunks(services, data)
    gate = _gated(services, at=3)
    runner = services.job_runner()
    job = runner.submit("momotaro.txt", data)
    assert gate.reached.wait(WAIT_S)
    on_disk = runner.load(job.id)  # what every tab shows while the model works on chunk 3
    assert on_disk is not None and on_disk.state == "running"
    assert (on_disk.chunks_done, on_disk.chunks_extracted, on_disk.chunks_total) == (2, 2, total)
    assert on_disk.rate is not None and on_disk.rate > 0 and on_disk.eta_s is not None
    runner.cancel(job.id)
    gate.release()  # the chunk in flight finishes (and is saved); the job stops before the next
    cancelled = runner.wait(job.id, WAIT_S)
    assert cancelled.state == "cancelled", cancelled.message
    assert services.store.list_documents() == []
    assert services.store.stats()["relations"] == 0
    assert _extract_calls(services) == 3
    assert cache_stats(Path(services.settings.data_dir)).entries == 3

    again = runner.wait(runner.submit("momotaro.txt", data).id, WAIT_S)
    report = again.ingest_report()
    assert again.state == "done" and report is not None
    assert report.chunks_cached == 3 and report.chunks_extracted == total - 3
    assert _extract_calls(services) == total  # every chunk asked of the model exactly once
    assert "3 from saved extractions" in report.message


def test_a_model_that_fails_midway_then_a_resume_costs_only_the_missing_chunks(
    services: Services,
) -> None:
    data = SAMPLE.read_bytes()
    total = _chunks(services, data)
    services.llm_override = CountingFaultModel(fail_on={"extract": 3})
    runner = services.job_runner()
    failed = runner.wait(runner.submit("momotaro.txt", data).id, WAIT_S)
    assert failed.state == "failed" and "chunk 3" in failed.message
    assert services.store.list_documents() == []

    services.llm_override = ScriptedChatModel()
    done = runner.wait(runner.submit("momotaro.txt", data).id, WAIT_S)
    report = done.ingest_report()
    assert done.state == "done" and report is not None
    assert report.chunks_cached == 2  # chunks 1 and 2 were saved before the fault
    assert _extract_calls(services) == total - 2


def test_reingesting_the_same_text_costs_no_model_call(services: Services) -> None:
    runner = services.job_runner()
    first = runner.wait(runner.submit("story.txt", STORY.encode()).id, WAIT_S)
    first_report = first.ingest_report()
    assert first_report is not None and first_report.status == "added"
    calls = _extract_calls(services)
    assert calls == first_report.chunks
    services.store.delete_document(first_report.document_id)

    second = runner.wait(runner.submit("story.txt", STORY.encode()).id, WAIT_S)
    report = second.ingest_report()
    assert report is not None and report.status == "added"
    assert _extract_calls(services) == calls  # no new call
    assert report.usage.calls == 0 and report.chunks_cached == report.chunks
    assert report.relations_added == first_report.relations_added


def test_two_uploads_queue_and_run_one_after_the_other(services: Services) -> None:
    gate = _gated(services, at=1)
    runner = services.job_runner()
    first = runner.submit("momotaro.txt", SAMPLE.read_bytes())
    second = runner.submit("story.txt", STORY.encode())
    assert gate.reached.wait(WAIT_S)
    states = {j.id: j.state for j in runner.active()}
    assert states == {first.id: "running", second.id: "queued"}
    gate.release()
    a, b = runner.wait(first.id, WAIT_S), runner.wait(second.id, WAIT_S)
    assert a.state == b.state == "done", (a.message, b.message)
    assert a.finished_at is not None and b.started_at is not None
    assert b.started_at >= a.finished_at
    assert sorted(d.name for d in services.store.list_documents()) == [
        "momotaro.txt",
        "story.txt",
    ]


def test_a_queued_job_cancelled_never_runs(services: Services) -> None:
    gate = _gated(services, at=1)
    runner = services.job_runner()
    first = runner.submit("momotaro.txt", SAMPLE.read_bytes())
    second = runner.submit("story.txt", STORY.encode())
    assert gate.reached.wait(WAIT_S)
    cancelled = runner.cancel(second.id)
    assert cancelled is not None and cancelled.state == "cancelled"
    gate.release()
    assert runner.wait(first.id, WAIT_S).state == "done"
    assert [d.name for d in services.store.list_documents()] == ["momotaro.txt"]
    assert not (Path(services.settings.data_dir) / "jobs" / f"{second.id}.upload").exists()


def test_a_runner_closed_midway_leaves_the_job_for_the_next_start(services: Services) -> None:
    data = SAMPLE.read_bytes()
    total = _chunks(services, data)
    data_dir = Path(services.settings.data_dir)
    gate = _gated(services, at=2)
    first = JobRunner(data_dir, services.ingestor)
    job = first.submit("momotaro.txt", data)
    assert gate.reached.wait(WAIT_S)
    closer = threading.Thread(target=first.close)
    closer.start()
    gate.release()
    closer.join(WAIT_S)
    left: Job | None = first.load(job.id)
    assert left is not None and left.state == "queued" and "interrupted" in left.message
    assert services.store.list_documents() == []

    _model(services).on_call = None
    second = JobRunner(data_dir, services.ingestor)  # as the app does when it starts again
    try:
        done = second.wait(job.id, WAIT_S)
    finally:
        second.close()
    report = done.ingest_report()
    assert done.state == "done" and done.resumed == 1 and report is not None
    assert report.chunks_cached == 2 and report.chunks_extracted == total - 2
    assert _extract_calls(services) == total


CRASHING_INGEST = """
import os, signal, sys
from pathlib import Path
from storygraph.llm.factory import ModelInfo
from storygraph.services import build_services
from storygraph.settings import Settings
from tests.helpers.scripted_model import ScriptedChatModel

data_dir, story, log = (Path(a) for a in sys.argv[1:4])
kill_at = int(sys.argv[4])
seen = []

def on_call(kind):
    if kind != "extract":
        return
    seen.append(kind)
    with log.open("a") as fh:
        fh.write("extract\\n")
    if len(seen) == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)  # a hard crash in the middle of a model call

services = build_services(
    Settings(data_dir=data_dir),
    llm=ScriptedChatModel(on_call=on_call),
    info=ModelInfo("scripted", "scripted-model", capable=True),
)
runner = services.job_runner()
runner.wait(runner.submit(story.name, story.read_bytes()).id)
"""


def _clean_env() -> dict[str, str]:
    prefixes = ("STORYGRAPH_", "OPENAI_", "AZURE_OPENAI_", "NEO4J_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    env["PYTHONPATH"] = str(ROOT)
    return env


def test_a_killed_process_leaves_a_job_that_resumes_without_repeating_model_calls(
    services: Services, tmp_path: Path
) -> None:
    """The app killed mid-ingest: the next start resumes the job from the saved chunks."""
    data_dir = Path(services.settings.data_dir)
    total = _chunks(services, SAMPLE.read_bytes())
    log = tmp_path / "calls.log"
    done = subprocess.run(
        [sys.executable, "-c", CRASHING_INGEST, str(data_dir), str(SAMPLE), str(log), "4"],
        cwd=tmp_path,
        env=_clean_env(),
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    assert log.read_text().count("extract") == 4  # three saved, the fourth died in flight
    assert services.store.list_documents() == []  # the crash left the graph as it was

    runner = services.job_runner()  # the restarted app: adopts the dead process's job
    (job,) = runner.jobs()
    finished = runner.wait(job.id, WAIT_S)
    report = finished.ingest_report()
    assert finished.state == "done" and finished.resumed == 1, finished.message
    assert report is not None and report.status == "added"
    assert report.chunks_cached == 3 and report.chunks_extracted == total - 3
    assert _extract_calls(services) == total - 3  # no chunk saved before the crash asked again
    docs = services.store.list_documents()
    assert [(d.name, d.status, d.chunks) for d in docs] == [
        ("momotaro_kusuyama.txt", "ready", total)
    ]


def test_a_job_of_a_live_runner_is_not_adopted(services: Services) -> None:
    gate = _gated(services, at=1)
    runner = services.job_runner()
    job = runner.submit("momotaro.txt", SAMPLE.read_bytes())
    assert gate.reached.wait(WAIT_S)
    other = JobRunner(Path(services.settings.data_dir), services.ingestor, resume=True)
    try:
        assert other.adopt_orphans() == []
        assert {j.id for j in other.active()} == {job.id}
    finally:
        gate.release()
        other.close()
    assert runner.wait(job.id, WAIT_S).state == "done"


def test_a_job_file_being_written_is_not_listed_twice(services: Services) -> None:
    runner = services.job_runner()
    job = runner.wait(runner.submit("story.txt", STORY.encode()).id, WAIT_S)
    jobs_dir = Path(services.settings.data_dir) / "jobs"
    partial = json.dumps({"id": job.id, "name": "x"})  # as another writer's file under way
    (jobs_dir / f".tmp-{job.id}.json").write_text(partial)
    assert [j.id for j in runner.jobs()] == [job.id]


def test_an_injected_model_without_a_name_never_gets_another_models_extractions(
    tmp_path: Path,
) -> None:
    """Tests swap scripts on one data directory: a nameless model object is its own identity."""
    built = build_services(Settings(data_dir=tmp_path / "data"), llm=ScriptedChatModel())
    try:
        runner = built.job_runner()
        report = runner.wait(runner.submit("story.txt", STORY.encode()).id, WAIT_S).ingest_report()
        assert report is not None and report.status == "added"
        built.store.delete_document(report.document_id)
        built.llm_override = second = ScriptedChatModel()
        again = runner.wait(runner.submit("story.txt", STORY.encode()).id, WAIT_S).ingest_report()
        assert again is not None and again.chunks_cached == 0
        assert second.calls.count("extract") == again.chunks
    finally:
        built.close()


def test_a_job_says_it_waits_for_another_ingest_only_while_one_holds_the_directory(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first job of a free data directory never reads "waiting for another ingest" (the
    app showed "Queued" for the sample with nothing else running); held by another, it does."""
    import fcntl

    from storygraph.ingest.jobs import WAITING_FOR_LOCK

    runner = services.job_runner()
    saved: list[str] = []  # every message the job file was written with
    save = runner._save
    monkeypatch.setattr(runner, "_save", lambda job: (saved.append(job.message), save(job)))
    free = runner.submit("story.txt", STORY.encode())
    assert runner.wait(free.id, WAIT_S).state == "done"
    assert saved and WAITING_FOR_LOCK not in saved

    lock_path = Path(services.settings.data_dir) / "jobs" / "jobs.lock"
    with open(lock_path, "w", encoding="ascii") as held:  # another process's ingest, in effect
        fcntl.flock(held, fcntl.LOCK_EX)
        waiting = runner.submit("momotaro.txt", SAMPLE.read_bytes())
        deadline = threading.Event()
        for _ in range(200):
            job = runner.load(waiting.id)
            if job is not None and job.message == WAITING_FOR_LOCK:
                break
            deadline.wait(0.05)
        assert job is not None and (job.state, job.message) == ("queued", WAITING_FOR_LOCK)
        fcntl.flock(held, fcntl.LOCK_UN)
    assert runner.wait(waiting.id, WAIT_S).state == "done"
