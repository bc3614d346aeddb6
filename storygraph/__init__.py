"""StoryGraph: GraphRAG over stories, on embedded FalkorDB or Neo4j, built on LangChain."""

__version__ = "0.1.0"
