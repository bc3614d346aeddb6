"""Reading a model's structured reply (function calling): the fields of the reply, and a list
of strings that really is one. A reply of another shape raises `UnexpectedReply`, so the caller's
fallback says what happened instead of reading it as "nothing" (docs/ISSUES.md; the question's
entity finder and relation-type pick, storygraph.qa, read their replies through these)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class UnexpectedReply(ValueError):
    """The model's structured reply had a shape we did not ask for (not silently "nothing")."""


def string_list(value: Any, what: str) -> list[str]:
    """`value` as a list of non-empty strings; UnexpectedReply when it is not a list of strings
    (a bare string would otherwise be read character by character)."""
    if value is None:
        return []
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise UnexpectedReply(f"the model's {what} are not a list of strings: {value!r}"[:200])
    return [v.strip() for v in value if v.strip()]


def reply_fields(result: Any, model: type[BaseModel]) -> dict[str, Any]:
    """The fields of a structured reply (the pydantic object or its dict form)."""
    if isinstance(result, model):
        return result.model_dump()
    if isinstance(result, dict):
        return result
    raise UnexpectedReply(
        f"the model's reply is a {type(result).__name__}, not {model.__name__}: {result!r}"[:200]
    )
