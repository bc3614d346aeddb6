"""The embedded model's request queue (storygraph.llm.model_queue) with the real chat client:
against a slow server it sends one request at a time, from threads and from processes, each
answer reaching its own caller."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from storygraph.llm.factory import build_chat_model
from storygraph.llm.model_queue import ModelQueue, deferred, waiting_for_the_model
from storygraph.settings import Settings


# --- the real chat client against a slow server that answers one request per caller -----------
class _SlowServer:
    """Answers each chat request after `delay_s` with the request's last message, streamed
    when asked, and counts how many requests it held at once.

    A request stops counting just before its last bytes are written: the client may read
    them, give its ticket back and let the next request in before this handler's thread runs
    again, so counting it until after the write would see two at once that never were."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.in_flight = 0
        self.most_at_once = 0
        self.order: list[str] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            counted = False

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with outer.lock:
                    outer.order.append(str(request["messages"][-1]["content"]))
                    outer.in_flight += 1
                    outer.most_at_once = max(outer.most_at_once, outer.in_flight)
                self.counted = True
                try:
                    time.sleep(outer.delay_s)
                    text = request["messages"][-1]["content"]
                    if request.get("stream"):
                        self._stream(text)
                    else:
                        self._send(text)
                finally:
                    self._stop_counting()

            def _stop_counting(self) -> None:
                if self.counted:
                    self.counted = False
                    with outer.lock:
                        outer.in_flight -= 1

            def _send(self, text: str) -> None:
                body = json.dumps(
                    {
                        "id": "c",
                        "object": "chat.completion",
                        "created": 0,
                        "model": "m",
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": text},
                                "finish_reason": "stop",
                            }
                        ],
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self._stop_counting()
                self.wfile.write(body)

            def _stream(self, text: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for piece in (text[: len(text) // 2], text[len(text) // 2 :]):
                    chunk = {
                        "id": "c",
                        "object": "chat.completion.chunk",
                        "created": 0,
                        "model": "m",
                        "choices": [{"index": 0, "delta": {"content": piece}}],
                    }
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                    time.sleep(outer.delay_s / 2)
                self._stop_counting()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def slow_server() -> Iterator[_SlowServer]:
    server = _SlowServer(delay_s=0.2)
    yield server
    server.stop()


@pytest.mark.parametrize("streamed", [False, True])
def test_the_embedded_client_sends_one_request_at_a_time_each_answer_to_its_caller(
    tmp_path: Path, slow_server: _SlowServer, streamed: bool
) -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, data_dir=tmp_path, llm_provider="embedded", neo4j_uri=None
    )
    llm = build_chat_model(settings, embedded_base_url=slow_server.base_url)
    assert llm is not None
    answers: dict[int, str] = {}
    heard: dict[int, list[int]] = {}
    barrier = threading.Barrier(4)

    def ask(i: int) -> None:
        heard[i] = []
        barrier.wait()
        with waiting_for_the_model(heard[i].append):
            if streamed:
                answers[i] = "".join(str(c.content) for c in llm.stream(f"question {i}"))
            else:
                answers[i] = str(llm.invoke(f"question {i}").content)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert answers == {i: f"question {i}" for i in range(4)}
    assert slow_server.most_at_once == 1
    waited = [h for h in heard.values() if h]
    assert len(waited) == 3, heard  # all but the first in line waited, and heard it
    assert sorted(h[0] for h in waited) == [1, 2, 3]
    assert all(h[-1] == 0 and h == sorted(h, reverse=True) for h in waited), heard
    assert ModelQueue.for_data_dir(tmp_path).tickets() == []


def test_an_answer_asked_after_a_waiting_check_reaches_the_server_first(
    tmp_path: Path, slow_server: _SlowServer
) -> None:
    """One user's answer at the model, their self-check waiting, another user's answer asked:
    the second answer is sent before the check (storygraph.llm.model_queue, `deferred`)."""
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, data_dir=tmp_path, llm_provider="embedded", neo4j_uri=None
    )
    llm = build_chat_model(settings, embedded_base_url=slow_server.base_url)
    assert llm is not None
    queue = ModelQueue.for_data_dir(tmp_path)

    def ask(text: str, later: bool = False) -> None:
        if later:
            with deferred():
                llm.invoke(text)
        else:
            llm.invoke(text)

    def until(condition: Any) -> None:
        deadline = time.monotonic() + 10
        while not condition():
            assert time.monotonic() < deadline
            time.sleep(0.01)

    first = threading.Thread(target=ask, args=("answer 1",))
    first.start()
    until(lambda: slow_server.order == ["answer 1"])
    check = threading.Thread(target=ask, args=("check 1", True))
    check.start()
    until(lambda: any(t.deferred for t in queue.tickets()))
    second = threading.Thread(target=ask, args=("answer 2",))
    second.start()
    for t in (first, check, second):
        t.join(30)
    assert slow_server.order == ["answer 1", "answer 2", "check 1"]
    assert slow_server.most_at_once == 1
    assert queue.tickets() == []


_ASKER = """
import sys
import time
from pathlib import Path
from storygraph.llm.factory import build_chat_model
from storygraph.settings import Settings
settings = Settings(_env_file=None, data_dir=Path(sys.argv[1]), llm_provider="embedded",
                    neo4j_uri=None)
llm = build_chat_model(settings, embedded_base_url=sys.argv[2])
(Path(sys.argv[1]) / f"ready-{sys.argv[3]}").touch()
while not (Path(sys.argv[1]) / "go").exists():
    time.sleep(0.01)
for k in range(2):
    text = f"process {sys.argv[3]} question {k}"
    assert llm.invoke(text).content == text
"""


def test_requests_from_several_processes_reach_the_server_one_at_a_time(
    tmp_path: Path, slow_server: _SlowServer
) -> None:
    """The CLI ingesting while the app answers: two processes, one queue in the data dir."""
    import sys

    askers = [
        subprocess.Popen(
            [sys.executable, "-c", _ASKER, str(tmp_path), slow_server.base_url, str(i)],
            cwd=Path(__file__).resolve().parents[2],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for i in range(3)
    ]
    deadline = time.monotonic() + 90
    while not all((tmp_path / f"ready-{i}").exists() for i in range(3)):
        assert time.monotonic() < deadline, "the asking processes never got ready"
        time.sleep(0.05)
    (tmp_path / "go").touch()  # all three ask at once
    for asker in askers:
        output, _ = asker.communicate(timeout=120)
        assert asker.returncode == 0, output.decode(errors="replace")[-2000:]
    assert slow_server.most_at_once == 1
    assert ModelQueue.for_data_dir(tmp_path).tickets() == []
