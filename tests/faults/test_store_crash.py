"""The graph store's server crashes (storygraph.crashes, helper "store"): the real redis-server
with the FalkorDB module is sent SIGSEGV, its crash handler writes its report and it dies as a
crash would. It is noticed at the next query, named ("a segmentation fault (SIGSEGV)", from its
exit status when this process started it, else from the crash report in its log), restarted once
(a new process, the data replayed from its append-only file), and after a second crash in a row
it is not restarted again: the query fails with a StoreError saying so, the CLI prints it, the
doctor's "store crashes" check fails with the log's lines, and once the crashes are cleared the
server starts again with every story still there."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storygraph.crashes import CrashLedger
from storygraph.doctor import DoctorReport, check_crashes, check_store
from storygraph.errors import StoreError
from storygraph.processes import pid_alive
from storygraph.services import Services
from storygraph.store import server_log
from storygraph.store.falkordb_server import EmbeddedFalkorDB
from tests.faults.conftest import SEED_JA, ServicesFactory, snapshot

ROOT = Path(__file__).resolve().parents[2]
SEGFAULT = "a segmentation fault (SIGSEGV)"

pytestmark = pytest.mark.timeout(180)


def _server(services: Services) -> EmbeddedFalkorDB:
    return services.store.runner.server  # type: ignore[attr-defined, no-any-return]


def _segfault(server: EmbeddedFalkorDB) -> int:
    """Send the running server SIGSEGV and wait until it is dead (its crash report written)."""
    pid = server.pid()
    assert pid is not None and pid_alive(pid)
    os.kill(pid, signal.SIGSEGV)
    own = server._process
    if own is not None and own.pid == pid:
        assert own.wait(timeout=60) == -signal.SIGSEGV
    else:
        deadline = time.monotonic() + 60
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not pid_alive(pid)
    return pid


def _seeded(make_services: ServicesFactory, data_dir: Path) -> Services:
    services = make_services(data_dir=data_dir)
    assert services.ingestor().ingest_bytes("seed.txt", SEED_JA.encode()).status == "added"
    return services


def test_a_crash_is_named_restarted_once_then_reported_and_nothing_is_lost(
    make_services: ServicesFactory, own_data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    services = _seeded(make_services, own_data_dir)
    before = snapshot(services.store)
    server = _server(services)
    ledger = CrashLedger(own_data_dir, "store")
    assert server.owned  # this process started it: its exit status is read

    first = _segfault(server)
    with caplog.at_level(logging.WARNING, logger="storygraph.store.falkordb_server"):
        assert snapshot(services.store) == before  # the next query restarts it: nothing lost
    said = caplog.text
    assert f"the graph store's server stopped with {SEGFAULT}" in said, said
    assert f"(pid {first}); restarting it once" in said
    assert server.pid() not in (None, first)  # a new process
    assert ledger.in_a_row() == []  # the restarted server answered: the row ended

    # Crashed again before it answered anything, twice: the second is not restarted.
    second = _segfault(server)
    server.ensure_running()  # noticed (the first of a new row) and restarted once
    assert [c.pid for c in ledger.in_a_row()] == [second]
    third = _segfault(server)
    with pytest.raises(StoreError) as refused:
        services.store.list_documents()
    message = str(refused.value)
    assert f"The graph store's server stopped with {SEGFAULT}" in message, message
    assert "twice in a row, so it is not restarted again" in message
    assert "python -m storygraph doctor" in refused.value.hint
    assert [c.pid for c in ledger.in_a_row()] == [second, third]
    assert server.pid() is None  # not started again
    with pytest.raises(StoreError, match="twice in a row"):
        EmbeddedFalkorDB(own_data_dir).ensure_running()  # nor by another user of the data dir

    report = DoctorReport(model="none")
    check_store(report, services.settings)
    check_crashes(report, services.settings)
    store = report.check("graph store")
    assert store is not None and store.status == "fail" and "twice in a row" in store.detail
    assert "--clear-crashes" in store.fix
    check = report.check("store crashes")
    assert check is not None and check.status == "fail", report.render()
    assert SEGFAULT in check.detail
    assert "crashed by signal: 11" in check.detail  # the crash report's head, from its log
    assert "--clear-crashes" in check.fix

    ledger.clear()  # what `doctor --clear-crashes` does
    assert snapshot(services.store) == before  # started again, every story still there


def test_a_crash_noticed_by_another_process_is_named_from_the_servers_log(
    make_services: ServicesFactory, own_data_dir: Path
) -> None:
    """The process that notices the crash did not start the server (the app finding the CLI's
    kept server dead): no exit status to read; the crash report in its log names it."""
    services = _seeded(make_services, own_data_dir)
    before = snapshot(services.store)
    starter = _server(services)
    pid = _segfault(starter)
    other = EmbeddedFalkorDB(own_data_dir)
    assert not other.owned
    try:
        other.ensure_running()
        crash = CrashLedger(own_data_dir, "store").last()
        assert crash is not None and crash.pid == pid and crash.how == SEGFAULT
        assert "crashed by signal: 11" in crash.log_tail
        assert other.pid() not in (None, pid)
    finally:
        other.stop()  # it started the new server: it stops it
    assert snapshot(services.store) == before


def test_the_cli_prints_the_refusal_and_its_fix(own_data_dir: Path) -> None:
    server = EmbeddedFalkorDB(own_data_dir)
    server.ensure_running()
    try:
        _segfault(server)
        server.ensure_running()  # restarted once
        _segfault(server)
        with pytest.raises(StoreError):  # the second in a row: not restarted
            server.ensure_running()
    finally:
        server.stop()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STORYGRAPH_", "NEO4J_"))}
    env.update(STORYGRAPH_DATA_DIR=str(own_data_dir), STORYGRAPH_LLM_PROVIDER="none")
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "storygraph", "docs"],
        cwd=own_data_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert f"error: The graph store's server stopped with {SEGFAULT}" in done.stderr
    assert "twice in a row, so it is not restarted again" in done.stderr
    assert "next step: Run `python -m storygraph doctor`" in done.stderr


def test_the_log_excerpt_keeps_the_crash_reports_head(tmp_path: Path) -> None:
    log = tmp_path / "falkordb.log"
    older = "7:M 01 Dec 2026 10:00:00.000 * Redis version=8.2.3, pid=7, just started\n"
    lines = [f"9:M 01 Dec 2026 10:00:00.000 * line {i}" for i in range(30)]
    report = [
        "=== REDIS BUG REPORT START: Cut & paste starting from here ===",
        "9:M 01 Dec 2026 10:00:01.000 # Redis 8.2.3 crashed by signal: 11, si_code: 0",
        *[f"9:M 01 Dec 2026 10:00:01.000 # (dump) {i}" for i in range(400)],
    ]
    start = "9:C 01 Dec 2026 10:00:00.000 * Redis version=8.2.3, pid=9, just started"
    log.write_text(older + "\n".join([start, *lines, *report]) + "\n")
    section = server_log.since_start(log, 9)
    assert section.startswith(start) and "pid=7" not in section
    assert server_log.is_crashing(section)
    shown = server_log.excerpt(section)
    assert "crashed by signal: 11" in shown and "line 29" in shown
    assert len(shown.splitlines()) == 20
    assert not server_log.is_crashing(server_log.since_start(log, 7))
    assert server_log.since_start(log, 8) == ""
