"""The app while the embedded model installs in the background (AppTest, real app.py and pages/):
it opens in no-LLM mode, shows the install's step and percent, and uses the model once it is
ready without a restart. The model server is a stand-in process; the store is real."""

from __future__ import annotations

import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from pages.common import SERVICES_KEY, TAB_KEY
from storygraph.llm import install_status as st
from storygraph.services import Services
from tests.helpers import model_install
from tests.helpers.model_install import InstallingThenReady


def _texts(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [w.value for w in at.warning] + [e.value for e in at.error]
    return "\n".join(str(p) for p in parts)


ROOT = Path(__file__).resolve().parents[2]
starter = model_install.starter
services = model_install.services  # embedded model configured, still being installed


def test_the_app_shows_the_install_progress_then_uses_the_model(
    services: Services, starter: InstallingThenReady
) -> None:
    settings = services.settings
    status = st.InstallStatus(
        state="running",
        step=1,
        label="building llama.cpp (llama-cpp-python)",
        percent=42,
        pid=1,
        started_at=time.time() - 120,
        updated_at=time.time(),
    )
    st.write_status(st.status_path(settings), status)
    with st.install_lock(st.lock_path(settings), wait=False) as got:  # the install is running
        assert got
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        at.session_state[SERVICES_KEY] = services
        at.session_state[TAB_KEY] = "Chat"  # the model badge's tab (only the open tab is drawn)
        at.run()
        assert not at.exception, at.exception
        text = _texts(at)
        assert "step 1 of 3: building llama.cpp (llama-cpp-python), 42%" in text
        assert "Model: none" in text  # no-LLM mode meanwhile
        assert [t.label for t in at.tabs][:3] == ["Ingest", "Chat", "Graph"]

    st.write_status(
        st.status_path(settings), st.InstallStatus(**{**status.__dict__, "state": "ready"})
    )
    starter.ready = True
    at.run()
    assert not at.exception, at.exception
    text = _texts(at)
    assert "Installing the embedded model" not in text
    assert "Model: none" not in text and "(embedded)" in text
    assert services.info.provider == "embedded"


def test_the_ingest_tab_does_not_say_no_model_while_the_model_installs(
    services: Services, starter: InstallingThenReady
) -> None:
    # the sample is read by the parser meanwhile, and the model is picked up when ready: the
    # "no language model is configured … cannot be extracted" warning was untrue
    # (docs/ISSUES.md#status-phases)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state[SERVICES_KEY] = services
    at.session_state[TAB_KEY] = "Ingest"
    at.run()
    assert not at.exception, at.exception
    assert services.model_pending
    assert "cannot be extracted" not in _texts(at)
