"""The premise check (storygraph.qa.verify.premise) on the parser's real frames (GiNZA, spaCy)
and hand-made facts: a question about an act the story tells of no one has no premise; an act
told by a frame, a fact, a converse act, or a sentence the parser may have misread has one."""

from __future__ import annotations

from collections.abc import Sequence

from storygraph.errors import ModelError
from storygraph.ingest.frames.extractor import reader_for
from storygraph.models import Citation, Fact
from storygraph.qa.question.analysis import QuestionAnalysis, analyse
from storygraph.qa.question.entities import LocalEntityFinder
from storygraph.qa.verify.premise import GraphPremiseChecker
from storygraph.qa.verify.support_reading import Frame
from storygraph.services import question_structure

BOW = "桃太郎がふり返ると、猿はていねいに、おじぎをして、たずねました。"
FOLLOW = "犬はきびだんごを一つもらって、桃太郎のあとから、ついて行きました。"
PINNED = "たたかっていた鬼の大将も、とうとう桃太郎に組みふせられてしまいました。"
SURRENDERED = "とうとう鬼の酋長は、命をとりとめた数人の鬼と、桃太郎の前に降参した。"


def _frames(text: str, language: str) -> Sequence[Frame]:
    return reader_for(language)(text)


def _sources(*texts: str) -> list[Citation]:
    return [Citation(i, f"c{i}", "story", t) for i, t in enumerate(texts, start=1)]


def _asked(question: str, entities: list[str]) -> QuestionAnalysis:
    return analyse(question, [], LocalEntityFinder(), [], start_entities=entities)


def _missing(
    question: str,
    entities: list[str],
    sources: list[Citation],
    facts: Sequence[Fact] = (),
    checker: GraphPremiseChecker | None = None,
) -> str | None:
    checker = checker or GraphPremiseChecker(_frames, questions=question_structure)
    return checker.missing(_asked(question, entities), sources, sources, facts)


def test_an_act_nobody_does_to_the_participant_has_no_premise() -> None:
    # nobody defeats 桃太郎: no frame of the sources, no fact around him has him as the object
    facts = [Fact("桃太郎", "DEFEATS", "鬼の大将", ["c3"], PINNED, kept=True)]
    why = _missing("桃太郎を倒したのは誰？", ["桃太郎"], _sources(BOW, FOLLOW, PINNED), facts)
    assert why is not None and "桃太郎" in why


def test_the_same_act_in_the_told_direction_has_its_premise() -> None:
    # 鬼の大将も桃太郎に組みふせられて: a passive frame, 桃太郎 the doer
    assert _missing("桃太郎が倒したのは誰？", ["桃太郎"], _sources(PINNED)) is None


def test_a_fact_alone_tells_the_act() -> None:
    facts = [Fact("犬", "FOLLOWS", "桃太郎", ["c1"], FOLLOW, kept=True)]
    silent = GraphPremiseChecker(lambda text, language: [])
    assert _missing("桃太郎について行ったのは誰？", ["桃太郎"], [], facts, silent) is None


def test_a_converse_act_is_read_with_its_ends_swapped() -> None:
    # 鬼の酋長は桃太郎の前に降参した: 桃太郎 defeated 鬼の酋長, nobody defeated 桃太郎
    sources = _sources(SURRENDERED)
    assert _missing("桃太郎を倒したのは誰？", ["桃太郎"], sources) is not None
    assert _missing("桃太郎が倒したのは誰？", ["桃太郎"], sources) is None


def test_no_premise_is_claimed_where_a_source_uses_the_verb_unparsed() -> None:
    """A source naming the participant with the question's verb, of which the parser read no
    frame: the parser may have missed it, so the premise is not denied."""
    silent = GraphPremiseChecker(lambda text, language: [])
    said = _sources("となりのじいさんは、白をくわでなぐり殺してしまいました。")
    other = _sources("白はおじいさんにとてもなついていました。")
    assert _missing("白を殺したのは誰？", ["白"], said, checker=silent) is None
    assert _missing("白を殺したのは誰？", ["白"], other, checker=silent) is not None


def test_a_question_asking_what_a_thing_is_claims_no_act() -> None:
    # 「玉手箱に入っていた…とは何だった？」 asks what a thing was; nobody need enter 玉手箱
    source = _sources("乙姫さまは浦島に玉手箱をおわたしになりました。")
    question = "玉手箱に入っていた「人間のいちばんだいじなたから」とは何だった？"
    assert _missing(question, ["玉手箱"], source) is None


def test_a_question_about_a_line_of_speech_is_not_checked() -> None:
    # a line is told by its quote, which the frames do not read as an act
    source = _sources("兎は狐に「明日はいっしょに遊ぼう。」と言いました。")
    assert _missing("狐は兎に何と言った？", ["狐", "兎"], source) is None


def test_a_partner_or_a_place_is_not_checked() -> None:
    # the parser reads too few relations of with whom and where to say that none exists
    source = _sources(BOW)
    assert _missing("桃太郎は誰と暮らしている？", ["桃太郎"], source) is None
    assert _missing("桃太郎はどこへ行った？", ["桃太郎"], source) is None


def test_english_acts_are_read_by_the_english_parser() -> None:
    sources = _sources("The Lion caught the Mouse.", "The Mouse freed the Lion from the net.")
    assert _missing("Who freed the Lion?", ["lion"], sources) is None
    assert _missing("Who freed the Mouse?", ["mouse"], sources) is not None


def test_without_the_parser_the_check_names_it_and_reads_the_facts() -> None:
    def broken(text: str, language: str) -> Sequence[Frame]:
        raise ModelError("no parser here")

    checker = GraphPremiseChecker(broken)
    facts = [Fact("犬", "FOLLOWS", "桃太郎", ["c1"], FOLLOW, kept=True)]
    sources = _sources(FOLLOW)
    assert _missing("桃太郎について行ったのは誰？", ["桃太郎"], sources, facts, checker) is None
    assert "no parser here" in checker.problem


def test_a_source_is_read_with_the_topic_its_paragraph_carries() -> None:
    # the source has no subject of its own: 犬 is the paragraph's topic, as at ingest
    story = "犬はきびだんごを一つもらいました。そして、桃太郎のあとから、ついて行きました。"
    source = [Citation(1, "c1", "story", "そして、桃太郎のあとから、ついて行きました。")]
    question = "犬は誰について行った？"
    alone = GraphPremiseChecker(_frames)
    told = GraphPremiseChecker(_frames, {"c1": story}.get)
    assert _missing(question, ["犬"], source, checker=alone) is not None
    assert _missing(question, ["犬"], source, checker=told) is None
