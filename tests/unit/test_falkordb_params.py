"""The parameters' header the FalkorDB runner builds is the falkordb client's own, character for
character (storygraph.store.falkordb_params: the same text, built faster)."""

from __future__ import annotations

from typing import Any

from falkordb.graph import Graph
from hypothesis import given
from hypothesis import strategies as st

from storygraph.store.falkordb_params import params_header

KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20) | st.sampled_from(
    ["", '"', "\\", '\\"', "a\nb", "桃太郎は鬼が島へ行きました。", "it's", "`x`", "{a: 1}"]
)
SCALARS = TEXT | st.integers() | st.floats(allow_nan=False) | st.booleans() | st.none()
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4)
    | st.tuples(inner, inner)
    | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=20,
)


def _client_header(params: dict[str, Any]) -> str:
    return Graph._build_params_header(None, params)  # type: ignore[arg-type]


@given(st.dictionaries(KEYS, VALUES, min_size=1, max_size=4))
def test_the_header_is_the_clients(params: dict[str, Any]) -> None:
    assert params_header(params) == _client_header(params)


def test_a_relation_batch_is_the_clients() -> None:
    rows = [
        {
            "source_key": f"doc:{i}",
            "target_key": f'doc:"{i}\\',
            "chunk_ids": [f"doc:{i}", f"doc:{i + 1}"],
            "evidence": [f"人物{i}は\n会いました。", ""],
        }
        for i in range(50)
    ]
    params = {"rows": rows, "now": "2026-11-25T10:00:00+00:00", "limit": 3, "flag": True}
    assert params_header(params) == _client_header(params)


def test_no_parameters_no_header() -> None:
    assert params_header(None) == params_header({}) == ""
