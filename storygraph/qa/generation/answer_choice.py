"""Answers chosen, not written: for a question that asks for a character or a place, the small
embedded model picks one of the graph's names found in the sentences it reads, held to those
names by a GBNF grammar while it decodes (docs/ISSUES.md#chosen-names).

Options: the graph's entity names that occur in the shown sources (the kept facts' own sentences
and the sentence-search ones), in order of first occurrence, longest match first (鬼 inside
鬼の大将 is not a mention of 鬼), without the names the question itself contains, at most
`MAX_OPTIONS`; and the fixed "the sentences do not say" reply. The
answer is the chosen name and the number of the first shown source naming it ("犬 [2]"). The
engine uses it only where `fits` says so (a who / whom / with-whom / where question, two options
or more, a server that enforces grammars); every other question gets the free-text answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from storygraph.llm.grammar import choice_grammar
from storygraph.llm.request_body import capped_body
from storygraph.models import Citation, Fact
from storygraph.qa.generation.answer import UNKNOWN, TokenFn, prompt_messages
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.question_type import PERSON_KINDS
from storygraph.qa.retrieval.context import Sources
from storygraph.text.normalize import normalize_name

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

CHOICE_KINDS = PERSON_KINDS | {"where"}
"""Question kinds whose answer is a name of the graph: a character, or a place."""
MAX_OPTIONS = 12
CHOICE_MAX_TOKENS = 32


def _occurrences(name: str, text: str) -> list[int]:
    """Where the normalised `name` occurs in the normalised `text`; an ASCII name only as whole
    words."""
    if name.isascii():
        pattern = rf"(?<![a-z0-9]){re.escape(name)}(?![a-z0-9])"
        return [m.start() for m in re.finditer(pattern, text)]
    return [m.start() for m in re.finditer(re.escape(name), text)]


def options(
    analysis: QuestionAnalysis, shown: Sequence[Citation], graph_names: Sequence[str]
) -> list[str]:
    """The names a choice may pick (see the module doc), in order of first occurrence. A name
    seen only inside a longer one (鬼 in 鬼の大将, man in old man) is not offered."""
    question = analysis.folded
    asked = {normalize_name(i) for i in analysis.ids}
    keys = {name: normalize_name(name) for name in graph_names}
    longest_first = sorted((n for n in graph_names if keys[n]), key=lambda n: -len(keys[n]))
    found: dict[str, tuple[int, int]] = {}
    for rank, citation in enumerate(shown):
        text = normalize_name(citation.text)
        taken: list[tuple[int, int]] = []
        for name in longest_first:
            key = keys[name]
            for at in _occurrences(key, text):
                end = at + len(key)
                if any(at < e and s < end for s, e in taken):
                    continue
                taken.append((at, end))
                if key not in asked and key not in question and name not in found:
                    found[name] = (rank, at)
    return sorted(found, key=lambda n: found[n])[:MAX_OPTIONS]


def ask_choice(
    llm: BaseChatModel,
    analysis: QuestionAnalysis,
    shown: Sequence[Citation],
    choices: Sequence[str],
    callbacks: list[Any],
) -> str:
    """One model call over the `shown` sources, held by a grammar to the `choices` and the fixed
    "the sentences do not say" reply (`UNKNOWN`): the reply as written."""
    unknown = UNKNOWN[analysis.reply_language]
    messages = prompt_messages(
        "answer_choice",
        sources="\n".join(f"[{c.number}] {c.text}" for c in shown),
        question=analysis.question,
        options=" / ".join(choices),
        unknown=unknown,
    )
    body = capped_body(llm, CHOICE_MAX_TOKENS, grammar=choice_grammar([*choices, unknown]))
    reply = llm.invoke(messages, config={"callbacks": callbacks}, extra_body=body)
    content = reply.content if isinstance(reply.content, str) else str(reply.content)
    return content.strip()


@dataclass
class ChoiceAnswerer:
    """One constrained model call choosing the answer among the graph's names (module doc)."""

    llm: BaseChatModel
    graph_names: Callable[[], Sequence[str]]
    name: str = "llm-choice"
    calls_model: bool = True
    worked_examples: bool = False
    _last: tuple[tuple[str, tuple[str, ...]], list[str]] | None = field(
        default=None, init=False, repr=False
    )
    """The options of the last question asked (`fits`, then `answer`: the graph's names are
    read from the store once per question, not twice)."""

    def warm(self, language: str) -> bool:
        """Nothing read ahead: the choice's prompt is the free-text answer's fallback, off by
        default (module doc)."""
        return False

    def options_for(self, analysis: QuestionAnalysis, sources: Sources) -> list[str]:
        shown = sources.read
        key = (analysis.question, tuple(c.text for c in shown))
        last = self._last  # one read: another thread may replace it meanwhile
        if last is not None and last[0] == key:
            return list(last[1])
        found = options(analysis, shown, self.graph_names())
        self._last = (key, found)
        return list(found)

    def fits(self, analysis: QuestionAnalysis, sources: Sources) -> bool:
        """A question asking for a name, and at least two names to choose from."""
        if analysis.qtype.kind not in CHOICE_KINDS:
            return False
        return len(self.options_for(analysis, sources)) >= 2

    def answer(
        self,
        analysis: QuestionAnalysis,
        facts: Sequence[Fact],
        sources: Sources,
        callbacks: list[Any],
        on_token: TokenFn | None = None,
    ) -> str:
        shown = sources.read
        choices = self.options_for(analysis, sources)
        unknown = UNKNOWN[analysis.reply_language]
        picked = ask_choice(self.llm, analysis, shown, choices, callbacks)
        if picked == unknown:
            text = unknown
        elif picked in choices:
            key = normalize_name(picked)
            number = next(c.number for c in shown if _occurrences(key, normalize_name(c.text)))
            text = f"{picked} [{number}]"
        else:
            raise ValueError(f"the model's choice is none of the options: {picked[:40]!r}")
        if on_token is not None:
            on_token(text)
        return text
