"""An answer per story when several stories fit a question equally (issue #28, qa/scope/scope.py).

In a library, 「おじいさんは誰と暮らしている？」 asked over all stories fits every story with an
おじいさん; the question's names and words cannot say which one is meant. The engine then answers
for each tied story on its own (at most scope.MAX_STORIES): each part is retrieved, ranked,
read and written from that story's entities and sentences only, and the answer is the parts in
turn, each under a head line naming its story (`story_head`), its citation marks numbered on
from the part before. So every citation sits under the story it cites, and the user can see
which story each part is about (and pick one with the story picker).

`split_by_story` reads an answer's text back into its parts by those head lines (the evaluation
counts citations outside their own story's part with it), so the format lives in one place.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from storygraph.models import CITATION_MARK, Citation, Support
from storygraph.qa.scope.scope import MAX_STORIES, Scope
from storygraph.store.plan import key_document

_HEAD = re.compile(r"^(?:【(?P<ja>[^】\n]+)】|── (?P<en>[^\n]+) ──)$", re.M)


JOINED = " / "
"""Between the stories' names in the head line of an answer drawn from several tellings of
one tale (`Scope.tellings`); a file name never holds a slash."""


def story_head(name: str, *, japanese: bool) -> str:
    """The line that opens a story's part of the answer (`name`: its story's name, or the
    names of the tellings it is drawn from, JOINED)."""
    return f"【{name}】" if japanese else f"── {name} ──"


def story_scopes(scope: Scope) -> list[Scope]:
    """One scope per tied story (`Scope.tied`), or the scope itself when no stories tie.

    Each part starts from its story's entity keys, plus the keys of entities a user linked to
    them in stories that did not tie (SAME_AS twins), and cites only those stories."""
    if len(scope.tied) < 2:
        return [scope]
    tied = set(scope.tied)
    twins = [k for k in scope.keys if key_document(k) not in tied]
    return [
        Scope(
            keys=(*(k for k in scope.keys if key_document(k) == story), *twins),
            documents=tuple(dict.fromkeys([story, *(key_document(k) for k in twins)])),
            note=f"one of the {len(scope.tied)} stories that fit, answered on its own",
        )
        for story in scope.tied
    ]


def cited_stories(citations: Sequence[Citation]) -> list[str]:
    """The document ids of the stories `citations` cite, in the order first cited (a chunk id
    starts with its document's id; a fact with no chunk cites none)."""
    return list(dict.fromkeys(key_document(c.chunk_id) for c in citations if c.chunk_id))


def source_scopes(scope: Scope, stories: Sequence[str]) -> list[Scope]:
    """One scope per story an undecided question's sources came from (`Scope.undecided`; the
    first MAX_STORIES, in the order first cited): each starts from its story's start entities
    only (none when the story has none of them) and cites only that story."""
    return [
        Scope(
            keys=tuple(k for k in scope.keys if key_document(k) == story),
            documents=(story,),
            note=f"one of the {len(stories)} stories its sources came from, answered on its own",
        )
        for story in stories[:MAX_STORIES]
    ]


def renumbered(text: str, citations: Sequence[Citation], offset: int) -> tuple[str, list[Citation]]:
    """A part's text and citations with every number moved on by `offset`. A mark naming none
    of the part's own sources (a model writing [9] beside 8 sources) is dropped: moved on, it
    would name another story's source in this story's part."""
    own = {c.number for c in citations}

    def moved(mark: re.Match[str]) -> str:
        number = int(mark.group(1))
        return f"[{number + offset}]" if number in own else ""

    return CITATION_MARK.sub(moved, text), [replace(c, number=c.number + offset) for c in citations]


def moved_support(support: Support, offset: int) -> Support:
    """A part's support verdict with its source numbers moved on by `offset`."""
    if not offset:
        return support
    return replace(support, source=support.source + offset if support.source is not None else None)


def split_by_story(text: str) -> list[tuple[str | None, str]]:
    """An answer's text as (story name, part) pairs by its head lines; text before the first
    head (all of it, for an answer about one story) has the name None."""
    parts: list[tuple[str | None, str]] = []
    name: str | None = None
    start = 0
    for head in _HEAD.finditer(text):
        if head.start() > start or name is not None:
            parts.append((name, text[start : head.start()]))
        name = head.group("ja") or head.group("en")
        start = head.end()
    parts.append((name, text[start:]))
    return [(n, part) for n, part in parts if n is not None or part.strip()]


def misplaced_citations(text: str, citations: Sequence[Citation], own: str) -> list[Citation]:
    """The citations of a story other than `own` that the reader does not see under that
    story's head line: marked in a part headed by another story or by none. A source listed
    without a mark belongs to its own story's part when the answer has one (a part's sources
    are its story's, numbered on from the part before: jaf:issunboshi:08's 桃太郎 (Kusuyama)
    part marked only its source [12], and its unmarked sources 6-11 were counted in the part
    before, whose last mark was [1]); else to the part its number falls in (a linked twin's
    story, answered within another story's part), or to none in an answer about one story (no
    head line), which cites another story only by mistake."""
    parts = split_by_story(text)
    under: dict[int, str | None] = {}
    for name, part in parts:
        for mark in CITATION_MARK.finditer(part):
            under.setdefault(int(mark.group(1)), name)
    marked = sorted(under)

    def part_of(number: int) -> str | None:
        if number in under:
            return under[number]
        earlier = [m for m in marked if m < number]
        return under[earlier[-1]] if earlier else under[marked[0]] if marked else None

    headed = {n for name, _ in parts if name for n in name.split(JOINED)}

    def under_its_name(citation: Citation) -> bool:
        if citation.number not in under and citation.document_name in headed:
            return True
        head = part_of(citation.number)
        return head is not None and citation.document_name in head.split(JOINED)

    return [
        c for c in citations if c.document_name and c.document_name != own and not under_its_name(c)
    ]
