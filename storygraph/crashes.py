"""Crashes of the helper processes (the model server, the sentence encoder, the graph store's
server): how one ended, in words, and the rule that restarts a crashed helper once and reports
a second crash in a row instead of restarting it forever.

Each helper has a ledger, `<data_dir>/crashes/<helper>.json`, shared by every process that uses
that data dir (the app, the CLI): the crashes in a row (each with how it ended, when, whether
the helper had done any work since it started, and the last lines of its log) and the last time
it worked. A crash is recorded once per process id, whichever process notices it first. A helper
that works again (`worked`) ends the row; a reinstall or `python -m storygraph doctor
--clear-crashes` clears it. The ledger holds no story data: losing it loses nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

Helper = Literal["model", "encoder", "store"]

HELPER_NAMES: dict[Helper, str] = {
    "model": "the model server",
    "encoder": "the sentence encoder's helper",
    "store": "the graph store's server",
}
WHAT_USERS_GET: dict[Helper, str] = {
    "model": "answers list the graph's facts until it is back",
    "encoder": "each `ask` loads the encoder in its own process (a few seconds more) until it "
    "is back",
    "store": "the stories cannot be read or written until it is back",
}
MAX_RESTARTS_IN_A_ROW = 1
"""A crashed helper is restarted once; a second crash in a row is reported, not retried."""
LOG_TAIL_LINES = 20
FATAL_HEAD = "Fatal Python error:"
"""The first line of faulthandler's report (the signal's name; the threads' stacks follow)."""


def log_excerpt(text: str, lines: int = LOG_TAIL_LINES) -> str:
    """The lines of a helper's log to show: from the head of its last faulthandler report (which
    names the signal; every thread's stack follows it, more than `lines` lines when the process
    ran many threads), else its last `lines` lines."""
    rows = text.splitlines()
    heads = [i for i, row in enumerate(rows) if FATAL_HEAD in row]
    if heads:
        return "\n".join(rows[heads[-1] : heads[-1] + lines])
    return "\n".join(rows[-lines:])
UNKNOWN_CAUSE = "an unknown cause (no exit status or fatal error in its log)"
"""How a helper ended when neither its exit status nor its log tells."""

SIGNAL_WORDS = {
    "SIGSEGV": "a segmentation fault",
    "SIGBUS": "a bus error",
    "SIGILL": "an illegal instruction (a build for another processor?)",
    "SIGFPE": "an arithmetic fault",
    "SIGABRT": "an abort",
    "SIGKILL": "being killed (out of memory, or by hand)",
    "SIGTERM": "being told to stop (SIGTERM) by another program",
}
# Python's faulthandler (on in our helpers) writes this line before a fatal signal kills them:
# the only trace of how a helper that another process started ended.
_FATAL = re.compile(
    r"Fatal Python error: (Segmentation fault|Bus error|Illegal instruction|"
    r"Floating-point exception|Aborted)"
)
# redis-server (the graph store's server) writes a crash report into its log before the signal
# kills it: "Redis 8.2.3 crashed by signal: 11, si_code: 0".
_REDIS_CRASH = re.compile(r"crashed by signal: (\d+)")
_FATAL_SIGNALS = {
    "Segmentation fault": "SIGSEGV",
    "Bus error": "SIGBUS",
    "Illegal instruction": "SIGILL",
    "Floating-point exception": "SIGFPE",
    "Aborted": "SIGABRT",
}


def exit_description(returncode: int) -> str:
    """How a process ended, from its exit status: 'a segmentation fault (SIGSEGV)', 'exit
    code 1'. (Popen's returncode: negative for a signal.)"""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
        words = SIGNAL_WORDS.get(name)
        return f"{words} ({name})" if words else name
    if returncode > 128 and returncode - 128 in {s.value for s in signal.Signals}:
        return exit_description(128 - returncode)  # a shell's way of saying a signal
    return f"exit code {returncode}"


def description_from_log(text: str) -> str | None:
    """How a helper ended, from the last fatal-error line its log holds (Python's faulthandler
    or redis-server's crash report), or None."""
    found: list[tuple[int, str]] = [
        (m.start(), f"{SIGNAL_WORDS[name]} ({name})")
        for m in _FATAL.finditer(text)
        for name in [_FATAL_SIGNALS[m.group(1)]]
    ]
    found += [(m.start(), exit_description(-int(m.group(1)))) for m in _REDIS_CRASH.finditer(text)]
    return max(found)[1] if found else None


@dataclass(frozen=True)
class Crash:
    """One crash of a helper."""

    helper: Helper
    pid: int
    how: str
    """'a segmentation fault (SIGSEGV)', 'exit code 1', 'an unknown cause'."""
    at: float
    first_use: bool
    """It crashed before it had done any work since it started (at its first answer)."""
    log_tail: str = ""

    @property
    def sentence(self) -> str:
        """'the model server stopped with a segmentation fault (SIGSEGV) at its first use'."""
        when = " at its first use after starting" if self.first_use else ""
        return f"{HELPER_NAMES[self.helper]} stopped with {self.how}{when}"


@dataclass
class _Ledger:
    crashes: list[Crash] = field(default_factory=list)
    worked_at: float = 0.0


class CrashLedger:
    """One helper's crashes in a row for one data dir (module doc)."""

    _lock = threading.Lock()  # threads of one process; processes race harmlessly (last wins)

    def __init__(self, data_dir: Path | str, helper: Helper) -> None:
        self.helper: Helper = helper
        self.path = Path(data_dir) / "crashes" / f"{helper}.json"

    # --- reading ---------------------------------------------------------------------------
    def _read(self) -> _Ledger:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            crashes = [Crash(**{**c, "helper": self.helper}) for c in raw.get("crashes", [])]
            return _Ledger(crashes, float(raw.get("worked_at", 0.0)))
        except (OSError, ValueError, TypeError, AttributeError):
            return _Ledger()

    def in_a_row(self) -> list[Crash]:
        """The crashes since the helper last worked, oldest first."""
        return self._read().crashes

    def last(self) -> Crash | None:
        crashes = self.in_a_row()
        return crashes[-1] if crashes else None

    def may_restart(self) -> bool:
        """Fewer crashes in a row than restarts allowed plus one: restart it (once)."""
        return len(self.in_a_row()) <= MAX_RESTARTS_IN_A_ROW

    def worked_since(self, started_at: float) -> bool:
        """The helper did some work after `started_at` (its process's start)."""
        return self._read().worked_at >= started_at

    # --- writing ---------------------------------------------------------------------------
    def _write(self, ledger: _Ledger) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}")
        data = {"crashes": [asdict(c) for c in ledger.crashes], "worked_at": ledger.worked_at}
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        os.replace(tmp, self.path)

    def record(
        self, pid: int, how: str, *, started_at: float, log_tail: str = "", now: float | None = None
    ) -> Crash:
        """Record the crash of process `pid` (once: a pid already recorded is returned as it
        was recorded) and return it."""
        with self._lock:
            ledger = self._read()
            for crash in ledger.crashes:
                if crash.pid == pid:
                    return crash
            crash = Crash(
                self.helper,
                pid,
                how,
                time.time() if now is None else now,
                first_use=ledger.worked_at < started_at,
                log_tail=log_tail,
            )
            ledger.crashes.append(crash)
            self._write(ledger)
            return crash

    def worked(self) -> None:
        """The helper did its work: the row of crashes ends (a small file written per answer)."""
        with self._lock:
            self._write(_Ledger([], time.time()))

    def clear(self) -> None:
        """Forget the crashes (after a reinstall, or asked by the user)."""
        with self._lock, contextlib.suppress(FileNotFoundError):
            self.path.unlink()


def refusal(crashes: list[Crash], fix: str) -> str:
    """What to tell the user when a helper crashed too often in a row to be restarted again
    (one line; the doctor shows the log's tail)."""
    last = crashes[-1]
    times = "twice" if len(crashes) == 2 else f"{len(crashes)} times"
    return (
        f"{last.sentence[0].upper()}{last.sentence[1:]}, {times} in a row, so it is not "
        f"restarted again; {WHAT_USERS_GET[last.helper]}. {fix}"
    )


def clear_all(data_dir: Path | str) -> list[Helper]:
    """Clear every helper's ledger; the helpers that had crashes recorded."""
    cleared: list[Helper] = []
    for helper in HELPER_NAMES:
        ledger = CrashLedger(data_dir, helper)
        if ledger.in_a_row():
            cleared.append(helper)
        ledger.clear()
    return cleared
