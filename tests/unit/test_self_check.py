"""The model's own judgement of its answer (storygraph.qa.verify.self_check): its yes/no logit from
a reply's alternatives, the request it sends (a chat model stands in at the model boundary), when
it is not asked, and what the support step does with it."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from storygraph.llm.model_queue import ModelQueue, Ticket
from storygraph.models import Citation
from storygraph.qa.verify import Evidence, load_verifier
from storygraph.qa.verify.calibration import Calibration
from storygraph.qa.verify.gate import support_step
from storygraph.qa.verify.self_check import (
    FAILED,
    LIMIT,
    NO_ALTERNATIVES,
    NO_CITATION,
    NO_PROBABILITIES,
    ModelSelfCheck,
    SelfChecked,
    first_alternatives,
    self_check_messages,
    yes_no_logit,
)
from storygraph.qa.verify.signals import read_signals
from storygraph.qa.verify.verifier import Verifier
from tests.unit.test_verify import _analysis

CITED = "パン屋は少年にりんごを三つやりました。"
EVIDENCE = Evidence(
    "少年にりんごをやったのは誰？", "パン屋です。[1]", "パン屋", (CITED,), (CITED,), (-0.1, -0.2)
)


def test_the_logit_sums_every_spelling_of_each_side() -> None:
    got = yes_no_logit([("yes", math.log(0.3)), ("Yes", math.log(0.3)), (" no", math.log(0.2))])
    assert got == pytest.approx(math.log(0.6 / 0.2))


def test_a_side_missing_from_the_alternatives_is_floored_and_the_logit_clipped() -> None:
    assert yes_no_logit([("yes", math.log(0.9)), ("The", math.log(0.05))]) == LIMIT
    assert yes_no_logit([("NO", 0.0)]) == -LIMIT
    assert yes_no_logit([("The", 0.0), ("It", -1.0)]) is None  # neither side: nothing read


def test_the_alternatives_are_read_where_langchain_openai_puts_them() -> None:
    chunk = _chunk({"yes": -0.2, "no": -1.8})
    assert first_alternatives(chunk) == [("yes", -0.2), ("no", -1.8)]
    assert first_alternatives(_Chunk("yes", {})) == []


def test_the_prompt_holds_the_cited_sentences_the_question_and_the_reply_without_marks() -> None:
    system, user = self_check_messages(EVIDENCE)
    assert "yes or no" in system.content
    assert CITED in user.content and EVIDENCE.question in user.content
    assert "answer: パン屋です。\n" in user.content and "[1]" not in user.content


def test_the_check_asks_one_token_with_its_alternatives_and_reads_them() -> None:
    model = _Model({"yes": math.log(0.8), "no": math.log(0.2)})
    got = ModelSelfCheck(model).judge(EVIDENCE, callbacks=[])  # type: ignore[arg-type]
    assert got == SelfChecked(pytest.approx(math.log(4.0)), "")
    body = model.bodies[0]
    assert body["max_tokens"] == 1 and body["logprobs"] and body["top_logprobs"] >= 2


def test_the_checks_request_waits_for_later_answers_in_the_model_queue(tmp_path: Path) -> None:
    # another user's answer drawn after the check goes first (storygraph.llm.model_queue)
    queue = ModelQueue(tmp_path / "q")
    model = _Model({"yes": 0.0}, queue=queue)
    ModelSelfCheck(model).judge(EVIDENCE, callbacks=[])  # type: ignore[arg-type]
    answer = queue.join()
    assert [t.deferred for t in model.tickets] == [True] and not answer.deferred
    assert queue.ahead(answer) == 0 and queue.ahead(model.tickets[0]) == 1


def test_the_check_is_not_asked_without_a_citation_or_token_probabilities() -> None:
    model = _Model({"yes": 0.0})
    check = ModelSelfCheck(model)  # type: ignore[arg-type]
    no_cited = Evidence(EVIDENCE.question, "パン屋です。", "パン屋", (), (CITED,), (-0.1,))
    assert check.judge(no_cited, []) == SelfChecked(None, NO_CITATION)
    no_probabilities = Evidence(EVIDENCE.question, EVIDENCE.answer, "パン屋", (CITED,))
    assert check.judge(no_probabilities, []) == SelfChecked(None, NO_PROBABILITIES)
    assert model.bodies == []
    # a server that lists neither side: named, not read as a "no"
    assert ModelSelfCheck(_Model({"The": 0.0})).judge(EVIDENCE, []) == SelfChecked(  # type: ignore[arg-type]
        None, NO_ALTERNATIVES
    )


def test_a_failed_check_leaves_the_answer_judged_without_it_and_says_so() -> None:
    got = ModelSelfCheck(_Model({}, fault=ConnectionError("server gone"))).judge(EVIDENCE, [])  # type: ignore[arg-type]
    assert got.value is None and got.failed
    assert got.note.startswith(FAILED) and "server gone" in got.note
    shown = support_step(
        "gate", load_verifier("embedded"), None, _analysis(EVIDENCE.question), EVIDENCE.answer,
        "llm-compact", False, (-0.1, -0.2), [Citation(1, "d:1", "d.txt", CITED)], 1, (),
        self_check=lambda evidence: got,
    )  # fmt: skip
    assert got.note in shown.warnings and shown.support.verdict in ("supported", "not supported")


def test_the_support_step_puts_the_checks_value_in_the_evidence_it_judges() -> None:
    verifier = Verifier(
        Calibration(("self_check",), (0.0,), (1.0,), (3.0,), (0.0,), 0.0, 0.5), "embedded"
    )
    citations = [Citation(1, "d:1", "d.txt", CITED)]

    def step(value: float | None) -> Any:
        return support_step(
            "gate", verifier, None, _analysis(EVIDENCE.question), EVIDENCE.answer, "llm-compact",
            False, (-0.1, -0.2), citations, 1, (),
            self_check=lambda evidence: SelfChecked(value, "" if value is not None else "why"),
        )  # fmt: skip

    assert step(2.0).support.supported and not step(-2.0).support.supported
    assert step(2.0).detail["verifier"]["evidence"]["self_check"] == 2.0
    assert step(None).detail["self_check_note"] == "why"
    assert read_signals(
        Evidence.from_json(step(-2.0).detail["verifier"]["evidence"]), ["self_check"]
    ) == {"self_check": -2.0}


# --- the model boundary ---------------------------------------------------------------------
class _Chunk:
    def __init__(self, content: str, meta: dict[str, Any]) -> None:
        self.content = content
        self.response_metadata = meta


def _chunk(alternatives: dict[str, float]) -> _Chunk:
    top = [{"token": t, "logprob": p} for t, p in alternatives.items()]
    first = next(iter(alternatives), "")
    content = [{"token": first, "logprob": alternatives.get(first, 0.0), "top_logprobs": top}]
    return _Chunk(first, {"logprobs": {"content": content}})


class _Model:
    """A chat model that streams one token with the given alternatives, keeping each request's
    extra body."""

    def __init__(
        self,
        alternatives: dict[str, float],
        fault: Exception | None = None,
        queue: ModelQueue | None = None,
    ) -> None:
        self.alternatives = alternatives
        self.fault = fault
        self.bodies: list[dict[str, Any]] = []
        self.queue = queue
        self.tickets: list[Ticket] = []

    def stream(self, messages: Any, config: Any = None, **kw: Any) -> Iterator[_Chunk]:
        self.bodies.append(kw["extra_body"])
        if self.fault is not None:
            raise self.fault
        if self.queue is not None:  # the request is sent here, as langchain-openai's is
            self.tickets.append(self.queue.join())
        yield _chunk(self.alternatives)
