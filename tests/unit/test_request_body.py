"""The capped request body: the client's extra body kept, the cap and extra fields over it, and
the client's own dict never changed (three callers share it)."""

from __future__ import annotations

from types import SimpleNamespace

from storygraph.llm.request_body import capped_body


def test_the_clients_extra_body_is_kept_and_the_cap_set_over_it() -> None:
    own = {"max_tokens": 512, "cache_prompt": True}
    llm = SimpleNamespace(extra_body=own)
    body = capped_body(llm, 60, grammar="root ::= \"a\"")
    assert body == {"max_tokens": 60, "cache_prompt": True, "grammar": 'root ::= "a"'}
    assert own == {"max_tokens": 512, "cache_prompt": True}


def test_a_client_without_an_extra_body_gets_only_the_cap() -> None:
    assert capped_body(SimpleNamespace(), 8) == {"max_tokens": 8}
    assert capped_body(SimpleNamespace(extra_body=None), 8) == {"max_tokens": 8}
