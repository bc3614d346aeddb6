"""The slow tests' one embedded model: installed (never skipped) and served per module."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from storygraph.services import Services, build_services
from storygraph.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
MODEL_DIR = ROOT / "data" / "models"


def install_model() -> None:
    env = {**os.environ, "STORYGRAPH_MODEL_DIR": str(MODEL_DIR)}
    proc = subprocess.run(
        [sys.executable, "-m", "storygraph.llm.install"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(
            "The embedded model could not be installed (`python -m storygraph.llm.install` "
            f"exited {proc.returncode}); `make test` installs it first.\n"
            f"--- stdout ---\n{proc.stdout[-3000:]}\n--- stderr ---\n{proc.stderr[-3000:]}",
            pytrace=False,
        )


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    install_model()
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        data_dir=tmp_path_factory.mktemp("embedded") / "data",
        model_dir=MODEL_DIR,
        llm_provider="embedded",
    )
    built = build_services(settings)
    try:
        assert built.info.provider == "embedded", f"embedded model unavailable: {built.warnings}"
        yield built
    finally:
        built.close()
        if built._embedded is not None:
            built._embedded.stop()
