"""Worked examples the small model reads before each question (docs/ISSUES.md#worked-examples).

A 1.5B model told only "answer from the sentences, or say they do not" mostly said they did not:
38 of 80 Japanese questions were refused, 18 of them with the answer in a sentence it read. Three
answered questions about a made-up story, shown as earlier turns of the conversation, teach what
the instructions could not: the answer is there, in other words than the question's; it is a few
words of a sentence with that sentence's number; and where nothing says it, the fixed reply.

`prompts/answer_small_examples_<lang>.txt` holds them: the example story's numbered sentences,
then `Q:` / `A:` lines. `{unknown}` in an answer is the fixed "the sentences do not say" reply.
The examples sit between the instructions and the question, so they are part of the fixed
prefix llama.cpp's server reuses from one question to the next: they cost prompt reading once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from storygraph.prompt_files import fill

_SENTENCE = re.compile(r"^\[(\d+)\] (.+)$")


@dataclass(frozen=True)
class Example:
    sources: str
    """The example story's numbered sentences, as the question's own are shown."""
    question: str
    answer: str


@lru_cache(maxsize=4)
def answer_examples(language: str, unknown: str) -> tuple[Example, ...]:
    """The worked examples for answers in `language` ("ja" / "en"), `{unknown}` filled in."""
    return parse_examples(fill(f"answer_small_examples_{language}", unknown=unknown), language)


def parse_examples(text: str, where: str = "") -> tuple[Example, ...]:
    """Examples from their file's text (module doc): numbered sentences, then Q: / A: lines;
    `#` lines are comments. Anything else is an error, not a silently shorter prompt."""
    sentences: list[str] = []
    pairs: list[list[str]] = []
    for line in text.splitlines():
        if _SENTENCE.match(line):
            sentences.append(line)
        elif line.startswith("Q: "):
            pairs.append([line[3:].strip()])
        elif line.startswith("A: ") and pairs and len(pairs[-1]) == 1:
            pairs[-1].append(line[3:].strip())
        elif line.strip() and not line.startswith("#"):
            raise ValueError(f"answer examples {where}: unexpected line {line!r}")
    if not sentences or not pairs or any(len(p) != 2 for p in pairs):
        raise ValueError(f"answer examples {where}: numbered sentences and Q: / A: pairs expected")
    story = "\n".join(sentences)
    return tuple(Example(story, q, a) for q, a in pairs)
