"""What the question's own words tell the support check (storygraph.qa.verify.support) besides
its type and structure, read off its text here so that the verify room matches no question text
itself (issue #43): the kind of answer it asks for (`asked_kind`: a name) and the noun it asks the
name of (`name_owner`), the question word's particle and the verb after it (`cloze_cue`), whether
it offers its answers (`CHOICE`) or asks a reason or manner (`REASON_OR_MANNER`), and a kanji
term's kana reading (`kana_reading`). `QuestionAnalysis` (storygraph.qa.question.analysis) gives
each of the question as a property computed when the check first asks, and keeps it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from storygraph.models import ResolvedEntity
from storygraph.text.normalize import reading

_JA_NAME = re.compile(r"(?:名前|(?:の|た|という|といふ)名)(?:は|を|って|が)")
"""名前, or 名 after の / a clause (…の名は, つけられた名は, 何という名を): not 大名が."""
_EN_NAME = re.compile(r"\bname\b", re.IGNORECASE)
JA_OWNER = re.compile(r"([^\sの、。「」]+)の(?:名前|名)(?:は|を|って|が)")
QUESTION_WORD = re.compile(r"(誰|だれ|どこ|何|なに)(から|まで|より|へ|に|で|を|が|と)")
_KANJI_RUN = re.compile(r"[\u4e00-\u9fff々]+")
REASON_OR_MANNER = re.compile(r"なぜ|どうして|どうやって|どのよう|どんなふう|何のため")
CHOICE = re.compile(r"どちら|どっち|\bwhich\b|\bor\b", re.IGNORECASE)
"""A question offering its answers (重いつづらと軽いつづらのどちら): an answer may repeat one."""


def asked_kind(question: str) -> str:
    """The kind of answer the question asks for: "name" (名前, の名, name), else ""."""
    return "name" if _JA_NAME.search(question) or _EN_NAME.search(question) else ""


def name_owner(question: str) -> str:
    """The noun before の that a Japanese question asks the name of (飼犬 of 飼犬の名前は), ""
    when it names none."""
    owner = JA_OWNER.search(question)
    return owner.group(1) if owner else ""


def cloze_cue(question: str, entities: Sequence[ResolvedEntity]) -> tuple[str, str] | None:
    """What a source saying the Japanese question with the answer in the question word's place
    holds besides the answer and the participants (`entities`): the question word's particle
    (から of どこから) and the first kanji of the question after it, the participants left out
    (流 of 流れて来た); None when the question has no question word with a particle or no such
    kanji after it."""
    asked = QUESTION_WORD.search(question)
    if asked is None:
        return None
    rest = question[asked.end() :]
    for entity in entities:
        rest = rest.replace(entity.mention, "").replace(entity.node_id, "")
    verb = _KANJI_RUN.search(rest)
    if verb is None:
        return None
    return asked.group(2), verb.group(0)


MIN_KANA_READING = 3
"""A kanji term's reading shorter than this (木: き, 火: ひ) is not looked for in a source's
kana: it stands inside too many other words."""


@lru_cache(maxsize=4096)
def kana_reading(term: str) -> str:
    """A kanji term's hiragana reading (景色: けしき), "" when it is too short to look for or
    cannot be read (no Sudachi)."""
    spoken = reading(term) or ""
    return spoken if len(spoken) >= MIN_KANA_READING else ""
