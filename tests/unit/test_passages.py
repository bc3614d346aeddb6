"""Sentence search's parts without a store: the terms, BM25, and how passages join the facts'
citations."""

from __future__ import annotations

from collections import Counter

import pytest

from storygraph.models import Citation, Fact
from storygraph.qa.generation.answer import facts_answer
from storygraph.qa.retrieval import passages
from storygraph.qa.retrieval.context import with_passages
from storygraph.qa.retrieval.passages import Passage, bm25, index_document, is_heading
from storygraph.text.terms import passage_terms


def test_japanese_terms_are_character_bigrams_without_question_words() -> None:
    terms = passage_terms("誰が鬼を倒した？", "ja")
    assert "誰が" not in terms and not any("誰" in t for t in terms)
    assert terms == ["が鬼", "鬼を", "を倒", "倒し", "した"]
    # katakana is read as hiragana, so キジ and きじ share their bigram
    assert passage_terms("キジ", "ja") == passage_terms("きじ", "ja") == ["きじ"]
    # a one-character run still counts (桃 alone between punctuation)
    assert passage_terms("桃、", "ja") == ["桃"]


def test_english_terms_are_stems_without_stop_words() -> None:
    assert passage_terms("What were the tin soldiers made from?", "en") == [
        "tin",
        "soldier",
        "made",
    ]


def test_bm25_prefers_the_sentence_sharing_the_rarer_terms() -> None:
    rows = [
        {"id": "d:0000", "document_id": "d", "document": "d.txt", "text": text}
        for text in (
            "The soldier stood on one leg. The soldier looked at the dancer.",
            "They had been made out of the same old tin spoon.",
            "The soldier fell. The soldier was brave.",
        )
    ]
    index = index_document(rows, "en")
    assert len(index.sentences) == 5  # each sentence once, split as chunking splits
    query = passage_terms("What were the tin soldiers made from?", "en")
    scores = bm25(query, index.sentences, index.document_frequency)
    best = max(range(len(scores)), key=scores.__getitem__)
    assert index.sentences[best].text == "They had been made out of the same old tin spoon."
    assert bm25(["unknown"], index.sentences, index.document_frequency) == [0.0] * 5


def test_a_sentence_repeated_by_overlapping_chunks_is_indexed_once() -> None:
    rows = [
        {"id": "d:0000", "document_id": "d", "document": "d.txt", "text": "犬が来た。猿が来た。"},
        {"id": "d:0001", "document_id": "d", "document": "d.txt", "text": "猿が来た。きじが来た。"},
    ]
    index = index_document(rows, "ja")
    assert [s.text for s in index.sentences] == ["犬が来た。", "猿が来た。", "きじが来た。"]
    assert [s.chunk_id for s in index.sentences] == ["d:0000", "d:0000", "d:0001"]
    assert index.document_frequency["来た"] == 3
    assert isinstance(index.sentences[0].terms, Counter)


def _passage(text: str, chunk: str = "d:0003") -> Passage:
    return Passage(chunk, "d", "d.txt", text, 1.0, 3.0, 0.5)


def test_passages_follow_the_first_fact_sources_and_are_renumbered() -> None:
    facts = [Citation(i, f"d:000{i}", "d.txt", f"fact sentence {i}.") for i in (1, 2, 3)]
    merged = with_passages(facts, [_passage("found one."), _passage("found two.")], 2)
    assert [(c.number, c.text, c.kind) for c in merged] == [
        (1, "fact sentence 1.", "fact"),
        (2, "fact sentence 2.", "fact"),
        (3, "found one.", "sentence"),
        (4, "found two.", "sentence"),
        (5, "fact sentence 3.", "fact"),
    ]
    # None: every fact source first; a passage already among them is not repeated
    merged = with_passages(facts, [_passage("Fact sentence 2."), _passage("found.")], None)
    assert [c.text for c in merged] == [*(c.text for c in facts), "found."]
    assert [c.number for c in merged] == [1, 2, 3, 4]


def test_the_facts_answer_points_at_the_sentence_sources() -> None:
    fact = Fact("犬", "FOLLOWS", "桃太郎", ["d:0001"], "犬がついて来た。")
    citations = with_passages(
        [Citation(1, "d:0001", "d.txt", fact.evidence)], [_passage("きびだんごをやった。")], 1
    )
    text = facts_answer("ja", [fact], citations)
    assert text.splitlines()[-1] == "質問に近い本文の文：[2]"
    assert "1. 犬 → ついて来る → 桃太郎 [1]" in text  # FOLLOWS, as the sentence says it
    assert "Story sentences close to the question: [2]" in facts_answer("en", [fact], citations)
    assert "close to the question" not in facts_answer("en", [fact], citations[:1])


def test_a_window_brings_neighbours_of_the_same_document_within_the_length_cap() -> None:
    from storygraph.qa.retrieval.passages import MAX_PASSAGE_CHARS, _window

    def row(doc: str, text: str) -> dict[str, str]:
        return {"id": f"{doc}:0000", "document_id": doc, "document": f"{doc}.txt", "text": text}

    first = index_document([row("a", "一つ目の文。二つ目の文。三つ目の文。")], "ja").sentences
    other = index_document([row("b", "別の話の文。")], "ja").sentences
    sentences = [*first, *other]
    assert _window(sentences, 1, 1) == [0, 1, 2]
    assert _window(sentences, 2, 1) == [1, 2]  # 別の話の文 is another document's
    assert _window(sentences, 1, 0) == [1]
    text = "短い文です。" + "長" * (MAX_PASSAGE_CHARS - 5) + "。次の文です。"
    spans = index_document([row("c", text)], "ja").sentences
    assert len(spans) == 3
    assert _window(spans, 1, 1) == [1]  # neither neighbour fits beside the long sentence


def test_a_title_or_a_chapter_number_is_no_sentence_of_the_story() -> None:
    text = (
        "The Hare and the Tortoise\n\nA HARE one day ridiculed the Tortoise.\n"
        "Slow and steady wins the race.\n"
    )
    rows = [{"id": "d:0000", "document_id": "d", "document": "d.txt", "text": text}]
    assert [s.text for s in index_document(rows, "en").sentences] == [
        "A HARE one day ridiculed the Tortoise.",
        "Slow and steady wins the race.",
    ]
    ja = "一寸法師\n\n　むかし、摂津国にお夫婦がありました。\n二\n"
    assert is_heading(ja, 0, 4)
    assert is_heading(ja, ja.index("二"), ja.index("二") + 1)
    assert not is_heading(ja, ja.index("むかし"), ja.index("。") + 1)  # punctuated
    # the rule's limit: a short line with no punctuation at all reads as a heading
    line = "おじいさんは山へしば刈りに行きました"
    assert is_heading(line, 0, len(line))
    assert not is_heading(line + "。", 0, len(line) + 1)
    # a stretch inside a longer line is no line of its own
    assert not is_heading("ある日 The Hare ran", 3, 11)


def test_the_one_rare_word_outweighs_several_common_ones_in_a_long_book() -> None:
    # a fifth of the sentences hold "old", "man" and "go"; one holds "lantern"
    texts = [f"Rain fell on the roofs on day {n}." for n in range(60)]
    for n in range(0, 60, 5):
        texts[n] = f"The old man would go out at hour {n}."
    texts[42] = "A lantern hung by the gate."
    rows = [
        {"id": f"d:{i:04d}", "document_id": "d", "document": "d.txt", "text": text}
        for i, text in enumerate(texts)
    ]
    index = index_document(rows, "en")
    query = passage_terms("Where did the old man go with the lantern?", "en")
    scores = bm25(query, index.sentences, index.document_frequency)
    lantern = next(i for i, s in enumerate(index.sentences) if "lantern" in s.text)
    assert scores[lantern] == max(scores)
    # at the plain IDF the common words together would have won
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(passages, "IDF_POWER", 1.0)
        plain = bm25(query, index.sentences, index.document_frequency)
    assert plain[lantern] < max(plain)


def test_stories_searched_together_weigh_a_word_the_same_in_each() -> None:
    """In a library the stories' sentences are scored with one document frequency: the same
    sentence scores the same in a long story where its words are common and in a short one
    where they are rare, and a name only one story holds tells that story."""

    def story(doc: str, texts: list[str]) -> passages._DocumentIndex:
        rows = [
            {"id": f"{doc}:{i:04d}", "document_id": doc, "document": f"{doc}.txt", "text": t}
            for i, t in enumerate(texts)
        ]
        return index_document(rows, "en")

    line = "The hare ran past the mill."
    long = story("long", [line, *(f"The hare sat by the river on day {n}." for n in range(39))])
    short = story("short", [line, "Snow fell.", "Ned slept."])
    pooled = passages.pooled_frequency([long, short])
    assert pooled["hare"] == long.document_frequency["hare"] + short.document_frequency["hare"]
    assert passages.pooled_frequency([short]) is short.document_frequency
    both = [*long.sentences, *short.sentences]
    query = passage_terms("Where did the hare run?", "en")
    scores = bm25(query, both, pooled)
    same = [s for s, sentence in zip(scores, both, strict=True) if sentence.text == line]
    assert len(same) == 2 and same[0] == pytest.approx(same[1])
    # each story scored with its own frequencies, the short story's copy outranked the long's
    own_long = bm25(query, long.sentences, long.document_frequency)
    own_short = bm25(query, short.sentences, short.document_frequency)
    assert own_short[0] > 2 * own_long[0]


def test_a_kanji_widened_to_its_bigrams_weighs_as_one_word() -> None:
    """犬 searched as its bigrams (犬は, 犬が, の犬 …): each bigram alone is rare, but the word
    is in many sentences, and a sentence holding two of its bigrams holds the word once."""
    texts = [
        "犬は走りました。",
        "犬が吠えました。",
        "白い犬と歩きました。",
        "犬も来ました。",
        "山の犬に会いました。",
        "鬼が刀を持っていました。",
        "犬は犬が好きでした。",
    ]
    rows = [
        {"id": f"d:{i:04d}", "document_id": "d", "document": "d.txt", "text": text}
        for i, text in enumerate(texts)
    ]
    index = index_document(rows, "ja")
    query = passages.widen_single_kanji(["犬", "刀"], index.document_frequency)
    words = passages.widened_words(["犬", "刀"], index.document_frequency)
    assert set(words.values()) == {"犬", "刀"} and words["犬は"] == "犬" and words["刀を"] == "刀"
    scores = bm25(query, index.sentences, index.document_frequency, words)
    # 犬, in six of seven sentences, weighs less than 刀, in one
    sword = next(i for i, s in enumerate(index.sentences) if "刀" in s.text)
    assert scores[sword] == max(scores)
    both = next(i for i, s in enumerate(index.sentences) if s.text.startswith("犬は犬が"))
    one = next(i for i, s in enumerate(index.sentences) if s.text.startswith("犬は走"))
    assert scores[both] <= scores[one] * 1.5  # not two words' worth
    summed = bm25(query, index.sentences, index.document_frequency)
    assert summed[both] > summed[sword]  # each bigram counted as a rare word of its own


def test_a_translated_words_forms_count_once_and_only_whole() -> None:
    """An English word brought into Japanese comes with several forms (着る, 被る, 衰える for
    "wear"): a sentence adds the best form it holds whole, once; a form's common kana bigram
    alone (the える of 衰える in 見える) is no match."""
    texts = ["山が見える。", "赤い着物を着る。", "帽子を被る。", "帽子を被る、着物を着る。"]
    rows = [
        {"id": f"d:{i:04d}", "document_id": "d", "document": "d.txt", "text": text}
        for i, text in enumerate(texts)
    ]
    index = index_document(rows, "ja")
    wear = [passage_terms(f, "ja") for f in ("着る", "被る", "衰える")]
    scores = bm25([], index.sentences, index.document_frequency, synonyms=[wear])
    by_text = {s.text: score for s, score in zip(index.sentences, scores, strict=True)}
    assert by_text["山が見える。"] == 0.0
    assert by_text["赤い着物を着る。"] > 0 and by_text["帽子を被る。"] > 0
    # both forms in one sentence: still one word's worth, the better form's
    both = by_text["帽子を被る、着物を着る。"]
    assert both <= max(by_text["赤い着物を着る。"], by_text["帽子を被る。"]) * 1.2


def test_a_latin_word_in_japanese_text_is_a_word_not_letter_pairs() -> None:
    # an English question searched in a Japanese story matched "he", "is", "at" in any Latin
    # word the story holds; now its words match whole
    assert passage_terms("cha は英吉利語の ism です", "ja") == [
        "cha", "は英", "英吉", "吉利", "利語", "語の", "ism", "です",
    ]  # fmt: skip
    assert passage_terms("What kind of -ist was he?", "ja") == ["kind", "ist"]
    assert passage_terms("第23号の犬", "ja")[:2] == ["第2", "23"]  # digits stay in the run


def test_a_scene_holds_the_neighbours_of_its_own_document_and_chapter() -> None:
    rows = [
        {"id": "a:0", "document_id": "a", "document": "a.txt", "chapter": 1, "text": text}
        for text in ("The girl sat down. The boy cried loudly.", "She sewed his shadow on.")
    ] + [
        {"id": "a:1", "document_id": "a", "document": "a.txt", "chapter": 2, "text": "Night."},
        {"id": "b:0", "document_id": "b", "document": "b.txt", "chapter": 2, "text": "Owls."},
    ]
    index = index_document(rows, "en")
    texts = [s.text for s in index.sentences]
    assert texts[:3] == ["The girl sat down.", "The boy cried loudly.", "She sewed his shadow on."]
    first, middle, last = index.sentences[:3]
    assert passages.scene_terms(index.sentences, 1) == first.terms + middle.terms + last.terms
    # the last sentence of chapter 1 does not take chapter 2's first, nor another document's
    assert passages.scene_terms(index.sentences, 2) == middle.terms + last.terms
    assert passages.scene_terms(index.sentences, 3) == index.sentences[3].terms
    # the index holds each sentence's scene, computed once per document version
    assert [s.terms for s in index.scenes] == [
        passages.scene_terms(index.sentences, i) for i in range(len(index.sentences))
    ]
    assert [s.text for s in index.scenes] == texts


def test_with_a_scene_weight_words_spread_over_a_scene_outrank_a_name_and_one_verb(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Many sentences hold the name and the verb; the scene the question paraphrases holds its
    # other words in the sentence beside the one that answers.
    filler = [f"Peter cried at the {place}." for place in ("door", "tree", "lake", "hill", "gate")]
    story = [*filler, "Peter sat on the floor and cried.", "Wendy woke and sewed on the shadow."]
    rows = [{"id": "p:0", "document_id": "p", "document": "p.txt", "text": " ".join(story)}]
    index = index_document(rows, "en")
    query = passage_terms("What did Wendy do when Peter cried on the floor?", "en")
    answer = [s.text for s in index.sentences].index("Wendy woke and sewed on the shadow.")

    def rank() -> int:
        scores = passages.scene_scored(
            query, index.sentences, index.scenes, index.document_frequency
        )
        return sorted(range(len(scores)), key=lambda i: -scores[i]).index(answer)

    monkeypatch.setattr(passages, "SCENE_WEIGHT", 0.0)
    assert passages.scene_scored(
        query, index.sentences, index.scenes, index.document_frequency
    ) == bm25(query, index.sentences, index.document_frequency)
    alone = rank()
    monkeypatch.setattr(passages, "SCENE_WEIGHT", 1.0)
    assert rank() < alone
