"""Which stories a question is answered about, and how (`ScopeResolver.plan`): a question
whose names decide its story (or stories a user picked) is answered within its scope; over a
library, stories the names tie are answered one by one (`TIED`) unless one story's sentences lead
(`LED`); an undecided question's ordinary names, stories tied by them, or names the question
writes small that a story's capitals made its own (`Scope.spelled`), may be led by any story's
sentences (`WIDER`); a tale several stories tell is answered from them together
(`TELLINGS`); otherwise the sources are gathered first and the stories they came from decide
(`UNDECIDED`, `UNDECIDED_ONE`). The plan carries the head line and the warning that say so; in
a store of several stories, an answer the names settle carries its story's head line too
(`settled_story`), unless the user picked that story.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from storygraph.qa.question.analysis import QuestionAnalysis, for_stories, within
from storygraph.qa.retrieval.passages import Passage
from storygraph.qa.scope.per_story import (
    JOINED,
    cited_stories,
    source_scopes,
    story_head,
    story_scopes,
)
from storygraph.qa.scope.scope import Scope
from storygraph.qa.scope.story_lead import (
    SPELLED_LEAD,
    STORY_LEAD,
    Lead,
    led_scope,
    story_lead,
)

if TYPE_CHECKING:
    from storygraph.qa.pipeline.deadline import Deadline
    from storygraph.qa.pipeline.gathering import Gathered
    from storygraph.qa.pipeline.parts import QAParts
    from storygraph.qa.pipeline.trace import Trace

Gather = Callable[["QuestionAnalysis", "QAParts", "Trace", "Deadline"], "Gathered"]
"""The pipeline's retrieve step (storygraph.qa.pipeline.gathering.gather)."""

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
    "{count} stories hold this question's names alike; {story}'s "
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
class ScopePlan:
    """How a question is answered: story by story (`per_story`, two or more scopes, with the
    warning `told` naming them), else one answer within `analysis.scope`, under the head line
    of its story when the resolver chose one, with the warnings saying why."""

    analysis: QuestionAnalysis
    """The question as answered: within the leading story's scope when one leads."""
    per_story: tuple[Scope, ...] = ()
    told: str = ""
    """A per-story answer's warning (`TIED`, `UNDECIDED`), formatted with `count` and `stories`."""
    gathered: Gathered | None = None
    """The sources already gathered (an undecided question's, gathered to choose its story)."""
    head: str = ""
    warnings: tuple[str, ...] = ()
    story: str = ""
    """The one story the answer is about (its sources', or the leading one), when one."""

    @property
    def about(self) -> QuestionAnalysis:
        """The question the one answer is written for: within `story` when there is one."""
        return for_stories(self.analysis, (self.story,)) if self.story else self.analysis


class ScopeResolver:
    """Plans one question's answer over the stories in its scope (the module docstring), with
    the question's parts (the stories' names, sentence search), recording what it read in
    `trace`; `gather` is run first for a question whose names do not decide its story."""

    def __init__(self, parts: QAParts, trace: Trace, deadline: Deadline, gather: Gather) -> None:
        self.parts = parts
        self.trace = trace
        self.deadline = deadline
        self.gather = gather

    def plan(self, analysis: QuestionAnalysis) -> ScopePlan:
        scopes = story_scopes(analysis.scope)
        if self.deadline.over(self.trace, "retrieval"):
            return ScopePlan(analysis)
        if len(scopes) > 1:
            led = self.wider_lead(analysis, scopes) or self.leading_story(analysis, scopes)
            return led or ScopePlan(analysis, per_story=tuple(scopes), told=TIED)
        return (
            self.wider_lead(analysis)
            or self.tellings_story(analysis)
            or self.settled_story(analysis)
            or self.undecided_story(analysis)
        )

    def settled_story(self, analysis: QuestionAnalysis) -> ScopePlan | None:
        """A question whose names settle its story in a store of several, the user not having
        picked it: the answer carries that story's head line, so the reader sees which story it
        is about, and a story the names settled wrongly (a name one story writes inside another
        word) is named, not passed off as the asked one. None for any other scope."""
        scope = analysis.scope
        if scope.undecided or scope.picked or scope.tied or scope.tellings:
            return None
        named = self.several_stories()
        if len(scope.documents) != 1 or not named:
            return None
        story = scope.documents[0]
        return ScopePlan(analysis, head=head_line(analysis, named.get(story, story)))

    def undecided_story(self, analysis: QuestionAnalysis) -> ScopePlan:
        """The names do not say which story the question is about (a library, `library_names`):
        gather the sources first and say which story each is from."""
        named = self.library_names(analysis)
        if not named:
            return ScopePlan(analysis)
        gathered = self.gather(analysis, self.parts, self.trace, self.deadline)
        stories = cited_stories(gathered.sources.citations)
        if len(stories) > 1:
            scopes = tuple(source_scopes(analysis.scope, stories))
            return ScopePlan(analysis, per_story=scopes, told=UNDECIDED, gathered=gathered)
        if not stories:
            return ScopePlan(analysis, gathered=gathered)
        name = named.get(stories[0], stories[0])
        head = head_line(analysis, name)
        warnings = (UNDECIDED_ONE.format(story=name),)
        return ScopePlan(
            analysis, gathered=gathered, head=head, warnings=warnings, story=stories[0]
        )

    def tellings_story(self, analysis: QuestionAnalysis) -> ScopePlan | None:
        """A question naming a tale several stories tell (`Scope.tellings`): one answer from all
        of them, under one head line naming them; None for any other scope."""
        if not analysis.scope.tellings or self.parts.stories_named is None:
            return None
        named = self.parts.stories_named()
        names = [named.get(d, d) for d in analysis.scope.tellings]
        head = head_line(analysis, JOINED.join(names))
        told = TELLINGS.format(count=len(names), stories=", ".join(names))
        return ScopePlan(analysis, head=head, warnings=(told,))

    def leading_story(
        self, analysis: QuestionAnalysis, scopes: Sequence[Scope]
    ) -> ScopePlan | None:
        """Stories the question's names tie (`Scope.tied`: by ordinary words, or by names
        several stories hold alike, "the Princess" of two fairy tales): when one story's
        sentences lead the others' (qa/scope/story_lead.py), the question within that story's
        scope, with its head line and the warning naming it; None when none leads (the answer
        is written per story)."""
        if self.parts.stories_named is None:
            return None
        passages = self.parts.context.sentences(analysis)
        lead = self.recorded_lead(passages, analysis.scope.tied)
        scope = led_scope(scopes, lead.story) if lead.story is not None else None
        if scope is None or lead.story is None:
            return None
        name = self.parts.stories_named().get(lead.story, lead.story)
        return led_within(analysis, scope, name, LED.format(count=len(scopes), story=name))

    def wider_lead(
        self, analysis: QuestionAnalysis, scopes: Sequence[Scope] = ()
    ) -> ScopePlan | None:
        """A scope held by ordinary names alone (`Scope.choice`): undecided (one story's graph
        holds them), stories tied by them (`Scope.ordinary`, `scopes` the tied stories' own), or
        names the question writes small that only a story's capitals made its own
        (`Scope.spelled`: "the queen", which one fairy tale writes "the Queen").
        Another story's text may say them too without its graph holding them (親 is an entity of
        竹取物語; 「親がにを殺したのは誰？」 is about 猿蟹合戦, whose graph has no 親), and a tie
        of more than MAX_STORIES keeps only the first ones, so the sentences of every story the
        user chose are searched together (qa/scope/story_lead.py). When a story the names did
        not keep leads them all, the question is answered within that story, from its own
        entities of those names (none when it has none), under its name; when a tied story
        leads them all, within that story's own scope; otherwise None (the undecided scope
        stands, `undecided_story`; a tie is led among its own stories or answered per story)."""
        scope = analysis.scope
        if not ((scope.undecided or scope.ordinary or scope.spelled) and scope.keys):
            return None
        if self.parts.stories_named is None:
            return None
        named = self.parts.stories_named()
        if len(named) <= len(scope.documents):
            return None
        everywhere = replace(analysis, scope=Scope(documents=scope.choice, undecided=True))
        passages = self.parts.context.sentences(everywhere)
        stories = list(dict.fromkeys(p.document_id for p in passages))
        searched = "every story in scope: its names are ordinary words"
        needed = SPELLED_LEAD if scope.spelled else STORY_LEAD
        lead = self.recorded_lead(passages, stories, needed, searched=searched)
        if lead.story is None:
            return None
        if lead.story in scope.documents:
            tied = led_scope(scopes, lead.story) if scopes else None
            if tied is None:
                return None
            name = named.get(lead.story, lead.story)
            return led_within(analysis, tied, name, WIDER.format(story=name))
        ids = set(analysis.ids)
        keys = tuple(
            str(row["key"])
            for row in analysis.name_rows
            if row.get("document_id") == lead.story and row["id"] in ids and row.get("key")
        )
        name = named.get(lead.story, lead.story)
        note = f"{name}'s sentences lead every story's"
        held = Scope(keys=keys, documents=(lead.story,), note=note)
        return led_within(analysis, held, name, WIDER.format(story=name), story=lead.story)

    def recorded_lead(
        self,
        passages: Sequence[Passage],
        stories: Sequence[str],
        needed: float = STORY_LEAD,
        **detail: str,
    ) -> Lead:
        """Which of `stories` the sentences found lead (qa/scope/story_lead.py, by `needed`),
        recorded in the trace."""
        lead = story_lead(passages, stories, needed)
        self.trace.record(
            "story lead",
            best={d: round(score, 3) for d, score in lead.best.items()},
            leading=lead.story,
            needed=needed,
            **detail,
        )
        return lead

    def library_names(self, analysis: QuestionAnalysis) -> dict[str, str]:
        """The stories' names by document id when the question's scope is undecided
        (qa/scope/scope.py: it names no one, or only ordinary words) in a store of several
        stories; else empty (a single-story store's answers carry no story head line)."""
        return self.several_stories() if analysis.scope.undecided else {}

    def several_stories(self) -> dict[str, str]:
        """The stories' names by document id in a store of several stories; else empty (a
        single-story store's answers carry no story head line)."""
        if self.parts.stories_named is None:
            return {}
        named = self.parts.stories_named()
        return named if len(named) > 1 else {}


def led_within(
    analysis: QuestionAnalysis, scope: Scope, name: str, told: str, *, story: str = ""
) -> ScopePlan:
    """The question within the leading story's `scope`, with its head line (`name`) and the
    warning `told` saying why."""
    return ScopePlan(
        within(analysis, scope), head=head_line(analysis, name), warnings=(told,), story=story
    )


def head_line(analysis: QuestionAnalysis, name: str) -> str:
    """The head line naming `name` (a story, or tellings JOINED) in the reply's language."""
    return story_head(name, japanese=analysis.reply_language == "ja")
