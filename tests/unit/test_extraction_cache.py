"""The per-chunk extraction cache: keys, round trip, atomic files, clearing."""

from __future__ import annotations

from pathlib import Path

from storygraph.ingest.extraction_cache import ExtractionCache, cache_key, cache_stats, clear_cache
from storygraph.models import Chunk, ChunkExtraction, ExtractedEntity, ExtractedRelation

TEXT = "桃太郎は鬼が島へ行きました。桃太郎は鬼を退治しました。"


def _chunk(document_id: str = "doc1", index: int = 0, text: str = TEXT) -> Chunk:
    return Chunk(f"{document_id}:{index:04d}", document_id, index, text, 0, len(text))


def _extraction(chunk: Chunk) -> ChunkExtraction:
    result = ChunkExtraction(chunk=chunk)
    result.entities += [
        ExtractedEntity("桃太郎", "Character", chunk.id),
        ExtractedEntity("鬼", "Character", chunk.id),
    ]
    result.relations.append(
        ExtractedRelation("桃太郎", "Character", "DEFEATS", "鬼", "Character", chunk.id, "x")
    )
    return result


def test_the_key_changes_with_text_model_extractor_and_language() -> None:
    base = cache_key(TEXT, "openai:gpt-4o-mini@t=0", "LLMGraphTransformer@1+abc", "ja")
    assert base == cache_key(TEXT, "openai:gpt-4o-mini@t=0", "LLMGraphTransformer@1+abc", "ja")
    others = {
        cache_key(TEXT + "。", "openai:gpt-4o-mini@t=0", "LLMGraphTransformer@1+abc", "ja"),
        cache_key(TEXT, "openai:gpt-4o@t=0", "LLMGraphTransformer@1+abc", "ja"),
        cache_key(TEXT, "openai:gpt-4o-mini@t=0", "LLMGraphTransformer@1+abd", "ja"),
        cache_key(TEXT, "openai:gpt-4o-mini@t=0", "LLMGraphTransformer@1+abc", "en"),
    }
    assert base not in others and len(others) == 4


def test_a_saved_extraction_is_rebuilt_for_another_document_with_the_same_text(
    tmp_path: Path,
) -> None:
    cache = ExtractionCache.in_data_dir(tmp_path, model="m", extractor="e@1")
    first = _chunk("doc1", 0)
    assert cache.get(first, "ja") is None
    cache.put(first, "ja", _extraction(first))
    other = _chunk("doc2", 7)  # the same text in another document
    found = cache.get(other, "ja")
    assert found is not None and found.chunk == other
    assert [(e.name, e.chunk_id) for e in found.entities] == [
        ("桃太郎", "doc2:0007"),
        ("鬼", "doc2:0007"),
    ]
    (relation,) = found.relations
    assert (relation.source, relation.type, relation.target) == ("桃太郎", "DEFEATS", "鬼")
    assert relation.chunk_id == "doc2:0007" and relation.evidence == "桃太郎は鬼を退治しました。"
    another_model = ExtractionCache.in_data_dir(tmp_path, model="m2", extractor="e@1")
    assert another_model.get(other, "ja") is None
    assert not list(tmp_path.rglob(".tmp-*"))  # written by rename, nothing left behind
    (tmp_path / "extraction_cache" / "ab").mkdir()
    (tmp_path / "extraction_cache" / "ab" / ".tmp-x.json").write_text("{")  # a write under way
    assert cache_stats(tmp_path).entries == 1


def test_unreadable_entries_are_misses(tmp_path: Path) -> None:
    cache = ExtractionCache.in_data_dir(tmp_path, model="m", extractor="e@1")
    chunk = _chunk()
    cache.put(chunk, "ja", _extraction(chunk))
    (entry,) = (tmp_path / "extraction_cache").glob("*/*.json")
    entry.write_text("{half a fi", encoding="utf-8")
    assert cache.get(chunk, "ja") is None
    entry.write_text('{"format": 99}', encoding="utf-8")
    assert cache.get(chunk, "ja") is None


def test_clearing_removes_every_entry(tmp_path: Path) -> None:
    cache = ExtractionCache.in_data_dir(tmp_path, model="m", extractor="e@1")
    for i in range(3):
        chunk = _chunk(text=f"{TEXT}{i}")
        cache.put(chunk, "ja", _extraction(chunk))
    stats = cache_stats(tmp_path)
    assert stats.entries == 3 and stats.bytes > 0
    assert clear_cache(tmp_path).entries == 3
    assert cache_stats(tmp_path).entries == 0
    assert cache.get(_chunk(text=f"{TEXT}0"), "ja") is None
