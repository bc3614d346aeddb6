"""The English rendering of a Japanese answer (storygraph.qa.generation.answer_crosslang): the real
JMdict
(jamdict-data) and Sudachi, no model."""

from __future__ import annotations

import pytest

from storygraph.models import ResolvedEntity
from storygraph.qa.generation.answer_crosslang import SourcesLanguageAnswer
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.question_type import detect_question_type
from storygraph.qa.question.translation import DictionaryTranslator
from storygraph.text.jmdict import open_dictionary

NAMES = ("たぬき", "おばあさん", "桃太郎", "足柄山", "鬼")


@pytest.fixture(scope="module")
def hook() -> SourcesLanguageAnswer:
    dictionary = open_dictionary()
    assert dictionary is not None, "jamdict-data is pinned in requirements.txt"
    return SourcesLanguageAnswer(dictionary)


def _asked(question: str, *named: str) -> QuestionAnalysis:
    dictionary = open_dictionary()
    assert dictionary is not None
    translation = DictionaryTranslator(dictionary).translate(question, "en", "ja", [])
    entities = tuple(ResolvedEntity(n, n, "translation", 0.9) for n in named)
    return QuestionAnalysis(
        question=question,
        language="en",
        entities=entities,
        qtype=detect_question_type(question, list(named), language="en"),
        stems=frozenset(),
        related=frozenset(),
        terms=(),
        translation=translation,
        graph_names=NAMES,
    )


def test_a_one_word_answer_is_its_gloss_with_the_japanese_in_brackets(
    hook: SourcesLanguageAnswer,
) -> None:
    asked = _asked("What did the raccoon dog hit the old woman with?", "たぬき")
    assert hook.render(asked, "きねです。[2]").text == "Mallet (きね) [2]"


def test_the_questions_own_words_are_left_out_of_the_rendering(
    hook: SourcesLanguageAnswer,
) -> None:
    asked = _asked("What did the raccoon dog hit the old woman with?", "たぬき")
    shown = hook.render(asked, "たぬきはおばあさんの脳天からきねを打ち下ろしました。[3]")
    # たぬき is the question's participant, おばあさん its "old woman" (JMdict glosses it so)
    english = shown.text.split(" (")[0].lower()
    assert "mallet" in english and "raccoon" not in english and "woman" not in english
    assert shown.text.endswith("(たぬきはおばあさんの脳天からきねを打ち下ろしました) [3]")


def test_a_name_without_a_gloss_is_shown_by_its_reading(hook: SourcesLanguageAnswer) -> None:
    asked = _asked("On which mountain was Kintaro born?")
    shown = hook.render(asked, "足柄山です。[1]")
    assert shown.text == "Ashigarayama (足柄山) [1]"
    assert shown.words == ("足柄山 → Ashigarayama",)


def test_a_short_gloss_is_preferred_and_an_adjective_is_rendered(
    hook: SourcesLanguageAnswer,
) -> None:
    asked = _asked("What food did Momotaro take with him on his journey?", "桃太郎")
    assert hook.render(asked, "きびだんごです。[2]").text.startswith("Millet dumplings (")
    asked = _asked("Which of the two baskets did the old man take home from the sparrow?")
    assert hook.render(asked, "軽いつづらです。[1]").text.lower().startswith("light")


def test_an_answer_with_no_word_to_render_is_shown_as_written(
    hook: SourcesLanguageAnswer,
) -> None:
    asked = _asked("What did the raccoon dog hit the old woman with?", "たぬき")
    assert hook.render(asked, "たぬきです。[1]").text == "たぬき [1]"


def test_a_checked_sentence_is_shown_quoted_not_as_a_word_list(hook: SourcesLanguageAnswer) -> None:
    """A whole sentence of the story, rendered word by word, read as a list that said something
    else ("Cats and dogs, article, three" for 「桃太郎は犬と猿と、きじと…」): it is shown as the
    story's sentence, quoted, with its verdict and marks; a phrase is still rendered."""
    from storygraph.models import Citation, Support
    from storygraph.qa.generation.answer_crosslang import QUOTED
    from storygraph.qa.retrieval.context import Sources
    from storygraph.qa.verify.support_text import SupportStep

    asked = _asked("What food did Momotaro take with him on his journey?", "桃太郎")
    sentence = (
        "桃太郎は犬と猿と、きじと、これで三にんまで、いい家来ができたので、"
        "桃太郎はいよいよ勇み立って、またずんずん進んで行きますと、やがてひろい海ばたに出ました"
    )
    source = Citation(1, "c1", "momotaro.txt", sentence + "。", kind="sentence", language="ja")
    sources = Sources(citations=[source], read=[source])
    checked = SupportStep(Support("supported", source=1, reason="the answer quotes [1]"), "")
    written = f"{sentence}。[1]"
    shown = hook.shown(asked, SupportStep(checked.support, written), written, "llm", sources)
    assert shown.support.verdict == "supported"
    assert shown.text == f"{QUOTED}「{sentence}」 [1]", shown.text
    assert "Cats" not in shown.text and not shown.warnings
    assert shown.detail["answer_in_sources_language"] == written
    assert "quoted" in shown.detail["shown_as"]
    phrase = "きびだんごです。[1]"
    kept = hook.shown(asked, SupportStep(checked.support, phrase), phrase, "llm", sources)
    assert kept.support.verdict == "supported" and kept.text.endswith("(きびだんご) [1]"), kept.text
