"""The prompts' worked examples are made up: no sentence and no name of theirs comes from a
story we ship or evaluate on (../shared/stories). The extraction examples were 桃太郎's opening,
and their triples were gold answers of our own eval sets (おばあさん PICKS_UP 桃 answers
「川で桃を拾ったのは誰？」), so a model could score by copying the prompt
(docs/ISSUES.md#prompt-examples)."""

from __future__ import annotations

import re

import pytest

from storygraph.ingest.triple_lines import triple_prompt
from storygraph.prompt_files import PROMPTS_DIR, load_prompt
from tests.helpers.stories import story_files

needs_stories = pytest.mark.usefixtures("shared_dir")  # fails, never skips, without it
MIN_SENTENCE = 12
_TYPED = r"\s*\([A-Za-z]+\)"
_TRIPLE = re.compile(rf"^(?P<s>.+?){_TYPED}\s*\|\s*[A-Z_]+\s*\|\s*(?P<o>.+?){_TYPED}$")
_ARROW = re.compile(r"(?:→|->)\s*(?P<s>[^\s\"].*?)\s+-\[[A-Z_]+\]->\s+(?P<o>.+)$")
_SENTENCE_END = re.compile(r"(?<=[。！？.!?])")


def _stories() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in story_files("*/*.txt"))


def example_names() -> set[str]:
    """The entity names of the extraction prompts' example triples."""
    names: set[str] = set()
    for language in ("ja", "en"):
        for line in triple_prompt(language).example_triples.splitlines():
            match = _TRIPLE.match(line.strip())
            assert match, f"an example triple that does not parse: {line!r}"
            names |= {match["s"], match["o"]}
        for line in load_prompt(f"extraction_{language}").splitlines():
            match = _ARROW.search(line)
            if match:
                names |= {match["s"], match["o"]}
    return names


def prompt_sentences() -> set[str]:
    """Every line of every prompt of 12 characters or more, and each sentence in such a line."""
    found: set[str] = set()
    for path in sorted(PROMPTS_DIR.glob("*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            line = re.sub(r"^\[\d+\]\s*", "", line.strip())  # a numbered source's mark
            pieces = [line, *(s.strip("　 「」") for s in _SENTENCE_END.split(line))]
            found |= {p for p in pieces if len(p) >= MIN_SENTENCE}
    return found


def _mentions(text: str, name: str) -> bool:
    if name.isascii():  # an English name counts on word boundaries ("Eel" is not in "feel")
        return re.search(rf"\b{re.escape(name)}\b", text, re.IGNORECASE) is not None
    return name in text


def test_the_examples_are_parsed() -> None:
    names = example_names()
    assert {"ごんぞう", "岩見峠", "Old Potter", "Misty Pass"} <= names, names
    assert len(prompt_sentences()) > 20


@needs_stories
def test_no_example_name_is_a_story_name() -> None:
    stories = _stories()
    shared = sorted(n for n in example_names() if _mentions(stories, n))
    assert shared == [], f"prompt examples use names from ../shared/stories: {shared}"


@needs_stories
def test_no_prompt_sentence_is_a_story_sentence() -> None:
    stories = _stories()
    shared = sorted(s for s in prompt_sentences() if s in stories)
    assert shared == [], f"prompt lines copied from ../shared/stories: {shared}"


@needs_stories
def test_the_name_check_catches_the_former_examples_names() -> None:
    """The check can fail: the former examples' names (桃太郎's opening, an Aesop fable) are
    found in the stories, and a short English name only on word boundaries."""
    stories = _stories()
    former = ["おばあさん", "桃", "一寸法師", "鬼が島", "Old Man", "Fox", "Hare"]
    assert [n for n in former if not _mentions(stories, n)] == []
    assert not _mentions("I feel well", "Eel")
