"""Prompts live in `prompts/*.txt`; this loads one by name and checks its placeholders."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
_PLACEHOLDER = re.compile(r"(?<!\{)\{([a-z_]+)\}(?!\})")


def placeholders(text: str) -> set[str]:
    return set(_PLACEHOLDER.findall(text))


@lru_cache(maxsize=64)
def load_prompt(name: str, *, expects: frozenset[str] = frozenset()) -> str:
    """The text of `prompts/<name>.txt`; fails fast if its placeholders differ from `expects`."""
    path = PROMPTS_DIR / f"{name}.txt"
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"prompt {name!r} not found at {path}") from exc
    found = placeholders(text)
    if found != set(expects):
        raise ValueError(
            f"prompt {name!r} has placeholders {sorted(found)}, expected {sorted(expects)}"
        )
    return text


def fill(name: str, **values: str) -> str:
    """Load a prompt and substitute its placeholders (all of them, nothing else)."""
    text = load_prompt(name, expects=frozenset(values))
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)


def prompt_digest(*names: str) -> str:
    """A short hash of these prompts' text: part of an extractor's version, so that a changed
    prompt never serves extractions the old prompt made (storygraph.ingest.extraction_cache)."""
    digest = hashlib.sha256()
    for name in names:
        digest.update((PROMPTS_DIR / f"{name}.txt").read_bytes())
    return digest.hexdigest()[:12]
