"""Eval metrics on tiny hand-made rankings, question-file loading and mode parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from storygraph.errors import InputError
from storygraph.evaluation.harness import load_questions, memo_questions
from storygraph.evaluation.metrics import excluded_leaks, expected_recall, mean, order_accuracy
from storygraph.qa.retrieval.retrieval import available_modes, parse_mode

A = ("a", "R", "x")
B = ("b", "R", "x")
X = ("c", "BAD", "x")
Y = ("d", "BAD", "x")


def test_recall_counts_expected_facts_among_the_kept() -> None:
    assert expected_recall([A, X], [A, B]) == 0.5
    assert expected_recall([A, B], [A, B]) == 1.0
    assert expected_recall([A], []) is None


def test_leaks_are_the_excluded_facts_that_were_kept() -> None:
    assert excluded_leaks([A, X, Y], [X, ("z", "Q", "z")]) == [X]


def test_order_accuracy_counts_pairs_where_the_expected_ranks_higher() -> None:
    assert order_accuracy([A, X, B], [A, B], [X]) == 0.5
    assert order_accuracy([X, A, B, Y], [A, B], [X, Y]) == 0.5
    assert order_accuracy([A, B, X], [A, B], [X]) == 1.0


def test_an_excluded_fact_never_retrieved_ranks_below_and_a_missing_expected_loses() -> None:
    assert order_accuracy([A], [A], [X]) == 1.0
    assert order_accuracy([X], [A], [X]) == 0.0
    assert order_accuracy([], [A], [X]) == 0.0
    assert order_accuracy([A], [A], []) is None


def test_mean_ignores_questions_without_a_value() -> None:
    assert mean([1.0, None, 0.0]) == 0.5
    assert mean([None]) is None


def test_question_file_lines(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(
        '{"id": "q", "question": "Who?", "entities": ["A"], "expected": [["a", "R", "x"]]}\n'
        "\n"
        '{"story_file": "no question here"}\n'
        '{"question": "Where?"}\n',
        encoding="utf-8",
    )
    first, second = load_questions(path)
    assert first.entities == ("A",) and first.expected == (A,) and first.excluded == ()
    assert second.id == "q4" and second.entities is None


def test_a_malformed_triple_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"question": "Who?", "expected": [["a", "R"]]}\n', encoding="utf-8")
    with pytest.raises(InputError):
        load_questions(path)


def test_modes_combine_in_any_order_and_reject_unknown_parts() -> None:
    assert parse_mode("onehop+rerank+qtype").name == "onehop+qtype+rerank"
    assert parse_mode("directed2").name == "directed2"
    for bad in ("twohop", "onehop+magic", "onehop+directed2", "qtype"):
        with pytest.raises(ValueError):
            parse_mode(bad)
    assert {"onehop", "directed2", "undirected2"} <= set(available_modes())


def test_memo_table_becomes_one_case_per_historical_mode() -> None:
    memo = {
        "start": "S",
        "undirected_2hop_must_include": [["a", "R", "b"]],
        "directed_2hop_must_include": [],
        "directed_2hop_must_exclude": [["c", "R", "d"]],
        "onehop_both_must_include": [],
        "onehop_both_must_exclude": [],
        "never": [["b", "R", "a"]],
    }
    cases = memo_questions(memo)
    assert cases["directed2"].excluded == (("c", "R", "d"), ("b", "R", "a"))
    assert cases["undirected2"].expected == (("a", "R", "b"),)
    assert cases["onehop"].entities == ("S",)
