"""`Verifier.verify(evidence) -> Verdict`: the one entry of the answer's verification.

The signals (storygraph.qa.verify.signals) are read, the family's calibration (the embedded
model's, or "other" for any other model: a capable model's token probabilities are not on the
small model's scale, so that family is fitted without them) turns them into a confidence, and
the verdict says in words which signals weighed most. `passes` compares the confidence with the
threshold chosen on dev.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from storygraph.qa.verify.calibration import WEIGHTS, Calibration, load
from storygraph.qa.verify.evidence import Evidence, Verdict
from storygraph.qa.verify.signals import best_share, read_signals

FAMILIES = ("embedded", "other")

SAYING = {
    "grounded_cited": (
        "its words stand in the sentence it cites",
        "its words are not in the sentence it cites",
    ),
    "grounded_read": (
        "its words stand in a sentence the model read",
        "its words are in no sentence the model read",
    ),
    "question_share": ("it repeats the question's own words", "it says more than the question"),
    "mean_logprob": ("the model wrote it with confidence", "the model hesitated writing it"),
    "min_logprob": ("no word of it was a guess", "a word of it was a guess"),
    "head_logprob": ("the model was sure of its first words", "its first words were a guess"),
    "answer_logprob": (
        "the model was sure of the words it answers with",
        "the words it answers with were a guess",
    ),
    "question_in_cited": (
        "the sentence it cites tells what was asked",
        "the sentence it cites tells little of what was asked",
    ),
    "no_premise": ("the story tells the asked act of no one", "the story tells the asked act"),
    "core_size": ("it is a long answer", "it is a short answer"),
    "answer_locality": (
        "it stands in the cited sentence that tells what was asked",
        "no cited sentence tells it with what was asked",
    ),
    "answer_in_read": (
        "it stands in a sentence it read that tells what was asked",
        "no sentence it read tells it with what was asked",
    ),
    "hypothesis_in_cited": (
        "a cited sentence says the question with it as the answer",
        "no cited sentence says the question with it as the answer",
    ),
    "premise_in_read": (
        "a sentence it read tells what the question takes as given",
        "no sentence it read tells what the question takes as given",
    ),
    "self_check": (
        "the model, asked, says the cited sentence states it",
        "the model, asked, says the cited sentence does not state it",
    ),
    "name_answer": (
        "a name was asked and it is written as one",
        "a name was asked and it is not written as one",
    ),
}
"""How each signal is said when it was high (first) or low (second): above or below its mean on
dev (a signal with a negative weight, `question_share`, lowers the confidence when high)."""


@dataclass(frozen=True)
class Verifier:
    """The verification stage for one model family."""

    calibration: Calibration
    family: str

    @property
    def threshold(self) -> float:
        return self.calibration.threshold

    def verify(self, evidence: Evidence) -> Verdict:
        signals = read_signals(evidence)  # all of them: the trace keeps them for the trainer
        confidence = self.calibration.confidence(signals)
        terms = self.calibration.terms(signals)
        # the signals that pushed toward the verdict, strongest first
        toward = 1.0 if confidence >= self.threshold else -1.0
        ranked = sorted(terms.items(), key=lambda item: item[1] * toward, reverse=True)
        weight = dict(zip(self.calibration.features, self.calibration.coef, strict=True))
        said = [
            SAYING[name][0 if value * weight[name] > 0 else 1]
            for name, value in ranked[:2]
            if signals.get(name) is not None and value * toward > 0.05
        ]
        reason = f"confidence {confidence:.2f}" + (": " + "; ".join(said) if said else "")
        index = best_share(evidence.core, evidence.cited)[1] if evidence.cited else None
        return Verdict(confidence, reason, index, signals, evidence.to_json())

    def reads(self, signal: str) -> bool:
        """Whether the calibration weighs `signal` (a signal that costs a model call is asked
        only then)."""
        return signal in self.calibration.features

    def passes(self, verdict: Verdict) -> bool:
        return verdict.confidence >= self.threshold


def load_verifier(family: str, path: Path = WEIGHTS) -> Verifier:
    """The verifier of `family` ("embedded" or "other") from the committed weights."""
    if family not in FAMILIES:
        raise ValueError(f"unknown model family {family!r}: one of {', '.join(FAMILIES)}")
    return Verifier(load(path)[family], family)
