"""How an answer came about, in words a reader of the chat understands.

`plain_trace(answer)` is the one-line story shown first under an answer ("found 桃太郎 by name;
27 facts touch it; kept 15; the answer used [10]"); the technical trace (mode, question type,
Cypher, ids, timings) stays in the Answer and the app shows it behind a "details" expander.

Scores: the reranker scores each fact 0-10 and the question-type stage then adds up to ± a few
points (storygraph.qa.retrieval.type_priors.fact_prior), so a stored score may leave 0-10 (13.0,
-2.0).
Ranking
uses the stored value; `score_text` shows it clamped to the documented 0-10 scale, and "–" for a
fact that was never scored (set aside by the relation-type stage).
"""

from __future__ import annotations

from collections.abc import Sequence

from storygraph.humanize import plural
from storygraph.models import CITATION_MARK, CLOSEST_SHOWN, Answer, Citation, ResolvedEntity

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
    """One sentence-like line: what was found, how many facts, how many kept, what was cited."""
    parts: list[str] = []
    if answer.entities:
        parts.append("found " + _names([_entity(e) for e in answer.entities]))
    else:
        parts.append("found no name of the graph in the question")
    candidates = len(answer.facts)
    it = "it" if len(answer.entities) == 1 else "them"
    if answer.entities:
        parts.append(f"{plural(candidates, 'fact')} touch{'es' if candidates == 1 else ''} {it}")
    set_aside = sum(1 for f in answer.facts if f.score is None and not f.kept)
    if set_aside:
        parts.append(f"{set_aside} set aside as the wrong kind of relation")
    if candidates:
        parts.append(f"kept {len(answer.kept_facts)}")
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
    return "; ".join(parts)


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
