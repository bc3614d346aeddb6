"""A saved run reads the same plain and gzip-compressed (the committed pool, eval/pool/)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from storygraph.evaluation.saved_runs import read_run

RUN = {"model": "m", "questions": [{"id": "a:1", "answer": "猿です。[1]", "supported": True}]}


def test_plain_and_compressed_runs_read_the_same(tmp_path: Path) -> None:
    plain = tmp_path / "run.json"
    plain.write_text(json.dumps(RUN, ensure_ascii=False), encoding="utf-8")
    packed = tmp_path / "run.json.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert read_run(plain) == RUN
    assert read_run(packed) == RUN


def test_a_file_that_is_not_a_run_is_named(tmp_path: Path) -> None:
    other = tmp_path / "questions.json"
    other.write_text(json.dumps([{"id": "a:1"}]), encoding="utf-8")
    with pytest.raises(ValueError, match="not a saved eval-e2e run"):
        read_run(other)
