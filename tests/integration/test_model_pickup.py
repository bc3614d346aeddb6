"""`Services` answers without a model while the embedded model installs, then picks it up without a
restart. The model server is a stand-in process (the fake OpenAI-compatible server); the store is
the real embedded FalkorDB."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from storygraph.llm import install_status as st
from storygraph.llm.embedded_server import EmbeddedServer
from storygraph.services import Services, _start_embedded, build_services
from storygraph.settings import Settings

FAKE = Path(__file__).resolve().parents[1] / "helpers" / "fake_openai_server.py"

pytestmark = pytest.mark.timeout(120)


class InstallingThenReady:
    """An `EmbeddedStarter` whose model is "being installed" until `ready` is set; then it starts
    a real `EmbeddedServer` around the stand-in process."""

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
                *["--reply", "stand-in model here"],
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


@pytest.fixture
def services(tmp_path: Path, starter: InstallingThenReady) -> Iterator[Services]:
    settings = Settings(data_dir=tmp_path / "data", llm_provider="embedded", model_dir=None)
    built = build_services(settings, embedded=starter)
    built.model_check_interval_s = 0.0
    built._next_model_check = 0.0
    yield built
    built.close()


def test_no_llm_mode_while_installing_then_the_model_without_a_restart(
    services: Services, starter: InstallingThenReady
) -> None:
    assert services.model_pending and services.info.provider == "none"
    assert services.llm() is None
    assert any("being installed" in w for w in services.warnings)
    assert services.qa().ask("Who is Momotaro?").usage.calls == 0  # answered without a model

    starter.ready = True  # the background install finished
    llm = services.llm()
    assert llm is not None
    assert not services.model_pending and services.info.provider == "embedded"
    assert services.warnings == [] and services.model_status == ""
    assert llm.invoke("hello").content == "stand-in model here"
    calls = starter.calls
    services.llm()
    assert starter.calls == calls  # picked up once; not asked again


def test_the_check_is_throttled(services: Services, starter: InstallingThenReady) -> None:
    services.model_check_interval_s = 3600.0
    services.llm()
    calls = starter.calls
    starter.ready = True
    assert services.llm() is None and starter.calls == calls  # not looked at again yet
    services._next_model_check = 0.0
    assert services.llm() is not None


def test_the_default_starter_says_an_install_is_running(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", llm_provider="embedded", model_dir=None)
    with st.install_lock(st.lock_path(settings), wait=False) as got:
        assert got
        server, why = _start_embedded(settings)
    assert server is None and "being installed in the background" in why
    server, why = _start_embedded(settings)
    assert server is None and "make model" in why
