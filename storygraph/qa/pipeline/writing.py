"""The generate step: the model's reply judged by the checks (storygraph.qa.generation.checks),
or the facts' answer without a model (`write`, `facts_written`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from storygraph.errors import error_text
from storygraph.models import CLOSEST_SHOWN, Fact
from storygraph.qa.generation.answer import Answerer, TokenFn, facts_answer, sentence_line
from storygraph.qa.generation.checks import judge_reply, nothing_found, unsupported_names
from storygraph.qa.pipeline.deadline import Deadline, DeadlinePassed
from storygraph.qa.pipeline.parts import QAParts
from storygraph.qa.pipeline.progress import phase
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.retrieval.context import Sources
from storygraph.qa.verify.support_text import NAMES_UNHELD


@dataclass(frozen=True)
class Written:
    """The answer step's value: the text, how it was written, how many sources it was written
    from, its warnings, and the names it brought in unsupported."""

    text: str
    method: str
    read: int
    warnings: tuple[str, ...] = ()
    unsupported: tuple[str, ...] = ()
    language: str = ""
    """The language the text is written in, as the checks read a model's reply; "": the
    question's reply language (the facts' answer and the fixed replies are written in it)."""
    cut: bool = False
    """The model's reply as far as it had come when the deadline passed (not judged)."""
    logprobs: tuple[float, ...] = ()
    """The model's log probability of each token it wrote
    (storygraph.qa.generation.answer.Reply)."""
    tokens: tuple[str, ...] = ()
    """The text of each of those tokens ("" where the server sent none)."""


def write(
    analysis: QuestionAnalysis,
    parts: QAParts,
    kept: Sequence[Fact],
    candidates: Sequence[Fact],
    sources: Sources,
    callbacks: list[Any],
    on_token: TokenFn | None,
    deadline: Deadline | None = None,
) -> Written:
    """The answer step: the model's reply judged by the checks (storygraph.qa.generation.checks),
    or, with
    no model, a failed one or nothing to read, the facts' answer. The model's streamed reply
    is read until the `deadline` (`Deadline.guard`): a reply cut there is kept as it is."""
    if not kept and not sources.citations:
        return facts_written(analysis, kept, candidates, sources, on_token)
    answerer: Answerer = parts.answerer
    if parts.chooser is not None and parts.chooser.fits(analysis, sources):
        answerer = parts.chooser
    warnings: list[str] = []
    if answerer.calls_model:
        emit = on_token if on_token is not None else (lambda _: None)
        said: list[str] = []
        streamed = deadline.guard(on_token, said) if deadline is not None else on_token
        phase("reading", len(sources.read))
        try:
            reply = answerer.answer(analysis, kept, sources, callbacks, streamed)
            judged = judge_reply(reply, analysis, sources, worked_examples=answerer.worked_examples)
            warnings.extend(judged.warnings)
            if judged.added:
                emit(judged.added)
        except DeadlinePassed:
            so_far = "".join(said).strip()
            # the reply as far as it came, shown unchecked (storygraph.qa.pipeline.deadline)
            if so_far:
                return Written(so_far, answerer.name, len(sources.read), cut=True)
        except Exception as exc:  # noqa: BLE001 - a model fault still yields an answer
            warnings.append(
                f"the model could not answer ({error_text(exc)}); showing the facts instead"
            )
        else:
            method = f"{answerer.name}, {CLOSEST_SHOWN}" if judged.added else answerer.name
            names = analysis.graph_names
            unsupported = unsupported_names(
                judged.text, names, kept, sources.citations, analysis.folded
            )
            if unsupported:
                warnings.append(NAMES_UNHELD + ", ".join(parts.reading.named(unsupported)))
            read = len(sources.read)
            return Written(
                judged.text, method, read, tuple(warnings), tuple(unsupported), judged.language,
                logprobs=tuple(getattr(reply, "logprobs", ())),
                tokens=tuple(getattr(reply, "tokens", ())),
            )  # fmt: skip
    written = facts_written(analysis, kept, candidates, sources, on_token)
    return replace(written, warnings=tuple(warnings))


def facts_written(
    analysis: QuestionAnalysis,
    kept: Sequence[Fact],
    candidates: Sequence[Fact],
    sources: Sources,
    on_token: TokenFn | None,
) -> Written:
    """The answer without a model: the kept facts' answer, else "nothing found" (pointing at
    the sentence-search sources when there are some), sent to `on_token`."""
    if not kept and not sources.citations:
        text, method, read = nothing_found(analysis, candidates), "nothing found", 0
    elif kept:
        text = facts_answer(analysis.language, kept, sources.citations)
        method, read = "facts", len(sources.read)
    else:
        # No fact, only sentence-search sources: say so, and point at those sentences.
        lines = sentence_line(sources.citations, japanese=analysis.reply_language == "ja")
        text = "\n".join([nothing_found(analysis, candidates), *lines])
        method, read = "facts", len(sources.read)
    if on_token is not None:
        on_token(text)
    return Written(text, method, read)
