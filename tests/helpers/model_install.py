"""A stand-in for the embedded model that is "being installed" until a test says it is ready,
and the fixtures that build Services around it (the app and the pickup tests share them)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from storygraph.llm import model_files as mf
from storygraph.llm.embedded_server import EmbeddedServer
from storygraph.services import EmbeddedStarter, Services, build_services
from storygraph.settings import Settings

FAKE = Path(__file__).resolve().parent / "fake_openai_server.py"
REPLY = "stand-in model here"


def installed_model(data: Path) -> Path:
    """The embedded model as a verified install leaves it in `data`, without its 1.1 GB: a
    sparse file of the real size and the installer's sidecar vouching for it."""
    model = data / "models" / mf.MODEL_FILENAME
    model.parent.mkdir(parents=True)
    with model.open("wb") as fh:
        fh.truncate(mf.MODEL_SIZE)
    mf._write_sidecar(model, mf.MODEL_SHA256)
    return model


class InstallingThenReady:
    """An `EmbeddedStarter` whose model is "being installed" until `ready` is set; then it starts
    a real `EmbeddedServer` around the stand-in process, which answers `REPLY`."""

    def __init__(self, model: Path) -> None:
        self.model = model
        self.ready = False
        self.calls = 0
        self.server: EmbeddedServer | None = None

    def __call__(self, settings: Settings) -> tuple[Any, str]:
        self.calls += 1
        if not self.ready:
            return None, "the embedded model is being installed in the background"
        self.server = EmbeddedServer(
            settings,
            model=self.model,
            command=lambda launch: [
                *[sys.executable, str(FAKE), "--port", str(launch.port)],
                *["--reply", REPLY],
            ],
        )
        self.server.start()
        return self.server, ""


@pytest.fixture
def starter(tmp_path: Path) -> Iterator[InstallingThenReady]:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF stand-in")
    made = InstallingThenReady(model)
    yield made
    if made.server is not None:
        made.server.stop()


def embedded_services(tmp_path: Path, starter: EmbeddedStarter) -> Services:
    """Services configured for the embedded model, started by `starter`, that look for the
    model at every `refresh_model` (no interval)."""
    settings = Settings(data_dir=tmp_path / "data", llm_provider="embedded", model_dir=None)
    built = build_services(settings, embedded=starter)
    built.model_check_interval_s = 0.0
    built._next_model_check = 0.0
    return built


@pytest.fixture
def services(tmp_path: Path, starter: InstallingThenReady) -> Iterator[Services]:
    """Services configured for the embedded model while it is still being installed."""
    built = embedded_services(tmp_path, starter)
    yield built
    built.close()
