"""qa/question/story_titles.py: the stories a question names by their document's name."""

from __future__ import annotations

from storygraph.qa.question.story_titles import title_words, titled

DOCUMENTS = {
    "a": "momotaro_akutagawa.txt",
    "k": "momotaro_kusuyama.txt",
    "u": "urashimataro_kusuyama.txt",
    "g": "aesop__the_fox_and_the_grapes.txt",
    "h": "aesop__the_hare_and_the_tortoise.txt",
    "t": "taketori_monogatari_wada.txt",
    "s": "sarukani_kusuyama.txt",
}


def test_a_document_name_gives_its_words_stop_words_and_story_words_left_out() -> None:
    assert title_words("aesop__the_fox_and_the_grapes.txt") == ("aesop", "fox", "grape")
    assert title_words("japanese__momotaro-story-of-son-of-peach.txt") == (
        "japanese", "momotaro", "son", "peach",
    )  # fmt: skip
    assert title_words("hanasaka_jijii_kusuyama.txt") == ("hanasaka", "jiji", "kusuyama")


def test_an_author_named_in_english_or_by_a_kanji_reading_names_the_document() -> None:
    assert titled("In Akutagawa's story, who did Momotaro fight?", DOCUMENTS) == {
        "a": 2, "k": 1,
    }  # fmt: skip
    assert titled("芥川の「桃太郎」で、お婆さんの名前は？", DOCUMENTS) == {"a": 2, "k": 1}


def test_words_joined_match_a_long_title_word_never_a_part_of_one() -> None:
    assert titled("浦島太郎が住んでいたのはどこ？", DOCUMENTS) == {"u": 1}  # 浦島|太郎
    assert titled("猿かに合戦で柿を投げたのは？", DOCUMENTS) == {"s": 1}  # 猿|か|に
    assert titled("Who lived in Urashima Taro's village?", DOCUMENTS) == {"u": 1}
    assert titled("What did the foxes see?", DOCUMENTS) == {"g": 1}  # plural folded
    assert titled("Who ran faster, the foxhound?", DOCUMENTS) == {}  # not a part of a word


def test_a_word_for_the_story_itself_names_no_title() -> None:
    assert titled("この物語でおじいさんは何をした？", DOCUMENTS) == {}
    assert titled("Who won the race in this story?", DOCUMENTS) == {}
    assert titled("Who won the race?", {}) == {}
