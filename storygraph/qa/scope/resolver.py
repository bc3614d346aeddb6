"""Which story a library question is answered about when its names do not decide it: the
story whose sentences lead (`leading_story`, `wider_lead`), the tellings of one tale
(`tellings_story`), or the stories its sources came from (`undecided_story`); with the head
line and the warning that say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from storygraph.qa.pipeline.deadline import Deadline
from storygraph.qa.pipeline.gathering import Gathered, gather
from storygraph.qa.pipeline.parts import QAParts
from storygraph.qa.pipeline.trace import Trace
from storygraph.qa.question.analysis import QuestionAnalysis, within
from storygraph.qa.retrieval.passages import Passage
from storygraph.qa.scope.per_story import JOINED, cited_stories, source_scopes, story_head
from storygraph.qa.scope.scope import Scope
from storygraph.qa.scope.story_lead import STORY_LEAD, Lead, led_scope, story_lead

TIED = (
    "{count} stories fit this question equally; the answer is written for each of them, under "
    "its name: {stories}. Pick the stories to ask about one."
)
UNDECIDED = (
    "The question's names do not say which story it is about; its sources came from "
    "{count} stories, and the answer is written for each of them, under its name: {stories}. "
    "Pick the stories to ask about one."
)
LED = (
    "{count} stories fit this question's words equally, and it names none of them; {story}'s "
    "sentences fit it best, so the answer is about {story}. Pick the stories to ask about "
    "another."
)
TELLINGS = (
    "{count} stories tell the tale this question names ({stories}); the answer is drawn from "
    "them together, under their names. Pick the stories to ask about one."
)
WIDER = (
    "The question's names are ordinary words; {story}'s sentences fit it best of all the "
    "stories, so the answer is about {story}. Pick the stories to ask about another."
)
UNDECIDED_ONE = (
    "The question's names do not say which story it is about; its sources are from {story}. "
    "Pick the stories to ask about one."
)


@dataclass(frozen=True)
class Undecided:
    """What an undecided scope (qa/scope/scope.py) leads to once its sources are gathered: the
    stories to answer for one by one (`scopes`, when the sources came from several), or the one
    story's head line and the warning naming it (also the story whose sentences lead a tie of
    ordinary words: `leading_story`); empty when the scope is decided."""

    gathered: Gathered | None = None
    scopes: tuple[Scope, ...] = ()
    head: str = ""
    warnings: tuple[str, ...] = ()
    story: str = ""
    """The one story the answer is about (its sources', or the leading one), when one."""


def undecided_story(
    analysis: QuestionAnalysis, parts: QAParts, trace: Trace, deadline: Deadline
) -> Undecided:
    """The names do not say which story the question is about (a library, `library_names`):
    gather the sources first and say which story each is from."""
    named = library_names(analysis, parts)
    if not named:
        return Undecided()
    gathered = gather(analysis, parts, trace, deadline)
    stories = cited_stories(gathered.sources.citations)
    if len(stories) > 1:
        return Undecided(gathered, tuple(source_scopes(analysis.scope, stories)))
    if not stories:
        return Undecided(gathered)
    name = named.get(stories[0], stories[0])
    head = story_head(name, japanese=analysis.reply_language == "ja")
    return Undecided(
        gathered, head=head, warnings=(UNDECIDED_ONE.format(story=name),), story=stories[0]
    )


def tellings_story(analysis: QuestionAnalysis, parts: QAParts) -> Undecided | None:
    """A question naming a tale several stories tell (`Scope.tellings`): one answer from all
    of them, under one head line naming them; None for any other scope."""
    if not analysis.scope.tellings or parts.stories_named is None:
        return None
    named = parts.stories_named()
    names = [named.get(d, d) for d in analysis.scope.tellings]
    head = story_head(JOINED.join(names), japanese=analysis.reply_language == "ja")
    told = TELLINGS.format(count=len(names), stories=", ".join(names))
    return Undecided(head=head, warnings=(told,))


def leading_story(
    analysis: QuestionAnalysis, scopes: Sequence[Scope], parts: QAParts, trace: Trace
) -> tuple[QuestionAnalysis, Undecided] | None:
    """Stories tied by ordinary words alone (`Scope.ordinary`): when one story's sentences
    lead the others' (qa/scope/story_lead.py), the question within that story's scope, with its head
    line and the warning naming it; None when none leads (the answer is written per story)."""
    if not analysis.scope.ordinary or parts.stories_named is None:
        return None
    lead = recorded_lead(trace, parts.context.sentences(analysis), analysis.scope.tied)
    scope = led_scope(scopes, lead.story) if lead.story is not None else None
    if scope is None or lead.story is None:
        return None
    name = parts.stories_named().get(lead.story, lead.story)
    return led_within(analysis, scope, name, LED.format(count=len(scopes), story=name))


def wider_lead(
    analysis: QuestionAnalysis, parts: QAParts, trace: Trace
) -> tuple[QuestionAnalysis, Undecided] | None:
    """An undecided scope held by ordinary names one story's graph holds (`Scope.choice`):
    another story's text may say them too without its graph holding them (親 is an entity of
    竹取物語; 「親がにを殺したのは誰？」 is about 猿蟹合戦, whose graph has no 親), so the sentences
    of every story the user chose are searched together (qa/scope/story_lead.py). When a story the
    names did not keep leads them all, the question is answered within that story, from its
    own entities of those names (none when it has none), under its name; otherwise None (the
    undecided scope stands: `undecided_story`)."""
    scope = analysis.scope
    if not (scope.undecided and scope.keys) or parts.stories_named is None:
        return None
    named = parts.stories_named()
    if len(named) <= len(scope.documents):
        return None
    everywhere = replace(analysis, scope=Scope(documents=scope.choice, undecided=True))
    passages = parts.context.sentences(everywhere)
    stories = list(dict.fromkeys(p.document_id for p in passages))
    searched = "every story in scope: its names are ordinary words"
    lead = recorded_lead(trace, passages, stories, searched=searched)
    if lead.story is None or lead.story in scope.documents:
        return None
    ids = set(analysis.ids)
    keys = tuple(
        str(row["key"])
        for row in analysis.name_rows
        if row.get("document_id") == lead.story and row["id"] in ids and row.get("key")
    )
    name = named.get(lead.story, lead.story)
    held = Scope(keys=keys, documents=(lead.story,), note=f"{name}'s sentences lead every story's")
    return led_within(analysis, held, name, WIDER.format(story=name), story=lead.story)


def recorded_lead(
    trace: Trace, passages: Sequence[Passage], stories: Sequence[str], **detail: str
) -> Lead:
    """Which of `stories` the sentences found lead (qa/scope/story_lead.py), recorded in `trace`."""
    lead = story_lead(passages, stories)
    trace.record(
        "story lead",
        best={d: round(score, 3) for d, score in lead.best.items()},
        leading=lead.story,
        needed=STORY_LEAD,
        **detail,
    )
    return lead


def led_within(
    analysis: QuestionAnalysis, scope: Scope, name: str, told: str, *, story: str = ""
) -> tuple[QuestionAnalysis, Undecided]:
    """The question within the leading story's `scope`, with its head line (`name`) and the
    warning `told` saying why."""
    head = story_head(name, japanese=analysis.reply_language == "ja")
    return within(analysis, scope), Undecided(head=head, warnings=(told,), story=story)


def library_names(analysis: QuestionAnalysis, parts: QAParts) -> dict[str, str]:
    """The stories' names by document id when the question's scope is undecided (qa/scope/scope.py:
    it names no one, or only ordinary words) in a store of several stories; else empty (a
    single-story store's answers carry no story head line)."""
    if not analysis.scope.undecided or parts.stories_named is None:
        return {}
    named = parts.stories_named()
    return named if len(named) > 1 else {}
