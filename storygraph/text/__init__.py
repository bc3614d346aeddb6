"""Text handling: decoding uploads, Aozora markup, chunking, names and identifiers."""
