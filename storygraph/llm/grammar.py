"""GBNF grammars for a model server that enforces them while decoding (llama.cpp's, the embedded
model's: `ModelInfo.grammar_constrained`). Ingest's fact checks and the chosen answer
(storygraph.qa.generation.answer_choice) build theirs here, so neither wing imports the other."""

from __future__ import annotations

import json
from collections.abc import Sequence


def choice_grammar(choices: Sequence[str]) -> str:
    """A GBNF grammar whose only sentences are the `choices`, spelled exactly."""
    if not choices:
        raise ValueError("a choice grammar needs at least one choice")
    return "root ::= " + " | ".join(json.dumps(c, ensure_ascii=False) for c in choices)
