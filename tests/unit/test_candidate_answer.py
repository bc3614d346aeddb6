"""The candidate step (storygraph.qa.generation.candidate_answer) on the support check's real
frames (GiNZA):
after an answer the check did not confirm, or one that declined, the one candidate the frames put
in the asked slot is shown when the same check confirms it, marked as read from the sentence's
structure; the model's choice is held by a grammar to the candidates' names and "does not say"
(the real langchain-openai client against a scripted llama.cpp-like server: only the model's
words are scripted)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from storygraph.llm.factory import build_chat_model
from storygraph.llm.grammar import choice_grammar
from storygraph.models import Candidate, Citation, Support
from storygraph.qa.generation.answer import UNKNOWN
from storygraph.qa.generation.answer_choice import CHOICE_MAX_TOKENS
from storygraph.qa.generation.candidate_answer import (
    ChosenCandidate,
    SingleCandidate,
    candidate_step,
    offerable,
    picker_for,
    written_as_answer,
)
from storygraph.qa.question.analysis import analyse
from storygraph.qa.question.entities import LocalEntityFinder
from storygraph.qa.verify.support_text import support_line
from storygraph.settings import Settings
from tests.helpers.scripted_logic import Script
from tests.helpers.scripted_openai_server import RunningServer, start_in_thread
from tests.unit.test_support import BOW, FOLLOW, PINNED, RAISED, _names, _sources

MONKEY = "猿も、桃太郎のあとから、ついて行きました。"


def _analysis(question: str, entities: list[str]):
    return analyse(question, [], LocalEntityFinder(), [], start_entities=entities)


def _step(picker, question: str, entities: list[str], answer: str, sources: list[Citation]):
    analysis = _analysis(question, entities)
    checker = _names(["桃太郎", "犬", "猿", "きじ", "鬼", "鬼の大将", "おじいさん", "おばあさん"])
    support = checker.check(analysis, answer, sources, [], sources)
    picked = candidate_step(picker, checker, analysis, support, sources, [], sources, [])
    return support, picked


def test_a_declined_role_answer_carries_the_slots_candidates() -> None:
    analysis = _analysis("桃太郎の家来は誰？", ["桃太郎"])
    checker = _names(["桃太郎", "犬", "おじいさん"])
    sources = _sources(RAISED, FOLLOW)
    support = checker.check(analysis, "わかりません。", sources, [], sources)
    assert support.verdict == "declined"
    assert [c.name for c in support.candidates] == ["犬"]
    assert support.candidates[0].source == 2


def test_the_one_candidate_is_shown_when_the_check_confirms_it_and_marked_so() -> None:
    support, picked = _step(
        SingleCandidate(), "桃太郎の家来は誰？", ["桃太郎"], "おじいさんです。[1]",
        _sources(RAISED, FOLLOW),
    )  # fmt: skip
    assert support.verdict == "not supported"  # the model's answer: the one who raised him
    assert picked is not None and picked.text == "犬です。[2]"
    assert picked.support is not None and picked.support.supported
    assert picked.support.answered_by == "structure"
    assert picked.detail["picked"] == "犬" and picked.detail["verdict"] == "supported"
    line = support_line(picked.support)
    assert line.startswith("supported (read from the sentence's structure;")
    assert FOLLOW in line  # the sentence it was read from
    # the model's own confirmed answer keeps the plain line
    assert support_line(Support("supported", 2, ("犬",), "犬 follows 桃太郎 in [2]")).startswith(
        "checked: "
    )


def test_a_declined_answer_gets_the_one_candidate_too() -> None:
    support, picked = _step(
        SingleCandidate(), "桃太郎の家来は誰？", ["桃太郎"], "わかりません。", _sources(FOLLOW)
    )
    assert support.verdict == "declined"
    assert picked is not None and picked.text == "犬です。[1]"


def test_two_candidates_are_not_read_as_one_and_other_verdicts_get_no_step() -> None:
    support, picked = _step(
        SingleCandidate(), "桃太郎の家来は誰？", ["桃太郎"], "おじいさんです。[1]",
        _sources(RAISED, FOLLOW, MONKEY),
    )  # fmt: skip
    analysis = _analysis("桃太郎の家来は誰？", ["桃太郎"])
    assert {c.name for c in offerable(analysis, support.candidates)} == {"犬", "猿"}
    assert picked is not None and picked.text is None and picked.detail["picked"] is None
    # a confirmed answer, and a question with no premise, are left as they are
    single = SingleCandidate()
    _, picked = _step(single, "桃太郎の家来は誰？", ["桃太郎"], "犬です。[1]", _sources(FOLLOW))
    assert picked is None
    _, picked = _step(single, "桃太郎を倒したのは誰？", ["桃太郎"], "猿です。[1]", _sources(BOW))
    assert picked is None


def test_only_frames_of_sentences_read_of_the_asked_kind_and_case_are_offered_once() -> None:
    who = _analysis("桃太郎の家来は誰？", ["桃太郎"])
    found = [
        Candidate("犬", None, "kept fact", "frame"),  # no sentence read
        Candidate("きじ", 1, "a fact's sentence", "fact"),  # the graph's extraction
        Candidate("猿", 2, MONKEY, "frame"),
        Candidate("猿", 3, MONKEY, "frame"),  # the same name again
        Candidate("鬼が島", 4, "…", "frame", kind="place"),  # a place for who
    ]
    assert [(c.name, c.source) for c in offerable(who, found)] == [("猿", 2)]
    where = _analysis("桃太郎はどこへ行った？", ["桃太郎"])
    places = [
        Candidate("犬", 1, "…", "frame", kind="character", locative=True),  # a person
        Candidate("家来", 2, "…", "frame"),  # not read from a place phrase
        Candidate("鬼が島", 3, "…", "frame", locative=True),
        Candidate("水がめの陰", 4, "…", "frame", kind="object", locative=True),  # a thing's place
    ]
    assert [c.name for c in offerable(where, places)] == ["鬼が島", "水がめの陰"]
    what = _analysis("桃太郎は何をもらった？", ["桃太郎"])
    things = [
        Candidate("山", 1, "…", "frame", locative=True),  # 山へ says where, not what
        Candidate("都", 2, "…", "frame", kind="place"),
        Candidate("きびだんご", 3, "…", "frame"),
    ]
    assert [c.name for c in offerable(what, things)] == ["きびだんご"]
    assert written_as_answer(found[2], "ja") == "猿です。[2]"
    assert written_as_answer(found[2], "en") == "猿. [2]"


@pytest.fixture
def server() -> Iterator[RunningServer]:
    script = Script(triples=(("猿", "Character", "FOLLOWS", "桃太郎", "Character"),))
    running = start_in_thread(script, llama_cpp=True)
    yield running
    running.stop()


def _chosen(server: RunningServer, single: bool = False) -> ChosenCandidate:
    settings = Settings(_env_file=None, llm_provider="embedded", llm_max_retries=0)  # type: ignore[call-arg]
    llm = build_chat_model(settings, embedded_base_url=server.base_url)
    assert llm is not None
    return ChosenCandidate(llm, single=single)


def test_the_models_choice_is_held_to_the_candidates_and_does_not_say(
    server: RunningServer,
) -> None:
    sources = _sources(RAISED, FOLLOW, MONKEY)
    support, picked = _step(
        _chosen(server), "桃太郎の家来は誰？", ["桃太郎"], "おじいさんです。[1]", sources
    )
    asked = _analysis("桃太郎の家来は誰？", ["桃太郎"])
    names = [c.name for c in offerable(asked, support.candidates)]
    body = server.requests[-1]
    assert body["grammar"] == choice_grammar([*names, UNKNOWN["ja"]])
    assert body["max_tokens"] == CHOICE_MAX_TOKENS
    assert f"Options: {' / '.join(names)}" in str(body["messages"])
    # the scripted model links 猿 to 桃太郎: its choice is shown, re-checked, marked as chosen
    assert picked is not None and picked.text == "猿です。[3]"
    assert picked.support is not None and picked.support.answered_by == "choice"
    assert support_line(picked.support).startswith("supported (chosen by the model")
    # nothing the script links: the model says the sentences do not say, and nothing is shown
    asked = len(server.requests)
    _, none = _step(
        _chosen(server), "鬼の大将を組みふせたのは誰？", ["鬼の大将"], "わかりません。",
        _sources(PINNED),
    )  # fmt: skip
    assert len(server.requests) == asked + 1
    assert none is not None and none.text is None and none.detail["picked"] is None


def test_both_takes_the_one_candidate_without_a_call(server: RunningServer) -> None:
    _, picked = _step(
        _chosen(server, single=True), "桃太郎の家来は誰？", ["桃太郎"], "おじいさんです。[1]",
        _sources(RAISED, FOLLOW),
    )  # fmt: skip
    assert server.requests == []
    assert picked is not None and picked.text == "犬です。[2]"
    assert picked.support is not None and picked.support.answered_by == "structure"


def test_the_modes_pickers() -> None:
    assert picker_for("off", None) is None
    assert isinstance(picker_for("single", None), SingleCandidate)
    assert picker_for("choice", None) is None  # no model to choose: named in the parts' warnings
    assert isinstance(picker_for("both", None), SingleCandidate)
