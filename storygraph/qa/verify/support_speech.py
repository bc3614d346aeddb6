"""The support check of an answer about a line of speech (issue #41: who said what).

A question asking what someone said (兎は狐に何と言った？, "What did the Rabbit say to the
Fox?") is answered by the line's words, which name no one: the role and name checks have
nothing to read, and the words check wants the words beside the question's participants in the
model's order. A question asking who said a line ("Who said 'Let us play'?") often names no one
of the story at all. Both are read here off the lines themselves, as the ingest read them
(storygraph.text.speech): the quotes of the sources the model read (with the rest of their
sentence, so that the attribution is there) and the evidence of the stored SAYS facts.

- what X said (to Y): supported when the answer's own words (less the question's) stand in
  one line of X's (to Y, when that line's listener is known), in a source read or in a stored
  SAYS fact of X's whose sentence a source holds;
- who said a line: supported when the answer names the speaker of the line that holds what the
  question quotes (or, with no quote, most of the question's own words).

It confirms, and refuses only the words of another one's line given as the asked speaker's
(which the quote check would pass: the answer quotes a source); an answer it cannot decide goes
on to the other checks as before. A declined answer to a question whose asked speaker has a line
(`asked_speaker_speaks`) is not read as a question with no premise.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from storygraph.models import Citation, Fact, Support
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.question_type import PERSON_KINDS
from storygraph.qa.question.speech_words import (
    asked_words,
    char_pairs,
    question_pairs,
    question_quotes,
)
from storygraph.text.language import is_japanese_char
from storygraph.text.normalize import normalize_name, same_entity
from storygraph.text.speech import SAYS, Speech, SpeechNames, quotes_in, read_speech
from storygraph.text.terms import english_words

WORD_SHARE = 0.6
"""How much of the answer's own words one line must hold (English words; Japanese characters
pairs) for the line to confirm it."""
REPRODUCED = 0.5
"""How much of another speaker's line an answer must repeat to be refused as that line (a
phrase the two lines share, or the narration's, is no reason to refuse)."""
_QUOTE_MARKS = re.compile(r"[「」『』“”\"]")


def speech_support(
    analysis: QuestionAnalysis,
    answer: str,
    sources: Sequence[Citation],
    facts: Sequence[Fact],
    text_of: Callable[[Citation], str] = lambda c: c.text,
) -> Support | None:
    """A "supported" verdict for an answer about a line of speech that a line confirms; "not
    supported" for the words of a line another one says, given as the asked speaker's; else
    None (the other checks decide). `answer` is the answer's core (no marks, no copula);
    `text_of` gives a source with the rest of its sentence (its attribution)."""
    if not analysis.qtype.speech or not answer.strip():
        return None
    names = _who_may_speak(analysis, facts)
    lines = _read_lines(sources, names, text_of) + _stored_lines(facts, sources)
    if analysis.qtype.kind in PERSON_KINDS:
        return _who_said(analysis, answer, lines)
    return _what_said(analysis, answer, lines)


def _who_may_speak(analysis: QuestionAnalysis, facts: Sequence[Fact]) -> SpeechNames:
    """Who may speak: the question's entities, the facts' ends, and the graph's characters."""
    names = [e.node_id for e in analysis.entities if e.node_id]
    names += [n for f in facts for n in (f.start, f.end)]
    names += [str(r["id"]) for r in analysis.name_rows if str(r.get("type", "")) == "Character"]
    return SpeechNames(names)


def _read_lines(
    sources: Sequence[Citation], names: SpeechNames, text_of: Callable[[Citation], str]
) -> list[tuple[Citation, Speech]]:
    """The lines read off each source with the story around it (`text_of`), those whose words
    the source itself holds (the story before it is read for an attribution, not for lines)."""
    found = []
    for source in sources:
        for line in read_speech(text_of(source), names):
            if any(_holds(source.text, part) for part in line.quote.split(" … ")):
                found.append((source, line))
    return found


def _stored_lines(
    facts: Sequence[Fact], sources: Sequence[Citation]
) -> list[tuple[Citation, Speech]]:
    """The SAYS facts' lines, each with a source holding its sentence (none: not usable)."""
    found = []
    for fact in facts:
        if fact.type != SAYS or not fact.evidence:
            continue
        source = next((c for c in sources if _holds(c.text, fact.evidence)), None)
        if source is None:
            continue
        for quote in quotes_in(fact.evidence):
            found.append((source, Speech(fact.start, quote, fact.end, fact.evidence, 0, "fact")))
    return found


def _holds(text: str, sentence: str) -> bool:
    return normalize_name(sentence)[:40] in normalize_name(text)


def _speaker_and_listener(analysis: QuestionAnalysis) -> tuple[list[str], list[str]]:
    """The question's asked speakers (its subject: direction "out") and listeners ("in")."""
    roles = analysis.qtype.roles
    speakers = [e for e, d in roles.items() if d == "out"]
    listeners = [e for e, d in roles.items() if d == "in"]
    if not speakers and len(analysis.entities) == 1 and not listeners:
        # the one entity the question names is the speaker, when it is a character (not the
        # 家 an English question's "-ist" was read as)
        only = analysis.entities[0].node_id
        characters = {str(r["id"]) for r in analysis.name_rows if r.get("type") == "Character"}
        speakers = [only] if only in characters or not analysis.name_rows else []
    return speakers, listeners


def _what_said(
    analysis: QuestionAnalysis, answer: str, lines: Sequence[tuple[Citation, Speech]]
) -> Support | None:
    speakers, listeners = _speaker_and_listener(analysis)
    # the answer's own script: a question across languages is answered in the story's
    written = "ja" if any(is_japanese_char(ch) for ch in answer) else "en"
    own = _own_words(answer, analysis, written)
    if not own:
        return None
    others: list[str] = []
    for source, line in lines:
        if _share(own, line.quote, written) < WORD_SHARE:
            continue
        if speakers and not any(same_entity(line.speaker, s) for s in speakers):
            if _share(_words_of(line.quote, written), answer, written) >= REPRODUCED:
                others.append(line.speaker)  # the answer is that line, not a phrase of it
            continue
        if listeners and line.listener and not any(same_entity(line.listener, li)
                                                   for li in listeners):
            continue
        to = f" to {line.listener}" if line.listener else ""
        return Support(
            "supported",
            source=source.number,
            named=(line.speaker,),
            reason=f"{line.speaker} says it{to} in [{source.number}]",
            check="speech",
        )
    if others and speakers:
        # the model's words are another one's line ("the answer quotes [2]" would pass it)
        return Support(
            "not supported",
            reason=f"the line the answer gives is {others[0]}'s, not {speakers[0]}'s",
            check="speech",
        )
    return None


def _who_said(
    analysis: QuestionAnalysis, answer: str, lines: Sequence[tuple[Citation, Speech]]
) -> Support | None:
    asked = asked_words(analysis)
    # what the question quotes, in any quotation marks (“Thief!”, 「…」, "…")
    quoted = question_quotes(analysis) or list(analysis.quoted)
    for source, line in lines:
        said = normalize_name(line.quote)
        held = any(q and q in said for q in quoted) or (
            not quoted and _share(asked, line.quote, analysis.language) >= 0.5
        )
        if not held or not _names(answer, line.speaker):
            continue
        return Support(
            "supported",
            source=source.number,
            named=(line.speaker,),
            reason=f"{line.speaker} says the line in [{source.number}]",
            check="speech",
        )
    return None


def _names(answer: str, speaker: str) -> bool:
    """Does the answer name the speaker ("the Rabbit", 兎です)?"""
    folded, key = normalize_name(answer), normalize_name(speaker)
    if not key:
        return False
    if key.isascii():
        return re.search(rf"(?<![a-z]){re.escape(key)}(?![a-z])", folded) is not None
    return key in folded or same_entity(answer, speaker)


def _own_words(answer: str, analysis: QuestionAnalysis, written: str) -> list[str]:
    """The answer's content (English word stems; Japanese character pairs, as `written`)
    less the question's."""
    text = _QUOTE_MARKS.sub(" ", answer)
    if written == "ja":
        pairs = char_pairs(text)
        asked = set(question_pairs(analysis))
        return [p for p in pairs if p not in asked]
    asked = set(analysis.words)
    return [w for w in english_words(text) if w not in asked]


def _words_of(text: str, written: str) -> list[str]:
    text = _QUOTE_MARKS.sub(" ", text)
    return char_pairs(text) if written == "ja" else english_words(text)


def _share(words: Sequence[str], quote: str, language: str) -> float:
    if not words:
        return 0.0
    if language == "ja":
        held = set(char_pairs(quote))
    else:
        held = set(english_words(_QUOTE_MARKS.sub(" ", quote)))
    return sum(w in held for w in words) / len(words)


def asked_speaker_speaks(
    analysis: QuestionAnalysis,
    facts: Sequence[Fact],
    sources: Sequence[Citation],
    text_of: Callable[[Citation], str] = lambda c: c.text,
) -> bool:
    """Whether a question asking what someone said has a line of the asked speaker (to the
    asked listener, when the question names one and the line's is known), stored (SAYS) or read
    in the sources: then someone did say something, and the premise check does not apply."""
    if not analysis.qtype.speech or analysis.qtype.kind in PERSON_KINDS:
        return False
    speakers, listeners = _speaker_and_listener(analysis)
    if not speakers:
        return False
    names = _who_may_speak(analysis, facts)
    for _, line in _stored_lines(facts, sources) + _read_lines(sources, names, text_of):
        if not any(same_entity(line.speaker, s) for s in speakers):
            continue
        if listeners and line.listener and not any(
            same_entity(line.listener, li) for li in listeners
        ):
            continue
        return True
    return False
