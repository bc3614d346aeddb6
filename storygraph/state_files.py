"""The small JSON files the app keeps per data directory, under `<data dir>/state/`: where they
live, an atomic write (a temporary file in the same directory, then `os.replace`: readers see
the old or the new file, never half) and a read that moves an unreadable file aside instead of
dropping it. Used by the UI's memory (storygraph.ui.app_state) and ingest's measured speed
(storygraph.ingest.measured_rate) alike."""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

STATE_DIR = "state"


def state_dir(data_dir: Path | str) -> Path:
    return Path(data_dir) / STATE_DIR


def write_json_atomic(path: Path, data: Any) -> None:
    """Write `data` as JSON to `path` so that readers see the old or the new file, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, indent=1)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: Path) -> tuple[Any, str]:
    """(data, "") or (None, warning). A missing file is (None, ""); an unreadable one is moved
    aside so that the next save does not overwrite what may still be recovered by hand."""
    if not path.exists():
        return None, ""
    try:
        return json.loads(path.read_text(encoding="utf-8")), ""
    except (OSError, ValueError) as exc:
        aside = path.with_name(path.name + ".unreadable")
        try:
            os.replace(path, aside)
        except OSError:
            aside = path
        log.warning("could not read %s: %s", path, exc)
        return None, f"{path.name} could not be read ({type(exc).__name__}); kept as {aside.name}"
