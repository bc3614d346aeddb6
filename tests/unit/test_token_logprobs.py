"""The embedded server's written-token probabilities (storygraph.llm.token_logprobs), on a
stand-in for llama-cpp-python's `Llama` (the model boundary): it "samples" fixed tokens from fixed
logit rows and streams completion chunks as the real `_create_completion` does."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest

from storygraph.llm.token_logprobs import completion_logprobs, logprob_keeping, token_logprob

ROWS = {0: [0.0, 0.0, 0.0, 0.0], 1: [0.0, math.log(3.0), 0.0, 0.0], 2: [5.0, 0.0, 0.0, 0.0]}
"""The logits the stand-in holds before it writes its i-th token."""


class _Llama:
    """Writes tokens 1, 1, 0 (text "a", "a", "b"), its logits row changing as it goes."""

    _n_vocab = 4

    def __init__(self) -> None:
        self.step = 0
        self.refused: list[Any] = []

    def current_row(self) -> list[float]:
        return ROWS[self.step]

    def generate(self, tokens: Any) -> Iterator[int]:
        for self.step, token in enumerate((1, 1, 0)):
            yield token

    def detokenize(self, tokens: list[int]) -> bytes:
        return b"".join(b"bacd"[t : t + 1] for t in tokens)

    def _create_completion(self, prompt: str, logprobs: Any = None, stream: bool = False) -> Any:
        if logprobs is not None:
            raise ValueError("logprobs is not supported for models created with logits_all=False")
        chunks = (
            {"choices": [{"text": self.detokenize([t]).decode(), "logprobs": None}]}
            for t in self.generate([])
        )
        return chunks if stream else {"choices": [{"text": "aab", "logprobs": None}]}


def _model() -> Any:
    model = logprob_keeping(_Llama)()
    model.current_logits = model.current_row  # the stand-in's row instead of llama.cpp's
    return model


def test_a_token_logprob_is_its_log_softmax() -> None:
    assert token_logprob([0.0, math.log(3.0)], 1) == pytest.approx(math.log(0.75))
    assert token_logprob([1000.0, 0.0], 0) == pytest.approx(0.0)  # stable for large logits


def test_a_streamed_completion_that_asks_gets_each_written_tokens_logprob() -> None:
    chunks = list(_model()._create_completion("q", logprobs=1, stream=True))
    got = [c["choices"][0]["logprobs"] for c in chunks]
    assert [g["tokens"] for g in got] == [["a"], ["a"], ["b"]]
    values = [g["token_logprobs"][0] for g in got]
    assert values == pytest.approx(
        [math.log(0.25), math.log(0.5), 5.0 - math.log(math.exp(5.0) + 3.0)]
    )


def test_a_completion_asking_for_alternatives_gets_each_rows_most_probable_tokens() -> None:
    chunks = list(_model()._create_completion("q", logprobs=2, stream=True))
    tops = [c["choices"][0]["logprobs"]["top_logprobs"][0] for c in chunks]
    # row 1 (a: 3 of 6) lists "a" first; row 2's "b" (logit 5) leads, "a" next
    assert len(tops[1]) == 2 and next(iter(tops[1])) == "a"
    assert tops[1]["a"] == pytest.approx(math.log(0.5))
    assert next(iter(tops[2])) == "b"
    assert tops[2]["b"] == pytest.approx(5.0 - math.log(math.exp(5.0) + 3.0))


def test_one_alternative_is_the_written_token_and_is_not_listed() -> None:
    chunks = list(_model()._create_completion("q", logprobs=1, stream=True))
    assert all(c["choices"][0]["logprobs"]["top_logprobs"] == [{}] for c in chunks)


def test_a_completion_that_does_not_ask_gets_none_and_nothing_is_refused() -> None:
    chunks = list(_model()._create_completion("q", logprobs=None, stream=True))
    assert all(c["choices"][0]["logprobs"] is None for c in chunks)
    assert _model()._create_completion("q", logprobs=1, stream=False)["choices"][0]["text"] == "aab"


def test_the_completion_format_offsets_follow_the_tokens() -> None:
    got = completion_logprobs(["ab", "c"], [-0.1, -0.2])
    assert got["text_offset"] == [0, 2] and got["top_logprobs"] == [{}, {}]
