"""qa/scope/scope.py: which stories a question's names keep, and the stories a user names."""

from __future__ import annotations

import pytest

from storygraph.errors import InputError
from storygraph.models import DocumentInfo
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.scope.scope import MAX_STORIES, Scope, names_in_scope, narrow, story_ids

NAMES = [
    {"id": "おじいさん", "key": "m:おじいさん", "document_id": "m", "twins": []},
    {"id": "おじいさん", "key": "h:おじいさん", "document_id": "h", "twins": []},
    {"id": "桃太郎", "key": "m:桃太郎", "document_id": "m", "twins": ["e:Momotaro"]},
    {"id": "Momotaro", "key": "e:Momotaro", "document_id": "e", "twins": ["m:桃太郎"]},
    {"id": "ポチ", "key": "h:ポチ", "document_id": "h", "twins": []},
]


def test_a_name_only_one_story_has_keeps_that_story() -> None:
    scope = narrow(["桃太郎", "おじいさん"], NAMES, ())
    assert scope.documents == ("m", "e")  # the linked twin's story comes along
    assert scope.keys == ("m:おじいさん", "m:桃太郎", "e:Momotaro")
    assert "1 of the 2 stories" in scope.note


def test_a_shared_name_alone_keeps_every_story_that_has_it() -> None:
    scope = narrow(["おじいさん"], NAMES, ())
    assert scope.documents == ("h", "m") and set(scope.keys) == {"m:おじいさん", "h:おじいさん"}
    assert "2 stories" in scope.note


def test_the_users_choice_bounds_names_and_twins() -> None:
    chosen = names_in_scope(NAMES, ["m"])
    assert {r["key"] for r in chosen} == {"m:おじいさん", "m:桃太郎"}
    scope = narrow(["桃太郎"], chosen, ["m"])
    assert scope.keys == ("m:桃太郎",) and scope.documents == ("m",)


def test_no_names_keeps_the_users_choice() -> None:
    assert narrow([], NAMES, ["h"]).documents == ("h",)
    assert narrow([], NAMES, ()).documents == ()


def test_stories_are_named_by_file_name_stem_or_id() -> None:
    docs = [
        DocumentInfo(id="abc", name="momotaro.txt", sha256="", language="ja", chars=1),
        DocumentInfo(id="def", name="hanasaka.txt", sha256="", language="ja", chars=1),
    ]
    assert story_ids(["momotaro", "def", "momotaro.txt"], docs) == ("abc", "def")
    with pytest.raises(InputError, match="no story called 'kobutori'"):
        story_ids(["kobutori"], docs)


def test_stories_that_tie_are_all_kept_the_one_whose_names_hold_the_words_first() -> None:
    names = [*NAMES, {"id": "灰", "norm": "灰", "key": "m:灰", "document_id": "m", "twins": []}]
    names = [{**r, "norm": r.get("norm", r["id"])} for r in names]
    scope = narrow(["おじいさん"], names, (), terms=("灰",))
    assert scope.tied == ("m", "h") and scope.documents == ("m", "h")  # m holds 灰: first
    assert narrow(["おじいさん"], names, (), terms=("金",)).tied == ("h", "m")  # by id


def test_of_more_stories_than_an_answer_takes_those_holding_the_words_are_kept() -> None:
    rows = [
        {"id": "おじいさん", "norm": "おじいさん", "key": f"{d}:おじいさん", "document_id": d}
        for d in "abcde"
    ]
    rows.append({"id": "灰", "norm": "灰", "key": "e:灰", "document_id": "e"})
    scope = narrow(["おじいさん"], rows, (), terms=("灰",))
    assert scope.tied == ("e", "a") and len(scope.tied) == MAX_STORIES == 2
    assert "5 stories have its names; the answer is written for 2" in scope.note


def test_every_story_in_scope_keeps_the_names_list_itself() -> None:
    # the name index is cached by the list's identity: a copy rebuilt it every question
    assert names_in_scope(NAMES, ()) is NAMES


KINTARO = [
    {"id": "金太郎", "key": "k:金太郎", "document_id": "k"},
    {"id": "鬼", "key": "i:鬼", "document_id": "i"},
    {"id": "名前", "key": "i:名前", "document_id": "i"},
    {"id": "親", "key": "t:親", "document_id": "t"},
]


def test_a_proper_name_outweighs_ordinary_words_another_story_holds_more_of() -> None:
    # 「金太郎が退治した鬼の名前は？」: i holds 鬼 and 名前, k only 金太郎
    found = ["金太郎", "鬼", "名前"]
    assert narrow(found, KINTARO, ()).documents == ("i",)  # counted alike: the most names
    scope = narrow(found, KINTARO, (), common={"鬼", "名前"})
    assert scope.documents == ("k",) and not scope.undecided
    assert scope.keys == ("k:金太郎",)


def test_ordinary_words_alone_decide_but_leave_the_scope_undecided() -> None:
    # 「親がにを殺したのは誰？」: 親 is an entity of another story's graph only
    scope = narrow(["親"], KINTARO, (), common={"親"})
    assert scope.documents == ("t",) and scope.keys == ("t:親",)
    assert scope.undecided and "ordinary words" in scope.note
    assert not narrow(["親"], KINTARO, ()).undecided  # a proper name would settle it
    assert narrow([], KINTARO, ()).undecided  # so is a question naming no one
    # the user's one chosen story settles it
    assert not narrow(["親"], KINTARO, ["t"], common={"親"}).undecided
    assert not narrow([], KINTARO, ["t"]).undecided


def test_stories_a_proper_name_ties_are_ordered_not_dropped_by_ordinary_words() -> None:
    # 「桃太郎のおじいさん」 when two stories hold 桃太郎 and only one of them おじいさん
    names = [
        {"id": "桃太郎", "norm": "桃太郎", "key": "a:桃太郎", "document_id": "a"},
        {"id": "桃太郎", "norm": "桃太郎", "key": "m:桃太郎", "document_id": "m"},
        {"id": "おじいさん", "norm": "おじいさん", "key": "m:おじいさん", "document_id": "m"},
        {"id": "おじいさん", "norm": "おじいさん", "key": "h:おじいさん", "document_id": "h"},
    ]
    scope = narrow(["桃太郎", "おじいさん"], names, (), common={"おじいさん"})
    assert scope.tied == ("m", "a") and not scope.undecided  # m holds both: first
    assert narrow(["桃太郎", "おじいさん"], names, ()).documents == ("m",)  # counted alike


def test_a_story_named_by_its_title_counts_as_one_of_its_proper_names() -> None:
    # 「芥川の「桃太郎」で…」: both stories hold 桃太郎; the title's 芥川 names a only
    names = [
        {"id": "桃太郎", "norm": "桃太郎", "key": "a:桃太郎", "document_id": "a"},
        {"id": "桃太郎", "norm": "桃太郎", "key": "m:桃太郎", "document_id": "m"},
    ]
    assert narrow(["桃太郎"], names, ()).tied == ("a", "m")
    scope = narrow(["桃太郎"], names, (), titled={"a": 2, "m": 1})
    assert scope.documents == ("a",) and scope.keys == ("a:桃太郎",) and not scope.tied
    # an ordinary word two stories hold ("the fox"), the title naming one: decided
    foxes = [
        {"id": "fox", "norm": "fox", "key": "g:fox", "document_id": "g"},
        {"id": "fox", "norm": "fox", "key": "h:fox", "document_id": "h"},
    ]
    scope = narrow(["fox"], foxes, (), common={"fox"}, titled={"g": 1})
    assert scope.documents == ("g",) and not scope.undecided
    # no name found at all: the title alone decides, with no start entity
    scope = narrow([], foxes, (), titled={"h": 1})
    assert scope.documents == ("h",) and scope.keys == () and not scope.undecided
    # a title outside the user's choice names nothing
    assert narrow([], foxes, ["g"], titled={"h": 1}).documents == ("g",)


def test_tellings_of_the_tale_the_question_names_by_title_are_answered_together() -> None:
    # 「桃太郎が組みふせたのは誰？」: both stories hold 桃太郎, and both names hold its title word
    names = [
        {"id": "桃太郎", "norm": "桃太郎", "key": "a:桃太郎", "document_id": "a"},
        {"id": "桃太郎", "norm": "桃太郎", "key": "m:桃太郎", "document_id": "m"},
        {"id": "鬼が島", "norm": "鬼が島", "key": "a:鬼が島", "document_id": "a"},
        {"id": "鬼が島", "norm": "鬼が島", "key": "m:鬼が島", "document_id": "m"},
    ]
    scope = narrow(["桃太郎"], names, (), titled={"a": 1, "m": 1})
    assert scope.tellings == ("a", "m") and not scope.tied and not scope.undecided
    assert set(scope.documents) == {"a", "m"} and set(scope.keys) == {"a:桃太郎", "m:桃太郎"}
    # a proper name both hold that no title word names (鬼が島): a tie, answered per story
    scope = narrow(["鬼が島"], names, ())
    assert scope.tied == ("a", "m") and not scope.tellings
    # a title naming one telling more (「芥川の「桃太郎」」): that one, alone
    scope = narrow(["桃太郎"], names, (), titled={"a": 2, "m": 1})
    assert scope.documents == ("a",) and not scope.tellings


def test_stories_tied_by_ordinary_words_alone_are_marked_so() -> None:
    names = [
        {"id": "おじいさん", "norm": "おじいさん", "key": "a:おじいさん", "document_id": "a"},
        {"id": "おじいさん", "norm": "おじいさん", "key": "b:おじいさん", "document_id": "b"},
        {"id": "桃太郎", "norm": "桃太郎", "key": "a:桃太郎", "document_id": "a"},
        {"id": "桃太郎", "norm": "桃太郎", "key": "b:桃太郎", "document_id": "b"},
    ]
    assert narrow(["おじいさん"], names, (), common={"おじいさん"}).ordinary
    assert not narrow(["桃太郎"], names, (), common={"おじいさん"}).ordinary  # a proper name


def test_a_translation_is_kept_only_when_it_holds_the_question_to_the_same_stories() -> None:
    """A library of both languages (docs/ISSUES.md#crosslang-translation): the translated question
    is kept only when its scope is the one the question's own names gave; in the v22 library run
    "the old man" translated to 翁 turned a question tied between stories into one about 竹取物語
    alone, answered without its story's name."""
    from storygraph.qa.question.analysis import same_stories

    tied = Scope(tied=("a", "b"), undecided=False)
    assert same_stories(Scope(tied=("b", "a")), tied)
    assert not same_stories(Scope(documents=("b",)), tied)
    decided = Scope(keys=("k",), documents=("a",))
    assert same_stories(Scope(keys=("k", "k2"), documents=("a",)), decided)
    assert not same_stories(Scope(documents=("a",), undecided=True), decided)


def test_a_translation_read_for_some_stories_is_dropped_for_the_others() -> None:
    """A library of both languages: the translation is read for the other language's stories
    only (`translated_for`); a part about a story in the question's own language reads the
    question as asked."""
    from dataclasses import replace

    from storygraph.qa.question.analysis import for_stories
    from storygraph.qa.question.question_type import detect_question_type
    from storygraph.qa.question.translation import Translation

    plain = QuestionAnalysis(
        question="Who won?",
        language="en",
        entities=(),
        qtype=detect_question_type("Who won?", [], language="en"),
        stems=frozenset(),
        related=frozenset(),
        terms=(),
    )
    translated = replace(
        plain, translation=Translation("勝つ", "ja", "dictionary"), translated_for=("j",)
    )
    assert for_stories(translated, ("j",)) is translated
    assert for_stories(translated, ("j", "e")) is translated
    alone = for_stories(translated, ("e",))
    assert alone.translation is None and alone.translated_for == ()
    assert for_stories(plain, ("e",)) is plain  # a translation for every story stays
    everywhere = replace(plain, translation=Translation("勝つ", "ja", "dictionary"))
    assert for_stories(everywhere, ("e",)) is everywhere


def test_a_story_part_reads_only_the_names_its_own_graph_holds() -> None:
    """「正直なおじいさんとおばあさんの飼犬の名前は？」 ties stories by ordinary words; 名前 is
    an entity of one of them only. The part about a story without it starts from, and is
    checked against, that story's names alone (analysis.within); a story holding none of the
    question's names starts from none."""
    from storygraph.models import ResolvedEntity
    from storygraph.qa.question.analysis import within
    from storygraph.qa.question.question_type import detect_question_type
    from storygraph.qa.scope.per_story import story_scopes

    rows = [*NAMES, {"id": "名前", "key": "m:名前", "document_id": "m", "twins": []}]
    question = "おじいさんの犬の名前は？"
    found = ("おじいさん", "名前")
    analysis = QuestionAnalysis(
        question=question,
        language="ja",
        entities=tuple(ResolvedEntity(n, n, "dictionary") for n in found),
        qtype=detect_question_type(question, list(found), language="ja"),
        stems=frozenset(),
        related=frozenset(),
        terms=(),
        name_rows=rows,
        scope=Scope(
            keys=("m:おじいさん", "h:おじいさん", "m:名前"),
            documents=("h", "m"),
            tied=("h", "m"),
            ordinary=True,
        ),
    )
    parts = {s.documents[0]: within(analysis, s) for s in story_scopes(analysis.scope)}
    assert set(parts) == {"h", "m"}
    assert parts["m"].ids == ["おじいさん", "名前"]
    assert parts["h"].ids == ["おじいさん"]
    assert parts["h"].scope.keys == ("h:おじいさん",)
    assert within(analysis, Scope(documents=("e",))).entities == ()


def test_names_written_small_that_only_a_storys_capitals_made_its_own_are_marked_spelled() -> None:
    # "Why did the queen weep?": p writes "the Queen", q writes "the queen"
    names = [
        {"id": "queen", "norm": "queen", "key": "p:queen", "document_id": "p"},
        {"id": "queen", "norm": "queen", "key": "q:queen", "document_id": "q"},
        {"id": "Hans", "norm": "hans", "key": "p:Hans", "document_id": "p"},
    ]
    spelled = narrow(["queen"], names, (), common={"queen"}, named_in={"p": {"queen"}})
    assert spelled.documents == ("p",) and spelled.spelled and not spelled.undecided
    assert spelled.choice == ()  # every story of the user's choice may lead it
    picked = narrow(["queen"], names, ("p", "q"), common={"queen"}, named_in={"p": {"queen"}})
    assert picked.spelled and picked.choice == ("p", "q")
    # a name the question writes as one settles the story: nothing to lead
    proper = narrow(["queen", "Hans"], names, (), common={"queen"}, named_in={"p": {"queen"}})
    assert proper.documents == ("p",) and not proper.spelled
    assert not narrow(["queen"], names, ("p",), common={"queen"}, named_in={"p": {"queen"}}).spelled
    assert not narrow(["queen"], names, (), common={"queen"}).spelled  # undecided instead


def test_a_word_of_another_storys_title_does_not_settle_the_capitals_story() -> None:
    # "Why did the king weep?": p writes "the King" and "the Queen"; k is "The Story of King
    # Frost" (its file name holds "king"); q writes "the king" small. p keeps the question by
    # its capitals alone, so it is still `spelled`: every story's sentences may lead it
    names = [
        {"id": "king", "norm": "king", "key": f"{d}:king", "document_id": d} for d in "pkq"
    ] + [{"id": "queen", "norm": "queen", "key": "p:queen", "document_id": "p"}]
    capitals = {"p": {"king", "queen"}}
    got = narrow(["king", "queen"], names, (), common={"king", "queen"}, titled={"k": 1},
                 named_in=capitals)  # fmt: skip
    assert got.documents == ("p",) and got.spelled
    # the title's own story kept: its title word settles it, nothing to lead
    own = narrow(["king"], names, (), common={"king"}, titled={"k": 1})
    assert own.documents == ("k",) and not own.spelled
