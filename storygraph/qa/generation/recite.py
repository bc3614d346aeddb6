"""An answer's source mark set to the sentence that holds its words (docs/ISSUES.md#recite).

The small model often writes the right words and the wrong mark: 「五日。[3]」 where source 3 is
another sentence and source 2 says 「それから五日もかかった」; "The baker. [4]" where only source 1
names the baker; or no mark at all. The reader is then pointed at a sentence that does not say
the answer, and the verifier judges the answer against it (the sentence it cites tells little of
what was asked; the self-check, shown that sentence, says no), so a right answer is withheld.

`recited` moves the mark: when one source the model read holds every unit of the answer's core
(storygraph.qa.verify.signals.units: Japanese bigrams, English stemmed content words) and no
source the answer cites holds as much of it, the answer cites that source instead (of several,
the one holding most of the question's own units, then the first read). The answer's words are
not changed; an answer whose words no read source holds whole keeps its marks. The move is
named in the trace (the "citation" step: the marks as written and the one set). The verifier's
evidence keeps the reply as the model wrote it (its tokens align with it) and reads the sources
the moved mark cites (storygraph.qa.verify.gate.evidence_of).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from storygraph.models import Citation
from storygraph.qa.generation.answer_core import SOURCE_MARK, answer_core, cited_numbers
from storygraph.qa.verify.signals import share_in, units

WHOLE = 0.999
"""The share of the core's units a source must hold to take the mark: all of them."""


@dataclass(frozen=True)
class Recited:
    """The answer with its mark moved, and what it cited before (for the trace)."""

    text: str
    source: int
    written: tuple[int, ...]


def recited(question: str, text: str, citations: Sequence[Citation], read: int) -> Recited | None:
    """`text` citing the read source (of `citations[:read]`) that holds its core whole
    (module doc); None when the marks stay (no such source, or a source it cites, read or not,
    holds the core as well)."""
    core = units(answer_core(text))
    sources = citations[:read]
    if not core or not sources:
        return None
    numbers = cited_numbers(text)
    cited = [c for c in citations if c.number in numbers]
    held = {c.number: units(c.text) for c in (*sources, *cited)}  # each source's units once
    share = {number: share_in(core, found) or 0.0 for number, found in held.items()}
    whole = [c for c in sources if share[c.number] >= WHOLE]
    if not whole:
        return None
    asked = units(question)
    # the most of the core, then of the question; max keeps the first read of equals
    best = max(whole, key=lambda c: (share[c.number], share_in(asked, held[c.number]) or 0.0))
    if any(share[c.number] >= share[best.number] for c in cited):
        return None  # a source it cites holds the core as well
    return Recited(_marked(text, best.number), best.number, tuple(sorted(numbers)))


def _marked(text: str, number: int) -> str:
    """`text` with its marks replaced by one `[number]` where the first stood (at its end when
    it had none)."""
    first = SOURCE_MARK.search(text)
    if first is None:
        return f"{text.rstrip()} [{number}]"
    head = SOURCE_MARK.sub("", text[: first.start()])
    tail = SOURCE_MARK.sub("", text[first.end() :])
    return f"{head}[{number}]{tail}"
