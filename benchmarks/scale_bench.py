"""A big graph: import, disk, memory, one-hop retrieval and entity finding at 1M edges.

The graph is the synthetic one of the import and retrieval benchmarks (benchmarks/synthetic.py,
3 edges per node), written by the app's own `GraphStore.write_plan`. For each size:

- import: the whole `write_plan`, the store's files on disk afterwards (the append-only file the
  embedded server writes, `falkordb/`), the FalkorDB server's resident memory and this
  process's peak (the plan itself lives here);
- retrieval: `GraphStore.retrieve("onehop", [id])` from uniformly drawn nodes, p50 / p99, and
  each result checked against the plan's edges in both directions (out of and into the node);
- entity finding over all the graph's names (`storygraph.qa.question.entities`), each step timed
apart:
  reading the names whole (`GraphStore.entity_names`, ENTITY_NAMES: after a removal, an import,
  a link), reading only a new document's names after another session wrote it (the change
  record, storygraph.store.change_log), building the names index (`storygraph.text.name_index`,
  once per names list), the dictionary match, the fuzzy resolution of a misspelt mention
  (`resolve_name`, the capable models' path), the whole `LocalEntityFinder.find` of a Japanese
  question and of an English one (its word and reading steps), and the embedding step. The
  embedding step embeds every name (the encoder's cache holds 20,000 vectors), so it is timed on
  a sample of names with a fresh encoder and extrapolated linearly; the comparison of one phrase
  against all name vectors is timed in full.
"""

from __future__ import annotations

import itertools
import random
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import BenchResult, Table, median, ms, percentile, rss_mb, temp_store
from benchmarks.synthetic import entity_id, make_plan
from storygraph.models import Chunk, DocumentInfo
from storygraph.qa.question.entities import LocalEntityFinder, dictionary_match
from storygraph.store.falkordb_runner import FalkorDBRunner
from storygraph.store.graph_store import GraphStore
from storygraph.store.plan import EntityRecord, MergePlan, RelationRecord
from storygraph.text.embeddings import UniversalSentenceEncoder, cosine
from storygraph.text.name_index import name_index, resolve_name

EMBED_SAMPLE = 500
"""Names embedded to time the embedding step (extrapolated to all names)."""


def _dir_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1024 / 1024


def _neighbours(plan: MergePlan, ids: set[str]) -> dict[str, dict[str, set[tuple[str, str, str]]]]:
    """Per drawn node: the plan's edges out of it and into it (the expected one-hop result)."""
    found: dict[str, dict[str, set[tuple[str, str, str]]]] = {
        i: {"out": set(), "in": set()} for i in ids
    }
    for r in plan.relations:
        key = (r.source, r.type, r.target)
        if r.source in found:
            found[r.source]["out"].add(key)
        if r.target in found:
            found[r.target]["in"].add(key)
    return found


def _misspelt(name: str) -> str:
    """A mention one character off the name that names no node (the fuzzy step's case:
    人物001234 → 人物0012の34)."""
    return name[:-2] + "の" + name[-2:]


NEW_DOCUMENT_NAMES = 10
"""Entities of the document another session writes before the names are read again."""


def _another_sessions_document(ts: Any) -> str:
    """Write a small story through a second GraphStore on the same data directory (another
    session), as an ingest does; its document id."""
    document_id = "benchdoc"
    names = [f"新人{i:02d}" for i in range(NEW_DOCUMENT_NAMES)]
    text = "".join(f"{a}は{b}に会いました。" for a, b in itertools.pairwise(names))
    chunk = Chunk(f"{document_id}:0000", document_id, 0, text, 0, len(text))
    entities = [
        EntityRecord(id=n, label="Character", norm=n, rkey=None, kana=False,
                     chunk_ids=[chunk.id], type_votes=["Character"], document_id=document_id)
        for n in names
    ]  # fmt: skip
    relations = [
        RelationRecord(a, "MEETS", b, [chunk.id], [f"{a}は{b}に会いました。"],
                       document_id=document_id)
        for a, b in itertools.pairwise(names)
    ]  # fmt: skip
    other = GraphStore(FalkorDBRunner(ts.server, "bench"), lock_dir=ts.store.lock_dir)
    doc = DocumentInfo(document_id, "bench.txt", document_id, "ja", len(text))
    other.write_document(doc, [chunk], MergePlan(entities=entities, relations=relations))
    return document_id


def _entity_finding(ts: Any, plan: MergePlan, queries: int) -> dict[str, Any]:
    rng = random.Random(3)
    nodes = len(plan.entities)
    picked = [entity_id(rng.randrange(nodes)) for _ in range(queries)]
    ts.store.entity_names()  # warm: the first read also builds the client's result cache
    load_s = []
    for _ in range(3):
        ts.store._names_cache = None  # time the read a write causes, not the kept list
        started = time.perf_counter()
        names = ts.store.entity_names()
        load_s.append(time.perf_counter() - started)
    started = time.perf_counter()
    name_index(names)
    index_s = time.perf_counter() - started
    finder = LocalEntityFinder(None)  # the embedding step is timed below, apart
    started = time.perf_counter()
    finder.find("Who did the old man meet?", names, [])  # builds the word tables once
    words_s = time.perf_counter() - started
    after_write = list(names)  # what a write brings: a new list of the same names
    started = time.perf_counter()
    finder.find("Who did the old man meet?", after_write, [])
    rebuilt_s = time.perf_counter() - started
    finder.find("Who did the old man meet?", names, [])  # back to the kept list's index
    dictionary_s, fuzzy_s, find_s, english_s, kept_s = [], [], [], [], []
    misses: dict[str, int] = {}

    def missed(step: str) -> None:
        misses[step] = misses.get(step, 0) + 1

    for name in picked:
        started = time.perf_counter()
        if ts.store.entity_names() is not names:
            missed("names kept")
        kept_s.append(time.perf_counter() - started)
        started = time.perf_counter()
        english = finder.find(f"Who did {name} meet?", names, [])
        english_s.append(time.perf_counter() - started)
        if name not in {e.node_id for e in english.entities}:
            missed("find (en)")
        question = f"{name}は誰に会いましたか？"
        started = time.perf_counter()
        found = dictionary_match(question, names)
        dictionary_s.append(time.perf_counter() - started)
        started = time.perf_counter()
        fuzzy = resolve_name(_misspelt(name), names)
        fuzzy_s.append(time.perf_counter() - started)
        started = time.perf_counter()
        whole = finder.find(question, names, [])
        find_s.append(time.perf_counter() - started)
        if [e.node_id for e in found] != [name]:
            missed("dictionary")
        if name not in {e.node_id for e in whole.entities}:
            missed("find (ja)")
        if fuzzy is None or fuzzy.node_id != name:
            missed("fuzzy")
    document_id = _another_sessions_document(ts)
    started = time.perf_counter()
    with_document = ts.store.entity_names()
    document_s = time.perf_counter() - started
    added = [r for r in with_document if r["document_id"] == document_id]
    if len(added) != NEW_DOCUMENT_NAMES or len(with_document) != len(names) + len(added):
        missed("names after a document")
    started = time.perf_counter()
    finder.find("Who did the old man meet?", with_document, [])
    document_rebuilt_s = time.perf_counter() - started
    out: dict[str, Any] = {
        "document_s": document_s,
        "document_rebuilt_s": document_rebuilt_s,
        "names": len(names),
        "queries": queries,
        "load_p50": median(load_s),
        "kept_p50": median(kept_s),
        "index_s": index_s,
        "words_s": words_s,
        "rebuilt_s": rebuilt_s,
        "english_p50": median(english_s),
        "english_p99": percentile(english_s, 99),
        "dictionary_p50": median(dictionary_s),
        "dictionary_p99": percentile(dictionary_s, 99),
        "fuzzy_p50": median(fuzzy_s),
        "fuzzy_p99": percentile(fuzzy_s, 99),
        "find_p50": median(find_s),
        "find_p99": percentile(find_s, 99),
        "misses": misses,
    }
    embedder = UniversalSentenceEncoder()  # fresh: no vectors kept from another graph
    if embedder is not None:
        embedder.embed(["warm"])  # loading the encoder is not part of a question
        sample = [str(r["id"]) for r in names[:EMBED_SAMPLE]]
        started = time.perf_counter()
        vectors = embedder.embed(sample)
        out["embed_sample_s"] = time.perf_counter() - started
        out["embed_all_s"] = out["embed_sample_s"] / len(sample) * len(names)
        everything = np.resize(vectors, (len(names), vectors.shape[1]))  # same size, same work
        phrase = embedder.embed(["who did the old man meet"])[0]
        compare_s = []
        for _ in range(5):
            started = time.perf_counter()
            sims = cosine(phrase, everything)
            sims.argsort()
            compare_s.append(time.perf_counter() - started)
        out["compare_p50"] = median(compare_s)
    return out


ENTITY_WRITES = (
    "ENTITY_CREATE", "ENTITY_UPSERT", "ENTITY_CREATE_RETURNING_IDS", "ENTITY_UPSERT_RETURNING_IDS",
)  # fmt: skip
RELATION_WRITES = ("RELATION_UPSERT", "RELATION_UPSERT_BY_NODE_ID")


def _import_by_key(root: Path, plan: MergePlan, edges: int) -> dict[str, Any]:
    """The same import with the relations' ends matched by key (RELATION_UPSERT: Neo4j's
    path, and FalkorDB's before docs/ISSUES.md#import-1m-edges), into a store of its own, for the
    ratio."""
    with temp_store(root, f"scale-{edges}-by-key", ends_by_node_id=False) as ts:
        started = time.perf_counter()
        ts.store.write_plan(plan)
        import_s = time.perf_counter() - started
        stats = ts.store.stats()
        return {
            "import_s": import_s,
            "breakdown": dict(ts.timing.seconds),
            "stored": (stats["entities"], stats["relations"]),
        }


def _scale(root: Path, edges: int, queries: int) -> dict[str, Any]:
    nodes = max(edges // 3, 10)
    plan = make_plan(nodes, edges, seed=edges)
    rng = random.Random(1)
    ids = [plan.entities[rng.randrange(nodes)].id for _ in range(queries)]
    expected = _neighbours(plan, set(ids))
    out: dict[str, Any] = {"edges": edges, "nodes": nodes, "queries": queries}
    out["by_key"] = _import_by_key(root, plan, edges)
    with temp_store(root, f"scale-{edges}") as ts:
        started = time.perf_counter()
        ts.store.write_plan(plan)
        out["import_s"] = time.perf_counter() - started
        out["breakdown"] = dict(ts.timing.seconds)
        stats = ts.store.stats()
        out["stored"] = (stats["entities"], stats["relations"])
        time.sleep(1.5)  # the append-only file is flushed every second
        out["disk_mb"] = _dir_mb(ts.server.paths.root)
        out["server_rss_mb"] = rss_mb(ts.pid())
        for node in ids[:20]:  # warm-up: caches, connection, query plan
            ts.store.retrieve("onehop", [node])
        store_s: list[float] = []
        mismatches = 0
        outgoing = incoming = 0
        for node in ids:
            started = time.perf_counter()
            facts = ts.store.retrieve("onehop", [node])
            store_s.append(time.perf_counter() - started)
            want = expected[node]
            got = {f.key for f in facts}
            outgoing += len({k for k in got if k[0] == node})
            incoming += len({k for k in got if k[2] == node})
            if got != want["out"] | want["in"]:
                mismatches += 1
        out.update(
            retrieve_p50=median(store_s),
            retrieve_p99=percentile(store_s, 99),
            out_per_query=outgoing / len(ids),
            in_per_query=incoming / len(ids),
            mismatches=mismatches,
        )
        out["finding"] = _entity_finding(ts, plan, max(20, queries // 10))
        out["server_rss_after_mb"] = rss_mb(ts.pid())
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def run(quick: bool = False) -> BenchResult:
    scales = [10_000, 100_000] if quick else [100_000, 1_000_000]
    queries = 200 if quick else 500
    with tempfile.TemporaryDirectory(prefix="sg-bench-") as tmp:
        results = [_scale(Path(tmp), edges, queries) for edges in scales]

    store = Table(
        "Scale: import, disk and memory (GraphStore.write_plan into embedded FalkorDB)",
        ["edges", "nodes", "relation ends", "import s", "× by key", "entity writes s",
         "RELATIONS_EXISTING s", "relation writes s", "edges/s", "on disk MiB",
         "FalkorDB RSS MiB", "bench process peak RSS MiB", "stored entities / relations"],
    )  # fmt: skip
    for r in results:
        for ends, run in (("by key", r["by_key"]), ("by node id", r)):
            b = run["breakdown"]
            on_disk = (r["disk_mb"], r["server_rss_after_mb"]) if run is r else (None, None)
            store.add(
                r["edges"], r["nodes"], ends, run["import_s"],
                round(run["import_s"] / r["by_key"]["import_s"], 2),
                sum(b.get(name, 0.0) for name in ENTITY_WRITES),
                b.get("RELATIONS_EXISTING", 0.0), sum(b.get(n, 0.0) for n in RELATION_WRITES),
                r["edges"] / run["import_s"], *on_disk, r["peak_rss_mb"] if run is r else None,
                f"{run['stored'][0]:,} / {run['stored'][1]:,}",
            )  # fmt: skip
    store.notes.append(
        "relation ends: by node id = the app's FalkorDB write (the entity statements return "
        "their nodes' ids, RELATION_UPSERT_BY_NODE_ID seeks both ends by them); by key = "
        "RELATION_UPSERT matching both ends by the key index (Neo4j's path, FalkorDB's before "
        "docs/ISSUES.md#import-1m-edges), the same plan into a store of its own just before, "
        "in the same run; × by key = import s / the by-key import s"
    )
    store.notes.append(
        "entity writes and relation writes = the wall time of their statements (ENTITY_CREATE / "
        "_UPSERT with or without RETURNING_IDS; RELATION_UPSERT or _BY_NODE_ID); the statements' "
        "text is built in a thread while the server runs the one before (FalkorDBRunner.run_each)"
    )
    store.notes.append(
        "on disk = the server's directory after the write (append-only file, fsync every second); "
        "peak RSS of the bench process includes the synthetic plan it generated"
    )
    store.notes.append("target: import of 1M edges ≤ 30 s")

    retrieval = Table(
        "Scale: one-hop retrieval, both directions (GraphStore.retrieve('onehop', [id]))",
        ["edges", "queries", "p50 ms", "p99 ms", "facts out / query", "facts in / query",
         "results differ"],
    )  # fmt: skip
    for r in results:
        retrieval.add(
            r["edges"], r["queries"], ms(r["retrieve_p50"]), ms(r["retrieve_p99"]),
            round(r["out_per_query"], 2), round(r["in_per_query"], 2), r["mismatches"],
        )  # fmt: skip
    retrieval.notes.append(
        "start nodes drawn uniformly; each result compared with the plan's edges out of and "
        "into the node; target: p50 ≤ 5 ms at 1M edges"
    )

    finding = Table(
        "Scale: entity finding over all the graph's names (storygraph.qa.question.entities), "
        "per step",
        ["edges", "names", "questions", "read all names ms",
         "names after another session's document ms", "names kept p50 ms",
         "index build ms", "word tables build ms", "both rebuilt after a write ms",
         "both rebuilt after that document ms",
         "dictionary p50 / p99 ms", "find (ja) p50 / p99 ms", "find (en) p50 / p99 ms",
         "fuzzy p50 / p99 ms",
         "embed all names s (extrapolated)", "compare 1 phrase to all ms", "missed"],
    )  # fmt: skip
    for r in results:
        f = r["finding"]
        finding.add(
            r["edges"], f["names"], f["queries"], ms(f["load_p50"]), ms(f["document_s"]),
            ms(f["kept_p50"]), ms(f["index_s"]), ms(f["words_s"]), ms(f["rebuilt_s"]),
            ms(f["document_rebuilt_s"]),
            f"{ms(f['dictionary_p50']):.2f} / {ms(f['dictionary_p99']):.2f}",
            f"{ms(f['find_p50']):.2f} / {ms(f['find_p99']):.2f}",
            f"{ms(f['english_p50']):.2f} / {ms(f['english_p99']):.2f}",
            f"{ms(f['fuzzy_p50']):.1f} / {ms(f['fuzzy_p99']):.1f}",
            f.get("embed_all_s"),
            ms(f["compare_p50"]) if "compare_p50" in f else None,
            ", ".join(f"{step} {n}" for step, n in f["misses"].items()) or 0,
        )  # fmt: skip
    finding.notes.append(
        "questions 「人物NNNNNNは誰に会いましたか？」 and \"Who did 人物NNNNNN meet?\" naming one "
        "drawn node; find = the whole local finder (dictionary, readings, words, contained names), "
        "which the embedding step joins only when nothing was found; fuzzy = resolve_name of the "
        "name with の put in (人物0012の34), the capable models' path; rebuilt after a write = "
        "the index and word tables of a new list of the same names (readings cached); read all "
        "names = GraphStore.entity_names with nothing kept (after a removal, an import or a "
        "link); after another session's document = another GraphStore on the data directory "
        f"wrote a story of {NEW_DOCUMENT_NAMES} names, and entity_names read only that story's "
        "names (the change record); names kept "
        "= GraphStore.entity_names on an unchanged graph (missed: it read them again); missed = "
        "questions whose step did not find the drawn node"
    )
    finding.notes.append(
        f"embedding: {EMBED_SAMPLE} names embedded and extrapolated to all (the encoder's cache "
        "holds 20,000 vectors, so a graph this size embeds its names again on such a question); "
        "compare = cosine of one phrase against as many vectors as names, plus the sort"
    )
    finding.notes.append("target: entity finding p50 ≤ 100 ms")
    return BenchResult("scale", [store, retrieval, finding], data={"scales": results})
