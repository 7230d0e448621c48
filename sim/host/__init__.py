"""A simulated host's sandbox: the tree builder (`specops.sim.host.build.build_host`) and the
executables on its PATH (`commands/`), with what they render (`gpu/`, `disk/`, `memory.py`).

Nothing is re-exported here on purpose: every command on a sim host is a fresh
process that imports this package, and its start-up must stay cheap.
"""
