"""Bad uploads: refused with a message that names the cause and the next step, graph untouched;
or, for odd-but-valid text, decoded correctly and stored as one more document."""

from __future__ import annotations

import codecs
import io
import random
import zipfile
from typing import Any

import pytest

from storygraph.errors import InputError
from storygraph.ingest.pipeline import prepare
from storygraph.models import Chunk, ChunkExtraction
from storygraph.services import Services
from tests.faults.conftest import (
    SEED_EN,
    SEED_JA,
    STORIES,
    ServicesFactory,
    snapshot,
)

MB = 1024 * 1024


def _png() -> bytes:
    return (
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00"
        b"\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N"
        b"\x00\x00\x00\x00IEND\xaeB`\x82"
    )


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("story.txt", SEED_JA)
    return buffer.getvalue()


def _pdf() -> bytes:
    return b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"


def _random(seed: int, size: int = 4096) -> bytes:
    return random.Random(seed).randbytes(size)


REJECTED: dict[str, tuple[bytes, str]] = {
    # case id: (bytes, a word the message must contain)
    "empty": (b"", "empty"),
    "spaces-and-newlines": (b"   \n\n\t  \r\n  ", "whitespace"),
    "fullwidth-spaces": ("\u3000\u3000\n\u3000\t\n".encode(), "whitespace"),
    "utf8-bom-only": (codecs.BOM_UTF8, "whitespace"),
    "utf16-bom-only": (codecs.BOM_UTF16_LE, "whitespace"),
    "png-image": (_png(), "binary"),
    "jpeg-image": (b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + _random(1), "binary"),
    "zip-archive": (_zip(), "binary"),
    "pdf-document": (_pdf(), "binary"),
    "gzip-archive": (b"\x1f\x8b\x08\x00" + _random(2), "binary"),
    "random-bytes": (_random(3), "binary"),
    "random-bytes-even-length-no-nul": (
        bytes(b if b else 1 for b in _random(4, 2048)),
        "could not be decoded",
    ),
    "elf-executable": (b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8, "binary"),
    "nul-bytes": (b"\x00" * 1000, "binary"),
    "control-characters-only": (bytes(range(1, 9)) * 200, "binary"),
    "utf16-bom-odd-length": (codecs.BOM_UTF16_LE + "桃太郎".encode("utf-16-le") + b"\x00", "byte"),
}

_REJECT_HINT_WORDS = ("text", "utf-8", "file", "split", "upload")


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_bad_upload_is_refused_and_graph_unchanged(seeded: Services, case: str) -> None:
    data, word = REJECTED[case]
    before = snapshot(seeded.store)
    report = seeded.ingestor().ingest_bytes(f"{case}.bin", data)
    assert report.status == "failed"
    assert word in report.message.lower(), report.message
    assert f"{case}.bin" in report.message  # names the file
    assert " — " in report.message  # message — next step
    hint = report.message.split(" — ", 1)[1].lower()
    assert any(w in hint for w in _REJECT_HINT_WORDS), hint
    assert snapshot(seeded.store) == before


def test_twenty_megabyte_file_over_the_limit(seeded: Services) -> None:
    data = ("むかしむかし。" * (20 * MB // 21 + 1)).encode()
    assert len(data) >= 20 * MB
    before = snapshot(seeded.store)
    report = seeded.ingestor().ingest_bytes("big.txt", data)
    assert report.status == "failed"
    assert "20.0 MB" in report.message and "10.0 MB" in report.message
    assert "STORYGRAPH_MAX_UPLOAD_MB" in report.message
    assert snapshot(seeded.store) == before


def test_one_megabyte_line_over_a_small_limit(make_services: ServicesFactory) -> None:
    services = make_services(max_upload_mb=0.5)
    data = b"x" * MB
    before = snapshot(services.store)
    report = services.ingestor().ingest_bytes("line.txt", data)
    assert report.status == "failed"
    assert "upload limit is 0.5 MB" in report.message
    assert snapshot(services.store) == before


def test_prepare_refuses_over_limit_before_decoding() -> None:
    with pytest.raises(InputError) as info:
        prepare("x.txt", b"\xff" * 2048, max_bytes=1024)
    assert info.value.hint and "STORYGRAPH_MAX_UPLOAD_MB" in info.value.hint


class NullExtractor:
    """Extracts nothing, instantly: for inputs whose point is decoding and chunking."""

    name = "null"
    version = "1"

    def extract(self, chunk: Chunk, language: str, callbacks: list[Any]) -> ChunkExtraction:
        return ChunkExtraction(chunk=chunk)


def test_one_megabyte_single_line_still_chunks(make_services: ServicesFactory) -> None:
    services = make_services(max_upload_mb=2, chunk_size=1000)
    services.extractor_override = NullExtractor()
    line = ("桃太郎は鬼が島へ行きました、" * 80_000)[: MB // 3]  # one line, no sentence end
    data = line.encode()
    assert b"\n" not in data and len(data) >= MB - 3
    report = services.ingestor().ingest_bytes("one-line.txt", data)
    assert report.status == "added", report.message
    assert report.chunks >= len(line) // 1000
    doc = services.store.list_documents()[0]
    assert doc.status == "ready" and doc.chunks == report.chunks
    ids = [f"{doc.id}:{i:04d}" for i in range(report.chunks)]
    chunks = services.store.chunks(ids)
    assert len(chunks) == report.chunks
    assert all(0 < len(row["text"]) <= 1000 for row in chunks.values())
    assert "".join(chunks[i]["text"] for i in ids) == line  # no overlap: nothing lost


def _utf16_no_bom(text: str, codec: str) -> bytes:
    return text.encode(codec)


def _aozora_sjis() -> bytes:
    return (STORIES / "ja" / "raw_sjis" / "momotaro_kusuyama.txt").read_bytes()


ACCEPTED: dict[str, tuple[bytes, str]] = {
    # case id: (bytes, text that a stored chunk must contain after decoding)
    "utf16-le-bom": (codecs.BOM_UTF16_LE + SEED_JA.encode("utf-16-le"), "桃太郎"),
    "utf16-be-bom": (codecs.BOM_UTF16_BE + SEED_JA.encode("utf-16-be"), "桃太郎"),
    "utf16-le-no-bom-ja": (_utf16_no_bom(SEED_JA, "utf-16-le"), "桃太郎"),
    "utf16-be-no-bom-ja": (_utf16_no_bom(SEED_JA, "utf-16-be"), "桃太郎"),
    "utf16-le-no-bom-en": (_utf16_no_bom(SEED_EN, "utf-16-le"), "Momotaro"),
    "utf8-bom": (codecs.BOM_UTF8 + SEED_JA.encode(), "桃太郎"),
    "euc-jp": (SEED_JA.encode("euc_jp"), "桃太郎"),
    "shift-jis": (SEED_JA.encode("cp932"), "桃太郎"),
    "iso-2022-jp": (SEED_JA.encode("iso2022_jp"), "桃太郎"),
    "shift-jis-aozora": (_aozora_sjis(), "桃太郎"),
    "mixed-line-endings": (
        b"The old man went to the mountains.\r\nThe dog follows Momotaro.\rMomotaro was born "
        b"from the peach.\nThe old woman finds a peach.\r\n",
        "Momotaro",
    ),
    "control-characters-in-text": (
        "桃太郎は\x07鬼が島へ\x1b[31m行きました。\x0bおばあさんは\x08桃を見つけました。".encode(),
        "桃太郎は鬼が島へ[31m行きました。",
    ),
    "emoji": ("🍑桃太郎🍑は👹鬼👹を倒しました。おばあさんは桃を見つけました。".encode(), "🍑"),
    "script-tag-in-text": (
        b"<script>alert('x')</script> The dog follows Momotaro. Momotaro was born from the peach.",
        "<script>alert('x')</script>",
    ),
    "zero-width-and-rtl-marks": (
        "桃太郎\u200bは\u200e鬼\u202eを倒しました。おばあさんは桃を見つけました。".encode(),
        "桃を見つけました",
    ),
    "latin1-english": (
        "The old woman finds a peach in the river. Momotaro was born from the peach. "
        "Café olé.".encode("latin-1"),
        "Café",
    ),
}


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_odd_but_valid_text_is_stored_as_one_more_document(seeded: Services, case: str) -> None:
    data, expected = ACCEPTED[case]
    before = snapshot(seeded.store)
    report = seeded.ingestor().ingest_bytes(f"{case}.txt", data)
    assert report.status in ("added", "unchanged"), report.message
    after = snapshot(seeded.store)
    if report.status == "unchanged":  # the same text as the seed in another encoding
        assert after == before
        return
    assert after["stats"]["documents"] == before["stats"]["documents"] + 1
    assert before["documents"][0] in after["documents"]  # the seed document is untouched
    doc = next(d for d in after["documents"] if d["name"] == f"{case}.txt")
    assert doc["status"] == "ready"
    ids = [f"{doc['id']}:{i:04d}" for i in range(doc["chunks"])]
    texts = [row["text"] for row in seeded.store.chunks(ids).values()]
    assert any(expected in t for t in texts), texts[:3]
    assert not any("\r" in t or "\x07" in t or "\x1b" in t or "《" in t for t in texts)
    _assert_seed_survives(before, after)


def _assert_seed_survives(before: dict[str, Any], after: dict[str, Any]) -> None:
    """Every node and relation of `before` is still there (in its own story: the same name in
    another story is another node), with at least its chunk ids."""
    nodes = {(n["id"], n.get("document_id")): n for n in after["graph"]["nodes"]}
    for node in before["graph"]["nodes"]:
        known = nodes.get((node["id"], node.get("document_id")))
        assert known is not None
        assert set(node.get("chunk_ids", [])) <= set(known.get("chunk_ids", []))
    rels = {
        (r["source"], r["type"], r["target"], r.get("document_id")): r
        for r in after["graph"]["relationships"]
    }
    for rel in before["graph"]["relationships"]:
        key = (rel["source"], rel["type"], rel["target"], rel.get("document_id"))
        assert key in rels
        assert set(rel.get("chunk_ids", [])) <= set(rels[key].get("chunk_ids", []))


def test_same_text_in_another_encoding_is_unchanged(seeded: Services) -> None:
    before = snapshot(seeded.store)
    for codec in ("cp932", "euc_jp", "utf-16"):
        report = seeded.ingestor().ingest_bytes(f"seed.{codec}.txt", SEED_JA.encode(codec))
        assert report.status == "unchanged", (codec, report.message)
    assert snapshot(seeded.store) == before
