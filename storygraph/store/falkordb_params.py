"""The parameters of a FalkorDB query as the `CYPHER name=value …` header it is sent with.

The same text as the falkordb client's own header (`Graph._build_params_header`, 1.8), built
faster: a write of 1M edges sends ~1.3M rows, and the client's serialiser (an `isinstance`
chain per value, recursing through every list and map) took as long as a third of the server's
work on them (docs/ISSUES.md#import-1m-edges). tests/unit/test_falkordb_params.py holds the two
equal.
"""

from __future__ import annotations

from typing import Any


def _quoted(text: str) -> str:
    if not text:
        return '""'
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _name(key: Any) -> str:
    name = key.decode() if isinstance(key, bytes) else str(key)
    if not name or "`" in name:
        raise ValueError(f"not a usable Cypher parameter or map key: {name!r}")
    return name


def cypher_literal(value: Any) -> str:
    """A parameter value as a Cypher literal (strings, numbers, booleans, null, lists, maps)."""
    kind = type(value)
    if kind is str:
        return _quoted(value)
    if value is None:
        return "null"
    if kind is list or kind is tuple:
        return "[" + ",".join([cypher_literal(item) for item in value]) + "]"
    if kind is dict:
        return "{" + ",".join([f"`{_name(k)}`:{cypher_literal(v)}" for k, v in value.items()]) + "}"
    if isinstance(value, str):
        return _quoted(value)
    if isinstance(value, list | tuple):
        return cypher_literal(list(value))
    if isinstance(value, dict):
        return cypher_literal(dict(value))
    return str(value)


def params_header(params: dict[str, Any] | None) -> str:
    """`CYPHER `a`=1 `b`="x" ` for {"a": 1, "b": "x"}; "" without parameters."""
    if not params:
        return ""
    return "CYPHER " + "".join(f"`{_name(k)}`={cypher_literal(v)} " for k, v in params.items())
