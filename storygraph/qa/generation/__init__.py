"""Writing the answer: the prompts, the model call, the checks a written reply goes through, the
cross-language rendering."""
