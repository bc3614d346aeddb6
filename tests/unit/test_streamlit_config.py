"""The shipped Streamlit configuration: no file watching (it competed with the model)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / ".streamlit" / "config.toml"


def test_the_shipped_config_turns_file_watching_off() -> None:
    config = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    assert config["server"]["fileWatcherType"] == "none"
    assert config["server"]["runOnSave"] is False


def test_streamlit_reads_it_when_started_from_the_project() -> None:
    """What `make run` does (`streamlit run app.py` from the project root) sees "none"."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from streamlit import config; print(config.get_option('server.fileWatcherType'))",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "none"
