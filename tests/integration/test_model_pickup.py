"""`Services` answers without a model while the embedded model installs, then picks it up without a
restart. The model server is a stand-in process (the fake OpenAI-compatible server); the store is
the real embedded FalkorDB."""

from __future__ import annotations

from pathlib import Path

import pytest

from storygraph.llm import install_status as st
from storygraph.services import Services, _start_embedded
from storygraph.settings import Settings
from tests.helpers import model_install
from tests.helpers.model_install import InstallingThenReady

pytestmark = pytest.mark.timeout(120)

starter = model_install.starter
services = model_install.services  # embedded model configured, still being installed


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
