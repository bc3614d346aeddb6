"""Question-type detection, Japanese and English (the founding memo's Phase 2).

A question asks for one slot of a relation: the doer (who-did), the one done to (who-was-done-to,
also "to whom"), a partner (with-whom), a place (where), a time (when) or a thing (what). What
matters for retrieval is the role each start entity plays in the question, because that fixes the
edge direction worth preferring:

- 「桃太郎を倒したのは誰？」 / "Who defeated Momotaro?": 桃太郎 is the object (を / after the verb),
  so the answer is an edge INTO 桃太郎 (`鬼 -[DEFEATS]-> 桃太郎`): direction "in".
- 「桃太郎が倒したのは誰？」 / "Who did Momotaro defeat?": 桃太郎 is the subject: direction "out".
- Passive and benefactive verbs flip it (「鬼は誰に倒された？」, "Who was Momotaro raised by?").
- 「桃太郎の仲間は誰？」, "Momotaro's friends", 誰と: no preference ("any").

Rules are small and lexical: the particle after the entity (ja) or the word order around it (en).
What a detected type adds to a candidate's score is storygraph.qa.retrieval.type_priors.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from storygraph.text.normalize import normalize_name

Kind = Literal["who_did", "who_was_done_to", "with_whom", "where", "when", "what", "who", "unknown"]
Direction = Literal["in", "out", "any"]
Order = Literal["", "before", "after"]

KINDS: tuple[str, ...] = (
    "who_did",
    "who_was_done_to",
    "with_whom",
    "where",
    "when",
    "what",
    "who",
    "unknown",
)
PERSON_KINDS = frozenset({"who_did", "who_was_done_to", "with_whom", "who"})


@dataclass(frozen=True)
class QuestionType:
    """What a question asks for and which way each start entity's edges should point."""

    kind: Kind
    language: str
    roles: Mapping[str, Direction] = field(default_factory=dict)
    passive: bool = False
    cue: str = ""
    order: Order = ""
    """"before" / "after" when the question asks about story order (鬼が島へ行く前に…)."""
    order_cue: str = ""
    anchor_clause: str = ""
    """The clause the order is relative to (鬼が島へ行く, "the lion let it go")."""
    speech: bool = False
    """The question asks about a line of speech: what someone said (to someone), or who said
    a line (`asks_for_speech`); the stored lines (SAYS, storygraph.text.speech) answer it."""

    def direction_for(self, entity: str) -> Direction:
        return self.roles.get(entity, "any")

    def describe(self) -> str:
        roles = ", ".join(f"{e}: {d}" for e, d in self.roles.items()) or "no entity"
        voice = ", passive" if self.passive else ""
        order = f", {self.order} 「{self.anchor_clause}」" if self.order else ""
        speech = ", a line of speech" if self.speech else ""
        return f"{self.kind} (cue {self.cue or '-'}; {roles}{voice}{order}{speech})"


# --- Japanese ------------------------------------------------------------------------------

_JA_WHO = ("誰", "だれ", "どなた", "何者")
_JA_KIND_CUES: tuple[tuple[str, Kind], ...] = (
    ("誰と", "with_whom"),
    ("だれと", "with_whom"),
    ("一緒", "with_whom"),
    ("誰が", "who_did"),
    ("だれが", "who_did"),
    ("誰を", "who_was_done_to"),
    ("だれを", "who_was_done_to"),
    ("誰に", "who_was_done_to"),
    ("だれに", "who_was_done_to"),
    ("どこ", "where"),
    ("いつ", "when"),
    ("何", "what"),
    ("なに", "what"),
    ("なん", "what"),
    ("どんな", "what"),
)
# Passive (倒された, 食べられた, 言われる) and benefactive (助けてもらった) verbs: the grammatical
# subject is the one done to. 生まれる looks passive and is not.
_JA_PASSIVE = re.compile(
    r"(?<!生)[さかがたなばまらわ]れ(?:た|る|て|ま)|られ(?:た|る|て|ま)|[てで]もら"
)
_JA_SUBJECT = ("が", "は", "って", "も")
_JA_IDENTITY = re.compile(
    r"^(?:は|って)[、 ]*(?:誰|だれ|どなた|何者)(?:です|でしょう|だ)?か?[？?。!！]*$"
)
_JA_OBJECT = ("を", "に", "へ")
_JA_SOURCE = ("から",)
_JA_NEUTRAL = ("の", "と", "で", "や")


def _ja_particle_role(after: str) -> Direction:
    """Role of an entity from the particle right after it, before voice is considered."""
    if after.startswith(("には", "とは", "では", "のは")):
        return "in" if after.startswith("には") else "any"
    if after.startswith(_JA_SOURCE):
        return "out"
    if after.startswith(_JA_SUBJECT):
        return "out"
    if after.startswith(_JA_OBJECT):
        return "in"
    return "any"


def _flip(direction: Direction) -> Direction:
    return {"in": "out", "out": "in", "any": "any"}[direction]  # type: ignore[return-value]


def _find(text: str, entity: str) -> int:
    at = text.find(entity)
    if at >= 0:
        return at
    return normalize_name(text).find(normalize_name(entity))


def _detect_ja(question: str, entities: Sequence[str]) -> QuestionType:
    text = question.strip()
    passive = bool(_JA_PASSIVE.search(text))
    kind: Kind = "unknown"
    cue = ""
    for word, found_kind in _JA_KIND_CUES:
        if word in text:
            kind, cue = found_kind, word
            break
    if kind == "who_was_done_to" and cue.endswith("に") and passive:
        kind = "who_did"  # 誰に倒された: 誰 is the doer
    roles: dict[str, Direction] = {}
    identity = False
    for entity in entities:
        at = _find(text, entity)
        if at < 0:
            continue
        after = text[at + len(entity) :] if text.find(entity) >= 0 else ""
        role = _ja_particle_role(after)
        if _JA_IDENTITY.match(after):
            identity = True  # 桃太郎は誰？: who is it, no direction
            role = "any"
        roles[entity] = _flip(role) if passive else role
    if kind == "unknown" and any(w in text for w in _JA_WHO):
        cue = next(w for w in _JA_WHO if w in text)
        kind = who_from_roles(roles, identity)
    return QuestionType(kind, "ja", roles, passive, cue)


def who_from_roles(roles: Mapping[str, Direction], identity: bool) -> Kind:
    """A who question's kind from its participants' directions: one definite direction gives
    who did it (they are done to) or whom (they do it); else plain "who"."""
    directions = set(roles.values()) - {"any"}
    if identity or len(directions) != 1:
        return "who"
    return "who_did" if directions == {"in"} else "who_was_done_to"


# --- English -------------------------------------------------------------------------------

_EN_AUX = frozenset(
    [
        "did",
        "does",
        "do",
        "is",
        "are",
        "was",
        "were",
        "has",
        "have",
        "had",
        "will",
        "would",
        "can",
        "could",
        "shall",
        "should",
    ]
)
_EN_DETERMINERS = frozenset(["the", "a", "an", "his", "her", "their", "its", "this", "that"])
_EN_BE = frozenset(["is", "are", "was", "were"])
_WORD = re.compile(r"[a-z]+(?:'s)?|[^\sa-z]")


def _en_kind(words: list[str], text: str) -> tuple[Kind, str]:
    if "with whom" in text or (words and words[0] in ("who", "whom") and words[-1] == "with"):
        return "with_whom", "with whom"
    if "together with" in text:
        return "with_whom", "together with"
    for phrase in ("to whom", "for whom", "whom"):
        if re.search(rf"\b{phrase}\b", text):
            return "who_was_done_to", phrase
    for word, kind in (("where", "where"), ("when", "when"), ("what", "what"), ("which", "what")):
        if re.search(rf"\b{word}\b", text):
            return kind, word  # type: ignore[return-value]
    if re.search(r"\b(who|whose)\b", text):
        return "who", "who"
    return "unknown", ""


def _en_role(text: str, entity: str) -> tuple[Direction, bool] | None:
    """Role of the entity from the words around it; None when it is not in the question."""
    name = entity.lower()
    match = re.search(rf"(?<![a-z]){re.escape(name)}(?![a-z])", text)
    if not match:
        return None
    before = _WORD.findall(text[: match.start()])
    after = text[match.end() :]
    if after.startswith("'s") or (before and before[-1] == "of"):
        return "any", False
    while before and before[-1] in _EN_DETERMINERS:
        before = before[:-1]
    previous = before[-1] if before else ""
    if previous == "by":
        return "out", True  # "... defeated by Momotaro": the doer
    if previous in ("with", "and"):
        return "any", False
    if previous in ("to", "at"):
        return "in", False
    if previous in _EN_AUX:
        passive = previous in _EN_BE and bool(
            re.match(r"\s+(?:\w+ly\s+)?\w+(?:ed|en|t)\b(?!\s+(?:to|in|at|from)\b)", after)
            and re.search(r"\bby\b", after)
        )
        return ("in" if passive else "out"), passive
    if not before or before[0] not in ("who", "whom", "what", "which", "where", "when", "whose"):
        return "out", False  # "Momotaro defeated whom?": the subject comes first
    return "in", False  # "Who defeated Momotaro?": the entity is the verb's object


def _detect_en(question: str, entities: Sequence[str]) -> QuestionType:
    text = " ".join(question.lower().split())
    words = _WORD.findall(text.rstrip("?!. "))
    kind, cue = _en_kind(words, text)
    roles: dict[str, Direction] = {}
    passive = False
    for entity in entities:
        found = _en_role(text, entity)
        if found is None:
            continue
        roles[entity], was_passive = found
        passive = passive or was_passive
    if kind == "who":
        identity = bool(re.match(r"who (is|are|was|were) [a-z' ]+\?*$", text)) and not any(
            re.search(rf"\b{w}\b", text) for w in ("by", "with")
        )
        kind = who_from_roles(roles, identity and all(r == "out" for r in roles.values()))
    return QuestionType(kind, "en", roles, passive, cue)


# --- order cues: before / after ------------------------------------------------------------

# 「鬼が島へ行く前に」「宝物を取ったあとで」「犬に会ってから」: the clause before the cue is
# the anchor.
_JA_ORDER = re.compile(
    r"(?P<clause>[^、。？?！!]*?)(?P<cue>(?<!名)(?:より)?(?:前|まえ)(?:に|は|の)"
    r"|(?:た|だ)?(?:後|あと)(?:で|に|は|の)|[てで]から)"
)
_EN_ORDER = re.compile(
    r"(?<!look )(?<!looked )(?<!looks )(?<!looking )(?<!named )(?<!ever )"
    r"\b(?P<cue>before|after)\b(?P<clause>[^?,.!;]*)"
)


def _order_ja(text: str) -> tuple[Order, str, str]:
    match = _JA_ORDER.search(text)
    if not match or not match.group("clause").strip():
        return "", "", ""
    if match.group("clause").endswith("の"):
        return "", "", ""  # 桃太郎の前に: in front of him, not before something
    cue = match.group("cue")
    order: Order = "before" if ("前" in cue or "まえ" in cue) else "after"
    return order, cue, match.group("clause").strip()


def _order_en(text: str) -> tuple[Order, str, str]:
    match = _EN_ORDER.search(text.lower())
    if not match or not match.group("clause").strip():
        return "", "", ""
    cue = match.group("cue")
    return cue, cue, match.group("clause").strip()  # type: ignore[return-value]


def order_cue(question: str, *, language: str) -> tuple[Order, str, str]:
    """(order, cue word, anchor clause) of a question about story order; ("", "", "") if none.
    `language` is the question's (the analysis reads it once)."""
    if language == "ja":
        return _order_ja(question)
    return _order_en(question)


# --- speech: what someone said, who said a line ----------------------------------------------

_JA_SAYING = (
    r"(?:言(?!う[^？?。かの])|い[っわいえ]|云|答|こた|叫|さけ|たず|尋|聞|きい|きき|申|もう|話|"
    r"はな|返事|どな|怒鳴|つぶや|呟|ささや|頼|たの)"
)
"""How a verb of saying starts in a question; 言う before a noun is a name's (何と言う名前)."""
_JA_SPEECH = re.compile(
    rf"(?:何|なん|なに)[とて]{_JA_SAYING}|(?:何|なに)を{_JA_SAYING}|どう{_JA_SAYING}"
    rf"|どんな(?:こと|言葉|ことば)(?:を|と)?{_JA_SAYING}|セリフ|台詞|せりふ"
    rf"|」と{_JA_SAYING}[^。]*(?:誰|だれ|どなた)|(?:誰|だれ|どなた)が[^。]*「[^」]+」と{_JA_SAYING}"
)
_EN_SAYING = (
    r"(?:say|said|tell|told|reply|replied|answer|answered|shout|shouted|scream|screamed|cry|"
    r"cried|exclaim|exclaimed|whisper|whispered|ask|asked|call|called|mutter|muttered|yell|"
    r"yelled)"
)
_EN_SPEECH = re.compile(
    rf"\b(?:what|how|why|which)(?: [\w'-]+){{0,2}}? (?:did|does|do|had|has|will|would) "
    rf"[\w' -]+? {_EN_SAYING}\b"
    rf"|\bwho {_EN_SAYING}\b|\bwhat (?:were|was|are|is) [\w' -]*?\bwords?\b"
)


def asks_for_speech(question: str, *, language: str) -> bool:
    """Does the question ask what someone said (兎は狐に何と言った？, "What did the Tortoise
    say to the Hare?") or who said a line (「…」と言ったのは誰？, "Who shouted …?")?"""
    if language == "ja":
        return _JA_SPEECH.search(question) is not None
    return _EN_SPEECH.search(" ".join(question.lower().split())) is not None


def detect_question_type(
    question: str, entities: Sequence[str] = (), *, language: str
) -> QuestionType:
    """The question's type, each start entity's preferred edge direction, any order cue,
    whether it asks about a line of speech; `language` is the question's (the analysis reads
    it once)."""
    detect = _detect_ja if language == "ja" else _detect_en
    found = detect(question, entities)
    if asks_for_speech(question, language=language):
        found = replace(found, speech=True)
        if language != "ja" and re.match(r"\s*who\b", question.lower()) and found.kind != "who":
            # "Who asked where the Bear was going?": the speaker is asked, not the place
            found = replace(found, kind="who", cue="who")
    order, cue, clause = order_cue(question, language=language)
    if not order:
        return found
    return replace(found, order=order, order_cue=cue, anchor_clause=clause)
