"""Which of a question's found names are ordinary words, not a story's own names (issue #28,
qa/scope.py).

In a library, a name only one story's graph holds scopes a question to that story. That is right
for 金太郎 or "the Hare", and wrong for an ordinary word one graph happened to keep as an entity:
「親がにを殺したのは誰？」 found 親 (an entity of the 竹取 graph only) and was answered from
竹取; an English question found 骨 of かちかち山 through its "bone". Such a word says nothing about
which story is meant, so the scope narrows by the question's proper names first
(`narrow(common=…)`), and a scope settled by ordinary words alone is undecided: the answer says
which story each source is from (qa/engine.py).

A name is an ordinary word when
- Japanese: Sudachi reads it as one common noun (普通名詞), a prefix or suffix around it allowed
  (親, 鬼, 名前, お|じい|さん), not a proper noun (金太郎) nor a compound of several words
  (一寸|法師); without Sudachi no Japanese name is taken for one (the scope is narrowed by
  every name, as before this module);
- English: the question writes it without a capital letter ("the bone", "the fox"; "the Fox"
  is a name); a mention that opens the question, or that the question does not spell (a
  translation's), is read by the graph's own spelling instead.
"""

from __future__ import annotations

from collections.abc import Sequence

from storygraph.models import ResolvedEntity
from storygraph.text.language import is_japanese_char
from storygraph.text.normalize import is_common_noun


def is_ordinary_word(mention: str, node_id: str, question: str) -> bool:
    """Whether a name found as `mention` in `question` is an ordinary word (module doc)."""
    written = mention or node_id
    if not any(is_japanese_char(ch) for ch in written):
        # the finder's mentions are folded to lower case: read the question's own spelling
        at = question.lower().find(written.lower())
        written = question[at : at + len(written)] if at > 0 else node_id
    if any(is_japanese_char(ch) for ch in written):
        return bool(is_common_noun(written))
    return not any(ch.isupper() for ch in written)


def common_names(question: str, entities: Sequence[ResolvedEntity]) -> frozenset[str]:
    """The node ids of `entities` that every mention found only as an ordinary word."""
    kinds: dict[str, bool] = {}
    for entity in entities:
        ordinary = is_ordinary_word(entity.mention, entity.node_id, question)
        kinds[entity.node_id] = kinds.get(entity.node_id, True) and ordinary
    return frozenset(node for node, ordinary in kinds.items() if ordinary)
