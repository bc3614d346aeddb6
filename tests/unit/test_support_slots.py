"""The support check's asked slot on a source's own parse (storygraph.qa.verify.support_slots, issue
#27, docs/ISSUES.md#support-slots), with real GiNZA and spaCy parses: each case was withheld by the
frames and facts alone (an oblique case, no participant the graph knows, a zero subject up a verb
chain, a participle, a pronoun), and a wrong answer in the same sentences stays unconfirmed."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from storygraph.ingest.frames.extractor import reader_for
from storygraph.models import Citation, Support
from storygraph.qa.question.analysis import analyse
from storygraph.qa.question.entities import LocalEntityFinder
from storygraph.qa.verify.support import GraphSupportChecker
from storygraph.services import question_structure, source_clauses
from storygraph.text.normalize import normalize_name


def _checker(
    graph: list[str], slots: bool, chunks: Callable[[str], str] | None = None
) -> GraphSupportChecker:
    rows = [{"id": n, "norm": normalize_name(n), "type": ""} for n in graph]
    finder = LocalEntityFinder()

    def named(text: str, language: str) -> list[tuple[str, str]]:
        return [(e.mention, e.node_id) for e in finder.find(text, rows, []).entities]

    return GraphSupportChecker(
        named,
        lambda text, language: reader_for(language)(text),
        None,
        chunks,
        question_structure,
        source_clauses if slots else None,
    )


def _both(
    question: str,
    graph: list[str],
    answer: str,
    texts: list[str],
    chunk: str = "",
) -> tuple[Support, Support]:
    """The check without the clauses (before docs/ISSUES.md#support-slots) and with them."""
    entities = [n for n in graph if n in question]
    analysis = analyse(question, [], LocalEntityFinder(), [], start_entities=entities)
    sources = [Citation(i, f"c{i}", "story", t) for i, t in enumerate(texts, start=1)]
    chunks = (lambda chunk_id: chunk) if chunk else None
    return tuple(  # type: ignore[return-value]
        _checker(graph, slots, chunks).check(analysis, answer, sources, [], sources)
        for slots in (False, True)
    )


def test_an_answer_in_the_question_words_oblique_case_is_supported_past_a_speech() -> None:
    # どこから: the から phrase of 流れる, whose sentence goes on after the source's speech
    source = "ある朝、川上から、赤い箱が一つ、「コトン、コトン。」"
    chunk = source + "\n\n　と流れて来ました。娘はそれを拾いました。"
    graph = ["箱", "娘", "川上", "川下"]
    before, after = _both("赤い箱はどこから流れて来た？", graph, "川上です。[1]", [source], chunk)
    assert before.verdict == "not supported", before.reason
    assert after.verdict == "supported", after.reason
    assert after.source == 1
    _, wrong = _both("赤い箱はどこから流れて来た？", graph, "川下です。[1]", [source], chunk)
    assert wrong.verdict != "supported", wrong.reason


def test_a_question_naming_no_one_of_the_graph_is_checked_by_its_predicates_own_slots() -> None:
    # 長者 is no node: the subject of 助ける with 長者 as its object still answers who
    source = "そのとき、きつねが村の長者を助けました。たぬきはそれを見ていました。"
    graph = ["きつね", "たぬき"]
    before, after = _both("村の長者を助けたのは誰？", graph, "きつねです。[1]", [source])
    assert before.verdict == "not supported", before.reason
    assert "names no one" in before.reason
    assert after.verdict == "supported", after.reason
    _, wrong = _both("村の長者を助けたのは誰？", graph, "たぬきです。[1]", [source])
    assert wrong.verdict != "supported", wrong.reason


def test_a_causers_zero_subject_is_read_up_the_verb_chain() -> None:
    # 作らせて has no subject of its own: 若殿 is the subject of the chain it hangs on
    source = "若殿は、町の職人を呼び寄せて、ひそかに鏡を作らせて、姫のところに持って行きました。"
    graph = ["若殿", "職人", "鏡", "姫"]
    question = "職人たちにこっそり鏡を作らせたのは誰？"
    before, after = _both(question, graph, "若殿です。[1]", [source])
    assert before.verdict == "not supported", before.reason
    assert after.verdict == "supported", after.reason
    _, wrong = _both(question, graph, "姫です。[1]", [source])
    assert wrong.verdict != "supported", wrong.reason


@pytest.mark.parametrize(
    ("question", "graph", "right", "wrong", "source"),
    [
        # a participle's subject is the noun it describes; "from" is a place preposition
        (
            "Where were the apples hanging?",
            ["bear", "apples", "branch"],
            "From a high branch. [1]",
            "From the bear. [1]",
            "A hungry bear saw some red apples hanging from a high branch.",
        ),
        # "You" stands for the Goat the source names; "in" says where
        (
            "Where did the Fox claim the Goat was sleeping?",
            ["fox", "goat", "barn", "field"],
            "In his barn. [1]",
            "In the field. [1]",
            'The Goat looked up from the field. Then said the Fox, "You sleep in my barn."',
        ),
    ],
)
def test_an_english_where_answer_is_read_in_the_asked_predicates_preposition(
    question: str, graph: list[str], right: str, wrong: str, source: str
) -> None:
    before, after = _both(question, graph, right, [source])
    assert before.verdict == "not supported", before.reason
    assert after.verdict == "supported", after.reason
    _, bad = _both(question, graph, wrong, [source])
    assert bad.verdict != "supported", bad.reason


def test_an_act_someone_is_asked_to_do_is_no_premise_the_story_must_hold() -> None:
    # こしらえておくよう頼んだ: the story need not tell that anyone made it, and おばあさん
    # (asked to) is the one who would make it, not the one made
    question = "おじいさんはおばあさんに何をこしらえておくよう頼んだ？"
    structure = question_structure(question, "ja")
    assert structure is not None and structure.requested
    at = question.index("おばあさん")
    assert structure.direction(at, at + len("おばあさん")) == "out"
    source = "おじいさんはおばあさんに、晩までにごちそうを用意しておいておくれと言いのこしました。"
    graph = ["おじいさん", "おばあさん", "ごちそう", "たぬき"]
    _, after = _both(question, graph, "たぬきです。[1]", [source])
    assert after.verdict == "not supported", after.reason


def test_a_topic_beside_the_clauses_own_subject_is_not_its_doer() -> None:
    # たぬきは … きつねが長者を助けたから: the が noun helps; the は topic only speaks
    source = "たぬきは、きつねが村の長者を助けたから、えらいものだと言いました。"
    graph = ["きつね", "たぬき"]
    _, right = _both("村の長者を助けたのは誰？", graph, "きつねです。[1]", [source])
    assert right.verdict == "supported", right.reason
    _, wrong = _both("村の長者を助けたのは誰？", graph, "たぬきです。[1]", [source])
    assert wrong.verdict != "supported", wrong.reason


def test_a_light_verb_is_read_with_its_noun() -> None:
    # 審判をした is 審判になった with the same noun; another act of the same sentence is not
    source = "はじめに犬と猫が走って、きつねが審判になりました。"
    graph = ["犬", "猫", "きつね"]
    question = "犬と猫の競走で審判をしたのは誰？"
    before, after = _both(question, graph, "きつねです。[1]", [source])
    assert before.verdict == "not supported", before.reason
    assert after.verdict == "supported", after.reason
    _, wrong = _both(question, graph, "猫です。[1]", [source])
    assert wrong.verdict != "supported", wrong.reason


def test_an_english_verb_with_its_noun_and_preposition_is_no_premise_of_the_verb_alone() -> None:
    # "make fun of" is one act (ridicule): no MAKE frame is no sign the story lacks it; since
    # the verb table's RIDICULES row holds the phrase (docs/ISSUES.md#support-quotes), "mocked" says
    # the act even without the clause reader, which claimed "no premise" before
    source = "A Crow one day mocked the Snail, who replied: I will beat you."
    graph = ["Crow", "Snail"]
    answer = "The short legs of the animal. [1]"
    before, after = _both("What did the Crow make fun of?", graph, answer, [source])
    assert before.verdict == "not supported", before.reason
    assert after.verdict == "not supported", after.reason


def test_a_partner_in_the_case_of_a_noun_the_verb_governs_fills_the_asked_slot() -> None:
    # 花子といっしょにくらす: 花子's と hangs on いっしょ, not on the verb
    # (docs/ISSUES.md#support-slots)
    source = "太郎は村の奥に生まれて、おばあさんの花子といっしょにくらしていました。"
    graph = ["太郎", "花子", "おばあさん", "村"]
    question = "太郎は山で誰といっしょにくらしていた？"
    _, after = _both(question, graph, "花子です。[1]", [source])
    assert after.verdict == "supported", after.reason
    assert "fills the asked slot" in after.reason
    _, wrong = _both(question, graph, "村です。[1]", [source])
    assert wrong.verdict != "supported", wrong.reason
