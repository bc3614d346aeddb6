"""Relation-type selection for a question (the founding memo's Phase 3).

Candidates are narrowed to the relation types that fit the question's intent, chosen among the
types that exist in the graph. The model picks with structured output; the cheap fallback is
lexical: types whose words (storygraph.qa.question.relation_words) occur in the question, widened
to their
field of
meaning (companions → meeting, following). Whatever happens, nothing is ever filtered down to
nothing: without a usable pick the unfiltered set is kept, and the selection says why.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from storygraph.llm.replies import UnexpectedReply, string_list
from storygraph.models import Fact
from storygraph.prompt_files import fill
from storygraph.qa.question.relation_words import (
    mask_names,
    question_stems,
    related_stems,
    type_stems,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

MAX_PROMPT_TYPES = 200


class RelationTypePick(BaseModel):
    """The relation types that fit the question."""

    types: list[str] = Field(
        default_factory=list, description="relation types from the list, spelled exactly"
    )


@dataclass
class RelTypeSelection:
    """The chosen types; `filtered` is False when every type was kept (no usable pick)."""

    types: list[str]
    available: list[str]
    method: str
    filtered: bool
    reason: str = ""
    llm_types: tuple[str, ...] = ()
    lexical_types: tuple[str, ...] = ()

    def describe(self) -> str:
        if not self.filtered:
            return f"all {len(self.available)} types kept ({self.reason or self.method})"
        return f"{', '.join(self.types)} ({self.method})"


def lexical_pick(
    question: str,
    available: Sequence[str],
    names: Sequence[str] = (),
    stems: Iterable[str] | None = None,
) -> list[str]:
    """Types whose words, or the words of a type of the same field, occur in the question
    (outside the entity `names`); `stems`, when the analysis found them already, are used as
    they are."""
    direct = set(stems) if stems is not None else question_stems(mask_names(question, names))
    if not direct:
        return []
    wanted = related_stems(direct)
    return [t for t in available if type_stems(t) & wanted]


def llm_pick(
    question: str, available: Sequence[str], llm: BaseChatModel, callbacks: list[Any]
) -> list[str]:
    """The model's pick, reduced to types that exist (case-insensitive); raises on client faults
    and UnexpectedReply for a reply of another shape."""
    structured = llm.with_structured_output(RelationTypePick, method="function_calling")
    listed = "\n".join(f"- {t}" for t in available[:MAX_PROMPT_TYPES])
    result = structured.invoke(
        fill("reltype_pick", question=question, types=listed), config={"callbacks": callbacks}
    )
    if isinstance(result, RelationTypePick):
        return _listed(result.types, available)
    if isinstance(result, dict):
        return _listed(string_list(result.get("types"), "relation types"), available)
    raise UnexpectedReply(
        f"the model's reply is a {type(result).__name__}, not RelationTypePick: {result!r}"[:200]
    )


def _listed(raw: Sequence[Any], available: Sequence[str]) -> list[str]:
    """The model's picks reduced to types that exist (case-insensitive), in pick order."""
    by_upper = {t.upper(): t for t in available}
    picked: list[str] = []
    for item in raw:
        name = by_upper.get(str(item).strip().strip("`'\"").upper())
        if name and name not in picked:
            picked.append(name)
    return picked


def select_relation_types(
    question: str,
    available: Sequence[str],
    *,
    llm: BaseChatModel | None,
    callbacks: list[Any],
    names: Sequence[str] = (),
    model_pick: Sequence[str] | None = None,
    stems: Iterable[str] | None = None,
) -> RelTypeSelection:
    """Types fitting the question: the model's pick joined with the lexical pick.

    The union keeps a word-evidenced type the model overlooked (small models under-pick). Only a
    model pick filters: without one (no model, an empty or failed pick) every type is kept and
    the lexical pick is recorded for the trace; the scorers rank by the same words.
    """
    available = list(dict.fromkeys(available))
    lexical = lexical_pick(question, available, names, stems)
    picked: list[str] = []
    reason = ""
    method = "lexical"
    if model_pick is not None:  # already picked by the question-analysis call
        picked = _listed(model_pick, available)
        method = "llm + lexical" if picked else "lexical (the model picked no listed type)"
    elif llm is not None:
        try:
            picked = llm_pick(question, available, llm, callbacks)
            method = "llm + lexical" if picked else "lexical (the model picked no listed type)"
        except Exception as exc:  # noqa: BLE001 - any model fault: lexical fallback, say so
            method = "lexical fallback"
            reason = f"the model failed ({type(exc).__name__}: {exc})"
    if not picked:
        # Words alone are too weak a signal to drop candidates: a question's verb rarely names
        # the type a story's fact was stored under (measured on eval/e2e: filtering on the
        # lexical pick alone lost 4-10 points of answer accuracy). The pick still ranks: the
        # scorers reward these types' relation words.
        return RelTypeSelection(
            list(available),
            available,
            f"{method}, ranking only" if lexical else "unfiltered",
            False,
            reason or ("no model pick" if lexical else "no type fits the question's words"),
            tuple(picked),
            tuple(lexical),
        )
    chosen = [t for t in available if t in set(picked) | set(lexical)]
    return RelTypeSelection(chosen, available, method, True, reason, tuple(picked), tuple(lexical))


def apply_selection(
    facts: Sequence[Fact], selection: RelTypeSelection
) -> tuple[list[Fact], list[Fact], str]:
    """(kept, dropped, note): facts of the chosen types; all of them if none would remain."""
    if not selection.filtered:
        return list(facts), [], ""
    wanted = set(selection.types)
    kept = [f for f in facts if f.type in wanted]
    if not kept and facts:
        return (
            list(facts),
            [],
            "relation-type filter would drop every candidate; kept them all",
        )
    return kept, [f for f in facts if f.type not in wanted], ""
