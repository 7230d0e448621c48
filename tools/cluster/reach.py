"""TCP reachability, checked FROM a node: can this node open a connection to ADDRESS:PORT?

Multi-node SGLang needs every node to reach rank 0's dist-init address (--dist-init-addr HOST:PORT);
that is checked, not assumed: a python3 one-off on each node connects with a socket and a timeout
(argv, no shell line), and the node's own words come back (connected, or the error text).

    tcp_reachable(ctx, "10.0.0.1", 5000, timeout_s=5)            # from ctx's node
    dist_init_reachable(contexts, "10.0.0.1", 5000)              # from every node; rank 0 listens meanwhile

Before a launch nothing listens on the dist-init port, and a refused connection proves little (a firewall
may answer for the host), so dist_init_reachable first starts a short-lived listener on rank 0 on that port
(python3, bounded by a deadline; it ends by itself once every node connected, and the command carries a
timeout besides), then connects from every node. A port already taken on rank 0 is said (`listener`): the
check then connects to what listens there.

Addresses and ports are the network's: on a simulated host (sim:, all on this machine) a program's port is
this machine's real port, not one of the world's virtual ports (Host.port_on_host maps those).
"""

from __future__ import annotations

import ipaddress
import json
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from specops.tools.context import ToolContext
from specops.tools.errors import InvalidToolInput
from specops.tools.hosts import CommandResult
from specops.tools.hosts.ssh_options import HOSTNAME
from specops.tools.probing import probe

from .names import node_names

MAX_TIMEOUT_S = 120.0
# What a node's python3 needs to start and answer, beyond the connect timeout itself.
_COMMAND_SLACK_S = 30.0

# argv: address, port, timeout (s). Connects until it succeeds or the timeout passes (a listener that is still
# starting refuses at first); prints one JSON line, exits 0 when it connected.
_CONNECT = r"""
import json, socket, sys, time
address, port, timeout = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
deadline = time.monotonic() + timeout
error = "no attempt"
while True:
    left = deadline - time.monotonic()
    if left <= 0:
        break
    try:
        with socket.create_connection((address, port), timeout=left):
            pass
        print(json.dumps({"reached": True, "elapsed_s": round(timeout - (deadline - time.monotonic()), 3)}))
        sys.exit(0)
    except socket.timeout:
        error = f"timed out after {timeout:g}s (nothing answered: a firewall, a wrong address, or no route)"
        break
    except OSError as exc:
        error = f"{type(exc).__name__}: {exc.strerror or exc}"
        if not isinstance(exc, ConnectionRefusedError):
            break
    time.sleep(min(0.1, max(deadline - time.monotonic(), 0)))
print(json.dumps({"reached": False, "error": error}))
sys.exit(1)
"""

# argv: port, connections expected, deadline (s). Binds every interface, as torch's TCPStore does; accepts (and
# lets the node close first) until that many connections came or the deadline passed. Prints JSON lines: bound (or why not), then
# how many connected.
_LISTEN = r"""
import errno, json, socket, sys, time
port, expected, window = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("", port))
    s.listen(64)
except OSError as exc:
    error = f"{type(exc).__name__}: {exc.strerror or exc}"
    print(json.dumps({"bound": False, "in_use": exc.errno == errno.EADDRINUSE, "error": error}), flush=True)
    sys.exit(2)
print(json.dumps({"bound": True}), flush=True)
deadline = time.monotonic() + window
accepted = 0
while accepted < expected:
    left = deadline - time.monotonic()
    if left <= 0:
        break
    s.settimeout(left)
    try:
        conn, _ = s.accept()
    except socket.timeout:
        break
    conn.settimeout(2)
    try:
        conn.recv(1)  # the node closes first: no TIME_WAIT left on this port for the server that binds it next
    except OSError:
        pass
    conn.close()
    accepted += 1
s.close()
print(json.dumps({"accepted": accepted}), flush=True)
"""


class TcpReach(BaseModel):
    """Whether one node opened a TCP connection to address:port."""

    model_config = ConfigDict(frozen=True)

    node: str = Field(description="The node the check ran on")
    address: str
    port: int
    reached: bool
    checked: bool = Field(description="False: the check itself could not run there (no python3, no answer)")
    error: str | None = Field(default=None, description="Why not, in the node's words")
    elapsed_s: float | None = None


class DistInitReach(BaseModel):
    """Every node's connection to rank 0's dist-init address."""

    address: str
    port: int
    listener: Literal["started", "port_in_use", "not_started", "none"] = Field(
        description="started: a check listener ran on rank 0 on the port; port_in_use: something already listens "
        "there (connected to instead); not_started: the listener could not run (see notes); none: not asked"
    )
    nodes: list[TcpReach]
    all_reached: bool
    unreached: list[str]
    notes: list[str]
    summary: str


def _check_target(address: str, port: int, timeout_s: float) -> None:
    """Refuse (InvalidToolInput) an address, port or timeout no check should be run with."""
    if not isinstance(address, str) or not address:
        raise InvalidToolInput("no address to connect to", remedy="give a host name or an IP address")
    try:
        ipaddress.ip_address(address)
    except ValueError:
        if not HOSTNAME.match(address) or address.startswith("["):
            raise InvalidToolInput(
                f"{address!r} is not a host name or an IP address",
                remedy="give a host name (letters, digits, '-' and '.') or an IPv4/IPv6 address without brackets",
                details={"address": address},
            ) from None
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise InvalidToolInput(
            f"port {port!r} is not a port", remedy="give a number from 1 to 65535", details={"port": port}
        )
    if not 0 < timeout_s <= MAX_TIMEOUT_S:
        raise InvalidToolInput(
            f"timeout {timeout_s!r}s is out of range",
            remedy=f"give more than 0 and at most {MAX_TIMEOUT_S:g} seconds",
            details={"timeout_s": timeout_s},
        )


def _last_json(text: str) -> dict[str, object] | None:
    for line in reversed(text.strip().splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            return data
    return None


def _reach(ctx: ToolContext, node: str, address: str, port: int, timeout_s: float) -> TcpReach:
    done = probe(
        ctx.host,
        ["python3", "-c", _CONNECT, address, str(port), f"{timeout_s:g}"],
        timeout=timeout_s + _COMMAND_SLACK_S,
    )
    said = _last_json(done.stdout)
    base = {"node": node, "address": address, "port": port}
    if said is None:
        why = (
            f"the check did not finish within {timeout_s + _COMMAND_SLACK_S:g}s"
            if done.timed_out
            else f"python3 exited {done.exit_code}: {(done.stderr or done.stdout).strip()[-300:] or 'no output'}"
        )
        return TcpReach(**base, reached=False, checked=False, error=f"could not run the check on {node}: {why}")
    if said.get("reached") is True:
        elapsed = said.get("elapsed_s")
        return TcpReach(
            **base, reached=True, checked=True, elapsed_s=float(elapsed) if isinstance(elapsed, int | float) else None
        )
    return TcpReach(**base, reached=False, checked=True, error=str(said.get("error") or "not reached"))


def tcp_reachable(ctx_from: ToolContext, address: str, port: int, timeout_s: float = 5.0) -> TcpReach:
    """Whether the node of `ctx_from` opens a TCP connection to address:port within timeout_s (retrying a refusal
    until then). Runs python3 on that node; InvalidToolInput for a bad address, port or timeout."""
    _check_target(address, port, timeout_s)
    return _reach(ctx_from, ctx_from.host.spec, address, port, timeout_s)


def dist_init_reachable(
    contexts: Sequence[ToolContext],
    rank0_address: str,
    port: int,
    *,
    timeout_s: float = 10.0,
    listen: bool = True,
) -> DistInitReach:
    """Every node's TCP connection to rank0_address:port (contexts[0] is rank 0), checked from each node at once.

    With `listen`, rank 0 listens on the port meanwhile (a python3 one-off that ends by itself); a port already
    in use there is said, and the nodes connect to what holds it.
    """
    _check_target(rank0_address, port, timeout_s)
    if not contexts:
        raise InvalidToolInput("no nodes to check from", remedy="give the group's contexts, rank 0 first")
    names = node_names(contexts)
    notes: list[str] = []
    listener: Literal["started", "port_in_use", "not_started", "none"] = "none"
    with ThreadPoolExecutor(max_workers=min(len(contexts), 16) + 1) as pool:
        listening = None
        if listen:
            window = timeout_s + 5.0
            listening = pool.submit(
                probe,
                contexts[0].host,
                ["python3", "-c", _LISTEN, str(port), str(len(contexts)), f"{window:g}"],
                timeout=window + _COMMAND_SLACK_S,
            )
            time.sleep(0.2)  # a head start; the connects retry a refusal until their timeout anyway
            if listening.done():  # it ended at once: the port is taken (or no python3)
                listener = _listener_state(listening.result(), port, notes)
        checks = [
            pool.submit(_reach, ctx, name, rank0_address, port, timeout_s)
            for ctx, name in zip(contexts, names, strict=True)
        ]
        results = [c.result() for c in checks]
        if listening is not None and listener == "none":
            listener = _listener_state(listening.result(), port, notes)
    unreached = [r.node for r in results if not r.reached]
    target = f"{rank0_address}:{port}"
    if unreached:
        summary = f"{len(unreached)} of {len(results)} node(s) could not reach {target}: " + "; ".join(
            f"{r.node}: {r.error}" for r in results if not r.reached
        )
    else:
        summary = f"every node ({len(results)}) reached rank 0's dist-init address {target}"
    return DistInitReach(
        address=rank0_address,
        port=port,
        listener=listener,
        nodes=results,
        all_reached=not unreached,
        unreached=unreached,
        notes=notes,
        summary=summary,
    )


def _listener_state(
    done: CommandResult, port: int, notes: list[str]
) -> Literal["started", "port_in_use", "not_started", "none"]:
    """What rank 0's check listener said: it bound the port, found it taken, or could not run."""
    said = [d for d in (_last_json(line) for line in done.stdout.splitlines()) if d is not None]
    if said and said[0].get("bound") is True:
        return "started"
    if said and said[0].get("in_use") is True:
        notes.append(f"port {port} is already in use on rank 0 ({said[0].get('error')}): connected to what holds it")
        return "port_in_use"
    why = said[0].get("error") if said else (done.stderr or done.stdout).strip()[-200:] or "no output"
    notes.append(f"the check listener did not start on rank 0 (exit {done.exit_code}): {why}")
    return "not_started"
