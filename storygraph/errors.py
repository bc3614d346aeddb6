"""Errors a user can act on. Each carries what went wrong and what to do next."""

from __future__ import annotations


class StoryGraphError(Exception):
    """Base error: `str(err)` is the message, `err.hint` the next step."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} — {self.hint}" if self.hint else self.message


class InputError(StoryGraphError):
    """An uploaded file cannot be used (empty, binary, too large, undecodable)."""


class StoreError(StoryGraphError):
    """The graph store cannot be reached or refused a query."""


class ModelError(StoryGraphError):
    """The language model cannot be reached or answered unusably."""


class ModelServerCrashed(ModelError):
    """The embedded model server died (a crash, not a stop): the message says how, in words
    (storygraph.crashes)."""


class ConfigError(StoryGraphError):
    """A setting is missing or contradictory."""


def error_text(exc: BaseException, limit: int = 240) -> str:
    """An exception for a person: its type and its message (cut at `limit`), and its hint when
    the message does not already carry it."""
    text = f"{type(exc).__name__}: {exc}"[:limit]
    hint = getattr(exc, "hint", "")
    return f"{text} ({hint})" if hint and hint not in text else text
