"""eval/role_signals.py: the parse's roles read as verifier signals on saved runs (made-up
sentences; the fillers are what eval/role_replay.py records)."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from storygraph.qa.verify.evidence import Evidence

SCRIPT = Path(__file__).resolve().parents[2] / "eval" / "role_signals.py"


@pytest.fixture
def roles() -> Iterator[ModuleType]:
    spec = importlib.util.spec_from_file_location("role_signals", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    module.ROLES.clear()


def evidence(question: str, core: str, cited: tuple[str, ...] = ()) -> Evidence:
    return Evidence(question=question, answer=f"{core}. [1]", core=core, cited=cited)


def test_a_core_names_its_filler_alone_or_inside_a_copied_sentence(roles: ModuleType) -> None:
    assert roles.is_core("先生", "先生")
    assert roles.is_core("先生", "弟子はえらい絵の先生のところにつれていかれました")
    assert roles.is_core("woman", "the old woman")
    assert not roles.is_core("mother", "The fox told the bear to eat the two hens")
    assert not roles.is_core("王様", "家来")


def test_the_signals_say_whether_the_answer_fills_the_asked_slot(roles: ModuleType) -> None:
    asked = "Who did the miller give the sack to?"
    told = "The miller gave the sack to the baker."
    roles.ROLES[asked] = [{"filler": "baker", "sentence": told, "how": "frame"}]
    right = evidence(asked, "The baker", (told,))
    wrong = evidence(asked, "The smith", (told,))
    assert roles.role_read(right) == 1.0
    assert roles.role_cited(right) == 1.0
    assert roles.role_read(wrong) == 0.0
    assert roles.role_told(wrong) == 1.0
    # the filler's sentence is not among the cited ones: read, not cited
    elsewhere = evidence(asked, "The baker", ("The baker baked bread.",))
    assert roles.role_read(elsewhere) == 1.0
    assert roles.role_cited(elsewhere) == 0.0


def test_no_filler_or_no_such_question_reads_as_missing(roles: ModuleType) -> None:
    roles.ROLES["Who hid the key?"] = []
    roles.ROLES["Why did the fox run?"] = None
    assert roles.role_read(evidence("Who hid the key?", "The cat")) is None
    assert roles.role_told(evidence("Who hid the key?", "The cat")) == 0.0
    assert roles.role_read(evidence("Why did the fox run?", "It was afraid")) is None
    assert roles.role_told(evidence("Why did the fox run?", "It was afraid")) is None
    # a filler in another script than the answer (a question asked across languages)
    roles.ROLES["Who took the peach?"] = [
        {"filler": "猿", "sentence": "猿が桃を取った。", "how": "fact"}
    ]
    assert roles.role_read(evidence("Who took the peach?", "The monkey")) is None
