"""Counting LLM calls and tokens through LangChain callbacks (retried requests included, see
storygraph.llm.attempts)."""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult

from storygraph.llm.attempts import track_call
from storygraph.models import Usage, usage_delta

__all__ = ["UsageCounter", "usage_delta"]


class UsageCounter(BaseCallbackHandler):
    """Adds up calls and prompt / completion tokens of every chat model call it sees."""

    def __init__(self) -> None:
        self.usage = Usage()
        self._lock = threading.Lock()

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        with self._lock:
            self.usage.calls += 1
        track_call(self._retried)

    def on_llm_start(self, serialized: Any, prompts: Any, **kwargs: Any) -> None:
        with self._lock:
            self.usage.calls += 1
        track_call(self._retried)

    def _retried(self) -> None:
        """The client sent the call's request again (timeout, 429, 5xx): one more LLM call."""
        with self._lock:
            self.usage.calls += 1

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        prompt, completion = _tokens(response)
        with self._lock:
            self.usage.prompt_tokens += prompt
            self.usage.completion_tokens += completion
            if not prompt and not completion:
                self.usage.unreported += 1

    def snapshot(self) -> Usage:
        with self._lock:
            return Usage(
                self.usage.calls,
                self.usage.prompt_tokens,
                self.usage.completion_tokens,
                self.usage.unreported,
            )


def _tokens(response: LLMResult) -> tuple[int, int]:
    prompt = completion = 0
    for generations in response.generations:
        for generation in generations:
            message = getattr(generation, "message", None)
            meta = getattr(message, "usage_metadata", None) if message is not None else None
            if meta:
                prompt += int(meta.get("input_tokens", 0))
                completion += int(meta.get("output_tokens", 0))
    if prompt or completion:
        return prompt, completion
    token_usage = (response.llm_output or {}).get("token_usage") or {}
    return int(token_usage.get("prompt_tokens", 0)), int(token_usage.get("completion_tokens", 0))
