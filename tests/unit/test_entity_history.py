"""What a document did to each entity: created, updated (and what), or only referenced."""

from __future__ import annotations

from storygraph.models import DocumentInfo
from storygraph.store.history import entity_history, history_entry, parse_history
from storygraph.store.plan import EntityRecord, MergePlan, RelationRecord


def _entity(
    name: str, label: str = "Character", *, existing: bool = False, **kw: object
) -> EntityRecord:
    return EntityRecord(
        id=name,
        label=label,
        norm=name.lower(),
        rkey=None,
        kana=False,
        existing=existing,
        existing_label=label if existing else None,
        **kw,  # type: ignore[arg-type]
    )


def test_created_updated_and_referenced_with_what_changed() -> None:
    plan = MergePlan(
        entities=[
            _entity("Knight"),
            _entity("Dragon", existing=True),
            _entity("Cave", "Place", existing=True),
            _entity("Kiji", "Animal", existing=True, aliases=["きじ"]),
            _entity("Oni", "Monster", existing=True),
        ],
        relations=[
            RelationRecord("Knight", "DEFEATS", "Dragon"),
            RelationRecord("Dragon", "LIVES_IN", "Cave"),
        ],
    )
    state = {
        "Dragon": {"type": "Character", "aliases": []},
        "Cave": {"type": "Place", "aliases": []},
        "Kiji": {"type": "Animal", "aliases": []},
        "Oni": {"type": "Character", "aliases": []},
    }
    existing = {("Dragon", "LIVES_IN", "Cave")}
    found = {h.entity_id: h for h in entity_history(plan, state, existing)}
    assert found["Knight"].kind == "created"
    assert found["Knight"].changes == ("type Character", "+ Knight -[DEFEATS]→ Dragon")
    assert found["Dragon"].kind == "updated"
    assert found["Dragon"].changes == ("+ Knight -[DEFEATS]→ Dragon",)
    assert found["Cave"].kind == "referenced"
    assert found["Cave"].changes == ("= Dragon -[LIVES_IN]→ Cave",)
    assert (found["Kiji"].kind, found["Kiji"].changes) == ("updated", ("alias きじ",))
    assert found["Oni"].changes == ("type Character → Monster",)


def test_stored_entries_round_trip_and_carry_the_document_prefix() -> None:
    doc = DocumentInfo("abc123", "story.txt", "sha", "en", 10)
    (entry,) = entity_history(MergePlan([_entity("Knight")], []), {}, set())
    stored = history_entry(doc, entry, "2026-01-01T00:00:00+00:00")
    assert stored.startswith("abc123:")
    parsed = parse_history(stored)
    assert parsed == {
        "document_id": "abc123",
        "document_name": "story.txt",
        "kind": "created",
        "changes": ["type Character"],
        "at": "2026-01-01T00:00:00+00:00",
    }
    assert parse_history("abc123:{not json") is None
