"""The README's three example questions, asked of the REAL embedded model: each gets its answer.

The README tells a newcomer to load the sample story and ask three questions; this test reads
those questions and the name each answer must contain from the README's own table (between
the `readme-examples` markers), so the README cannot promise what the default does not do.
Slow like tests/slow/test_embedded_model.py; the model comes from tests/slow/conftest.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from storygraph.qa.generation.answer import UNKNOWN
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.services import Services

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SAMPLE = ROOT / "storygraph" / "samples" / "momotaro_kusuyama.txt"
_TABLE = re.compile(r"<!-- readme-examples:start -->(.*?)<!-- readme-examples:end -->", re.S)
_ROW = re.compile(r"^\|\s*「(?P<question>[^」]+)」\s*\|\s*(?P<answer>[^|]+?)\s*\|", re.M)


def readme_examples() -> list[tuple[str, str]]:
    """(question, the name its answer must contain) per row of the README's example table."""
    table = _TABLE.search(README.read_text(encoding="utf-8"))
    assert table, "README.md has no readme-examples table"
    rows = [(m["question"], m["answer"]) for m in _ROW.finditer(table.group(1))]
    assert len(rows) == 3, rows
    return rows


@pytest.fixture(scope="module")
def sample(services: Services) -> Services:
    """The embedded model's services (tests/slow/conftest.py) with the sample story read."""
    report = services.ingestor().ingest_bytes(SAMPLE.name, SAMPLE.read_bytes())
    assert report.status == "added", report.message
    return services


@pytest.mark.parametrize(("question", "expected"), readme_examples())
def test_the_readme_example_is_answered_right(
    sample: Services, question: str, expected: str
) -> None:
    answer = sample.qa().ask(question, QAOptions.from_settings(sample.settings))
    assert not answer.answer.startswith(UNKNOWN["ja"]), answer.to_json()
    assert expected in answer.answer, answer.to_json()
    assert answer.citations, answer.to_json()
