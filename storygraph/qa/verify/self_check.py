"""The model's own judgement of the answer it wrote: asked once more, with only the sentences the
answer cites, whether they state that answer to the question; its one-word reply's probabilities
give the `self_check` signal (storygraph.qa.verify.signals): log P(yes) - log P(no).

The probabilities are read from the reply's first token and its alternatives (`top_logprobs`,
as OpenAI-compatible servers send them; the embedded server lists them from the row of logits it
samples from, storygraph.llm.token_logprobs), summing every alternative that spells yes (or no)
in any case. One call of one token on a short prompt (the cited sentences, the question, the
reply without its source marks; prompts/self_check.txt), after the answer was written: the
answer's first token does not wait for it, nor does another user's: the check's request is
`deferred` in the embedded model's queue (storygraph.llm.model_queue).

Not asked (the signal is None, and the trace says why): an answer citing no sentence; a server
that sent no token probabilities with the answer (it would send none for the check either); a
library's answer per story (`ask_self` False: at most two model calls a question). A model
fault during the check (the server gone, a timeout) leaves the answer as written: the signal is
None and the answer's warnings name the fault (`SelfChecked.failed`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from storygraph.errors import error_text
from storygraph.llm.model_queue import deferred
from storygraph.llm.request_body import capped_body
from storygraph.qa.generation.answer import (
    chunk_logprob_entries,
    prompt_messages,
    token_logprob_pairs,
)
from storygraph.qa.generation.answer_core import without_marks
from storygraph.qa.verify.evidence import Evidence

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

ALTERNATIVES = 10
"""How many of the first token's most probable alternatives the request asks for."""
FLOOR = 1e-6
"""The probability a side missing from the alternatives is taken to have."""
LIMIT = 10.0
"""The signal is clipped to ±LIMIT (both sides far below the floor say nothing more)."""
NO_CITATION = "the answer cites no sentence"
NO_PROBABILITIES = "the server sent no token probabilities with the answer"
NO_ALTERNATIVES = "the server listed no yes or no among the reply's alternatives"
FAILED = "the model's self-check on its answer failed; the answer is judged without it"


@dataclass(frozen=True)
class SelfChecked:
    """The check's value (log P(yes) - log P(no)), or None with why it was not read (`failed`:
    the model call failed, a fault the answer's warnings name)."""

    value: float | None
    note: str = ""
    failed: bool = False


class SelfCheck(Protocol):
    """Asks the model whether the sentences its answer cites state that answer."""

    def judge(self, evidence: Evidence, callbacks: list[Any]) -> SelfChecked: ...


def yes_no_logit(alternatives: Sequence[tuple[str, float]]) -> float | None:
    """log P(yes) - log P(no) over a token's alternatives (text, log probability), clipped to
    ±LIMIT; None when neither side is among them."""
    sides = {"yes": 0.0, "no": 0.0}
    for text, logprob in alternatives:
        side = text.strip().lower()
        if side in sides:
            sides[side] += math.exp(logprob)
    if not any(sides.values()):
        return None
    value = math.log(max(sides["yes"], FLOOR)) - math.log(max(sides["no"], FLOOR))
    return max(-LIMIT, min(LIMIT, value))


def first_alternatives(chunk: Any) -> list[tuple[str, float]]:
    """The alternatives of the first token a streamed chunk carries (langchain-openai's place:
    `response_metadata["logprobs"]["content"][0]["top_logprobs"]`); none when it carries none."""
    entries = chunk_logprob_entries(chunk)
    return token_logprob_pairs(entries[0].get("top_logprobs") or ()) if entries else []


def check_values(evidence: Evidence) -> dict[str, str]:
    """What the check's prompt is filled with: the cited sentences, the question, and the reply
    as written without its source marks (a reply's own words judged better than its core on
    dev, EVALUATION.md)."""
    answer = " ".join(without_marks(evidence.answer, "").split())
    return {"sentences": "\n".join(evidence.cited), "question": evidence.question, "answer": answer}


def self_check_messages(evidence: Evidence) -> list[Any]:
    """The check's prompt (prompts/self_check.txt) filled with `check_values`."""
    return prompt_messages("self_check", **check_values(evidence))


@dataclass
class ModelSelfCheck:
    """The check on a model reached through LangChain (module doc); `messages` writes its
    prompt (another only in a replay measuring a variant, eval/self_check_replay.py)."""

    llm: BaseChatModel
    messages: Callable[[Evidence], list[Any]] = self_check_messages

    def judge(self, evidence: Evidence, callbacks: list[Any]) -> SelfChecked:
        if not evidence.cited:
            return SelfChecked(None, NO_CITATION)
        if not evidence.logprobs:
            return SelfChecked(None, NO_PROBABILITIES)
        body = capped_body(self.llm, 1, logprobs=True, top_logprobs=ALTERNATIVES)
        alternatives: list[tuple[str, float]] = []
        try:
            stream = self.llm.stream(
                self.messages(evidence), config={"callbacks": callbacks}, extra_body=body
            )
            with deferred(), closing(stream):
                for chunk in stream:
                    alternatives = alternatives or first_alternatives(chunk)
        except Exception as exc:  # noqa: BLE001 - a model fault leaves the answer as written
            return SelfChecked(None, f"{FAILED} ({error_text(exc)})", failed=True)
        value = yes_no_logit(alternatives)
        return SelfChecked(value, "" if value is not None else NO_ALTERNATIVES)
