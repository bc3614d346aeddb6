"""What the verifier reads (`Evidence`) and what it says (`Verdict`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Evidence:
    """One written answer and what it was written from.

    `answer` is the model's reply as written (marks and all), `core` what it names (its core:
    「猿です。[1]」 → 猿), `cited` the texts of the sources it cites (by their numbers), `read` the
    texts of every source the model read, `logprobs` the model's log probability of each token
    it wrote (empty when the server sends none), `tokens` those tokens' texts (empty when the
    server sends none, and for a run saved before 2026-12-04), `rule` the premise check's verdict
    (storygraph.qa.verify.premise: "no premise" or "told"; "" when none ran; a run saved before
    2026-12-03 holds the rule check's verdict there: "supported", "not supported", "no premise"),
    `self_check` the model's own yes/no judgement of the answer against the sentences it cites
    (storygraph.qa.verify.self_check: log P(yes) - log P(no); None when it was not asked),
    `asked_forms` the question's content words in its stories' language when it was asked in
    another (storygraph.qa.question.translation.Translation.word_forms: each word's forms;
    empty when it was not translated)."""

    question: str
    answer: str
    core: str
    cited: tuple[str, ...] = ()
    read: tuple[str, ...] = ()
    logprobs: tuple[float, ...] = ()
    rule: str = ""
    tokens: tuple[str, ...] = ()
    self_check: float | None = None
    asked_forms: tuple[tuple[str, ...], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The evidence as the trace keeps it: a saved run's signals can be read again from it
        (eval/train_verifier.py), a new signal measured on answers already written."""
        return {
            "question": self.question,
            "answer": self.answer,
            "core": self.core,
            "cited": list(self.cited),
            "read": list(self.read),
            "logprobs": [round(p, 4) for p in self.logprobs],
            "tokens": list(self.tokens),
            "rule": self.rule,
            "self_check": None if self.self_check is None else round(self.self_check, 4),
            "asked_forms": [list(forms) for forms in self.asked_forms],
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Evidence:
        return cls(
            question=str(raw["question"]),
            answer=str(raw["answer"]),
            core=str(raw["core"]),
            cited=tuple(raw.get("cited", ())),
            read=tuple(raw.get("read", ())),
            logprobs=tuple(float(p) for p in raw.get("logprobs", ())),
            rule=str(raw.get("rule", "")),
            tokens=tuple(str(t) for t in raw.get("tokens", ())),
            self_check=None if raw.get("self_check") is None else float(raw["self_check"]),
            asked_forms=tuple(tuple(str(f) for f in forms) for forms in raw.get("asked_forms", ())),
        )


@dataclass(frozen=True)
class Verdict:
    """How sure the verifier is that the answer is right (`confidence`, 0-1), in words
    (`reason`), the cited sentence that holds most of it (`best_evidence`: its index in
    `Evidence.cited`; None: the answer cites none), and the signals it was computed from (None:
    a signal that could not be read)."""

    confidence: float
    reason: str
    best_evidence: int | None = None
    signals: dict[str, float | None] = field(default_factory=dict)
    evidence: dict[str, Any] = field(default_factory=dict)
    """What it read (`Evidence.to_json`), kept in the trace."""

    def to_json(self) -> dict[str, Any]:
        return {
            "confidence": round(self.confidence, 4),
            "reason": self.reason,
            "best_evidence": self.best_evidence,
            "signals": {k: None if v is None else round(v, 4) for k, v in self.signals.items()},
            "evidence": self.evidence,
        }
