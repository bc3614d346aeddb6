"""Entry point for `python -m storygraph`."""

import gc
import sys

from storygraph.cli import main, stop_on_sigterm

stop_on_sigterm()
code = main()
# The command is over. Python's last garbage collection at exit would walk every object the
# command built only to free memory the process gives back anyway: 0.3-1.0 s after an `ask`
# that loaded the parser, at load ~7 (docs/ISSUES.md#startup-imports). Frozen objects are skipped by
# it; atexit handlers, non-daemon threads and finalizers run as before.
gc.freeze()
sys.exit(code)
