"""Language-model plumbing: the embedded model's files and its local llama.cpp server."""
