"""The answer's verifier: one confidence that the model's written answer is right, from a few
general signals combined by a small calibrated model (issue #40; storygraph.qa.verify.verifier)."""

from storygraph.qa.verify.evidence import Evidence, Verdict
from storygraph.qa.verify.verifier import Verifier, load_verifier

__all__ = ["Evidence", "Verdict", "Verifier", "load_verifier"]
