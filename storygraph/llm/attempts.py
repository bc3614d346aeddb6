"""HTTP attempts of a model call, so that a call the client retried counts as more than one.

The OpenAI client retries a timed-out or refused request by itself (STORYGRAPH_LLM_MAX_RETRIES);
LangChain's callbacks see one call either way. `UsageCounter` opens an `AttemptTracker` when a
call starts (a context variable, so concurrent calls in other threads keep their own), the httpx
clients built here report every chat request to it, and each request after the first of a call
is counted as one more LLM call.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

    from storygraph.llm.model_queue import ModelQueue

_TRACKER: ContextVar[AttemptTracker | None] = ContextVar("storygraph_attempts", default=None)


class AttemptTracker:
    """The requests of one model call; `on_retry` runs for every request after the first."""

    def __init__(self, on_retry: Callable[[], None]) -> None:
        self.requests = 0
        self.on_retry = on_retry

    def saw_request(self) -> None:
        self.requests += 1
        if self.requests > 1:
            self.on_retry()


def track_call(on_retry: Callable[[], None]) -> AttemptTracker:
    """Start tracking the requests of the model call about to be made in this context."""
    tracker = AttemptTracker(on_retry)
    _TRACKER.set(tracker)
    return tracker


def _is_chat_request(request: httpx.Request) -> bool:
    return request.url.path.endswith("/chat/completions")


def saw_chat_request() -> None:
    """One chat request of the model call in this context is being sent (the httpx clients'
    hook below, and the embedded server's own client, storygraph.llm.embedded_chat)."""
    tracker = _TRACKER.get()
    if tracker is not None:
        tracker.saw_request()


def _count(request: httpx.Request) -> None:
    if _is_chat_request(request):
        saw_chat_request()


async def _acount(request: httpx.Request) -> None:
    _count(request)


def counting_http_clients(queue: ModelQueue | None = None) -> dict[str, Any]:
    """`http_client` / `http_async_client` arguments for ChatOpenAI that report each request
    (openai's own default clients, so timeouts, limits and redirects stay as they were). With
    `queue` (the embedded model's), each chat request of the synchronous client, the one the
    app uses, first waits for its turn in it (storygraph.llm.model_queue)."""
    import httpx2
    import openai

    from storygraph.llm.model_queue import QueuedTransport

    sync_options: dict[str, Any] = {"event_hooks": {"request": [_count]}}
    if queue is not None:
        sync_options["transport"] = QueuedTransport(queue, httpx2.HTTPTransport())
    return {
        "http_client": openai.DefaultHttpxClient(**sync_options),
        "http_async_client": openai.DefaultAsyncHttpxClient(event_hooks={"request": [_acount]}),
    }
