"""Several hosts as one deployment (issue 16, "Beyond one host"): a host group, the facts and checks every
node must pass before anything changes, and TCP reachability checked from each node.

Not model-facing tools (yet): the CLI's `--host a,b` and the agent call these directly.
"""
