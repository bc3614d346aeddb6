"""qa/scope/story_lead.py: which tied story's sentences lead the joint sentence search."""

from __future__ import annotations

from storygraph.qa.retrieval.passages import Passage
from storygraph.qa.scope.scope import Scope
from storygraph.qa.scope.story_lead import SPELLED_LEAD, STORY_LEAD, led_scope, story_lead


def _passage(document: str, score: float) -> Passage:
    return Passage(f"{document}:0001", document, f"{document}.txt", "…", score, score, None)


def test_a_story_leads_when_its_best_sentence_outscores_every_other_by_the_margin() -> None:
    lead = story_lead([_passage("a", 1.0), _passage("b", 0.5), _passage("a", 0.9)], ["a", "b"])
    assert lead.story == "a" and lead.best == {"a": 1.0, "b": 0.5}
    close = 1.0 / STORY_LEAD + 0.01
    assert story_lead([_passage("a", 1.0), _passage("b", close)], ["a", "b"]).story is None
    assert story_lead([_passage("b", 0.4)], ["a", "b"]).story == "b"  # the only one found
    assert story_lead([], ["a", "b"]).story is None
    assert story_lead([_passage("c", 1.0)], ["a", "b"]).story is None  # not a tied story


def test_a_scope_only_capitals_settled_is_led_by_the_best_sentence_by_any_margin() -> None:
    # "the princess" of a question, one story writing "the Princess": the capitals are no
    # evidence, so the story whose best sentence fits the question better leads
    close = [_passage("a", 1.0), _passage("b", 0.95)]
    assert story_lead(close, ["a", "b"]).story is None  # a tie of names needs the margin
    assert story_lead(close, ["a", "b"], SPELLED_LEAD).story == "a"
    level = [_passage("a", 1.0), _passage("b", 1.0)]
    assert story_lead(level, ["a", "b"], SPELLED_LEAD).story is None  # level: no lead


def test_the_leading_storys_own_scope_is_picked() -> None:
    scopes = [Scope(keys=("a:x",), documents=("a",)), Scope(keys=("b:x",), documents=("b",))]
    assert led_scope(scopes, "b") == scopes[1]
    assert led_scope(scopes, "c") is None
