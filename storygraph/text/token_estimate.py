"""How many prompt tokens a text costs the embedded model, estimated without its tokenizer.

Measured 2026-11-22 with `python -m benchmarks --only calibrate` (benchmarks/calibrate.py): the
embedded Qwen2.5-Coder-1.5B-Instruct's own tokenizer (llama.cpp, vocabulary only) over every
200-character chunk of shared/stories gave 0.71 tokens a character for Japanese text and 0.24
for English. Other tokenizers (OpenAI's) differ by about ±20 %.

`estimated_tokens` prices each character by its script (non-ASCII at the Japanese rate, ASCII
at the English one), so a Japanese sentence with an English name in it, or the reverse, is
priced by what it is made of. Reading a prompt costs the 2-core machine time in proportion
(design §6: 66 prompt tokens a second on an idle machine).
"""

from __future__ import annotations

TOKENS_PER_CHAR: dict[str, float] = {"ja": 0.71, "en": 0.24}


def estimated_tokens(text: str) -> float:
    """The embedded model's prompt tokens for `text`, estimated (module doc)."""
    wide = sum(1 for ch in text if not ch.isascii())
    return wide * TOKENS_PER_CHAR["ja"] + (len(text) - wide) * TOKENS_PER_CHAR["en"]
