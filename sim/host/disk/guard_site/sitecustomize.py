"""Imported by Python at start-up (it is on PYTHONPATH in sim-host processes): writes into a full virtual mount fail."""

from specops.sim.host.disk.write_guard import install

install()
