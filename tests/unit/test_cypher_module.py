"""Cypher lives in one module, takes values only as parameters, and refuses unsafe identifiers."""

from __future__ import annotations

import re

import pytest

from storygraph import cypher


def test_render_backticks_a_sanitised_identifier() -> None:
    query = cypher.render(cypher.RELATION_UPSERT, rel_type="LIVES_IN")
    assert "[r:`LIVES_IN`]" in query
    assert "<<" not in query


@pytest.mark.parametrize(
    "identifier",
    ["LIVES IN", "x`]->() DETACH DELETE n //", "住む", "", "1ABC", "A-B", "a\nb", "`A`"],
)
def test_render_refuses_anything_not_already_sanitised(identifier: str) -> None:
    with pytest.raises(ValueError, match="unsafe identifier"):
        cypher.render(cypher.ENTITY_UPSERT, label=identifier)


def test_render_needs_every_placeholder_and_no_other() -> None:
    with pytest.raises(ValueError, match="placeholders"):
        cypher.render(cypher.ENTITY_UPSERT)
    with pytest.raises(ValueError, match="placeholders"):
        cypher.render(cypher.STATS, label="X")


def test_queries_carry_no_inline_values() -> None:
    allowed_literals = {"'ready'", "'pending'", "''"}
    for name, query in cypher.all_queries().items():
        literals = set(re.findall(r"'[^']*'", query))
        assert literals <= allowed_literals, (name, literals)
        assert "apoc." not in query.lower(), name


def test_every_template_placeholder_is_a_known_identifier_slot() -> None:
    for name, value in vars(cypher).items():
        if name.isupper() and isinstance(value, str):
            assert cypher.placeholders(value) <= {"label", "old_label", "rel_type"}, name
