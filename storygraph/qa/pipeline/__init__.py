"""The question answering engine: its stages composed in one place (factory), run in order
(engine), traced and bounded by a deadline."""
