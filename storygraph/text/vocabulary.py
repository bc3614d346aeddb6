"""The one verb table: which words say which relation type, in Japanese and English.

Extraction and retrieval read this same table, so the type a fact is written with is the type a
question asks for:

- `relation_type_for` maps a parser's predicate lemma (倒す, defeat) to the type written to the
  graph (DEFEATS); `storygraph.text.sanitize` maps a model-proposed Japanese relation name
  (鬼を倒した) through the same forms.
- `storygraph.qa.question.relation_words` reads the same forms to find relation words in a question
and to
  say
  which stored types a question is about (a type's tokens name its stem: BECOMES_COMPANION_OF →
  COMPANION).

What it is: general story vocabulary (conflict, companionship, travel, kinship, giving, …) written
by hand, with the conjugation stems a Japanese verb shows (倒す / 倒し / 倒さ) and the English
lemmas and irregular past forms (go / went). It is *not* independent of this repository's
evaluation sets: several rows were added while the hand-made graphs in `eval/` were written
(docs/ISSUES.md#retrieval-stages; git has the before/after). Rows hold verbs and relational nouns
(家来, parent: the relation types themselves are nouns such as COMPANION_OF); nouns naming things or
ranks (宝 / treasure, 大将 / chief) are not relation words and are kept out.

`FIELDS` groups stems into fields of meaning: a question about companions is also about meeting
and following.

Beside the table, the closed classes of verbs the readers ask about (lemmas): verbs of speech
and of feeling (a living subject), counters, and the Japanese light verbs, each set named for
what its reader does with it, each larger one defined from the smaller: `DOING_VERBS_JA` (する)
within `NOUN_ACT_VERBS_JA` (+ なる) within `LIGHT_PREDICATES_JA` (+ ある, いる).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Verb:
    """One row: the relation type written to the graph and the words that say it."""

    type: str
    ja: tuple[str, ...] = ()
    en: tuple[str, ...] = ()
    stem: str = ""

    @property
    def key(self) -> str:
        """The stem questions are matched by (DEFEATS → DEFEAT), unless given."""
        return self.stem or _stem_of(self.type.split("_")[0])


def _stem_of(token: str) -> str:
    if token.endswith("IES"):
        return token[:-3] + "Y"
    if token.endswith(("SSES", "CHES", "SHES", "XES")):
        return token[:-2]
    if token.endswith("S") and not token.endswith("SS"):
        return token[:-1]
    return token


VERBS: tuple[Verb, ...] = (
    # conflict
    Verb(
        "DEFEATS",
        ("たおす", "倒す", "倒し", "倒さ", "倒", "退治", "征伐", "成敗", "負かす", "負かし",
         "負か", "打ち勝", "やっつけ", "組みふせ", "組み伏せ", "降参させ", "討つ", "討ち", "討た"),
        ("defeat", "beat", "overcome", "vanquish", "slay", "subdue"),
    ),
    Verb("FIGHTS", ("戦う", "戦っ", "戦い", "戦", "闘う", "闘っ", "闘", "争う", "争っ"),
         ("fight", "fought", "battle", "war", "struggle")),
    Verb("ATTACKS", ("攻める", "攻め", "攻撃", "攻", "襲う", "襲っ", "襲い", "襲", "つつく", "突く",
                     "突っつ", "引っかく", "引っ掻", "ひっかく", "殴る", "殴っ", "殴り", "なぐる",
                     "蹴る", "蹴っ", "苛める", "いじめる", "いじめ"),
         ("attack", "assault", "raid", "charge")),
    Verb("CONQUERS", ("征服", "攻め落", "征"), ("conquer",)),
    Verb("CONFRONTS", ("立ち向か", "対決", "挑"), ("confront", "face", "challenge")),
    Verb("SURRENDERS_TO", ("降参", "降伏", "負け"),
         ("surrender", "yield", "give up", "lose", "lost")),
    Verb("KILLS", ("殺す", "殺し", "殺さ", "殺"), ("kill", "murder", "slay", "slew")),
    Verb("PUNISHES", ("懲らし", "こらしめ", "罰"), ("punish",)),
    Verb("WINS", ("勝つ", "勝っ", "勝ち", "勝"), ("win", "won")),
    Verb("BITES", ("噛", "かみつ", "くいつ", "食いつ"), ("bite", "bit")),
    Verb("BURNS", ("焼", "燃", "やけど"), ("burn", "scorch")),
    Verb("CUTS", ("切る", "切っ", "切り", "切"), ("cut", "chop")),
    Verb("THREATENS", ("脅", "おど"), ("threaten", "menace")),
    Verb("DECEIVES", ("騙す", "騙し", "騙", "だます", "だまし", "だま"),
         ("deceive", "trick", "fool", "cheat")),
    Verb("RIDICULES", ("あざけ", "ばかに", "からか"),
         ("ridicule", "mock", "laugh at", "tease", "make fun of", "made fun of")),
    Verb("ACCUSES", ("責め", "非難"), ("accuse", "blame")),
    Verb("CATCHES", ("捕まえ", "捕らえ", "捕", "つかまえ", "つかま", "釣る", "釣っ", "釣り"),
         ("catch", "caught", "capture", "trap", "seize", "grab")),
    Verb("BINDS", ("縛", "しば"), ("bind", "bound", "tie")),
    Verb("CHASES", ("追いかけ", "追う", "追っ", "追い"), ("chase", "pursue", "hunt")),
    Verb("STEALS", ("盗", "奪"), ("steal", "stole", "rob")),
    # companionship, service, help
    Verb("BECOMES_COMPANION_OF", ("家来にな", "仲間にな", "お供にな", "家来入り", "仲間入り"),
         stem="COMPANION"),
    Verb("COMPANION_OF", ("家来", "仲間", "お供", "おとも", "連れ"),
         ("companion", "follower", "retainer"), stem="COMPANION"),
    Verb("ALLY_OF", ("味方",), ("ally", "allies")),
    Verb("FRIEND_OF", ("友達", "友だち", "友人", "友", "仲良"), ("friend",)),
    Verb("FOLLOWS", ("ついて行", "ついて来", "ついてい", "従"), ("follow", "accompany")),
    Verb("ACCOMPANIES", ("一緒に行", "連れて行", "連れ立", "つれて行", "つれてい", "つれて来"),
         ("accompan", "go with", "went with")),
    Verb("JOINS", ("加わ",), ("join",)),
    Verb("SERVES", ("仕える", "仕え"), ("serve", "servant")),
    Verb("HELPS", ("たすける", "助ける", "助け", "救う", "救っ", "救い", "救", "手伝"),
         ("help", "aid", "assist")),
    Verb("RESCUES", ("救い出", "助け出"), ("rescue", "save")),
    Verb("FREES", ("解放", "逃が", "放", "放し"), ("free", "release", "let go", "set free")),
    Verb("MEETS", ("出会", "出合", "会う", "会っ", "会い", "会"), ("meet", "met", "encounter")),
    Verb("TALKS_TO", ("話す", "話し", "言う", "言っ", "言い", "たずね", "尋ね", "聞", "呼"),
         ("talk", "speak", "spoke", "say", "said", "tell", "told", "ask", "call")),
    Verb("SAYS", ("言う", "言っ", "言い", "たずね", "尋ね"),
         ("say", "said", "tell", "told", "ask")),
    Verb("THANKS", ("礼を言", "お礼", "感謝"), ("thank",)),
    Verb("GUARDS", ("守", "見張"), ("guard", "protect", "watch over")),
    Verb("LEADS", ("率い",), ("lead", "led")),
    Verb("RULES", ("支配", "治める", "治め"), ("rule", "reign", "govern")),
    Verb("WAKES", ("起こ", "目を覚ま"), ("wake", "woke", "awaken")),
    # place and motion
    Verb("LIVES_IN", ("すむ", "住む", "住ん", "住み", "住", "暮らす", "暮らし", "暮ら"),
         ("live", "dwell", "reside")),
    Verb("STAYS_AT", ("泊", "滞在", "留ま"), ("stay", "remain")),
    Verb("GOES_TO", ("行く", "行っ", "行き", "行", "向かう", "向かっ", "向か", "出かけ", "でかけ",
                     "来", "來", "出る", "進む", "進ん", "登る", "登っ", "上る", "のぼる"),
         ("go", "went", "head", "set out")),
    Verb("TRAVELS_TO", ("旅",), ("travel", "journey")),
    Verb("ARRIVES_AT", ("着く", "着い", "着き", "到着", "たどり着"), ("arrive", "reach")),
    Verb("LEAVES", ("出発", "去", "立ち去", "出て行"), ("leave", "left", "depart")),
    Verb("RETURNS_TO", ("帰る", "帰っ", "帰り", "帰", "戻る", "戻っ", "戻"),
         ("return", "came back", "come back", "go back", "went back")),
    Verb("VISITS", ("訪ねる", "訪ね", "訪れ", "訪"), ("visit",)),
    Verb("ENTERS", ("入る", "入っ", "入り"), ("enter", "go into", "went into")),
    Verb("RIDES", ("乗る", "乗っ", "乗り", "またがる", "またが"), ("ride", "rode", "mount")),
    # kinship and life
    Verb("RAISES", ("そだてる", "育てる", "育て", "育", "養う", "養っ", "養"),
         ("raise", "brought up", "bring up", "rear")),
    Verb("PARENT_OF", ("父親", "母親", "両親", "親である", "親", "父", "母"),
         ("parent", "father", "mother")),
    Verb("CHILD_OF", ("子供", "子ども", "息子", "娘", "子"), ("child", "son", "daughter")),
    Verb("SPOUSE_OF", ("結婚", "夫婦", "嫁ぐ", "嫁い", "嫁", "婿", "妻", "夫"),
         ("marry", "married", "wife", "husband"), stem="MARRY"),
    Verb("BORN_FROM", ("うまれる", "生まれる", "生まれ", "生れ", "誕生"), ("born", "birth")),
    Verb("LOVES", ("愛する", "愛し", "愛", "好き", "恋"), ("love", "adore")),
    Verb("WANTS", ("欲し", "ほし"), ("want", "desire", "long for", "wish")),
    # things: giving, having, making
    Verb("GIVES", ("与える", "与え", "あげる", "あげ", "上げる", "渡す", "渡し", "贈る",
                   "贈っ", "くれ", "やる", "さし上げ", "差し上げ", "さし出", "差し出"),
         ("give", "gave", "hand", "offer", "present")),
    Verb("RECEIVES", ("もらう", "もらっ", "もら", "貰う", "貰っ", "貰", "受け取"),
         ("receive", "get", "got", "obtain")),
    Verb("SHARES", ("分け",), ("share",)),
    Verb("TRADES", ("取り替え", "取りかえ", "交換"), ("trade", "exchange", "swap")),
    Verb("OWNS", ("持つ", "持っ", "持ち", "持", "所有"), ("own", "possess")),
    Verb("PICKS_UP", ("ひろう", "拾う", "拾っ", "拾い", "拾わ", "拾"), ("pick up", "picked up")),
    Verb("FINDS", ("見つけ", "発見", "見つか"), ("find", "found", "discover")),
    Verb("CARRIES", ("運", "担", "背負", "持って行", "持って来", "持って帰", "持ってい", "持ってき",
                     "持ってかえ"), ("carry", "bring", "brought")),
    Verb("MAKES", ("作", "こしらえ"), ("make", "made", "build", "cook", "bake")),
    Verb("EATS", ("たべる", "食べる", "食べ", "食う", "食っ", "食"), ("eat", "ate", "devour")),
    Verb("SHOWS", ("見せる", "見せ"), ("show", "showed", "shown")),
    Verb("SEES", ("見る", "見た", "見て"), ("see", "saw", "look at", "watch")),
    Verb("JUDGES", ("審判", "判定"), ("judge", "referee")),
    # English story verbs the parser reader (ingest/frames/en.py) met most often without a row,
    # counted over ../shared/stories/en; light verbs (have, do, begin, seem, become) stay out.
    # Motion types name no direction (JUMPS, not JUMPS_TO): the table maps the lemma alone,
    # and "jumped out of the fire" is not JUMPS_TO fire. Words a question would read as the
    # start of a common noun stay out (sold: soldier, fell: fellow, cast: castle, place).
    Verb("TALKS_TO", (), ("address", "reply", "answer", "exclaim", "shout", "whisper", "beg",
                          "entreat", "plead", "implore")),
    Verb("ARRIVES_AT", (), ("get to",)),
    Verb("COMES_TO", (), ("come", "came")),
    Verb("TAKES", (), ("take", "took", "fetch")),
    Verb("FALLS", (), ("fall", "drop", "tumble", "sink")),
    Verb("PUTS", (), ("put", "lay")),
    Verb("SHOWS", (), ("show",)),
    Verb("RUNS", (), ("run", "ran", "hurry", "rush", "hasten")),
    Verb("WALKS", (), ("walk", "stroll", "wander")),
    Verb("FLIES", (), ("fly", "flew")),
    Verb("SWIMS", (), ("swim",)),
    Verb("JUMPS", (), ("jump", "leap", "leapt")),
    Verb("CLIMBS", (), ("climb",)),
    Verb("CROSSES", (), ("cross",)),
    Verb("RIDES", (), ("ride",)),
    Verb("DRIVES", (), ("drive", "drove")),
    Verb("ESCAPES_FROM", (), ("escape", "flee", "fled", "slip")),
    Verb("HOLDS", (), ("hold", "held", "grasp", "clasp")),
    Verb("TOUCHES", (), ("touch",)),
    Verb("THROWS", (), ("throw", "threw", "toss", "fling", "flung")),
    Verb("PULLS", (), ("pull", "drag", "haul")),
    Verb("LIFTS", (), ("lift", "hoist")),
    Verb("HITS", (), ("hit", "strike", "struck", "knock", "slap")),
    Verb("SHAKES", (), ("shake", "shook")),
    Verb("SURROUNDS", (), ("surround",)),
    Verb("HEARS", (), ("hear", "heard", "listen")),
    Verb("RECOGNIZES", (), ("recognize", "recognise")),
    Verb("KNOWS", (), ("know", "knew")),
    Verb("WEARS", (), ("wear", "wore")),
    Verb("PLAYS_WITH", (), ("play",)),
    Verb("COLLECTS", (), ("collect", "gather")),
    Verb("WASHES", (), ("wash",)),
    Verb("CHEWS", (), ("gnaw", "chew", "nibble")),
    Verb("DRINKS", (), ("drink", "drank")),
    Verb("FEEDS", (), ("feed", "fed")),
    Verb("SEWS", (), ("sew", "stitch")),
    Verb("REPAIRS", (), ("mend", "repair", "fix")),
    Verb("TURNS_INTO", (), ("turn into", "change into")),
    Verb("HIDES", (), ("hide", "hid")),
    Verb("KISSES", (), ("kiss",)),
    Verb("SENDS", (), ("send",)),
    Verb("BUYS", (), ("buy", "bought")),
    Verb("SELLS", (), ("sell",)),
)

RELATION_NOUNS: dict[str, str] = {
    "親": "PARENT_OF",
    "父": "PARENT_OF",
    "母": "PARENT_OF",
    "子": "CHILD_OF",
    "妻": "SPOUSE_OF",
    "夫": "SPOUSE_OF",
    "供": "COMPANION_OF",
    "恋": "LOVES",
}
"""One-character relation names a model writes (親, 妻), mapped exactly, never by substring."""

FIELDS: tuple[frozenset[str], ...] = (
    frozenset({"DEFEAT", "FIGHT", "ATTACK", "CONFRONT", "SURRENDER", "KILL", "CONQUER", "PUNISH",
               "WIN"}),
    frozenset({"COMPANION", "FOLLOW", "MEET", "JOIN", "ACCOMPANY", "SERVE", "ALLY", "FRIEND",
               "HELP"}),
    frozenset({"LIVE", "STAY"}),
    frozenset({"GO", "RETURN", "TRAVEL", "VISIT", "ARRIVE", "LEAVE", "ENTER", "RIDE"}),
    frozenset({"RAISE", "PARENT", "CHILD", "BORN", "MARRY"}),
    frozenset({"GIVE", "SHARE", "TRADE", "RECEIVE"}),
    frozenset({"OWN", "STEAL", "FIND", "CARRY", "PICK"}),
    frozenset({"FREE", "RESCUE", "HELP"}),
    frozenset({"CATCH", "BIND"}),
    frozenset({"RIDICULE", "DECEIVE"}),
    frozenset({"TALK", "SAY"}),
)
"""Stems that belong to one field of meaning; a question about one is about the others."""

SAYS_TYPE = "SAYS"
"""A line of speech, speaker → listener, its sentence (with the quote) as evidence: written by
the speech reader (storygraph.ingest.frames.speech), never by a verb alone: every word of its
row is also TALKS_TO's, which is listed first and so is what a verb of saying is typed."""

CONVERSE_STEMS = frozenset({"SURRENDER"})
"""Stems of a field whose subject is the other acts' object: 鬼の酋長 surrenders to 桃太郎 says
that 桃太郎 defeated (conquered, won over) 鬼の酋長. A question about another act of the field
reads such a relation with its ends swapped (storygraph.qa.verify.support)."""

CHARACTER_RELATIONS = frozenset(
    {"MEETS", "TALKS_TO", "FOLLOWS", "ACCOMPANIES", "SERVES", "HELPS", "THANKS", "DEFEATS",
     "FIGHTS", "ATTACKS", "KILLS", "RAISES", "LOVES", "BECOMES_COMPANION_OF", "COMPANION_OF",
     "SURRENDERS_TO", "DECEIVES", "PUNISHES", "RESCUES"}
)
"""Types whose doer is someone (a person, or an animal or thing the story makes act): a
name that meets, talks to, follows or fights another is a Character, as is one it is done to."""

SPEECH_VERBS_JA = frozenset(
    {"言う", "いう", "いふ", "申す", "話す", "しゃべる", "答える", "こたえる", "尋ねる", "たずねる",
     "叫ぶ", "さけぶ", "呼ぶ", "よぶ", "頼む", "たのむ", "鳴く", "なく", "泣く", "怒鳴る",
     "どなる", "ささやく", "つぶやく", "断る", "ことわる", "謝る", "あやまる", "ほめる", "褒める",
     "歌う", "うたう", "祈る", "いのる", "呟く", "おっしゃる", "仰る", "問う"}
)
"""Japanese verbs of saying (dictionary forms as Sudachi writes lemma or normal form; いふ is
いう in the old kana spelling of older texts): their
subject speaks, and the one their に noun names is spoken to; both are someone."""
FEELING_VERBS_JA = frozenset(
    {"思う", "おもう", "考える", "かんがえる", "知る", "気づく", "覚える", "おぼえる",
     "忘れる", "わすれる", "信じる", "喜ぶ", "よろこぶ", "悲しむ", "かなしむ", "笑う", "わらう",
     "怒る", "驚く", "おどろく", "困る", "こまる", "恐れる", "おそれる", "嘆く",
     "なげく", "眠る", "ねむる", "寝る", "死ぬ", "しぬ", "生まれる", "うまれる", "住む",
     "暮らす", "くらす", "感心", "心配", "安心", "びっくり", "がっかり", "ほっと", "なつく",
     "懐く", "あきれる", "呆れる", "たまげる", "ふるえる", "震える", "聞く", "見る", "眺める"}
)
"""Japanese verbs (and サ変 nouns, with する) of thinking, feeling, hearing and seeing,
sleeping, being born, dying and dwelling: what only a living being does (kana spellings that
are also another verb — すむ 済む, おこる 起こる, ねる 練る, しる 汁 — are left out). With
`SPEECH_VERBS_JA`, the closed class the Japanese reader's animacy signal reads (besides
grammar: いる / ある, -がる, counters, honorifics, vocatives; `storygraph.ingest.frames.ja`)."""
SPEECH_VERBS_EN = frozenset(
    {"say", "tell", "reply", "answer", "ask", "cry", "exclaim", "shout", "whisper", "beg",
     "call", "speak", "talk", "thank", "laugh", "weep", "sob", "sigh", "groan", "scream",
     "remark", "mutter", "retort"}
)
"""English verbs of saying (lemmas): their subject is someone."""
FEELING_VERBS_EN = frozenset(
    {"think", "know", "believe", "feel", "wish", "hope", "fear", "love", "hate", "like",
     "want", "wonder", "remember", "forget", "decide", "rejoice", "grieve", "sleep", "die",
     "smile", "fancy", "suppose", "mourn", "pity", "envy", "dream", "worry", "notice",
     "recognize", "recognise", "agree", "promise", "refuse"}
)
"""English verbs of thinking, feeling, wanting, sleeping and dying (lemmas): what only a living
being does; the English reader's animacy signal (`storygraph.ingest.frames.en`)."""

DOING_VERBS_JA = frozenset({"する", "為る"})
"""する (lemma and normal form): it says no act of its own but lends its clause to the verb it
is said of (何をしに行った asks for the act of going; 食べようとした: 食べる). The question's
reader (storygraph.qa.question.question_structure) looks past it for the asked predicate."""
NOUN_ACT_VERBS_JA = DOING_VERBS_JA | {"なる", "成る"}
"""Verbs whose noun says the act (行司をする, 行司になる: to be the referee); the slot check
(storygraph.qa.verify.support_slots) matches such a predicate by its noun, not by its lemma."""
LIGHT_PREDICATES_JA = NOUN_ACT_VERBS_JA | {"ある", "有る", "いる", "居る"}
"""Verbs that say no act of their own (…ようになる, …ている): a verb standing under one lends it
its nouns, and a question asking by one (どうなった) asks for an event, not a slot
(storygraph.qa.question.question_structure.read_clauses, storygraph.qa.verify.support_quotes)."""

SUBSIDIARY_VERBS_JA = frozenset(
    {"いる", "居る", "ある", "おく", "置く", "しまう", "行く", "いく", "来る", "くる", "みる",
     "見る", "もらう", "貰う", "くれる", "やる", "あげる", "上げる", "くださる", "下さる",
     "いただく", "頂く"}
)
"""Verbs written after a te-form as part of another verb (つい+て+行く, 忘れて行った, 助けて
もらう): the frames reader joins them to it as one predicate (storygraph.ingest.frames.ja), and
the quote check does not take them for the act a question asks about
(storygraph.qa.verify.support_quotes)."""

ANIMATE_COUNTERS_JA = frozenset({"匹", "羽", "頭", "人", "疋"})
"""Counters for animals and people (犬が一匹, 三人の子供): what they count is alive."""
INANIMATE_COUNTERS_JA = frozenset({"本", "枚", "個", "艘", "そう", "冊", "台", "軒", "粒", "束"})
"""Counters for things (まつの木を一本, 船が一そう): what they count is no one."""


@lru_cache(maxsize=1)
def words_by_stem() -> dict[str, tuple[str, ...]]:
    """Stem → every Japanese form and English word of the rows with that stem."""
    table: dict[str, list[str]] = {}
    for verb in VERBS:
        words = table.setdefault(verb.key, [])
        words.extend(w for w in (*verb.ja, *verb.en) if w not in words)
    return {stem: tuple(words) for stem, words in table.items()}


@lru_cache(maxsize=1)
def japanese_forms() -> dict[str, tuple[str, ...]]:
    """Relation type → its Japanese forms (what the sanitiser maps a model's name through)."""
    return {verb.type: verb.ja for verb in VERBS if verb.ja}


@lru_cache(maxsize=1)
def _ja_forms_longest_first() -> tuple[tuple[str, str], ...]:
    pairs = [(form, verb.type) for verb in VERBS for form in verb.ja]
    return tuple(sorted(pairs, key=lambda p: -len(p[0])))


@lru_cache(maxsize=1)
def _ja_forms_by_first_char() -> dict[str, tuple[tuple[int, str, str], ...]]:
    """The forms of `_ja_forms_longest_first` by their first character, each with its place in
    that order: a predicate is compared with the forms that can start it or occur in it only
    (every form against every run of words cost an entity page ~0.2 s,
    docs/ISSUES.md#entity-page-speed)."""
    table: dict[str, list[tuple[int, str, str]]] = {}
    for place, (form, rel_type) in enumerate(_ja_forms_longest_first()):
        table.setdefault(form[:1], []).append((place, form, rel_type))
    return {first: tuple(forms) for first, forms in table.items()}


@lru_cache(maxsize=1)
def _en_lemmas() -> dict[str, str]:
    table: dict[str, str] = {}
    for verb in VERBS:
        for word in verb.en:
            table.setdefault(word, verb.type)
    return table


_NON_WORD = re.compile(r"[^a-z ]+")


def relation_type_for(predicate: str, language: str) -> str | None:
    """The relation type a predicate says, or None when the table has no row for it.

    Japanese: the longest form the predicate starts with, else contains (退治する → DEFEATS,
    組みふせる → DEFEATS); English: the lemma, or a phrase of it (pick up), matched whole.
    """
    text = (predicate or "").strip()
    if not text:
        return None
    if language == "ja":
        by_first = _ja_forms_by_first_char()
        for _, form, rel_type in by_first.get(text[0], ()):
            if text.startswith(form):
                return rel_type
        inside = sorted(f for ch in set(text) for f in by_first.get(ch, ()) if len(f[1]) > 1)
        for _, form, rel_type in inside:
            if form in text:
                return rel_type
        return None
    lemma = " ".join(_NON_WORD.sub(" ", text.lower()).split())
    return _en_lemmas().get(lemma)


def relation_types() -> tuple[str, ...]:
    """Every type the table can write, in table order."""
    return tuple(dict.fromkeys(verb.type for verb in VERBS))
