"""What the support step reads of the answer's words: the sources it cites, and whether it
declines.
"""

from __future__ import annotations

from collections.abc import Sequence

from storygraph.models import Citation
from storygraph.qa.generation.answer import REFUSALS
from storygraph.qa.generation.answer_core import (
    cited_numbers,
)
from storygraph.qa.generation.checks import says_unknown
from storygraph.text.normalize import normalize_name


def cited_sources(answer: str, citations: Sequence[Citation]) -> list[Citation]:
    """The sources `answer` cites by number, in the citations' order."""
    numbers = cited_numbers(answer)
    return [c for c in citations if c.number in numbers]


def declines(answer: str) -> bool:
    """Does the answer decline (the fixed reply, or the model's own words for it)? Nothing
    is named then, and nothing to check."""
    folded = normalize_name(answer)
    return says_unknown(answer) or any(r in folded for r in REFUSALS)
