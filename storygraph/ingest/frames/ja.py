"""Japanese frames from GiNZA: who did what to whom, read off the dependency parse.

For every predicate the reader collects its arguments by case particle — が/は subject, を
object, に/へ goal or recipient, と companion, から source, で place or means — as noun phrases
written as the story writes them (compounds and の-compounds kept: 鬼の大将), and turns each
(subject, argument) pair into a `ProposedFact` whose type comes from the one verb table
(`storygraph.text.vocabulary.relation_type_for`), or "" when the table has no row for the predicate.

What stories do, and what the reader does about it:

- coordination: おじいさんとおばあさんが… gives one fact per conjunct;
- te-form and 連用 chains (もらって、ついて行きました) share one subject;
- compound verbs (組み + ふせる) and te + subsidiary verbs (つい + て + 行く) are one predicate;
- relative clauses (鬼が島に住む鬼): the modified noun fills the clause's missing subject (or its
  object / place when the clause has a subject of its own);
- zero subjects are filled from the current topic (the last は-topic, else the last が-subject)
  of the same paragraph: the topic is forgotten at every new paragraph (a new line of
  narration; speech in between does not break one), so at a scene heading (一, 二, ＊) too;
- speech in 「」 is read as its own text: its facts stand alone, with a topic of their own that
  never leaks into the narration (nor the narration's into the speech);
- pronouns (彼, それ, これ, おれ), numbers, counters and bare formal or time nouns (こと, もの,
  ところ, 前, 今日) are never arguments: a fact needs two noun phrases, and a guess is worse
  than a gap; a position noun with a の-owner (山の上, おばあさんの前) stands for its owner;
- voice: in a passive (〜れる / 〜られる) and in te + もらう the が/は noun is the one acted on and
  the に (or によって / から) noun the doer — 鬼の大将も桃太郎に組みふせられて is 桃太郎 →
  鬼の大将; in a causative (〜せる / 〜させる) the に (or, alone, を) noun is the doer;
- a relational noun with a の-owner as predicate (AはBの家来になる / AはBの家来だ) reads the
  noun through the verb table (家来になる → BECOMES_COMPANION_OF, 家来 → COMPANION_OF);
- what is no participant gives no fact: the act noun of a bare する (力だめしをする, 見はりを
  する), 〜てある (船がつないであった: no doer named), a verb's 連用形 written onto a noun
  (かくれ笠 is one word), a verbal noun in に with a motion verb (しば刈りに行く: a purpose).

The GiNZA model (`ja_ginza`, an installed package) is loaded once per process, lazily, from
site-packages; nothing is ever downloaded. Its named-entity component is left out: it costs
about as much as the parser itself, and entity types come from the part-of-speech tags and the
relation instead (Character / Place / Object, else "Entity"; `ParserExtractor` then gives each
name one type for the whole story, `storygraph.ingest.frames.extractor.entity_kinds`, with the
animacy cues `read_document` reads from the same parse: いる / ある, counters, honorifics and
plural suffixes, names called, subjects of verbs of saying and feeling; `_sentence_cues`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from storygraph.errors import ModelError
from storygraph.ingest.frames import AnimacyCue, DocumentReading, ProposedFact
from storygraph.text.parse_tree import ancestors
from storygraph.text.vocabulary import (
    ANIMATE_COUNTERS_JA,
    CHARACTER_RELATIONS,
    FEELING_VERBS_JA,
    INANIMATE_COUNTERS_JA,
    SPEECH_VERBS_JA,
    SUBSIDIARY_VERBS_JA,
    japanese_forms,
    relation_type_for,
)

MODEL_PACKAGE = "ja_ginza"

_load_lock = threading.Lock()
_parse_lock = threading.RLock()  # a Sudachi tokenizer refuses concurrent use
_nlp: Any = None


def parser() -> Any:
    """The GiNZA pipeline, loaded once per process (without NER: types come from POS)."""
    global _nlp
    if _nlp is None:
        with _load_lock:
            if _nlp is None:
                try:
                    import spacy

                    _nlp = spacy.load(MODEL_PACKAGE, exclude=["ner"])
                except (ImportError, OSError) as exc:
                    raise ModelError(
                        f"The Japanese parser ({MODEL_PACKAGE}) cannot be loaded: {exc}",
                        "Install the pinned packages: `pip install -r requirements.txt` "
                        "(ginza and ja-ginza).",
                    ) from exc
    return _nlp


def parse(text: str) -> Any:
    """GiNZA's parse of one short text (a question), under the parser's lock."""
    with _parse_lock:
        return parser()(text)


# --- the text: narration, speech, scenes ------------------------------------------------------

_SCENE_HEADING = re.compile(
    r"^[\s　]*(?:[一二三四五六七八九十百〇零0-9０-９]+|[＊*◇◆□■○●・]+|第.{1,4}[章話節])[\s　]*$"
)


@dataclass
class _Piece:
    """A stretch of text parsed on its own: narration (quotes taken out) or one speech."""

    text: str
    offsets: list[int]  # original offset of each character of `text`
    speech: bool
    quotes: list[int | None] = field(default_factory=list)  # per 「」: its first speech piece


def _quote_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each outermost 「…」, end exclusive; one left open ends at a blank line."""
    spans: list[tuple[int, int]] = []
    depth, start, i = 0, 0, 0
    while i < len(text):
        ch = text[i]
        if ch == "「":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "」" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1))
        elif depth and text.startswith("\n\n", i):
            spans.append((start, i))
            depth = 0
        i += 1
    if depth:
        spans.append((start, len(text)))
    return spans


def _lines(text: str, offsets: list[int]) -> Iterator[tuple[str, list[int]]]:
    """Non-empty lines of a piece, trimmed, with their offsets; scene headings (一, ＊) skipped."""
    pos = 0
    for line in text.split("\n"):
        span = offsets[pos : pos + len(line)]
        pos += len(line) + 1
        if not line.strip(" 　\t\r") or _SCENE_HEADING.match(line):
            continue
        lead = len(line) - len(line.lstrip(" 　\t\r"))
        yield line[lead:].rstrip(" 　\t\r"), span[lead:]


def _pieces(text: str) -> list[_Piece]:
    """Narration lines (each quote replaced by 「」, the text around it joined) and speeches."""
    spans = _quote_spans(text)
    narration: list[str] = []
    offsets: list[int] = []
    speeches: list[_Piece] = []
    cursor = 0
    for start, end in spans:
        before = text[cursor:start]
        # a quote continues the sentence before it unless that one has ended (。): then the
        # quote, and what follows it, is a new paragraph
        if not before.rstrip(" 　\n").endswith(("。", "！", "？", "」")):
            before = before.rstrip(" 　\n")
        narration.append(before)
        offsets.extend(range(cursor, cursor + len(before)))
        narration.append("「」")
        offsets.extend((start, end - 1))
        inner_start = start + 1
        inner_end = end - 1 if text[end - 1] == "」" else end
        speeches.append(
            _Piece(text[inner_start:inner_end], list(range(inner_start, inner_end)), speech=True)
        )
        cursor = end
        after = end
        while after < len(text) and text[after] in " 　\n":
            after += 1
        if text[after : after + 1] in ("と", "っ", "、", "。", "「"):
            cursor = after  # 「…」と言いました: the narration goes on after the quote
    narration.append(text[cursor:])
    offsets.extend(range(cursor, len(text)))
    joined = "".join(narration)
    pieces: list[_Piece] = []
    speech_iter = iter(speeches)
    for line, span in _lines(joined, offsets):
        narration_piece = _Piece(line, span, speech=False)
        pieces.append(narration_piece)
        for _ in range(line.count("「」")):
            speech = next(speech_iter, None)
            lines = list(_lines(speech.text, speech.offsets)) if speech is not None else []
            narration_piece.quotes.append(len(pieces) if lines else None)
            pieces.extend(_Piece(s_line, s_span, speech=True) for s_line, s_span in lines)
    return pieces


def parsed_pieces(text: str) -> list[str]:
    """The texts the reader parses one by one: the narration (each quote left as 「」) and each
    speech on its own (`_pieces`); the support check reads a source's clauses the same way."""
    return [p.text for p in _pieces(text)]


# --- noun phrases -----------------------------------------------------------------------------

_FORMAL_NOUNS = frozenset(
    [
        "こと",
        "事",
        "もの",
        "物",
        "者",
        "ところ",
        "いっしょ",
        "一緒",
        "所",
        "の",
        "ため",
        "為",
        "よう",
        "様",
        "とき",
        "時",
        "ほう",
        "方",
        "わけ",
        "訳",
        "はず",
        "つもり",
        "うち",
        "内",
        "ふう",
        "風",
        "まま",
        "中",
        "間",
        "ぐらい",
        "くらい",
        "ほど",
        "みんな",
        "皆",
        "みな",
        "二人",
        "ふたり",
        "一人",
        "ひとり",
        "自分",
        "何",
        "なに",
        "なん",
        "ほんとう",
        "代り",
        "代わり",
        "かわり",
        "用",
        "本当",
        "口々",
        "誰",
        "だれ",
        "どれ",
    ]
)
_POSITION_NOUNS = frozenset(
    [
        "上",
        "下",
        "前",
        "あと",
        "後",
        "後ろ",
        "うしろ",
        "横",
        "そば",
        "側",
        "中",
        "なか",
        "内",
        "うち",
        "外",
        "そと",
        "奥",
        "近く",
        "辺",
        "あたり",
        "まわり",
        "周り",
        "ところ",
        "所",
        "方",
        "ほう",
        "先",
        "さき",
        "向こう",
        "手前",
        "間",
        "あいだ",
        "隣",
        "となり",
    ]
)
_BODY_PARTS = frozenset(
    (
        "背中",
        "せなか",
        "頭",
        "あたま",
        "首",
        "くび",
        "顔",
        "かお",
        "手",
        "足",
        "肩",
        "かた",
        "腰",
        "こし",
        "腕",
        "うで",
        "背",
        "せ",
        "膝",
        "ひざ",
        "胸",
        "むね",
        "尻尾",
        "しっぽ",
        "尾",
        "羽",
        "はね",
        "甲羅",
        "こうら",
        "目",
        "耳",
        "鼻",
        "口",
        "歯",
        "指",
        "おなか",
        "お腹",
        "腹",
    )
)
"""Parts that stand for their owner when they have one (鬼の背中にまたがる: rides the oni)."""
_HONORIFICS = ("さん", "さま", "様", "殿", "どの", "どん", "ちゃん", "君", "くん", "公")
_QUOTE_MARKS = "「」『』"


def _is_noun(tok: Any) -> bool:
    if tok.is_space or "空白" in tok.tag_ or tok.tag_.startswith(("動詞", "形容詞", "助動詞")):
        return False
    return tok.pos_ in ("NOUN", "PROPN") or (tok.tag_.startswith("名詞") and tok.pos_ != "NUM")


def _excluded(tok: Any) -> bool:
    """Never an argument: pronouns, numbers, counters, formal / time nouns, quote marks."""
    tag = tok.tag_
    return (
        tok.pos_ in ("PRON", "NUM", "PUNCT", "SYM")
        or "代名詞" in tag
        or "数詞" in tag
        or "助数詞" in tag
        or "副詞可能" in tag
        or "形状詞" in tag
        or tok.text in _FORMAL_NOUNS
        or tok.lemma_ in _FORMAL_NOUNS
        or any(ch in _QUOTE_MARKS for ch in tok.text)
    )


def _case_particles(tok: Any) -> list[str]:
    return [c.text for c in tok.children if c.dep_ == "case" or c.pos_ == "ADP"]


def _no_owner(tok: Any) -> Any | None:
    """The の-owner of a noun (鬼 in 鬼の大将), or None."""
    for child in tok.children:
        if child.dep_ == "nmod" and child.i < tok.i and _case_particles(child) == ["の"]:
            return child
    return None


def _compound_start(tok: Any) -> int:
    """Index of the first token of the compound ending at `tok` (お+じい+さん, 鬼+ども)."""
    start = tok.i
    for child in sorted(tok.children, key=lambda c: -c.i):
        nounish = _is_noun(child) or "接頭辞" in child.tag_ or child.pos_ == "NUM"
        if child.dep_ == "compound" and child.i == start - 1 and nounish:
            start = _compound_start(child)
    return start


def _adverbial(tok: Any) -> bool:
    """A noun a clause modifies to say where or when (前, 中, 時), not who or what."""
    text = tok.text
    return text in _POSITION_NOUNS or tok.lemma_ in _POSITION_NOUNS or _excluded(tok)


def _called(tok: Any) -> Any | None:
    """The name in 'X という Y' (X), or None."""
    for child in tok.children:
        if child.dep_ != "nmod" or child.i >= tok.i:
            continue
        for case in child.children:
            if case.text == "と" and any(f.lemma_ in ("いう", "言う") for f in case.children):
                return child
    return None


def _noun_phrase(tok: Any, depth: int = 0) -> tuple[str, Any] | None:
    """(phrase as written, head token) for a noun, or None when it is no entity.

    Keeps compounds and one level of の-owner (鬼の大将); a position noun with an owner
    (山の上) stands for the owner; adjectives and relative clauses are left out.
    """
    if not _is_noun(tok):
        return None
    named = _called(tok)
    if named is not None and depth < 2:
        return _noun_phrase(named, depth + 1)  # 浦島太郎というりょうし is 浦島太郎
    owner = _no_owner(tok)
    if tok.text in _POSITION_NOUNS or tok.lemma_ in _POSITION_NOUNS:
        return _noun_phrase(owner, depth + 1) if owner is not None and depth < 2 else None
    if tok.text in _BODY_PARTS or tok.lemma_ in _BODY_PARTS:
        # 鬼の背中 stands for the oni; a part alone (頭に, 足を) is no one
        return _noun_phrase(owner, depth + 1) if owner is not None and depth < 2 else None
    start = _compound_start(tok)
    doc = tok.doc
    # the head decides (一寸法師 is a name; 一口, 二人 are counts): inside a compound only
    # pronouns and quote marks disqualify
    if _excluded(tok) or any(c.dep_ == "nummod" for c in tok.children):
        return None
    if start == tok.i and tok.text in ("たち", "達", "等", "ら", "ども", "共"):
        return None  # 彼等 / お前たち cut at the pronoun: a plural suffix alone is no one
    if any(doc[i].pos_ == "PRON" or doc[i].text in _QUOTE_MARKS for i in range(start, tok.i)):
        return None
    phrase = doc[start : tok.i + 1].text
    if owner is not None and depth == 0 and not _excluded(owner):
        owner_np = _noun_phrase(owner, depth + 1)
        if owner_np is not None and _no_owner(owner) is None:
            phrase = f"{owner_np[0]}の{phrase}"
    phrase = phrase.strip(" 　")
    return (phrase, tok) if phrase else None


def _conjuncts(tok: Any) -> list[Any]:
    """The nouns coordinated with `tok` by と / や (おじいさんとおばあさん), `tok` last."""
    found: list[Any] = []
    for child in tok.children:
        if child.dep_ in ("nmod", "conj") and child.i < tok.i:
            particles = _case_particles(child)
            if particles and particles[-1] in ("と", "や", "とか") and _is_noun(child):
                found.extend(_conjuncts(child))
    return [*found, tok]


def _unfused(np: tuple[str, Any]) -> list[tuple[str, Any]]:
    """犬と猿: the dictionary reads a few 'X と Y' pairs as one idiom word; split such a word
    back into its two nouns when each part is a noun on its own."""
    name, tok = np
    parts = name.split("と")
    if name != tok.text or len(parts) != 2 or not all(parts):
        return [np]
    for part in parts:
        tokens = parser().tokenizer(part)
        if len(tokens) != 1 or not tokens[0].tag_.startswith("名詞") or _excluded(tokens[0]):
            return [np]
    return [(parts[0], tok), (parts[1], tok)]


# --- predicates -------------------------------------------------------------------------------

_SUBJECT_MARKS = ("が", "は", "も")
_ARG_DEPS = ("nsubj", "obj", "obl", "iobj", "nsubj:pass", "csubj", "dislocated", "nmod")
_CHAIN_MARKS = ("て", "で", "ながら", "たり", "つつ")
_BENEFACTIVE_PASSIVE = frozenset(("もらう", "貰う", "いただく", "頂く"))
_LEXICAL_CAUSATIVES = {"従える": "従う", "したがえる": "従う", "乗せる": "乗る", "のせる": "乗る"}
"""Verbs that are the causative of another verb by their own form (従える: make follow)."""
_TOWARD_CAUSER = frozenset(("FOLLOWS", "SERVES", "ACCOMPANIES"))
_EXISTENTIAL = frozenset(("ある", "いる", "居る", "有る"))
_RESULTATIVE = frozenset(("ある", "有る"))
"""〜てある (船がつないであった: the boat had been tied): a state someone left, no doer named."""
_PASSIVE_AUX = frozenset(("れる", "られる"))
_CAUSATIVE_AUX = frozenset(("せる", "させる"))
_RECIPROCAL = frozenset(("MEETS", "FIGHTS", "SPOUSE_OF", "FRIEND_OF", "TRADES", "ALLY_OF"))
_MOTION = frozenset(
    ("GOES_TO", "RETURNS_TO", "TRAVELS_TO", "LEAVES", "ARRIVES_AT", "ENTERS", "VISITS", "RIDES")
)
_LOCATED = frozenset(("LIVES_IN", "STAYS_AT"))
_NO_NI_OBJECT = frozenset(
    (
        "RECEIVES",  # 母にもらう: the に noun is the giver, not what is received
        "MAKES",
        "EATS",
        "OWNS",
        "FINDS",
        "PICKS_UP",
        "SEES",
        "CATCHES",
        "WANTS",
        "KILLS",
        "DEFEATS",
        "RAISES",
        "CARRIES",
        "STEALS",
        "BURNS",
        "BINDS",
        "CHASES",
        "DECEIVES",
        "FREES",
        "RESCUES",
        "WAKES",
    )
)
"""Types whose に noun is a time, manner or result (一口に食べる), never the other party."""
_NEGATIVE_AUX = frozenset(("ない", "ぬ", "ず", "ん", "まい"))
_OBJECT_TYPES = frozenset(
    (
        "GIVES",
        "RECEIVES",
        "EATS",
        "OWNS",
        "CARRIES",
        "PICKS_UP",
        "FINDS",
        "MAKES",
        "STEALS",
        "SHARES",
        "TRADES",
        "WANTS",
    )
)


@dataclass
class _Arg:
    name: str
    head: Any
    particle: str  # the case particle that decides the role ("" when none)
    topic: bool  # marked by は / も


@dataclass
class _Pred:
    head: Any  # the verb whose children carry the arguments and the voice
    tokens: list[Any]  # every token of the predicate (compound parts, subsidiary verb)
    text: str  # what the verb table is asked about (組みふせる, ついて行く, 家来になる)
    variants: list[str] = field(default_factory=list)  # other spellings of `text` to ask
    subsidiary: Any = None  # the subsidiary verb of a te-compound (行く of ついて行く)
    main_texts: list[str] = field(default_factory=list)  # the te-compound without it
    owner: _Arg | None = None  # the の-owner of a relational noun predicate (Bの家来になる)
    subjects: list[_Arg] = field(default_factory=list)
    args: list[_Arg] = field(default_factory=list)
    passive: bool = False
    causative: bool = False
    relative_to: Any = None  # the noun a relative clause modifies
    chain_parent: _Pred | None = None
    chain_children: list[_Pred] = field(default_factory=list)
    unnamed_subject: bool = False  # its subject is a pronoun or no name: never filled in
    benefactive: bool = False  # te + もらう: the に noun does it for the subject
    lexical_causative: bool = False  # 従える: causative by its own form, its を noun the doer
    gap_is_object: bool = False  # a relative clause whose modified noun is its object
    negated: bool = False
    resultative: bool = False  # 〜てある: its が noun is what was acted on, by no one named


def _role_particle(tok: Any) -> tuple[str, bool]:
    """(case particle deciding the role, marked by は / も) of an argument noun."""
    particles = _case_particles(tok)
    topic = any(p in ("は", "も") for p in particles)
    case = next((p for p in particles if p not in ("は", "も", "の")), "")
    if case in ("には", "へは", "とは", "では", "からは"):
        case = case[:-1]
    return (case or ("は" if topic else "")), topic


def _is_predicate(tok: Any) -> bool:
    if tok.dep_ in ("fixed", "compound", "aux"):
        return False
    if tok.pos_ == "ADJ":  # ほしい, 好き: only adjectives the verb table knows
        return relation_type_for(tok.lemma_, "ja") is not None
    return tok.pos_ == "VERB"


def _adjective_roles(pred: _Pred) -> None:
    """AはBがほしい: the は noun feels, the が noun is what is felt about."""
    if pred.head.pos_ != "ADJ":
        return
    felt = [s for s in pred.subjects if s.particle == "が" and not s.topic]
    if not felt:
        return
    pred.subjects = [s for s in pred.subjects if s not in felt]
    for arg in felt:
        arg.particle = "を"
        pred.args.append(arg)


def _aux_lemmas(tok: Any) -> list[str]:
    found = []
    for child in tok.children:
        if child.dep_ in ("aux", "fixed", "mark") or child.pos_ == "AUX":
            found.append(child.lemma_)
            found.extend(c.lemma_ for c in child.children if c.dep_ == "fixed")
    return found


def _te_mark(tok: Any) -> Any | None:
    return next((c for c in tok.children if c.dep_ == "mark" and c.text in ("て", "で")), None)


def _merged_left(head: Any) -> list[Any]:
    """Verbs written as one with `head`: 組み+ふせる, つい+て+行く (left parts, in order)."""
    parts: list[Any] = []
    doc = head.doc
    for child in sorted(head.children, key=lambda c: -c.i):
        if child.pos_ != "VERB" or child.dep_ not in ("advcl", "compound"):
            continue
        mark = _te_mark(child)
        adjacent_plain = child.i == head.i - 1 and "連用形" in str(child.morph)
        adjacent_te = (
            mark is not None
            and mark.i == head.i - 1
            and mark.i == child.i + 1
            and head.lemma_ in SUBSIDIARY_VERBS_JA
        )
        if adjacent_plain or adjacent_te:
            parts = [*_merged_left(child), child, *parts]
            break
    del doc
    return parts


def _predicate_texts(parts: list[Any], head: Any) -> list[str]:
    """The predicate as the table is asked: left parts as written + the head's dictionary form
    as written (くいつく, やる), then + its normalised form (のる → 乗る, はいる → 入る)."""
    pieces = []
    for part in parts:
        mark = _te_mark(part)
        pieces.append(part.text + (mark.text if mark is not None and mark.i == part.i + 1 else ""))
    left = "".join(pieces)
    return list(dict.fromkeys((left + head.lemma_, left + head.norm_)))


def _chain_link(child: Any) -> bool:
    """True when a subordinate predicate shares its subject with its head (te / 連用 / ながら)."""
    if child.dep_ not in ("advcl", "conj"):
        return False
    mark_tokens = [c for c in child.children if c.dep_ == "mark"]
    marks = [c.text for c in mark_tokens]
    if mark_tokens and marks[-1] in ("て", "で"):
        after = mark_tokens[-1].nbor(1).text if mark_tokens[-1].i + 1 < len(child.doc) else ""
        if after == "も":
            return False  # 征伐しても: "even if", its subject is its own
    if marks:
        return marks[-1] in _CHAIN_MARKS
    return "連用形" in str(child.morph)


def _compound_stem(tok: Any) -> bool:
    """A verb's 連用形 written onto the noun after it (かくれ笠, 焼き魚): a part of that word,
    not a relative clause (which takes the 連体形: かくれる笠)."""
    head = tok.head
    return (
        tok.dep_ == "acl"
        and head.i == tok.i + 1
        and _is_noun(head)
        and "連用形" in str(tok.morph)
        and not any(c.dep_ in ("mark", "aux") for c in tok.children)
    )


def _predicates(sent: Any) -> list[_Pred]:
    merged_into: dict[int, int] = {}
    preds: dict[int, _Pred] = {}
    for tok in sent:
        if not _is_predicate(tok) or _compound_stem(tok):
            continue
        parts = _merged_left(tok)
        for part in parts:
            merged_into[part.i] = tok.i
        texts = _predicate_texts(parts, tok)
        pred = _Pred(head=tok, tokens=[*parts, tok], text=texts[0], variants=texts)
        if parts and _te_mark(parts[-1]) is not None:
            # つい+て+行く: the subsidiary verb (行く) alone must not decide the type
            pred.subsidiary = tok
            pred.main_texts = _predicate_texts(parts[:-1], parts[-1])
        preds[tok.i] = pred
    for i in merged_into:
        preds.pop(i, None)
    # te + subsidiary verb parsed as `fixed` under the te (助けて+もらう)
    for pred in preds.values():
        auxes = _aux_lemmas(pred.head)
        if any(a in _BENEFACTIVE_PASSIVE for a in auxes) and _te_mark(pred.head) is not None:
            pred.passive = pred.benefactive = True
        if any(a in _PASSIVE_AUX for a in auxes):
            pred.passive = True
        if any(a in _CAUSATIVE_AUX for a in auxes):
            pred.causative = True
        if any(a in _NEGATIVE_AUX for a in auxes):
            pred.negated = True
        if _te_mark(pred.head) is not None and any(a in _RESULTATIVE for a in auxes):
            pred.resultative = True
        if pred.subsidiary is not None and pred.subsidiary.lemma_ in _RESULTATIVE:
            pred.resultative = True
        base = _LEXICAL_CAUSATIVES.get(pred.head.lemma_) or _LEXICAL_CAUSATIVES.get(pred.head.norm_)
        if base and len(pred.tokens) == 1:
            pred.causative = pred.lexical_causative = True
            pred.text, pred.variants = base, [base]
        head_noun = pred.head.head
        if pred.head.dep_ == "acl" and _is_noun(head_noun) and not _adverbial(head_noun):
            pred.relative_to = head_noun  # not 言う前 / 帰った時: those modify a place or time
    for i, pred in preds.items():
        head = pred.head
        if _chain_link(head):
            parent_i = merged_into.get(head.head.i, head.head.i)
            pred.chain_parent = preds.get(parent_i)
            if pred.chain_parent is not None:
                pred.chain_parent.chain_children.append(pred)
        del i
    return sorted(preds.values(), key=lambda p: p.head.i)


def _collect_args(pred: _Pred) -> None:
    seen: set[int] = set()
    for tok in pred.tokens:
        for child in tok.children:
            if child.dep_ in ("nsubj", "nsubj:pass") and (
                not _is_noun(child) or _noun_phrase(child) is None
            ):
                pred.unnamed_subject = True  # だれも, 彼は: a subject, just not a name
            if child.dep_ not in _ARG_DEPS or child.i in seen or not _is_noun(child):
                continue
            if child.dep_ == "nmod":
                continue
            seen.add(child.i)
            particle, topic = _role_particle(child)
            phrases = [np for conj in _conjuncts(child) if (np := _noun_phrase(conj))]
            if _noun_phrase(child) is None and phrases:
                particle = "と"  # 家来といっしょに: the と-nouns of a bare noun are companions
            for name, head in [(n, h) for np in phrases for n, h in _unfused(np)]:
                arg = _Arg(name, head, particle, topic)
                is_subject = particle in _SUBJECT_MARKS and child.dep_ != "obj"
                if is_subject or (not particle and child.dep_ == "nsubj"):
                    arg.particle = particle or "が"
                    pred.subjects.append(arg)
                elif particle or child.dep_ == "obj":
                    arg.particle = particle or "を"
                    pred.args.append(arg)
    _adjective_roles(pred)
    # が beats は when a predicate has both (象は鼻が長い: the は noun is the wider topic)
    if any(s.particle == "が" for s in pred.subjects) and any(
        s.particle != "が" for s in pred.subjects
    ):
        pred.subjects = [s for s in pred.subjects if s.particle == "が"]


def _relational_noun(pred: _Pred) -> None:
    """AはBの家来になる: the predicate is 家来になる and B its object, when the table knows it."""
    if pred.head.lemma_ not in ("なる", "する"):
        return
    for arg in list(pred.args):
        if arg.particle != "に":
            continue
        owner = _no_owner(arg.head)
        if owner is None:
            continue
        text = f"{arg.head.text}に{pred.head.lemma_}"
        if relation_type_for(text, "ja") is None:
            continue
        owner_np = _noun_phrase(owner, 1)
        if owner_np is None:
            continue
        pred.text = text
        pred.variants = []
        pred.args.remove(arg)
        pred.owner = _Arg(owner_np[0], owner_np[1], "の", False)


def _light_verb(pred: _Pred) -> None:
    """おじぎをする / 見はりをする: the verbal noun is the predicate (おじぎする), not an object.

    Any other noun that is a bare する's only argument names the act too (力だめしをする,
    様子をする): it is the predicate's, never a participant."""
    if pred.head.lemma_ != "する" or len(pred.tokens) != 1:
        return
    for arg in pred.args:
        if arg.particle == "を" and (_verbal_noun(arg.head) or len(pred.args) == 1):
            pred.args.remove(arg)
            pred.text = arg.name + "する"
            pred.variants = []
            return


# --- reading ----------------------------------------------------------------------------------


@dataclass
class _Topic:
    """What a zero subject refers to: the last は-topic, else the last が-subject (and, for the
    speech verbs of the paragraph, who each of its 「」 calls by name)."""

    topic: _Arg | None = None
    last_ga: _Arg | None = None
    vocatives: list[_Arg | None] = field(default_factory=list)

    def current(self) -> _Arg | None:
        return self.topic or self.last_ga

    def see(self, args: Iterable[_Arg]) -> None:
        for arg in args:
            if arg.topic:
                self.topic = arg
            elif arg.particle == "が":
                self.last_ga = arg


@lru_cache(maxsize=4096)
def _lexical_voice(text: str) -> str | None:
    """The type of a predicate whose voice is part of a table form (降参させる → DEFEATS)."""
    for rel_type, forms in japanese_forms().items():
        for form in forms:
            if ("させ" in form or "られ" in form) and text.startswith(form):
                return rel_type
    return None


def _table_type(text: str) -> str | None:
    """The verb table's type for `text` when one of its forms starts it (振り上げる is not
    上げる: a form found only inside a compound verb does not count)."""
    found = relation_type_for(text, "ja")
    if found and any(text.startswith(form) for form in japanese_forms().get(found, ())):
        return found
    return None


def _relation(pred: _Pred) -> str:
    """The verb table's type for the predicate; a te-compound's type must come from more than
    its subsidiary verb (ついて行く → FOLLOWS, but なでてやる is なでる, not やる → GIVES)."""
    subsidiary = set()
    if pred.subsidiary is not None:
        subsidiary = {
            relation_type_for(pred.subsidiary.lemma_, "ja"),
            relation_type_for(pred.subsidiary.norm_, "ja"),
        }
    for text in dict.fromkeys((pred.text, *pred.variants)):
        found = _table_type(text)
        if found and found not in subsidiary:
            pred.text = text
            return found
    for text in pred.main_texts:
        found = _table_type(text)
        if found:
            pred.text = text
            return found
    return ""


def _entity_type(arg: _Arg, relation: str, role: str) -> str:
    tag = arg.head.tag_
    if "人名" in tag or arg.name.endswith(_HONORIFICS):
        return "Character"
    if role == "subject" and relation in CHARACTER_RELATIONS:
        return "Character"  # before the dictionary's place tag: 碓井貞光 follows, leads
    if "地名" in tag:
        return "Place"
    if role == "object" and (relation in _MOTION or relation in _LOCATED) and relation != "RIDES":
        # what is ridden (a boat, a horse, an oni's back) is a mount, not a place
        return "Place"
    if role == "object" and relation in _OBJECT_TYPES and arg.particle == "を":
        return "Object"
    if role == "subject" and relation in CHARACTER_RELATIONS:
        return "Character"
    if role == "object" and relation in CHARACTER_RELATIONS and relation not in _OBJECT_TYPES:
        return "Character"
    return "Entity"


def _pairs(pred: _Pred, subjects: list[_Arg], relation: str) -> Iterator[tuple[_Arg, _Arg, str]]:
    """(doer, other, pattern) pairs of one predicate, voice applied."""
    args = pred.args
    if pred.owner is not None:
        for subject in subjects:
            yield subject, pred.owner, f"{subject.particle}-の"
        return
    lexical = _lexical_voice(pred.text) if (pred.passive or pred.causative) else None
    if pred.passive and not lexical:
        agents = [a for a in args if a.particle in ("に", "によって", "から")]
        rest = [a for a in args if a not in agents]
        objects = [a for a in rest if a.particle == "を"]
        if pred.benefactive and objects:
            # 母におむすびをこしらえてもらう: the mother makes the rice balls (for the subject)
            for agent in agents:
                for other in objects:
                    yield agent, other, f"benefactive:{agent.particle}-を"
            return
        for agent in agents:
            for patient in subjects:
                yield agent, patient, f"passive:{agent.particle}-{patient.particle}"
            # 鬼どもはきじに目をつつかれた: with a subject, the を noun is its part, not a patient
            for other in rest if not subjects else []:
                if other.particle == "を":
                    yield agent, other, f"passive:{agent.particle}-を"
        return
    if pred.causative and not lexical:
        causees = [a for a in args if a.particle == "に"]
        objects = [a for a in args if a.particle == "を"]
        if pred.lexical_causative and objects:
            causees = []  # 旗を片手に家来を従える: the を noun follows, the に is a manner
        if not causees and objects and relation not in _OBJECT_TYPES:
            causees, objects = objects, []
        for causee in causees:
            others = [a for a in args if a not in causees and a.particle in ("を", "へ")]
            for other in others:
                yield causee, other, f"causative:{causee.particle}-{other.particle}"
            if not others and relation in _TOWARD_CAUSER:
                # 桃太郎は犬をしたがえて: made to follow — the one followed is the causer
                for causer in subjects:
                    yield causee, causer, f"causative:{causee.particle}-{causer.particle}"
        return
    for subject in subjects:
        for other in args:
            particle = other.particle
            if particle == "を" and relation in _MOTION:
                continue  # 山を下りる, 森をぬける: a path or a place left, not a goal
            if particle == "に" and relation in _NO_NI_OBJECT:
                continue
            if particle == "を" and relation == "TALKS_TO":
                continue  # 声を聞く, わけを話す: what is said or heard, not who
            if particle == "に" and relation in _MOTION and _verbal_noun(other.head):
                continue  # 洗濯に行く, しば刈りに行く, 馬乗りにまたがる: a purpose or manner
            if particle in ("を", "に", "へ"):
                yield subject, other, f"{subject.particle}-{particle}"
            elif particle == "から" and relation == "FOLLOWS":
                yield subject, other, f"{subject.particle}-から"  # 桃太郎のあとから
            elif particle == "と" and relation in _RECIPROCAL:
                yield subject, other, f"{subject.particle}-と"
            elif particle == "で" and relation in _LOCATED:
                yield subject, other, f"{subject.particle}-で"
            elif particle == "から" and relation == "LEAVES":
                yield subject, other, f"{subject.particle}-から"


_I_TO_U = dict(zip("いきぎしちにびみり", "うくぐすつぬぶむる", strict=True))


@lru_cache(maxsize=4096)
def _is_verb(text: str) -> bool:
    tokens = parser().tokenizer(text)
    return len(tokens) == 1 and tokens[0].tag_.startswith("動詞") and tokens[0].lemma_ == text


def _verbal_noun(tok: Any) -> bool:
    """A noun that names an act: a サ変 noun (洗濯, 見物) or a verb's 連用形 used as a noun
    (刈り of 刈る, 乗り of 乗る: its last two characters read as the verb's 連用形)."""
    if "サ変可能" in tok.tag_:
        return True
    stem, last = tok.text[-2:-1], tok.text[-1:]
    if not stem or last not in _I_TO_U or _is_kana(stem):
        return False
    return _is_verb(stem + _I_TO_U[last])


def _is_kana(text: str) -> bool:
    return all("\u3040" <= ch <= "\u30ff" for ch in text)


def _companions(pred: _Pred, subjects: list[_Arg], relation: str) -> Iterator[tuple[_Arg, _Arg]]:
    """Aは Bと 行く / 住む: B goes (lives) with A."""
    if relation in _MOTION or relation in _LOCATED:
        for subject in subjects:
            for other in pred.args:
                if other.particle == "と":
                    yield subject, other


def _resolve_subjects(pred: _Pred, topic: _Topic, sentence: list[_Pred]) -> list[_Arg]:
    if pred.subjects or pred.unnamed_subject:
        return pred.subjects
    if pred.relative_to is not None and not pred.gap_is_object:
        np = _noun_phrase(pred.relative_to)
        if np is None:
            return []
        head_arg = _Arg(np[0], np[1], "", False)
        # the modified noun is the clause's gap: its subject when it has none
        head_arg.particle = "が"
        return [head_arg]
    link: _Pred | None = pred.chain_parent
    while link is not None:
        if link.subjects:
            return link.subjects
        link = link.chain_parent
    # a chain whose subject sits on an earlier member (は attached to the first verb)
    for member in _chain_members(pred):
        if member.subjects:
            return member.subjects
    # a は / も topic earlier in the sentence scopes over what follows, wherever it is attached
    # (猿はおむすびがほしくって…言いました: 猿 sits on 言う, but it is the one who wants)
    earlier = [
        (s.head.i, other)
        for other in sentence
        if other.relative_to is None and other is not pred
        for s in other.subjects
        if s.topic and s.head.i < pred.head.i
    ]
    if earlier:
        owner = max(earlier, key=lambda e: e[0])[1]
        return [s for s in owner.subjects if s.topic]
    current = topic.current()
    return [current] if current is not None else []


def _chain_members(pred: _Pred) -> list[_Pred]:
    """Every predicate of `pred`'s te / 連用 chain, nearest first (children, then the top's)."""
    top = pred
    while top.chain_parent is not None:
        top = top.chain_parent
    members: list[_Pred] = []
    frontier = [top]
    while frontier:
        node = frontier.pop(0)
        members.append(node)
        frontier.extend(p for p in node.chain_children)
    return [m for m in members if m is not pred]


def _relative_with_subject(preds: list[_Pred]) -> None:
    """鬼が倒した桃 / 桃太郎が住む村: a relative clause with its own subject takes the modified
    noun as its object (or place)."""
    for pred in preds:
        if pred.relative_to is None:
            continue
        np = _noun_phrase(pred.relative_to)
        if np is None:
            continue
        if not pred.subjects:
            # 母にもらったまさかり: a thing-taking verb with no を of its own has the modified
            # noun as its object; its subject is then the topic's, as in any clause
            if _relation(pred) in _OBJECT_TYPES and not any(a.particle == "を" for a in pred.args):
                pred.args.append(_Arg(np[0], np[1], "を", False))
                pred.gap_is_object = True
            continue
        particle = "に" if relation_type_for(pred.text, "ja") in (_MOTION | _LOCATED) else "を"
        if not any(a.particle == particle for a in pred.args):
            pred.args.append(_Arg(np[0], np[1], particle, False))


def read_facts(text: str) -> list[ProposedFact]:
    """Every fact GiNZA's parse of `text` supports, in text order (see the module docstring)."""
    return read_document(text).facts


def read_document(text: str) -> DocumentReading:
    """The facts of `text` (`read_facts`) and, from the same parse, its animacy cues (see
    `_sentence_cues`)."""
    if not text.strip():
        return DocumentReading([], [])
    pieces = _pieces(text)
    nlp = parser()
    with _parse_lock:
        docs = list(nlp.pipe(p.text for p in pieces))
        return _read(text, pieces, docs)


def _read(text: str, pieces: list[_Piece], docs: list[Any]) -> DocumentReading:
    facts: list[ProposedFact] = []
    cues: list[AnimacyCue] = []
    seen: set[tuple[str, str, str, int]] = set()
    for piece, doc in zip(pieces, docs, strict=True):
        # every paragraph (a line of narration, its speech taken out) and every line of speech
        # starts with no topic: a zero subject is read only from its own paragraph or speech
        topic = _Topic()
        topic.vocatives = [
            _vocative(docs[i], text) if i is not None else None for i in piece.quotes
        ]
        for i, called in zip(piece.quotes, topic.vocatives, strict=True):
            if i is not None and called is not None:
                start = pieces[i].offsets[0]
                cues.append(AnimacyCue(called.name, True, "vocative", start, marked=True))
        for sent in doc.sents:
            start = piece.offsets[sent.start_char] if sent.start_char < len(piece.offsets) else 0
            last = min(sent.end_char, len(piece.offsets)) - 1
            end = piece.offsets[last] + 1 if last >= 0 else start
            evidence = text[start:end].strip(" 　\n")
            resolved: dict[int, list[_Arg]] = {}
            preds_seen = list(_read_sentence_facts(sent, topic, resolved))
            cues.extend(_sentence_cues(sent, start, resolved))
            for doer, relation, other, pred, pattern in preds_seen:
                if doer.name == other.name:
                    continue
                key = (doer.name, relation or pred.text, other.name, start)
                if key in seen:
                    continue
                seen.add(key)
                facts.append(
                    ProposedFact(
                        subject=doer.name,
                        relation=relation,
                        object=other.name,
                        predicate=pred.text,
                        sentence=evidence,
                        start=start,
                        pattern=pattern,
                        subject_type=_entity_type(doer, relation, "subject"),
                        object_type=_entity_type(other, relation, "object"),
                    )
                )
    return DocumentReading(facts, cues)


def _vocative(doc: Any, text: str) -> _Arg | None:
    """Who a speech calls by name at its start (「桃太郎さん、桃太郎さん、…」 → 桃太郎), or None.

    The name is the nouns before the first 、 (no particle, no pronoun); an honorific is cut
    when the bare name is written elsewhere in the text with は or が (桃太郎さん → 桃太郎, but
    おじいさん stays, there being no おじい)."""
    tokens = []
    for tok in doc:
        if tok.text == "、":
            break
        tokens.append(tok)
    if not tokens or len(tokens) > 6:
        return None
    if not all(_is_noun(t) or "接頭辞" in t.tag_ or "接尾辞" in t.tag_ for t in tokens):
        return None
    if any(t.pos_ == "PRON" or (_excluded(t) and t is tokens[-1]) for t in tokens):
        return None
    name = "".join(t.text for t in tokens)
    for suffix in _HONORIFICS:
        bare = name[: -len(suffix)]
        if name.endswith(suffix) and bare and (bare + "は" in text or bare + "が" in text):
            name = bare
            break
    return _Arg(name, tokens[-1], "に", False)


def _called_by_quote(pred: _Pred, topic: _Topic) -> _Arg | None:
    """The vocative of the 「」 a speech verb quotes (the nearest 「」と before it in its
    sentence), when the paragraph has one for it."""
    first = pred.tokens[0]
    doc = first.doc
    for i in range(first.i - 1, first.sent.start, -1):
        if doc[i].text == "」" and doc[i - 1].text == "「" and doc[i + 1].text in ("と", "って"):
            index = doc.text[: doc[i - 1].idx].count("「」")
            return topic.vocatives[index] if index < len(topic.vocatives) else None
    return None


def _read_sentence_facts(
    sent: Any, topic: _Topic, resolved: dict[int, list[_Arg]] | None = None
) -> Iterator[tuple[_Arg, str, _Arg, _Pred, str]]:
    """The sentence's (doer, type, other, predicate, pattern) facts; `resolved`, when given,
    is filled with each main-clause predicate's subjects (head index → subjects), zero
    subjects filled in, for the animacy cues."""
    preds = _predicates(sent)
    for pred in preds:
        _collect_args(pred)
        _relational_noun(pred)
        _light_verb(pred)
    _relative_with_subject(preds)
    speakers: list[_Arg] = []
    for pred in preds:
        subjects = _resolve_subjects(pred, topic, preds)
        if resolved is not None and pred.relative_to is None:
            resolved[pred.head.i] = subjects
        relation = (_lexical_voice(pred.text) if (pred.passive or pred.causative) else None) or (
            _relation(pred)
        )
        if not relation and pred.head.lemma_ in _EXISTENTIAL and len(pred.tokens) == 1:
            # 山に鬼がいました: where someone is, in a story, they live; ある says it of
            # people only when the name shows one (浦島太郎というりょうしがありました)
            animate = pred.head.lemma_ != "ある" or all(
                _entity_type(s, "", "subject") == "Character" for s in subjects
            )
            relation = "LIVES_IN" if animate and subjects else ""
        if pred.negated or pred.resultative:
            # 居ませんでした, 降参しない: what did not happen is no fact; 〜てある names no doer
            if pred.relative_to is None:
                speakers.extend(pred.subjects)
                topic.see(pred.subjects)
            continue
        yield from ((d, relation, o, pred, pat) for d, o, pat in _pairs(pred, subjects, relation))
        if relation == "TALKS_TO" and not any(a.particle in ("に", "と") for a in pred.args):
            called = _called_by_quote(pred, topic)
            # 桃太郎がふり返ると、犬は…とたずねました: the other one named in the sentence, when
            # the name shows a person (a name, an honorific), so that のり or かご is never heard
            people = [a for a in speakers if _entity_type(a, "", "subject") == "Character"]
            for speaker in subjects:
                if called is not None and called.name != speaker.name:
                    yield speaker, relation, called, pred, "speech:vocative"
                    continue
                heard = next((a for a in reversed(people) if a.name != speaker.name), None)
                if heard is not None:
                    yield speaker, relation, heard, pred, "speech:addressee"
        if pred.relative_to is None:
            speakers.extend(pred.subjects)
        for doer, other in _companions(pred, subjects, relation):
            yield doer, "ACCOMPANIES", other, pred, "と-companion"
        if pred.relative_to is None:
            topic.see(pred.subjects)


# --- animacy ----------------------------------------------------------------------------------

_ANIMATE_EXISTENTIAL = frozenset(("いる", "居る"))
_INANIMATE_EXISTENTIAL = frozenset(("ある", "有る", "在る"))
_GARU = "がる"  # 苦しがる, いやがる: a feeling seen from outside, said only of the living
_PLURALS = frozenset(("達", "共"))
"""The plural suffixes of beings (鬼ども, 家来たち; Sudachi's normal forms): things take none."""


def _sentence_cues(
    sent: Any, start: int, resolved: dict[int, list[_Arg]]
) -> Iterator[AnimacyCue]:
    """What the grammar of one sentence says about who is alive (`AnimacyCue`s):

    - the subject of いる is alive, of ある a thing (山に鬼がいました; 船がある) — though old
      tellings say ある of people too (おじいさんがありました), so an ある counts only against;
    - the subject of a verb of saying or feeling (`SPEECH_VERBS_JA`, `FEELING_VERBS_JA`: 言う,
      答える, 思う, 喜ぶ, 泣く, 住む …) or of a feeling seen from outside (苦しがる, いやがる), and
      the に noun of a verb of saying (who is spoken to); a subject a te / 連用 chain shares
      counts (白は苦しがって、…ひっかきました), and so does a zero subject the facts fill in
      (`resolved`) when it is named in the same sentence or the verb quotes a speech (the
      paragraph's topic in 「…」と言いました);
    - a name with an honorific (桃太郎さん: 桃太郎 too) or a plural suffix of beings (鬼ども:
      鬼 too; 家来たち);
    - what an animal or person counter counts (すずめが一羽, 三匹の鬼), or a thing counter
      (まつの木を一本: a thing).
    """
    for tok in sent:
        read = _animacy_predicate(tok)
        if read is not None:
            animate, cue = read
            for arg in _cue_subjects(tok, resolved):
                # いる marks the living; so does a speech whose speaker is the verb's own
                # subject (犬は「…」とたずねました), not one the facts filled in
                marked = cue == "いる" or (cue == "speech" and arg.particle == "が")
                yield AnimacyCue(arg.name, animate, cue, start, marked=marked)
            if cue == "speech":
                for child in tok.children:
                    if child.dep_ in ("obl", "iobj") and _role_particle(child)[0] == "に":
                        for name in _names(child):
                            yield AnimacyCue(name, True, "spoken to", start)
        counted = _counted(tok)
        if counted is not None:
            animate, noun = counted
            for name in _names(noun):
                yield AnimacyCue(name, animate, "counter", start, marked=True)
        suffix = "接尾辞" in tok.tag_ and tok.i > sent.start
        kind = "honorific" if tok.text in _HONORIFICS else "plural" if tok.norm_ in _PLURALS else ""
        if suffix and kind:
            for owner in (tok.doc[tok.i - 1], tok):
                np = _noun_phrase(owner) if _is_noun(owner) else None
                if np is not None:
                    yield AnimacyCue(np[0], True, kind, start, marked=True)


def _lemmas(tok: Any) -> tuple[str, str]:
    """The dictionary forms a verb class is matched on (not the text: なく is also ない's)."""
    return tok.lemma_, tok.norm_


def _animacy_predicate(tok: Any) -> tuple[bool, str] | None:
    """(alive?, cue) when `tok` heads a predicate whose subject's animacy it shows, else None."""
    if tok.dep_ in ("aux", "fixed", "compound", "mark"):
        return None
    if tok.lemma_ == _GARU and "接尾辞" in tok.tag_:
        return True, "-がる"  # GiNZA may make the suffix the head (いや+がる)
    if tok.pos_ not in ("VERB", "ADJ", "NOUN"):
        return None
    if any(c.lemma_ == _GARU and "接尾辞" in c.tag_ for c in tok.children):
        return True, "-がる"
    previous = tok.doc[tok.i - 1] if tok.i > 0 else None
    after_te = previous is not None and previous.text in ("て", "で") and previous.dep_ == "mark"
    if tok.pos_ == "VERB" and not after_te:
        if tok.lemma_ in _ANIMATE_EXISTENTIAL:
            return True, "いる"
        if tok.lemma_ in _INANIMATE_EXISTENTIAL:
            return False, "ある"
    forms = _lemmas(tok)
    said = tok.pos_ != "NOUN" and any(f in SPEECH_VERBS_JA for f in forms)
    # not the いう of a name (鬼が島という所) nor the narrator's 〜といおうか
    if said and not _naming(tok) and "意志推量形" not in str(tok.morph):
        return True, "speech"
    felt = any(f in FEELING_VERBS_JA for f in forms)
    if felt and (tok.pos_ != "NOUN" or any(c.lemma_ == "する" for c in tok.children)):
        return True, "feeling"
    return None


def _naming(tok: Any) -> bool:
    """The いう of a name or a kind (鬼が島という所, こういう楽土, 名は…というのでした), no one
    speaking: いう right before the noun it modifies, or after a noun and と."""
    doc = tok.doc
    after = doc[tok.i + 1] if tok.i + 1 < len(doc) else None
    if after is not None and _is_noun(after) and tok.head is after:
        return True
    before = doc[tok.i - 2] if tok.i >= 2 else None
    return doc[tok.i - 1].text == "と" and before is not None and _is_noun(before)


def _quoting(tok: Any) -> bool:
    """A verb of saying right after its quote: 「…」と言いました."""
    doc = tok.doc
    return tok.i >= 2 and doc[tok.i - 1].text in ("と", "って") and doc[tok.i - 2].text == "」"


def _cue_subjects(tok: Any, resolved: dict[int, list[_Arg]]) -> list[_Arg]:
    """The named subject of the predicate `tok`: its own, else its te / 連用 chain's
    (白は苦しがって、…ひっかきました), else the one the facts filled in for it or its chain
    (`resolved`) when that one is named in the same sentence or the verb quotes a speech
    (「…」と言いました: the paragraph's topic speaks; a topic carried to a sentence about
    something else is no evidence of life). The noun a relative clause modifies is not read as
    its subject: as often it is the object or the place (わすれていた夢, 人間のいる国, 鳴く声)."""
    current = tok
    heads = ancestors(tok)
    for _ in range(8):
        # the parse may hang the speaker on the quote (おばあさんは…、「…」と言って)
        quotes = [c for c in current.children if c.text == "「"]
        own = [c for q in (current, *quotes) for c in q.children if _subject_of_cue(c)]
        if own:
            return [
                _Arg(name, child, "が", False)
                for child in own
                if _is_noun(child)
                for name in _names(child)
            ]
        if current.i in resolved:
            filled = [a for a in resolved[current.i] if a.head.sent == tok.sent or _quoting(tok)]
            return [_Arg(a.name, a.head, "", False) for a in filled]
        head = next(heads, None)  # None: `current` is its sentence's root
        if head is None or not _chain_link(current):
            return []
        current = head
    return []


def _subject_of_cue(tok: Any) -> bool:
    """A subject (nsubj), or an argument whose first particle is が / は / も (犬は「…」と: the
    parse may attach the quote's と to the speaker)."""
    particles = _case_particles(tok)
    if particles and particles[0] not in _SUBJECT_MARKS:
        return False  # お米を: an object the parse hung where a subject goes
    if tok.dep_ in ("nsubj", "nsubj:pass"):
        return True
    if tok.dep_ not in _ARG_DEPS or tok.dep_ in ("obj", "nmod"):
        return False
    return bool(particles)


def _names(tok: Any) -> list[str]:
    """The names of a noun and of the nouns coordinated with it (犬と猿が: both)."""
    phrases = [np for conj in _conjuncts(tok) if (np := _noun_phrase(conj))]
    return [name for np in phrases for name, _ in _unfused(np)]


def _counted(tok: Any) -> tuple[bool, Any] | None:
    """(alive?, the noun counted) for a counter after a number (三匹の鬼, すずめが一羽)."""
    if "助数詞" not in tok.tag_ or tok.i == 0:
        return None
    animate = tok.text in ANIMATE_COUNTERS_JA
    if not animate and tok.text not in INANIMATE_COUNTERS_JA:
        return None
    doc = tok.doc
    number = doc[tok.i - 1]
    if number.pos_ != "NUM" and "数詞" not in number.tag_:
        return None
    if "の" in _case_particles(tok) and _is_noun(tok.head) and tok.head.i > tok.i:
        return animate, tok.head  # 三匹の鬼
    particle = doc[tok.i - 2] if tok.i >= 2 else None
    marks = ("が", "は", "も", "を")
    if particle is not None and particle.text in marks and _is_noun(particle.head):
        return animate, particle.head  # すずめが一羽
    return None
