"""Which of a question's found names are ordinary words, not a story's own names (issue #28,
qa/scope/scope.py).

In a library, a name only one story's graph holds scopes a question to that story. That is right
for 金太郎 or "the Hare", and wrong for an ordinary word one graph happened to keep as an entity:
「親がにを殺したのは誰？」 found 親 (an entity of the 竹取 graph only) and was answered from
竹取; an English question found 骨 of かちかち山 through its "bone". Such a word says nothing about
which story is meant, so the scope narrows by the question's proper names first
(`narrow(common=…)`), and a scope settled by ordinary words alone is undecided: the answer says
which story each source is from (qa/scope/resolver.py).

A name is an ordinary word when
- Japanese: Sudachi reads it as one common noun (普通名詞), a prefix or suffix around it allowed
  (親, 鬼, 名前, お|じい|さん), not a proper noun (金太郎) nor a compound of several words
  (一寸|法師); without Sudachi no Japanese name is taken for one (the scope is narrowed by
  every name, as before this module);
- English: the question writes it without a capital letter ("the bone", "the fox"; "the Fox"
  is a name); a mention that opens the question, or that the question does not spell (a
  translation's), is read by the graph's own spelling instead.

An English word written small in the question may still be a story's own name: the fable that
writes "the Fox should choose the course" names its Fox, however the question spells it. So a
name found as an ordinary English word is, per story, a name of each story whose text writes
its last word with a capital inside a sentence (`capitalised_words`: not a sentence's first
word, not a line printed in capitals), read from the story's chunks (`story_capitals`, kept
per document version). "What was the fox trying to get?" went to another story while the fox was an
ordinary word everywhere (docs/ISSUES.md#story-scope). The graph's spelling cannot say it: a model's
extraction writes every name with capitals.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from storygraph.models import ResolvedEntity
from storygraph.text.language import is_japanese_text
from storygraph.text.normalize import is_common_noun
from storygraph.text.terms import name_words

_INSIDE = re.compile(r"[a-z,;]\s+([A-Z][a-z'-]+)")
"""A capitalised word after a lower-case letter or a comma: inside a sentence."""
SPELLINGS_KEPT = 256
"""Stories whose capitalised words are kept (by document id and content hash)."""


def is_ordinary_word(mention: str, node_id: str, question: str) -> bool:
    """Whether a name found as `mention` in `question` is an ordinary word (module doc)."""
    written = mention or node_id
    if not is_japanese_text(written):
        # the finder's mentions are folded to lower case: read the question's own spelling
        at = question.lower().find(written.lower())
        written = question[at : at + len(written)] if at > 0 else node_id
    if is_japanese_text(written):
        return bool(is_common_noun(written))
    return not any(ch.isupper() for ch in written)


def common_names(
    question: str,
    entities: Sequence[ResolvedEntity],
    translated: Mapping[str, str] | None = None,
) -> frozenset[str]:
    """The node ids of `entities` that every mention found only as an ordinary word.

    `translated`: the forms a dictionary translation gave (form → the question's word it
    translates, storygraph.qa.question.translation); a name found through one of them is read by
    that
    word as the question writes it ("the old man" → 翁: an ordinary word, although Sudachi does
    not read 翁 as a common noun), not by the graph's spelling."""
    kinds: dict[str, bool] = {}
    words = translated or {}
    for entity in entities:
        word = words.get(entity.mention) if entity.source == "translation" else None
        if word is not None:
            ordinary = is_ordinary_word(word, word, question)
        else:
            ordinary = is_ordinary_word(entity.mention, entity.node_id, question)
        kinds[entity.node_id] = kinds.get(entity.node_id, True) and ordinary
    return frozenset(node for node, ordinary in kinds.items() if ordinary)


def capitalised_words(text: str) -> frozenset[str]:
    """The words `text` writes with a capital inside a sentence, folded as names are matched
    (`terms.name_words`: "the Fox should" → fox; not "The" opening a sentence, nor "A FAMISHED
    FOX", a line printed in capitals)."""
    return frozenset(w for m in _INSIDE.finditer(text) for w in name_words(m.group(1)))


def named_in_stories(
    common: Collection[str],
    names: Sequence[dict[str, Any]],
    capitals: Mapping[str, frozenset[str]],
) -> dict[str, frozenset[str]]:
    """Per document id, those of `common` (English) the story writes as a name: the last word
    of the name is one of the story's `capitals` (`capitalised_words`)."""
    named: dict[str, set[str]] = {}
    for row in names:
        node, document = str(row["id"]), str(row.get("document_id") or "")
        if node not in common or document not in capitals:
            continue
        words = name_words(node)
        if words and words[-1] in capitals[document]:
            named.setdefault(document, set()).add(node)
    return {document: frozenset(nodes) for document, nodes in named.items()}


def english_common(common: Collection[str]) -> list[str]:
    """Those of `common` written in Latin letters (a Japanese word is judged by Sudachi)."""
    return [n for n in common if not is_japanese_text(n)]


_KEPT: OrderedDict[tuple[str, str], frozenset[str]] = OrderedDict()
_KEPT_LOCK = threading.Lock()


def story_capitals(
    versions: Mapping[str, str], texts: Callable[[Sequence[str]], Sequence[dict[str, Any]]]
) -> dict[str, frozenset[str]]:
    """Per document id of `versions` (id → content hash), its capitalised words
    (`capitalised_words`), read from its chunks (`texts`: chunk rows with document_id and
    text, of the documents asked) at most once per document version in this process (the
    last SPELLINGS_KEPT kept)."""
    with _KEPT_LOCK:
        found = {d: _KEPT.get((d, v)) for d, v in versions.items()}
    missing = [d for d, words in found.items() if words is None]
    if missing:
        chunks: dict[str, list[str]] = {d: [] for d in missing}
        for row in texts(missing):
            chunks.setdefault(str(row["document_id"]), []).append(str(row.get("text") or ""))
        with _KEPT_LOCK:
            for document in missing:
                words = capitalised_words("\n".join(chunks[document]))
                found[document] = words
                _KEPT[(document, versions[document])] = words
                while len(_KEPT) > SPELLINGS_KEPT:
                    _KEPT.popitem(last=False)
    return {d: words for d, words in found.items() if words is not None}
