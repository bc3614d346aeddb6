"""Words that signal a relation type, in Japanese and English, for the cheap fallback scorer.

Keys are stems of relation-type tokens (DEFEATS → DEFEAT); values are substrings to look for
in a question. This is general story vocabulary, not tuned to any test question.

`RELATION_FIELDS` groups stems into semantic fields (conflict, companionship, residence, …):
a question about companions is also about meeting and following. Relation-type selection
(storygraph.reltype) uses a field to widen a direct word match to its neighbours.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

RELATION_WORDS: dict[str, tuple[str, ...]] = {
    "DEFEAT": ("倒", "退治", "負か", "勝", "やっつけ", "defeat", "beat", "conquer", "kill", "slay"),
    "FIGHT": ("戦", "闘", "倒", "退治", "攻", "fight", "battle", "attack", "defeat", "war"),
    "ATTACK": ("攻", "襲", "倒", "attack", "assault", "raid"),
    "CONFRONT": ("立ち向か", "対決", "挑", "confront", "face", "challenge"),
    "SURRENDER": ("降参", "降伏", "負け", "surrender", "yield", "give up"),
    "KILL": ("殺", "退治", "kill", "murder", "slay"),
    "COMPANION": (
        "仲間",
        "家来",
        "お供",
        "おとも",
        "連れ",
        "companion",
        "friend",
        "follower",
        "retainer",
        "ally",
    ),
    "FOLLOW": ("家来", "お供", "ついて", "follow", "accompan"),
    "MEET": ("会", "出会", "meet", "met", "encounter"),
    "LIVE": ("住", "暮ら", "live", "dwell", "reside"),
    "GO": ("行", "向か", "出かけ", "go", "went", "travel", "head"),
    "RETURN": ("帰", "戻", "return", "came back", "come back"),
    "RAISE": ("育", "養", "raise", "brought up", "bring up", "parent"),
    "SHARE": ("分け", "share"),
    "GIVE": ("あげ", "与え", "渡", "くれ", "give", "gave", "hand"),
    "OWN": ("持", "宝", "own", "possess", "treasure"),
    "FIND": ("見つけ", "拾", "find", "found", "discover"),
    "EAT": ("食", "eat", "ate"),
    "HELP": ("助け", "救", "help", "save", "rescue"),
    "BORN": ("生まれ", "誕生", "born", "birth"),
    "MARRY": ("結婚", "嫁", "婿", "marry", "married", "wife", "husband"),
    "LOVE": ("愛", "好き", "恋", "love"),
    "STEAL": ("盗", "奪", "steal", "stole", "rob"),
    "TRADE": ("取り替え", "交換", "trade", "exchange", "swap"),
    "CHILD": ("子", "息子", "娘", "child", "son", "daughter"),
    "PARENT": ("親", "父", "母", "parent", "father", "mother"),
    "SERVE": ("仕え", "家来", "serve", "servant"),
    "CARRY": ("運", "担", "carry", "bring"),
    "BATTLE": ("戦", "闘", "battle", "war"),
    "BEAT": ("倒", "負か", "beat"),
    "CONQUER": ("征伐", "退治", "征", "conquer", "subdue"),
    "JOIN": ("加わ", "仲間入り", "join"),
    "ACCOMPANY": ("お供", "おとも", "一緒", "連れ", "accompan", "together"),
    "ALLY": ("味方", "仲間", "ally", "allies"),
    "FRIEND": ("友", "仲良", "friend"),
    "DWELL": ("住", "暮ら", "dwell"),
    "RESIDE": ("住", "reside"),
    "STAY": ("泊", "滞在", "留ま", "stay"),
    "TRAVEL": ("旅", "travel", "journey"),
    "VISIT": ("訪", "訪ね", "visit"),
    "ARRIVE": ("着", "到着", "arrive", "reach"),
    "LEAVE": ("出発", "出かけ", "去", "leave", "left", "depart"),
    "RECEIVE": ("もら", "受け取", "receive", "got", "get"),
    "PUNISH": ("懲らし", "罰", "punish"),
    "TRICK": ("だま", "騙", "trick", "deceive", "fool"),
    "CUT": ("切", "cut"),
    "BURN": ("焼", "燃", "burn"),
    "MAKE": ("作", "こしらえ", "make", "made", "cook", "bake"),
    "FREE": ("解放", "自由", "逃が", "free", "release", "rescue"),
    "RELEASE": ("放", "逃が", "release", "let go"),
    "RESCUE": ("救", "助け", "rescue", "save"),
    "CATCH": ("捕", "つかま", "catch", "caught", "capture", "trap"),
    "BIND": ("縛", "しば", "bind", "bound", "tie"),
    "SEIZE": ("捕", "つかま", "seize", "grab"),
    "WANT": ("欲し", "ほし", "want", "desire", "long for", "wish"),
    "RIDICULE": ("あざけ", "ばかに", "笑", "ridicule", "mock", "laugh at", "tease"),
    "MOCK": ("あざけ", "ばかに", "mock", "ridicule", "tease"),
    "WIN": ("勝", "win", "won", "victor"),
    "LOSE": ("負け", "lose", "lost"),
    "CHALLENGE": ("挑", "challenge", "dare"),
    "JUDGE": ("審判", "判定", "judge", "referee"),
    "WAKE": ("起こ", "目を覚ま", "wake", "woke", "awaken"),
    "ACCUSE": ("責め", "非難", "accuse", "blame"),
    "THREATEN": ("脅", "おど", "threaten", "menace"),
    "LEAD": ("率い", "大将", "lead", "led", "chief", "leader"),
    "GUARD": ("守", "見張", "guard", "protect", "watch"),
    "BITE": ("噛", "かみ", "くいつ", "bite", "bit"),
}

RELATION_FIELDS: tuple[frozenset[str], ...] = (
    frozenset(
        {
            "DEFEAT",
            "FIGHT",
            "ATTACK",
            "CONFRONT",
            "SURRENDER",
            "KILL",
            "BATTLE",
            "BEAT",
            "CONQUER",
            "PUNISH",
        }
    ),
    frozenset(
        {"COMPANION", "FOLLOW", "MEET", "JOIN", "ACCOMPANY", "SERVE", "ALLY", "FRIEND", "HELP"}
    ),
    frozenset({"LIVE", "DWELL", "RESIDE", "STAY"}),
    frozenset({"GO", "RETURN", "TRAVEL", "VISIT", "ARRIVE", "LEAVE"}),
    frozenset({"RAISE", "PARENT", "CHILD", "BORN", "MARRY"}),
    frozenset({"GIVE", "SHARE", "TRADE", "RECEIVE"}),
    frozenset({"OWN", "STEAL", "FIND", "CARRY"}),
    frozenset({"FREE", "RELEASE", "RESCUE", "HELP"}),
    frozenset({"CATCH", "BIND", "SEIZE"}),
    frozenset({"WIN", "LOSE", "BEAT", "DEFEAT"}),
    frozenset({"RIDICULE", "MOCK"}),
)
"""Stems that belong to one field of meaning; a question about one is about the others."""


_SUFFIXES = ("", "S", "ES", "D", "ED", "ING", "SHIP")


def _token_forms(token: str) -> set[str]:
    """A relation-type token and the stems it may come from (ACCOMPANIES → ACCOMPANY)."""
    forms = {token}
    if token.endswith("IES"):
        forms.add(token[:-3] + "Y")
    if token.endswith("ING"):
        forms.add(token[:-3] + "E")
    return forms


def type_stems(rel_type: str) -> set[str]:
    """The lexicon stems a relation type is made of (BECOMES_COMPANION_OF → {COMPANION})."""
    stems: set[str] = set()
    for token in rel_type.upper().split("_"):
        for form in _token_forms(token):
            for stem in RELATION_WORDS:
                if form in {stem + suffix for suffix in _SUFFIXES}:
                    stems.add(stem)
    return stems


def relation_words(rel_type: str) -> set[str]:
    """Question words that suggest a relation type, from its tokens' stems."""
    words: set[str] = set()
    for stem in type_stems(rel_type):
        words.update(RELATION_WORDS[stem])
    return words


def word_in(word: str, text: str) -> bool:
    """Does a lexicon word occur in (lower-cased) text? Japanese: substring. English: at a word
    start; words of up to 3 letters only whole or with an inflection (go / goes, not good)."""
    word = word.lower()
    if not word.isascii():
        return word in text
    if len(word) <= 3:
        return re.search(rf"\b{re.escape(word)}(?:s|es|ed|d|ing|ne|n)?\b", text) is not None
    return re.search(rf"\b{re.escape(word)}", text) is not None


def mask_names(text: str, names: Iterable[str]) -> str:
    """The text with the given entity names blanked out, longest first, so words inside a name
    (大将 in 鬼の大将, chief in "chief of the devils") do not count as relation words."""
    masked = text
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        masked = re.sub(re.escape(name), " ", masked, flags=re.IGNORECASE)
    return masked


def question_stems(question: str) -> set[str]:
    """Stems whose words occur in the question (case-insensitive, see `word_in`)."""
    raw = question.lower()
    return {stem for stem, vocab in RELATION_WORDS.items() if any(word_in(w, raw) for w in vocab)}


def related_stems(stems: set[str]) -> set[str]:
    """The stems and every stem sharing a field of meaning with one of them."""
    related = set(stems)
    for field in RELATION_FIELDS:
        if field & stems:
            related |= field
    return related
