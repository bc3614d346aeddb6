"""A per-story answer's marks and sources on a real embedded store (issue #28,
qa/scope/per_story.py), the small model scripted at the model boundary: a part that marks a later
source of its own story keeps its earlier, unmarked sources under its own head line (the
count put them in the part before: jaf:issunboshi:08), and a mark naming none of a part's
sources is dropped, not moved on into the next story's numbers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from storygraph.llm.factory import ModelInfo
from storygraph.qa.pipeline.engine import QAEngine
from storygraph.qa.pipeline.factory import build_engine
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.qa.scope.per_story import misplaced_citations, split_by_story
from storygraph.services import Services
from tests.helpers import scripted_logic
from tests.helpers.library import ingested_library
from tests.helpers.scripted_model import ScriptedChatModel

SMALL = ModelInfo("embedded", "scripted-small", capable=False)
TRIPLES = (("Momotaro", "Character", "GOES_TO", "Onigashima", "Place"),)
TEXT = "Momotaro went to Onigashima.\nThe sea was calm.\nThe Red Ogre kept the gate.\n"
STORIES = {"story_a.txt": TEXT, "story_b.txt": TEXT.replace("Red", "Blue")}


@pytest.fixture
def library(tmp_path: Path) -> Iterator[Services]:
    services, _ = ingested_library(tmp_path, STORIES, TRIPLES)
    yield services
    services.close()


def _guard(prompt: str) -> str:
    """The scripted small model's answer: the ogre of the numbered sentence that says who
    kept the gate, with that sentence's number."""
    asked = prompt.rsplit("Sentences:", 1)[-1]
    found = re.search(r"^\[(\d+)\] .*?The (\w+ Ogre) kept", asked, flags=re.MULTILINE)
    return f"The {found.group(2)}. [{found.group(1)}]" if found else "The story does not say."


def _unchecked(services: Services) -> QAEngine:
    """The app's engine without the support check: the marks the model writes are what is
    measured here, not what the check would show instead."""
    engine = build_engine(services.store, ScriptedChatModel(), SMALL)
    return QAEngine(lambda options: replace(engine.parts_for(options), verifier=None))


def test_a_part_marking_a_later_source_keeps_its_sources_under_its_own_name(
    library: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scripted_logic, "answer", _guard)
    engine = _unchecked(library)
    answer = engine.ask("Who kept the gate at Onigashima?", QAOptions())
    parts = split_by_story(answer.answer)
    assert sorted(name or "" for name, _ in parts) == sorted(STORIES)  # a tie: per story
    assert misplaced_citations(answer.answer, answer.citations, "another.txt") == []


def test_a_mark_naming_none_of_a_parts_sources_is_dropped(
    library: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scripted_logic, "answer", lambda _: "The Ogre. [1] [4]")
    engine = _unchecked(library)
    answer = engine.ask("Who kept the gate at Onigashima?", QAOptions())
    # each part has 3 sources: its [4] named the next part's first source once moved on
    assert misplaced_citations(answer.answer, answer.citations, "another.txt") == []
    assert [part.count("[") for _, part in split_by_story(answer.answer)] == [1, 1]
