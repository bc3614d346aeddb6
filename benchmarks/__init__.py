"""StoryGraph benchmarks: `python -m benchmarks [--quick] [--only NAME] [--json PATH]`.

Each benchmark measures its own baseline in the same run and reports ratios, so the tables
survive a noisy shared machine. Results are printed as Markdown tables (docs/BENCHMARKS.md).
"""
