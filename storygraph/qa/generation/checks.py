"""The checks a written answer goes through before the user reads it, in one place.

The answer step (storygraph.qa.pipeline.writing) hands every reply the model wrote to `judge_reply`:

- the reply's language against the question's (a warning only);
- `not_an_answer`: a worked example's answer that no sentence the model read holds (the small
  model's prompt only; docs/ISSUES.md#not-an-answer, `copied_example`), or the very person a person
  question names (`echoed_name`, the same entry): replaced by the fixed "the sentences do not say"
  reply;
- `says_unknown`: the model found no answer in its sentences: the closest sentence (the first
  story sentence among the sources) is shown beside the reply (`closest_sentence`).

Then, on every answer the model wrote, `unsupported_names`: graph names the answer brings in
that neither the kept facts, their sentences, the cited sources nor the question contain (a
warning in the trace). `nothing_found` is the reply when no fact was kept.

A new check is one more function here, called from `judge_reply` (what replaces or adds to the
reply) or from the engine's answer step (what only warns).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from storygraph.models import Citation, Fact
from storygraph.qa.generation.answer import CLOSEST_LEAD, UNKNOWN
from storygraph.qa.generation.answer_core import SHORT_COPULAS, answer_core, without_marks
from storygraph.qa.generation.answer_examples import answer_examples
from storygraph.qa.question.analysis import QuestionAnalysis
from storygraph.qa.question.question_type import PERSON_KINDS
from storygraph.qa.retrieval.context import Sources
from storygraph.store.reading import SO_FAR, Reading
from storygraph.text.language import answer_language
from storygraph.text.normalize import normalize_name

_ARTICLE = re.compile(r"^(?:the|a|an)\s+")


def says_unknown(text: str) -> bool:
    """Did the model answer with the prompt's "the sentences do not say" reply? Anywhere in
    its answer: the small model sometimes puts the question's subject first
    (「桃太郎はこの話の文からは分かりません。」)."""
    folded = text.strip().lower()
    return any(u.lower().rstrip("。.") in folded for u in UNKNOWN.values())


def _answer_core(text: str) -> str:
    """An answer without its source numbers and final stop, normalised (normalize_name)."""
    said = normalize_name(without_marks(text)).strip(" 。.")
    return answer_core(said, copulas=SHORT_COPULAS, run=False)


def copied_example(answer: str, language: str, read: Sequence[Citation]) -> str | None:
    """The worked example's answer (storygraph.qa.generation.answer_examples) that `answer` repeats
    word for
    word while none of the sentences the model read holds it: the small model answered the
    example's question, not the user's (「湖の岸のあしの中です。[2]」 for where the bamboo
    cutter found the girl; docs/ISSUES.md#not-an-answer). None for any other answer, for the fixed
    "the sentences do not say" reply, and when a sentence read does hold those words."""
    language = "ja" if language == "ja" else "en"
    unknown = UNKNOWN[language]
    said = _answer_core(answer)
    if not said:
        return None
    held = normalize_name(" ".join(c.text for c in read))
    for example in answer_examples(language, unknown):
        if example.answer != unknown and _answer_core(example.answer) == said:
            return None if said in held else example.answer
    return None


def echoed_name(answer: str, analysis: QuestionAnalysis) -> str | None:
    """The question's own start entity that `answer` gives, and nothing else, to a question
    asking for a person: 「たぬきの縄をといてやったのは誰？」 → 「たぬきです。[3]」, 「都に帰った
    貞光は、金太郎を誰に会わせた？」 → 「金太郎です。[2]」 (docs/ISSUES.md#not-an-answer). Whom a
    question names as a participant is not whom it asks for. None for other questions and answers,
    and for a name the question only quotes (a title: 「一寸法師」で鬼を退治したのは誰？)."""
    if analysis.qtype.kind not in PERSON_KINDS:
        return None
    said = _ARTICLE.sub("", _answer_core(answer))
    if not said:
        return None
    for entity in analysis.entities:
        for name in (entity.node_id, entity.mention):
            key = normalize_name(name)
            if key and said == key and key in analysis.unquoted:
                return entity.node_id
    return None


def not_an_answer(
    text: str, analysis: QuestionAnalysis, read: Sequence[Citation], *, worked_examples: bool
) -> str | None:
    """Why the model's `text` is no answer to the question, or None: a worked example's answer
    that no sentence it read holds (only a prompt with `worked_examples`;
    docs/ISSUES.md#not-an-answer), or the very person a person question names (the same entry)."""
    if worked_examples:
        copied = copied_example(text, analysis.reply_language, read)
        if copied is not None:
            return (
                f"the model repeated a worked example's answer ({copied}), which no sentence "
                "it read holds"
            )
    echoed = echoed_name(text, analysis)
    if echoed is not None:
        return f"the model answered with {echoed}, whom the question itself names"
    return None


def closest_sentence(sources: Sources, language: str) -> str:
    """What follows a "the sentences do not say" reply: the closest sentence with its number
    (the first story sentence: the best fact's, measured better than sentence search's best);
    "" when there is no story sentence among the sources."""
    sentences = sources.sentences
    if not sentences:
        return ""
    best = sentences[0]
    return f" {CLOSEST_LEAD[language]}「{best.text}」[{best.number}]"


@dataclass(frozen=True)
class Judged:
    """A model's reply after the checks: the text to show, what was added to it (streamed
    after the reply), and the warnings for the trace."""

    text: str
    added: str
    warnings: tuple[str, ...]
    language: str
    """The language `text` is written in: the reply's as read here, or the fixed reply's."""


def judge_reply(
    reply: str, analysis: QuestionAnalysis, sources: Sources, *, worked_examples: bool
) -> Judged:
    """The checks on a reply the model wrote (see the module doc)."""
    warnings: list[str] = []
    language = analysis.reply_language
    got = answer_language(reply)
    if analysis.language != got:
        warnings.append(
            f"the model answered in {got}, not in the question's language ({analysis.language})"
        )
    text, written_in = reply, got
    rejected = not_an_answer(reply, analysis, sources.read, worked_examples=worked_examples)
    if rejected is not None:
        warnings.append(f"{rejected}: treated as no answer")
        text, written_in = UNKNOWN[language], language
    added = closest_sentence(sources, language) if says_unknown(text) else ""
    return Judged(text + added, added, tuple(warnings), written_in)


def unsupported_names(
    answer: str,
    graph_names: Sequence[str],
    facts: Sequence[Fact],
    citations: Sequence[Citation],
    folded_question: str,
) -> list[str]:
    """Graph names the answer mentions that neither the kept facts, their evidence sentences,
    the cited sources nor the question (`folded_question`: as the analysis folded it) contain
    (a name the model brought in unsupported). The fixed "the sentences do not say" reply is
    not the model's own words and is left out."""
    for fixed in UNKNOWN.values():
        answer = answer.replace(fixed, " ")
    said = normalize_name(answer)
    told = normalize_name(
        " ".join([f"{f.start} {f.end} {f.evidence}" for f in facts] + [c.text for c in citations])
    )
    support = f"{folded_question} {told}"
    found: list[str] = []
    for name in graph_names:
        key = normalize_name(name)
        if (len(key) < 2 and key.isascii()) or key not in said or key in support:
            continue
        if any(key in normalize_name(other) for other in found):
            continue
        found.append(name)
    return found


NO_ENTITY = {
    "ja": "この質問の人物や物がグラフに見つかりませんでした。",
    "en": "I could not find who or what this question is about in the graph.",
}
"""The reply when the question names no one the graph holds (within a reading position it
reads "not in what you have read so far": storygraph.qa.generation.checks.so_far)."""


def nothing_found(analysis: QuestionAnalysis, candidates: Sequence[Fact]) -> str:
    """No kept fact: say so, and show the closest evidence sentence when there is one."""
    language = analysis.reply_language
    if not analysis.entities:
        return NO_ENTITY["ja" if language == "ja" else "en"]
    closest = next((f.evidence for f in candidates if f.evidence), "")
    if not closest:
        return UNKNOWN[language]
    return f"{UNKNOWN[language]} {CLOSEST_LEAD[language]}{closest}"


def so_far(text: str, reading: Reading) -> str:
    """`text` with the answer's "the story does not say" (`UNKNOWN`, the fixed decline, which
    the model is told to write too: in either language, anywhere, in any case, with or without
    its stop) as "not in what you have read so far" when the reader has a position; so too
    "no one this question names is in the graph" (`NO_ENTITY`): a name first written later is
    not found (`Reading.names`), and saying it is not in the graph at all would be untrue."""
    if reading.until is None:
        return text
    for lang, unfound in NO_ENTITY.items():
        text = text.replace(unfound, SO_FAR[lang])
    for lang, unknown in UNKNOWN.items():
        stem = re.escape(unknown.rstrip("。."))
        text = re.sub(stem, SO_FAR[lang].rstrip("。."), text, flags=re.IGNORECASE)
    return text
