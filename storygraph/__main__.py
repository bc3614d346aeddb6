"""Entry point for `python -m storygraph`."""

import sys

from storygraph.cli import main, stop_on_sigterm

stop_on_sigterm()
sys.exit(main())
