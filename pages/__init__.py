"""The app's tabs: one module per tab, each with `render(services)` (driven by app.py)."""
