"""The extra request body every capped call sends: the client's own `extra_body` with a
`max_tokens` (and any other field, a grammar say) merged over it.

llama.cpp's server reads `max_tokens` from the request's body; langchain-openai would send the
cap as `max_completion_tokens`, which that server ignores, so a looping reply would run to the end
of the context. The answerer, the choice between candidate answers and the question's
translation all cap their replies this one way."""

from __future__ import annotations

from typing import Any


def capped_body(llm: Any, max_tokens: int, **fields: Any) -> dict[str, Any]:
    """A new dict: `llm.extra_body` (when the client has one), then `max_tokens`, then `fields`;
    the client's own dict is never changed."""
    body = dict(getattr(llm, "extra_body", None) or {})
    body["max_tokens"] = max_tokens
    body.update(fields)
    return body
