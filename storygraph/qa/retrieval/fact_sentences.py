"""A fact the story states in several sentences, read by the one nearest the question.

A relation stated again and again is one fact with one evidence sentence per chunk: a
speaker's lines to one listener over a whole novel (the Caterpillar SAYS to Alice, in every
chapter they meet), who visits whom, who gives what to whom. The store hands a fact over with
its first sentence as `evidence` (storygraph.store.graph_store), and scoring, the citations and
the prompt read only that one, so a question about the tenth line was answered from the first
(docs/ISSUES.md#fact-sentence). `nearest_sentence` makes the fact's evidence the sentence
holding the most of the question's content terms (`QuestionAnalysis.terms`: the act's words,
the participants' names left out, since every sentence of the fact names them) and its chunk
the fact's first; a tie keeps the earlier sentence, so a fact stated once, or a question
whose terms no sentence holds, reads as before.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from storygraph.models import Fact
from storygraph.text.language import is_japanese_text
from storygraph.text.terms import content_terms


def terms_held(sentence: str, terms: Collection[str]) -> int:
    """How many of the question's `terms` the sentence holds (compared in the sentence's own
    language: an English question brought into Japanese holds Japanese terms)."""
    language = "ja" if is_japanese_text(sentence) else "en"
    return len(set(content_terms(sentence, language)).intersection(terms))


def nearest_sentence(fact: Fact, terms: Collection[str]) -> Fact:
    """`fact` read by its sentence nearest the question (module doc); the same fact when it has
    one sentence, or none holds more of `terms` than its first."""
    if not terms or len({s for s in fact.sentences if s}) < 2:
        return fact
    wanted = frozenset(terms)
    best, best_held = None, 0
    for index, sentence in enumerate(fact.sentences):
        held = terms_held(sentence, wanted) if sentence else 0
        if held > best_held:
            best, best_held = index, held
    if best is None or fact.sentences[best] == fact.evidence:
        return fact
    order = [best, *(i for i in range(len(fact.chunk_ids)) if i != best)]
    return replace(
        fact,
        chunk_ids=[fact.chunk_ids[i] for i in order],
        sentences=[fact.sentences[i] for i in order],
        evidence=fact.sentences[best],
    )
