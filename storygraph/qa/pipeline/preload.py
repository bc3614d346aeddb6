"""Load what a question needs besides the store and the model, ahead of the question: the
multilingual sentence encoder and Sudachi's dictionary (each loaded once per process and kept,
storygraph.text.embeddings / storygraph.text.normalize).

Loading them takes a new process one to a few seconds (the encoder's tokenizer is parsed in pure
Python, docs/ISSUES.md#encoder-load). `preload_in_background` starts that in a thread, so that it
overlaps what the caller waits for anyway: the CLI's `ask` opening the store (a separate server
process starting), the app's model server loading. The question's own steps take the same locks, so
they wait for a load in progress instead of starting a second one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)


def tokenizer_cache_dir(data_dir: Path) -> Path:
    """The data directory's folder for the encoder's parsed tokenizer."""
    return data_dir / "cache"


def load_question_models(data_dir: Path, report: Callable[[str], None] = lambda _t: None) -> None:
    """Load the sentence encoder (its tokenizer saved in / read back from the data directory's
    cache, storygraph.text.tokenizer_cache) and Sudachi's dictionary now; no-ops once loaded."""
    from storygraph.text.embeddings import default_embedder
    from storygraph.text.normalize import short_words

    report("loading the sentence encoder")
    embedder = default_embedder(tokenizer_cache_dir(data_dir))
    if embedder is not None:
        embedder.embed(["桃太郎"])
    report("loading the Japanese dictionary (Sudachi)")
    short_words("桃太郎")


def _load_quietly(data_dir: Path) -> None:
    try:
        load_question_models(data_dir)
    except Exception as exc:  # noqa: BLE001 - the question loads them itself and raises there
        log.warning("loading the sentence encoder ahead failed (%s); the question loads it", exc)


def preload_in_background(data_dir: Path) -> threading.Thread:
    """Start `load_question_models` in a daemon thread and return it."""
    thread = threading.Thread(
        target=_load_quietly, args=(data_dir,), name="question-models", daemon=True
    )
    thread.start()
    return thread
