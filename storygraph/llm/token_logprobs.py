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
- A request asking for more than one alternative (`top_logprobs` k > 1: the verifier's yes/no
  self-check, storygraph.qa.verify.self_check) also gets, for each written token, the k most
  probable tokens of its row with their log probabilities (`top_logprobs`, as OpenAI sends them);
  with k = 1 (the answer's request) none are listed, the written token being the top one.

Reading the row costs one pass over the vocabulary per written token (~0.3 ms), no model call.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any


def token_logprob(logits: Sequence[float], token: int) -> float:
    """`log softmax(logits)[token]`, computed stably."""
    return top_logprobs(logits, token, 0)[0]


def top_logprobs(
    logits: Sequence[float], token: int, k: int
) -> tuple[float, list[tuple[int, float]]]:
    """`log softmax(logits)[token]`, and the `k` most probable tokens with theirs (most probable
    first; none for k < 2), computed stably."""
    import numpy as np

    row = np.asarray(logits, dtype=np.float64)
    top = float(row.max())
    norm = top + math.log(float(np.exp(row - top).sum()))
    if k < 2:
        return float(row[token] - norm), []
    best = np.argpartition(-row, k - 1)[:k]
    best = best[np.argsort(-row[best])]
    return float(row[token] - norm), [(int(t), float(row[t] - norm)) for t in best]


def logprob_keeping(llama_class: type) -> type:
    """`llama_class` (llama-cpp-python's `Llama`, or a subclass) that notes its written tokens'
    log probabilities and streams them when a completion asks (module doc)."""

    class LogprobKeepingLlama(llama_class):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.written_logprobs: list[tuple[int, float]] = []
            self.alternatives_wanted = 0
            self.written_alternatives: list[list[tuple[int, float]]] = []

        def current_logits(self) -> Sequence[float]:
            """The row of logits llama.cpp holds for the last token it read."""
            import numpy as np

            return np.ctypeslib.as_array(self._ctx.get_logits(), shape=(self._n_vocab,))

        def generate(self, tokens: Any, *args: Any, **kwargs: Any) -> Iterator[int]:
            self.written_logprobs = []
            self.written_alternatives = []
            for token in super().generate(tokens, *args, **kwargs):
                logprob, alternatives = top_logprobs(
                    self.current_logits(), token, self.alternatives_wanted
                )
                self.written_logprobs.append((token, logprob))
                self.written_alternatives.append(alternatives)
                yield token

        def _create_completion(self, *args: Any, **kwargs: Any) -> Any:
            wanted = kwargs.get("logprobs") is not None
            self.alternatives_wanted = int(kwargs.get("logprobs") or 0)
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
                    alternatives = self.written_alternatives[sent : sent + len(fresh)]
                    sent += len(fresh)
                    choice["logprobs"] = completion_logprobs(
                        [self.text_of(t) for t, _ in fresh],
                        [p for _, p in fresh],
                        [self.by_text(top) for top in alternatives],
                    )
                yield chunk

        def text_of(self, token: int) -> str:
            return self.detokenize([token]).decode("utf-8", "replace")

        def by_text(self, top: list[tuple[int, float]]) -> dict[str, float]:
            """`top` by the tokens' texts, most probable first (two tokens of one text, such as
            a character's split bytes, keep the more probable)."""
            named: dict[str, float] = {}
            for token, logprob in top:
                named.setdefault(self.text_of(token), logprob)
            return named

    LogprobKeepingLlama.__name__ = LogprobKeepingLlama.__qualname__ = "LogprobKeepingLlama"
    return LogprobKeepingLlama


def completion_logprobs(
    tokens: Sequence[str],
    logprobs: Sequence[float],
    alternatives: Sequence[dict[str, float]] = (),
) -> dict[str, Any]:
    """The completion format's `logprobs` for `tokens`, with each token's top `alternatives`
    (none when not given)."""
    offsets, at = [], 0
    for token in tokens:
        offsets.append(at)
        at += len(token)
    return {
        "tokens": list(tokens),
        "text_offset": offsets,
        "token_logprobs": list(logprobs),
        "top_logprobs": list(alternatives) or [{} for _ in tokens],
    }
