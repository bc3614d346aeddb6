"""Graph stores: one Cypher code path over embedded FalkorDB or Neo4j 5 (design §4)."""

from storygraph.store.graph_store import GraphStore
from storygraph.store.runner import Runner

__all__ = ["GraphStore", "Runner"]
