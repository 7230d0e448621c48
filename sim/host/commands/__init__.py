"""One module per executable on a sim host's PATH; each runs as `python -m` from a tiny shell wrapper."""

# Set by every wrapper script: the root of the world the executable belongs to.
ROOT_VARIABLE = "SPECOPS_SIM_ROOT"
