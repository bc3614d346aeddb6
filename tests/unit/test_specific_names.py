"""qa/question/specific_names.py: which found names are ordinary words, not a story's own names."""

from __future__ import annotations

from storygraph.models import ResolvedEntity
from storygraph.qa.question.specific_names import common_names, is_ordinary_word


def test_a_japanese_common_noun_is_an_ordinary_word_a_proper_noun_or_compound_is_not() -> None:
    question = "親がにを殺したのは誰？"
    for word in ("親", "骨", "鬼", "名前", "おじいさん"):
        assert is_ordinary_word(word, word, question), word
    for name in ("金太郎", "桃太郎", "かぐや姫", "一寸法師", "鬼の大将"):
        assert not is_ordinary_word(name, name, question), name


def test_an_english_word_is_ordinary_unless_the_question_capitalises_it() -> None:
    assert is_ordinary_word("bone", "骨", "What did the dog find, a bone?")
    assert is_ordinary_word("hare", "Hare", "Who did the hare race?")
    # the finder folds its mentions to lower case: the question's spelling is read
    assert not is_ordinary_word("hare", "Hare", "Who did the Hare race?")
    assert not is_ordinary_word("momotaro", "Momotaro", "Where did Momotaro's old man go?")
    # a capital that opens the question says nothing: the graph's spelling is read instead
    assert is_ordinary_word("Fox", "fox", "Fox and crow: who sang?")
    assert not is_ordinary_word("Momotaro", "Momotaro", "Momotaro went where?")
    # a mention the question does not spell (a translation's): the graph's name is read
    assert is_ordinary_word("bone", "骨", "What did he carry home?")
    assert not is_ordinary_word("momotaro", "桃太郎", "Who carried it home?")


def test_the_names_found_as_ordinary_words_in_either_language_are_common() -> None:
    found = [
        ResolvedEntity("old man", "Old Man", "dictionary"),
        ResolvedEntity("momotaro", "Momotaro", "dictionary"),
        ResolvedEntity("鬼", "鬼", "dictionary"),
        ResolvedEntity("鬼", "鬼", "dictionary"),
        ResolvedEntity("桃太郎", "Momotaro", "translation"),
    ]
    question = "Did Momotaro's old man meet the 鬼?"
    assert common_names(question, found) == frozenset({"Old Man", "鬼"})


def test_a_story_capitalising_a_word_inside_a_sentence_writes_it_as_a_name() -> None:
    from storygraph.qa.question.specific_names import capitalised_words, named_in_stories

    text = "The Fox and the Grapes\n\nA FAMISHED FOX saw grapes. The Hare, laughing, ran."
    assert capitalised_words(text) == frozenset({"fox", "grape", "hare"})
    assert capitalised_words("A fox ate. The cheese was good.") == frozenset()
    names = [
        {"id": "fox", "document_id": "g"},
        {"id": "fox", "document_id": "c"},
        {"id": "old man", "document_id": "g"},
    ]
    capitals = {"g": capitalised_words(text), "c": frozenset()}
    assert named_in_stories({"fox", "old man"}, names, capitals) == {"g": frozenset({"fox"})}


def test_a_name_found_through_the_dictionary_is_read_by_the_question_word_it_translates() -> None:
    # "the old man" → 翁: Sudachi does not read 翁 as a common noun, and a library's scope took
    # it for 竹取物語's own name; the question writes "old man" small, an ordinary word
    question = "Who cut off the old man's tongue?"
    found = [ResolvedEntity("翁", "翁", "translation", 0.9)]
    assert common_names(question, found) == frozenset()  # by the graph's spelling
    assert common_names(question, found, {"翁": "old man"}) == {"翁"}
    # the same form found otherwise (a transliteration) is still read by its spelling
    found = [ResolvedEntity("翁", "翁", "transliteration")]
    assert common_names(question, found, {"翁": "old man"}) == frozenset()
