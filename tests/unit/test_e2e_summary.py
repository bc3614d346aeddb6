"""The e2e summary keeps answers that are right in their own words apart from refusals the
closest shown sentence made right (docs/EVALUATION.md, "Scoring")."""

from __future__ import annotations

from pathlib import Path

from storygraph.evaluation.e2e import E2EResult, summarize_e2e


def _result(correct: bool, method: str, tokens: int | None = 0) -> E2EResult:
    return E2EResult(
        id="q",
        story="s.txt",
        mode="onehop",
        question="Who?",
        answer="…",
        correct=correct,
        rule="contains:x" if correct else "none",
        evidence_found=True,
        seconds=1.0,
        first_token_seconds=0.5,
        llm_calls=1,
        tokens=tokens,
        entities=[],
        kept=1,
        method=method,
    )


def test_a_refusal_made_right_by_the_closest_sentence_is_not_an_answer_in_its_own_words() -> None:
    results = [
        _result(True, "llm-compact"),
        _result(True, "llm-compact, no answer: closest sentence shown"),
        _result(False, "llm-compact, no answer: closest sentence shown"),
        _result(False, "llm-compact"),
    ]
    summary = summarize_e2e(results, [])
    assert summary["correct"] == 2 and summary["accuracy"] == 0.5
    assert summary["closest_sentence_shown"] == 2
    assert summary["answered_correct"] == 1


def test_tokens_per_question_are_unknown_when_any_question_s_tokens_were_not_reported() -> None:
    # a question answered without a model call reports 0 tokens: no mean over it alone
    mixed = [_result(True, "llm-compact", None), _result(True, "nothing found", 0)]
    assert summarize_e2e(mixed, [])["tokens_per_question"] is None
    known = [_result(True, "llm-compact", 300), _result(True, "nothing found", 0)]
    assert summarize_e2e(known, [])["tokens_per_question"] == 150.0


def test_first_per_story_keeps_each_story_s_first_questions_in_order() -> None:
    from dataclasses import replace

    from storygraph.evaluation.e2e import E2EQuestion, first_per_story

    base = E2EQuestion(id="", story="", question="?", answers=("x",))
    cases = [replace(base, id=f"{s}{i}", story=s) for s, i in ("a1", "b1", "a2", "a3", "b2")]
    assert [c.id for c in first_per_story(cases, 2)] == ["a1", "b1", "a2", "b2"]


def test_the_wait_before_the_model_call_is_summarised_apart_from_the_first_token() -> None:
    from dataclasses import replace

    results = [replace(_result(True, "llm-compact"), before_answer_seconds=s) for s in (0.1, 0.3)]
    results.append(replace(_result(True, "llm-compact"), before_answer_seconds=2.0))
    summary = summarize_e2e(results, [])
    assert summary["before_answer_p50"] == 0.3
    assert summary["first_token_p50"] == 0.5


def test_strict_figures_count_supported_answers_and_declined_unanswerable_ones() -> None:
    from dataclasses import replace

    right = replace(_result(True, "llm-compact"), strict_correct=True)
    lenient_only = _result(True, "llm-compact, no answer: closest sentence shown")
    declined = replace(_result(True, "llm-compact"), unanswerable=True, declined=True,
                       strict_correct=True)
    named = replace(_result(False, "llm-compact"), unanswerable=True)
    summary = summarize_e2e([right, lenient_only, declined, named], [])
    assert summary["strict_correct"] == 2 and summary["strict_accuracy"] == 0.5
    assert summary["accuracy"] == 0.75  # the lenient rule, as before
    assert summary["strict_accuracy_answerable"] == 0.5
    assert summary["unanswerable"] == 2 and summary["unanswerable_declined"] == 0.5
    # no support check: unknown, not zero
    assert summary["supported_precision"] is None and summary["coverage"] is None
    checked = [replace(right, supported=True), replace(lenient_only, supported=True),
               replace(declined, supported=False), replace(named, supported=False)]
    summary = summarize_e2e(checked, [])
    assert summary["supported_precision"] == 0.5 and summary["coverage"] == 0.5


def test_the_table_says_n_a_where_no_support_check_ran() -> None:
    from storygraph.evaluation.cli import render_e2e
    from storygraph.evaluation.e2e import E2EReport

    results = [_result(True, "llm-compact")]
    report = E2EReport("m", "x", {"onehop": summarize_e2e(results, [])}, [], results)
    row = render_e2e(report).splitlines()[2]
    assert row.count("n/a") == 2


def test_an_unanswerable_question_has_no_accepted_answer(tmp_path: Path) -> None:
    import json

    import pytest

    from storygraph.errors import InputError
    from storygraph.evaluation.e2e import load_e2e_questions

    row = {"id": "u", "story": "s.txt", "question": "Who won the race?", "answers": [],
           "unanswerable": True}
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(row), encoding="utf-8")
    assert load_e2e_questions(path)[0].unanswerable
    path.write_text(json.dumps({**row, "answers": ["fox"]}), encoding="utf-8")
    with pytest.raises(InputError, match="unanswerable"):
        load_e2e_questions(path)
    path.write_text(json.dumps({**row, "unanswerable": False}), encoding="utf-8")
    with pytest.raises(InputError, match="answers"):
        load_e2e_questions(path)


def test_saved_runs_are_scored_again_by_today_s_rules_and_sets() -> None:
    from dataclasses import replace

    from storygraph.evaluation.e2e import E2EQuestion, rescore_report

    refusal = "この話の文からは分かりません。 いちばん近い文：「犬が先に立ちました。」[1]"
    first = {"model": "m", "questions": [
        replace(_result(True, "llm-compact"), id="a", answer="犬と猿です。[1]").to_json(),
        replace(_result(True, "llm-compact"), id="b", answer=refusal).to_json(),
    ]}
    second = {"model": "m", "questions": [
        replace(_result(False, "llm-compact"), id="u", answer=refusal).to_json(),
        replace(_result(True, "llm-compact"), id="a", answer="犬です。").to_json(),
    ]}
    sets = [
        E2EQuestion(id="a", story="s", question="?", answers=("犬",), wrong=("猿",)),
        E2EQuestion(id="b", story="s", question="?", answers=("犬",)),
        E2EQuestion(id="u", story="s", question="?", answers=(), unanswerable=True),
    ]
    report = rescore_report([first, second], sets)
    by_id = {r.id: r for r in report.results}
    assert list(by_id) == ["a", "b", "u"]  # a question two runs asked: the first run's answer
    assert by_id["a"].rule == "wrong:猿" and not by_id["a"].strict_correct
    assert by_id["b"].correct and not by_id["b"].strict_correct  # the closest sentence
    assert by_id["u"].strict_correct and by_id["u"].declined and by_id["u"].correct
    assert report.overall["onehop"]["unanswerable_declined"] == 1.0


def test_evidence_cited_but_not_read_is_counted_apart_from_evidence_read() -> None:
    from dataclasses import replace

    # read: in a source the answer read; cited: in any citation (the rest lost to the budget)
    read = replace(_result(True, "llm-compact"), evidence_found=True, evidence_cited=True)
    budget = replace(_result(False, "llm-compact"), evidence_found=False, evidence_cited=True)
    retrieval = replace(_result(False, "llm-compact"), evidence_found=False, evidence_cited=False)
    nothing = replace(_result(False, "llm-compact"), evidence_found=None, evidence_cited=None)
    summary = summarize_e2e([read, budget, retrieval, nothing], [])
    assert summary["evidence_recall"] == round(1 / 3, 4)
    assert summary["evidence_cited"] == round(2 / 3, 4)
