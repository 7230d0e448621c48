"""`python -m specops.cli.golden [--rerecord] [--only NAME]`: the golden transcripts (agent/replay/golden.py),
replayed, or recorded again on the built-in simulated host, which this entry point offers as `specops` does."""

import sys

from ..agent.replay.golden import main
from .simulated_hosts import offer_simulated_hosts

if __name__ == "__main__":
    offer_simulated_hosts()
    sys.exit(main())
