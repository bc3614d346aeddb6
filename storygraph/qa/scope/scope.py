"""A question's scope in a library of stories (issue #28, docs/ISSUES.md#story-scope).

The user picks the stories a question is about (the chat's story picker, `ask --story`), or all
of them. Within that choice:

- the entity finder sees only the names of the chosen stories (`names_in_scope`);
- the question's names then narrow it (`narrow`): each story is counted by how many of the
  question's proper names it has, and the stories with the most are kept; a name that is an
  ordinary word (親, 鬼, "the bone": qa/question/specific_names.py) says nothing about which story
  is
  meant, so such names only order the stories the proper names keep (the one holding most of
  them first), and decide only for a question with no proper name. A name only one story has
  scopes the question to that story (「桃太郎のおじいさん」: 桃太郎 is only in the 桃太郎
  stories, so their おじいさん, not 瘤とり's; 「金太郎が退治した鬼の名前は？」: 金太郎's story,
  although another story holds both 鬼 and 名前). Stories that tie are all kept (`Scope.tied`)
  and the answer is written per story, each part under its story's name (qa/scope/per_story.py),
  then
  the stories whose entity names hold most of the question's other content words first
  (「おじいさんが灰をまいたのは？」: 灰 is an entity of 花咲かじじい only); of more than
  MAX_STORIES, those first ones. The words used to drop the other tied stories: they picked the
  wrong one as often as the right one (git history of docs/ISSUES.md#per-story-answers has the
  variants measured);
- a story's own names also count for it (docs/ISSUES.md#story-scope): the words of its document's
  name the question holds ("In Akutagawa's story", 「芥川の「桃太郎」で」, "the grapes" of "The Fox
  and the Grapes": qa/question/story_titles.py), and an English word written small in the question
  that the story writes with a capital ("the fox" of a fable writing "the Fox":
  qa/question/specific_names.py), each a proper name of that story alone; a scope settled by
  such capitals alone (`Scope.spelled`) may still be led by another story's sentences (the
  queen of one fairy tale writing "the Queen" is any queen to a question writing her small);
- retrieval starts from the kept stories' entities only (their keys) and sentence search reads
  only the kept stories, so an answer never cites a story outside its scope;
- a question the names do not settle (`Scope.undecided`: it names no one, or only ordinary
  words) is answered from where its sources are (a question naming no one: sentence search
  in every story in scope), and the answer says which story each source is from
  (qa/scope/resolver.py:
  under its story's head line, per story when they are several).

Entities a user linked across stories (SAME_AS, storygraph.library.identity) start retrieval
together when the twin's story is within the user's choice.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from storygraph.errors import InputError
from storygraph.models import DocumentInfo
from storygraph.store.plan import key_document

MAX_STORIES = 2
"""Stories a question the names cannot settle may draw on (the first ones by document id). The
answer per story calls the model once a story: two keeps a question at two model calls."""


@dataclass(frozen=True)
class Scope:
    """Where a question's answer may come from."""

    keys: tuple[str, ...] = ()
    """The start entities' keys (empty: the question named no entity)."""
    documents: tuple[str, ...] = ()
    """The stories the answer may cite (empty: every story)."""
    note: str = ""
    """Why the scope is what it is, for the trace (empty when nothing was narrowed)."""
    tied: tuple[str, ...] = ()
    """The stories the question's names and words could not tell apart (2 to MAX_STORIES;
    empty when one story was kept): the answer is written per story (qa/scope/per_story.py)."""
    undecided: bool = False
    """The question's names do not settle its story: it names no one, or only ordinary words
    (qa/question/specific_names.py), no stories tie and the user did not pick one story. The answer
    says which story each source is from (qa/scope/resolver.py)."""
    ordinary: bool = False
    """The stories tie (`tied`) by ordinary words alone, no proper name among them: the
    stories' own sentences may still tell them apart (qa/scope/story_lead.py)."""
    choice: tuple[str, ...] = ()
    """The stories the user chose (empty: every story), kept for a scope held by ordinary
    names alone (undecided, or `ordinary`): another story's text may hold them too, and its
    sentences may fit the question better (qa/scope/story_lead.py, `wider_lead` in
    qa/scope/resolver.py)."""
    tellings: tuple[str, ...] = ()
    """Stories the question's proper names tie that are tellings of the tale the question
    names by title (its title words are in each story's name alike: 桃太郎 in
    momotaro_kusuyama.txt and momotaro_akutagawa.txt): answered once from all of them, under
    one head line naming them (`tied` is then empty; qa/scope/resolver.py)."""
    picked: bool = False
    """The user chose exactly one story (the chat's story picker, `ask --story`): the answer is
    about it, and says so by no head line."""
    spelled: bool = False
    """The question writes every name it found small (ordinary words), and only a story's own
    capitals made them its names ("the queen" of a story writing "the Queen"): the story is
    kept, but another story's sentences may fit the whole question better (`choice` is kept;
    `wider_lead` in qa/scope/resolver.py). A word of another story's title in the question
    ("the king" of "The Story of King Frost") is not the kept story's: it does not settle it."""


def story_ids(given: Sequence[str], documents: Sequence[DocumentInfo]) -> tuple[str, ...]:
    """The document ids of stories named by file name, name without extension, or id (the CLI's
    `--story`). Raises InputError naming the stories there are when one is unknown."""
    found: list[str] = []
    for story in given:
        wanted = story.strip()
        matches = [
            d.id
            for d in documents
            if wanted in (d.id, d.name) or wanted == d.name.rsplit(".", 1)[0]
        ]
        if not matches:
            known = ", ".join(sorted(d.name for d in documents)) or "(none yet)"
            raise InputError(f"no story called {wanted!r}.", f"The stories are: {known}")
        found.extend(matches)
    return tuple(dict.fromkeys(found))


def names_in_scope(
    names: Sequence[dict[str, Any]], stories: Sequence[str]
) -> Sequence[dict[str, Any]]:
    """The entity-name rows of the chosen stories (`names` itself when `stories` is empty: the
    same list, so the name index built from it is kept between questions; a copy rebuilt it
    every question, 0.2 s at 70,000 names)."""
    if not stories:
        return names
    chosen = set(stories)
    return [row for row in names if row.get("document_id") in chosen]


def _by_words(kept: list[str], names: Sequence[dict[str, Any]], terms: Sequence[str]) -> list[str]:
    """`kept` ordered by how many of `terms` their entity names hold (most first, then by
    document id): the order a per-story answer takes and which MAX_STORIES of more are kept."""
    if len(kept) < 2 or not terms:
        return kept
    wanted = set(kept)
    norms: dict[str, list[str]] = {}
    for row in names:
        document = str(row.get("document_id") or "")
        if document in wanted:
            norms.setdefault(document, []).append(str(row.get("norm") or ""))
    hits = {d: sum(any(t in n for n in norms.get(d, [])) for t in terms) for d in kept}
    return sorted(kept, key=lambda d: (-hits[d], d))


def narrow(
    found: Sequence[str],
    names: Sequence[dict[str, Any]],
    stories: Sequence[str],
    terms: Sequence[str] = (),
    common: Collection[str] = frozenset(),
    titled: Mapping[str, int] | None = None,
    named_in: Mapping[str, Collection[str]] | None = None,
) -> Scope:
    """The scope of a question whose found start names are `found` (see the module doc).

    `names`: the rows of `names_in_scope`; `stories`: the user's choice (empty: all); `terms`:
    the question's content words outside its names (QuestionAnalysis.terms); `common`: those
    of `found` that are ordinary words (qa/specific_names.common_names); `titled`: per story,
    the words of its document's name the question holds (qa/story_titles.titled), counted as
    proper names of that story; `named_in`: per story, those of `common` its text writes as
    names (qa/specific_names.named_in_stories), proper names of that story."""
    allowed = set(stories)
    picked = len(stories) == 1  # the user chose one story
    titles = {d: n for d, n in (titled or {}).items() if n and (not allowed or d in allowed)}
    if not found and not titles:
        return Scope(documents=tuple(stories), undecided=not picked, picked=picked)
    wanted = set(found)
    rows = [row for row in names if row["id"] in wanted and row.get("key")]
    holders: dict[str, set[str]] = {document: set() for document in titles}
    for row in rows:
        holders.setdefault(str(row.get("document_id") or ""), set()).add(row["id"])
    if not holders:
        return Scope(documents=tuple(stories), undecided=not picked, picked=picked)
    counts = {
        document: (
            len(ids - set(common))
            + len(ids & set((named_in or {}).get(document, ())))
            + titles.get(document, 0),
            len(ids) + titles.get(document, 0),
        )
        for document, ids in holders.items()
    }
    best = max(counts.values())
    if best[0]:  # proper names decide; ordinary words only order the stories they tie
        by_names = sorted(d for d, n in counts.items() if n[0] == best[0])
    else:
        by_names = sorted(d for d, n in counts.items() if n == best)
    ordered = _by_words(by_names, names, terms)
    kept = sorted(ordered, key=lambda d: -counts[d][1])[:MAX_STORIES]
    keys = [row["key"] for row in rows if str(row.get("document_id") or "") in kept]
    twins = [
        str(t)
        for row in rows
        if str(row.get("document_id") or "") in kept
        for t in row.get("twins") or []
        if not allowed or key_document(t) in allowed
    ]
    documents = list(dict.fromkeys([*kept, *(key_document(t) for t in twins)]))
    note = ""
    if len(kept) > 1:
        note = f"{len(by_names)} stories have its names; the answer is written for {len(kept)}"
        if len(by_names) > len(kept):
            note += ", those whose names hold most of its words"
    elif len(holders) > 1:
        note = f"scoped by its names to 1 of the {len(holders)} stories that have its names"
    tied = tuple(d for d in kept if d)
    undecided = best[0] == 0 and len(tied) < 2 and not picked  # not the user's one
    if undecided:
        note = "its names are ordinary words, not the story's own: each source labelled"
    ordinary = best[0] == 0 and len(tied) > 1
    spelled = (
        bool(best[0])
        and not any(titles.get(d, 0) for d in kept)
        and not set(found) - set(common)
        and not picked
    )
    tellings = tied if best[0] and len(tied) > 1 and one_tale(tied, titles) else ()
    if tellings:
        note = f"{len(tellings)} stories tell the tale its title names: answered from them together"
    return Scope(
        keys=tuple(dict.fromkeys([*keys, *twins])),
        documents=tuple(d for d in documents if d) or tuple(stories),
        note=note,
        tied=tied if len(tied) > 1 and not tellings else (),
        undecided=undecided,
        choice=tuple(stories) if undecided or ordinary or spelled else (),
        ordinary=ordinary,
        tellings=tellings,
        picked=picked,
        spelled=spelled,
    )


def one_tale(tied: Sequence[str], titles: Mapping[str, int]) -> bool:
    """Are the stories a question's proper names tie tellings of one tale it names by title:
    the question holds as many of each story's title words, at least one
    (qa/question/story_titles.py)?"""
    held = {titles.get(d, 0) for d in tied}
    return len(held) == 1 and min(held) > 0
