"""One path on every node: a host path (what the node's own `/` calls it) and where a command on a node finds it.

On a real node the two are the same. A simulated node's filesystem is a directory tree on this machine
(sim/world/layout.py): its commands take real paths inside its root, so `/data/models/X` of a sim node is
`<root>/data/models/X`, and another world's root is not part of its filesystem at all. Comparing nodes by
host path is what makes "the same path on every node" (a model, a shared mount) mean the same on both.
"""

from __future__ import annotations

import posixpath


def host_path(path: str, sim_root: str | None) -> str:
    """`path` as the node itself names it: a simulated node's real path without its root."""
    path = posixpath.normpath(path)
    if not sim_root:
        return path
    root = posixpath.normpath(sim_root)
    if path == root:
        return "/"
    if path.startswith(root.rstrip("/") + "/"):
        return "/" + path[len(root.rstrip("/")) + 1 :]
    return path


def node_path(path: str, sim_root: str | None) -> str:
    """Where a command on the node finds host path `path`: under a simulated node's root (a path already inside
    that root stays as it is); itself on a real node."""
    path = posixpath.normpath(path)
    if not sim_root:
        return path
    root = posixpath.normpath(sim_root)
    if path == root or path.startswith(root.rstrip("/") + "/"):
        return path
    return posixpath.normpath(root + "/" + path.lstrip("/"))


def same_path_on(path: str, from_root: str | None, to_root: str | None) -> str:
    """`path` as one node names it, where another node finds the same host path: the very same on real nodes,
    moved from one simulated node's root to the other's. A relative or ~ path is left for each node to resolve."""
    if from_root == to_root or not path.startswith("/"):
        return path
    return node_path(host_path(path, from_root), to_root)
