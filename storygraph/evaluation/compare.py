"""One question through several retrieval modes, and what each adds or drops versus a baseline
(the Retrieval lab page draws this; no Streamlit here)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from storygraph.models import Answer
from storygraph.qa.pipeline.engine import QAEngine
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.retrieval.retrieval import canonical_mode

Triple = tuple[str, str, str]


@dataclass
class ModeRun:
    mode: str
    answer: Answer | None
    error: str = ""
    added: list[Triple] = field(default_factory=list)
    dropped: list[Triple] = field(default_factory=list)

    @property
    def kept(self) -> list[Triple]:
        return [f.key for f in self.answer.kept_facts] if self.answer else []

    def retrieval_detail(self) -> dict[str, Any]:
        if not self.answer:
            return {}
        return next((s.detail for s in self.answer.steps if s.name == "retrieval"), {})


def compare_modes(
    qa: QAEngine,
    question: str,
    modes: Sequence[str],
    options: QAOptions,
    *,
    baseline: str,
    start_entities: Sequence[str] | None = None,
) -> list[ModeRun]:
    """Ask once per mode (answers from the facts, not the model) and diff each against
    `baseline`'s kept facts. A mode that fails is reported, not raised."""
    runs: list[ModeRun] = []
    names = list(dict.fromkeys(canonical_mode(m) for m in [baseline, *modes]))
    for mode in names:
        try:
            answer = qa.ask(
                question,
                replace(options, mode=mode, compose_answer=False),
                start_entities=start_entities,
            )
            runs.append(ModeRun(mode, answer))
        except Exception as exc:  # noqa: BLE001 - one failing mode must not hide the others
            runs.append(ModeRun(mode, None, f"{type(exc).__name__}: {exc}"))
    base = set(runs[0].kept) if runs else set()
    for run in runs:
        kept = run.kept
        run.added = [t for t in kept if t not in base]
        run.dropped = sorted(t for t in base if t not in set(kept))
    wanted = {canonical_mode(m) for m in modes}
    return [r for r in runs if r.mode in wanted]
