"""Which stories a question is about in a library, and the answer per story when several fit."""
