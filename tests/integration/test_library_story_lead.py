"""Stories tied by ordinary words alone are told apart by their own sentences (issue #28,
docs/ISSUES.md#story-lead, qa/scope/story_lead.py), on a real embedded store with the scripted
model at
the model boundary: a question whose words only one story's sentences hold is answered from that
story alone, under its name; one both stories' sentences fit alike is still answered per story."""

from __future__ import annotations

from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.scope.per_story import split_by_story, story_head
from storygraph.qa.scope.story_lead import SPELLED_LEAD
from tests.helpers.library import Library, library_fixture

TRIPLES = (("old man", "Character", "GOES_TO", "mountain", "Place"),)
STORIES = {  # file names whose words no question says (qa/question/story_titles.py)
    "story_a.txt": "The old man went to the mountain.\nThe old man cut wood all day.\n",
    "story_b.txt": "The old man went to the mountain.\nThe old man sang a song by the river.\n",
}


library = library_fixture(STORIES, TRIPLES)


def _step(answer, name: str) -> dict:
    return next(s for s in answer.steps if s.name == name).detail


def test_the_story_whose_sentences_lead_a_tie_of_ordinary_words_answers_alone(
    library: Library,
) -> None:
    services, ids = library
    question = "What song did the old man sing by the river?"
    answer = services.qa().ask(question, QAOptions(no_llm=True))
    assert sorted(_step(answer, "entities")["stories"]) == sorted(ids.values())  # a tie
    assert _step(answer, "story lead")["leading"] == ids["story_b.txt"]
    assert answer.citations and {c.document_name for c in answer.citations} == {"story_b.txt"}
    assert answer.answer.startswith(story_head("story_b.txt", japanese=False) + "\n")
    assert any("story_b.txt's sentences fit it best" in w for w in answer.warnings)


def test_a_tie_the_sentences_do_not_break_is_answered_per_story(
    library: Library,
) -> None:
    services, _ = library
    answer = services.qa().ask("Where did the old man go?", QAOptions(no_llm=True))
    assert _step(answer, "story lead")["leading"] is None
    names = sorted(name or "" for name, _ in split_by_story(answer.answer))
    assert names == ["story_a.txt", "story_b.txt"]
    assert any("stories fit this question equally" in w for w in answer.warnings)


# 'wood' is an entity of story_c's graph only; story_d's text says it too, in a sentence no
# triple was drawn from (docs/ISSUES.md#story-lead: 親 of 竹取物語 and 「親がにを殺したのは誰？」).
WOOD = (("farmer", "Character", "SELLS", "wood", "Object"),)
WOOD_STORIES = {
    "story_c.txt": "The farmer went to the town.\nThe farmer sold the wood at the market.\n",
    "story_d.txt": "The fisher lived by the sea.\nA storm broke the fisher's boat into wood.\n",
}


wood = library_fixture(WOOD_STORIES, WOOD)


def test_a_story_whose_text_holds_an_ordinary_name_its_graph_lacks_can_lead(
    wood: Library,
) -> None:
    services, ids = wood
    answer = services.qa().ask("What did the storm break into wood?", QAOptions(no_llm=True))
    assert _step(answer, "entities")["stories"] == [ids["story_c.txt"]]  # 'wood' holds c
    lead = _step(answer, "story lead")
    assert lead["leading"] == ids["story_d.txt"] and "every story" in lead["searched"]
    assert answer.citations and {c.document_name for c in answer.citations} == {"story_d.txt"}
    assert answer.answer.startswith(story_head("story_d.txt", japanese=False) + "\n")
    assert any("story_d.txt's sentences fit it best of all" in w for w in answer.warnings)


def test_the_story_holding_the_ordinary_name_still_answers_when_its_sentences_lead(
    wood: Library,
) -> None:
    services, ids = wood
    answer = services.qa().ask("Who sold the wood at the market?", QAOptions(no_llm=True))
    assert _step(answer, "story lead")["leading"] == ids["story_c.txt"], _step(answer, "story lead")
    assert {c.document_name for c in answer.citations} == {"story_c.txt"}
    assert any("its sources are from story_c.txt" in w for w in answer.warnings)


# 'old man' is an entity of story_h's and story_i's graphs (a tie of ordinary words); story_j's
# text says it too, in sentences no triple was drawn from, with the rest of the question's words
# (a tie of more stories than MAX_STORIES keeps the first ones the same way).
TIED_WIDER = {
    "story_h.txt": "The old man went to the mountain.\nThe old man cut wood all day.\n",
    "story_i.txt": "The old man went to the mountain.\nThe old man fished in the river.\n",
    "story_j.txt": "The old man planted a rose-bush by the gate.\nThe rose-bush grew tall.\n",
}


tied_wider = library_fixture(TIED_WIDER, TRIPLES)


def test_a_story_outside_a_tie_of_ordinary_words_can_lead_it(
    tied_wider: Library,
) -> None:
    services, ids = tied_wider
    question = "Where did the old man plant the rose-bush?"
    answer = services.qa().ask(question, QAOptions(no_llm=True))
    tie = sorted(_step(answer, "entities")["stories"])
    assert tie == sorted([ids["story_h.txt"], ids["story_i.txt"]])
    lead = _step(answer, "story lead")
    assert lead["leading"] == ids["story_j.txt"] and "every story" in lead["searched"]
    assert answer.citations and {c.document_name for c in answer.citations} == {"story_j.txt"}
    assert answer.answer.startswith(story_head("story_j.txt", japanese=False) + "\n")


def test_a_tied_story_leading_every_story_answers_alone(
    tied_wider: Library,
) -> None:
    services, ids = tied_wider
    answer = services.qa().ask("Where did the old man fish?", QAOptions(no_llm=True))
    assert _step(answer, "story lead")["leading"] == ids["story_i.txt"]
    assert answer.citations and {c.document_name for c in answer.citations} == {"story_i.txt"}
    assert answer.answer.startswith(story_head("story_i.txt", japanese=False) + "\n")


# Both graphs hold 'queen'; story_p writes her "the Queen", a name of that story alone by its
# capitals (qa/question/specific_names.py), story_q writes "the queen". A question writing her
# small is any queen's: the sentences of every story decide (`Scope.spelled`).
QUEENS = (("queen", "Character", "LIVES_IN", "castle", "Place"),)
QUEEN_STORIES = {
    "story_p.txt": "Long ago the Queen lived in the castle.\nEvery day the Queen rode out.\n",
    "story_q.txt": "Long ago a queen lived in the castle.\nThe queen cried by the old well.\n",
}


queens = library_fixture(QUEEN_STORIES, QUEENS)


def test_a_story_writing_the_name_small_can_lead_the_one_whose_capitals_hold_it(
    queens: Library,
) -> None:
    services, ids = queens
    answer = services.qa().ask("Where did the queen cry by the well?", QAOptions(no_llm=True))
    assert _step(answer, "entities")["stories"] == [ids["story_p.txt"]]  # the capitals
    lead = _step(answer, "story lead")
    assert lead["leading"] == ids["story_q.txt"] and "every story" in lead["searched"]
    assert lead["needed"] == SPELLED_LEAD  # the capitals alone: any margin leads
    assert answer.citations and {c.document_name for c in answer.citations} == {"story_q.txt"}
    assert answer.answer.startswith(story_head("story_q.txt", japanese=False) + "\n")


def test_the_story_whose_capitals_hold_the_name_keeps_it_unless_another_leads(
    queens: Library,
) -> None:
    services, ids = queens
    answer = services.qa().ask("How often did the queen ride out?", QAOptions(no_llm=True))
    assert _step(answer, "story lead")["leading"] in (None, ids["story_p.txt"])
    assert {c.document_name for c in answer.citations} == {"story_p.txt"}
    assert answer.answer.startswith(story_head("story_p.txt", japanese=False) + "\n")


# Both stories write "the Princess", a name of each by their capitals: a question writing it so
# ties them. The story whose sentences hold the rest of the question answers alone.
PRINCESSES = (("Princess", "Character", "LIVES_IN", "palace", "Place"),)
PRINCESS_STORIES = {
    "story_s.txt": "The Princess lived in the palace.\nThe Princess combed her hair with gold.\n",
    "story_t.txt": "The Princess lived in the palace.\nThe Princess fed the swans at dawn.\n",
}


princesses = library_fixture(PRINCESS_STORIES, PRINCESSES)


def test_stories_a_name_ties_are_led_by_the_one_whose_sentences_hold_the_question(
    princesses: Library,
) -> None:
    services, ids = princesses
    answer = services.qa().ask("What did the Princess feed at dawn?", QAOptions(no_llm=True))
    assert sorted(_step(answer, "entities")["stories"]) == sorted(ids.values())  # a tie
    assert _step(answer, "story lead")["leading"] == ids["story_t.txt"]
    assert answer.citations and {c.document_name for c in answer.citations} == {"story_t.txt"}
    assert any("hold this question's names alike" in w for w in answer.warnings)
    tie = services.qa().ask("Where did the Princess live?", QAOptions(no_llm=True))
    names = sorted(name or "" for name, _ in split_by_story(tie.answer))
    assert names == ["story_s.txt", "story_t.txt"]  # both sentences fit alike: per story
