"""Sentence search on the real embedded FalkorDB: which documents it reads, what it finds, its
per-document index, and how the engine gives its sentences to the answer."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from storygraph.llm.factory import ModelInfo
from storygraph.qa.pipeline.factory import build_engine
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.question.analysis import analyse
from storygraph.qa.question.entities import LocalEntityFinder
from storygraph.qa.question.translation import NoTranslation, translator_for
from storygraph.qa.retrieval import passages
from storygraph.qa.retrieval.context import SMALL_MAX_SOURCES
from storygraph.qa.retrieval.passages import BY_MEANING_ONLY, SentenceSearch
from storygraph.services import Services
from storygraph.text.embeddings import default_embedder
from tests.helpers.scripted_model import ScriptedChatModel

SMALL = ModelInfo("embedded", "scripted-small", capable=False)
ENGLISH = (
    "There were once five-and-twenty tin soldiers. They had been made out of the same old tin "
    "spoon. The soldiers wore red and blue. The little boy set the soldiers up on the table. "
    "One soldier stood on one leg. A paper castle stood on the table too.\n"
)


@pytest.fixture
def stories(services: Services, shared_dir: Path) -> Services:
    story = shared_dir / "stories" / "ja" / "momotaro_kusuyama.txt"
    for name, data in ((story.name, story.read_bytes()), ("tin.txt", ENGLISH.encode())):
        report = services.ingestor().ingest_bytes(name, data)
        assert report.status == "added", report.message
    return services


def _find(services: Services, question: str, limit: int = 2, **kw: Any) -> list[str]:
    analysis = analyse(question, services.store.entity_names(), LocalEntityFinder(), [], **kw)
    search = SentenceSearch(services.store, default_embedder())
    return [p.text for p in search.find(analysis, limit)]


def test_the_sentence_that_answers_is_found_without_any_relation(stories: Services) -> None:
    found = _find(stories, "What were the tin soldiers made from?")
    # the matched sentence, with its neighbours (WINDOW) on each side
    assert found[0] == (
        "There were once five-and-twenty tin soldiers. They had been made out of the same old "
        "tin spoon. The soldiers wore red and blue."
    )
    found = _find(stories, "大きな桃はどこから流れて来た？", limit=4)
    assert any("川上から、大きな桃が一つ" in text for text in found), found


def test_a_passage_keeps_its_matched_sentence_for_a_budget_too_small_for_its_neighbours(
    stories: Services,
) -> None:
    analysis = analyse(
        "What were the tin soldiers made from?",
        stories.store.entity_names(),
        LocalEntityFinder(),
        [],
    )
    best = SentenceSearch(stories.store, default_embedder()).find(analysis, 1)[0]
    assert best.sentence == "They had been made out of the same old tin spoon."
    assert best.sentence in best.text and best.sentence != best.text


def test_only_the_documents_that_mention_the_start_entities_are_read(stories: Services) -> None:
    # 桃太郎 is named only in the Japanese story: no English sentence comes back, even for words
    # that only the English story has.
    found = _find(stories, "table soldiers", limit=5, start_entities=["桃太郎"])
    assert found and all("table" not in text for text in found)
    # no start entity: every ready document is read
    assert (
        "The little boy set the soldiers up on the table."
        in _find(stories, "table soldiers", limit=1)[0]
    )


def test_an_english_question_over_the_japanese_story_reads_its_entities_names(
    stories: Services,
) -> None:
    found = _find(stories, "Who defeated Momotaro?", limit=3)
    assert found and all("桃太郎" in text for text in found), found


def test_a_question_sharing_no_word_with_any_sentence_finds_the_nearest_by_meaning(
    services: Services, shared_dir: Path
) -> None:
    story = shared_dir / "stories" / "ja" / "momotaro_kusuyama.txt"
    assert services.ingestor().ingest_bytes(story.name, story.read_bytes()).status == "added"
    question = "What did the old woman find while washing clothes in the river?"
    analysis = analyse(question, services.store.entity_names(), LocalEntityFinder(), [])
    assert analysis.ids == []  # no name found: every story is read, and only Japanese is stored
    found = SentenceSearch(services.store, default_embedder()).find(analysis, 2)
    assert found and all(p.found_by == BY_MEANING_ONLY and p.lexical == 0 for p in found)
    assert "おばあさんは川へ洗濯に行きました" in found[0].text, found[0].text
    # without an embedder there is no meaning to go by: nothing found, as before
    assert SentenceSearch(services.store, None).find(analysis, 2) == []
    # a question sharing words is found by them
    words = analyse("大きな桃はどこから流れて来た？", [], LocalEntityFinder(), [])
    assert {p.found_by for p in SentenceSearch(services.store, None).find(words, 2)} == {"words"}


def test_each_document_is_indexed_once_until_it_changes(
    stories: Services, monkeypatch: pytest.MonkeyPatch, shared_dir: Path
) -> None:
    read: list[list[str]] = []
    original = stories.store.document_chunks

    def counting(ids: Any) -> Any:
        read.append(list(ids))
        return original(ids)

    monkeypatch.setattr(stories.store, "document_chunks", counting)
    search = SentenceSearch(stories.store, None)
    names = stories.store.entity_names()
    analysis = analyse("soldiers on the table", names, LocalEntityFinder(), [])
    first = search.find(analysis, 2)
    assert search.find(analysis, 2) == first
    assert sum(len(ids) for ids in read) <= 2  # at most each document once (an earlier test
    # in this process may have indexed them already)
    before = len(read)
    extra = "The tin soldier fell out of the window onto the table of the street.\n"
    assert stories.ingestor().ingest_bytes("more.txt", extra.encode()).status == "added"
    search.find(analysis, 2)
    assert len(read) == before + 1 and len(read[-1]) == 1  # only the new document is read


def test_the_small_model_reads_the_found_sentences_after_the_best_facts(
    stories: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.helpers import scripted_logic

    prompts: list[str] = []

    def answer(prompt: str) -> str:
        prompts.append(prompt)
        return "The same old tin spoon. [3]"

    monkeypatch.setattr(scripted_logic, "answer", answer)
    engine = build_engine(stories.store, ScriptedChatModel(), SMALL, embedder=default_embedder())
    answer_ = engine.ask("What were the tin soldiers made from?", QAOptions(sentence_sources=2))
    assert len(prompts) == 1
    kinds = [c.kind for c in answer_.citations]
    assert kinds.count("sentence") >= 1
    assert [c.number for c in answer_.citations] == list(range(1, len(kinds) + 1))
    spoon = next(c for c in answer_.citations if "tin spoon" in c.text)
    assert spoon.kind == "sentence" or spoon.text in {f.evidence for f in answer_.kept_facts}
    assert f"[{spoon.number}] {spoon.text}" in prompts[0]
    # The answer step says how many sources the model read: exactly those in its prompt.
    read = next(s for s in answer_.steps if s.name == "answer").detail["sources_read"]
    assert 0 < read <= SMALL_MAX_SOURCES
    assert [f"[{c.number}] " in prompts[0] for c in answer_.citations] == [
        i < read for i in range(len(answer_.citations))
    ]
    step = next(s for s in answer_.steps if s.name == "sentences")
    assert step.detail["method"] == "bm25+embedding"
    assert "They had been made out of the same old tin spoon." in step.detail["found"][0]["text"]
    # switched off: no sentence source, and the step says it found none
    off = engine.ask("What were the tin soldiers made from?", QAOptions(sentence_sources=0))
    assert all(c.kind == "fact" for c in off.citations)
    assert next(s for s in off.steps if s.name == "sentences").detail["found"] == []


def test_without_any_fact_the_found_sentences_still_reach_the_answer(
    stories: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.helpers import scripted_logic

    prompts: list[str] = []
    # more than the question's own words (docs/ISSUES.md#support-quotes)
    said = "The same old tin spoon. [1]"
    monkeypatch.setattr(scripted_logic, "answer", lambda p: prompts.append(p) or said)
    # the small model as the embedded server runs it: token probabilities, the self-check
    engine = build_engine(stories.store, ScriptedChatModel(logprobs=True), SMALL, embedder=None)
    # No name of the graph in the question: no start entity, no fact; the sentences remain.
    answer_ = engine.ask("What old spoon were they made out of?", QAOptions())
    assert answer_.kept_facts == []
    assert answer_.citations and answer_.citations[0].kind == "sentence"
    # a store of two stories, a question naming no one: the answer names the sources' story
    assert answer_.answer == f"── tin.txt ──\n{said}" and len(prompts) == 1
    # without a model, the answer says nothing was found and points at those sentences
    facts_only = engine.ask("What old spoon were they made out of?", QAOptions(no_llm=True))
    last = facts_only.answer.splitlines()[-1]
    assert last.startswith("Story sentences close to the question: [1]")


def test_the_same_text_under_another_name_in_another_store_cites_its_own_name(
    tmp_path: Path,
) -> None:
    """The sentence index is process-wide and keyed by the document's version: the same text
    uploaded as another file in another store must come back under that store's name (the
    library harness once cited `momotaro.txt`, a name from an earlier test's store)."""
    from storygraph.services import build_services
    from storygraph.settings import Settings

    names = []
    for number, name in enumerate(("first.txt", "second.txt")):
        built = build_services(
            Settings(data_dir=tmp_path / f"data{number}"), llm=ScriptedChatModel()
        )
        try:
            assert built.ingestor().ingest_bytes(name, ENGLISH.encode()).status == "added"
            analysis = analyse("tin soldiers", built.store.entity_names(), LocalEntityFinder(), [])
            found = SentenceSearch(built.store, None).find(analysis, 1)
            names.append({p.document_name for p in found})
        finally:
            built.close()
    assert names == [{"first.txt"}, {"second.txt"}]


def test_an_english_question_is_searched_in_the_japanese_storys_words(stories: Services) -> None:
    # issue 27 item 4: the question's content words in Japanese (JMdict, word by word) are the
    # query's terms; without them only 桃太郎's name is shared, and the sentence saying what he
    # wore is not among the first found
    dictionary = translator_for("dictionary", None)
    question = "What did Momotaro wear?"
    asked = {"story_languages": ["ja"], "limit": 2}
    without = _find(stories, question, translator=NoTranslation(), **asked)
    assert not any("陣羽織を着て" in text for text in without), without
    found = _find(stories, question, translator=dictionary, **asked)
    assert any("陣羽織を着て" in text for text in found), found
    found = _find(
        stories, "What did the old man cut in the mountains?", translator=dictionary, **asked
    )
    assert "おじいさんは山へしば刈りに" in found[0], found


def test_the_engine_traces_the_translation_and_answers_in_the_questions_language(
    stories: Services,
) -> None:
    engine = build_engine(stories.store, ScriptedChatModel(), SMALL)
    # both stories in scope, one English: a question about the English one is searched as
    # asked; one whose names put it in the Japanese story alone is brought into Japanese, as
    # for that story alone (docs/ISSUES.md#crosslang-translation)
    tin = engine.ask("What were the tin soldiers made from?")
    assert next(s for s in tin.steps if s.name == "entities").detail["translation"] is None
    both = engine.ask("What did Momotaro wear?")
    translated = next(s for s in both.steps if s.name == "entities").detail["translation"]
    assert translated is not None and translated["language"] == "ja"
    japanese = next(d.id for d in stories.store.list_documents() if d.language == "ja")
    answer = engine.ask("What did Momotaro wear?", QAOptions(stories=(japanese,)))
    step = next(s for s in answer.steps if s.name == "entities")
    translation = step.detail["translation"]
    assert translation["method"] == "dictionary (JMdict)" and translation["language"] == "ja"
    assert "wear" in translation["words"]
    assert answer.question == "What did Momotaro wear?"
    # with translation off the trace says so: none made
    off = engine.ask("What did Momotaro wear?", QAOptions(translation="off", stories=(japanese,)))
    assert next(s for s in off.steps if s.name == "entities").detail["translation"] is None


class _MeaningOf:
    """An embedder at the model boundary: the question [1, 0]; one chosen sentence at cosine
    `cos` to it; every other text at cosine 0."""

    name = "scripted"

    def __init__(self, question: str, sentence: str, cos: float) -> None:
        self.question, self.sentence, self.cos = question, sentence, cos

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            if text == self.question:
                rows.append([1.0, 0.0])
            elif text == self.sentence:
                rows.append([self.cos, math.sqrt(1 - self.cos**2)])
            else:
                rows.append([0.0, 1.0])
        return np.array(rows)


VILLAGE = (
    "むかし、ある村に若者がいました。桃太郎は村で一番強い若者で、桃太郎の名は遠くまで"
    "知られていました。毎日、畑を耕しました。雨の日は家で本を読みました。秋には米が"
    "たくさんとれました。ある日、山から来た大男が桃太郎を倒しました。それから村は静かに"
    "なりました。\n"
)
FIRST = "桃太郎は村で一番強い若者で、桃太郎の名は遠くまで知られていました。"
DEFEATED = "ある日、山から来た大男が桃太郎を倒しました。"


def test_meaning_weighs_more_for_a_question_asked_in_another_language(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A question's BM25 terms over a story in another language are a dictionary's guesses at
    # its words and the graph's names: the encoder, comparing the question itself, counts
    # EMBEDDING_WEIGHT_ACROSS times. A sentence lower by words but close in meaning comes
    # first across languages, and would not at the same-language weight.
    assert services.ingestor().ingest_bytes("village.txt", VILLAGE.encode()).status == "added"
    question = "Who defeated Momotaro?"
    analysis = analyse(
        question, services.store.entity_names(), LocalEntityFinder(), [], story_languages=["ja"]
    )
    found = SentenceSearch(services.store, None).find(analysis, passages.POOL)
    lexical = {p.text: p.lexical for p in found}
    first = next(score for text, score in lexical.items() if FIRST in text)
    defeated = next(score for text, score in lexical.items() if DEFEATED in text)
    assert 0 < defeated < first  # the name twice outweighs the name once and a guessed verb
    share = defeated / first
    # a cosine that lifts the lower sentence over the first at the weight across, not at 1.0
    cos = (1 - share) / 2
    assert passages.EMBEDDING_WEIGHT * cos < 1 - share < passages.EMBEDDING_WEIGHT_ACROSS * cos
    search = SentenceSearch(services.store, _MeaningOf(question, DEFEATED, cos))
    assert DEFEATED in search.find(analysis, 1)[0].text
    assert passages.embedding_weight("en", "ja") == passages.EMBEDDING_WEIGHT_ACROSS
    assert passages.embedding_weight("ja", "ja") == passages.EMBEDDING_WEIGHT
    monkeypatch.setattr(passages, "EMBEDDING_WEIGHT_ACROSS", passages.EMBEDDING_WEIGHT)
    assert FIRST in search.find(analysis, 1)[0].text
