"""Shared pieces of the benchmarks: tables, timing, the machine, throwaway stores, live servers."""

from __future__ import annotations

import json
import os
import platform
import re
import statistics
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from storygraph.store import GraphStore
from storygraph.store.runner import Row, Statement

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
STORIES = SHARED / "stories"


# --- tables --------------------------------------------------------------------------------
@dataclass
class Table:
    """One printed table: a title, column names, rows of cells and notes under it."""

    title: str
    columns: list[str]
    rows: list[list[Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, *cells: Any) -> None:
        self.rows.append(list(cells))

    def render(self) -> str:
        """A Markdown table (pastes into the README as is)."""
        cells = [[_cell(c) for c in row] for row in self.rows]
        widths = [len(c) for c in self.columns]
        for row in cells:
            widths = [max(w, len(c)) for w, c in zip(widths, row, strict=False)]
        lines = [f"### {self.title}", ""]
        lines.append(
            "| " + " | ".join(c.ljust(w) for c, w in zip(self.columns, widths, strict=True)) + " |"
        )
        lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
        for row in cells:
            lines.append(
                "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + " |"
            )
        lines.extend(f"\n{n}" if i == 0 else n for i, n in enumerate(_bullets(self.notes)))
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "columns": self.columns,
            "rows": self.rows,
            "notes": self.notes,
        }


def _bullets(notes: Sequence[str]) -> list[str]:
    return [f"- {n}" for n in notes]


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        if value == 0:
            return "0"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        if abs(value) >= 10:
            return f"{value:.1f}"
        if abs(value) >= 0.01:
            return f"{value:.2f}"
        return f"{value:.4f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


@dataclass
class BenchResult:
    name: str
    tables: list[Table]
    seconds: float = 0.0
    data: dict[str, Any] = field(default_factory=dict)


# --- timing --------------------------------------------------------------------------------
def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0-100) with linear interpolation."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    k = (len(ordered) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def ms(seconds: float) -> float:
    return seconds * 1000.0


class TimingRunner:
    """Wraps a Runner and adds up the wall time of each query (keyed by its first line)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.engine = inner.engine
        self.schema = inner.schema
        self.schema_drops = inner.schema_drops
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}

    def run(self, query: str, params: dict[str, Any] | None = None) -> list[Row]:
        started = time.perf_counter()
        try:
            return self.inner.run(query, params)
        finally:
            key = query_key(query)
            self.seconds[key] = self.seconds.get(key, 0.0) + time.perf_counter() - started
            self.calls[key] = self.calls.get(key, 0) + 1

    def run_batch(self, statements: Sequence[Statement]) -> list[Row]:
        last = deque(self.run_each(statements), maxlen=1)
        return last[0] if last else []

    def run_each(self, statements: Sequence[Statement]) -> Iterator[list[Row]]:
        """The inner runner's run_each (FalkorDB builds the next statements' text while the
        server runs one), each statement timed from the end of the one before to its rows."""
        started = time.perf_counter()
        for (query, _), rows in zip(statements, self.inner.run_each(statements), strict=False):
            key = query_key(query)
            self.seconds[key] = self.seconds.get(key, 0.0) + time.perf_counter() - started
            self.calls[key] = self.calls.get(key, 0) + 1
            yield rows
            started = time.perf_counter()

    def describe(self) -> str:
        return str(self.inner.describe())

    def close(self) -> None:
        self.inner.close()

    def reset(self) -> None:
        self.seconds.clear()
        self.calls.clear()


def query_key(query: str) -> str:
    """The name of the cypher.py constant a query came from (rendered templates included)."""
    text = " ".join(query.split())
    for name, pattern in _query_patterns():
        if pattern.fullmatch(text):
            return name
    return text[:40]


@lru_cache(maxsize=1)
def _query_patterns() -> list[tuple[str, re.Pattern[str]]]:
    from storygraph import cypher

    patterns = []
    for name, template in vars(cypher).items():
        if name.isupper() and isinstance(template, str) and name != "IDENTIFIER_RE":
            parts = re.split(r"<<[a-z_]+>>", " ".join(template.split()))
            body = "`[A-Za-z0-9_]+`".join(re.escape(part) for part in parts)
            patterns.append((name, re.compile(body)))
    return patterns


# --- throwaway embedded FalkorDB ---------------------------------------------------------------
@dataclass
class TempStore:
    store: GraphStore
    timing: TimingRunner
    server: Any

    def pid(self) -> int | None:
        return self.server.pid()


@contextmanager
def temp_store(
    root: Path, name: str, *, index: bool = True, ends_by_node_id: bool | None = None
) -> Iterator[TempStore]:
    """A GraphStore on its own embedded FalkorDB server in `root/name`, stopped afterwards
    (`ends_by_node_id`: as GraphStore's; False = the relations' ends by key, Neo4j's path)."""
    from storygraph.store.falkordb_runner import FalkorDBRunner
    from storygraph.store.falkordb_server import EmbeddedFalkorDB

    server = EmbeddedFalkorDB(root / name)
    runner = FalkorDBRunner(server, "bench")
    timing = TimingRunner(runner)
    # as the app builds it: the data dir's write lock and change stamp (storygraph.locks)
    store = GraphStore(
        timing,  # type: ignore[arg-type]
        lock_dir=root / name,
        ends_by_node_id=ends_by_node_id,
    )
    if index:
        store.ensure_schema()
    timing.reset()
    try:
        yield TempStore(store, timing, server)
    finally:
        store.close()
        server.stop()


# --- processes -----------------------------------------------------------------------------
def rss_mb(pid: int | None) -> float | None:
    """Resident memory of a process in MiB from /proc/PID/status (None when gone)."""
    if not pid:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def app_data_dir() -> Path:
    from storygraph.settings import Settings

    return Path(Settings().data_dir).resolve()


def running_model_server(data_dir: Path | None = None) -> tuple[str, int] | None:
    """(base URL, pid) of the embedded model server of the app's data dir, else None.

    A busy llama.cpp server answers nothing (not even /v1/models) while it generates, so a live
    pid with a listening port counts as running; requests then queue behind the other work.
    """
    import socket

    from storygraph.llm.embedded_server import HOST, STATE_FILE, pid_alive

    path = (data_dir or app_data_dir()) / STATE_FILE
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        pid, port = int(state["pid"]), int(state["port"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not pid_alive(pid):
        return None
    try:
        with socket.create_connection((HOST, port), timeout=5.0):
            pass
    except OSError:
        return None
    return f"http://{HOST}:{port}/v1", pid


def real_chat_model(url: str) -> Any:
    """The embedded model through the app's own client factory."""
    from storygraph.llm.factory import build_chat_model
    from storygraph.settings import Settings

    settings = Settings(llm_provider="embedded", llm_timeout_s=600.0, llm_max_retries=0)
    return build_chat_model(settings, embedded_base_url=url)


# --- the machine ---------------------------------------------------------------------------
def machine_info() -> dict[str, Any]:
    cpu = ""
    mem_gib = 0.0
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_gib = int(line.split()[1]) / 1024 / 1024
                break
    except OSError:
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count() or 0,
        "ram_gib": round(mem_gib, 1),
        "cpu": cpu or platform.processor(),
        "python": platform.python_version(),
        "load_avg_1m": round(load[0], 2),
    }


def story_files(language: str | None = None) -> list[Path]:
    langs = [language] if language else ["ja", "en"]
    files: list[Path] = []
    for lang in langs:
        files.extend(sorted((STORIES / lang).glob("*.txt")))
    return files
