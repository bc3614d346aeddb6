"""Head-chain walks end (storygraph.text.parse_tree): on GiNZA's real parse of texts of several
sentences and of fragments, and on random token trees and forests (hypothesis), where a walk up
to the text's first root, as `_asked_predicate` once made, never ended (issue 39)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from storygraph.ingest.frames.ja import parse
from storygraph.qa.question.question_structure import _asked_predicate, chain_end, read_structure
from storygraph.text.parse_tree import ancestors, root_of

# --- on the parser's own output ---------------------------------------------------------------

TEXTS = [
    "桃太郎は鬼を倒した。誰が来た？",  # the question word in the second sentence
    "おじいさんは山へ行きました。おばあさんは川へ行きました。桃太郎を倒したのは誰？",
    "何か。",
    "誰？誰？",
    "。？！",
    "「",
]


@pytest.mark.parametrize("text", TEXTS)
def test_ancestors_climb_to_the_tokens_own_sentence_root_as_spacy_does(text: str) -> None:
    doc = parse(text)
    assert len(doc) > 0
    for tok in doc:
        assert [a.i for a in ancestors(tok)] == [a.i for a in tok.ancestors]
        assert root_of(tok).i == tok.sent.root.i


def test_a_text_of_several_sentences_has_a_root_for_each() -> None:
    doc = parse("桃太郎は鬼を倒した。誰が来た？")
    asked = next(t for t in doc if t.text == "誰")
    first_root = next(t for t in doc if t.dep_ == "ROOT")
    assert root_of(asked).i != first_root.i  # the walk that hung aimed at this one
    assert root_of(asked).lemma_ == "来る"
    assert root_of(first_root).i == first_root.i


@pytest.mark.timeout(60)  # a walk that does not end fails here instead of at the suite's 900 s
def test_the_asked_predicate_of_a_question_in_the_second_sentence_is_its_own() -> None:
    assert read_structure(parse("桃太郎は鬼を倒した。誰が来た？")).lemma == "来る"
    question = "おじいさんは山へ行きました。桃太郎を倒したのは誰？"
    structure = read_structure(parse(question))
    assert structure.lemma == "倒す"
    at = question.find("桃太郎")
    assert structure.direction(at, at + len("桃太郎")) == "in"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fragment", ["何か。", "誰？誰？", "。？！", "？", "", "何"])
def test_a_fragment_has_no_asked_predicate(fragment: str) -> None:
    structure = read_structure(parse(fragment))
    assert structure.predicate == "" and structure.arguments == ()


# --- on random trees and forests ---------------------------------------------------------------

DEPS = ["ROOT", "advcl", "acl", "csubj", "nsubj", "obj", "case", "mark", "fixed", "aux", "conj"]
POS = ["VERB", "NOUN", "PROPN", "PRON", "ADP", "AUX", "ADJ", "PUNCT"]
WORDS = ["誰", "何", "する", "もの", "の", "て", "で", "行く", "桃太郎", "よう", "？"]


class WalkedTooFar(Exception):
    """A walk read more heads than any walk that ends needs: it would not have ended."""


class StandInDoc:
    """A parse as plain lists; `budget` bounds how many heads a walk may read."""

    def __init__(self, heads: list[int], labels: list[tuple[str, str, str]]) -> None:
        self.heads = heads
        self.labels = labels
        self.reads = 0
        self.budget = 0

    def __len__(self) -> int:
        return len(self.heads)

    def __getitem__(self, i: int) -> StandIn:
        return StandIn(self, i)

    def tokens(self) -> list[StandIn]:
        return [StandIn(self, i) for i in range(len(self.heads))]

    def walk(self, budget: int) -> None:
        self.reads, self.budget = 0, budget


class StandIn:
    """A token as spaCy gives one: a new object on every `.head` (identity never holds)."""

    def __init__(self, doc: StandInDoc, i: int) -> None:
        self.doc = doc
        self.i = i
        self.dep_, self.pos_, self.lemma_ = doc.labels[i]
        self.text = self.lemma_

    @property
    def head(self) -> StandIn:
        self.doc.reads += 1
        if self.doc.reads > self.doc.budget:
            raise WalkedTooFar(f"{self.doc.reads} heads read in a parse of {len(self.doc)}")
        return StandIn(self.doc, self.doc.heads[self.i])

    @property
    def children(self) -> list[StandIn]:
        heads = self.doc.heads
        return [StandIn(self.doc, j) for j in range(len(heads)) if heads[j] == self.i != j]


def _labels(n: int) -> st.SearchStrategy[list[tuple[str, str, str]]]:
    label = st.tuples(st.sampled_from(DEPS), st.sampled_from(POS), st.sampled_from(WORDS))
    return st.lists(label, min_size=n, max_size=n)


@st.composite
def parses(draw: st.DrawFn) -> StandInDoc:
    """A forest (every head earlier or the token itself: several roots) or any heads at all
    (self-heads and cycles, which no parser gives and no walk may loop on)."""
    n = draw(st.integers(min_value=1, max_value=14))
    if draw(st.booleans()):
        heads = [draw(st.integers(min_value=0, max_value=i)) for i in range(n)]
    else:
        heads = draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n))
    return StandInDoc(heads, draw(_labels(n)))


def _budget(doc: StandInDoc) -> int:
    """More head reads than a walk that ends can make: a few per step of each token's chain."""
    return 8 * len(doc) * len(doc) + 8


PROPERTY = settings(max_examples=400, deadline=None, derandomize=True)


@PROPERTY
@given(parses())
def test_ancestors_and_root_of_end_on_any_heads_with_tokens_of_the_input(doc: StandInDoc) -> None:
    for tok in doc.tokens():
        doc.walk(_budget(doc))
        walked = [a.i for a in ancestors(tok)]
        assert len(walked) == len(set(walked)) and tok.i not in walked
        assert all(0 <= i < len(doc) for i in walked)
        root = root_of(tok)
        assert root.i == (walked[-1] if walked else tok.i)
        if all(doc.heads[j] <= j for j in range(len(doc))):  # a forest: its own root
            assert doc.heads[root.i] == root.i


@PROPERTY
@given(parses())
def test_the_asked_predicate_and_chain_end_end_with_tokens_of_the_input(doc: StandInDoc) -> None:
    doc.walk(_budget(doc))
    tokens: list[Any] = doc.tokens()
    found = _asked_predicate(tokens)
    assert found is None or 0 <= found.i < len(doc)
    for tok in tokens:
        doc.walk(_budget(doc))
        assert 0 <= chain_end(tok).i < len(doc)


def test_a_walk_to_the_texts_first_root_is_caught_by_the_stand_ins_budget() -> None:
    """The stand-ins catch the old walk (`node.i != root.i: node = node.head` with root the
    first ROOT) on a second sentence's question word: it reads heads without end."""
    doc = StandInDoc(
        [0, 1, 1],
        [("ROOT", "VERB", "行く"), ("ROOT", "VERB", "来る"), ("nsubj", "PRON", "誰")],
    )
    doc.walk(_budget(doc))
    root, node = doc[0], doc[2]
    with pytest.raises(WalkedTooFar):
        while node.i != root.i:
            node = node.head
    doc.walk(_budget(doc))
    assert root_of(doc[2]).i == 1 and _asked_predicate(doc.tokens()).i == 1
