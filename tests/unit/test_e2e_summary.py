"""The e2e summary keeps answers that are right in their own words apart from refusals the
closest shown sentence made right (docs/EVALUATION.md, "Scoring")."""

from __future__ import annotations

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
