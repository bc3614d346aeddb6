"""Counting calls and tokens from LangChain callbacks (storygraph/llm/usage.py): a call whose
response carries no token counts (llama-cpp-python's server in a stream) is counted as such,
not as zero tokens."""

from __future__ import annotations

from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, LLMResult

from storygraph.llm.usage import UsageCounter, usage_delta


def _end(counter: UsageCounter, message: AIMessage) -> None:
    counter.on_chat_model_start({}, [[]])
    counter.on_llm_end(LLMResult(generations=[[ChatGeneration(message=message)]]))


def test_reported_and_unreported_calls_are_told_apart() -> None:
    counter = UsageCounter()
    before = counter.snapshot()
    _end(
        counter,
        AIMessage(
            content="鬼です。",
            usage_metadata={"input_tokens": 120, "output_tokens": 5, "total_tokens": 125},
        ),
    )
    reported = usage_delta(before, counter.snapshot())
    assert (reported.calls, reported.total_tokens, reported.known_tokens) == (1, 125, 125)

    _end(counter, AIMessage(content="鬼です。"))  # a stream with no usage chunk
    both = usage_delta(before, counter.snapshot())
    assert (both.calls, both.total_tokens, both.unreported) == (2, 125, 1)
    assert both.known_tokens is None
