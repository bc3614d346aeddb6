"""Retrieval evaluation on fixed graphs: `python -m storygraph eval` (docs/RETRIEVAL_RESULTS.md)."""
