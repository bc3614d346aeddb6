"""The names index (storygraph.text.name_index): built once per names list, and the finder's
dictionary and word steps find through it what a walk over every name finds."""

from __future__ import annotations

from typing import Any

from storygraph.qa.question.entities import LocalEntityFinder, dictionary_match
from storygraph.text.name_index import name_index
from storygraph.text.normalize import normalize_name


def _names(ids: list[str]) -> list[dict[str, Any]]:
    return [{"id": i, "norm": normalize_name(i), "type": "Character"} for i in ids]


def _walk(question: str, names: list[dict[str, Any]]) -> set[str]:
    """Every name whose normalised form occurs in the normalised question (no boundaries)."""
    text = normalize_name(question)
    return {str(r["id"]) for r in names if r["norm"] and r["norm"] in text}


def test_the_index_is_built_once_per_names_list() -> None:
    names = _names(["桃太郎", "おばあさん"])
    assert name_index(names) is name_index(names)
    again = _names(["桃太郎", "おばあさん"])
    assert name_index(again) is not name_index(names)


def test_a_name_among_fifty_thousand_is_found_as_a_walk_finds_it() -> None:
    names = _names([f"Person {i:05d}" for i in range(50_000)] + ["Old Man", "Man"])
    for question in ("Who did Person 01234 meet?", "Where did the Old Man go?", "Who is it?"):
        found = {e.node_id for e in dictionary_match(question, names)}
        walked = _walk(question, names)
        # the dictionary keeps the longest of nested names at one place (Man inside Old Man)
        longest = {n for n in walked if not any(n != o and n in o for o in walked)}
        assert found == longest


def test_the_longer_of_two_nested_japanese_names_wins() -> None:
    names = _names(["鬼", "鬼ヶ島", "桃太郎"])
    assert [e.node_id for e in dictionary_match("桃太郎は鬼ヶ島へ行った？", names)] == [
        "桃太郎",
        "鬼ヶ島",
    ]


def test_an_english_question_finds_a_japanese_name_by_its_reading_among_many() -> None:
    names = _names([f"人物{i:05d}" for i in range(2_000)] + ["桃太郎", "old man"])
    found = LocalEntityFinder(None).find("What did Momotaro give the old man?", names, [])
    how = {e.node_id: e.source for e in found.entities}
    assert how == {"桃太郎": "transliteration", "old man": "dictionary"}


def test_a_romanised_name_is_found_however_english_text_joins_its_parts() -> None:
    """The class: a Japanese name written in Latin letters the way English prose writes it, its
    parts joined by a hyphen or apart, or with a possessive; its reading has none of them."""
    names = _names(["桃太郎", "かぐや姫", "金太郎"])
    finder = LocalEntityFinder(None)
    for question, wanted in (
        ("Where did Kaguya-hime say she came from?", "かぐや姫"),
        ("Where did Kaguya hime say she came from?", "かぐや姫"),
        ("What did Kaguya-hime's father find?", "かぐや姫"),
        ("Who raised Momo-taro?", "桃太郎"),
        ("What did Kin-taro carry?", "金太郎"),
    ):
        found = {e.node_id: e.source for e in finder.find(question, names, []).entities}
        assert found == {wanted: "transliteration"}, question


def test_a_compound_name_is_found_by_the_sound_changes_english_spelling_keeps() -> None:
    """The class: a kanji compound Sudachi reads token by token (一 + 寸 + 法師: ichisunhoshi,
    猿 + 蟹: sarukani) while English prose spells it as it is said, with gemination (issun,
    ippiki) or rendaku (boshi, gani), and Hepburn's long-vowel marks (ō, â)."""
    names = _names(["一寸法師", "猿蟹", "一匹狼", "桃太郎", "天狗"])
    finder = LocalEntityFinder(None)
    for question, wanted in (
        ("What did Issun-boshi use as his sword?", "一寸法師"),
        ("Who was Issunbōshi's wife?", "一寸法師"),
        ("Who did Ichisunhoshi meet?", "一寸法師"),  # the plain reading still finds it
        ("Where did the Saru-gani fight?", "猿蟹"),
        ("Who did Momotarō defeat?", "桃太郎"),
        ("Where did the Tengû live?", "天狗"),
    ):
        found = {e.node_id for e in finder.find(question, names, []).entities}
        assert found == {wanted}, question
    for question in ("Did the issue of shipping boss him?", "Who saw the ripe persimmons?"):
        assert finder.find(question, names, []).entities == [], question


def _resolve_by_walk(mention: str, names: list[dict[str, Any]]) -> str | None:
    """resolve_name's rule spelled as a walk over every name (the reference)."""
    from rapidfuzz import fuzz, process

    from storygraph.text.name_index import FUZZY_THRESHOLD, MIN_CONTAINS_CHARS

    for row in names:
        if row["id"] == mention:
            return str(row["id"])
    norm = normalize_name(mention)
    if not norm:
        return None
    for row in names:
        if row["norm"] == norm:
            return str(row["id"])
    if len(norm) >= MIN_CONTAINS_CHARS:
        contained = [
            r for r in names
            if len(r["norm"]) >= MIN_CONTAINS_CHARS and (r["norm"] in norm or norm in r["norm"])
        ]  # fmt: skip
        if contained:
            return str(min(contained, key=lambda r: abs(len(r["norm"]) - len(norm)))["id"])
    choices = {r["id"]: r["norm"] for r in names}
    match = process.extractOne(norm, choices, scorer=fuzz.ratio, score_cutoff=FUZZY_THRESHOLD)
    return str(match[2]) if match else None


def test_a_mention_resolves_through_the_index_as_a_walk_resolves_it() -> None:
    from storygraph.text.name_index import resolve_name

    ids = [f"人物{i:05d}" for i in range(5_000)] + ["鬼", "鬼の大将", "old man", "Old Man's dog"]
    names = _names(ids)
    mentions = ["人物01234", "人物0123の4", "人物0123", "鬼の大将さま", "大将", "the old man", "鬼",
                "old  man", "OLD MAN", "dog", "人物9999", "nobody at all", ""]  # fmt: skip
    for mention in mentions:
        found = resolve_name(mention, names)
        assert (found.node_id if found else None) == _resolve_by_walk(mention, names), mention


def _state(index: Any) -> tuple[Any, ...]:
    from storygraph.qa.question.entities import _romaji_readings, _sound_key
    from storygraph.text.terms import name_words as _content_words

    return (
        index.ids, index.norms, index.by_norm, index.longest, index.first_by_id,
        index.first_by_norm, index.word_tables(_romaji_readings, _content_words),
        index.sound_table(_sound_key),
        [list(index.holding(part)) for part in ("桃", "人物0001", "old", "man")],
    )  # fmt: skip


def _fields(index: Any) -> Any:
    import copy

    return copy.deepcopy(
        (index.ids, index.norms, index.by_norm, index.longest, index.first_by_id,
         index.first_by_norm, index._words, index._sounds)
    )  # fmt: skip


def test_names_with_rows_added_at_the_end_extend_the_last_index_as_a_build_would() -> None:
    """Another session's document read alone gives the last list plus its rows: the index is
    extended (the last one left as it was), and equals one built from nothing."""
    from storygraph.qa.question.entities import _romaji_readings, _sound_key
    from storygraph.text.terms import name_words as _content_words

    base = _names([f"人物{i:05d}" for i in range(300)] + ["桃太郎", "old man", "鬼", "トック"])
    added = _names(["桃太郎", "Old Man", "ももたろう", "人物00010", "犬", "old dog", "Momo"])
    added += _names(["トック", "ドラバック"])
    for words_first in (True, False):
        expected = _state(name_index([dict(row) for row in [*base, *added]]))  # from nothing
        names = list(base)
        last = name_index(names)
        if words_first:
            last.word_tables(_romaji_readings, _content_words)
            last.sound_table(_sound_key)
        before = _fields(last)
        grown = [*names, *added]
        extended = name_index(grown)
        assert extended is not last
        assert (extended._base_words is not None) == words_first
        assert (extended._base_sounds is not None) == words_first
        assert _state(extended) == expected
        assert _fields(last) == before  # the last index, still used by other questions, kept
        assert name_index(grown) is extended


def test_a_romanised_name_is_read_back_as_the_question_writes_it() -> None:
    """The twin of the finder's reading (storygraph.qa.question.checked): the check reads a
    transliterated participant by the question's own spelling of it, hyphen and all."""
    from storygraph.models import ResolvedEntity
    from storygraph.qa.question.analysis import QuestionAnalysis
    from storygraph.qa.question.checked import _written_as
    from storygraph.qa.question.question_type import detect_question_type

    for question, written in (
        ("Where did Kaguya-hime say she came from?", "Kaguya-hime"),
        ("Where did Kaguya hime say she came from?", "Kaguya hime"),
        ("Where did Kaguyahime say she came from?", "Kaguyahime"),
        ("Where did Kaguya-hímé say she came from?", "Kaguya-hímé"),
    ):
        analysis = QuestionAnalysis(
            question=question,
            language="en",
            entities=(ResolvedEntity("kaguyahime", "かぐや姫", "transliteration"),),
            qtype=detect_question_type(question, [], language="en"),
            stems=frozenset(),
            related=frozenset(),
            terms=(),
        )
        assert _written_as(analysis, "kaguyahime", "transliteration") == written


def test_a_name_in_latin_letters_counts_only_as_whole_words() -> None:
    """The class: an English name found inside a longer word of the question ("son" in
    "season", "ass" in "passed", "M" in "them", "I" in "is") started retrieval from a node
    nobody asked about; a plural or a possessive after a name still finds it."""
    names = _names(["son", "ass", "M", "I", "fox", "Hare", "King", "Old Man", "Tok"])

    def found(question: str) -> list[str]:
        return [e.node_id for e in dictionary_match(question, names)]

    assert found("In what season did the story begin?") == []
    assert found("Who passed the glass to them?") == []
    assert found("Who is the King's son?") == ["King", "son"]
    assert found("What did the foxes eat?") == ["fox"]
    assert found("What did the Hare's friend say?") == ["Hare"]
    assert found("Who were the Kings?") == ["King"]
    assert found("What did I say to the Old Man?") == ["I", "Old Man"]
    assert found("トックはTokと言った？") == ["Tok"]  # Japanese letters beside it are no Latin word
