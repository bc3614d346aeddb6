"""A library of stories in one store (issue #28): the same name in two stories is two entities,
and a question is answered only from its scope (qa/scope/scope.py), on a real embedded store with
the
scripted model at the model boundary."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from storygraph.cli import main
from storygraph.errors import StoryGraphError
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.retrieval.retrieval import ModeRetriever
from storygraph.qa.scope.per_story import misplaced_citations, split_by_story, story_head
from storygraph.services import Services, build_services
from storygraph.settings import Settings
from tests.helpers.scripted_logic import Script
from tests.helpers.scripted_model import ScriptedChatModel

TRIPLES = (
    ("old man", "Character", "GOES_TO", "mountain", "Place"),
    ("old man", "Character", "FINDS", "Momotaro", "Character"),
    ("old man", "Character", "HAS", "lump", "Object"),
)
# Files whose names name nothing a question says (their words would name the story too:
# qa/question/story_titles.py, tested in test_library_titles.py).
PEACH = "The old man went to the mountain.\nThe old man found Momotaro.\n"
LUMP = "The old man went to the mountain.\nThe old man had a lump.\n"


@pytest.fixture
def library(tmp_path: Path) -> Iterator[tuple[Services, str, str]]:
    settings = Settings(data_dir=tmp_path / "data", chunk_size=40, chunk_overlap=0)
    services = build_services(settings, llm=ScriptedChatModel(script=Script(triples=TRIPLES)))
    ids = []
    for name, text in (("story_a.txt", PEACH), ("story_b.txt", LUMP)):
        report = services.ingestor().ingest_bytes(name, text.encode("utf-8"))
        assert report.status == "added", report.message
        ids.append(report.document_id)
    yield services, ids[0], ids[1]
    services.close()


def _documents(answer) -> set[str]:
    return {c.document_name for c in answer.citations if c.document_name}


def test_a_shared_name_is_one_entity_per_story(library: tuple[Services, str, str]) -> None:
    services, peach, lump = library
    rows = [r for r in services.store.entity_names() if r["norm"] == "old man"]
    assert sorted(r["document_id"] for r in rows) == sorted([peach, lump])
    name = rows[0]["id"]
    facts = services.store.retrieve("onehop", [name])  # no scope: both stories
    assert {f.type for f in facts} == {"GOES_TO", "FINDS", "HAS"}
    goes = next(f for f in facts if f.type == "GOES_TO")
    assert {c.partition(":")[0] for c in goes.chunk_ids} == {peach, lump}


def test_a_name_only_one_story_has_scopes_the_question(
    library: tuple[Services, str, str],
) -> None:
    services, peach, _ = library
    answer = services.qa().ask(
        "Where did Momotaro's old man go?", QAOptions(no_llm=True, mode="onehop")
    )
    entities = next(s for s in answer.steps if s.name == "entities")
    assert entities.detail["stories"] == [peach]
    assert answer.citations and _documents(answer) == {"story_a.txt"}
    assert split_by_story(answer.answer)[0][0] == "story_a.txt"
    assert all(f.type != "HAS" for f in answer.facts)


def test_a_chosen_story_is_the_only_source(
    library: tuple[Services, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    services, peach, lump = library
    question = "What did the old man have?"
    only_lump = services.qa().ask(question, QAOptions(no_llm=True, stories=(lump,)))
    assert only_lump.citations and _documents(only_lump) == {"story_b.txt"}
    assert any(f.type == "HAS" for f in only_lump.facts)
    only_peach = services.qa().ask(question, QAOptions(no_llm=True, stories=(peach,)))
    assert _documents(only_peach) <= {"story_a.txt"}
    assert all(f.type != "HAS" for f in only_peach.facts)
    # a shared name asked of every story is answered per story: each part under its story's
    # name, each citation under its own story's part, and the warnings name the stories
    both = services.qa().ask(question, QAOptions(no_llm=True))
    entities = next(s for s in both.steps if s.name == "entities")
    assert sorted(entities.detail["stories"]) == sorted([peach, lump])
    assert "2 stories have its names" in entities.detail["scope"]
    assert _documents(both) == {"story_a.txt", "story_b.txt"}
    parts = split_by_story(both.answer)
    names = [name or "" for name, _ in parts]
    assert sorted(names) == ["story_a.txt", "story_b.txt"]
    for name, part in parts:
        marks = {int(n) for n in re.findall(r"\[(\d+)\]", part)}
        assert marks and {c.document_name for c in both.citations if c.number in marks} == {name}
    numbers = [c.number for c in both.citations]
    assert numbers == list(range(1, len(numbers) + 1))  # numbered on across the parts
    assert misplaced_citations(both.answer, both.citations, "story_a.txt") == []
    said = "2 stories fit this question equally; the answer is written for each of them"
    assert any(w.startswith(said) and "story_b.txt" in w for w in both.warnings)
    retrievals = [s for s in both.steps if s.name == "retrieval"]
    assert len(retrievals) == 2  # one retrieval per story
    # streamed: each story's head line comes with its part's first piece, after its retrieval
    pieces: list[str] = []
    search = ModeRetriever.search

    def searching(self: ModeRetriever, *args: Any, **kwargs: Any) -> Any:
        pieces.append("(retrieval)")
        return search(self, *args, **kwargs)

    monkeypatch.setattr(ModeRetriever, "search", searching)
    services.qa().ask(question, QAOptions(no_llm=True), on_token=pieces.append)
    heads = {story_head(n, japanese=False) for n in names}
    shape = [
        "head" if p.strip() in heads else p
        for p in pieces
        if p == "(retrieval)" or p.strip() in heads
    ]
    assert shape == ["(retrieval)", "head", "(retrieval)", "head"], pieces


def test_the_cli_story_option_names_unknown_stories(
    cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ask", "Who?", "--no-llm", "--story", "no-such-story"]) != 0
    assert "no story called 'no-such-story'" in capsys.readouterr().err


def test_merging_two_stories_entities_is_recorded_and_undoable(
    library: tuple[Services, str, str],
) -> None:
    from storygraph.library import identity
    from storygraph.library.entity_pages import EntityPages

    services, peach, lump = library
    name = next(r["id"] for r in services.store.entity_names() if r["norm"] == "old man")
    pages = EntityPages(services.store)
    with pytest.raises(StoryGraphError, match="2 stories"):
        identity.merge(services.store, name, f"{name}@story_b.txt")
    change = identity.merge(services.store, f"{name}@story_a.txt", f"{name}@story_b.txt")
    assert change.changed and change.keys == (f"{peach}:{name}", f"{lump}:{name}")
    assert not identity.merge(services.store, f"{name}@story_a.txt", f"{name}@story_b.txt").changed
    page = pages.page(f"{name}@story_a.txt")
    assert page is not None and page.twins == [f"{lump}:{name}"]
    assert page.history[-1].kind == "merged" and "story_b.txt" in page.history[-1].changes[0]
    # a question scoped to peach's Momotaro now starts at lump's old man too: that is the act
    answer = services.qa().ask("What did Momotaro's old man have?", QAOptions(no_llm=True))
    assert any(f.type == "HAS" for f in answer.facts)
    # undone: the link goes, both keep their own relations, the history says so
    assert identity.unmerge(services.store, f"{name}@story_b.txt", f"{name}@story_a.txt").changed
    page = pages.page(f"{name}@story_a.txt")
    assert page is not None and page.twins == [] and page.history[-1].kind == "unmerged"
    assert {r.type for r in page.relations} == {"GOES_TO", "FINDS"}
    answer = services.qa().ask("What did Momotaro's old man have?", QAOptions(no_llm=True))
    assert all(f.type != "HAS" for f in answer.facts)


def test_a_question_naming_no_one_in_a_library_too_big_to_read_is_told_so(
    library: tuple[Services, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from storygraph.qa.retrieval import passages

    services, _, _ = library
    question = "Where did he go?"
    read = services.qa().ask(question, QAOptions(no_llm=True))
    assert not read.entities and read.citations  # both stories read by sentence search
    assert not any("sentence search reads at most" in w for w in read.warnings)
    monkeypatch.setattr(passages, "MAX_SEARCHED_STORIES", 1)
    unread = services.qa().ask(question, QAOptions(no_llm=True))
    assert not unread.citations
    said = "sentence search reads at most 1 stories for a question that names no one, and 2"
    assert any(w.startswith(said) for w in unread.warnings), unread.warnings


def test_a_question_naming_no_one_is_answered_per_story_its_sources_came_from(
    library: tuple[Services, str, str],
) -> None:
    services, _, _ = library
    answer = services.qa().ask("Where did he go?", QAOptions(no_llm=True))
    assert not answer.entities and _documents(answer) == {"story_a.txt", "story_b.txt"}
    parts = split_by_story(answer.answer)
    assert sorted(name or "" for name, _ in parts) == ["story_a.txt", "story_b.txt"]
    for own in ("story_a.txt", "story_b.txt"):  # every citation under its own story's name
        assert misplaced_citations(answer.answer, answer.citations, own) == []
    said = "The question's names do not say which story it is about; its sources came from 2"
    assert any(w.startswith(said) for w in answer.warnings), answer.warnings


def test_a_question_only_an_ordinary_word_scopes_names_its_story(
    library: tuple[Services, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    services, _, lump = library
    question = "What was the lump?"  # 'lump': a word, an entity of story_b.txt's graph only
    answer = services.qa().ask(question, QAOptions(no_llm=True))
    entities = next(s for s in answer.steps if s.name == "entities")
    assert entities.detail["stories"] == [lump] and "ordinary words" in entities.detail["scope"]
    assert answer.citations and _documents(answer) == {"story_b.txt"}
    head = story_head("story_b.txt", japanese=False)
    assert answer.answer.startswith(head + "\n")
    assert any("its sources are from story_b.txt" in w for w in answer.warnings)
    pieces: list[str] = []
    services.qa().ask(question, QAOptions(no_llm=True), on_token=pieces.append)
    assert pieces[0] == head + "\n" and "".join(pieces) == answer.answer  # streamed first
    # a proper name settles the story: the answer is under that story's head line, so the
    # reader sees which of the library's stories it is about
    named = services.qa().ask("What did Momotaro's old man have?", QAOptions(no_llm=True))
    assert named.answer.startswith(story_head("story_a.txt", japanese=False) + "\n")
    assert misplaced_citations(named.answer, named.citations, "story_b.txt") == []
    # the story the user picked is the answer's: no head line
    picked = services.qa().ask(question, QAOptions(no_llm=True, stories=(lump,)))
    assert picked.citations and split_by_story(picked.answer)[0][0] is None


def test_a_single_story_store_never_labels_its_answers(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", chunk_size=40, chunk_overlap=0)
    services = build_services(settings, llm=ScriptedChatModel(script=Script(triples=TRIPLES)))
    try:
        report = services.ingestor().ingest_bytes("story_b.txt", LUMP.encode("utf-8"))
        assert report.status == "added", report.message
        for question in ("What was the lump?", "Where did he go?"):
            answer = services.qa().ask(question, QAOptions(no_llm=True))
            assert answer.citations and split_by_story(answer.answer)[0][0] is None
            assert not any("do not say which story" in w for w in answer.warnings)
    finally:
        services.close()
