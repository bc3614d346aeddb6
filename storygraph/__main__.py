"""Entry point for `python -m storygraph`."""

import sys

from storygraph.cli import main

sys.exit(main())
