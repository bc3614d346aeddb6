"""A tiny OpenAI-compatible HTTP server for tests (stdlib only).

    python fake_openai_server.py --port 8123 [--model ID] [--reply TEXT]
        [--startup-delay S] [--fail-at-start] [--ignore-sigterm] [--busy-after-first]
        [--segfault-on-chat]

Answers `GET /v1/models` and `POST /v1/chat/completions` with a canned reply (as server-sent
events when the request asks for `stream`).
Each `/v1/models` request is said in its output as it arrives ("/v1/models asked (N)").
`--busy-after-first` makes every `/v1/models` after the first take 5 s, as llama.cpp's does
while it generates (it waits for the model lock).
`--segfault-on-chat` makes the process kill itself with SIGSEGV at its first chat request, as
llama.cpp's AMX kernels did (faulthandler on, as in the real server: the log names the signal).
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _handler(
    model: str, reply: str, busy_after_first: bool, segfault_on_chat: bool = False
) -> type[BaseHTTPRequestHandler]:
    served = {"models": 0}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            sys.stderr.write("fake-server: " + (format % args) + "\n")

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self) -> None:
            """The reply as server-sent events, one word per chunk, as `stream: true` asks."""
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            words = reply.split(" ")
            for i, word in enumerate(words):
                piece = word if i == 0 else " " + word
                chunk = {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
                }
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            done = {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            }
            self.wfile.write(f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode())
            self.wfile.flush()
            self.close_connection = True

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                served["models"] += 1
                print(f"fake-server: /v1/models asked ({served['models']})", flush=True)
                if busy_after_first and served["models"] > 1:
                    time.sleep(5)
                self._send(200, {"object": "list", "data": [{"id": model, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, {"error": {"message": "not found"}})
                return
            if segfault_on_chat:
                sys.stderr.write("fake-server: computing the first answer\n")
                sys.stderr.flush()
                signal.pthread_kill(threading.get_ident(), signal.SIGSEGV)  # this thread dies
                time.sleep(60)  # never answers
            try:
                request = json.loads(raw or b"{}")
            except ValueError:
                request = {}
            if isinstance(request, dict) and request.get("stream"):
                self._stream()
                return
            self._send(
                200,
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                },
            )

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", default="fake-model")
    parser.add_argument("--reply", default="canned reply")
    parser.add_argument("--startup-delay", type=float, default=0.0)
    parser.add_argument("--fail-at-start", action="store_true")
    parser.add_argument("--ignore-sigterm", action="store_true")
    parser.add_argument("--busy-after-first", action="store_true")
    parser.add_argument("--segfault-on-chat", action="store_true")
    args = parser.parse_args()
    faulthandler.enable()

    print(f"fake-server: starting on port {args.port}", flush=True)
    if args.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if args.fail_at_start:
        print("fake-server: error: could not load model (on purpose)", flush=True)
        sys.exit(3)
    time.sleep(args.startup_delay)
    server = ThreadingHTTPServer(
        ("127.0.0.1", args.port),
        _handler(args.model, args.reply, args.busy_after_first, args.segfault_on_chat),
    )
    print("fake-server: ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
