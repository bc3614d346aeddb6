"""Ingest as a job: submitted, run in the background, persisted, resumable, cancellable.

A `JobRunner` belongs to the services object (one per process and data directory). It runs
submitted uploads one after the other on a worker thread; the caller (a Streamlit session, the
CLI) returns at once and follows the job through its state. Across processes, jobs of one data
directory run one at a time: the worker holds `jobs.lock` for the whole job (the graph write
itself still goes through the Ingestor's `ingest.lock`).

Everything about a job lives in `<data dir>/jobs/`:

- `<id>.json`: the job (state, chunk progress, measured rate, ETA, report), rewritten
  atomically as it progresses, so any process (another app, the CLI) can list it;
- `<id>.upload`: the uploaded bytes, kept until the job ends, so an interrupted job can start
  again;
- `<id>.cancel`: a cancel request (any process may write it; the owner acts on it);
- `runners/<runner id>.lock`: held (flock) by each live runner for its lifetime. A queued or
  running job whose runner's lock is free belongs to a process that died: a runner started with
  `resume=True` (the app) adopts it and runs it again. The extraction cache
  (storygraph.ingest.extraction_cache) makes that rerun cost no model call for the chunks already
  extracted.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import tempfile
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from storygraph.errors import StoryGraphError
from storygraph.ingest.pipeline import Ingestor, Progress
from storygraph.locks import patient_lock, write_lock
from storygraph.models import IngestReport

log = logging.getLogger(__name__)

JobState = Literal["queued", "running", "done", "failed", "cancelled"]
ACTIVE_STATES: tuple[str, ...] = ("queued", "running")
JOBS_DIR_NAME = "jobs"
WAITING_FOR_LOCK = "waiting for another ingest of this data directory to finish"
"""A queued job's message while another process's job holds the data directory's lock."""
SAVE_EVERY_S = 0.5
"""Progress is written to disk at most this often (and at every change of stage)."""


@dataclass
class Job:
    """One ingest job as the UI and the CLI see it."""

    id: str
    name: str
    state: JobState = "queued"
    owner: str = ""
    created_at: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None
    stage: str = "queued"
    chunks_done: int = 0
    chunks_total: int = 0
    chunks_cached: int = 0
    chunks_extracted: int = 0
    chapter: int = 0
    """The chapter being read (storygraph.ingest.pipeline.Progress.chapter); 0 for none."""
    chapters: int = 0
    """The text's chapters with a heading; 0 for a text with none."""
    rate: float | None = None
    """Chunks the model extracted per second in this run (cached chunks excluded)."""
    eta_s: float | None = None
    message: str = ""
    resumed: int = 0
    """How many times the job was started again after its process stopped."""
    report: dict[str, Any] | None = None

    @property
    def active(self) -> bool:
        return self.state in ACTIVE_STATES

    def ingest_report(self) -> IngestReport | None:
        return IngestReport.from_json(self.report) if self.report else None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Job:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


def duration(seconds: float) -> str:
    """A short human duration: 45 s, 12 min, 1 h 05 min."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def job_rate_text(job: Job) -> str:
    """ "3.1 chunks/min, ETA 4 min" once the model has extracted a chunk; "" before."""
    if job.rate is None:
        return ""
    eta = f", ETA {duration(job.eta_s)}" if job.eta_s is not None else ""
    return f"{job.rate * 60:.1f} chunks/min{eta}"


@dataclass
class _Meter:
    """Measures the model's extraction rate from progress events (cached chunks are free)."""

    last_at: float = field(default_factory=time.monotonic)
    last_extracted: int = 0
    model_seconds: float = 0.0

    def update(self, event: Progress, job: Job) -> None:
        now = time.monotonic()
        if event.extracted > self.last_extracted:
            self.model_seconds += now - self.last_at
            self.last_extracted = event.extracted
        self.last_at = now
        if event.extracted and self.model_seconds > 0:
            job.rate = event.extracted / self.model_seconds
            job.eta_s = max(0, event.total - event.done) / job.rate


def _write_json(path: Path, data: dict[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _read_job(path: Path) -> Job | None:
    try:
        return Job.from_json(json.loads(path.read_text("utf-8")))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError) as exc:
        log.warning("job file %s is unreadable: %s", path, exc)
        return None


def read_jobs(data_dir: Path) -> list[Job]:
    """Every job of a data directory (any process's), oldest first."""
    paths = [p for p in (data_dir / JOBS_DIR_NAME).glob("*.json") if not p.name.startswith(".")]
    found = [job for path in paths if (job := _read_job(path))]
    return sorted(found, key=lambda j: (j.created_at, j.id))


def runner_alive(jobs_dir: Path, owner: str) -> bool:
    """Whether the runner `owner` still holds its lock (its process is alive)."""
    path = jobs_dir / "runners" / f"{owner}.lock"
    if not owner or not path.exists():
        return False
    with open(path, "a", encoding="ascii") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fh, fcntl.LOCK_UN)
    # The dead runner's file stays: unlinking it here could race with a runner that has just
    # created its own file and not locked it yet. A runner removes its own file on close().
    return False


class JobRunner:
    """Runs ingest jobs of one data directory on a worker thread; see the module docstring."""

    def __init__(
        self,
        data_dir: Path,
        ingestor_factory: Callable[[], Ingestor],
        *,
        resume: bool = True,
        keep_finished: int = 20,
    ) -> None:
        self.data_dir = data_dir
        self.dir = data_dir / JOBS_DIR_NAME
        self.ingestor_factory = ingestor_factory
        self.keep_finished = keep_finished
        self.id = uuid.uuid4().hex[:12]
        self._lock = threading.Condition()
        self._queue: deque[str] = deque()
        self._listeners: dict[str, Callable[[Job, Progress], None]] = {}
        self._stopping = False
        self._thread: threading.Thread | None = None
        (self.dir / "runners").mkdir(parents=True, exist_ok=True)
        self._owner_fh: IO[str] | None = open(  # noqa: SIM115 - held for the runner's lifetime
            self.dir / "runners" / f"{self.id}.lock", "w", encoding="ascii"
        )
        fcntl.flock(self._owner_fh, fcntl.LOCK_EX)
        if resume:
            self.adopt_orphans()

    # --- files -------------------------------------------------------------------------------
    def _path(self, job_id: str, suffix: str) -> Path:
        return self.dir / f"{job_id}{suffix}"

    def load(self, job_id: str) -> Job | None:
        return _read_job(self._path(job_id, ".json"))

    def _save(self, job: Job) -> None:
        _write_json(self._path(job.id, ".json"), job.to_json())

    def jobs(self) -> list[Job]:
        """Every job of the data directory (any process's), oldest first."""
        return read_jobs(self.data_dir)

    def active(self) -> list[Job]:
        """Queued and running jobs, oldest first."""
        return [j for j in self.jobs() if j.active]

    # --- submitting, cancelling, waiting ----------------------------------------------------
    def submit(
        self,
        name: str,
        data: bytes,
        on_progress: Callable[[Job, Progress], None] | None = None,
    ) -> Job:
        """Queue an upload and return at once; `on_progress` is called from the worker thread."""
        job_id = f"{time.time_ns():x}-{uuid.uuid4().hex[:6]}"
        job = Job(id=job_id, name=name, owner=self.id, created_at=time.time(), message="queued")
        self._path(job_id, ".upload").write_bytes(data)
        self._save(job)
        with self._lock:
            if on_progress is not None:
                self._listeners[job_id] = on_progress
            self._queue.append(job_id)
            self._lock.notify_all()
        self._ensure_worker()
        return job

    def cancel(self, job_id: str) -> Job | None:
        """Ask a job to stop: a queued one ends at once, a running one before its next chunk."""
        job = self.load(job_id)
        if job is None or not job.active:
            return job
        self._path(job_id, ".cancel").touch()
        with self._lock:
            mine = job_id in self._queue
            if mine:
                self._queue.remove(job_id)
        if mine or (job.state == "queued" and not runner_alive(self.dir, job.owner)):
            self._finish(job, "cancelled", "cancelled before it started")
        return self.load(job_id)

    def wait(self, job_id: str, timeout: float | None = None) -> Job:
        """Block until the job is no longer queued or running; returns it."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            job = self.load(job_id)
            if job is None:
                raise KeyError(job_id)
            if not job.active:
                return job
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} is still {job.state}")
            time.sleep(0.05)

    def wait_idle(self, timeout: float | None = None) -> None:
        """Block until this runner has nothing queued or running."""
        for job in self.active():
            if job.owner == self.id:
                self.wait(job.id, timeout)

    # --- resuming ----------------------------------------------------------------------------
    def adopt_orphans(self) -> list[Job]:
        """Queue again the unfinished jobs whose process died; returns them."""
        adopted = []
        with write_lock(self.dir, "adopt.lock"):
            for job in self.jobs():
                if not job.active or job.owner == self.id or runner_alive(self.dir, job.owner):
                    continue
                if not self._path(job.id, ".upload").exists():
                    self._finish(job, "failed", "its upload is gone; add the story again")
                    continue
                job.owner, job.state, job.stage = self.id, "queued", "queued"
                job.resumed += 1
                job.message = "resumed after the app stopped; saved chunks are not extracted again"
                self._save(job)
                adopted.append(job)
        with self._lock:
            self._queue.extend(j.id for j in adopted)
            self._lock.notify_all()
        if adopted:
            log.info("resuming %d interrupted ingest job(s)", len(adopted))
            self._ensure_worker()
        return adopted

    # --- the worker --------------------------------------------------------------------------
    def _ensure_worker(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._work, name=f"storygraph-jobs-{self.id}", daemon=True
                )
                self._thread.start()

    def _work(self) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._stopping:
                    self._lock.wait()
                if self._stopping:
                    return
                job_id = self._queue.popleft()
            try:
                self._run(job_id)
            except Exception:  # the worker must survive anything one job does
                log.exception("ingest job %s failed unexpectedly", job_id)
                job = self.load(job_id)
                if job is not None and job.active:
                    self._finish(job, "failed", "failed unexpectedly; the server log has why")

    def _cancel_requested(self, job_id: str) -> bool:
        return self._path(job_id, ".cancel").exists()

    def _run(self, job_id: str) -> None:
        job = self.load(job_id)
        if job is None or job.state != "queued":
            return
        if self._cancel_requested(job_id):
            self._finish(job, "cancelled", "cancelled before it started")
            return

        def give_up() -> bool:
            return self._stopping or self._cancel_requested(job_id)

        def waiting() -> None:  # only when another process's job really holds the directory
            job.message = WAITING_FOR_LOCK
            self._save(job)

        with patient_lock(self.dir, "jobs.lock", give_up, on_wait=waiting) as held:
            if not held:
                self._stopped(job)
                return
            self._execute(job, give_up)

    def _execute(self, job: Job, give_up: Callable[[], bool]) -> None:
        job.state, job.stage, job.started_at = "running", "decode", time.time()
        job.message = "starting"
        job.rate = job.eta_s = None
        self._save(job)
        listener = self._listeners.get(job.id)
        meter = _Meter()
        saved_at = 0.0

        def on_progress(event: Progress) -> None:
            nonlocal saved_at
            # Saved at every change of stage and every chunk the model extracted (the next
            # model call may take minutes); chunks from the cache, which come in bursts, at
            # most every SAVE_EVERY_S.
            news = event.stage != job.stage or event.extracted != job.chunks_extracted
            job.stage, job.message = event.stage, event.message
            if event.stage == "extract":
                job.chunks_done, job.chunks_total = event.done, event.total
                job.chunks_cached, job.chunks_extracted = event.cached, event.extracted
                job.chapter, job.chapters = event.chapter, event.chapters
                meter.update(event, job)
            now = time.monotonic()
            if news or now - saved_at >= SAVE_EVERY_S:
                self._save(job)
                saved_at = now
            if listener is not None:
                listener(job, event)

        try:
            data = self._path(job.id, ".upload").read_bytes()
            ingestor = self.ingestor_factory()
            report = ingestor.ingest_bytes(job.name, data, on_progress, should_stop=give_up)
        except StoryGraphError as exc:
            self._finish(job, "failed", str(exc))
            return
        if report.status == "cancelled" and not self._cancel_requested(job.id):
            self._stopped(job)  # the runner is closing: the job resumes on the next start
            return
        state: JobState = {"added": "done", "unchanged": "done"}.get(report.status, "failed")
        if report.status == "cancelled":
            state = "cancelled"
        self._finish(job, state, report.message, report)

    def _stopped(self, job: Job) -> None:
        if self._cancel_requested(job.id):
            self._finish(job, "cancelled", "cancelled before it started")
            return
        job.state, job.stage = "queued", "queued"
        job.message = "interrupted; it resumes when the app starts again"
        self._save(job)

    def _finish(
        self, job: Job, state: JobState, message: str, report: IngestReport | None = None
    ) -> None:
        job.state, job.stage, job.message = state, "done", message
        job.finished_at = time.time()
        job.eta_s = None
        if report is not None:
            job.report = report.to_json()
            job.chunks_total = report.chunks
            job.chunks_cached, job.chunks_extracted = report.chunks_cached, report.chunks_extracted
            job.chunks_done = report.chunks_cached + report.chunks_extracted
        self._save(job)
        for suffix in (".upload", ".cancel"):
            with contextlib.suppress(FileNotFoundError):
                self._path(job.id, suffix).unlink()
        self._listeners.pop(job.id, None)
        self._prune()

    def _prune(self) -> None:
        finished = [j for j in self.jobs() if not j.active]
        for job in finished[: max(0, len(finished) - self.keep_finished)]:
            with contextlib.suppress(FileNotFoundError):
                self._path(job.id, ".json").unlink()

    def close(self, timeout: float = 10.0) -> None:
        """Stop the worker; a running job stops before its next chunk and resumes next start."""
        with self._lock:
            self._stopping = True
            self._lock.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("the ingest worker is still in a model call; it stops after it")
                return  # the runner lock is released when the process ends
        if self._owner_fh is not None:
            with contextlib.suppress(OSError):
                (self.dir / "runners" / f"{self.id}.lock").unlink()
            self._owner_fh.close()
            self._owner_fh = None
