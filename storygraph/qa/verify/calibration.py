"""The small calibrated model that turns the verifier's signals into one confidence.

A logistic regression over standardised signals (a signal that could not be read counts as
its mean, 0 after standardising, and its absence is a feature of its own), fitted by
`fit` (L2-regularised, Newton steps) on dev runs only (eval/train_verifier.py), stored with
the threshold chosen on dev in `weights.json`, one entry per model family.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

WEIGHTS = Path(__file__).with_name("weights.json")


@dataclass(frozen=True)
class Calibration:
    """One family's fitted model: the signals it reads, their means and scales, one weight per
    signal and per missing signal, the intercept, and the threshold chosen on dev."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    missing_coef: tuple[float, ...]
    intercept: float
    threshold: float
    trained: dict[str, Any] = field(default_factory=dict)

    def terms(self, signals: Mapping[str, float | None]) -> dict[str, float]:
        """Each signal's share of the log odds."""
        out: dict[str, float] = {}
        for i, name in enumerate(self.features):
            value = signals.get(name)
            if value is None:
                out[name] = self.missing_coef[i]
            else:
                out[name] = self.coef[i] * (value - self.mean[i]) / self.scale[i]
        return out

    def confidence(self, signals: Mapping[str, float | None]) -> float:
        """The probability that the answer is right, as the model fitted on dev gives it."""
        z = self.intercept + sum(self.terms(signals).values())
        return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@lru_cache(maxsize=4)
def load(path: Path = WEIGHTS) -> dict[str, Calibration]:
    """Every family's calibration from `path` (read once per process: the weights are code)."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {
        family: Calibration(
            features=tuple(c["features"]),
            mean=tuple(c["mean"]),
            scale=tuple(c["scale"]),
            coef=tuple(c["coef"]),
            missing_coef=tuple(c["missing_coef"]),
            intercept=float(c["intercept"]),
            threshold=float(c["threshold"]),
            trained=dict(c.get("trained", {})),
        )
        for family, c in raw["families"].items()
    }


def fit(
    rows: Sequence[Mapping[str, float | None]],
    labels: Sequence[bool],
    features: Sequence[str],
    l2: float = 1.0,
    steps: int = 50,
) -> Calibration:
    """A logistic regression of `labels` on the `features` of `rows` (threshold 0.5 until the
    trainer chooses one)."""
    import numpy as np

    n, k = len(rows), len(features)
    values = np.array(
        [[np.nan if r.get(f) is None else float(r[f]) for f in features] for r in rows]  # type: ignore[arg-type]
    ).reshape(n, k)
    missing = np.isnan(values)
    mean = np.array([np.nanmean(c) if (~np.isnan(c)).any() else 0.0 for c in values.T])
    scale = np.array([np.nanstd(c) if (~np.isnan(c)).sum() > 1 else 1.0 for c in values.T])
    scale = np.where(scale > 1e-9, scale, 1.0)
    z = np.where(missing, 0.0, (values - mean) / scale)
    x = np.hstack([np.ones((n, 1)), z, missing.astype(float)])
    y = np.array(labels, dtype=float)
    w = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[0] = 0.0  # the intercept is not shrunk
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -40, 40)))
        grad = x.T @ (p - y) + penalty * w
        hess = (x.T * (p * (1 - p))) @ x + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return Calibration(
        features=tuple(features),
        mean=tuple(float(v) for v in mean),
        scale=tuple(float(v) for v in scale),
        coef=tuple(float(v) for v in w[1 : k + 1]),
        missing_coef=tuple(float(v) for v in w[k + 1 :]),
        intercept=float(w[0]),
        threshold=0.5,
    )
