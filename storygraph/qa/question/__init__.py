"""Reading a question: its language, type, structure, names and translation (the only place a
question is parsed)."""
