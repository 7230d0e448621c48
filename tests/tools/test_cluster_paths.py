"""Host paths across nodes (tools/cluster/paths.py): a real node's paths are its own; a simulated node's are
real paths inside its root, compared without it."""

from specops.tools.cluster.paths import host_path, node_path


def test_a_real_node_keeps_its_paths():
    assert host_path("/data/models/X/", None) == "/data/models/X"
    assert node_path("/data/models/X", None) == "/data/models/X"


def test_a_simulated_node_maps_host_paths_under_its_root():
    root = "/tmp/world-a"
    assert host_path("/tmp/world-a/root/models/X", root) == "/root/models/X"
    assert host_path("/tmp/world-a", root) == "/"
    assert host_path("/tmp/world-ab/root", root) == "/tmp/world-ab/root"  # another world's root is not inside
    assert node_path("/root/models/X", root) == "/tmp/world-a/root/models/X"
    assert node_path("/tmp/world-a/data", root) == "/tmp/world-a/data"  # already inside: as it is
    # One host path, two worlds: two different real paths.
    assert node_path(host_path("/tmp/world-a/root/m", root), "/tmp/world-b") == "/tmp/world-b/root/m"
