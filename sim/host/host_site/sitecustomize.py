"""Imported by Python at start-up (host_site/ is first on PYTHONPATH in the programs a sim host's `python` runs):
each hook module's `install()` decides for itself whether this process needs it. A new hook is one more line."""

import importlib

HOOKS = (
    "specops.sim.host.host_time",  # the modelled host's clock, for the programs the host runs (first: later
    # imports bind the patched clocks)
    "specops.sim.host.disk.write_guard",  # writes into a full virtual mount fail with ENOSPC
    "specops.sim.host.disk.allocation",  # st_blocks on a virtual mount count what its df counts
    "specops.sim.host.process_view",  # /proc lists the host's own processes, not every world's
)

for _hook in HOOKS:
    importlib.import_module(_hook).install()
