"""The verifier's trainer (eval/train_verifier.py): the standing threshold rule chooses the
highest precision target whose strict answers stay within RULE_SLACK of the lowest target's."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "eval"))

import train_verifier as tv


def _rows(right_by_confidence: list[tuple[float, bool]]) -> tuple[list[tv.Row], dict[int, float]]:
    rows = [
        tv.Row("run", f"story{i % 5}", False, {"s": c}, right, False, False)
        for i, (c, right) in enumerate(right_by_confidence)
    ]
    return rows, {i: c for i, (c, _) in enumerate(right_by_confidence)}


def test_the_rule_takes_a_higher_precision_that_costs_few_strict_answers() -> None:
    # 100 answers: the confident 70 are right 56 times (0.80); 30 doubtful ones right 9 times
    confident = [(0.9, i < 56) for i in range(70)]
    doubtful = [(0.3, i < 9) for i in range(30)]
    rows, confidence = _rows(confident + doubtful)
    # at 0.70 the doubtful could only be added at 65/100 precision: both targets show the 70,
    # the same strict, so the rule takes the highest target reached
    assert tv.rule_precision(rows, confidence) == 0.80


def test_the_rule_keeps_the_lowest_target_when_a_higher_one_costs_many_answers() -> None:
    # shown together the top and the middle are 0.70 right (35 of 50); a 0.75 target must drop
    # the middle's 25 right answers
    top = [(0.9, True) for _ in range(10)]
    middle = [(0.6, i < 25) for i in range(40)]
    low = [(0.2, False) for _ in range(50)]
    rows, confidence = _rows(top + middle + low)
    assert tv.rule_precision(rows, confidence) == 0.70
