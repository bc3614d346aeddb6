"""An answer's core: the answer without its source marks and its closing copula and punctuation
(「猿です。[1]」 → 猿), for the readers that check or render a written answer.

One place knows the marks (`SOURCE_MARK`), the copulas an answer closes with (`COPULAS`) and its
closing punctuation (`CLOSING_STOPS`); `answer_core` cuts them. Its readers differ, and each
says how by its arguments or by what it does around the call (tests/unit/test_answer_core.py
pins each one's result):

- the English rendering (storygraph.qa.generation.answer_crosslang) cuts any run of copulas, stops,
commas
  and spaces at the end (the defaults);
- the support check (storygraph.qa.verify.support) closes a mark up without a space (犬[1]と猿 →
犬と
  猿), cuts one of `WRITTEN_COPULAS` before the stops, then drops English lead words ("it was")
  and trims commas and stops at both ends;
- the reply checks (storygraph.qa.generation.checks) normalise the answer (normalize_name) before
one of
  `SHORT_COPULAS` is cut, and compare the result with names and examples.

The strict scorer (storygraph.evaluation.answer_scoring.answer_core) reads an answer's core with
its own code on purpose: what scores the app shares no code with what it scores.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

SOURCE_MARK = re.compile(r"\[\d+\]|\(\d+\)")
"""A source number an answer cites ([1], or (1) as the small model sometimes writes it)."""
COPULAS = ("です", "でした", "でしょう", "である", "だった", "だ")
"""Every copula an answer closes with (猿です, 猿だった, 猿でしょう)."""
WRITTEN_COPULAS = ("です", "でした", "だ", "である")
"""The present and polite past copulas, plain, polite and written (である)."""
SHORT_COPULAS = WRITTEN_COPULAS[:3]
"""です, でした, だ: the copulas of a one-word answer of the worked examples."""
CLOSING_STOPS = "。.!！"
"""The stops that close an answer."""
CLOSING_RUN = CLOSING_STOPS + "、"
"""What a run of closings may hold besides copulas and spaces (a trailing comma too)."""
ENGLISH_LEAD = re.compile(r"^(?:it was|it is|they were|the answer is)\s+", re.IGNORECASE)
"""The words an English answer may open with before what it names ("It was the monkey")."""


def cited_numbers(answer: str) -> set[int]:
    """The source numbers `answer` cites ([2] and (2) alike)."""
    return {int(mark.group().strip("[]()")) for mark in SOURCE_MARK.finditer(answer)}


def without_marks(text: str, gap: str = " ") -> str:
    """`text` with each source mark replaced by `gap`."""
    return SOURCE_MARK.sub(gap, text)


def answer_core(
    answer: str,
    *,
    copulas: Sequence[str] = COPULAS,
    run: bool = True,
    gap: str = " ",
) -> str:
    """`answer` without its source marks (each replaced by `gap`) and its closing, trimmed of
    spaces: with `run`, any run of `copulas`, `CLOSING_RUN` and spaces at the end (「猿です 。」
    → 猿); else one of `copulas` followed by `CLOSING_STOPS` only (「猿です 。」 → 猿です)."""
    text = without_marks(answer, gap).strip()
    return _closing(tuple(copulas), run).sub("", text).strip()


@lru_cache(maxsize=8)
def _closing(copulas: tuple[str, ...], run: bool) -> re.Pattern[str]:
    said = "|".join(re.escape(c) for c in copulas)
    if run:
        return re.compile(rf"(?:{said}|[{re.escape(CLOSING_RUN)}\s])+$")
    return re.compile(rf"(?:{said})?[{re.escape(CLOSING_STOPS)}]*$")
