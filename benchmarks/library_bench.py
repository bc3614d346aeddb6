"""Libraries of 10, 100 and 1,000 stories in one store (issue #28): ingest rate, store size and
the time a question waits before the model is called.

The stories are the sample 桃太郎 (楠山正雄), parsed once by the app's parser extractor, with
the hero renamed per story in the extracted graph (桃太郎 → 桃太郎7; the chunk text is the
sample's), written per story through the app's own write path (`GraphStore.write_document`:
document, chunks, merge plan, history, story time). So every story has its own おじいさん,
おばあさん, 山 and 鬼: the library case the issue is about.

Per size, questions name one story's hero and a shared name (「桃太郎7のおじいさんは山へ何を
しに行きましたか？」) and go through `QAEngine.ask` with no model (`no_llm`, no embedder): the
time measured is the trace's steps before the answer step (names, scope, retrieval, scoring,
sentence search), the part of the first token's wait that is not the model's. The meaning-only
sentence search needs the embedder and is not measured here. Each answer is checked to cite
only the asked story.
"""

from __future__ import annotations

import random
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.common import BenchResult, Table, median, percentile
from storygraph.ingest.frames.extractor import ParserExtractor
from storygraph.ingest.merge import build_plan
from storygraph.llm.factory import ModelInfo
from storygraph.models import Chunk, ChunkExtraction, DocumentInfo
from storygraph.qa.pipeline.factory import build_engine
from storygraph.qa.pipeline.parts import QAOptions
from storygraph.services import open_store
from storygraph.settings import Settings
from storygraph.text.chunking import chunk_text

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "storygraph" / "samples" / "momotaro_kusuyama.txt"
HERO = "桃太郎"
SIZES = (10, 100, 1000)
QUICK_SIZES = (10, 100)
QUESTIONS = 12


def _renamed(
    extractions: list[ChunkExtraction], chunks: list[Chunk], i: int
) -> list[ChunkExtraction]:
    """The sample's extractions as story `i`'s: its chunks, the hero renamed."""

    def name(value: str) -> str:
        return value.replace(HERO, f"{HERO}{i}")

    return [
        replace(
            extraction,
            chunk=chunk,
            entities=[
                replace(e, name=name(e.name), chunk_id=chunk.id) for e in extraction.entities
            ],
            relations=[
                replace(
                    r,
                    source=name(r.source),
                    target=name(r.target),
                    evidence=name(r.evidence),
                    chunk_id=chunk.id,
                )
                for r in extraction.relations
            ],
        )
        for extraction, chunk in zip(extractions, chunks, strict=True)
    ]


def _size_on_disk(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def _library(root: Path, stories: int) -> dict[str, Any]:
    text = SAMPLE.read_text(encoding="utf-8")
    settings = Settings(data_dir=root / f"library-{stories}")
    size, overlap = settings.effective_chunk_size(), settings.effective_chunk_overlap()
    base = chunk_text(text, "sample", size, overlap)
    extractor = ParserExtractor()
    parsed = [extractor.extract(c, "ja", []) for c in base]
    data_dir = settings.data_dir
    store = open_store(settings)
    write_s: list[float] = []
    try:
        for i in range(stories):
            doc_id = f"{i:016x}"
            chunks = chunk_text(text, doc_id, size, overlap)
            doc = DocumentInfo(doc_id, f"momotaro_{i}.txt", doc_id, "ja", len(text))
            started = time.perf_counter()
            plan = build_plan(_renamed(parsed, chunks, i), store.entity_candidates)
            store.write_document(doc, chunks, plan)
            write_s.append(time.perf_counter() - started)
        stats = store.stats()
        engine = build_engine(
            store, None, ModelInfo("none", "no model", capable=False), embedder=None
        )
        rng = random.Random(stories)
        asked = [rng.randrange(stories) for _ in range(QUESTIONS)]
        before: list[float] = []
        outside = 0
        for n, i in enumerate(asked):
            question = f"{HERO}{i}のおじいさんは山へ何をしに行きましたか？"
            answer = engine.ask(question, QAOptions(no_llm=True))
            names = [s.name for s in answer.steps]
            steps = answer.steps[: names.index("answer")] if "answer" in names else answer.steps
            if n > 0:  # the first question builds the caches
                before.append(sum(s.seconds for s in steps))
            cited = {c.document_name for c in answer.citations if c.document_name}
            outside += bool(cited - {f"momotaro_{i}.txt"})
    finally:
        store.close()
    return {
        "stories": stories,
        "chunks": stats["chunks"],
        "entities": stats["entities"],
        "relations": stats["relations"],
        "write_p50": median(write_s),
        "stories_per_s": stories / sum(write_s),
        "disk_mb": _size_on_disk(data_dir),
        "before_p50": median(before),
        "before_p90": percentile(before, 90),
        "outside": outside,
        "questions": len(asked) - 1,
    }


def run(quick: bool = False) -> BenchResult:
    import tempfile

    table = Table(
        "Library: one store of N renamed 桃太郎 stories (parser extraction, app write path)",
        [
            "stories",
            "chunks",
            "entities",
            "relations",
            "write / story p50 (s)",
            "stories / s",
            "data dir (MiB)",
            "before the model p50 (s)",
            "p90 (s)",
            "answers citing another story",
        ],
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="storygraph-library-") as tmp:
        for size in QUICK_SIZES if quick else SIZES:
            row = _library(Path(tmp), size)
            rows.append(row)
            table.add(
                row["stories"],
                row["chunks"],
                row["entities"],
                row["relations"],
                round(row["write_p50"], 3),
                round(row["stories_per_s"], 2),
                round(row["disk_mb"], 1),
                round(row["before_p50"], 3),
                round(row["before_p90"], 3),
                f"{row['outside']} of {row['questions']}",
            )
    table.notes.append(
        "Before the model: the trace's steps before the answer step (names, scope, retrieval, "
        "scoring, BM25 sentence search) with no model and no embedder; the first question of "
        "each size (caches) left out. Target: p50 <= 0.3 s at 1,000 stories."
    )
    return BenchResult("library", [table], data={"rows": rows})
