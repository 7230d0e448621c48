"""A sim host reached over real SSH: sessions land on the host, and the ssh_drop fault drops them."""

import pytest

from specops.sim.faults import SshDrop
from specops.sim.world.world import SimWorld
from specops.tools.hosts import ConnectionDropped, open_host

from ..tools.sshd import require_sshd

pytestmark = pytest.mark.slow  # more than a few seconds a test (`bash tests/run.sh --quick` leaves it out)


@pytest.fixture
def world_over_ssh(request):
    require_sshd()
    faults = getattr(request, "param", [])
    with SimWorld.start("seed-ct200", faults=faults) as world:
        world.start_ssh()
        yield world


def _ssh(world: SimWorld):
    return open_host(world.ssh.url, **world.ssh.options())


def test_ssh_sessions_land_on_the_sim_host(world_over_ssh):
    world = world_over_ssh
    with _ssh(world) as host:
        smi = host.run(["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader"], timeout=30).check()
        assert smi.stdout.splitlines()[0] == "NVIDIA RTX PRO 6000 Blackwell Server Edition, 97887 MiB"
        pwd = host.run(["pwd"], timeout=10).check()
        assert pwd.stdout.strip() == "/root"  # the host's home, as it names it
        df = host.run(["df", "-h", "/"], timeout=10).check()
        assert "1000G  971G   29G  98%" in df.stdout
        # Files travel over SFTP, which runs behind the same forced command.
        host.write_file("notes/hello.txt", b"hi")
        assert (world.layout.home / "notes" / "hello.txt").read_bytes() == b"hi"
        assert host.read_file("/root/notes/hello.txt") == b"hi"
        assert host.exists("/root/notes/hello.txt") and not host.exists(str(world.layout.home / "notes" / "x"))
        # A text file names host paths on either side of the link; on this machine it names the real ones.
        host.write_file("/root/notes/where.txt", b"model at /root/models/x\n")
        assert (world.layout.home / "notes" / "where.txt").read_text() == f"model at {world.layout.home}/models/x\n"
        assert host.read_file("/root/notes/where.txt") == b"model at /root/models/x\n"
        assert host.run(["cat", "/root/notes/where.txt"], timeout=10).stdout == "model at /root/models/x\n"


@pytest.mark.parametrize("world_over_ssh", [[SshDrop(after_commands=1, times=1)]], indirect=True)
def test_ssh_drop_fault_drops_the_connection_under_the_client(world_over_ssh):
    world = world_over_ssh
    with _ssh(world) as host:
        host.run(["true"], timeout=10).check()
        with pytest.raises(ConnectionDropped) as dropped:
            host.run(["nvidia-smi", "-L"], timeout=10)
        assert dropped.value.may_have_run
        # The link comes back; a command safe to repeat goes through after the reconnect.
        again = host.run(["nvidia-smi", "-L"], timeout=10, idempotent=True).check()
        assert again.stdout.count("GPU ") == 8
