"""The chat's words for an answer (storygraph.ui.answer_view): the live status names the phase
running and the model's queue, the draft is marked as one, a finished answer's phases read back
from its trace, and one verdict: the check's warnings never stand beside its mark."""

from __future__ import annotations

from storygraph.models import Answer, Support, TraceStep, Usage
from storygraph.qa.pipeline.progress import Phase, phases_of
from storygraph.qa.verify.support_text import NAMES_UNHELD, NOT_SHOWN
from storygraph.ui.answer_view import (
    DRAFT_LEAD,
    draft_line,
    language_of,
    phases_line,
    status_line,
    verdict_view,
)


def _step(name: str, seconds: float, **detail: object) -> TraceStep:
    return TraceStep(name, seconds, dict(detail), Usage())


def test_the_status_names_the_phase_running_or_the_others_ahead() -> None:
    assert status_line(Phase("finding"), 0.1) == "Finding the answer in the graph… (100 ms)"
    assert status_line(Phase("reading", 4), 8.2) == (
        "The model is reading the question and 4 sources… (8.2 s)"
    )
    assert status_line(Phase("writing"), 3) == "The model is writing its answer… (3.0 s)"
    assert status_line(Phase("checking"), 12) == (
        "Checking the answer against the sources… (12 s)"
    )
    assert status_line(Phase("reading", 4), 2, ahead=1) == (
        "Waiting for the model: 1 request ahead of yours… (2.0 s)"
    )


def test_the_draft_says_it_is_checked_before_it_is_the_answer() -> None:
    line = draft_line("猿です。\n[")
    assert line == f"{DRAFT_LEAD} 猿です。 ["
    assert "checking…" in DRAFT_LEAD and "not the answer" in DRAFT_LEAD


def test_a_finished_answers_phases_split_reading_and_writing_at_the_first_token() -> None:
    steps = [
        _step("entities", 0.05),
        _step("retrieval", 0.03),
        _step("rerank", 0.01),
        _step("sentences", 0.01),
        _step("answer", 15.0, sources_read=4, first_token_s=11.5),
        _step("support", 0.4),
    ]
    phases = phases_of(steps)
    assert [(p.phase.name, round(p.seconds, 2)) for p in phases] == [
        ("finding", 0.1),
        ("reading", 11.5),
        ("writing", 3.5),
        ("checking", 0.4),
    ]
    assert phases_line(steps) == (
        "found in the graph 100 ms · the model read 4 sources 12 s · wrote 3.5 s · "
        "checked 400 ms"
    )
    # the facts' answer: no model read or wrote it
    assert [p.phase.name for p in phases_of([_step("answer", 0.01, method="facts")])] == [
        "finding",
        "writing",
    ]


def _answer(question: str, text: str, support: Support, *warnings: str, said: str = "") -> Answer:
    steps = [_step("support", 0.1, model_answer=said or None)]
    return Answer(question, text, "onehop", warnings=list(warnings), support=support, steps=steps)


def test_the_checks_warnings_go_one_level_deeper_never_beside_the_mark() -> None:
    reason = "犬 follows 桃太郎 in [2]"
    support = Support("supported", 2, ("桃太郎",), reason, check="role")
    answer = _answer(
        "犬は誰のあとからついて行きましたか？",
        "桃太郎です。[2]",
        support,
        f"{NAMES_UNHELD}おじいさん",
        "the question's translation failed",
    )
    view = verdict_view(answer)
    assert view.mark == "supported"
    assert view.line == "確認済み：文[2]にそう書かれています。"
    assert view.warnings == ("the question's translation failed",)
    assert view.developer[0] == f"checked: {reason}"
    assert view.developer[1].startswith(NAMES_UNHELD)
    assert view.changed == ""


def test_a_replaced_answer_says_what_changed_in_the_questions_language() -> None:
    support = Support("no premise", reason="nothing in the story defeats Momotaro", check="premise")
    answer = _answer(
        "Who defeated Momotaro?",
        "The story's sentences do not say.",
        support,
        f"{NOT_SHOWN}support check (premise) found no premise: …",
        said="The monkey. [2]",
    )
    view = verdict_view(answer)
    assert view.mark == "does not say" and view.warnings == ()
    assert view.changed == (
        "The model's first answer, The monkey, was not shown: the story's sentences do not "
        "answer “Who defeated Momotaro?”"
    )
    doubted = Support("not supported", reason="confidence 0.31", check="verifier")
    asked = "桃太郎を倒したのは誰？"
    japanese = verdict_view(_answer(asked, "確かな…", doubted, said="猿です。[2]"))
    # the reason is said once, in the sentence on what changed
    assert japanese.line == "確かではありません。"
    assert japanese.changed == (
        "モデルの最初の答え「猿」は表示していません：根拠の文で確かめられませんでした。"
    )
    unreplaced = verdict_view(_answer(asked, "猿です。[2]", doubted))
    assert unreplaced.changed == "" and unreplaced.line == (
        "確かではありません：根拠の文で確かめられませんでした。"
    )


def test_an_answer_no_check_read_has_no_mark_and_keeps_its_warnings() -> None:
    support = Support("not checked", reason="the answer is the facts list")
    view = verdict_view(_answer("桃太郎の仲間は誰？", "1. 犬 …", support, "a warning"))
    assert view.mark is None and view.line == "" and view.changed == ""
    assert view.warnings == ("a warning",)


def test_the_chats_words_follow_the_readers_language_detected_only_for_old_chats() -> None:
    read = Answer("桃太郎を倒したのは誰？", "猿です。", "onehop", language="en")
    assert language_of(read) == "en"  # the reader's reading wins: the question is not read again
    assert language_of(Answer("桃太郎を倒したのは誰？", "猿です。", "onehop")) == "ja"
    assert language_of(Answer("Who defeated Momotaro?", "The monkey.", "onehop")) == "en"
    assert read.to_json()["language"] == "en"
