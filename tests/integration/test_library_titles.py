"""A library's question names its story by the story's own spelling or by the document's name
(issue #28, docs/ISSUES.md#story-scope), on a real embedded store with the scripted model at the
model boundary: "the fox" asked of a fable that writes "the Fox", and a question that names the
story's title ("the grapes", 「芥川の」), are answered from that story alone."""

from __future__ import annotations

from storygraph.qa.pipeline.parts import QAOptions
from tests.helpers.library import Library, library_fixture

TRIPLES = (
    ("Fox", "Character", "JUDGES", "race", "Event"),
    ("fox", "Animal", "EATS", "cheese", "Object"),
    ("Hare", "Character", "RACES", "Tortoise", "Character"),
    ("Fox", "Character", "SEES", "grapes", "Object"),
)
STORIES = {
    # the fable writes its Fox with a capital: a name in that story
    "first.txt": "The Hare raced the Tortoise.\nThe Fox judged the race.\n",
    # here a fox is an animal, written small: an ordinary word
    "second.txt": "A fox ate the cheese.\nThe cheese was good.\n",
    # a title the question may name
    "the_grapes_on_the_vine.txt": "The Fox saw the grapes.\nThey were high.\n",
}


library = library_fixture(STORIES, TRIPLES)


def _scope(answer) -> dict:
    return next(s for s in answer.steps if s.name == "entities").detail


def _cited(answer) -> set[str]:
    return {c.document_name for c in answer.citations if c.document_name}


def test_a_word_the_story_capitalises_is_that_storys_name_however_asked(
    library: Library,
) -> None:
    services, ids = library
    answer = services.qa().ask("Who did the fox judge?", QAOptions(no_llm=True, mode="onehop"))
    assert set(_scope(answer)["stories"]) == {ids["first.txt"], ids["the_grapes_on_the_vine.txt"]}
    assert "second.txt" not in _cited(answer)  # its fox is a word, not its story's name
    assert not any("do not say which story" in w for w in answer.warnings)


def test_a_question_naming_the_documents_title_is_answered_from_that_story(
    library: Library,
) -> None:
    services, ids = library
    question = "What did the fox see on the vine?"  # "vine": a word of its title alone
    answer = services.qa().ask(question, QAOptions(no_llm=True, mode="onehop"))
    assert _scope(answer)["stories"] == [ids["the_grapes_on_the_vine.txt"]]
    assert answer.citations and _cited(answer) == {"the_grapes_on_the_vine.txt"}
    # the user's choice bounds the titles: another story chosen, the title names nothing
    chosen = (ids["first.txt"], ids["second.txt"])
    other = services.qa().ask(question, QAOptions(no_llm=True, mode="onehop", stories=chosen))
    assert "the_grapes_on_the_vine.txt" not in _cited(other)
