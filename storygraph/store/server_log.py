"""What the graph store's server (redis-server with the FalkorDB module) wrote in its log about one
of its processes: the part since that process started, whether it is writing a crash report, and
the lines worth showing the user.

Every process of the data directory appends to the same log (`falkordb/falkordb.log`), each line
prefixed with its pid; a process announces itself with "Redis version=…, pid=<pid>, just
started". A crashed server writes a bug report ("=== REDIS BUG REPORT START", then "Redis 8.2.3
crashed by signal: 11, …", who sent it, a stack trace and register dumps) before the signal kills
it: the report's head names the crash, its hundreds of dump lines do not.
"""

from __future__ import annotations

from pathlib import Path

from storygraph.crashes import LOG_TAIL_LINES

READ_BYTES = 512 * 1024
"""How much of the log's end is read (a crash report is ~30 KB)."""
REPORT_START = "=== REDIS BUG REPORT START"
CRASH_LINE = "crashed by signal"
_STARTED = ", just started"


def _end_of(logfile: Path) -> str:
    try:
        with logfile.open("rb") as fh:
            fh.seek(max(0, logfile.stat().st_size - READ_BYTES))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""


def since_start(logfile: Path, pid: int) -> str:
    """The log of process `pid`: from the line where it announced its start (from its first line
    when that is no longer in the log's end) to the next process's announcement; empty when the
    log holds nothing of it."""
    text = "\n" + _end_of(logfile)
    at = text.rfind(f"pid={pid}, just started")
    line = text.rfind("\n", 0, at) if at >= 0 else text.find(f"\n{pid}:")
    if line < 0:
        return ""
    first_end = text.find("\n", line + 1)
    later = text.find(_STARTED, first_end) if first_end >= 0 else -1
    end = text.rfind("\n", 0, later) + 1 if later >= 0 else len(text)
    return text[line + 1 : end]


def is_crashing(section: str) -> bool:
    """The process whose part of the log this is has begun its crash report (it is still alive
    while it writes it, and dies of the signal after)."""
    return CRASH_LINE in section


def excerpt(section: str, lines: int = LOG_TAIL_LINES) -> str:
    """The lines to show: around a crash report's head (the lines before it, the signal, who sent
    it, where it crashed), else the last `lines` lines."""
    rows = section.splitlines()
    start = next((i for i, row in enumerate(rows) if REPORT_START in row), None)
    if start is None:
        return "\n".join(rows[-lines:])
    before = lines // 2
    return "\n".join(rows[max(0, start - before) : start + lines - before])
