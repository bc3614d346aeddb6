"""The question, analysed once: everything later stages need, computed at the start and passed
down (retrieval, scoring and answering never detect its language again).

`QuestionAnalysis` holds the language, the start entities (and how each was found), the question
type with each start entity's preferred edge direction, the relation-word stems the question
names (entity names masked, so 大将 inside 鬼の大将 does not count), the model's relation-type
pick when one was asked for, the question's content terms for lexical overlap, and its folded
forms (`folded`, `unquoted`), and, for a question in another language than its stories, the
question brought into theirs (`translation`, storygraph.qa.question.translation: the original stays
`question`, the language the answer is written in). What its words tell the support check (the
kind of answer asked for, whose name, the question word's cue, a choice, a reason or manner:
storygraph.qa.question.question_words) are properties computed when the check first asks.
`QuestionReader` is the stage that makes it: the graph's names, the stories' languages and, when
the entity finder picks relation types, the graph's types, read from the store.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from storygraph.models import ResolvedEntity
from storygraph.qa.question.entities import EntityFinder, dictionary_match
from storygraph.qa.question.question_type import QuestionType, detect_question_type
from storygraph.qa.question.question_words import (
    CHOICE,
    REASON_OR_MANNER,
    asked_kind,
    cloze_cue,
    name_owner,
)
from storygraph.qa.question.relation_words import mask_names, question_stems, related_stems
from storygraph.qa.question.specific_names import (
    common_names,
    english_common,
    named_in_stories,
    story_capitals,
)
from storygraph.qa.question.story_titles import titled
from storygraph.qa.question.translation import NO_TRANSLATOR, QuestionTranslator, Translation
from storygraph.qa.scope.scope import Scope, names_in_scope, narrow
from storygraph.store import GraphStore
from storygraph.store.reading import EVERYTHING, Reading
from storygraph.text.language import detect_language
from storygraph.text.name_index import name_index
from storygraph.text.normalize import normalize_name
from storygraph.text.terms import content_terms, english_words, passage_terms

_QUOTED = re.compile(r"「[^」]*」|『[^』]*』|\"[^\"]*\"")


@dataclass(frozen=True)
class QuestionAnalysis:
    question: str
    language: str
    entities: tuple[ResolvedEntity, ...]
    qtype: QuestionType
    stems: frozenset[str]
    """Relation stems the question's words name (DEFEAT for 倒した / defeated)."""
    related: frozenset[str]
    """`stems` widened to their fields of meaning (companions → meeting, following)."""
    terms: tuple[str, ...]
    """Content terms outside the entity names: English word stems, Japanese kanji runs and
    kanji bigrams (what a sentence that answers the question probably shares with it)."""
    relation_pick: tuple[str, ...] | None = None
    """The model's relation-type pick, when the entity finder was asked for one."""
    warnings: tuple[str, ...] = field(default_factory=tuple)
    scope: Scope = field(default_factory=Scope)
    """The stories the answer may cite and the start entities' keys (storygraph.qa.scope.scope)."""
    relation_pick_asked: bool = False
    """The entity finder was asked for the relation-type pick (even if that call failed):
    retrieval then makes no pick call of its own."""
    graph_names: tuple[str, ...] = ()
    """The graph's entity names (every story's: the answer checks read them all)."""
    name_rows: Sequence[dict[str, Any]] = ()
    """The graph's entity rows (id, norm, type) behind `graph_names`, for the support check:
    the store's own list (`GraphStore.entity_names` returns one list until the graph changes),
    so what is built per names list (the support checker) is built once, not per question."""
    qtype_by_mention: QuestionType | None = None
    """The question's type read with the mentions (not the graph names) of the entities
    `qtype` gives no role, when there are any (Momotaro → 桃太郎: the role of the name as the
    question writes it); the support check reads the roles from it."""
    translation: Translation | None = None
    """The question in its stories' language when that is not the question's (None: not
    needed, or no translator could make it; storygraph.qa.question.translation)."""
    predicate: str = ""
    """The verb the question asks about as written (引き出した), when its structure was read
    (storygraph.qa.question.question_structure; the support check reads it): "" for the question's
    words
    as a whole."""
    asked_case: str = ""
    """The case particle on the question word (何で: で), when the question's structure was
    read; "" otherwise."""
    translated_for: tuple[str, ...] = ()
    """The stories `translation` is read for (empty: every story in scope). In a library of
    both languages a question may be brought into the other language for that language's
    stories only (`QuestionReader.read`); a part of the answer about a story in the question's
    own language reads it as asked (`for_stories`)."""

    @property
    def ids(self) -> list[str]:
        return [e.node_id for e in self.entities]

    @property
    def reply_language(self) -> str:
        """The language fixed replies and prompts are written in: "ja", else "en"."""
        return "ja" if self.language == "ja" else "en"

    @cached_property
    def folded(self) -> str:
        """The question normalised as names are (storygraph.text.normalize.normalize_name)."""
        return normalize_name(self.question)

    def index_terms(self, language: str) -> list[str]:
        """The question's terms as sentence search indexes a story in `language`
        (storygraph.text.terms.passage_terms), read once per language."""
        return list(self._index_terms["ja" if language == "ja" else "en"])

    def translated_forms(self, language: str) -> tuple[tuple[tuple[str, ...], ...], ...]:
        """Each word of the question's translation into `language` as its search forms, each
        form as the terms sentence search indexes it by (passage_terms): one word's forms
        are one word's, not several words' (passages.bm25's `synonyms`). Empty when the
        question has no translation into `language`."""
        translation = self.translation
        if translation is None or translation.language != ("ja" if language == "ja" else "en"):
            return ()
        words = []
        for word in translation.words:
            forms = tuple(
                terms
                for form in dict.fromkeys(word.search or word.forms)
                if (terms := tuple(passage_terms(form, translation.language)))
            )
            if forms:
                words.append(forms)
        return tuple(words)

    @cached_property
    def _index_terms(self) -> dict[str, tuple[str, ...]]:
        terms = {lang: tuple(passage_terms(self.question, lang)) for lang in ("ja", "en")}
        if self.translation is not None:
            lang = self.translation.language
            terms[lang] += tuple(passage_terms(self.translation.search_text, lang))
        return terms

    @cached_property
    def qualifiers(self) -> frozenset[str]:
        """The entities the question names only as the owner of another one it names
        (桃太郎 in 「桃太郎のおじいさん」, Momotaro in "Momotaro's grandfather"): they say which
        one is meant, not who takes part, so a sentence need not name them."""
        owners: set[str] = set()
        for a in self.entities:
            for b in self.entities:
                if a.node_id == b.node_id or not a.mention or not b.mention:
                    continue
                owner, owned = normalize_name(a.mention), normalize_name(b.mention)
                if f"{owner}の{owned}" in self.folded or f"{owner}'s {owned}" in self.folded:
                    owners.add(a.node_id)
        return frozenset(owners)

    @cached_property
    def words(self) -> tuple[str, ...]:
        """The question's English content words, stemmed (storygraph.text.terms.english_words)."""
        return tuple(english_words(self.question))

    @cached_property
    def lowered(self) -> str:
        """The question in lower case (relation words are matched in it)."""
        return self.question.lower()

    @cached_property
    def unquoted(self) -> str:
        """`folded` without what the question quotes (「一寸法師」: a title, not a participant)."""
        return normalize_name(_QUOTED.sub(" ", self.question))

    @cached_property
    def quoted(self) -> tuple[str, ...]:
        """What the question quotes, normalised, without its brackets (「人間のいちばんだいじな
        たから」, a title, a speech)."""
        found = (normalize_name(q[1:-1]) for q in _QUOTED.findall(self.question))
        return tuple(q for q in found if q)

    # What the question's words tell the support check (storygraph.qa.question.question_words),
    # read when it first asks: nothing here runs before the model.

    @cached_property
    def asked_kind(self) -> str:
        """The kind of answer the question asks for: "name", else ""."""
        return asked_kind(self.question)

    @cached_property
    def name_owner(self) -> str:
        """The noun a Japanese question asks the name of (飼犬 of 飼犬の名前は), "" for none."""
        return name_owner(self.question)

    @cached_property
    def cloze_cue(self) -> tuple[str, str] | None:
        """The question word's particle and the first kanji after it, the participants left
        out (から, 流 of 「桃はどこから流れて来た？」), None for none."""
        return cloze_cue(self.question, self.entities)

    @cached_property
    def offers_choice(self) -> bool:
        """Does the question offer its answers (重いつづらと軽いつづらのどちら, which … or …)?"""
        return CHOICE.search(self.question) is not None

    @cached_property
    def asks_reason_or_manner(self) -> bool:
        """Does the question ask why or how (なぜ, どうやって: no noun of the act)?"""
        return REASON_OR_MANNER.search(self.question) is not None


def analyse(
    question: str,
    names: Sequence[dict[str, Any]],
    finder: EntityFinder,
    callbacks: list[Any],
    *,
    relation_types: Sequence[str] | None = None,
    start_entities: Sequence[str] | None = None,
    stories: Sequence[str] = (),
    story_languages: Sequence[str] = (),
    translator: QuestionTranslator | None = None,
    titles: Mapping[str, str] | None = None,
    spelling: Callable[[Sequence[str]], Mapping[str, frozenset[str]]] | None = None,
    every_name: Sequence[dict[str, Any]] | None = None,
) -> QuestionAnalysis:
    """Analyse a question once. `start_entities` skips entity finding (the eval's gold);
    `stories`: the document ids the user chose (empty: every story);
    `relation_types` (the graph's) asks the finder to pick the ones that fit;
    `story_languages`: the languages of the stories in scope; when one differs from the
    question's, `translator` brings the question into it (None: no translator installed, a
    named fallback); `titles`: the file names of a library's stories by document id (their
    words name a story too: qa/question/story_titles.py; None or one story: not read); `spelling`
    gives the capitalised words of stories by document id, which make an English word a name
    in a story that writes it so (qa/question/specific_names.py; None: not read);
    `every_name`: the graph's every name row when `names` are fewer (the names read so far,
    storygraph.store.reading): only `names` are found, but the answer's checks know every
    name, so an answer naming one written later is still caught as unsupported."""
    question = question.strip()
    every_name = names if every_name is None else every_name
    names = names_in_scope(names, stories)
    warnings: list[str] = []
    pick: tuple[str, ...] | None = None
    language = detect_language(question)
    translation = _translate(question, language, story_languages, translator, callbacks, warnings)
    if start_entities:
        entities = tuple(ResolvedEntity(n, n, "given") for n in start_entities)
    else:
        finding = finder.find(question, names, callbacks, relation_types)
        entities = tuple(finding.entities)
        warnings.extend(finding.warnings)
        if finding.relation_types is not None:
            pick = tuple(finding.relation_types)
        if translation is not None:
            entities += translated_names(translation, names, entities)
    ids = [e.node_id for e in entities]
    mentions = [*ids, *(e.mention for e in entities)]
    unnamed = mask_names(question, mentions)
    stems = frozenset(question_stems(unnamed))
    terms = content_terms(unnamed, language)
    if translation is not None:
        # the story's words for the question's, so the scope can be narrowed by them too
        terms += tuple(
            t for t in content_terms(translation.search_text, translation.language)
            if t not in terms
        )  # fmt: skip
    library = bool(titles) and len(titles or {}) > 1
    common = common_names(question, entities, translated_words(translation))
    named = titled(question, titles or {}) if library else None
    written = written_as_names(common, names, spelling) if library and spelling else None
    scope = narrow(ids, names, stories, terms, common, named, written)
    if entities and named and scope.documents and not scope.keys:
        # the story the question names by its title holds none of the names found (in other
        # stories): started from, they would bring in those stories' relations
        entities, ids = (), []
    qtype = detect_question_type(question, ids, language=language)
    unroled = [e.mention for e in entities if e.node_id not in qtype.roles and e.mention]
    return QuestionAnalysis(
        question=question,
        language=language,
        entities=entities,
        qtype=qtype,
        qtype_by_mention=(
            detect_question_type(question, unroled, language=language) if unroled else None
        ),
        stems=stems,
        related=frozenset(related_stems(set(stems))),
        terms=terms,
        relation_pick=pick,
        warnings=tuple(warnings),
        scope=scope,
        relation_pick_asked=relation_types is not None and not start_entities,
        graph_names=tuple(str(r["id"]) for r in every_name),
        name_rows=every_name,
        translation=translation,
    )


def scope_languages(analysis: QuestionAnalysis, documents: Sequence[Any]) -> list[str]:
    """The languages of the stories a question's scope holds it to (its decided stories, or
    the ones it ties), [] when it is not held to some of them (every story)."""
    held = set(analysis.scope.documents) | set(analysis.scope.tied)
    return [d.language for d in documents if d.id in held] if held else []


def for_stories(analysis: QuestionAnalysis, stories: Sequence[str]) -> QuestionAnalysis:
    """The analysis an answer about `stories` reads: without its translation when that is read
    for other stories only (`translated_for`: a fable in the question's own language is answered
    as asked, not in the translation's language)."""
    if not analysis.translated_for or analysis.translation is None:
        return analysis
    if set(stories) & set(analysis.translated_for):
        return analysis
    return replace(analysis, translation=None, translated_for=())


def within(analysis: QuestionAnalysis, scope: Scope) -> QuestionAnalysis:
    """The analysis one story's part of a library answer reads (a tied story's, or the story
    whose sentences lead a tie: qa/scope/per_story.py, qa/scope/story_lead.py): held to `scope`,
    its start
    entities only those the scope's keys hold (none when it has no keys: without keys the
    names would start retrieval in every story), and its translation only when read for those
    stories (`for_stories`). A name another story's graph holds is no name of this story:
    kept, 名前 (an entity of かちかち山) had the support check of 花咲爺's part ask for a
    sentence naming 白 beside 名前, and the answer one story alone confirms was withheld."""
    keys = set(scope.keys)
    held = {str(row["id"]) for row in analysis.name_rows if row.get("key") in keys}
    entities = tuple(e for e in analysis.entities if e.node_id in held)
    return for_stories(replace(analysis, scope=scope, entities=entities), scope.documents)


def held_by_other_language(
    analysis: QuestionAnalysis, names: Sequence[dict[str, Any]], documents: Sequence[Any]
) -> list[Any]:
    """In a library of both languages, the stories of the other language a question should be
    read for through its translation: it found names, ordinary words only (`Scope.undecided`,
    `Scope.ordinary`), and every one of them is a name of the other language's stories, none of
    its own language's ("the raccoon dog", "the old woman" found as 犬, 女 in Japanese folk tales
    beside English fables); [] otherwise."""
    own = "ja" if analysis.language == "ja" else "en"
    others = [d for d in documents if ("ja" if d.language == "ja" else "en") != own]
    if not others or len(others) == len(documents) or analysis.translation is not None:
        return []
    if not (analysis.scope.undecided or analysis.scope.ordinary):
        return []
    home = {d.id for d in documents} - {d.id for d in others}
    found = set(analysis.ids)
    if not found or any(r["id"] in found and r.get("document_id") in home for r in names):
        # naming no one, it is searched as asked: the two languages' word scores do not
        # compare (a translation's many forms outscored the English story's own words)
        return []
    return others


def same_stories(one: Scope, other: Scope) -> bool:
    """Do two scopes hold a question to the same stories in the same way (decided, tied,
    tellings of one tale, undecided)?"""
    return (
        set(one.documents) == set(other.documents)
        and set(one.tied) == set(other.tied)
        and set(one.tellings) == set(other.tellings)
        and one.undecided == other.undecided
    )


def written_as_names(
    common: frozenset[str],
    names: Sequence[dict[str, Any]],
    spelling: Callable[[Sequence[str]], Mapping[str, frozenset[str]]],
) -> dict[str, frozenset[str]]:
    """Per story, the question's English ordinary words that story writes as names (read only
    for the stories holding such a word)."""
    english = set(english_common(common))
    if not english:
        return {}
    holders = sorted({str(r.get("document_id") or "") for r in names if r["id"] in english})
    return named_in_stories(english, names, spelling([h for h in holders if h]))


def translation_target(language: str, story_languages: Sequence[str]) -> str | None:
    """The language a question must be brought into: the stories' in scope when none of them is
    written in the question's ("ja" for an English question over Japanese stories, "en" for a
    Japanese one over English stories); None when one is (a library of both: the question is
    searched as asked, so a story in its own language is not crowded out by the other
    language's sentences its translation would match)."""
    languages = {("ja" if lang == "ja" else "en") for lang in story_languages if lang}
    own = "ja" if language == "ja" else "en"
    if not languages or own in languages:
        return None
    return next(iter(sorted(languages)))


def _translate(
    question: str,
    language: str,
    story_languages: Sequence[str],
    translator: QuestionTranslator | None,
    callbacks: list[Any],
    warnings: list[str],
) -> Translation | None:
    target = translation_target(language, story_languages)
    if target is None:
        return None
    if translator is None:
        warnings.append(NO_TRANSLATOR)
        return None
    source = "ja" if language == "ja" else "en"
    try:
        return translator.translate(question, source, target, callbacks)
    except Exception as exc:  # noqa: BLE001 - a model fault: the question is searched as asked
        warnings.append(
            f"the question's translation ({translator.name}) failed ({type(exc).__name__}: {exc})"[
                :300
            ]
            + "; searched with the question as asked"
        )
        return None


def translated_words(translation: Translation | None) -> dict[str, str]:
    """A dictionary translation's noun forms → the question's word each translates (the first
    word giving it); empty for none."""
    words: dict[str, str] = {}
    for word in translation.words if translation is not None else ():
        if word.noun:
            for form in word.forms:
                words.setdefault(form, word.source)
    return words


def translated_names(
    translation: Translation, names: Sequence[dict[str, Any]], found: Sequence[ResolvedEntity]
) -> tuple[ResolvedEntity, ...]:
    """Graph names the translation holds, besides the ones already found; how each was found:
    "translation". A translated noun's form that is a name, exactly after normalisation
    (monkey → 猿, raccoon dog → たぬき); a name found in the model's sentence as the dictionary
    match finds it in a question (storygraph.qa.question.entities.dictionary_match)."""
    index = name_index(names)
    taken = {e.node_id for e in found}
    added: dict[str, ResolvedEntity] = {}
    matches = [
        (form, node_id)
        for form in translation.names
        for node_id in index.by_norm.get(normalize_name(form), ())
    ]
    if translation.sentence:
        matches += [(m.mention, m.node_id) for m in dictionary_match(translation.sentence, names)]
    for form, node_id in matches:
        if node_id not in taken and node_id not in added:
            added[node_id] = ResolvedEntity(form, node_id, "translation", 0.9)
    return tuple(added.values())


class QuestionReader:
    """The analysis stage: reads the graph's names (and, for a finder that picks relation
    types, the graph's types) from the store and analyses the question against them."""

    def __init__(
        self,
        store: GraphStore,
        finder: EntityFinder,
        *,
        pick_types: bool,
        stories: Sequence[str] = (),
        translator: QuestionTranslator | None = None,
        reading: Reading = EVERYTHING,
    ) -> None:
        self.store = store
        self.finder = finder
        self.reading = reading
        """How far the reader has read (storygraph.store.reading): the names of the entities
        first written past it are not read, so the question finds none of them (the answer's
        checks still know them: `analyse`'s `every_name`)."""
        self.translator = translator
        """Brings a question into its stories' language (storygraph.qa.question.translation)."""
        self.stories = tuple(stories)
        """The document ids the user chose (empty: every story; storygraph.qa.scope.scope)."""
        self.pick_types = pick_types
        """The finder's call also picks the relation types (a capable model, a +reltype mode:
        3 calls a question); not with given start entities, where no finder runs."""

    def read(
        self,
        question: str,
        callbacks: list[Any],
        *,
        start_entities: Sequence[str] | None = None,
    ) -> QuestionAnalysis:
        every_name = self.store.entity_names()
        names = self.reading.names(every_name)
        wants_pick = self.pick_types and not start_entities
        types = [t for t, _ in self.store.relation_types()] if wants_pick else None
        documents = [
            d for d in self.store.list_documents() if not self.stories or d.id in self.stories
        ]

        def analysed(languages: Sequence[str]) -> QuestionAnalysis:
            return analyse(
                question,
                names,
                self.finder,
                callbacks,
                relation_types=types,
                start_entities=start_entities,
                stories=self.stories,
                story_languages=languages,
                translator=self.translator,
                titles={d.id: d.name for d in documents},
                spelling=lambda ids: story_capitals(
                    {d.id: d.sha256 for d in documents if d.id in ids}, self.store.document_chunks
                ),
                every_name=every_name,
            )

        analysis = analysed([d.language for d in documents])
        others = held_by_other_language(analysis, names, documents)
        if others:
            # its names hold it to no story of its own language: the other language's stories
            # are searched through its translation (as a store of those stories alone would),
            # its own language's as asked (`for_stories`)
            translated = analysed([d.language for d in others])
            if translated.translation is not None:
                return replace(translated, translated_for=tuple(d.id for d in others))
            return analysis
        languages = scope_languages(analysis, documents)
        if analysis.translation is not None or not languages:
            return analysis
        if translation_target(analysis.language, languages) is None:
            return analysis
        # a library of both languages: the question's names put it in stories all written in
        # the other language (Kintaro → 金太郎), so it is brought into theirs as for a store of
        # those stories alone (docs/ISSUES.md#crosslang-translation); kept only if the translation's
        # words leave that decision as it was (a translated ordinary word, 翁 for "old man", must
        # not pick one story of those the question tied)
        translated = analysed(languages)
        return translated if same_stories(translated.scope, analysis.scope) else analysis
