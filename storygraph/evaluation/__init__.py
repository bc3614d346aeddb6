"""Retrieval evaluation on fixed graphs: `python -m storygraph eval`
(docs/ISSUES.md#retrieval-stages)."""
