"""`python -m storygraph …`: ingest, ask, graph import/export, entity pages, wiki export, stats,
docs, reset, doctor, cache."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from storygraph.errors import InputError, StoryGraphError
from storygraph.models import IngestReport
from storygraph.qa.retrieval.modes import available_modes
from storygraph.services import Services, build_services, embedded_starter
from storygraph.settings import Settings, get_settings

# A command imports what it uses when it runs (the ingest pipeline, the question path), so that
# `stats` or `docs` starts in a fraction of a second (docs/ISSUES.md#startup-imports).
if TYPE_CHECKING:
    from storygraph.ingest.jobs import Job
    from storygraph.ingest.pipeline import Progress

Handler = Callable[[argparse.Namespace, Settings], int]


def _print_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _services(settings: Settings) -> Services:
    # A model server started here stays warm for the next command (STORYGRAPH_EMBEDDED_IDLE_S),
    # and so does the graph store's server (STORYGRAPH_STORE_IDLE_S); ones the app (or an earlier
    # command) runs are reused.
    starter = embedded_starter(keep_alive_s=settings.embedded_idle_s, on_loading=_say)
    services = build_services(settings, embedded=starter, keep_store_s=settings.store_idle_s)
    for warning in services.warnings:
        print(f"note: {warning}", file=sys.stderr)
    return services


def _stderr_progress() -> Callable[[Job, Progress], None]:
    """One ingest's progress on stderr: on a terminal one line redrawn for every chunk; to a file
    or a pipe a line at each tenth of the chunks and at each new chapter, not one per chunk."""
    from storygraph.ingest.jobs import job_rate_text

    printed: tuple[int, int] | None = None  # the last line's tenth and chapter (non-terminal)

    def show(job: Job, event: Progress) -> None:
        nonlocal printed
        if event.stage in ("decode", "write"):
            print(f"{event.document}: {event.message}", file=sys.stderr, flush=True)
        if event.stage != "extract" or not event.total:
            return
        width = 30
        filled = int(width * event.done / event.total)
        bar = "#" * filled + "-" * (width - filled)
        done = event.done == event.total
        saved = f", {event.cached} saved" if event.cached else ""
        headed = event.chapters and event.chapter and not done
        where = f", chapter {event.chapter} of {event.chapters}" if headed else ""
        rate = job_rate_text(job)
        line = f"{event.document}: [{bar}] {event.done}/{event.total} chunks{saved}{where}" + (
            f" · {rate}" if rate and not done else ""
        )
        if sys.stderr.isatty():
            print("\r" + line, end="\n" if done else "", file=sys.stderr, flush=True)
            return
        step = (10 * event.done // event.total, event.chapter)
        if done or printed != step:
            printed = step
            print(line, file=sys.stderr, flush=True)

    return show


def _job_report(job: Job) -> IngestReport:
    report = job.ingest_report()
    if report is None:  # the job ended before the ingest made a report (e.g. no model)
        report = IngestReport(document=job.name, status="failed", message=job.message)
    return report


def cmd_ingest(args: argparse.Namespace, settings: Settings) -> int:
    if args.no_llm:  # no model: the parser reads the story (STORYGRAPH_EXTRACTOR=auto)
        settings = settings.model_copy(update={"no_llm": True})
    services = _services(settings)
    try:
        if args.estimate:
            from storygraph.estimate import estimate_files, measured_rate

            paths = [Path(p) for p in args.paths]
            result = estimate_files(services, paths, measured_rate(services))
            _print_json(result) if args.json else print(result["summary"])
            return 0
        from storygraph.estimate import compare, estimate_files, measured_rate
        from storygraph.humanize import duration, plural, tokens_text

        before = estimate_files(services, [Path(p) for p in args.paths], measured_rate(services))
        # The same runner as the app's, in process: one file at a time, so that the output
        # stays in order; an interrupt cancels the running job (its extracted chunks are saved).
        runner = services.job_runner(resume=False)
        failed = 0
        reports = []
        done = []
        for raw in args.paths:
            path = Path(raw)
            try:
                data = path.read_bytes()
            except OSError as exc:
                print(f"{path}: cannot read ({exc.strerror})", file=sys.stderr)
                failed += 1
                continue
            job = runner.submit(path.name, data, on_progress=_stderr_progress())
            try:
                report = _job_report(runner.wait(job.id))
            except KeyboardInterrupt:
                runner.cancel(job.id)
                raise
            done.append(report)
            reports.append(report.to_json())
            if report.status == "failed":
                failed += 1
            if not args.json:
                resumed = (
                    f", {report.chunks_cached} chunks from saved extractions, "
                    f"{report.chunks_extracted} new"
                    if report.chunks_cached
                    else ""
                )
                print(
                    f"{path.name}: {report.status}: {report.message} "
                    f"({plural(report.usage.calls, 'LLM call')}, "
                    f"tokens: {tokens_text(report.usage)}, "
                    f"{duration(report.seconds)}{resumed})"
                )
                if report.status == "added":
                    print(f"  built by: {_built_by(report)}")
                for warning in report.warnings:
                    print(f"  warning: {warning}")
        versus = compare(before, done) if any(r.status == "added" for r in done) else {}
        if args.json:
            _print_json({"reports": reports, "estimate_vs_actual": versus})
        elif versus:
            print(
                "estimated vs actual: "
                + ", ".join(
                    f"{k.replace('_', ' ')} {v['estimated']} / {v['actual']}"
                    for k, v in versus.items()
                )
            )
        return 1 if failed else 0
    finally:
        services.close()


def _built_by(report: IngestReport) -> str:
    """Which extraction path built the document, in words for the ingest report."""
    if report.extractor == "parser":
        return (
            "the parser (no model): frames read by the parser, typed by the verb table; "
            f"{report.untyped_dropped} facts whose verb the table lacks were left out"
        )
    if report.extractor == "parser+verbs":
        return (
            "the parser (no model): frames read by the parser, typed by the verb table; "
            f"{report.untyped_dropped} facts whose verb the table lacks typed by their own verb"
        )
    return f"the language model ({report.extractor})"


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    from storygraph.qa.pipeline.preload import preload_in_background

    if settings.encoder_idle_s > 0:  # the encoder is held by a helper process the next finds
        from storygraph.text.embeddings import use_encoder_server

        use_encoder_server(Path(settings.data_dir), settings.encoder_idle_s)
    # The encoder (or its helper) and Sudachi load while the store's server starts.
    preload_in_background(Path(settings.data_dir))
    from storygraph.qa.pipeline.parts import QAOptions
    from storygraph.qa.verify.support_text import support_line
    from storygraph.text.chapters import chapter_label

    if args.no_llm:
        settings = settings.model_copy(update={"no_llm": True})
    services = _services(settings)
    try:
        from storygraph.qa.scope.scope import story_ids

        stories = story_ids(args.story or [], services.store.list_documents())
        options = QAOptions.from_settings(
            settings,
            mode=args.mode,
            top_k=args.top_k,
            min_score=args.min_score,
            stories=stories,
            until=args.until,
        )
        streamed: list[str] = []

        def show(piece: str) -> None:
            streamed.append(piece)
            print(piece, end="", flush=True)

        answer = services.qa().ask(args.question, options, on_token=None if args.json else show)
        if settings.encoder_idle_s > 0:  # the encoder's helper crashed, or was given up: say so
            from storygraph.text.embeddings import encoder_notice

            if (notice := encoder_notice()) and notice not in answer.warnings:
                answer.warnings.append(notice)
        if args.json:
            _print_json(answer.to_json())
            return 0
        if "".join(streamed).strip() != answer.answer.strip():
            print("\n" + answer.answer if streamed else answer.answer)
        else:
            print()
        if answer.support is not None:
            print(support_line(answer.support))
        if answer.citations:
            print()
            for c in answer.citations:
                where = c.document_name if c.kind != "graph" else "graph fact, no story sentence"
                chapter = chapter_label(c.chapter, c.language)
                print(f"[{c.number}] {where}{', ' + chapter if chapter else ''}: {c.text}")
        how = ", ".join(f"{e.node_id} ({e.source})" for e in answer.entities)
        print(f"\nentities: {how or '(none)'}")
        for fact in answer.facts:
            mark = "kept" if fact.kept else "dropped"
            score = "–" if fact.score is None else f"{fact.score:.1f}"
            print(f"  {score:>5} {mark:7} {fact.text()}")
        for warning in answer.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        return 0
    finally:
        services.close()


def cmd_graph(args: argparse.Namespace, settings: Settings) -> int:
    from storygraph.ingest.graph_io import export_graph, import_graph, load_graph_file

    services = _services(settings.model_copy(update={"no_llm": True}))
    try:
        if args.graph_command == "import":
            counts, dropped = import_graph(services.store, load_graph_file(Path(args.file)))
            print(
                f"imported: {counts.entities_added} entities added, {counts.entities_merged} "
                f"merged, {counts.relations_added} relations added, {counts.relations_merged} "
                "merged"
            )
            for line in dropped:
                print(f"  skipped: {line}", file=sys.stderr)
        else:
            data = export_graph(services.store)
            text = json.dumps(data, ensure_ascii=False, indent=1)
            if args.file == "-":
                print(text)
            else:
                Path(args.file).write_text(text + "\n", encoding="utf-8")
                print(
                    f"exported {len(data['nodes'])} nodes and {len(data['relationships'])} "
                    f"relationships to {args.file}"
                )
        return 0
    finally:
        services.close()


def _page_services(settings: Settings) -> Services:
    """Services for entity pages: a model only when it is capable (it may write summaries);
    the small embedded model is not started for a page."""
    from storygraph.llm.factory import model_info

    if not model_info(settings).capable:
        settings = settings.model_copy(update={"no_llm": True})
    return _services(settings)


def _print_page(page: Any, timeline_only: bool, every: bool = False) -> None:
    if not timeline_only:
        print(f"{page.id} ({page.type or '-'})")
        if page.aliases:
            print(f"also called: {', '.join(page.aliases)}")
        print(f"summary: {page.summary}")
        sources = ", ".join(page.summary_sources) or "-"
        print(f"  ({page.summary_method}, {page.summary_updated_at or '-'}; from: {sources})")
        print("relations:")
        for rel in page.relations:
            where = ", ".join(f"{c.document}#{c.chunk}" for c in rel.citations) or "-"
            mark = " [superseded later]" if rel.invalid_at else ""
            print(f"  {rel.text()}{mark}  [{where}]")
            if rel.evidence:
                print(f"      「{rel.evidence}」")
        if page.lines:
            print("lines:")
            for line in page.lines:
                to = f" → {line.listener}" if line.listener else ""
                print(f"  「{line.quote}」{to}  [{line.document}#{line.chunk}]")
        print("mentioned in:")
        for mention in page.mentions:
            print(f"  {mention.document}: chunks {', '.join(map(str, mention.chunks)) or '-'}")
        print("history:")
        for item in page.history:
            print(f"  {item.kind} by {item.document} ({item.at})")
            for change in item.changes:
                print(f"      {change}")
    print("timeline:" if not every else "every statement, in story order:")
    for i, entry in enumerate(page.statements if every else page.timeline, start=1):
        later = "  [superseded later]" if entry.superseded_at else ""
        again = ("" if entry.first else "  (again)") + ("  (said)" if entry.said else "")
        print(
            f"  {i:3}. {entry.relation}{again}{later}  ({entry.document} #{entry.chunk}, "
            f"offset {entry.offset})"
        )
    if page.unplaced:
        print(f"  not placed in a story: {', '.join(page.unplaced)}")


def cmd_entity_identity(args: argparse.Namespace, settings: Settings) -> int:
    """`entity merge A@STORY B@STORY` / `entity unmerge …`: say two stories' entities are one
    (or undo it); storygraph.library.identity."""
    from storygraph.library import identity

    if len(args.others) != 2:
        raise InputError(f"entity {args.name} takes two entities: NAME@STORY NAME@STORY")
    services = _services(settings.model_copy(update={"no_llm": True}))
    try:
        act = identity.merge if args.name == "merge" else identity.unmerge
        change = act(services.store, args.others[0], args.others[1])
        state = "" if change.changed else " (nothing to change)"
        if args.json:
            _print_json({"kind": change.kind, "keys": list(change.keys), "changed": change.changed})
        else:
            print(f"{change.kind}: {change.keys[0]} = {change.keys[1]}{state}")
        return 0
    finally:
        services.close()


def cmd_entity(args: argparse.Namespace, settings: Settings) -> int:
    from storygraph.library.entity_pages import EntityPages

    if args.name in ("merge", "unmerge") and args.others:
        return cmd_entity_identity(args, settings)
    if args.others:
        raise InputError(f"entity takes one name, got {[args.name, *args.others]}")
    services = _page_services(settings)
    try:
        from storygraph.store.reading import reading_for

        pages = EntityPages(services.store, services.llm(), services.info)
        reading = reading_for(services.store, getattr(args, "until", None))
        found = pages.pages(args.name, reading=reading)
        if not found:
            read = f" in what you have read (up to chapter {args.until})" if reading.limited else ""
            print(f"no entity called {args.name!r}{read}", file=sys.stderr)
            return 1
        if args.json:
            key = "statements" if args.every else "timeline"
            shown = [
                {"id": p.id, "key": p.key, "document": p.document, key: p.to_json()[key]}
                if args.timeline
                else p.to_json()
                for p in found
            ]
            _print_json(shown[0] if len(shown) == 1 else {"id": found[0].id, "entities": shown})
        else:
            for page in found:
                if len(found) > 1:
                    print(f"== {page.id} in {page.document or '(no story)'} ({page.key}) ==")
                _print_page(page, args.timeline, args.every)
        return 0
    finally:
        services.close()


def cmd_export_wiki(args: argparse.Namespace, settings: Settings) -> int:
    from storygraph.library.entity_pages import EntityPages
    from storygraph.library.wiki import export_wiki

    services = _page_services(settings)
    try:
        pages = EntityPages(services.store, services.llm(), services.info)
        written = export_wiki(pages, Path(args.directory))
        print(f"wrote {len(written) - 1} entity pages and {written[0]} to {args.directory}")
        return 0
    finally:
        services.close()


def cmd_stats(args: argparse.Namespace, settings: Settings) -> int:
    services = _services(settings.model_copy(update={"no_llm": True}))
    try:
        stats = services.store.stats()
        stats_out: dict[str, Any] = {"store": services.store.describe(), **stats}
        if args.json:
            _print_json(stats_out)
        else:
            for key, value in stats_out.items():
                print(f"{key}: {value}")
        return 0
    finally:
        services.close()


def cmd_docs(args: argparse.Namespace, settings: Settings) -> int:
    services = _services(settings.model_copy(update={"no_llm": True}))
    try:
        if args.docs_command == "delete":
            docs = {d.id: d for d in services.store.list_documents()}
            matches = [d for d in docs.values() if d.id == args.id or d.name == args.id]
            if not matches:
                print(f"no document with id or name {args.id!r}", file=sys.stderr)
                return 1
            for doc in matches:
                removed = services.store.delete_document_undoably(doc.id)
                print(
                    f"deleted {doc.name} ({doc.id}): {removed.chunks} chunks, "
                    f"{removed.entities_deleted} entities and {removed.relations_deleted} "
                    "relations no other document supported; undo with `python -m storygraph "
                    f"docs undo {doc.id}` until the next ingest"
                )
            return 0
        if args.docs_command == "undo":
            deleted = {s.document_id: s for s in services.store.removed_stories()}
            found = [s for s in deleted.values() if args.id in (s.document_id, s.name)]
            if not found:
                print(
                    f"no deleted document {args.id!r} can be restored (only until the next ingest)",
                    file=sys.stderr,
                )
                return 1
            for story in found:
                services.store.undo_delete(story.document_id)
                print(f"restored {story.name} ({story.document_id})")
            return 0
        docs_list = services.store.list_documents()
        if args.json:
            _print_json([d.__dict__ for d in docs_list])
        elif not docs_list:
            print("no documents")
        for doc in [] if args.json else docs_list:
            print(f"{doc.id}  {doc.status:7}  {doc.language}  {doc.chunks:4} chunks  {doc.name}")
        return 0
    finally:
        services.close()


def cmd_reset(args: argparse.Namespace, settings: Settings) -> int:
    if not args.yes:
        print(
            "reset deletes every document, entity and relation; add --yes to confirm",
            file=sys.stderr,
        )
        return 2
    services = _services(settings.model_copy(update={"no_llm": True}))
    try:
        services.store.reset()
        print("graph emptied")
    finally:
        services.close()
    from storygraph.llm.embedded_server import stop_recorded_server

    data_dir = Path(settings.data_dir)
    if (pid := stop_recorded_server(data_dir)) is not None:
        print(f"stopped the model server of this data directory (pid {pid})")
    from storygraph.text.encoder_server import stop_encoder_server

    if stop_encoder_server(data_dir):
        print("stopped the sentence encoder's helper of this data directory")
    if not settings.uses_neo4j:
        from storygraph.store.falkordb_server import stop_running_server

        outcome, pid = stop_running_server(data_dir)
        if outcome == "stopped":
            print(f"stopped the graph store's server of this data directory (pid {pid})")
        elif outcome == "in use":
            print(f"the graph store's server (pid {pid}) is left running: another process uses it")
    return 0


def cmd_doctor(args: argparse.Namespace, settings: Settings) -> int:
    from storygraph.doctor import run_doctor

    if args.clear_crashes:
        from storygraph.crashes import HELPER_NAMES, clear_all

        cleared = clear_all(settings.data_dir)
        names = ", ".join(HELPER_NAMES[h] for h in cleared) or "none recorded"
        print(f"crashes cleared: {names}", file=sys.stderr)
    report = run_doctor(settings)
    if args.json:
        _print_json(report.to_json())
    else:
        print(report.render())
    return 0 if report.healthy else 1


def cmd_cache(args: argparse.Namespace, settings: Settings) -> int:
    from storygraph.ingest.extraction_cache import cache_stats, clear_cache

    data_dir = Path(settings.data_dir)
    if args.cache_command == "clear":
        removed = clear_cache(data_dir)
        print(f"extraction cache cleared: {removed.entries} saved chunk extractions removed")
        return 0
    stats = cache_stats(data_dir)
    if args.json:
        _print_json({"entries": stats.entries, "bytes": stats.bytes})
    else:
        print(f"extraction cache: {stats.entries} saved chunk extractions ({stats.bytes:,} bytes)")
    return 0


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    from storygraph.evaluation.cli import run_eval_command

    return run_eval_command(args, settings)


def cmd_eval_e2e(args: argparse.Namespace, settings: Settings) -> int:
    from storygraph.evaluation.cli import run_e2e_command

    return run_e2e_command(args, settings)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m storygraph", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ingest", help="ingest story files (progress on stderr)")
    p.add_argument("paths", nargs="+")
    p.add_argument("--estimate", action="store_true", help="estimate calls, tokens, cost, time")
    p.add_argument(
        "--no-llm",
        action="store_true",
        help="no model: facts from the parser's frames and the verb table",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("ask", help="ask a question")
    p.add_argument("question")
    p.add_argument(
        "--mode",
        help=f"retrieval mode, one of: {', '.join(available_modes())} "
        "(default: STORYGRAPH_RETRIEVAL_MODE, onehop+qtype+reltype+rerank)",
    )
    p.add_argument("--no-llm", action="store_true", help="dictionary entities, lexical scores")
    p.add_argument("--top-k", type=int)
    p.add_argument("--min-score", type=float)
    p.add_argument(
        "--story",
        action="append",
        metavar="NAME",
        help="answer only from this story (file name, name without extension or document id; "
        "repeatable; default: every story, narrowed by the names the question uses)",
    )
    p.add_argument(
        "--until",
        type=int,
        metavar="CHAPTER",
        help="the last chapter you have read: the answer uses nothing after it (chapter 0 is "
        "what comes before the first heading; a story with no headings is all chapter 0)",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("graph", help="import or export a graph JSON file")
    gsub = p.add_subparsers(dest="graph_command", required=True)
    gi = gsub.add_parser("import")
    gi.add_argument("file")
    ge = gsub.add_parser("export")
    ge.add_argument("file", help="output path, or - for stdout")
    p.set_defaults(func=cmd_graph)

    p = sub.add_parser(
        "entity",
        help="an entity's page: summary, relations, history, timeline; a name several stories "
        'use gives a page per story (--json: {"id", "entities": [...]}); NAME@STORY picks one. '
        "`entity merge A@STORY B@STORY` says two stories' entities are one (undo: unmerge)",
    )
    p.add_argument("name")
    p.add_argument("others", nargs="*", help=argparse.SUPPRESS)
    p.add_argument("--json", action="store_true")
    p.add_argument("--timeline", action="store_true", help="only its relations in story order")
    p.add_argument(
        "--every", action="store_true", help="with --timeline: every statement, not the first"
    )
    p.add_argument(
        "--until",
        type=int,
        metavar="CHAPTER",
        help="the last chapter you have read: the page shows nothing after it (an entity first "
        "named later has none; the summary is made from the facts read)",
    )
    p.set_defaults(func=cmd_entity)

    p = sub.add_parser("export-wiki", help="write one Markdown page per entity into DIR")
    p.add_argument("directory")
    p.set_defaults(func=cmd_export_wiki)

    p = sub.add_parser("stats", help="counts of documents, chunks, entities, relations")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("docs", help="list, delete or restore documents")
    dsub = p.add_subparsers(dest="docs_command")
    dsub.add_parser("list")
    dd = dsub.add_parser("delete", help="delete (undoable until the next ingest)")
    dd.add_argument("id", help="document id or file name")
    du = dsub.add_parser("undo", help="restore a deleted document (until the next ingest)")
    du.add_argument("id", help="document id or file name")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_docs, docs_command="list")

    p = sub.add_parser("reset", help="delete everything")
    p.add_argument("--yes", action="store_true")
    p.set_defaults(func=cmd_reset)

    p = sub.add_parser("doctor", help="check the model and the store, explain an empty graph")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--clear-crashes",
        action="store_true",
        help="forget the helpers' crashes in a row, so a crashed helper may start again",
    )
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser("cache", help="show or clear the saved chunk extractions")
    csub = p.add_subparsers(dest="cache_command")
    csub.add_parser("stats")
    csub.add_parser("clear", help="the next ingest asks the model for every chunk again")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_cache, cache_command="stats")

    p = sub.add_parser("eval", help="evaluate retrieval on a question set and a fixed graph")
    p.add_argument("questions")
    p.add_argument("--graph", required=True)
    p.add_argument("--mode", action="append", dest="modes")
    p.add_argument("--no-llm", action="store_true")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser(
        "eval-e2e", help="ingest stories, ask questions through the chat's engine, score answers"
    )
    p.add_argument("questions", nargs="+", help="JSON-lines question files (eval/e2e/README.md)")
    p.add_argument(
        "--stories",
        default=str(Path(__file__).resolve().parents[2] / "shared" / "stories"),
        help="folder the questions' `story` paths are relative to (default ../shared/stories)",
    )
    p.add_argument("--mode", action="append", dest="modes")
    p.add_argument("--no-llm", action="store_true", help="answer without a model")
    p.add_argument("--fresh", action="store_true", help="ingest again, ignoring the cache")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    p.add_argument("--cache-dir", help="ingest cache (default: <data dir>/e2e)")
    p.add_argument(
        "--only",
        action="append",
        help="only question ids containing this text (a --library store still holds every "
        "story the sets name)",
    )
    p.add_argument("--per-story", type=int, help="at most this many questions per story")
    p.add_argument(
        "--library",
        action="store_true",
        help="ingest every story into ONE store first, then ask with the scope 'all stories' "
        "and count answers citing another story (issue #28)",
    )
    p.add_argument("--quiet", action="store_true", help="no per-question lines on stderr")
    p.add_argument(
        "--rescore",
        action="append",
        metavar="RUN.json",
        help="ask nothing: score the answers of saved `--json` runs by today's rules and sets "
        "(repeat for several runs)",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_eval_e2e)
    return parser


def stop_on_sigterm() -> None:
    """Let `kill` (SIGTERM) end a command as Ctrl-C does. Python's default ends the process
    without unwinding: no atexit, so a model server the command started kept running with no
    idle reaper to stop it, and a running ingest job was not cancelled. Main thread only."""

    def _interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _interrupt)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args, get_settings()))
    except StoryGraphError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(f"next step: {exc.hint}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted; nothing half-written is kept", file=sys.stderr)
        return 130
