"""The embedded llama.cpp server's chat endpoint, called without the openai client.

Importing `langchain_openai` and `openai` took a question 1.5-1.9 s in a new process (`ask` with
the embedded model, docs/ISSUES.md#startup-imports), more than the rest of its start. The embedded
server is ours and runs on 127.0.0.1; what the question path asks of it is plain chat: the
answer streamed (`stream`), the read-ahead, the chosen name and the question's translation
(`invoke`). `EmbeddedChatModel` sends those requests itself over `http.client`, exactly as
LangChain's `ChatOpenAI` built for it in storygraph.llm.factory would (the same JSON body: model,
messages, stop, temperature, `stream_options.include_usage` when streamed, the call's
`extra_body` or the client's own; tests/integration/test_embedded_chat.py compares the two
against one HTTP server), through the data directory's model queue
(storygraph.llm.model_queue), with the client's retries (`max_retries`, each retry counted
as one more call, storygraph.llm.attempts), and reports to the call's LangChain callbacks as a
LangChain chat model does (the usage counter's calls and tokens; LangSmith's tracing, which
LangChain sets up from environment variables and StoryGraph does not use, is not).

Anything else (`bind`, `with_structured_output`: ingest's triple lines and fact checks, the
per-fact scorer) goes to that LangChain client, built on its first use: the app stays built on
LangChain, and OpenAI, Azure and other OpenAI-compatible servers keep LangChain's client
whatever the call.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import random
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from storygraph.crashes import WHAT_USERS_GET, Crash
from storygraph.errors import ModelError, ModelServerCrashed
from storygraph.llm.attempts import saw_chat_request
from storygraph.llm.embedded_server import CRASH_FIX
from storygraph.llm.model_queue import ModelQueue, current_on_wait

if TYPE_CHECKING:
    from langchain_core.callbacks import CallbackManagerForLLMRun
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage

ROLES = {"system": "system", "human": "user", "ai": "assistant"}
"""LangChain's message types and the roles the OpenAI protocol calls them."""
RETRIED_STATUSES = frozenset({408, 409, 429})
"""HTTP statuses the openai client retries (and every 5xx): so does this one."""
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json",
    "Authorization": "Bearer embedded",
}
"""The embedded server needs no key; langchain-openai sends "embedded" as one (factory)."""
INITIAL_RETRY_S = 0.5
MAX_RETRY_S = 8.0


class ServerStatusError(ModelError):
    """The server answered the chat request with an HTTP error status."""

    def __init__(self, status_code: int, body: str) -> None:
        super().__init__(
            f"the embedded model server answered HTTP {status_code}: {body[:200]}",
            "Check the model server's log (python -m storygraph doctor).",
        )
        self.status_code = status_code


def crash_message(crash: Crash) -> str:
    """'the model server stopped with a segmentation fault (SIGSEGV) at its first use after
    starting; answers list the graph's facts until it is back'."""
    return f"{crash.sentence}; {WHAT_USERS_GET[crash.helper]}"


def retry_delay(retries_done: int) -> float:
    """The openai client's back-off before a retry: 0.5 s doubling to 8 s, less up to 25 %."""
    return min(INITIAL_RETRY_S * 2**retries_done, MAX_RETRY_S) * (1 - 0.25 * random.random())


def openai_messages(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """LangChain messages as the OpenAI protocol's dicts, as langchain-openai writes plain text
    messages (`content`, `role`, and `name` when set). A message of another kind (a tool
    call, a tool's result, content in parts) is not plain chat: TypeError."""
    found: list[dict[str, Any]] = []
    for message in messages:
        role = ROLES.get(message.type)
        tool_calls = getattr(message, "tool_calls", None)
        if role is None or not isinstance(message.content, str) or tool_calls:
            raise TypeError(
                f"the embedded chat client sends plain text messages, not {message.type} "
                f"{type(message.content).__name__} content (use the LangChain client)"
            )
        entry: dict[str, Any] = {"content": message.content, "role": role}
        if message.name:
            entry["name"] = message.name
        found.append(entry)
    return found


@dataclass
class EmbeddedChatModel:
    """A chat client for the embedded server's OpenAI-compatible endpoint (module doc)."""

    base_url: str
    model: str
    temperature: float | None
    timeout_s: float
    max_retries: int
    extra_body: dict[str, Any]
    queue: ModelQueue | None
    langchain_client: Callable[[], BaseChatModel]
    """Builds the LangChain client the other calls go to (once, on first use)."""
    server_fault: Callable[[], Crash | None] | None = None
    """Asked when the connection fails: how the server died, if it did (no retry then)."""
    on_answered: Callable[[], None] | None = None
    """Told when a reply came back whole (the server's row of crashes ends)."""
    _langchain: BaseChatModel | None = field(default=None, init=False, repr=False)

    # --- what goes to LangChain's client --------------------------------------------------
    def langchain(self) -> BaseChatModel:
        """LangChain's client for the same server (ToolCallingChatOpenAI), built once."""
        if self._langchain is None:
            self._langchain = self.langchain_client()
        return self._langchain

    def bind(self, **kwargs: Any) -> Any:
        return self.langchain().bind(**kwargs)

    def with_structured_output(self, schema: Any = None, **kwargs: Any) -> Any:
        return self.langchain().with_structured_output(schema, **kwargs)

    # --- plain chat, sent here ------------------------------------------------------------
    def invoke(
        self,
        input: Any,
        config: dict[str, Any] | None = None,
        *,
        stop: list[str] | None = None,
        extra_body: dict[str, Any] | None = None,
    ) -> AIMessage:
        """One reply, as `ChatOpenAI.invoke` returns it (an AIMessage)."""
        from langchain_core.messages import AIMessage

        messages, run = self._start(input, config, stop, extra_body)
        try:
            reply = self._request(self._body(messages, stop, extra_body, stream=False))
            data = json.loads(reply)
            text = data["choices"][0]["message"].get("content") or ""
            message = AIMessage(text, usage_metadata=_usage(data.get("usage")))
        except BaseException as exc:
            run.on_llm_error(exc)
            self._raise_if_crashed(exc)
            raise
        self._answered()
        _end(run, message)
        return message

    def stream(
        self,
        input: Any,
        config: dict[str, Any] | None = None,
        *,
        stop: list[str] | None = None,
        extra_body: dict[str, Any] | None = None,
    ) -> Iterator[AIMessageChunk]:
        """The reply piece by piece, as `ChatOpenAI.stream` yields it (AIMessageChunks; the
        usage the server reports at the end goes to the callbacks)."""
        from langchain_core.messages import AIMessage, AIMessageChunk

        messages, run = self._start(input, config, stop, extra_body)
        parts: list[str] = []
        usage: dict[str, int] | None = None
        try:
            body = self._body(messages, stop, extra_body, stream=True)
            for event in self._events(body):
                usage = _usage(event.get("usage")) or usage
                for choice in event.get("choices") or ():
                    piece = (choice.get("delta") or {}).get("content") or ""
                    if piece:
                        parts.append(piece)
                        run.on_llm_new_token(piece)
                        # the written tokens' probabilities, where langchain-openai puts them
                        logprobs = choice.get("logprobs")
                        meta = {"logprobs": logprobs} if logprobs else {}
                        yield AIMessageChunk(piece, response_metadata=meta)
        except BaseException as exc:
            run.on_llm_error(exc)
            self._raise_if_crashed(exc)
            raise
        self._answered()
        _end(run, AIMessage("".join(parts), usage_metadata=usage))

    # --- the server's health ----------------------------------------------------------------
    def _crash(self) -> Crash | None:
        return self.server_fault() if self.server_fault is not None else None

    def _raise_if_crashed(self, exc: BaseException) -> None:
        """A failed connection whose server has died: say how, in words (ModelServerCrashed)."""
        if isinstance(exc, ModelServerCrashed) or not isinstance(exc, OSError):
            return
        crash = self._crash()
        if crash is not None:
            raise ModelServerCrashed(crash_message(crash), CRASH_FIX) from exc

    def _answered(self) -> None:
        if self.on_answered is not None:
            self.on_answered()

    # --- the request ----------------------------------------------------------------------
    def _start(
        self,
        input: Any,
        config: dict[str, Any] | None,
        stop: list[str] | None,
        extra_body: dict[str, Any] | None,
    ) -> tuple[list[BaseMessage], CallbackManagerForLLMRun]:
        """The call's messages, and its run announced to the callbacks (which is where the
        usage counter counts a call and starts tracking its requests)."""
        from langchain_core.callbacks import CallbackManager

        messages = _as_messages(input)
        # The call's own handlers, as `CallbackManager.configure` would hand them on, without
        # the LangSmith tracing it sets up from the environment (StoryGraph does not use it;
        # configuring it imported langsmith's client, 0.2-0.45 s of a question's answer step).
        handlers = list((config or {}).get("callbacks") or [])
        manager = CallbackManager(handlers, inheritable_handlers=handlers)
        params = {"model": self.model, "stop": stop, **(extra_body or self.extra_body)}
        (run,) = manager.on_chat_model_start(
            {"name": type(self).__name__}, [messages], invocation_params=params, run_id=uuid.uuid4()
        )
        return messages, run

    def _body(
        self,
        messages: Sequence[BaseMessage],
        stop: list[str] | None,
        extra_body: dict[str, Any] | None,
        *,
        stream: bool,
    ) -> dict[str, Any]:
        """The JSON body langchain-openai sends for this call (module doc)."""
        body: dict[str, Any] = {"model": self.model, "stream": stream}
        body["messages"] = openai_messages(messages)
        if stop is not None:
            body["stop"] = stop
        if stream:
            body["stream_options"] = {"include_usage": True}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        body.update(extra_body if extra_body is not None else self.extra_body)
        return body

    def _request(self, body: dict[str, Any]) -> bytes:
        with self._response(body) as response, _broken_off():
            return response.read()

    def _events(self, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """The server-sent events of a streamed reply, up to `data: [DONE]`."""
        with self._response(body) as response, _broken_off():
            for raw in response:
                line = raw.strip()
                if not line.startswith(b"data:"):
                    continue
                data = line[5:].strip()
                if data == b"[DONE]":
                    return
                yield json.loads(data)

    def _response(self, body: dict[str, Any]) -> _Response:
        """The server's response to `body` (status 200), sent when its turn in the queue has
        come, retried as the openai client retries (a refused or dropped connection, a
        timeout, HTTP 408/409/429/5xx), each request counted."""
        payload = json.dumps(body, ensure_ascii=False).encode()
        retries = 0
        while True:
            try:
                return self._send(payload)
            except (OSError, ServerStatusError) as exc:
                if isinstance(exc, OSError) and (crash := self._crash()) is not None:
                    raise ModelServerCrashed(crash_message(crash), CRASH_FIX) from exc
                status = getattr(exc, "status_code", None)
                retried = status is None or status in RETRIED_STATUSES or status >= 500
                if not retried or retries >= self.max_retries:
                    raise
            time.sleep(retry_delay(retries))
            retries += 1

    def _send(self, payload: bytes) -> _Response:
        url = urlsplit(self.base_url)
        ticket = self.queue.join() if self.queue is not None else None
        connection = http.client.HTTPConnection(
            url.hostname or "127.0.0.1", url.port or 80, timeout=self.timeout_s
        )
        try:
            if ticket is not None and self.queue is not None:
                self.queue.wait_turn(ticket, current_on_wait())
            saw_chat_request()
            with _broken_off():
                connection.request(
                    "POST",
                    f"{url.path.rstrip('/')}/chat/completions",
                    body=payload,
                    headers=HEADERS,
                )
                response = connection.getresponse()
                if response.status != 200:
                    detail = response.read().decode(errors="replace")
                    raise ServerStatusError(response.status, detail)
        except BaseException:
            self._close(connection, ticket)
            raise
        return _Response(response, lambda: self._close(connection, ticket))

    def _close(self, connection: http.client.HTTPConnection, ticket: Any) -> None:
        """Close the request's connection and give its queue ticket back."""
        try:
            connection.close()
        finally:
            if ticket is not None and self.queue is not None:
                self.queue.leave(ticket)


class _Response:
    """A response held open while it is read; its connection closed and its queue ticket
    given back at the end of the `with` block."""

    def __init__(self, response: http.client.HTTPResponse, close: Callable[[], None]) -> None:
        self.response = response
        self._close = close

    def __enter__(self) -> http.client.HTTPResponse:
        return self.response

    def __exit__(self, *exc: object) -> None:
        self._close()


def _as_messages(input: Any) -> list[BaseMessage]:
    """A call's input as messages, as a LangChain chat model reads it: a string is one human
    message, a prompt value its messages, a list (messages, tuples, dicts) each converted."""
    from langchain_core.messages import HumanMessage, convert_to_messages

    if isinstance(input, str):
        return [HumanMessage(input)]
    if hasattr(input, "to_messages"):
        return list(input.to_messages())
    return convert_to_messages(input)


@contextlib.contextmanager
def _broken_off() -> Iterator[None]:
    """A malformed or cut reply (http.client's HTTPException, which is not an OSError) as the
    ConnectionError it is to the caller: retried, and among the model-call errors
    (storygraph.ingest.llm_extraction.MODEL_CALL_ERRORS)."""
    try:
        yield
    except http.client.HTTPException as exc:
        raise ConnectionError(f"the embedded model server's reply broke off: {exc!r}") from exc


def _usage(usage: dict[str, Any] | None) -> dict[str, int] | None:
    """The server's token counts as LangChain's usage metadata (what the usage counter reads)."""
    if not usage:
        return None
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    return {
        "input_tokens": prompt,
        "output_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _end(run: CallbackManagerForLLMRun, message: AIMessage) -> None:
    from langchain_core.outputs import ChatGeneration, LLMResult

    run.on_llm_end(LLMResult(generations=[[ChatGeneration(message=message)]]))
