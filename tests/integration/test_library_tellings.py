"""Two tellings of one tale in a library (issue #28, qa/scope/scope.py `Scope.tellings`), on a real
embedded store with the scripted model at the model boundary: a question naming the tale by
its title, whose proper names both stories hold, is answered once from both, under one head
line naming both stories, every citation under it; a proper name both hold that no title word
names is still answered per story."""

from __future__ import annotations

from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.scope.per_story import JOINED, misplaced_citations, split_by_story, story_head
from tests.helpers.library import Library, library_fixture

TRIPLES = (
    ("Momotaro", "Character", "DEFEATS", "Ogre Chief", "Character"),
    ("Momotaro", "Character", "GOES_TO", "Onigashima", "Place"),
)
STORIES = {
    "momotaro_kusuyama.txt": "Momotaro went to Onigashima.\nMomotaro defeated the Ogre Chief.\n",
    "momotaro_akutagawa.txt": "Momotaro went to Onigashima.\nThe Ogre Chief knelt to Momotaro.\n",
}


library = library_fixture(STORIES, TRIPLES)


def test_a_tale_two_stories_tell_is_answered_once_under_both_names(
    library: Library,
) -> None:
    services, _ = library
    answer = services.qa().ask("Who did Momotaro defeat?", QAOptions(no_llm=True))
    parts = split_by_story(answer.answer)
    assert len(parts) == 1  # one answer, not one per story
    head = parts[0][0] or ""
    assert sorted(head.split(JOINED)) == sorted(STORIES)
    assert answer.answer.startswith(story_head(head, japanese=False) + "\n")
    assert {c.document_name for c in answer.citations} == set(STORIES)
    assert misplaced_citations(answer.answer, answer.citations, "another.txt") == []
    assert any("2 stories tell the tale this question names" in w for w in answer.warnings)


def test_a_proper_name_no_title_names_is_still_answered_per_story(
    library: Library,
) -> None:
    services, _ = library
    answer = services.qa().ask("Who went to Onigashima?", QAOptions(no_llm=True))
    names = sorted(name or "" for name, _ in split_by_story(answer.answer))
    assert names == sorted(STORIES)
    assert any("stories fit this question equally" in w for w in answer.warnings)
