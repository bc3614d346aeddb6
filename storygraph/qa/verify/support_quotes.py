"""Does a quoted sentence answer the question? (issue 27, docs/ISSUES.md#support-quotes)

The support check (storygraph.qa.verify.support) confirms a long answer that copies a source
sentence
about the question's participant ("quote"): the small model often answers with the story's own
words. But a sentence can be about the participant and still not answer: 「子どもたちがいじめて
いたのは何？」 → 「子どもたちがいじめているのは石でたたいたり、さんざんにいじめているのです。」
names nothing that is bullied; 「乙姫さまが…浦島にくれたものは？」 → 「人間のいちばんだいじなたから
がこめてあります。」 is about another act; 「誰といっしょに…と呼ばれた？」 → 「坂田金時と名乗って、
…と呼ばれるようになりました。」 has its と-phrase on another verb.

`quote_misses` reads the answer by the parse the question is read with (GiNZA, through the
question room's `QuestionParser`, storygraph.qa.question.checked: `QuestionStructure.clauses`)
and asks of a Japanese question with an asked predicate:

- an act asked by a verb (いじめる, 呼ばれる): when a clause of the answer says that verb (its
  dictionary form, a verb chained to it, or a verb of the same relation stem in the vocabulary
  table), a noun phrase fills the asked slot and is neither a participant nor a word of the
  question (`_fills`): one of such a clause in the question word's case when it has one (誰と:
  a と-phrase); else one of any verb of the answer (the parse may hang a phrase on another verb
  of the sentence) in the direction the question's participants leave open (they do it: a
  phrase done to, を / に / へ in the active voice; they are done to: the doer), or, when they
  both do it and are done to (乙姫さまが浦島にくれた), in the core case none of the question's
  phrases takes (を).

An answer that says the act by none of those verbs may say it by another (さし出した？ →
さし上げます, こしらえた？ → 「…きびだんごをつきはじめました」): it is read as before, unless its
source says the asked act, the answer leaves the verb out and names nothing in the slot
(くれた？ → 「…たからがこめてあります」 from 「…たからがこめてございます。これを…さし上げます」):
then it copies another clause of its source (the answer's nouns count in the slot only when
the source's clause of the asked verb governs them too: 「…杉の木や松の木をきり倒しては…」 copies
the clause after 「まさかりをかついで歩いて」 for 「…かついで歩いていた道具は何？」); or unless
the sentence it copies (`copied_sentence`) does not say the act
either, the answer says no verb of the asked verb's field of meaning (the vocabulary's
FIELDS) and names none of the question's participants (「鬼が島に忘れて行ったものは何？」 →
「犬も…あとからついて行きました。」): then it tells another event. The asked verbs are the
predicate's chain less a subsidiary verb after another (忘れて行った: 忘れる, not 行く;
vocabulary.SUBSIDIARY_VERBS_JA). A question asking why or how (なぜ, どうやって: no noun of the
act) is read as before.

`_quoted` finds the source a long answer quotes (`QUOTE_SHARE` of it word for word) about the
question's participant and topic: the check's "quote" verdict, which `quote_misses` then asks
more of.

`in_order_share` is the words check's order measure: an answer made of a source's words in
another order (an event no sentence tells) is not said by that source.

An event asked by a light verb (「土の舟が崩れた後、たぬきはどうなった？」: なる) has no slot to
fill: the quote is read as before.

A question with no asked predicate (what something is), or one whose structure (or the
answer's) cannot be read, asks nothing more of a quote: None.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from difflib import SequenceMatcher

from storygraph.models import Citation
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.question_structure import Clause, QuestionStructure, case_direction
from storygraph.qa.question.question_type import PERSON_KINDS
from storygraph.qa.question.relation_words import question_stems, related_stems, word_in
from storygraph.qa.verify.support_links import Link, beside
from storygraph.qa.verify.support_words import SHORT_EN, SHORT_JA, _core, on_topic, pairs
from storygraph.text.chunking import split_sentences
from storygraph.text.normalize import holds_name, normalize_name
from storygraph.text.terms import english_words
from storygraph.text.vocabulary import LIGHT_PREDICATES_JA, SUBSIDIARY_VERBS_JA, words_by_stem

Reader = Callable[[str, str], QuestionStructure | None]


def quote_misses(
    analysis: QuestionAnalysis,
    question: QuestionStructure | None,
    answer: str,
    read: Reader,
    source: str = "",
) -> str | None:
    """Why the quoted `answer` (its text without marks) does not answer the question, or None
    when it does or nothing more can be asked of it (module docstring)."""
    if analysis.language != "ja" or question is None or not question.predicate:
        return None
    if question.lemma in LIGHT_PREDICATES_JA:
        return None  # どうなった asks for an event, not a slot of one
    if analysis.asks_reason_or_manner:
        return None  # なぜ / どうやって ask for no noun of the act
    said = read(answer, "ja")
    if said is None:
        return None
    asked = _asked_lemmas(question)
    stems = _asked_stems(asked)
    clauses = [c for c in said.clauses if _says(c, asked, stems)]
    if not clauses:
        # another verb may say the same act (さし出す / さし上げる, こしらえる / つく), unless
        # the quoted source says the asked act by a verb the answer left out and the answer
        # names nothing in the slot: then it copies another clause of the source
        told = read(copied_sentence(answer, source), "ja") if source else None
        if told is None:
            return None
        if not any(_says(c, asked, stems) for c in told.clauses):
            if _same_field(said.clauses, stems) or _names_participant(answer, analysis):
                return None
            # neither the answer nor its source says the act, by no verb of its field, of
            # none of the question's participants: another event (「鬼が島に忘れて行ったものは
            # 何？」 → 「犬も…あとからついて行きました。」)
            return f"neither the quote nor its source says {question.lemma}"
        if _stem(question.lemma) in normalize_name(answer):
            return None  # the verb is there unparsed (名乗るがいい)
        # the clauses whose own verb is asked (a later verb of its chain governs more)
        acts = [c for c in told.clauses if c.lemma in asked] or [
            c for c in told.clauses if _says(c, asked, stems)
        ]
        if _fills(_governed_only(said.clauses, acts), question, analysis):
            return None  # it names what the source's act governs, in the slot
        return f"the quote leaves out {question.lemma}, which its source says, and its slot"
    if not question.asked_case:
        # a gap (…投げつけたものは？): the parse may hang a phrase of the act's sentence on
        # another of its verbs (硬いのをもいで、…投げつけました), so a phrase in the open
        # direction on any verb of the answer fills it
        clauses = list(said.clauses)
    if _fills(clauses, question, analysis):
        return None
    return f"the quote says {question.lemma} but names nothing in the asked slot"


def _fills(
    clauses: Sequence[Clause], question: QuestionStructure, analysis: QuestionAnalysis
) -> bool:
    """Does a noun phrase of the clauses fill the asked slot: in the question word's case, else
    in the direction the participants leave open, else (they do it and are done to: 乙姫さまが
    浦島にくれた) in the core case none of the question's phrases takes (を)?"""
    wanted = _wanted_direction(analysis)
    taken = {a.case for a in question.arguments}
    gap = next((c for c in ("を", "に", "が") if c not in taken), "")
    for clause in clauses:
        for phrase, case in clause.arguments:
            if _in_question(phrase, analysis):
                continue
            if question.asked_case:
                if case == question.asked_case:
                    return True
            elif wanted is not None:
                if case_direction(case, clause.voice) == wanted:
                    return True
            elif not gap or case == gap:
                return True
    return False


def _asked_lemmas(question: QuestionStructure) -> set[str]:
    """The asked predicate's dictionary form and those of the verbs chained to it, less a
    subsidiary verb written after another verb of the chain (忘れて行った asks about 忘れる:
    an answer saying ついて行きました does not say it)."""
    lemmas = {question.lemma}
    for clause in question.clauses:
        if clause.lemma == question.lemma:
            first, *after = clause.lemmas or (question.lemma,)
            lemmas |= {first, *(lemma for lemma in after if lemma not in SUBSIDIARY_VERBS_JA)}
            if question.lemma in SUBSIDIARY_VERBS_JA and question.lemma != first:
                lemmas.discard(question.lemma)
    return lemmas - LIGHT_PREDICATES_JA


def _asked_stems(asked: set[str]) -> frozenset[str]:
    """The relation stems of the asked verbs (the vocabulary's rows their forms are in)."""
    return frozenset(stem for lemma in asked for stem in question_stems(lemma))


def copied_sentence(answer: str, source: str) -> str:
    """The sentence of `source` the answer copies (the most of it in the answer's order), or
    the whole source when none holds `ORDER_SHARE` of it: a source passage brings its
    neighbours, and one saying the asked act beside the copied one does not make the copy say
    it (「…杉の木や松の木をきり倒しては…」 copied from a passage whose next sentence says
    歩く, for 「…かついで歩いていた大きな道具は何？」)."""
    sentences = [source[start:end] for start, end in split_sentences(source)]
    if len(sentences) < 2:
        return source
    shares = [in_order_share(answer, sentence, "ja") for sentence in sentences]
    best = max(range(len(sentences)), key=shares.__getitem__)  # the first of the best
    return sentences[best] if shares[best] >= ORDER_SHARE else source


def _governed_only(clauses: Sequence[Clause], acts: Sequence[Clause]) -> list[Clause]:
    """The answer's clauses keeping only the phrases one of `acts` (the source's clauses saying
    the asked act) governs too: an answer copying another clause of the act's sentence names
    that clause's nouns (「…杉の木や松の木をきり倒しては…」 beside 「まさかりをかついで歩いて」),
    which fill no slot of the act."""
    governed = {normalize_name(p) for act in acts for p, _ in act.arguments}
    governed.discard("")

    def held(phrase: str) -> bool:
        key = normalize_name(phrase)
        return bool(key) and any(key in g or g in key for g in governed)

    return [replace(c, arguments=tuple(a for a in c.arguments if held(a[0]))) for c in clauses]


def _same_field(clauses: Sequence[Clause], stems: frozenset[str]) -> bool:
    """Does a clause say a verb of the asked verbs' fields of meaning (さし上げる for a GIVE
    question)?"""
    related = related_stems(set(stems)) if stems else set()
    return bool(related) and any(question_stems(c.lemma) & related for c in clauses)


def _names_participant(answer: str, analysis: QuestionAnalysis) -> bool:
    """Does the answer name one of the question's participants (by its graph name or its
    mention; not a name it only qualifies another by)?"""
    return any(
        holds_name(answer, e.node_id) or holds_name(answer, e.mention)
        for e in analysis.entities
        if e.node_id not in analysis.qualifiers
    )


def _says(clause: Clause, asked: set[str], stems: frozenset[str]) -> bool:
    """Does the answer's clause say the asked verb (or one of its chain, or a verb of the
    same relation stem)?"""
    if clause.lemma in asked or asked & set(clause.lemmas):
        return True
    return bool(stems and question_stems(clause.lemma) & stems)


def _wanted_direction(analysis: QuestionAnalysis) -> str | None:
    """The role the answer plays beside the question's participants: "in" (done to) when they
    do it, "out" (the doer) when they are done to, None when they say neither (or both)."""
    directions = {d for d in analysis.qtype.roles.values() if d in ("in", "out")}
    if len(directions) != 1:
        return None
    return "in" if directions == {"out"} else "out"


def _in_question(phrase: str, analysis: QuestionAnalysis) -> bool:
    """Is the phrase a participant or a word of the question (not what it asks)?"""
    key = normalize_name(phrase)
    if not key or (len(key) > 1 and key in analysis.folded):
        return True
    names = [m for e in analysis.entities for m in (e.node_id, e.mention) if m]
    return any(normalize_name(n) == key for n in names)


ORDER_SHARE = 0.5
"""Share of an answer's own words a source must hold in the answer's order (see
`in_order_share`) for the words check to read the answer as said by it."""
_NOT_WORDS = re.compile(r"[\s、。，．・「」『』（）()！？!?,.\[\]0-9]+")


def in_order_share(answer: str, source: str, language: str) -> float:
    """How much of the answer the source says in the answer's order: Japanese characters
    (runs of two or more, punctuation left out), English content words, matched in one
    left-to-right alignment (difflib). An answer made of a source's words in another order
    (「おとうさんやおかあさんは、浦島太郎を出迎えたと…」 from 「…浦島太郎は…おとうさんおかあさんを
    やしなって」) scores low; a paraphrase keeping the order (「山へしば刈りに行きました」) high."""
    if language == "ja":
        a: Sequence[str] = _NOT_WORDS.sub("", normalize_name(answer))
        b: Sequence[str] = _NOT_WORDS.sub("", normalize_name(source))
        least = min(2, len(a))  # a one-character answer (薪) by its character
    else:
        a, b, least = english_words(answer), english_words(source), 1
    if not a:
        return 1.0
    blocks = SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks()
    return sum(m.size for m in blocks if m.size >= least) / len(a)


def _stem(lemma: str) -> str:
    """A verb's dictionary form less its last kana (名乗る → 名乗, 沈む → 沈)."""
    return normalize_name(lemma[:-1] if len(lemma) > 1 else lemma)


QUOTE_SHARE = 0.8
"""Share of an answer's character pairs (English: content words) one source must hold for the
answer to count as a quote of it."""


def _quoted(
    analysis: QuestionAnalysis,
    answer: str,
    sources: Sequence[Citation],
    links: Sequence[Link],
) -> Citation | None:
    """The source a long answer quotes (`QUOTE_SHARE` of it word for word), when that source
    names a participant of the question and shares a word of it; None for a short answer (a
    name: the role check reads it) and for anything else."""
    core = _core(answer)
    if analysis.language == "ja":
        if len(core) <= SHORT_JA:
            return None
        mine = pairs(core)
    else:
        mine = english_words(core)
        if len(core.split()) <= SHORT_EN:
            return None
        # "The Hare made fun of the short feet…" for "What did the Hare make fun of?": the
        # words it repeats of the question say the question, not what it quotes
        asked = set(analysis.words)
        own = [w for w in mine if w not in asked]
        mine = own if len(own) >= MIN_QUOTED_WORDS else mine
    if not mine:
        return None
    if analysis.qtype.kind in PERSON_KINDS | {"where"} and not on_topic(core, analysis):
        # a quote answering who / where must itself say the question's terms (its verb): a
        # sentence beside the asked event (「…ながめながら」 for who rescued the hare) names
        # someone, not the one asked for
        return None
    for c in sources:
        held = set(pairs(c.text)) if analysis.language == "ja" else set(english_words(c.text))
        share = sum(x in held for x in mine) / len(mine)
        if (
            share >= QUOTE_SHARE
            and (beside(c, analysis.entities, True, links) or _holds_quoted(c.text, analysis))
            and (on_topic(c.text, analysis) or _says_asked_verb(c.text, analysis))
        ):
            return c
    return None


MIN_QUOTED_WORDS = 3
"""An English answer's own words (those the question does not say) a quote is read by, at
least: fewer, and the whole answer is."""


def _says_asked_verb(text: str, analysis: QuestionAnalysis) -> bool:
    """Does a source say the question's verb by a word of the verb table's row for it
    (storygraph.text.vocabulary: "ridiculed" for "make fun of", 退治 for 倒した)? Then it is on
    the question's topic though it shares no term with it."""
    folded = text.lower()
    table = words_by_stem()
    return any(word_in(w, folded) for stem in analysis.stems for w in table.get(stem, ()))


MIN_QUOTED_PHRASE = 5
"""A phrase the question quotes this long or longer is the story's own words (「人間のいちばん
だいじなたから」, a speech), not a title or a name (「桃太郎」)."""


def _holds_quoted(text: str, analysis: QuestionAnalysis) -> bool:
    """Does a source hold a phrase the question quotes from the story, word for word? Then it
    tells what the question is about, whether or not it names a participant (the thing the
    phrase describes, 玉手箱, stands in a clause of its own)."""
    held = normalize_name(text)
    return any(len(q) >= MIN_QUOTED_PHRASE and q in held for q in analysis.quoted)
