"""How an answer came about, in words a reader of the chat understands.

`plain_trace(answer)` is the short story shown first under an answer ("Found 桃太郎 by name in
the question; 31 facts of the graph touch it; …; the answer used [10]."); the technical trace
(mode, question type, Cypher, ids, timings) stays in the Answer and the app shows it behind a
"details" expander.

Scores: the reranker scores each fact 0-10 and the question-type stage then adds up to ± a few
points (storygraph.qa.retrieval.type_priors.fact_prior), so a stored score may leave 0-10 (13.0,
-2.0).
Ranking
uses the stored value; `score_text` shows it clamped to the documented 0-10 scale, and "–" for a
fact that was never scored (set aside by the relation-type stage). The score is for developers
only: scores of one question often lie within a tenth of each other (2.7-2.8), so a reader sees
each fact's rank and, in words, why it was kept or set aside (`fact_lines`), with the story's own
verb (storygraph.library.relation_labels) and its evidence sentence whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from storygraph.humanize import plural
from storygraph.library.relation_labels import relation_label
from storygraph.models import CITATION_MARK, CLOSEST_SHOWN, Answer, Citation, Fact, ResolvedEntity
from storygraph.qa.retrieval.context import MAX_SOURCE_CHARS

SCORE_MIN = 0.0
SCORE_MAX = 10.0
_HOW = {
    "dictionary": "by name",
    "llm": "named by the model",
    "fuzzy": "by a close spelling",
    "given": "as given",
    "embedding": "by a similar name (embeddings)",
    "normalised": "by name (normalised)",
    "transliteration": "by its reading",
    "contained": "as part of a longer name",
}
QUESTION_KINDS = {
    "who_did": "asks who did it",
    "who_was_done_to": "asks to whom it was done",
    "with_whom": "asks with whom",
    "where": "asks where",
    "when": "asks when",
    "what": "asks what",
    "who": "asks who",
}


def shown_score(score: float | None) -> float | None:
    """The score on the documented 0-10 scale (clamped), None when there is none."""
    if score is None:
        return None
    return min(SCORE_MAX, max(SCORE_MIN, float(score)))


def score_text(score: float | None) -> str:
    shown = shown_score(score)
    return "–" if shown is None else f"{shown:.1f}"


def cited_numbers(answer: Answer) -> list[int]:
    """Citation numbers the answer's text uses, in order of first use (unknown numbers left out)."""
    known = {c.number for c in answer.citations}
    seen: list[int] = []
    for match in CITATION_MARK.finditer(answer.answer):
        number = int(match.group(1))
        if number in known and number not in seen:
            seen.append(number)
    return seen


def split_citations(answer: Answer) -> tuple[list[Citation], list[Citation]]:
    """(the sources the text cites, the other sources the kept facts came from)."""
    cited = set(cited_numbers(answer))
    used = [c for c in answer.citations if c.number in cited]
    rest = [c for c in answer.citations if c.number not in cited]
    return used, rest


def _entity(e: ResolvedEntity) -> str:
    how = _HOW.get(e.source, e.source)
    if e.mention and e.mention != e.node_id and e.source not in ("dictionary", "given"):
        return f"{e.node_id} ({how}, from “{e.mention}”)"
    return f"{e.node_id} {how}"


def _names(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _step_detail(answer: Answer, name: str) -> dict[str, object]:
    return next((s.detail for s in answer.steps if s.name == name), {})


def plain_trace(answer: Answer) -> str:
    """What was found, how many facts, how many kept, what was cited: one sentence a reader
    reads ("Found 桃太郎 by name in the question; 31 facts of the graph touch it; the best 4
    were kept; the answer used [1][2].")."""
    parts: list[str] = []
    if answer.entities:
        parts.append("Found " + _names([_entity(e) for e in answer.entities]) + " in the question")
    else:
        parts.append("Found no name of the graph in the question")
    candidates = len(answer.facts)
    it = "it" if len(answer.entities) == 1 else "them"
    if answer.entities:
        touch = "touches" if candidates == 1 else "touch"
        parts.append(f"{plural(candidates, 'fact')} of the graph {touch} {it}")
    set_aside = sum(1 for f in answer.facts if f.score is None and not f.kept)
    if set_aside:
        parts.append(f"{set_aside} {_was(set_aside)} set aside as the wrong kind of relation")
    if candidates:
        kept = len(answer.kept_facts)
        parts.append(f"{kept} {_was(kept)} kept for the answer")
    sentences = sum(1 for c in answer.citations if c.kind == "sentence")
    if sentences:
        parts.append(f"sentence search added {plural(sentences, 'story sentence')}")
    if answer.rerank_fell_back:
        parts.append("the model's scores were unusable, so word matching ranked them")
    method = _step_detail(answer, "answer").get("method")
    cited = cited_numbers(answer)
    if method == "facts":
        parts.append("no model wrote the answer: it lists the kept facts")
    elif cited:
        parts.append("the answer used " + "".join(f"[{n}]" for n in cited))
    elif answer.citations:
        parts.append("the answer cites none of the sources")
    over = _step_detail(answer, "deadline")  # storygraph.qa.pipeline.deadline
    if over:
        parts.append(
            f"the {over.get('ran_over')} step ended past the answer's deadline "
            f"({over.get('deadline_s'):g} s): the steps after it were skipped"
        )
    return "; ".join(parts) + "."


def _was(count: int) -> str:
    return "was" if count == 1 else "were"


def answer_method_text(method: str) -> str:
    """How the answer was written (the answer step's `method`), in words."""
    if method.startswith("llm-choice"):
        text = "a name chosen by the model"
    elif method.startswith("llm"):
        text = "written by the model"
    elif method == "facts":
        return "the top facts"
    else:
        return method or "–"
    if CLOSEST_SHOWN in method:
        text += ", which found no answer there (the closest sentence is shown)"
    return text


def question_kind(answer: Answer) -> str:
    """The question type in words ("asks who did it"), "" when the mode has no +qtype."""
    described = str(_step_detail(answer, "retrieval").get("question_type") or "")
    kind = described.split(" ", 1)[0]
    return QUESTION_KINDS.get(kind, "")


@dataclass(frozen=True)
class FactLine:
    """One candidate fact as a reader sees it under an answer."""

    rank: int | None
    """1 for the best-scored fact; None for a fact never scored."""
    words: str
    """The fact with the story's verb: 桃太郎 → 家来にする → 犬."""
    why: str
    """"kept: …" or "set aside: …", in plain words."""
    evidence: str
    """The sentence the fact comes from, whole."""
    kept: bool


_ASIDE = {
    "below minimum score": "scored below the least a fact must score to be used",
    "relation type does not fit the question": "not the kind of act the question asks about",
    "relation does not fit the question's words": "not the act the question's words name",
}
"""Set-aside reasons of the scoring stages (storygraph.qa.retrieval.scoring,
storygraph.qa.pipeline.gathering) in a reader's words; "beyond top-k" is worded with its number."""
UNRANKED = "not ranked: the answer's deadline passed"


def fact_words(fact: Fact) -> str:
    """A fact as a reader reads it: 桃太郎 → 家来にする → 犬 (the story's verb, never its type)."""
    return f"{fact.start} → {relation_label(fact.type, fact.evidence)} → {fact.end}"


def fact_ranks(facts: Sequence[Fact]) -> dict[int, int]:
    """Rank (1 = best) of each scored fact, by position in `facts`; ties keep their order."""
    scored = [i for i, f in enumerate(facts) if f.score is not None]
    ordered = sorted(scored, key=lambda i: -(facts[i].score or 0.0))
    return {i: rank for rank, i in enumerate(ordered, start=1)}


def _kept_why(fact: Fact, names: Sequence[str], asked: Sequence[str], top: int) -> str:
    if fact.reason == UNRANKED:
        return "kept unranked: time ran out before the facts could be ranked"
    named = [n for n in names if n in (fact.start, fact.end)]
    said: list[str] = []
    if named:
        said.append("names " + _names(named))
    if fact.type in asked:
        said.append("the asked act")
    if said:
        return "kept: " + " and ".join(said)
    return f"kept: among the {top} best for this question"


def _aside_why(fact: Fact, top: int) -> str:
    if fact.reason == "beyond top-k":
        return f"set aside: below the top {top}"
    return "set aside: " + _ASIDE.get(fact.reason, fact.reason or "not used")


def fact_lines(answer: Answer) -> list[FactLine]:
    """The answer's candidate facts, kept ones first, each by rank: its number, the fact in
    the story's verbs, why it was kept or set aside, and its whole evidence sentence."""
    lines = facts_in_words(answer)
    last = len(lines) + 1
    return sorted(lines, key=lambda line: (not line.kept, line.rank or last))


def facts_in_words(answer: Answer) -> list[FactLine]:
    """`fact_lines` in the order of `answer.facts` (one line per fact)."""
    ranks = fact_ranks(answer.facts)
    names = [e.node_id for e in answer.entities]
    asked = [str(t) for t in _step_detail(answer, "retrieval").get("asked_types") or []]
    rerank = _step_detail(answer, "rerank")
    top = int(str(rerank.get("top_k") or 0)) or len(answer.kept_facts)
    return [
        FactLine(
            ranks.get(i),
            fact_words(f),
            _kept_why(f, names, asked, top) if f.kept else _aside_why(f, top),
            f.evidence,
            f.kept,
        )
        for i, f in enumerate(answer.facts)
    ]


def rank_text(rank: int | None) -> str:
    return "–" if rank is None else str(rank)


SENTENCE_ENDS = "。！？!?.\n"
CLOSING = "」』）)\"'"
CUT_MARK = " …"
"""Marks a source shown up to its last whole sentence: the rest was never kept."""


def at_sentence_end(text: str) -> str:
    """`text` up to its last sentence end (with a closing quote after it) and the cut mark;
    `text` as it is when it has no sentence end."""
    end = max(text.rfind(ch) for ch in SENTENCE_ENDS) + 1
    if end <= 0:
        return text
    while end < len(text) and text[end] in CLOSING:
        end += 1
    return text[:end].rstrip() + CUT_MARK


def source_text(answer: Answer, citation: Citation) -> str:
    """A source as a reader sees it: a fact with no story sentence in the story's verbs (not
    its "A -[TYPE]-> B" line); a sentence whole, from the fact or the sentence search that
    found it (the model read it cut at storygraph.qa.retrieval.context.MAX_SOURCE_CHARS); a
    chunk's text, which the answer keeps only cut, up to its last whole sentence."""
    if citation.kind == "graph":
        own = next((f for f in answer.facts if f.text() == citation.text), None)
        return fact_words(own) if own is not None else citation.text
    found = _step_detail(answer, "sentences").get("found")
    passages = (
        [str(p.get("text") or "") for p in found if isinstance(p, dict)]
        if isinstance(found, list)
        else []
    )
    evidence = [f.evidence for f in answer.facts if citation.chunk_id in f.chunk_ids]
    whole = [t for t in [*evidence, *passages] if t.startswith(citation.text)]
    longest = max(whole, key=len, default="")
    if len(longest) > len(citation.text):
        return longest
    if len(citation.text) >= MAX_SOURCE_CHARS:
        return at_sentence_end(citation.text)
    return citation.text
