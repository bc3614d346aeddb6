"""Walking a dependency parse upward, so that no walk can loop.

A spaCy / GiNZA root is its own head, and a parsed text of several sentences has one root per
sentence: a walk written `while node.i != root.i: node = node.head` with `root` the text's
first ROOT never ends for a token of the second sentence (issue 39: a question hung at 100 %
CPU). Every head-chain walk goes through `ancestors` instead: it stops at the token's own root
and visits each token once, so not even a malformed parse (a cycle of heads) can hold it.

Tokens are read by their `i` and `head` only (`Any`: spaCy tokens, and the stand-ins of the
tests). Identity (`is`) is not used: spaCy builds a new `Token` object on every `.head`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def ancestors(tok: Any) -> Iterator[Any]:
    """The heads above `tok`, nearest first, ending at its own root (a token that is its own
    head); a head already passed ends the walk too (a cycle)."""
    seen = {tok.i}
    node = tok
    while True:
        head = node.head
        if head is None or head.i in seen:
            return
        seen.add(head.i)
        yield head
        node = head


def root_of(tok: Any) -> Any:
    """The root of `tok`'s own sentence: the last of its ancestors, or `tok` when it is one."""
    root = tok
    for root in ancestors(tok):  # noqa: B007 - the last one is the root
        pass
    return root
