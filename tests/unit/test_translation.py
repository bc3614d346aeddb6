"""A question in another language than its stories, brought into theirs
(storygraph.qa.question.translation):
the dictionary path on the real JMdict and the real English tagger, the model path with the
scripted model at the model boundary, and how the analysis uses either."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from storygraph.qa.question.analysis import analyse, translation_target
from storygraph.qa.question.entities import LocalEntityFinder
from storygraph.qa.question.translation import (
    NO_TRANSLATOR,
    DictionaryTranslator,
    FirstDictionaryTranslator,
    ModelTranslator,
    NoTranslation,
    Translation,
    conjugation_stems,
    translator_for,
)
from storygraph.qa.retrieval.passages import widen_single_kanji
from storygraph.text.jmdict import open_dictionary
from storygraph.text.terms import passage_terms
from tests.helpers.scripted_logic import Script
from tests.helpers.scripted_model import ScriptedChatModel

NAMES: list[dict[str, Any]] = [
    {"id": name, "norm": name, "type": "Character"} for name in ("猿", "かに", "たぬき", "桃太郎")
]
QUESTION = "What did the monkey throw at the crab's head?"


@pytest.fixture(scope="module")
def dictionary() -> DictionaryTranslator:
    found = open_dictionary()
    assert found is not None, "jamdict-data (requirements.txt) is not installed"
    return DictionaryTranslator(found)


def _forms(translation: Translation, source: str) -> Sequence[str]:
    return next(w.forms for w in translation.words if w.source == source)


def test_the_dictionary_translates_an_english_question_word_by_word(
    dictionary: DictionaryTranslator,
) -> None:
    translation = dictionary.translate(QUESTION, "en", "ja", [])
    assert translation is not None
    assert translation.method == "dictionary (JMdict)" and translation.language == "ja"
    assert "猿" in _forms(translation, "monkey")
    assert {"蟹", "かに"} <= set(_forms(translation, "crab"))
    # the verb looked up as "to throw", searched as the stems its conjugations show
    assert "投げる" in _forms(translation, "throw")
    assert "投げ" in translation.search_text.split()
    # two words that JMdict glosses as one phrase are one word
    racoon = dictionary.translate("What did the raccoon dog hit?", "en", "ja", [])
    assert racoon is not None and "たぬき" in _forms(racoon, "raccoon dog")
    assert "raccoon" not in {w.source for w in racoon.words}


def test_a_lower_case_word_the_tagger_calls_a_name_is_still_looked_up(
    dictionary: DictionaryTranslator,
) -> None:
    # spaCy's small English model tags "sparrow" and "lick" here as proper nouns
    translation = dictionary.translate("What did the sparrow lick up?", "en", "ja", [])
    assert translation is not None
    assert "雀" in _forms(translation, "sparrow")
    assert any("舐" in form or "嘗" in form for form in _forms(translation, "lick"))


def test_the_dictionary_translates_a_japanese_question_into_english(
    dictionary: DictionaryTranslator,
) -> None:
    translation = dictionary.translate("桃太郎は犬に何を投げましたか？", "ja", "en", [])
    assert translation is not None and translation.language == "en"
    assert "dog" in _forms(translation, "犬")
    assert "throw" in _forms(translation, "投げる")


def test_names_and_words_jmdict_lacks_are_left_out_and_said() -> None:
    assert conjugation_stems("沈む", "godan") == [
        "沈む",
        "沈ま",
        "沈み",
        "沈む",
        "沈め",
        "沈も",
        "沈ん",
    ]
    assert conjugation_stems("投げる", "ichidan") == ["投げる", "投げ"]
    assert conjugation_stems("猿", "") == ["猿"]


def test_the_model_translates_in_one_call() -> None:
    model = ScriptedChatModel(script=Script(translations={QUESTION: "猿はかにの頭に何を投げた？"}))
    translation = ModelTranslator(model).translate(QUESTION, "en", "ja", [])
    assert model.calls == ["answer"]  # one call without tools
    assert translation is not None and translation.method == "model"
    assert translation.text == "猿はかにの頭に何を投げた？"
    assert "投げ" in passage_terms(translation.search_text, "ja")
    # the graph names in the model's sentence are start entities, found by "translation"
    analysis = analyse(
        QUESTION,
        NAMES,
        LocalEntityFinder(),
        [],
        story_languages=["ja"],
        translator=ModelTranslator(model),
    )
    how = {e.node_id: e.source for e in analysis.entities}
    assert how.get("猿") == "translation" and how.get("かに") == "translation"


def test_dictionary_then_model_calls_the_model_only_for_a_word_jmdict_lacks(
    dictionary: DictionaryTranslator,
) -> None:
    script = Script(translations={"What did the zorblax throw?": "ゾルブラックスは何を投げた？"})
    model = ScriptedChatModel(script=script)
    both = FirstDictionaryTranslator(dictionary, ModelTranslator(model))
    found = both.translate(QUESTION, "en", "ja", [])
    assert model.calls == [] and found is not None and found.method == "dictionary (JMdict)"
    found = both.translate("What did the zorblax throw?", "en", "ja", [])
    assert model.calls == ["answer"]
    assert found is not None and found.missed == ("zorblax",)
    assert found.method == "dictionary (JMdict), then model"
    # the dictionary's words are kept beside the model's sentence
    assert "ゾルブラックスは何を投げた？" in found.search_text
    assert [w.source for w in found.words] == ["throw"]


def test_the_analysis_translates_only_for_a_story_in_another_language(
    dictionary: DictionaryTranslator,
) -> None:
    assert translation_target("en", ["ja"]) == "ja"
    assert translation_target("en", ["en", ""]) is None
    assert translation_target("ja", ["en", "en"]) == "en"
    # a library of both languages: searched as asked (its own language's stories first)
    assert translation_target("ja", ["ja", "en"]) is None
    assert translation_target("en", []) is None
    finder = LocalEntityFinder()
    same = analyse(QUESTION, NAMES, finder, [], story_languages=["en"], translator=dictionary)
    assert same.translation is None
    across = analyse(QUESTION, NAMES, finder, [], story_languages=["ja"], translator=dictionary)
    assert across.translation is not None
    assert across.question == QUESTION and across.reply_language == "en"
    # the translated nouns that are graph names are start entities, found by "translation"
    how = {e.node_id: e.source for e in across.entities}
    assert how.get("猿") == "translation" and how.get("かに") == "translation"
    # sentence search's Japanese query holds the translation's terms; the English one does not
    assert "投げ" in across.index_terms("ja") and "投げ" not in across.index_terms("en")
    assert "投げ" not in same.index_terms("ja")


def test_no_translator_and_a_failed_model_are_named_fallbacks() -> None:
    finder = LocalEntityFinder()
    missing = analyse(QUESTION, NAMES, finder, [], story_languages=["ja"], translator=None)
    assert missing.translation is None and NO_TRANSLATOR in missing.warnings
    off = analyse(QUESTION, NAMES, finder, [], story_languages=["ja"], translator=NoTranslation())
    assert off.translation is None and not off.warnings
    failing = ScriptedChatModel(faults={"answer": TimeoutError("slow")})
    analysis = analyse(
        QUESTION, NAMES, finder, [], story_languages=["ja"], translator=ModelTranslator(failing)
    )
    assert analysis.translation is None
    assert any("translation (model) failed (TimeoutError" in w for w in analysis.warnings)


def test_the_setting_picks_the_translator() -> None:
    model = ScriptedChatModel()
    assert isinstance(translator_for("dictionary", model), DictionaryTranslator)
    assert isinstance(translator_for("model", model), ModelTranslator)
    assert translator_for("model", None) is None
    assert isinstance(translator_for("dictionary+model", model), FirstDictionaryTranslator)
    assert isinstance(translator_for("dictionary+model", None), DictionaryTranslator)
    assert isinstance(translator_for("off", model), NoTranslation)


def test_a_single_kanji_is_searched_as_the_story_bigrams_that_hold_it() -> None:
    from collections import Counter

    frequency = Counter({"の頭": 2, "頭を": 1, "投げ": 3, "猿が": 1})
    assert widen_single_kanji(["頭", "投げ", "な"], frequency) == ["の頭", "頭を", "投げ", "な"]
