"""An OpenAI-compatible chat-completions server answering from `scripted_logic` (stdlib only).

The browser test points the real app at it (`STORYGRAPH_LLM_PROVIDER=openai_compatible`,
`OPENAI_BASE_URL=http://127.0.0.1:<port>/v1`), so the real `langchain-openai` client, its wire
format and its tool-call parsing run end to end; only the model's words are scripted.

    python -m tests.helpers.scripted_openai_server --port 8123

In a test: `server = start_in_thread()`; `server.base_url`; `server.stop()`;
`server.requests` holds every chat-completions request body received, in order.

Like llama.cpp's server, a reply must fit the request's constraints: with a GBNF `grammar` made of
quoted alternatives (`root ::= "yes" | "no"`) the scripted reply must be one of them, and with
`response_format {"type": "json_object", "schema": ...}` every `enum` in the schema's properties
must hold; otherwise the server answers HTTP 500, so a test sees a constraint the client lost.
`start_in_thread(llama_cpp=True)` also rejects OpenAI's `json_schema` response format, as
llama-cpp-python's server does.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.helpers.scripted_logic import Script, respond

MODEL_ID = "scripted-model"
_ids = itertools.count(1)


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", "")) for part in content if isinstance(part, dict)
        )
    return ""


def _json_schema_name(request: dict[str, Any]) -> str:
    fmt = request.get("response_format") or {}
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        return str((fmt.get("json_schema") or {}).get("name") or "")
    return ""


def completion(request: dict[str, Any], script: Script) -> dict[str, Any]:
    """The chat.completion body answering one request body."""
    prompt = "\n".join(_message_text(m) for m in request.get("messages") or [])
    tools = request.get("tools") or []
    schema = _json_schema_name(request)
    if schema and not tools:
        # Structured output in JSON-schema mode: the same answer, as the message's JSON content.
        reply = respond(script, prompt, [{"type": "function", "function": {"name": schema}}])
        if "tool" in reply:
            reply = {"content": json.dumps(reply["args"], ensure_ascii=False)}
    else:
        reply = respond(script, prompt, tools)
    if "tool" in reply:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{next(_ids)}",
                    "type": "function",
                    "function": {
                        "name": reply["tool"],
                        "arguments": json.dumps(reply["args"], ensure_ascii=False),
                    },
                }
            ],
        }
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": reply["content"]}
        finish = "stop"
    prompt_tokens = len(prompt) // 3 + 1
    return {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model") or MODEL_ID,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": 20,
            "total_tokens": prompt_tokens + 20,
        },
    }


def stream_chunk(request: dict[str, Any], content: str = "", finish: str | None = None) -> bytes:
    """One server-sent event of a streamed chat completion (`"stream": true`): a piece of the
    reply, or its end (`finish`); `STREAM_END` closes the stream."""
    delta: dict[str, Any] = {"role": "assistant", "content": content} if content else {}
    body = {
        "id": "chatcmpl-stream",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": request.get("model") or MODEL_ID,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body, ensure_ascii=False).encode("utf-8") + b"\n\n"


STREAM_END = b"data: [DONE]\n\n"


class ConstraintError(ValueError):
    """The scripted reply breaks the request's grammar or schema (llama.cpp could not emit it)."""


_ALTERNATIVE = re.compile(r'"((?:[^"\\]|\\.)*)"')


def check_constraints(request: dict[str, Any], body: dict[str, Any], llama_cpp: bool) -> None:
    """Raise ConstraintError when the reply `body` could not come from a constrained decoder."""
    fmt = request.get("response_format")
    if llama_cpp and isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        raise ConstraintError("response_format json_schema is not supported by this server")
    content = body["choices"][0]["message"].get("content") or ""
    grammar = request.get("grammar")
    if isinstance(grammar, str):
        choices = [json.loads(f'"{m}"') for m in _ALTERNATIVE.findall(grammar)]
        if content not in choices:
            raise ConstraintError(f"reply {content!r} is not one of the grammar's {choices}")
    if isinstance(fmt, dict) and fmt.get("type") == "json_object" and "schema" in fmt:
        data = json.loads(content)
        for key, spec in (fmt["schema"].get("properties") or {}).items():
            if "enum" in spec and data.get(key) not in spec["enum"]:
                raise ConstraintError(f"{key}={data.get(key)!r} is not in the schema's enum")


def make_handler(
    script: Script, requests: list[dict[str, Any]] | None = None, llama_cpp: bool = False
) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return None

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": MODEL_ID, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, {"error": {"message": "not found"}})
                return
            try:
                request = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send(400, {"error": {"message": "request body is not JSON"}})
                return
            if requests is not None:
                requests.append(request)
            body = completion(request, script)
            try:
                check_constraints(request, body, llama_cpp)
            except (ConstraintError, ValueError) as exc:
                self._send(500, {"error": {"message": str(exc)}})
                return
            self._send(200, body)

    return Handler


@dataclass
class RunningServer:
    server: ThreadingHTTPServer
    thread: threading.Thread
    requests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
        if self.thread.is_alive():
            raise RuntimeError("the scripted model server did not stop within 5 s")


def start_in_thread(
    script: Script | None = None, port: int = 0, *, llama_cpp: bool = False
) -> RunningServer:
    """Serve on 127.0.0.1 (a free port by default) from a daemon thread."""
    requests: list[dict[str, Any]] = []
    handler = make_handler(script or Script(), requests, llama_cpp)
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="scripted-openai", daemon=True)
    thread.start()
    return RunningServer(server, thread, requests)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(Script()))
    print(f"scripted-openai: serving on {args.port}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
