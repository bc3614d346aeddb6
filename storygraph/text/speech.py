"""Who said what: quotations attributed to their speakers (and listeners) by construction.

A story's lines are written in a few constructions, and the speaker stands in a fixed place in
each; a quote outside them is left unattributed (a title in 『』, a thought, a line whose speaker
the story leaves to the reader), since a wrong speaker is worse than none. The classes, each
named in `Speech.pattern`:

- ``ja:quote-と-X`` — 「…」と犬が言いました / 「…」⏎ときじは桃太郎にたずねました: the speaker
  is the が / は noun after the quote's と, before a verb of saying;
- ``ja:X-quote-と`` — 犬は「…」と言いました / 犬は桃太郎に向かって、「…」とさけびました /
  おじいさんはびっくりして、⏎「…」⏎と聞きました: the speaker is the は / が noun before the
  quote (at most one short clause between), and a verb of saying follows its と;
- ``ja:quote-言って-X`` — 「…」⏎こう言って、猿が…: a te-form of saying shares its subject;
- ``ja:quote-Xがこう言う`` — 「…」⏎桃太郎がこういうと、…: the next sentence says who said so;
- ``ja:before`` / ``ja:before-こう言った`` — a line alone right after a sentence of saying with
  no quote of its own (犬が桃太郎に言いました。⏎「…」 / 熊は…こう言いました。⏎「…」);
- ``ja:after`` — a line alone, then such a sentence (「…」⏎熊は低い声で言い放ちました。);
  between two lines only こう (the next) or そう (the one before) says which it is;
- ``en:quote-said-X`` — "…," said the Hare / "…!" shrieked the Magpie / "…," the Hare replied;
- ``en:X-said-quote`` — The Tortoise said, "…" / The Hare said to the Tortoise: "…";
- ``en:said-X-quote`` — Then said the Wolf, "…";
- ``en:before`` — The Hare spoke to the Tortoise. "…";
- ``en:continued`` — a quote right after the attribution of the line before ("…," said the
  Hare. "And now …"): the same speaker goes on. Nothing else in an adjacent sentence counts;
- ``ja:turn`` / ``en:turn`` — a dialogue going on: a line alone (a paragraph of its own) right
  after a line said to someone (「…」と狐が熊に言いました。⏎「…」, "…," the Owl asked the
  Mole.⏎⏎"…") is that one's answer, and after two speakers' lines one right after the other
  their turns alternate (A, B, then A, B) while nothing but line breaks stands between;
- ``ja:narration-before`` — a line alone right after a sentence of narration whose one subject
  is a name of the story acting toward another one (犬は桃太郎のそばへ来ました。⏎「…」): the
  subject's (not after a question, not a sentence of hearing, seeing or thinking, not passive).

A line several speakers say (「…」と犬と猿が言いました, おじいさんもおばあさんも言いました,
"said the Cat and the Fox") is each one's: one `Speech` per speaker, the same quote and
sentence; when one item of the list is no name by itself (犬と一緒に猿が), the last name alone.

A quote cut by its attribution ("What I meant," said the Stork, "was …") is one line:
the part after the attribution belongs to the same speaker and the evidence sentence runs to
its end.

The listener: the に / "to" noun of the attribution (桃太郎に, "said the Hare to the Tortoise",
"told the Hare"); else a name the quote opens by calling (「桃太郎さん、…」, "Hare, …"); else,
in a conversation, the one other speaker of the lines around it (``+turn``: two speakers taking
turns speak to each other; a third one near, or a scene break, and no one is). A line with no
listener found keeps an empty `listener`.

`names`, when given, are the story's names as the readers wrote them (`ProposedFact` subjects
and objects): a speaker or listener is written as the longest such name its words end with
(桃太郎さん → 桃太郎 when the story writes 桃太郎; "the Grey Rabbit" → "Grey Rabbit"). Without
one, a Japanese speaker must look like a name (kanji or katakana, or an honorific) and an
English one must be capitalised or follow "the".

Pure text work, no parser: the ingest runs it beside the language readers
(storygraph.ingest.frames.extractor.speech_facts), and the question side reads a stored line's
quote back out of its evidence sentence (`quotes_in`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

from storygraph.text.vocabulary import SAYS_TYPE

SAYS = SAYS_TYPE
"""The relation type a line is stored with (speaker -[SAYS]-> listener); it is the verb
table's row of the same name (`storygraph.text.vocabulary`), so questions about saying read it."""

SPEECH_STEMS_JA = (
    "言", "云", "いい", "いっ", "いわ", "いう", "いえ", "叫", "さけ", "答", "こたえ", "たず",
    "尋", "訊", "聞", "きき", "きい", "きく", "申", "もうし", "もうす", "話", "はなし", "はなす",
    "呼", "よび", "よん", "よば", "怒鳴", "どな", "ささや", "つぶや", "呟", "頼", "たの", "わめ",
    "返事", "返し", "語", "かたり", "かたっ", "告げ", "つげ", "しゃべ", "笑", "わらい", "わらっ",
    "泣", "なき", "歌", "うたい", "うたっ", "ことわ", "断", "あやま", "謝", "ほめ", "褒", "命じ",
    "たずね", "おっしゃ", "仰", "問", "質問", "返答", "つけ加え", "付け加え",
)
"""How a Japanese verb of saying starts, as a line's verb is written (言いました, さけびました,
答えました, たずねました, 聞きました, 申しました …). The verb must follow the quote's と (or
the speaker's particle) closely, so the short kana stems match only there."""

SAYING_STEMS_JA = (
    "言", "いい", "いっ", "云", "叫", "さけ", "答", "こたえ", "たず", "尋", "訊", "申", "話",
    "返事", "返答", "質問", "問い", "問う", "どな", "怒鳴", "つけ加え", "付け加え", "つぶや", "呟",
    "ささや", "呼", "わめ", "頼", "おっしゃ", "仰っ", "仰せ",
)
"""The verbs of saying (of `SPEECH_STEMS_JA`) that make a sentence of saying by themselves, with
no quote's と before them (熊はこう言いました。⏎「…」, 「…」⏎熊は低い声で答えました。): not a
verb that is often something else there (聞いた: heard; 笑った, 泣いた, 歌った)."""

SPEECH_VERBS_EN = (
    "said", "says", "say", "replied", "replies", "answered", "asked", "cried", "exclaimed",
    "shouted", "screamed", "whispered", "called", "added", "continued", "went on", "began",
    "remarked", "observed", "repeated", "muttered", "growled", "roared", "sighed", "sobbed",
    "begged", "pleaded", "thought", "interrupted", "explained", "declared", "answered",
    "yelled", "laughed", "snapped", "told", "tells", "inquired", "enquired", "retorted",
)
"""English verbs a line is attributed with (past and present forms as written)."""

_THOUGHT_EN = frozenset({"thought"})
"""A thought is no line (it is said to no one): "…," thought the Mole gives no fact."""
_THOUGHT_JA = ("思", "おも", "考", "かんが")
"""「…」と思いました: a thought, no line."""

_HONORIFICS = ("さん", "さま", "様", "殿", "どの", "どん", "ちゃん", "君", "くん")
_LEADING_JA = (
    "すると", "そこで", "そして", "それから", "それで", "また", "やがて", "ところが", "でも",
    "けれども", "しかし", "だから", "今度は", "こんどは", "すぐに", "すぐ", "とうとう", "ついに",
    "まもなく", "そのとき", "その時", "さて", "ふと", "もう一度", "もういちど",
)
_JA_SUBJECT = "(?:が|は|も)"
_JA_NAME = r"[^、。！？!?「」『』\s\n]{1,16}?"
_EN_STOP = frozenset(
    {
        "to", "in", "at", "with", "and", "as", "for", "from", "of", "on", "but", "who",
        "when", "while", "after", "before", "then", "again", "quietly", "softly", "loudly",
        "once", "angrily", "very", "rather", "so", "that", "this", "into", "his", "her",
        "their", "its", "a", "an", "the", "was", "had", "is",
    }
)
_EN_PRONOUNS = frozenset({"he", "she", "they", "it", "i", "we", "you", "him", "her", "them"})


@dataclass(frozen=True)
class Speech:
    """One line: `speaker` said `quote` (to `listener`, "" when none is found), in `sentence`
    (the text from the sentence's start, quote and attribution included) at offset `start`;
    `pattern` names the construction (module docstring)."""

    speaker: str
    quote: str
    listener: str
    sentence: str
    start: int
    pattern: str


@dataclass(frozen=True)
class _Quote:
    start: int  # the opening mark
    end: int  # after the closing mark
    inner: str
    language: str  # "ja" for 「」, "en" for “” and ""


# --- quotes ----------------------------------------------------------------------------------

_OPEN_CLOSE = {"「": "」", "“": "”"}


def quote_spans(text: str) -> list[_Quote]:
    """The outermost quotes of `text` in order: 「…」 (with 『』 inside), “…”, and "…" pairs in a
    paragraph. A 『』 alone is a title, never a line; a quote left open ends at a blank line."""
    found: list[_Quote] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        close = _OPEN_CLOSE.get(ch)
        if close is None and ch == '"':
            close = '"'
        if close is None:
            i += 1
            continue
        end = _closing(text, i, ch, close)
        if end is None:
            i += 1
            continue
        inner = text[i + 1 : end].strip()
        if inner:
            found.append(_Quote(i, end + 1, inner, "ja" if ch == "「" else "en"))
        i = end + 1
    return found


def _closing(text: str, start: int, opening: str, close: str) -> int | None:
    """Index of the mark closing the quote opened at `start` (nesting counted for 「」), or
    None when the paragraph ends first."""
    depth = 0
    for j in range(start, len(text)):
        ch = text[j]
        if text.startswith("\n\n", j) or (close == '"' and ch == "\n" and j > start + 1
                                          and text[j - 1] == "\n"):
            return None
        if ch == opening and close != '"':
            depth += 1
        elif ch == close and j > start:
            depth -= 1 if close != '"' else 0
            if close == '"' or depth == 0:
                return j
    return None


def quotes_in(sentence: str) -> list[str]:
    """The quoted words of an evidence sentence (what a stored line says), in order."""
    return [q.inner for q in quote_spans(sentence)]


# --- sentences -------------------------------------------------------------------------------

def _quoted_mask(text: str, quotes: Sequence[_Quote]) -> bytearray:
    """1 for every character inside a quote (its marks included), else 0."""
    mask = bytearray(len(text))
    for q in quotes:
        mask[q.start : q.end] = b"\x01" * (q.end - q.start)
    return mask


def _sentence_start(text: str, pos: int, inside: bytearray, language: str) -> int:
    """Where the sentence holding `pos` starts: after the last sentence end outside a quote.
    A line break ends a Japanese sentence only after a full stop or a quote (おじいさんは
    びっくりして、⏎「…」 goes on); an English one only as a blank line (hard-wrapped text)."""
    j = pos - 1
    while j >= 0:
        ch = text[j]
        if ch in "\"”" and j > 0 and text[j - 1] in ".!?" and text[j + 1 : j + 2] in (" ", "\n"):
            break  # '… gold." "With all my heart," said Hans': the line before ends there
        if inside[j]:
            j -= 1
            continue
        if ch in "。！？" or (ch in ".!?" and j + 1 < len(text) and text[j + 1] in " \n"):
            break
        if ch == "\n":
            before = text[max(0, j - 80) : j].rstrip(" 　\t\r")
            if language == "ja" and (not before or before[-1] in "。！？」\n"):
                break
            if language != "ja" and before.endswith("\n"):
                break
        j -= 1
    k = j + 1
    while k < pos and text[k] in " 　\t\r\n":
        k += 1
    return k


def _sentence_end(text: str, pos: int, language: str) -> int:
    """The end (exclusive) of the narration from `pos` (right after a quote) to its sentence
    end, not past another quote. Japanese: a quote ends its sentence unless と / って / 、
    goes on from it (on the next line too: 「…」⏎と言いました。); English: a quote ending in a
    full stop ends its sentence when a new one follows ("…best.” Then …")."""
    if language == "ja":
        k = pos
        while k < len(text) and text[k] in " 　\t\r\n":
            k += 1
        if not text.startswith(("と", "っ", "、"), k):
            return pos
        j = k
        while j < len(text) and text[j] not in "。！？「\n":
            j += 1
        return j + 1 if j < len(text) and text[j] in "。！？" else j
    rest = text[pos:].lstrip(" 　")
    ended = pos >= 2 and text[pos - 2] in ".!?"
    if ended and (not rest or rest[0] in "\n“\"" or rest[0].isupper()):
        return pos
    j = pos
    while j < len(text):
        ch = text[j]
        if text.startswith("\n\n", j):
            return j
        if ch in "“\"":
            return j
        if ch in ".!?" and (j + 1 >= len(text) or text[j + 1] in " \n\"”"):
            return j + 1
        j += 1
    return j


# --- names -----------------------------------------------------------------------------------


_KATAKANA_NAME = re.compile(r"[\u30a1-\u30fa\u30fc・]{2,10}")


class SpeechNames:
    """The story's names, for writing a speaker as the readers wrote it (build it once for many
    texts: `read_speech` takes it in place of the names)."""

    def __init__(self, names: Iterable[str]) -> None:
        self.names = sorted({n for n in names if n}, key=len, reverse=True)
        self.lower = {n.lower(): n for n in self.names}

    def ja(self, words: str) -> str:
        """The story's longest name `words` ends with (after an honorific is cut), else the words
        when they look like a name, else ""."""
        words = _strip_leading_ja(words.strip(" 　、"))
        for suffix in _HONORIFICS:  # 桃太郎さん is 桃太郎 when the story names him so
            bare = words[: -len(suffix)]
            if words.endswith(suffix) and bare and bare in self.lower:
                return bare
        for suffix in ("", *_HONORIFICS):
            bare = words[: -len(suffix)] if suffix and words.endswith(suffix) else words
            if suffix and bare == words:
                continue
            for name in self.names:
                if bare.endswith(name) and (bare == name or not _is_kana_tail(bare, name)):
                    return name
        if words in self.lower:
            return words
        # 熊 for the story's one 森の熊 (a name the reader wrote with its owner)
        lone_kana = len(words) == 1 and "\u3040" <= words <= "\u30ff"
        owned = [n for n in self.names if n.endswith("の" + words)] if not lone_kana else []
        if len(owned) == 1:
            return owned[0]
        if not self.names and _looks_like_name_ja(words):
            return words
        if _looks_like_name_ja(words) and words.endswith(_HONORIFICS):
            return words
        if _KATAKANA_NAME.fullmatch(words):
            return words  # a katakana word in a speaker's place is a name the reader missed
        return ""

    def en(self, words: str) -> str:
        """The story's longest name the words are (case-insensitive), else the words when they
        are capitalised or came after "the"; pronouns are no one."""
        words = words.strip(" ,.;:")
        if not words or words.lower() in _EN_PRONOUNS:
            return ""
        bare = re.sub(r"^(?:the|a|an)\s+", "", words, flags=re.IGNORECASE)
        for candidate in (words, bare):
            found = self.lower.get(candidate.lower())
            if found:
                return found
        for name in self.names:
            if bare.lower().endswith(name.lower()) and (
                len(name) == len(bare) or bare[-len(name) - 1] == " "
            ):
                return name
        # the story's one longer name ending in it ("Rabbit" → "White Rabbit"), as the English
        # reader writes a one-word name (storygraph.ingest.frames.en)
        longer = [n for n in self.names if n.lower().endswith(" " + bare.lower())]
        one = len(longer) == 1 and " " not in bare
        return longer[0] if one else bare


def _is_kana_tail(words: str, name: str) -> bool:
    """犬 inside 子犬 is fine; き inside 大きき is not a name written at the end of a longer word:
    a one-kana name must stand alone."""
    return len(name) == 1 and "\u3040" <= name <= "\u30ff"


def _strip_leading_ja(words: str) -> str:
    changed = True
    while changed:
        changed = False
        for lead in _LEADING_JA:
            if words.startswith(lead) and len(words) > len(lead):
                words = words[len(lead) :].lstrip("、 　")
                changed = True
    return words


def _looks_like_name_ja(words: str) -> bool:
    """Kanji or katakana in it, or an honorific; at most 10 characters; no hiragana-only run
    that reads as a clause (したので, すると)."""
    if not words or len(words) > 10:
        return False
    if words.endswith(_HONORIFICS):
        return True
    return any("\u4e00" <= c <= "\u9fff" or "\u30a0" <= c <= "\u30ff" for c in words) and not any(
        c in "をにでへと" for c in words[-1:]
    )


# --- Japanese attribution --------------------------------------------------------------------

_JA_ITEM = r"[^、。！？!?「」『』\s\nがは]{1,16}?"
"""One name of a list 犬と、猿と、きじが (no subject particle in it)."""
_JA_AFTER = re.compile(
    rf"^[\s　]*(?:と|って|とか)[、\s　]*(?P<lead>(?:{'|'.join(_LEADING_JA)})[、\s　]*)?"
    rf"(?P<speaker>(?:{_JA_ITEM}(?:と|や)、[\s　]*){{0,4}}?{_JA_NAME}){_JA_SUBJECT}[、\s　]*"
    rf"(?:(?P<listener>{_JA_NAME})(?:に|へ)(?:向かって|むかって|むかい)?[、\s　]*)?"
    r"(?P<verb>[^、。！？「」]{0,12})"
)
_JA_AFTER_BARE = re.compile(r"^[\s　]*(?:と|って)[、\s　]*(?P<verb>[^、。！？「」]{0,14})")
_JA_BEFORE = re.compile(
    rf"(?P<speaker>{_JA_NAME}){_JA_SUBJECT}[、\s　]*"
    rf"(?:(?P<listener>{_JA_NAME})(?:に|へ)(?:向かって|むかって|むかい)?[、\s　]*)?"
    r"(?:[^。「」！？\n、]{1,16}、[\s　]*)?$"
)
"""X は (Y に) 「: the speaker right before the quote, or before one short clause that ends
in 、 (おじいさんはびっくりして、⏎「…」と聞きました)."""
_JA_SAID_THEN = re.compile(
    r"^[\s　]*(?:と|って|こう|そう)?[\s　]*"
    r"(?:言って|いって|言いながら|いいながら|さけんで|叫んで|こたえて|答えて|たずねて|尋ねて)"
    rf"[、\s　]*(?P<speaker>{_JA_NAME}){_JA_SUBJECT}"
)
"""「…」⏎こう言って、猿が…: the te-form of saying shares its subject with what follows."""
_JA_SAID_SO = re.compile(
    rf"^[\s　]*(?P<speaker>{_JA_NAME}){_JA_SUBJECT}[、\s　]*(?:こう|そう)"
    r"(?:言|いう|いっ|いい|さけ|叫|こた|答)"
)
"""「…」⏎桃太郎がこういうと: the next sentence names who said so."""
_JA_LISTENER_AFTER = re.compile(rf"^[\s　]*(?P<listener>{_JA_NAME})(?:に|へ)(?:向かって)?")


_JA_NOT_SAID = re.compile(r"^(?:言|い)わ(?:ない|ず|なかっ|ぬ|ん)")
"""「…」と言わないばかりの顔: a line not said."""


def _ja_verb(text: str) -> bool:
    """A verb of saying opens `text` (a thought, or a verb of saying negated, does not)."""
    text = text.lstrip("、 　")
    if text.startswith(_THOUGHT_JA) or _JA_NOT_SAID.match(text):
        return False
    return text.startswith(SPEECH_STEMS_JA)


def _points_forward(text: str, pos: int) -> bool:
    """The sentence of saying at `pos` ends there (こう答えました。, no clause after it) and a
    line follows it: its こう is that line's."""
    end = text.find("。", pos)
    if end < 0 or "、" in text[pos:end] or end - pos > 12:
        return False
    return text[end + 1 :].lstrip(" 　\n").startswith("「")


def _attribute_ja(text: str, q: _Quote, sentence_start: int, names: _Names,
                  follows: bool) -> _Found | None:
    """(speakers, listener, pattern) of a 「」 line, or None."""
    after = text[q.end : q.end + 60].split("\n\n", 1)[0]
    m = _JA_AFTER.match(after)
    if m:
        speakers, end = _ja_who(m, names)
        verb = m.group("verb") or ""
        if end > m.end("speaker") + 1:  # おじいさんもおばあさんも: the verb after the last
            verb = _JA_LISTENER_AFTER.sub("", after[end:].lstrip("、 　"), count=1)
        if speakers and _ja_verb(verb):
            listener = names.ja(m.group("listener") or "") if m.group("listener") else ""
            return speakers, listener, "ja:quote-と-X"
    for regex, pattern in (
        (_JA_SAID_THEN, "ja:quote-言って-X"),
        (_JA_SAID_SO, "ja:quote-Xがこう言う"),
    ):
        m = regex.match(after)
        speakers = _ja_who(m, names)[0] if m else ()
        if m and regex is _JA_SAID_SO and _points_forward(text, q.end + m.end()):
            continue  # 「…」⏎熊はこう答えました。⏎「…」: the line after is his
        if speakers:
            return speakers, "", pattern
    bare = _JA_AFTER_BARE.match(after)
    if bare is None:
        return None
    verb_text = bare.group("verb")
    listener_here = ""
    lm = _JA_LISTENER_AFTER.match(verb_text)
    if lm:
        listener_here = names.ja(lm.group("listener"))
        verb_text = verb_text[lm.end() :]
    if not _ja_verb(verb_text):
        return None
    before = text[sentence_start : q.start]
    if follows:  # 犬は「…」「…」と: the speaker stands before the first of the run
        return None
    b = _JA_BEFORE.search(before)
    if b:
        speakers = _ja_who(b, names)[0]
        if speakers:
            listener = names.ja(b.group("listener")) if b.group("listener") else listener_here
            return speakers, listener, "ja:X-quote-と"
    return None


_Found = tuple[tuple[str, ...], str, str]
"""An attribution: the speakers (one, or every name of a list: 犬と猿が言いました), the
listener ("" when none is said) and the construction's pattern."""

_JA_LIST_SEP = re.compile(r"[、\s　]*(?:と|や|も)[、\s　]*|[、\s　]+")
_JA_ALSO = re.compile(rf"[、\s　]*(?P<name>{_JA_NAME})も")


def _ja_who(m: re.Match[str], names: _Names) -> tuple[tuple[str, ...], int]:
    """The speakers a match's `speaker` words name, and where (in the matched string) their
    subject ends: one name (犬が), or every name of a list (犬と猿が, おじいさんもおばあさんも,
    犬と、猿と、きじは). A list's every item must be a name by itself (犬と一緒に猿が is the
    猿 alone: the words are one speaker, the last name they end with)."""
    words = _strip_leading_ja(m.group("speaker").strip(" 　、"))
    end = m.end("speaker") + 1
    found: tuple[str, ...] = ()
    parts = _JA_LIST_SEP.split(words)
    if len(parts) >= 2 and all(parts):
        items = [_ja_item(part, names) for part in parts]
        if all(items):
            found = tuple(dict.fromkeys(items))
    if not found:
        whole = names.ja(words)
        found = (whole,) if whole else ()
    if found and m.string[m.end("speaker") : end] == "も":
        more = list(found)  # XもYも: the first も ends the match's words, the rest follow
        while (also := _JA_ALSO.match(m.string, end)) is not None:
            item = _ja_item(also.group("name"), names)
            if not item:
                break
            more.append(item)
            end = also.end()
        found = tuple(dict.fromkeys(more))
    return found, end


def _ja_item(words: str, names: _Names) -> str:
    """The name one item of a list is, when it is no more than a name (犬, 桃太郎さん, 大きな犬),
    else "" (一緒に猿, 森で熊: a clause, not an item)."""
    words = words.strip(" 　、")
    found = names.ja(words)
    if not found:
        return ""
    kana_end = "\u3040" <= words[-1] <= "\u309f" and not words.endswith(_HONORIFICS)
    if kana_end and words not in names.lower:
        return ""  # 一度振ります, それを見る(と): a clause ending in a verb, not a name
    bare = words
    for suffix in _HONORIFICS:
        if bare.endswith(suffix) and len(bare) > len(suffix):
            bare = bare[: -len(suffix)]
            break
    if found in (words, bare) or found.endswith("の" + bare):
        return found
    head = bare[: len(bare) - len(found)] if bare.endswith(found) else "?" * 9
    return found if len(head) <= 3 and not any(c in "にでをへがはとや" for c in head) else ""


# --- English attribution ---------------------------------------------------------------------

_EN_VERB = "|".join(sorted((re.escape(v) for v in SPEECH_VERBS_EN), key=len, reverse=True))
_EN_NOT_STOP = r"(?!(?:to|in|at|with|and|as|for|from|of|on|but|who|when|while|after|then)\b)"
_EN_NP = (
    r"(?P<{g}>(?:the\s+)?(?:" + _EN_NOT_STOP + r"[A-Za-z][\w'-]*\s+){{0,2}}"
    + _EN_NOT_STOP + r"[A-Za-z][\w'-]*)"
)
_EN_CO = r"(?:the\s+[\w'-]+(?:\s+[A-Z][\w'-]*)?|[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)"
_EN_MORE = rf"(?P<more>(?:\s*,\s*{_EN_CO})*,?\s+and\s+{_EN_CO})?"
"""The other speakers of a list (the Cat and the Fox; Tom, Bess and the Owl)."""
_EN_MORE_ENDED = rf"(?P<more>(?:\s*,\s*{_EN_CO})*,?\s+and\s+{_EN_CO}(?=\s*(?:[,.;:!?—]|$)))?"
"""A list after its verb ends its clause: "said Tom and the Owl." ("said Tom, and the Owl
laughed" is one speaker)."""
_EN_AFTER_INVERTED = re.compile(
    rf"^[\s,]*(?P<verb>{_EN_VERB}|[a-z]+ed)\s+{_EN_NP.format(g='speaker')}{_EN_MORE_ENDED}"
    rf"(?:\s+to\s+{_EN_NP.format(g='listener')})?(?=[\s,.;:!?—-]|$)"
)
_EN_AFTER_PLAIN = re.compile(
    rf"^[\s,]*{_EN_NP.format(g='speaker')}{_EN_MORE}\s+(?:\w+ly\s+)?(?P<verb>{_EN_VERB})"
    rf"(?:\s+to\s+{_EN_NP.format(g='listener')}|\s+(?P<object>(?:the\s+)?[A-Z][\w'-]*))?"
    r"(?=[\s,.;:!?—-]|$)"
)
_EN_BEFORE = re.compile(
    rf"{_EN_NP.format(g='speaker')}{_EN_MORE}\s+(?:\w+ly\s+)?(?P<verb>{_EN_VERB})"
    rf"(?:\s+(?:to\s+)?{_EN_NP.format(g='listener')})?(?:\s+\w+ly)?\s*[,:]?\s*$"
)
_EN_BEFORE_INVERTED = re.compile(
    rf"\b(?P<verb>{_EN_VERB})\s+{_EN_NP.format(g='speaker')}{_EN_MORE}\s*[,:]\s*$"
)
"""Then said the Wolf, "…": the verb before its speaker, before the quote."""
_EN_TELL = frozenset({"told", "tells", "asked", "answered", "called"})
"""Verbs whose direct object is the listener ("told the Hare", "asked Bess")."""


def _en_np(words: str | None, names: _Names, *, capital: bool = False) -> str:
    """The speaker (or listener) a phrase of the attribution names: "the" and its noun words
    (the old man), else a run of capitalised words (Old Tom, not "Hans aloud"); a pronoun in
    it ("in the seventh year he") is no one this reader can name."""
    if not words:
        return ""
    parts = words.split()
    if any(p.lower() in _EN_PRONOUNS for p in parts):
        return ""
    kept: list[str] = []
    has_the = bool(parts) and parts[0].lower() == "the"
    if has_the:
        kept.append(parts[0])
        parts = parts[1:]
    for word in parts:
        if word.lower() in _EN_STOP or (word.lower().endswith("ly") and len(kept) > 0):
            break
        if not has_the and not word[:1].isupper() and kept:
            break
        kept.append(word)
    phrase = " ".join(kept)
    core = phrase[4:] if has_the else phrase
    if not core or core.lower() in _EN_STOP:
        return ""
    if not has_the and not core[:1].isupper() and core.lower() not in names.lower:
        return ""
    if capital and not core[:1].isupper() and core.lower() not in names.lower:
        return ""
    return names.en(phrase)


def _en_who(m: re.Match[str], names: _Names) -> tuple[str, ...]:
    """The speakers a match names: its speaker, and the others of a list after it (the Cat
    and the Fox), when every one of them is someone this reader can name."""
    speaker = _en_np(m.group("speaker"), names)
    if not speaker:
        return ()
    more = m.group("more")
    if not more:
        return (speaker,)
    parts = [p for p in re.split(r"(?:^|\s*,\s*|\s+)and\s+|\s*,\s*", more.strip(" ,")) if p]
    others = [_en_np(part, names) for part in parts]
    return tuple(dict.fromkeys((speaker, *others))) if all(others) else (speaker,)


def _attribute_en(text: str, q: _Quote, sentence_start: int, names: _Names,
                  follows: bool) -> _Found | None:
    """(speakers, listener, pattern) of a “” line, or None."""
    after = text[q.end : q.end + 120].split("\n\n", 1)[0].replace("\n", " ")
    for regex in (_EN_AFTER_INVERTED, _EN_AFTER_PLAIN):
        m = regex.match(after)
        if m is None:
            continue
        if m.group("verb") in _THOUGHT_EN:
            return None
        speakers = _en_who(m, names)
        if not speakers:
            continue
        listener = _en_np(m.group("listener"), names)
        if not listener and "object" in m.groupdict() and m.group("verb") in _EN_TELL:
            listener = _en_np(m.group("object"), names, capital=True)
        return speakers, listener, "en:quote-said-X"
    if follows:
        return None
    before = text[sentence_start : q.start].replace("\n", " ")
    b = _EN_BEFORE.search(before)
    if b and b.group("verb") not in _THOUGHT_EN:
        speakers = _en_who(b, names)
        if speakers:
            listener = ""
            if b.group("listener") and (
                b.group("verb") in _EN_TELL or re.search(r"\bto\s", b.group(0))
            ):
                listener = _en_np(b.group("listener"), names)
            return speakers, listener, "en:X-said-quote"
    inverted = _EN_BEFORE_INVERTED.search(before)
    if inverted and inverted.group("verb") not in _THOUGHT_EN:
        speakers = _en_who(inverted, names)
        if speakers:
            return speakers, "", "en:said-X-quote"
    return None


# --- the text --------------------------------------------------------------------------------


_Names = SpeechNames


def read_speech(text: str, names: Iterable[str] | SpeechNames = ()) -> list[Speech]:
    """Every attributed line of `text`, in order (module docstring)."""
    known = names if isinstance(names, SpeechNames) else SpeechNames(names)
    quotes = quote_spans(text)
    inside = _quoted_mask(text, quotes)
    lines: list[Speech] = []
    skip: set[int] = set()
    found_at: dict[int, list[Speech]] = {}
    for index, q in enumerate(quotes):
        if index in skip:
            continue
        start = _sentence_start(text, q.start, inside, q.language)
        previous = quotes[index - 1] if index else None
        between = text[previous.end : q.start] if previous is not None else "x"
        # 「…」「…」と: one run of lines (a Japanese line break starts a new one)
        follows = not between.strip(" 　" if q.language == "ja" else " 　\n")
        attribute = _attribute_ja if q.language == "ja" else _attribute_en
        found = attribute(text, q, start, known, follows)
        pattern_extra = ""
        if found is None and not follows:
            before = _before_sentence(text, q, start, known)
            if before is not None:
                found, start = before[:3], before[3]
        end = _sentence_end(text, q.end, q.language)
        if found is None and not follows:
            after = _after_sentence(text, q, start, known)
            if after is not None:
                found, end = (after[0], "", "ja:after"), after[1]
        if found is None and lines and q.language == "en":
            found = _continued(text, lines, q)
        if found is None:
            continue
        speakers, listener, pattern = found
        quote = q.inner
        nxt = quotes[index + 1] if index + 1 < len(quotes) else None
        if q.language == "en" and nxt is not None and pattern == "en:quote-said-X":
            between = text[q.end : nxt.start]
            joined = between.rstrip().endswith((",", ":", ";", "—"))
            if "\n\n" not in between and joined and not re.search(r"[.!?]\s", between):
                quote = f"{quote} … {nxt.inner}"  # "…," said the Stork, "…": one line
                end = _sentence_end(text, nxt.end, q.language)
                skip.add(index + 1)
        if not listener:
            listener = _vocative(quote, known, q.language)
            if listener:
                pattern_extra = "+vocative"
        if listener in speakers:
            listener = ""
        sentence = text[start:end].strip()
        said = [  # 「…」と犬と猿が言いました: the line is each one's
            Speech(speaker, quote, listener, sentence, start, pattern + pattern_extra)
            for speaker in speakers
        ]
        lines.extend(said)
        found_at[index] = said
    _dialogue(text, quotes, found_at, skip, known)
    ordered = [line for index in sorted(found_at) for line in found_at[index]]
    return _turns(ordered, text)


# --- a dialogue going on -----------------------------------------------------------------------


def _dialogue(
    text: str, quotes: Sequence[_Quote], found_at: dict[int, list[Speech]], joined: set[int],
    names: _Names,
) -> None:
    """The lines no construction attributed, where the dialogue around them says whose they
    are (in `found_at`, by quote): a line standing alone (a paragraph of its own, no と after
    it) right after the line of one speaker who spoke to someone is that one's answer, and
    after two speakers' lines the turns go on (``:turn``); a line right after a sentence of
    narration whose one subject is a name of the story, acting toward another one (犬は
    桃太郎のそばへ来ました。⏎「…」) is the subject's (``ja:narration-before``)."""
    for index, q in enumerate(quotes):
        if index in found_at or index in joined or not _alone(text, q):
            continue
        line = _turn(text, q, found_at.get(index - 1), found_at.get(index - 2))
        if line is None and q.language == "ja":
            line = _narration_before(text, q, names)
        if line is not None:
            found_at[index] = [line]


def _alone(text: str, q: _Quote) -> bool:
    """The quote stands alone: nothing but space before it on its line (its paragraph, in
    English) and nothing after it there; in Japanese no と / って / 、 on the next line."""
    head = text[: q.start]
    row = head[head.rfind("\n") + 1 :]
    if row.strip(" 　\t\r"):
        return False
    tail = text[q.end :]
    cut = tail.find("\n")
    if (tail if cut < 0 else tail[:cut]).strip(" 　\t\r"):
        return False
    if q.language == "ja":
        return not tail.lstrip(" 　\t\r\n").startswith(("と", "っ", "、"))
    return True


def _end_of(line: Speech) -> int:
    return line.start + len(line.sentence)


def _turn(
    text: str, q: _Quote, previous: list[Speech] | None, before: list[Speech] | None
) -> Speech | None:
    """A line alone right after one speaker's line (nothing but line breaks between, no
    scene break): the one that line spoke to answers (「…」と犬が桃太郎に言いました。⏎「…」:
    桃太郎's), else, when the line before that was another's right before it, that other one
    (A, then B, then A). A line several spoke together starts no turns."""
    if not previous or len(previous) != 1:
        return None
    last = previous[0]
    if not _next_to(text, _end_of(last), q.start, q.language) or not _only_attribution(last):
        return None
    if last.listener and last.listener != last.speaker:
        speaker = last.listener
    elif before and len(before) == 1 and before[0].speaker != last.speaker and _next_to(
        text, _end_of(before[0]), last.start, q.language
    ):
        speaker = before[0].speaker
    else:
        return None
    sentence = text[q.start : q.end]
    return Speech(speaker, q.inner, last.speaker, sentence, q.start, f"{q.language}:turn")


def _only_attribution(line: Speech) -> bool:
    """The line's sentence ends with its quote or a short attribution after it (と犬が桃太郎に
    言いました。, said the Owl.), not with more narration ("asked Tom; and turning to the Owl, he
    said:" goes on to another line of his)."""
    tail = line.sentence[max(line.sentence.rfind(c) for c in "」”\"") + 1 :].strip()
    return len(tail) <= _ATTRIBUTION_TAIL and not tail.endswith((":", "：")) and ";" not in tail


_ATTRIBUTION_TAIL = 40
"""How long the narration after a line's quote may be for the line after to be a turn."""


def _next_to(text: str, end: int, start: int, language: str) -> bool:
    """Only line breaks between two lines of a dialogue: at least one (a blank line in English,
    where one line break is hard-wrapping within a paragraph), no narration, no scene break."""
    gap = text[end:start]
    new_row = "\n" in gap if language == "ja" else "\n\n" in gap
    return end <= start and new_row and not gap.strip() and "\n\n\n" not in gap


_NOT_TOWARD = ("聞", "きこ", "きい", "見", "思", "おも", "考", "知", "気づ", "気が", "夢")
"""A narration sentence ending in hearing, seeing or thinking: the line after it may be what
its subject heard (「…」 is another's)."""


def _narration_before(text: str, q: _Quote, names: _Names) -> Speech | None:
    """犬は桃太郎のそばへ来ました。⏎「…」: a line alone right after a sentence of narration (no
    quote in it, no verb of saying, hearing or thinking at its end, not passive or negated)
    whose subjects (a name with は / が) are one name of the story, when the sentence names
    another one of the story or the line opens by calling one: the subject speaks (to that
    other one, when there is one). Not after a question (the answer may be the other's), nor
    when the line calls the subject by name."""
    if not names.names:
        return None
    window = max(0, q.start - 160)
    head = text[window : q.start].rstrip(" 　\t\r\n")
    if not head.endswith("。"):
        return None
    cut = max(head[:-1].rfind(c) for c in "。！？」\n") + 1
    sentence = head[cut:].strip(" 　\t\r\n")
    begins = window + cut + len(head[cut:]) - len(head[cut:].lstrip(" 　\t\r\n"))
    if (not sentence or "「" in sentence or sentence.startswith(("と", "っ", "こう", "そう"))
            or head[:cut].rstrip().endswith("、")):
        return None
    if head[:cut].rstrip(" 　\t\r\n").endswith(("？」", "?」")):
        return None  # 「…？」⏎巡査は狸へ目を向けました。⏎「…」: the answer may be the other's
    ending = sentence[-10:]
    if any(stem in ending for stem in (*SAYING_STEMS_JA, *_NOT_TOWARD, *_THOUGHT_JA)):
        return None
    if _not_said_by(sentence[-8:]):
        return None
    subjects: list[str] = []
    others: list[str] = []
    taken = bytearray(len(sentence))
    for name in names.names:  # longest first: 子犬 before 犬
        for m in re.finditer(re.escape(name), sentence):
            if any(taken[m.start() : m.end()]):
                continue
            taken[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
            rest = sentence[m.end() :]
            for suffix in _HONORIFICS:
                if rest.startswith(suffix):
                    rest = rest[len(suffix) :]
                    break
            (subjects if rest[:1] in ("は", "が") else others).append(name)
    speakers = set(subjects)
    if len(speakers) != 1:
        return None
    speaker = subjects[0]
    toward = {n for n in others if n != speaker}
    called = _vocative(q.inner, names, "ja")
    if called == speaker:
        return None  # the line calls the subject: another one speaks to it
    if called:
        toward = {called}
    if not toward:
        return None
    listener = next(iter(toward)) if len(toward) == 1 else ""
    evidence = text[begins : q.end]
    return Speech(speaker, q.inner, listener, evidence, begins, "ja:narration-before")


def _continued(text: str, lines: Sequence[Speech], q: _Quote) -> _Found | None:
    """“…,” said the Vole. “Let me be!”: a quote right after the attribution of the line
    before (nothing else between, no new paragraph) goes on with that speaker's words (with
    those speakers', when a list said it)."""
    last = lines[-1]
    speakers = tuple(s.speaker for s in lines if s.start == last.start and s.quote == last.quote)
    end = last.start + len(last.sentence)
    if end > q.start or text[end : q.start].strip() or "\n\n" in text[end : q.start]:
        return None
    if not last.pattern.startswith(("en:quote-said-X", "en:continued")):
        return None
    if last.sentence.rstrip().endswith(("”", '"')):
        return None  # the line before ends in its own quote: this one may be another's
    return speakers, last.listener, "en:continued"


_JA_BEFORE_SENTENCE = re.compile(
    rf"(?P<speaker>{_JA_NAME}){_JA_SUBJECT}[、\s　]*"
    rf"(?:(?P<listener>{_JA_NAME})(?:に|へ)(?:向かって|むかって)?[、\s　]*)?"
    r"(?P<verb>[^、。！？「」]{1,12})[。：:]\s*$"
)
_JA_SAID_SO_BEFORE = re.compile(
    rf"^(?P<speaker>{_JA_NAME}){_JA_SUBJECT}[^。「」！？]{{0,40}}?(?:こう|そう|次のように)?"
    r"(?P<verb>[^。「」！？、]{0,8}?(?:" + "|".join(SAYING_STEMS_JA) + r")[^。「」！？、]{0,10})"
    r"[。：:]\s*$"
)
"""熊は窓を開け、…こう言いました。⏎「…」: the sentence before ends in a verb of saying
(with こう / そう, "so", or not: 熊はだれにともなく呼びかけました), its speaker opening it."""
_EN_BEFORE_SENTENCE = re.compile(
    rf"{_EN_NP.format(g='speaker')}{_EN_MORE}\s+(?P<verb>{_EN_VERB}|spoke|speaks)"
    rf"(?:\s+(?:to\s+)?{_EN_NP.format(g='listener')})?[.:]\s*$"
)


def _before_sentence(
    text: str, q: _Quote, start: int, names: _Names
) -> tuple[tuple[str, ...], str, str, int] | None:
    """A quote that opens its own sentence, right after a sentence of saying with no quote of
    its own (犬が桃太郎に言いました。「…」): that sentence's speaker (speaker, listener,
    pattern, and the start of that sentence, which the line's evidence then begins with)."""
    if text[start : q.start].strip(" 　\n"):
        return None
    window = max(0, start - 120)
    head = text[window:start].rstrip(" 　\n")
    if not head or head[-1] in "」”\"":
        return None  # the sentence before ends in a quote of its own
    prev_start = max(head[:-1].rfind(c) for c in "。！？」”\"\n") + 1
    if q.language == "en":
        last = list(re.finditer(r"[.!?]\s+", head[:-1]))
        prev_start = max(prev_start, last[-1].end() if last else 0)
    previous = head[prev_start:]
    lead = len(previous) - len(previous.lstrip(" 　\n"))
    begins = window + prev_start + lead
    previous = previous.strip(" 　\n")
    if q.language == "ja":
        forward = _CATAPHORIC.search(previous) is not None
        after_quote = text[:begins].rstrip(" 　\n").endswith("」")
        if _ANAPHORIC.search(previous) or (after_quote and not forward):
            return None  # between two lines, only こう (this) says it is the next one's
        m = _JA_BEFORE_SENTENCE.search(previous)
        if m and _ja_verb(m.group("verb")) and not _not_said_by(m.group("verb")):
            speakers = _ja_who(m, names)[0]
            if speakers:
                listener = names.ja(m.group("listener")) if m.group("listener") else ""
                return speakers, listener, "ja:before", begins
        so = _JA_SAID_SO_BEFORE.search(previous)
        thought = so is not None and so.group("verb").startswith(_THOUGHT_JA)
        if so and not thought and not _not_said_by(so.group("verb")):
            speakers = _ja_who(so, names)[0]
            if speakers:
                return speakers, "", "ja:before-こう言った", begins
        return None
    new_paragraph = "\n\n" in text[begins : q.start]
    if new_paragraph and text[:begins].rstrip(" \t\r").endswith(("”", '"')):
        return None  # '"Where?" the Owl asked the Mole.⏎⏎"…"': the line before's attribution
    m = _EN_BEFORE_SENTENCE.search(previous)
    if m and m.group("verb") not in _THOUGHT_EN:
        speakers = _en_who(m, names)
        if speakers:
            return speakers, _en_np(m.group("listener"), names), "en:before", begins
    return None


_SAYING_HEAD = r"(?:[^。「」]{0,8})?(?:" + "|".join(SAYING_STEMS_JA) + ")"
_CATAPHORIC = re.compile(r"(?:こう|次のように)" + _SAYING_HEAD)
_ANAPHORIC = re.compile(r"そう" + _SAYING_HEAD)
"""こう言った points at the line after it, そう言った at the line before."""
_JA_SAID_AFTER = re.compile(
    rf"^(?P<speaker>{_JA_NAME}){_JA_SUBJECT}[^。「」！？]{{0,40}}?"
    r"(?P<verb>[^。「」！？、]{0,8}?(?:" + "|".join(SAYING_STEMS_JA) + r")[^。「」！？、]{0,10})"
    r"。"
)


def _after_sentence(
    text: str, q: _Quote, start: int, names: _Names
) -> tuple[tuple[str, ...], int] | None:
    """A Japanese quote standing alone (a sentence of its own, no と after it), then a sentence
    of saying with no quote of its own (「…」⏎熊は低い声で言い放ちました。): that sentence's
    speaker, and where that sentence ends (the line's evidence runs to it). Between two lines,
    only そう (so) says it is the line before's; こう points at the line before when narration,
    not a line, follows (「…」⏎ゲエルは無造作にこう言いました。しかし…: a first-person
    narrative's way), and at none when the text ends there (its line may be in the next chunk).
    A passive or negated verb (こう言われました, 答えませんでした) says no one's line."""
    if q.language != "ja" or text[start : q.start].strip(" 　\n"):
        return None
    k = q.end
    while k < len(text) and text[k] in " 　\t\r\n":
        k += 1
    if text.startswith(("と", "っ", "、", "「", "［"), k):
        return None
    m = _JA_SAID_AFTER.match(text[k : k + 90])
    if m is None or m.group("verb").startswith(_THOUGHT_JA):
        return None
    said = m.group(0)
    end = k + m.end()
    if _not_said_by(m.group("verb")):
        return None
    following = text[end:].lstrip(" 　\n")
    before_next = following.startswith("「")
    if before_next and not _ANAPHORIC.search(said):
        return None
    if _CATAPHORIC.search(said) and not following:
        return None  # こう at the text's end: the line it points at may be cut off
    speakers = _ja_who(m, names)[0]
    return (speakers, end) if speakers else None


_PASSIVE_OR_NOT = re.compile(r"(?:われ|られ|ばれ|せん|ない|なかっ|ず[、。に]|ずに)")


def _not_said_by(verb: str) -> bool:
    """A sentence of saying whose subject is not the speaker: passive (言われました: the other
    said it) or negated (答えませんでした)."""
    return _PASSIVE_OR_NOT.search(verb) is not None


def _vocative(quote: str, names: _Names, language: str) -> str:
    """A name the line opens by calling (「桃太郎さん、…」, "Hare, …"), when it is the story's."""
    if language == "ja":
        head = re.split(r"[、，！!]", quote, maxsplit=1)[0]
        if head == quote or not names.names:
            return ""
        found = names.ja(head)
        return found if found and len(head) <= len(found) + 3 else ""
    m = re.match(r"^(?:(?:oh|o|dear|my|you)\s+)?(?P<name>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)\s*[,!]",
                 quote)
    if not m or not names.names:
        return ""
    name = m.group("name")
    if name.split()[0].lower() in _INTERJECTIONS:
        return ""
    found = names.lower.get(name.lower()) or names.lower.get(re.sub(r"^Mr\.?\s+", "", name).lower())
    return found or ""


_INTERJECTIONS = frozenset(
    {"well", "yes", "no", "oh", "now", "why", "come", "look", "please", "dear", "alas",
     "indeed", "good", "thank", "thanks", "so", "then", "here", "there", "ah", "hush", "stop",
     "wait", "listen", "nonsense", "certainly", "sir", "madam"}
)
"""Words a line opens with that call no one ("Well, to be sure," even where a well is named)."""

_TURN_GAP = 400
"""How much narration (characters) may stand between two lines of one conversation."""


def _turns(lines: list[Speech], text: str) -> list[Speech]:
    """A line with no listener, in a conversation of two speakers taking turns, is said to the
    other: the lines around it (up to `_TURN_WINDOW` on each side, each close to the next: no
    blank line, at most `_TURN_GAP` of narration between) have exactly those two speakers. A
    third speaker among them gives no one (who speaks to whom is the story's to say); so does a
    line several speak together (犬と猿が言いました: to whom, the turns do not say)."""
    result = list(lines)
    together = {(s.start, s.quote) for s, t in pairwise(lines)
                if (s.start, s.quote) == (t.start, t.quote)}
    for i, line in enumerate(lines):
        if line.listener or (line.start, line.quote) in together:
            continue
        window = {line.speaker}
        for step in (-1, 1):
            j = i
            for _ in range(_TURN_WINDOW):
                k = j + step
                if not 0 <= k < len(lines):
                    break
                first, second = (lines[k], lines[j]) if step < 0 else (lines[j], lines[k])
                if not _same_scene(text, first, second):
                    break
                window.add(lines[k].speaker)
                j = k
        if len(window) == 2:
            other = next(iter(window - {line.speaker}))
            result[i] = replace(line, listener=other, pattern=line.pattern + "+turn")
    return result


_TURN_WINDOW = 2
"""How many lines on each side of a line make its conversation."""


def _same_scene(text: str, before: Speech, after: Speech) -> bool:
    """Two lines close by: at most `_TURN_GAP` characters between the first's sentence and
    the second's, and no scene break (two blank lines, or a line of a heading or a
    separator: CHAPTER V, 第三章, 二, * * *). One blank line is a paragraph's end: a novel
    writes each line of a conversation as its own paragraph."""
    between = text[before.start + len(before.sentence) : after.start]
    if len(between) > _TURN_GAP or "\n\n\n" in between:
        return False
    return not any(_SCENE_BREAK.match(row) for row in between.split("\n")[1:])


_SCENE_BREAK = re.compile(
    r"^(?=.*\S)[\s　]*(?:(?i:chapter)\b.*|第.{1,4}[章話節回].*"
    r"|[一二三四五六七八九十〇0-9０-９IVXLC.]{1,8}|[*＊◇◆□■○●・\s　-]+)[\s　]*$"
)
