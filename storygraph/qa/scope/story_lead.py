"""One story's own sentences leading a tie of ordinary words (issue #28, docs/ISSUES.md#story-lead).

「正直なおじいさんとおばあさんの飼犬の名前は？」 names no one: おじいさん, おばあさん and 犬 are
ordinary words every folk tale holds, so the stories tie (qa/scope/scope.py, `Scope.ordinary`) and
the answer was written for each of them, a wrong story's part beside the right one's. The
stories' sentences can still tell them apart: sentence search over the tied stories together
(BM25 over the question's words, re-scored by meaning where an encoder is installed; one
scale, the best sentence's words at 1) gives each story its best sentence's score, and when
one story's leads every other's by STORY_LEAD (or only one story has a sentence at all), the
question is answered from that story alone, under its name, from its own best sources (the
joint search's other stories' sentences no longer crowd them out). Otherwise the tie stands
and the answer is written per story, as before. The same holds for stories a name ties that each
holds alike ("the Princess" of two fairy tales, a title each writes as a name): the one whose
sentences hold the rest of the question leads. A tale several stories tell, named by its title,
is answered from them together instead (`Scope.tellings`, no tie).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from storygraph.qa.retrieval.passages import Passage
from storygraph.qa.scope.scope import Scope

STORY_LEAD = 1.25
"""How many times the second story's best sentence score the leading story's must reach."""
SPELLED_LEAD = 1.0
"""The same for a scope only a story's capitals settled (`Scope.spelled`: "the princess" of a
question, one fairy tale writing "the Princess"): the capitals are no evidence that the question
is about that story rather than another telling of a princess, so the story whose sentences fit
the whole question best leads, by any margin."""


@dataclass(frozen=True)
class Lead:
    """The joint search's verdict: the leading story (None: none leads) and each story's best
    sentence score, for the trace."""

    story: str | None
    best: dict[str, float]


def story_lead(
    passages: Sequence[Passage], tied: Sequence[str], needed: float = STORY_LEAD
) -> Lead:
    """Which of the `tied` stories the sentences found over all of them lead (module doc):
    the best sentence's story, when it scores `needed` times the next story's best."""
    best: dict[str, float] = {}
    for passage in passages:
        if passage.document_id in tied:
            best[passage.document_id] = max(best.get(passage.document_id, 0.0), passage.score)
    ranked = sorted(best.items(), key=lambda kv: -kv[1])
    if not ranked or ranked[0][1] <= 0:
        return Lead(None, best)
    first, second = ranked[0][1], ranked[1][1] if len(ranked) > 1 else 0.0
    if first > second and first >= needed * second:
        return Lead(ranked[0][0], best)
    return Lead(None, best)


def led_scope(scopes: Sequence[Scope], story: str) -> Scope | None:
    """The per-story scope (qa/per_story.story_scopes) of the leading story."""
    return next((s for s in scopes if s.documents and s.documents[0] == story), None)
