"""`export-wiki DIR`: one Markdown page per entity, linked to each other, plus an index.

Plain CommonMark with relative links, so the folder reads on any Git host or editor. File names
are the entity names where those are safe in a path, else sanitised with a short hash so two
names never share a file; links are percent-encoded file names. A name several stories use has a
page per story (the second one's file name gets a short hash); a page links to its own story's
entities.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from pathlib import Path
from urllib.parse import quote

from storygraph.library.entity_pages import EntityPage, EntityPages
from storygraph.store.plan import key_document

INDEX = "index.md"
MAX_STEM = 80
_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|#%\[\]()`]')
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|<>~$&])")
_MD_LEADING = re.compile(r"^(\d*)([#+\-=!.)])")


def md(text: str) -> str:
    """Text shown literally in Markdown (no emphasis, links, tables, math or HTML from story
    text, and no heading or list when it starts a line)."""
    escaped = _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))
    return _MD_LEADING.sub(r"\1\\\2", escaped)


def wiki_filename(entity_id: str) -> str:
    """A file name for an entity's page: the name itself when safe, else sanitised + hash."""
    name = unicodedata.normalize("NFC", entity_id).strip()
    stem = _UNSAFE.sub("_", name).replace(" ", "_").strip("._")[:MAX_STEM]
    if stem != name or not stem or stem.lower() == INDEX.removesuffix(".md"):
        digest = hashlib.sha1(entity_id.encode("utf-8")).hexdigest()[:8]
        stem = f"{stem or 'entity'}-{digest}"
    return f"{stem}.md"


def wiki_filenames(keys: list[str]) -> dict[str, str]:
    """File names for all pages by entity key, unique even on case-insensitive file systems
    (Dog / dog) and when two stories use one name."""
    files: dict[str, str] = {}
    taken: set[str] = set()
    for entity_id in keys:
        name = wiki_filename(entity_id[len(key_document(entity_id)) + 1 :])
        if name.casefold() in taken or name.casefold() == INDEX:
            digest = hashlib.sha1(entity_id.encode("utf-8")).hexdigest()[:8]
            name = f"{name.removesuffix('.md')}-{digest}.md"
        taken.add(name.casefold())
        files[entity_id] = name
    return files


def link(entity_id: str, files: dict[str, str]) -> str:
    """A Markdown link to an entity's page, or its plain name when it has none."""
    if entity_id not in files:
        return md(entity_id)
    return f"[{md(entity_id)}]({quote(files[entity_id])})"


def render_page(page: EntityPage, keyed_files: dict[str, str]) -> str:
    """One page; `keyed_files`: entity key → file name (its links go to its own story's pages)."""
    prefix = f"{page.document_id}:"
    files = {k.removeprefix(prefix): f for k, f in keyed_files.items() if k.startswith(prefix)}
    lines = [f"# {md(page.id)}", "", f"[← all entities]({quote(INDEX)})", ""]
    if page.document:
        lines.append(f"**Story:** {md(page.document)}  ")
    lines.append(f"**Type:** {md(page.type or '-')}  ")
    if page.aliases:
        lines.append(f"**Also called:** {', '.join(md(a) for a in page.aliases)}  ")
    lines += ["", "## Summary", "", md(page.summary) if page.summary else "_(none)_", ""]
    if page.summary_updated_at:
        sources = ", ".join(md(s) for s in page.summary_sources) or "-"
        lines += [
            f"_{md(page.summary_method)}, {md(page.summary_updated_at)}; from: {sources}_",
            "",
        ]
    for title, relations in (("Relations from", page.outgoing), ("Relations to", page.incoming)):
        lines += [f"## {title} {md(page.id)}", ""]
        if not relations:
            lines += ["_(none)_", ""]
            continue
        lines += ["| relation | with | evidence | source |", "|---|---|---|---|"]
        for rel in relations:
            where = "; ".join(
                f"{md(c.document)} #{c.chunk}" if c.chunk is not None else md(c.document)
                for c in rel.citations
            )
            arrow = f"→ {md(rel.label)}" if rel.direction == "out" else f"← {md(rel.label)}"
            if rel.invalid_at:
                arrow += " (superseded later)"
            lines.append(
                f"| {arrow} | {link(rel.other, files)} | {md(rel.evidence) or '-'} | "
                f"{where or '-'} |"
            )
        lines.append("")
    lines += ["## Timeline", ""]
    if page.timeline:
        for i, entry in enumerate(page.timeline, start=1):
            start, _, end = _parts(entry.relation)
            said = f"{link(start, files)} {md(entry.label)} {link(end, files)}"
            later = " — later superseded" if entry.superseded_at else ""
            if entry.statements > 1:
                later = f" (stated {entry.statements}×){later}"
            where = f"{md(entry.document)} #{entry.chunk}, offset {entry.offset}"
            lines.append(f"{i}. {said}{later} ({where})")
    else:
        lines.append("_(no relation has a story position)_")
    lines += ["", "## Mentioned in", ""]
    for mention in page.mentions:
        chunks = ", ".join(f"#{c}" for c in mention.chunks) or "-"
        lines.append(f"- {md(mention.document)}: chunks {chunks}")
    if not page.mentions:
        lines.append("_(no document: imported)_")
    lines += ["", "## History", ""]
    for item in page.history:
        lines.append(f"- **{md(item.kind)}** by {md(item.document)} ({md(item.at)})")
        lines += [f"  - {md(change)}" for change in item.changes]
    if not page.history:
        lines.append("_(no document has changed it: imported)_")
    return "\n".join(lines) + "\n"


def _parts(relation: str) -> tuple[str, str, str]:
    """`A -[TYPE]→ B` back into its parts (names may contain anything but that arrow)."""
    start, _, rest = relation.partition(" -[")
    rel_type, _, end = rest.partition("]→ ")
    return start, rel_type, end


def export_wiki(pages: EntityPages, directory: Path) -> list[Path]:
    """Write every entity's page and an index into `directory`; returns the files written."""
    directory.mkdir(parents=True, exist_ok=True)
    keys = pages.all_keys()
    files = wiki_filenames(keys)
    written: list[Path] = []
    index = ["# Entities", ""]
    for key in keys:
        page = pages.page(key)
        if page is None or page.key != key:
            continue
        path = directory / files[key]
        path.write_text(render_page(page, files), encoding="utf-8")
        written.append(path)
        summary = f" — {md(page.summary)}" if page.summary else ""
        story = f", {md(page.document)}" if page.document else ""
        entry = f"[{md(page.id)}]({quote(files[key])})"
        index.append(f"- {entry} ({md(page.type or '-')}{story}){summary}")
    index_path = directory / INDEX
    index_path.write_text("\n".join(index) + "\n", encoding="utf-8")
    return [index_path, *written]
