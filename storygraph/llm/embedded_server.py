"""The embedded model's local server: llama.cpp's OpenAI-compatible server, one per data dir.

`EmbeddedServer` starts `python -m llama_cpp.server` on 127.0.0.1 (through
`storygraph.llm.llama_server`, which keeps it from HTML-escaping prompts), waits until
`GET /v1/models` answers, and records `{pid, port, model, started_at}` in
`<data_dir>/llm-server.json` so a later process (a restarted app, the CLI) reuses the running
server instead of loading the model again. Its output goes to `<data_dir>/logs/llm-server.log`.

Staying warm: every process using the server holds a shared lock on `<data_dir>/llm-server.users`
and each use stamps `last_used` in the state file. The process that starts the server starts a
detached idle reaper beside it (`python -m storygraph.llm.idle_reaper`), which stops the server
once nobody holds the users lock and it has been idle for that process's `keep_alive_s` (0: at
once), and only after checking that the pid is still our server. A clean exit stops a server
nobody else uses at once (`keep_alive_s` 0) or leaves it to the reaper (the CLI keeps it warm;
another process may still be using it); a process killed outright (SIGKILL, a crash) drops its
lock with it, and the reaper stops the server it can no longer stop itself.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal, Self

from storygraph.crashes import (
    UNKNOWN_CAUSE,
    Crash,
    CrashLedger,
    description_from_log,
    exit_description,
    log_excerpt,
    refusal,
)
from storygraph.errors import ModelError, ModelServerCrashed
from storygraph.llm.model_files import MODEL_ALIAS, model_path
from storygraph.locks import exclusive_lock, hold_shared
from storygraph.processes import PROJECT_ROOT, pid_alive, start_detached_module

if TYPE_CHECKING:
    from storygraph.settings import Settings

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
# llama-cpp-python's handler that lets the model choose between a reply and a tool call
# (`tool_choice="auto"`) and that also honours a forced tool (`with_structured_output`).
CHAT_FORMAT = "chatml-function-calling"
# `python -m llama_cpp.server` with HTML escaping of prompts turned off (see that module).
SERVER_MODULE = "storygraph.llm.llama_server"
STATE_FILE = "llm-server.json"
LOCK_FILE = "llm-server.lock"
USERS_FILE = "llm-server.users"
LOG_FILE = Path("logs") / "llm-server.log"
LOG_ROTATE_BYTES = 5 * 1024 * 1024
CRASH_FIX = (
    "Run `python -m storygraph doctor` for the cause and the fix (a model server built for "
    "another processor is rebuilt by `make model`); after the fix, `python -m storygraph "
    "doctor --clear-crashes` lets it start again."
)


@dataclass(frozen=True)
class Launch:
    """What a server command needs to know."""

    model: Path
    port: int
    threads: int
    ctx: int


@dataclass(frozen=True)
class ServerState:
    """The state file's content."""

    pid: int
    port: int
    model: str
    started_at: float
    last_used: float = 0.0  # 0: not stamped yet; idle time then counts from `started_at`

    @property
    def idle_since(self) -> float:
        return max(self.started_at, self.last_used)


CommandFactory = Callable[[Launch], list[str]]


def llama_command(launch: Launch) -> list[str]:
    """The llama.cpp server command line for `launch`."""
    return [
        sys.executable,
        "-m",
        SERVER_MODULE,
        "--model",
        str(launch.model),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        HOST,
        "--port",
        str(launch.port),
        "--n_threads",
        str(launch.threads),
        "--n_threads_batch",
        str(launch.threads),
        "--n_ctx",
        str(launch.ctx),
        "--chat_format",
        CHAT_FORMAT,
        # logits for every prompt token are only needed for logprobs; keeping them costs
        # n_ctx x 151,936 floats (up to 2.4 GB at n_ctx 4096) of resident memory.
        "--logits_all",
        "False",
        # the default cuts a streaming answer short when another request arrives
        "--interrupt_requests",
        "False",
    ]


# --- small helpers -----------------------------------------------------------------------
def free_port() -> int:
    """A port nothing listens on right now (the OS's choice for port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
        return True


def models_answer(port: int, timeout_s: float = 2.0) -> bool:
    """True when `GET /v1/models` on `port` answers 200 with a model list."""
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}/v1/models", timeout=timeout_s) as resp:
            body: Any = json.loads(resp.read().decode("utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(body, dict) and isinstance(body.get("data"), list)


def port_listening(port: int, timeout_s: float = 1.0) -> bool:
    """True when something accepts TCP connections on `port`.

    The liveness check for a server that already answered once: llama.cpp's `/v1/models`
    waits for the model lock, so it stalls for as long as a generation runs.
    """
    try:
        with socket.create_connection((HOST, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def serves_port(pid: int, port: int) -> bool:
    """True when `pid` is alive, was started with `port` on its command line and listens there.

    Guards against a recycled pid or another program on the port before reusing or killing.
    """
    if not pid_alive(pid):
        return False
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        argv = []  # no /proc: rely on the port alone
    if argv and str(port).encode() not in argv:
        return False
    return port_listening(port)


def tail(path: Path, lines: int = 20, start: int = 0) -> str:
    """The last `lines` lines of `path` after byte offset `start`."""
    try:
        with path.open("rb") as fh:
            fh.seek(start)
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """An inter-process lock (POSIX); a no-op where `fcntl` is missing."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextlib.contextmanager
def users_lock(data_dir: Path, *, wait: bool) -> Iterator[bool]:
    """The users lock taken exclusively (by the idle reaper); yields False when a process that
    uses the server holds it shared and `wait` is off."""
    with exclusive_lock(data_dir / USERS_FILE, wait=wait) as held:
        yield held


def read_state(path: Path) -> ServerState | None:
    """The state file, or None when it is missing or unreadable."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return ServerState(
            pid=int(raw["pid"]),
            port=int(raw["port"]),
            model=str(raw["model"]),
            started_at=float(raw["started_at"]),
            last_used=float(raw.get("last_used", 0.0)),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def write_state(path: Path, state: ServerState) -> None:
    """Replace the state file atomically (a temp file per process and thread)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(asdict(state)), encoding="utf-8")
    os.replace(tmp, path)


def terminate_pid(pid: int, timeout_s: float) -> None:
    """SIGTERM, then SIGKILL after `timeout_s`. Callers check first that `pid` is our server."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


IdleOutcome = Literal["stopped", "orphan stopped", "idle too short", "in use", "gone", "replaced"]


def stop_if_idle(
    data_dir: Path,
    pid: int,
    port: int,
    idle_s: float,
    *,
    now: float | None = None,
    stop_timeout_s: float = 10.0,
) -> IdleOutcome:
    """One look of the idle reaper at the server `pid` serving `port` in `data_dir`.

    Stops it only when the state file still names that pid and port, the pid is alive and
    started with that port and listens there (`serves_port`), nobody holds the users lock, and
    nothing used it for `idle_s` seconds. A server whose state file or whole data dir is gone
    (deleted by hand, `storygraph reset` of an older version) can no longer be found by any
    process: it is an orphan, stopped by pid ("orphan stopped") once nobody holds the users
    lock, or at once when the data dir itself is gone. "gone" and "replaced" mean: nothing left
    to watch.
    """
    if not data_dir.is_dir():  # no lock to take without making the directory again
        return _stop_orphan(pid, port, stop_timeout_s)
    with _file_lock(data_dir / LOCK_FILE):
        state = read_state(data_dir / STATE_FILE)
        if state is None:
            if not serves_port(pid, port):
                return "gone"  # stopped by its owner, which removed the state file
            with users_lock(data_dir, wait=False) as free:
                return _stop_orphan(pid, port, stop_timeout_s) if free else "in use"
        if (state.pid, state.port) != (pid, port):
            return "replaced"
        if not serves_port(pid, port):
            return "gone"
        if (now if now is not None else time.time()) - state.idle_since < idle_s:
            return "idle too short"
        with users_lock(data_dir, wait=False) as free:
            if not free:
                return "in use"
            terminate_pid(pid, stop_timeout_s)
            (data_dir / STATE_FILE).unlink(missing_ok=True)
            return "stopped"


def _stop_orphan(pid: int, port: int, stop_timeout_s: float) -> IdleOutcome:
    """Stop the server `pid` that no state file names any more, if it still is that server."""
    if not serves_port(pid, port):
        return "gone"
    log.warning("Model server pid %s lost its state file or data dir: stopping it", pid)
    terminate_pid(pid, stop_timeout_s)
    return "orphan stopped"


def stop_recorded_server(data_dir: Path, stop_timeout_s: float = 10.0) -> int | None:
    """Stop the model server `data_dir`'s state file names, whichever process started it
    (`storygraph reset`); its pid, or None when no server of that data dir was running."""
    if not data_dir.is_dir():
        return None
    with _file_lock(data_dir / LOCK_FILE):
        state = read_state(data_dir / STATE_FILE)
        (data_dir / STATE_FILE).unlink(missing_ok=True)
        if state is None or not serves_port(state.pid, state.port):
            return None
        terminate_pid(state.pid, stop_timeout_s)
        return state.pid


# llama_cpp.server reads its settings from unprefixed environment variables too (PORT, HOST,
# API_KEY, MODEL, N_CTX, …) and lets them win over the command line: a PORT exported for the
# app (`make run PORT=8599`, a PaaS) made the model server try to bind the app's own port.
_SERVER_ENV_FALLBACK = frozenset(
    {
        "host",
        "port",
        "api_key",
        "model",
        "model_alias",
        "n_ctx",
        "n_threads",
        "n_threads_batch",
        "chat_format",
        "config_file",
        "logits_all",
        "interrupt_requests",
        "verbose",
    }
)


def _server_setting_names() -> frozenset[str]:
    try:
        from llama_cpp.server.settings import ModelSettings, ServerSettings
    except Exception:  # noqa: BLE001 - not installed, or fails to load: use the known names
        return _SERVER_ENV_FALLBACK
    names = set(ServerSettings.model_fields) | set(ModelSettings.model_fields)
    return frozenset(n.lower() for n in names) | _SERVER_ENV_FALLBACK


def server_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The model server's environment: ours without its setting names, output unbuffered
    (so the log holds the last words of a server that crashes)."""
    names = _server_setting_names()
    env = {k: v for k, v in environ.items() if k.lower() not in names}
    env["PYTHONUNBUFFERED"] = "1"
    return env


# --- the server --------------------------------------------------------------------------
class EmbeddedServer:
    """One llama.cpp server per data dir, started on demand and reused across processes."""

    def __init__(
        self,
        settings: Settings,
        *,
        model: Path | None = None,
        command: CommandFactory | None = None,
        startup_timeout_s: float = 180.0,
        stop_timeout_s: float = 10.0,
        keep_alive_s: float = 0.0,
        on_loading: Callable[[str], None] | None = None,
    ) -> None:
        self._data_dir = Path(settings.data_dir)
        self._model = (model if model is not None else model_path(settings)).resolve()
        self._threads = settings.embedded_threads
        self._ctx = settings.embedded_ctx
        self._wanted_port = settings.embedded_port
        self._command = command or llama_command  # looked up here: a test may swap it
        self._startup_timeout_s = startup_timeout_s
        self._stop_timeout_s = stop_timeout_s
        self._lock = threading.RLock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._atexit_registered = False
        self._state: ServerState | None = None
        self._keep_alive_s = keep_alive_s
        self._on_loading = on_loading
        self._users: IO[str] | None = None
        self.notice = ""  # a line for the user, e.g. "port 8080 was taken, using 41234"
        self.crashes = CrashLedger(self._data_dir, "model")
        self.crash_notice = ""  # "the model server stopped with … ; restarted it", for the user

    # --- paths and properties ------------------------------------------------------------
    @property
    def state_path(self) -> Path:
        return self._data_dir / STATE_FILE

    @property
    def log_path(self) -> Path:
        return self._data_dir / LOG_FILE

    @property
    def model_id(self) -> str:
        """The model name to send in requests (the server's `--model_alias`)."""
        return MODEL_ALIAS

    @property
    def port(self) -> int | None:
        return self._state.port if self._state else None

    @property
    def pid(self) -> int | None:
        return self._state.pid if self._state else None

    # --- public API ----------------------------------------------------------------------
    def start(self) -> str:
        """Start (or reuse) the server; return its base URL. Raises `ModelError`."""
        with self._lock:
            self._attach()  # before the start lock: the reaper holds that one while it looks
            return self._start_locked()

    def _start_locked(self) -> str:
        with _file_lock(self._data_dir / LOCK_FILE):
            if self._state and self._healthy(self._state):
                return self._url(self._state.port)
            reused = self._reuse_from_file()
            if reused:
                self._state = replace(reused, last_used=time.time())
                self._write_state(self._state)  # reusing it is a use
                log.info("Reusing model server pid %s on port %s", reused.pid, reused.port)
                return self._url(reused.port)
            if not self.crashes.may_restart():
                self.crash_notice = ""
                raise ModelServerCrashed(refusal(self.crashes.in_a_row(), CRASH_FIX), CRASH_FIX)
            self._state = self._launch()
            return self._url(self._state.port)

    def ensure_running(self) -> str:
        """The base URL of a healthy server, restarting it once if it crashed (a second crash
        in a row raises `ModelServerCrashed` instead: storygraph.crashes)."""
        with self._lock:
            if self._state and self._healthy(self._state):
                self.touch()
                return self._url(self._state.port)
            crash = self.fault() if self._state else None
            if self._state:
                self._forget()
            if crash is not None:
                log.warning("%s (pid %s); restarting it once", crash.sentence, crash.pid)
            url = self.start()
            if crash is not None:
                self.crash_notice = f"{_capital(crash.sentence)}; it was restarted."
            return url

    def fault(self) -> Crash | None:
        """How this data dir's server ended when it died while recorded as running (a crash:
        a stop by its owner or its reaper removes the state file first), recorded in the crash
        ledger once per pid; None while it runs or when none was started."""
        with self._lock:
            state = self._state or self._read_state()
            if state is None or self._healthy(state):
                return None
            code = None
            if self._proc is not None and self._proc.pid == state.pid:
                code = self._proc.poll()
                if code is None:
                    return None  # alive, not listening yet or any more: not a crash
            elif pid_alive(state.pid):
                return None
            return self._record_crash(state, code)

    def worked(self) -> None:
        """An answer came back whole: the row of crashes ends (storygraph.crashes)."""
        self.crash_notice = ""
        self.crashes.worked()

    def is_healthy(self) -> bool:
        """The server process is alive and listening (it may be busy generating)."""
        with self._lock:
            return self._state is not None and self._healthy(self._state)

    def stop(self) -> None:
        """Stop this data dir's server (started here or by another process): SIGTERM, SIGKILL."""
        with self._lock, _file_lock(self._data_dir / LOCK_FILE):
            state = self._state or self._read_state()
            if state is None:
                return
            if self._proc is not None and self._proc.pid == state.pid:
                self._stop_child(self._proc)
            elif serves_port(state.pid, state.port):
                self._stop_pid(state.pid)
            self._forget()
            self.state_path.unlink(missing_ok=True)

    def touch(self) -> None:
        """Stamp `last_used` in the state file (what the idle reaper measures from)."""
        with self._lock, _file_lock(self._data_dir / LOCK_FILE):
            current = self._read_state()
            if self._state is None or current is None or current.pid != self._state.pid:
                return  # stopped or replaced meanwhile: nothing of ours to stamp
            self._state = replace(current, last_used=time.time())
            self._write_state(self._state)

    def stop_if_started_here(self) -> None:
        """At exit: leave a server this object reused running; stop one it started, or hand it
        to the idle reaper so the next command finds it warm (with `keep_alive_s`) or so
        another process that is using it right now keeps it until it is done."""
        if self._proc is None or self._proc.poll() is not None:
            self._detach()
            return
        self._detach()
        in_use = False
        if self._keep_alive_s <= 0:
            with users_lock(self._data_dir, wait=False) as free:
                in_use = not free
        if (self._keep_alive_s > 0 or in_use) and self._state is not None:
            self.touch()  # the reaper started with the server takes it from here
            self._proc = None  # no longer ours to stop
            return
        self.stop()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- internals -----------------------------------------------------------------------
    def _attach(self) -> None:
        """Hold the users lock shared for this object's life: the reaper leaves the server be."""
        if self._users is None:
            self._data_dir.mkdir(parents=True, exist_ok=True)
            self._users = hold_shared(self._data_dir / USERS_FILE)  # waits while it is stopped

    def _detach(self) -> None:
        if self._users is not None:
            self._users.close()  # closing drops the lock
            self._users = None

    def _start_reaper(self, state: ServerState) -> None:
        """The server's reaper, started with it (module doc): while this process lives it holds
        the users lock, so the reaper only looks; once it is gone, however it went, the reaper
        stops the server after `keep_alive_s` without use."""
        args = ["--data-dir", str(self._data_dir.resolve()), "--pid", str(state.pid)]
        args += ["--port", str(state.port), "--idle-s", str(self._keep_alive_s)]
        start_detached_module("storygraph.llm.idle_reaper", args, self.log_path)
        log.info(
            "Model server pid %s: its reaper stops it %.0f s after its last user is gone",
            state.pid,
            self._keep_alive_s,
        )

    @staticmethod
    def _url(port: int) -> str:
        return f"http://{HOST}:{port}/v1"

    def _healthy(self, state: ServerState) -> bool:
        if self._proc is not None and self._proc.pid == state.pid:
            return self._proc.poll() is None and port_listening(state.port)
        return serves_port(state.pid, state.port)

    def _forget(self) -> None:
        if self._proc is not None:
            with contextlib.suppress(Exception):
                self._proc.poll()
        self._proc = None
        self._state = None

    def _read_state(self) -> ServerState | None:
        return read_state(self.state_path)

    def _write_state(self, state: ServerState) -> None:
        write_state(self.state_path, state)

    def _record_crash(self, state: ServerState, code: int | None) -> Crash:
        """Record the death of the server `state` names; `code` is its exit status when this
        process started it, else its log says how (faulthandler's line) if anything does."""
        last = tail(self.log_path, 200)
        how = exit_description(code) if code is not None else description_from_log(last)
        return self.crashes.record(
            state.pid,
            how or UNKNOWN_CAUSE,
            started_at=state.started_at,
            log_tail=log_excerpt(last),
        )

    def _reuse_from_file(self) -> ServerState | None:
        state = self._read_state()
        if state is None:
            return None
        if not serves_port(state.pid, state.port):
            if not pid_alive(state.pid):  # died while recorded as running: a crash
                own = self._proc is not None and self._proc.pid == state.pid
                self._record_crash(state, self._proc.poll() if own and self._proc else None)
            self.state_path.unlink(missing_ok=True)
            return None
        if state.model != str(self._model):
            log.info("The running server has another model (%s); replacing it", state.model)
            self._stop_pid(state.pid)
            self.state_path.unlink(missing_ok=True)
            return None
        return state

    def _choose_port(self) -> int:
        wanted = self._wanted_port
        if not wanted:
            return free_port()
        if port_is_free(wanted):
            return wanted
        port = free_port()
        self.notice = f"Port {wanted} is taken by another program; the model server uses {port}"
        log.warning(self.notice)
        return port

    def _launch(self) -> ServerState:
        if not self._model.is_file():
            raise ModelError(
                f"The embedded model file {self._model} is missing",
                "install it with `make model` (or `python scripts/install_model.py`)",
            )
        last_error: ModelError | None = None
        for _attempt in range(2):  # a second try covers losing a race for the chosen port
            port = self._choose_port()
            try:
                return self._spawn(port)
            except _PortLost as err:
                last_error = err.error
        assert last_error is not None
        raise last_error

    def _spawn(self, port: int) -> ServerState:
        if self._on_loading is not None:
            self._on_loading(
                f"Loading the embedded model ({self._model.name}): the first answer after a "
                "start waits for it"
            )
        launch = Launch(model=self._model, port=port, threads=self._threads, ctx=self._ctx)
        cmd = self._command(launch)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            if self.log_path.stat().st_size > LOG_ROTATE_BYTES:
                os.replace(self.log_path, self.log_path.with_name(self.log_path.name + ".1"))
        with self.log_path.open("ab") as logf:
            logf.write(f"\n--- {time.strftime('%Y-%m-%d %H:%M:%S')} {cmd}\n".encode())
            logf.flush()
            offset = logf.tell()
            proc = subprocess.Popen(
                cmd,
                cwd=PROJECT_ROOT,  # `-m storygraph…` must import whatever the caller's cwd is
                env=server_environment(os.environ),
                stdin=subprocess.DEVNULL,
                stdout=logf,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C in the app's terminal doesn't kill it midway
            )
        self._proc = proc
        if not self._atexit_registered:  # the process that started the server stops it
            atexit.register(self.stop_if_started_here)
            self._atexit_registered = True
        started = time.time()
        deadline = time.monotonic() + self._startup_timeout_s
        while time.monotonic() < deadline:
            code = proc.poll()
            if code is not None:
                self._proc = None
                error = self._failure(f"exited with code {code} while starting", offset)
                if not port_is_free(port):
                    raise _PortLost(error)
                raise error
            if models_answer(port, timeout_s=1.0):
                state = ServerState(proc.pid, port, str(self._model), started, time.time())
                self._write_state(state)
                self._start_reaper(state)
                log.info(
                    "Embedded model server pid %s on port %s ready in %.1f s",
                    proc.pid,
                    port,
                    time.time() - started,
                )
                return state
            time.sleep(0.2)
        self._stop_child(proc)
        self._proc = None
        raise self._failure(f"did not answer within {self._startup_timeout_s:.0f} s", offset)

    def _failure(self, what: str, offset: int) -> ModelError:
        last = tail(self.log_path, 20, offset)
        message = f"The embedded model server {what}"
        if last:
            message += f". Last lines of {self.log_path}:\n{last}"
        return ModelError(
            message,
            "check the log; on low memory lower STORYGRAPH_EMBEDDED_CTX, or reinstall with "
            "`make model`",
        )

    def _stop_child(self, proc: subprocess.Popen[bytes]) -> None:
        if proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=self._stop_timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=self._stop_timeout_s)

    def _stop_pid(self, pid: int) -> None:
        terminate_pid(pid, self._stop_timeout_s)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


class _PortLost(Exception):
    def __init__(self, error: ModelError) -> None:
        super().__init__(str(error))
        self.error = error
