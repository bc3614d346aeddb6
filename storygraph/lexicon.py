"""Words that signal a relation type, in Japanese and English, for the cheap fallback scorer.

Keys are stems of relation-type tokens (DEFEATS → DEFEAT); values are substrings to look for
in a question. This is general story vocabulary, not tuned to any test question.
"""

from __future__ import annotations

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
    "GO": ("行", "向か", "出かけ", "go ", "went", "travel", "head"),
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
}


def relation_words(rel_type: str) -> set[str]:
    """Question words that suggest a relation type, from its tokens' stems."""
    words: set[str] = set()
    for token in rel_type.upper().split("_"):
        for stem, vocab in RELATION_WORDS.items():
            if token in {stem + suffix for suffix in _SUFFIXES}:
                words.update(vocab)
    return words


_SUFFIXES = ("", "S", "ES", "D", "ED", "ING", "SHIP")
