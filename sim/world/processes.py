"""Whether a sim host's process (a server, a download) is still alive: what the registries ask of an entry.

The rule is the port map's (tools/hosts/port_map.py): the world's registries follow the same convention.
"""

from specops.tools.hosts.port_map import pid_alive

__all__ = ["pid_alive"]
