"""The embedded model's own probability for each token it writes, sent as OpenAI's `logprobs`.

llama-cpp-python returns `logprobs` only for a model loaded with `logits_all=True`, which keeps
every prompt token's logits (n_ctx × 151,936 floats, ~2.5 GB for a 4,096-token context) and
computes them all. The answer needs far less: the probability of each token the model *chose*,
read from the one row of logits llama.cpp already holds when the token is sampled.
`logprob_keeping(Llama)` is a `Llama` that does that:

- `generate` notes, for every token it yields, `log softmax(logits)[token]` of the row that token
  was sampled from (the raw model distribution, before temperature and top-k/p);
- `_create_completion`, asked for `logprobs` (the chat request's `"logprobs": true` reaches it
  as `top_logprobs`), runs without llama-cpp-python's own (which would refuse) and puts the
  noted values into each streamed chunk in the completion format, with no top alternatives; the
  chat handler turns them into the chat format (`choices[0].logprobs.content[i].logprob`), as an
  OpenAI-compatible server sends them. A request that does not ask gets none, as before.

Reading the row costs one pass over the vocabulary per written token (~0.3 ms), no model call.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any


def token_logprob(logits: Sequence[float], token: int) -> float:
    """`log softmax(logits)[token]`, computed stably."""
    import numpy as np

    row = np.asarray(logits, dtype=np.float64)
    top = float(row.max())
    return float(row[token] - top - math.log(float(np.exp(row - top).sum())))


def logprob_keeping(llama_class: type) -> type:
    """`llama_class` (llama-cpp-python's `Llama`, or a subclass) that notes its written tokens'
    log probabilities and streams them when a completion asks (module doc)."""

    class LogprobKeepingLlama(llama_class):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.written_logprobs: list[tuple[int, float]] = []

        def current_logits(self) -> Sequence[float]:
            """The row of logits llama.cpp holds for the last token it read."""
            import numpy as np

            return np.ctypeslib.as_array(self._ctx.get_logits(), shape=(self._n_vocab,))

        def generate(self, tokens: Any, *args: Any, **kwargs: Any) -> Iterator[int]:
            self.written_logprobs = []
            for token in super().generate(tokens, *args, **kwargs):
                self.written_logprobs.append((token, token_logprob(self.current_logits(), token)))
                yield token

        def _create_completion(self, *args: Any, **kwargs: Any) -> Any:
            wanted = kwargs.get("logprobs") is not None
            kwargs["logprobs"] = None
            result = super()._create_completion(*args, **kwargs)
            if not wanted or not kwargs.get("stream"):
                return result
            return self._with_logprobs(result)

        def _with_logprobs(self, chunks: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
            sent = 0
            for chunk in chunks:
                choice = chunk["choices"][0]
                fresh = self.written_logprobs[sent:]
                if choice.get("text") and fresh:
                    sent += len(fresh)
                    choice["logprobs"] = completion_logprobs(
                        [self.detokenize([t]).decode("utf-8", "replace") for t, _ in fresh],
                        [p for _, p in fresh],
                    )
                yield chunk

    LogprobKeepingLlama.__name__ = LogprobKeepingLlama.__qualname__ = "LogprobKeepingLlama"
    return LogprobKeepingLlama


def completion_logprobs(tokens: Sequence[str], logprobs: Sequence[float]) -> dict[str, Any]:
    """The completion format's `logprobs` for `tokens` (no top alternatives)."""
    offsets, at = [], 0
    for token in tokens:
        offsets.append(at)
        at += len(token)
    return {
        "tokens": list(tokens),
        "text_offset": offsets,
        "token_logprobs": list(logprobs),
        "top_logprobs": [{} for _ in tokens],
    }
