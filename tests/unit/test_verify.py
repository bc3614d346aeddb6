"""The answer's verifier (storygraph.qa.verify): each signal on made-up sentences of the class it
reads, the calibrated model's fit and reading, and what each mode does to the answer shown."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import pytest

from storygraph.models import Citation
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.entities import ResolvedEntity
from storygraph.qa.question.question_type import detect_question_type
from storygraph.qa.question.translation import TranslatedWord, Translation
from storygraph.qa.verify import Evidence, Verifier, load_verifier
from storygraph.qa.verify.calibration import Calibration, fit
from storygraph.qa.verify.gate import evidence_of, support_step
from storygraph.qa.verify.signals import (
    SIGNALS,
    form_in,
    read_signals,
    token_spans,
    translated_in,
    units,
    written_as_name,
)
from storygraph.qa.verify.support_text import NOT_SURE, SupportStep

SENTENCES = (
    "おばあさんは川へせんたくに行きました。",
    "パン屋は少年にりんごを三つやりました。",
    "The baker gave the boy three apples.",
)


def _evidence(question: str, answer: str, core: str, **kw: object) -> Evidence:
    return Evidence(question, answer, core, **kw)  # type: ignore[arg-type]


# --- the signals, one class of cases each ------------------------------------------------------
def test_units_are_bigrams_of_japanese_runs_and_english_content_words() -> None:
    assert units("犬、猿ときじ") == {"犬", "猿と", "とき", "きじ"}
    english = units("The baker gave apples.")
    assert "baker" in english and "the" not in english
    assert units("。、") == frozenset()


def test_a_name_the_cited_sentence_states_is_grounded_and_one_it_lacks_is_not() -> None:
    asked = "少年にりんごをやったのは誰？"
    stated = _evidence(asked, "パン屋です。[2]", "パン屋", cited=SENTENCES[1:2])
    absent = _evidence(asked, "魚屋です。[2]", "魚屋", cited=SENTENCES[1:2])
    assert SIGNALS["grounded_cited"](stated) == 1.0
    assert SIGNALS["grounded_cited"](absent) == 0.0  # its one unit, 魚屋, is not there
    english = _evidence(
        "Who gave the boy apples?", "The baker. [3]", "The baker", cited=SENTENCES[2:]
    )
    assert SIGNALS["grounded_cited"](english) == 1.0


def test_no_citation_reads_as_none_not_as_zero() -> None:
    said = _evidence("誰？", "パン屋です。", "パン屋", read=SENTENCES[:2])
    assert SIGNALS["grounded_cited"](said) is None
    assert SIGNALS["grounded_read"](said) == 1.0


def test_an_answer_naming_the_asked_about_participant_again_repeats_the_question() -> None:
    again = _evidence("Who pushed the crow into the well?", "The crow. [1]", "The crow")
    other = _evidence("Who pushed the crow into the well?", "The fox. [1]", "The fox")
    assert SIGNALS["question_share"](again) == 1.0
    assert SIGNALS["question_share"](other) == 0.0


def test_the_models_own_certainty_is_its_mean_and_least_token_logprob() -> None:
    sure = _evidence("q", "a", "a", logprobs=(-0.01, -0.02, -0.03))
    guess = _evidence("q", "a", "a", logprobs=(-0.01, -4.0, -0.03))
    assert SIGNALS["mean_logprob"](sure) == pytest.approx(-0.02)
    assert SIGNALS["min_logprob"](guess) == -4.0
    assert SIGNALS["mean_logprob"](_evidence("q", "a", "a")) is None  # no probabilities sent


def test_the_premise_checks_verdict_is_one_signal_and_no_check_is_none() -> None:
    assert SIGNALS["no_premise"](_evidence("q", "a", "a", rule="no premise")) == 1.0
    assert SIGNALS["no_premise"](_evidence("q", "a", "a", rule="told")) == 0.0
    assert SIGNALS["no_premise"](_evidence("q", "a", "a", rule="")) is None


def test_every_signal_reads_every_evidence_without_failing() -> None:
    empty = _evidence("", "", "")
    assert set(read_signals(empty)) == set(SIGNALS)


# --- the calibrated model ----------------------------------------------------------------------
def _synthetic(n: int, seed: int = 3) -> tuple[list[dict[str, float | None]], list[bool]]:
    """Right answers are more grounded; half the rows lack their token probabilities."""
    rng = random.Random(seed)
    rows, labels = [], []
    for i in range(n):
        right = rng.random() < 0.5
        grounded = min(1.0, max(0.0, rng.gauss(0.8 if right else 0.4, 0.2)))
        rows.append({"grounded_cited": grounded, "mean_logprob": None if i % 2 else -0.3})
        labels.append(right)
    return rows, labels


def test_the_fit_finds_the_signals_direction_and_reads_a_missing_one_as_its_mean() -> None:
    rows, labels = _synthetic(400)
    model = fit(rows, labels, ["grounded_cited", "mean_logprob"])
    assert model.coef[0] > 1.0  # more grounded, more often right
    low = model.confidence({"grounded_cited": 0.2, "mean_logprob": None})
    high = model.confidence({"grounded_cited": 0.95, "mean_logprob": None})
    assert low < 0.3 < 0.7 < high
    # calibrated: the mean confidence is the share of right answers
    mean = sum(model.confidence(r) for r in rows) / len(rows)
    assert mean == pytest.approx(sum(labels) / len(labels), abs=0.02)


def test_the_committed_weights_load_for_both_families_and_refuse_another() -> None:
    for family in ("embedded", "other"):
        verifier = load_verifier(family)
        assert 0.0 < verifier.threshold < 1.0
    with pytest.raises(ValueError, match="unknown model family"):
        load_verifier("giant")


@pytest.mark.parametrize("family", ["embedded", "other"])
def test_an_act_the_story_tells_of_no_one_lowers_the_committed_confidence(family: str) -> None:
    # the class: a false premise ("Who pushed the baker into the well?" where no one pushes
    # anyone); the premise check's "no premise" is one of the calibrated signals, and the fit
    # gave it the direction a false premise has: the answer is less often right
    verifier = load_verifier(family)
    assert "no_premise" in verifier.calibration.features
    told = {name: None for name in verifier.calibration.features} | {"no_premise": 0.0}
    untold = {**told, "no_premise": 1.0}
    assert verifier.calibration.confidence(untold) < verifier.calibration.confidence(told)


@pytest.mark.parametrize(
    ("core", "named"),
    [
        ("Dinah", True),
        ("Prince Hyacinth", True),
        ("Riquet with the Tuft", True),
        ("The King", False),
        ("the old man", False),
        ("Three days", False),
        ("The baker gave the boy three apples and went home", False),
        ("ギン", True),  # a katakana name the dictionary reads as a common noun
        ("花子", True),
        ("木村君", True),
        ("兵十のおっ母", False),
        ("伯父さん", False),
        ("狼共", False),
        ("先生", False),
    ],
)
def test_an_answer_is_written_as_a_name_by_its_capitals_or_its_parts_of_speech(
    core: str, named: bool
) -> None:
    assert written_as_name(core) is named


def test_a_name_question_answered_with_a_common_noun_reads_zero() -> None:
    # the class: a story that never names its teacher; the model answers "the teacher"
    asked = "What was the teacher's name?"
    assert SIGNALS["name_answer"](_evidence(asked, "The teacher. [1]", "The teacher")) == 0.0
    assert SIGNALS["name_answer"](_evidence(asked, "Mr. Smith. [1]", "Mr. Smith")) == 1.0
    assert SIGNALS["name_answer"](_evidence("先生の名前は？", "先生です。[1]", "先生")) == 0.0
    assert SIGNALS["name_answer"](_evidence("犬の名前は？", "シロです。[1]", "シロ")) == 1.0
    assert (
        SIGNALS["name_answer"](_evidence("Who gave the boy apples?", "The baker.", "The baker"))
        is None
    )


@pytest.mark.parametrize("family", ["embedded", "other"])
def test_a_name_question_answered_with_a_common_noun_lowers_the_committed_confidence(
    family: str,
) -> None:
    verifier = load_verifier(family)
    assert "name_answer" in verifier.calibration.features
    named = {name: None for name in verifier.calibration.features} | {"name_answer": 1.0}
    common = {**named, "name_answer": 0.0}
    assert verifier.calibration.confidence(common) < verifier.calibration.confidence(named)


def test_the_other_family_does_not_read_the_small_models_token_probabilities() -> None:
    assert not {"mean_logprob", "min_logprob"} & set(load_verifier("other").calibration.features)


# --- what the verdict does to the answer shown ---------------------------------------------------
def _verifier(threshold: float = 0.5) -> Verifier:
    model = Calibration(("grounded_cited",), (0.5,), (0.25,), (4.0,), (0.0,), 0.0, threshold)
    return Verifier(model, "embedded")


def _analysis(question: str) -> QuestionAnalysis:
    return QuestionAnalysis(
        question=question,
        language="ja",
        entities=(ResolvedEntity("少年", "少年", "dictionary"),),
        qtype=detect_question_type(question, ["少年"], language="ja"),
        stems=frozenset(),
        related=frozenset(),
        terms=(),
    )


CITATIONS = [Citation(1, "d:1", "d.txt", SENTENCES[0]), Citation(2, "d:2", "d.txt", SENTENCES[1])]
QUESTION = "少年にりんごをやったのは誰？"


class _Premise:
    """A premise check with a fixed answer (its own tests: tests/unit/test_premise.py)."""

    def __init__(self, missing: str | None) -> None:
        self.problem = ""
        self._missing = missing

    def missing(self, *args: object) -> str | None:
        return self._missing


def _judge(
    written: str, mode: str = "gate", premise: str | None = None, method: str = "llm-compact"
) -> SupportStep:
    return support_step(
        mode, _verifier(), _Premise(premise), _analysis(QUESTION), written, method,  # type: ignore[arg-type]
        False, (), CITATIONS, 2, (),
    )  # fmt: skip


def test_gate_shows_a_grounded_answer_and_withholds_an_ungrounded_one() -> None:
    shown = _judge("パン屋です。[2]")
    assert shown.support.supported and shown.support.check == "verifier"
    assert shown.text == "パン屋です。[2]" and shown.support.source == 2
    doubtful = _judge("魚屋の主人です。[1]")
    assert not doubtful.support.supported and doubtful.support.verdict == "not supported"
    assert doubtful.text.startswith(NOT_SURE["ja"]) and doubtful.detail["model_answer"]


def test_a_withheld_answer_to_an_act_told_of_no_one_says_the_story_does_not_say() -> None:
    withheld = _judge("魚屋の主人です。[1]", premise="no fact or sentence has anyone give 少年")
    assert withheld.support.verdict == "no premise" and withheld.support.check == "premise"
    assert withheld.text.startswith("この話の文からは分かりません。")
    # a confident answer is shown all the same: the premise is one signal, not a veto
    confident = _judge("パン屋です。[2]", premise="no fact or sentence has anyone give 少年")
    assert confident.support.supported


def test_a_declining_reply_keeps_its_words_and_says_whether_the_premise_stands() -> None:
    declined = _judge("わかりません。")
    assert declined.support.verdict == "declined" and declined.text == "わかりません。"
    assert _judge("わかりません。", premise="no act").support.verdict == "no premise"


def test_label_shows_every_answer_with_its_confidence() -> None:
    labelled = _judge("魚屋の主人です。[1]", "label")
    assert labelled.text == "魚屋の主人です。[1]" and not labelled.support.supported
    assert labelled.support.reason.startswith("confidence ")
    assert "verifier" in labelled.detail


def test_the_facts_list_and_a_cut_answer_are_not_checked() -> None:
    facts = _judge("パン屋 -GIVES-> 少年", method="facts")
    assert facts.support.verdict == "not checked" and facts.text == "パン屋 -GIVES-> 少年"
    cut = support_step(
        "gate", _verifier(), None, _analysis(QUESTION), "パン", "llm-compact", True, (),
        CITATIONS, 2, (),
    )  # fmt: skip
    assert cut.support.verdict == "not checked" and cut.text == "パン"


def test_the_premise_verdict_is_the_evidence_the_verifier_reads() -> None:
    untold = evidence_of(QUESTION, "パン屋です。[2]", (), CITATIONS, 2, "no act")
    told = evidence_of(QUESTION, "パン屋です。[2]", (), CITATIONS, 2, None)
    assert SIGNALS["no_premise"](untold) == 1.0 and SIGNALS["no_premise"](told) == 0.0
    assert SIGNALS["no_premise"](_evidence("q", "a", "a")) is None  # no premise check ran


def test_the_answers_own_tokens_are_read_apart_from_the_questions_words() -> None:
    # 「少年に…やったのは誰？」: 「少年」 repeats the question (sure), 「パン屋」 answers (a guess)
    tokens = ("少年", "に", "パン", "屋", "です", "。", "[", "2", "]")
    logprobs = (-0.01, -0.01, -2.0, -1.0, -0.01, -0.01, -0.01, -0.1, -0.01)
    reply = _evidence(QUESTION, "".join(tokens), "少年にパン屋", tokens=tokens, logprobs=logprobs)
    assert SIGNALS["answer_logprob"](reply) == pytest.approx(-1.5)
    assert SIGNALS["head_logprob"](reply) == pytest.approx(-0.67, abs=0.01)
    english = ("The", " baker", ".", " [", "2", "]")
    said = _evidence("Who gave the boy apples?", "".join(english), "The baker",
                     tokens=english, logprobs=(-0.1, -3.0, -0.1, -0.1, -0.1, -0.1))  # fmt: skip
    assert SIGNALS["answer_logprob"](said) == pytest.approx(-3.0)
    # a run saved without token texts, and an answer the question already says, read nothing
    assert SIGNALS["answer_logprob"](_evidence(QUESTION, "x", "x", logprobs=(-1.0,))) is None
    again = _evidence(QUESTION, "少年", "少年", tokens=("少年",), logprobs=(-0.1,))
    assert SIGNALS["answer_logprob"](again) is None


def test_tokens_holding_part_of_a_characters_bytes_share_its_place() -> None:
    # the server decodes each token alone: 姫 split in two tokens reads as two U+FFFD
    tokens = ("お", "\ufffd", "\ufffd", "さま", "です", "。")
    assert token_spans("お姫さまです。", tokens) == [(0, 1), (1, 2), (1, 2), (2, 4), (4, 6), (6, 7)]
    assert token_spans("お姫さまです。", ("お", "猿")) is None  # they spell another reply
    logprobs = (-0.1, -2.0, -1.0, -0.1, -0.1, -0.1)
    reply = _evidence("誰が来た？", "お姫さまです。", "お姫さま", tokens=tokens, logprobs=logprobs)
    assert SIGNALS["answer_logprob"](reply) == pytest.approx((-0.1 - 2.0 - 1.0 - 0.1) / 4)


def test_confidence_is_a_probability() -> None:
    verdict = _verifier().verify(_evidence(QUESTION, "x", "パン屋", cited=SENTENCES[1:2]))
    assert 0.0 < verdict.confidence < 1.0 and not math.isnan(verdict.confidence)


def test_the_models_first_words_are_read_apart_from_its_closing() -> None:
    # a guessed name followed by a sure closing (「です。[2]」): the head shows the guess
    guessed = _evidence("q", "a", "a", logprobs=(-3.0, -2.0, -1.0, -0.01, -0.01, -0.01))
    assert SIGNALS["head_logprob"](guessed) == pytest.approx(-2.0)
    assert SIGNALS["mean_logprob"](guessed) > SIGNALS["head_logprob"](guessed)  # type: ignore[operator]


def test_a_cited_sentence_about_the_asked_act_tells_more_of_the_question() -> None:
    asked = "Who gave the boy apples?"
    about = _evidence(asked, "x", "The baker", cited=(SENTENCES[2],))
    elsewhere = _evidence(asked, "x", "The baker", cited=("The baker slept all day.",))
    assert SIGNALS["question_in_cited"](about) > SIGNALS["question_in_cited"](elsewhere)  # type: ignore[operator]
    assert SIGNALS["question_in_cited"](_evidence(asked, "x", "y")) is None


def test_a_question_in_another_script_is_read_in_the_cited_sentences_language() -> None:
    # "Who gave the boy apples?" over a Japanese tale: its translated words (give, boy, apple),
    # each in its forms (a verb's conjugation stems too), found in the cited sentence or not
    asked = "Who gave the boy apples?"
    forms = (("あげる", "あげ", "やる", "やり", "やっ"), ("少年",), ("りんご", "林檎"))
    about = _evidence(asked, "x", "パン屋", cited=(SENTENCES[1],), asked_forms=forms)
    elsewhere = _evidence(asked, "x", "パン屋", cited=(SENTENCES[0],), asked_forms=forms)
    assert SIGNALS["question_in_cited"](about) == pytest.approx(1.0)
    assert SIGNALS["question_in_cited"](elsewhere) == 0.0
    # untranslated: the scripts share no unit, so the signal cannot be read (not a zero)
    assert (
        SIGNALS["question_in_cited"](_evidence(asked, "x", "パン屋", cited=SENTENCES[1:2])) is None
    )
    # a Japanese question over an English tale reads its English glosses as words
    glossed = (("boy", "lad"), ("three",), ("horse",))
    english = _evidence("少年にりんごをやったのは誰？", "x", "The baker", cited=(SENTENCES[2],),
                        asked_forms=glossed)  # fmt: skip
    assert SIGNALS["question_in_cited"](english) == pytest.approx(2 / 3)


def test_one_kana_alone_is_no_form_found_but_one_kanji_is() -> None:
    assert form_in("犬", "犬がほえました。") and not form_in("い", "犬がほえました。い")
    assert form_in("old woman", "The old woman laughed.") and not form_in(
        "old man", "The old woman"
    )
    assert translated_in((("犬",), ("猫",)), ("犬がほえました。", "犬と猫")) == 1.0
    assert translated_in((), ("犬",)) is None


def test_the_gate_hands_the_questions_translation_to_the_verifier() -> None:
    analysis = replace(
        _analysis("Who gave the boy apples?"),
        translation=Translation("少年 りんご", "ja", "dictionary (JMdict)",
                                words=(TranslatedWord("boy", ("少年",), noun=True),
                                       TranslatedWord("apple", ("りんご",), noun=True))),
    )  # fmt: skip
    step = support_step(
        "gate", _verifier(), _Premise(None), analysis, "パン屋です。[2]", "llm-compact",  # type: ignore[arg-type]
        False, (), CITATIONS, 2, (),
    )  # fmt: skip
    kept = step.detail["verifier"]["evidence"]["asked_forms"]
    assert kept == [["少年"], ["りんご"]]
    assert step.detail["verifier"]["signals"]["question_in_cited"] == pytest.approx(1.0)


def test_the_evidence_kept_in_the_trace_reads_back_to_the_same_signals() -> None:
    cited, read = (SENTENCES[1],), SENTENCES[:2]
    evidence = Evidence(QUESTION, "パン屋です。[2]", "パン屋", cited, read, (-0.5, -0.1), "x")
    again = Evidence.from_json(evidence.to_json())
    assert read_signals(again) == pytest.approx(read_signals(evidence))
    assert _verifier().verify(evidence).to_json()["evidence"] == evidence.to_json()


def test_the_reason_says_a_signal_by_whether_it_was_high_or_low_not_by_its_push() -> None:
    # question_share weighs against the answer: low, it raises the confidence and is said as
    # "it says more than the question"; high, it lowers it and is said as a repetition
    calibration = Calibration(
        features=("question_share",), mean=(0.2,), scale=(0.2,), coef=(-2.0,),
        missing_coef=(0.0,), intercept=0.0, threshold=0.5,
    )  # fmt: skip
    verifier = Verifier(calibration, "embedded")
    new = verifier.verify(_evidence("パン屋は何をやった？", "りんごです。[1]", "りんご"))
    again = verifier.verify(_evidence("パン屋は何をやった？", "パン屋です。[1]", "パン屋"))
    assert new.confidence > 0.5 > again.confidence
    assert "it says more than the question" in new.reason
    assert "it repeats the question's own words" in again.reason
