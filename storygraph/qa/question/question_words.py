"""What the question's own words tell the support check (storygraph.qa.verify.support) besides
its type and structure, read off its text here so that the verify room matches no question text
itself (issue #43): the kind of answer it asks for (`asked_kind`: a name), whether it offers its
answers (`CHOICE`) or asks a reason or manner (`REASON_OR_MANNER`), the question word with its
particle (`QUESTION_WORD`), and a kanji term's kana reading (`kana_reading`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from storygraph.text.normalize import reading

_JA_NAME = re.compile(r"(?:名前|(?:の|た|という|といふ)名)(?:は|を|って|が)")
"""名前, or 名 after の / a clause (…の名は, つけられた名は, 何という名を): not 大名が."""
_EN_NAME = re.compile(r"\bname\b", re.IGNORECASE)
JA_OWNER = re.compile(r"([^\sの、。「」]+)の(?:名前|名)(?:は|を|って|が)")
QUESTION_WORD = re.compile(r"(誰|だれ|どこ|何|なに)(から|まで|より|へ|に|で|を|が|と)")
REASON_OR_MANNER = re.compile(r"なぜ|どうして|どうやって|どのよう|どんなふう|何のため")
CHOICE = re.compile(r"どちら|どっち|\bwhich\b|\bor\b", re.IGNORECASE)
"""A question offering its answers (重いつづらと軽いつづらのどちら): an answer may repeat one."""


def asked_kind(question: str) -> str:
    """The kind of answer the question asks for: "name" (名前, の名, name), else ""."""
    return "name" if _JA_NAME.search(question) or _EN_NAME.search(question) else ""


MIN_KANA_READING = 3
"""A kanji term's reading shorter than this (木: き, 火: ひ) is not looked for in a source's
kana: it stands inside too many other words."""


@lru_cache(maxsize=4096)
def kana_reading(term: str) -> str:
    """A kanji term's hiragana reading (景色: けしき), "" when it is too short to look for or
    cannot be read (no Sudachi)."""
    spoken = reading(term) or ""
    return spoken if len(spoken) >= MIN_KANA_READING else ""
