"""The verifier's signals: each a named function of the `Evidence` returning a number, or None
when it cannot be read (no citation, no token probabilities). None of them knows a story's
words: they compare the answer with the sentences it was written from and with the question,
read the model's own certainty, and take the premise check's verdict as one input among others.

Words are compared as *units*: for text with Japanese script, the bigrams of each run of
letters between punctuation and spaces (a one-letter run is its own unit: 犬), so 「犬と猿と
きじ」 and 「犬、猿、きじ」 share most units with a sentence saying 犬と猿ときじを…; for other
text, the stemmed content words (storygraph.text.terms.english_words).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence

from storygraph.qa.question.question_words import asked_kind
from storygraph.qa.verify.evidence import Evidence
from storygraph.text.language import is_japanese_char, is_japanese_text, is_kanji
from storygraph.text.normalize import is_proper_name, normalize_name
from storygraph.text.terms import JA_QUESTION_WORDS, english_words

Signal = Callable[[Evidence], float | None]

_RUNS = re.compile(r"[\w\u3040-\u30ff\u3400-\u9fff々〆ヶー]+")


def units(text: str) -> frozenset[str]:
    """The units `text` is compared by (module doc)."""
    folded = normalize_name(text)
    if not is_japanese_text(folded):
        return frozenset(english_words(folded))
    found: set[str] = set()
    for run in _RUNS.findall(folded):
        if len(run) == 1:
            found.add(run)
        found.update(run[i : i + 2] for i in range(len(run) - 1))
    return frozenset(found)


def share_in(part: frozenset[str], whole: frozenset[str]) -> float | None:
    """The share of `part`'s units that `whole` holds (None: `part` has none)."""
    if not part:
        return None
    return len(part & whole) / len(part)


def best_share(core: str, texts: Sequence[str]) -> tuple[float | None, int | None]:
    """The highest share of `core`'s units one of `texts` holds, and that text's index."""
    mine = units(core)
    best: tuple[float | None, int | None] = (None, None)
    for index, text in enumerate(texts):
        share = share_in(mine, units(text))
        if share is not None and (best[0] is None or share > best[0]):
            best = (share, index)
    return best


def grounded_cited(evidence: Evidence) -> float | None:
    """How much of the answer's core one cited sentence holds (None: it cites none)."""
    return best_share(evidence.core, evidence.cited)[0] if evidence.cited else None


def grounded_read(evidence: Evidence) -> float | None:
    """How much of the answer's core one sentence the model read holds."""
    return best_share(evidence.core, evidence.read)[0] if evidence.read else None


def question_share(evidence: Evidence) -> float | None:
    """How much of the answer's core the question already says (an answer naming the asked-about
    participant again, or repeating the question, says little)."""
    return share_in(units(evidence.core), units(evidence.question))


def question_in_cited(evidence: Evidence) -> float | None:
    """How much of the question the sentence it cites best says (is the cited sentence about
    what was asked, its act and participants?). A question in another script than the cited
    texts is read in their language: the share of its translated words (`Evidence.asked_forms`)
    one cited text writes in some form. None: it cites none, or a question in another script
    has no translated word."""
    if not evidence.cited:
        return None
    if not same_script(evidence.question, evidence.cited):
        return translated_in(evidence.asked_forms, evidence.cited)
    asked = units(evidence.question)
    shares = [share_in(asked, units(text)) for text in evidence.cited]
    known = [s for s in shares if s is not None]
    return max(known) if known else None


def form_in(form: str, text: str) -> bool:
    """Whether `text` writes `form`: a Japanese form anywhere in its letters (one kana alone is
    too common to count), an English one as all of its content words."""
    folded = normalize_name(form)
    if is_japanese_text(folded):
        alone = len(folded) == 1 and not is_kanji(folded)
        return not alone and folded in normalize_name(text)
    mine = units(folded)
    return bool(mine) and mine <= units(text)


def translated_in(words: Sequence[Sequence[str]], texts: Sequence[str]) -> float | None:
    """The highest share, over `texts`, of `words` (each a word's forms) one text writes in some
    form; None: no word."""
    if not words:
        return None
    shares = (
        sum(any(form_in(f, text) for f in forms) for forms in words) / len(words) for text in texts
    )
    return max(shares, default=0.0)


# One sentence of a cited text: Japanese ends at 。！？ (a closing bracket kept with it) unless a
# quotation goes on into its speaker (」と, 」って); English at .!? (closing quotes kept) when a
# capital or an opening quote starts the next ("Run!" cried the fox. stays one sentence).
_JA_SENTENCE_END = re.compile(r"(?<=[。！？!?])[」』）)]*(?![」』）)とっ])")
_EN_SENTENCE_END = re.compile(r"(?<=[.!?])[\"”’')\]]*\s+(?=[“\"‘'(A-Z])")
_JA_ASKED = re.compile("|".join(JA_QUESTION_WORDS))


def sentences(text: str) -> list[str]:
    """The sentences of `text` (the rules above; a blank line ends one, a single line break is a
    wrapped line's and does not)."""
    end = _JA_SENTENCE_END if is_japanese_text(text) else _EN_SENTENCE_END
    out: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        line = re.sub(r"\s*\n\s*", " ", paragraph)
        cuts = [0, *(m.end() for m in end.finditer(line)), len(line)]
        out.extend(line[a:b].strip() for a, b in itertools.pairwise(cuts) if line[a:b].strip())
    return out


def asked_units(question: str) -> frozenset[str]:
    """The question's units without its question word (English ones are stop words already;
    Japanese ones, 誰 だれ 何 どこ…, are cut out so that no unit straddles them)."""
    return units(_JA_ASKED.sub(" ", normalize_name(question)))


def same_script(question: str, texts: Sequence[str]) -> bool:
    """Whether the question and `texts` (what it cites or read) are in the same script (an
    English question over a Japanese story shares no unit with it: a signal comparing them
    says nothing)."""
    return is_japanese_text(question) == is_japanese_text("".join(texts))


def gap_filled(evidence: Evidence, texts: Sequence[str]) -> float | None:
    """Whether the answer fills the question's gap in a sentence of `texts`: over each
    sentence, the share of the question's units (its question word left out) it holds times
    the share of the answer's own units (those the question does not say) it holds; the best
    product. A sentence in another script than the question holds the share of its translated
    words (`Evidence.asked_forms`) it writes. A right answer stands in the sentence that tells
    the asked act with its participants; a wrong one is named elsewhere, or in a sentence about
    something else; an answer adding nothing to the question fills no gap (0). None: no
    sentence the question can be read in (no unit, or an untranslated question)."""
    asked = asked_units(evidence.question)
    question_ja = is_japanese_text(evidence.question)

    def question_share(sentence: str) -> float | None:
        if question_ja != is_japanese_text(sentence):
            return translated_in(evidence.asked_forms, (sentence,))
        return found_in(asked, sentence) if asked else None

    shares = [
        (share, sentence)
        for text in texts
        for sentence in sentences(text)
        if (share := question_share(sentence)) is not None
    ]
    if not shares:
        return None
    new = units(evidence.core) - asked
    if not new:
        return 0.0
    return max(share * found_in(new, sentence) for share, sentence in shares)


def answer_locality(evidence: Evidence) -> float | None:
    """`gap_filled` over the sentences the answer cites (None: it cites none)."""
    return gap_filled(evidence, evidence.cited) if evidence.cited else None


def answer_in_read(evidence: Evidence) -> float | None:
    """`gap_filled` over every sentence the model read, whichever it cites: the small model's
    source mark follows its position and habit more than the sentence its words come from
    (docs/ISSUES.md#mark-habit), so a right answer citing the wrong source still stands in the
    sentence that tells what was asked. None: nothing read."""
    return gap_filled(evidence, evidence.read) if evidence.read else None


def found_in(part: frozenset[str], sentence: str) -> float:
    """The share of `part`'s units `sentence` holds; in Japanese a unit is found anywhere in
    the sentence's letters, so that a one-letter answer (熊) is found inside a longer run (熊が)."""
    if not part:
        return 0.0
    if is_japanese_text(sentence):
        folded = normalize_name(sentence)
        return sum(unit in folded for unit in part) / len(part)
    return len(part & units(sentence)) / len(part)


def hypothesis_in_cited(evidence: Evidence) -> float | None:
    """How much of the question with its gap filled (its question word replaced by the answer's
    core: 「犬をたたいたのは誰？」 + 猿 → 犬をたたいたのは猿) one cited sentence holds; the best
    sentence's share. None: no citation, a question in another script, or no unit."""
    if not evidence.cited or not same_script(evidence.question, evidence.cited):
        return None
    question = normalize_name(evidence.question)
    core = normalize_name(evidence.core)
    filled = _JA_ASKED.sub(core, question) if _JA_ASKED.search(question) else question
    hypothesis = units(filled) | units(core)
    if not hypothesis:
        return None
    shares = (share_in(hypothesis, units(s)) or 0.0 for t in evidence.cited for s in sentences(t))
    return max(shares, default=0.0)


def premise_in_read(evidence: Evidence) -> float | None:
    """Whether the story tells what the question takes as given: the best share of the
    question's units (its question word left out) that one sentence the model read holds. A
    question about an act the story tells finds most of its words in the sentence telling it; a
    false premise (an act nobody did, a thing the story never names) finds them scattered or
    missing, whatever the model then wrote. None: nothing read, a question in another script, or
    no unit."""
    if not evidence.read or not same_script(evidence.question, evidence.read):
        return None
    asked = asked_units(evidence.question)
    if not asked:
        return None
    return max(
        (found_in(asked, sentence) for text in evidence.read for sentence in sentences(text)),
        default=0.0,
    )


def mean_logprob(evidence: Evidence) -> float | None:
    """The model's mean log probability per written token."""
    if not evidence.logprobs:
        return None
    return sum(evidence.logprobs) / len(evidence.logprobs)


HEAD_TOKENS = 3
"""The answer's first tokens: where the model commits to what it names (「猿」, "The monkey")."""


def head_logprob(evidence: Evidence) -> float | None:
    """The model's mean log probability over the first `HEAD_TOKENS` tokens it wrote."""
    head = evidence.logprobs[:HEAD_TOKENS]
    return sum(head) / len(head) if head else None


def token_spans(written: str, tokens: Sequence[str]) -> list[tuple[int, int]] | None:
    """Where each token stands in `written` (start, end): a token whose text holds U+FFFD (part
    of a character's bytes, which the server decodes alone) shares with its broken neighbours the
    letters up to the next whole token. None: the tokens do not spell `written`."""
    spans: list[tuple[int, int]] = []
    at = 0
    broken = 0  # tokens waiting for the next whole one to say where they end
    for token in tokens:
        if "\ufffd" in token:
            broken += 1
            continue
        found = written.find(token, at) if broken else (at if written.startswith(token, at) else -1)
        if found < 0 and not broken and not token.strip():
            found = at  # whitespace the reply lost when stripped
        if found < 0:
            return None
        spans.extend((at, found) for _ in range(broken))
        broken = 0
        spans.append((found, found + len(token)))
        at = found + len(token)
    spans.extend((at, len(written)) for _ in range(broken))
    return spans if len(spans) == len(tokens) else None


def answer_logprob(evidence: Evidence) -> float | None:
    """The model's mean log probability over the tokens that write the answer's own words: the
    tokens within its core (「猿です。[1]」 → 猿; a one-sentence reply's whole clause) that hold a
    letter (Japanese) or a word (English) the question does not. `head_logprob` reads the first
    tokens, which a Japanese reply often spends on the question's own participant (「桃太郎は…」);
    this reads where the model commits to what it answers. None: no token texts, a core not
    found in the reply, or nothing the question does not already say."""
    if not evidence.tokens or len(evidence.tokens) != len(evidence.logprobs) or not evidence.core:
        return None
    written = evidence.answer  # the reply stripped: its first token's spaces are not in it
    spans = token_spans(written, (evidence.tokens[0].lstrip(), *evidence.tokens[1:]))
    start = written.find(evidence.core)
    if spans is None or start < 0:
        return None
    end = start + len(evidence.core)
    question = normalize_name(evidence.question)
    asked_words = set(english_words(question))
    own: list[float] = []
    for (begins, ends), logprob in zip(spans, evidence.logprobs, strict=True):
        if ends <= start or begins >= end or begins == ends:
            continue
        piece = normalize_name(written[begins:ends])
        if is_japanese_text(piece):
            new = any(ch not in question for ch in piece if is_japanese_char(ch))
        else:
            new = any(w not in asked_words for w in english_words(piece))
        if new:
            own.append(logprob)
    return sum(own) / len(own) if own else None


def min_logprob(evidence: Evidence) -> float | None:
    """The model's least certain choice among the tokens it wrote (floored at -20)."""
    return max(min(evidence.logprobs), -20.0) if evidence.logprobs else None


def no_premise(evidence: Evidence) -> float | None:
    """1 when the premise check (storygraph.qa.verify.premise) found the question's act told of
    no one in the story, else 0; None: it did not run."""
    if evidence.rule in ("", "not checked"):
        return None
    return 1.0 if evidence.rule == "no premise" else 0.0


def self_check(evidence: Evidence) -> float | None:
    """The model's own judgement, asked after it wrote, of whether the sentences its answer
    cites state that answer to the question: log P(yes) - log P(no) of its one-word reply
    (storygraph.qa.verify.self_check). None: not asked (no citation, no token probabilities,
    a second story's answer in a library)."""
    return evidence.self_check


NAME_JOINERS = frozenset({"of", "with", "the", "and", "de", "la", "le", "von", "van"})
"""Small words an English name may hold between its capitalised ones (Riquet with the Tuft)."""
MAX_NAME_WORDS = 4


def written_as_name(core: str) -> bool | None:
    """Whether an answer's core is written as a proper name: in Japanese, all katakana or a
    proper noun without a particle (`is_proper_name`; None without Sudachi); in English, at most
    `MAX_NAME_WORDS` words, the first capitalised and not an article, every other capitalised
    or a joining word (Dinah, Prince Hyacinth; not "The King", "Three days")."""
    body = core.strip().rstrip(".。!！")
    if not body:
        return False
    if is_japanese_text(body):
        return is_proper_name(body)
    words = body.split()
    if len(words) > MAX_NAME_WORDS or words[0].lower() in ("the", "a", "an"):
        return False
    return words[0][:1].isupper() and all(
        w[:1].isupper() or w.lower() in NAME_JOINERS for w in words[1:]
    )


def name_answer(evidence: Evidence) -> float | None:
    """For a question asking for a name (question_words.asked_kind: 名前, の名, "name"), 1 when
    the answer's core is written as one (`written_as_name`), else 0: the story that never names
    the teacher gets "the teacher" or another noun back. None for any other question, and for
    a Japanese core without Sudachi."""
    if asked_kind(evidence.question) != "name":
        return None
    named = written_as_name(evidence.core)
    return None if named is None else float(named)


def core_size(evidence: Evidence) -> float | None:
    """log(1 + the number of units the answer's core has): a name is short, a clause long."""
    return math.log1p(len(units(evidence.core)))


SIGNALS: dict[str, Signal] = {
    "grounded_cited": grounded_cited,
    "grounded_read": grounded_read,
    "question_share": question_share,
    "question_in_cited": question_in_cited,
    "mean_logprob": mean_logprob,
    "head_logprob": head_logprob,
    "answer_logprob": answer_logprob,
    "min_logprob": min_logprob,
    "no_premise": no_premise,
    "core_size": core_size,
    "answer_locality": answer_locality,
    "answer_in_read": answer_in_read,
    "hypothesis_in_cited": hypothesis_in_cited,
    "premise_in_read": premise_in_read,
    "self_check": self_check,
    "name_answer": name_answer,
}
"""Every signal by name, in the order the calibrated model's weights list them."""


def read_signals(evidence: Evidence, names: Sequence[str] | None = None) -> dict[str, float | None]:
    """The signals `names` (all of them by default) of `evidence`."""
    return {name: SIGNALS[name](evidence) for name in (names or SIGNALS)}
