"""An in-process OpenAI-compatible server on 127.0.0.1 that fails on cue (stdlib only).

`FlakyOpenAIServer(plan=[429, 500])` answers the first chat request with 429, the second with
500, and every later one with a good reply: the scripted extraction of the request's text, as JSON
content when the client asks for a JSON schema (ChatOpenAI's default) or as a `DynamicGraph`
tool call when it sends tools, so LLMGraphTransformer parses a real wire reply; plain text for
other requests; a request with `"stream": true` gets the same reply as server-sent events
(its content in two pieces, each with a log probability when `logprobs` asks for them, then
the usage when `stream_options.include_usage` asks for it).
Plan items may also be `"hang"` (hold the request for `hang_s` before
answering, for timeouts) and `"drop"` (close the connection without a reply and stop serving,
as a server that crashed). `retry-after-ms` headers keep the client's backoff short.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.helpers.scripted_logic import Script, extract

PlanItem = int | str


class FlakyOpenAIServer:
    """Start with `with FlakyOpenAIServer(plan) as server:`; `server.base_url` is the /v1 URL."""

    def __init__(
        self,
        plan: Sequence[PlanItem] = (),
        *,
        script: Script | None = None,
        error_message: str = "",
        hang_s: float = 2.0,
    ) -> None:
        self.plan = list(plan)
        self.script = script or Script()
        self.error_message = error_message
        self.hang_s = hang_s
        self.requests: list[dict[str, Any]] = []
        self.statuses: list[int | str] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._stopped = False

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FlakyOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            self._server.shutdown()
            self._server.server_close()

    def _next(self, body: dict[str, Any]) -> PlanItem:
        with self._lock:
            self.requests.append(body)
            item = self.plan.pop(0) if self.plan else 200
            self.statuses.append(item)
            return item

    def reply_for(self, body: dict[str, Any]) -> dict[str, Any]:
        tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
        text = "\n".join(str(m.get("content") or "") for m in body.get("messages") or [])
        message: dict[str, Any] = {"role": "assistant", "content": "canned answer"}
        finish = "stop"
        graph = extract(self.script, text.split("following input:", 1)[-1])
        fmt = body.get("response_format") or {}
        if fmt.get("type") in ("json_schema", "json_object"):  # ChatOpenAI's default method
            message = {"role": "assistant", "content": json.dumps(graph, ensure_ascii=False)}
        elif "DynamicGraph" in tools:
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{len(self.requests)}",
                        "type": "function",
                        "function": {
                            "name": "DynamicGraph",
                            "arguments": json.dumps(graph, ensure_ascii=False),
                        },
                    }
                ],
            }
            finish = "tool_calls"
        return {
            "id": "chatcmpl-flaky",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "flaky"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("retry-after-ms", "10")
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                item = server._next(body)
                if item == "drop":
                    self.close_connection = True
                    threading.Thread(target=server.stop, daemon=True).start()
                    return
                if item == "hang":
                    time.sleep(server.hang_s)
                    item = 200
                if isinstance(item, int) and item >= 400:
                    message = server.error_message or f"scripted failure {item}"
                    self._send(item, {"error": {"message": message, "type": "server_error"}})
                    return
                if body.get("stream"):
                    self._stream(body, server.reply_for(body))
                    return
                self._send(200, server.reply_for(body))

            def _stream(self, body: dict[str, Any], reply: dict[str, Any]) -> None:
                content = str(reply["choices"][0]["message"].get("content") or "")
                base = {k: reply[k] for k in ("id", "created", "model")}
                base["object"] = "chat.completion.chunk"
                half = len(content) // 2
                events = [
                    {**base, "choices": [{"index": 0, "delta": {"content": piece}}]}
                    for piece in (content[:half], content[half:])
                ]
                if body.get("logprobs"):  # each piece one "token", of log probability -0.5, -1
                    for i, event in enumerate(events):
                        token = event["choices"][0]["delta"]["content"]
                        said = {"token": token, "logprob": -0.5 * (i + 1), "bytes": None}
                        event["choices"][0]["logprobs"] = {
                            "content": [{**said, "top_logprobs": []}],
                            "refusal": None,
                        }
                events.append(
                    {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                )
                if (body.get("stream_options") or {}).get("include_usage"):
                    events.append({**base, "choices": [], "usage": reply["usage"]})
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.close_connection = True
                for event in events:
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        return Handler
