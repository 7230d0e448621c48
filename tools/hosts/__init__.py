"""Hosts the agent's tools run on: one interface (Host), three backends (local, ssh, sim).

with open_host("ssh://root@gpu-1") as host:
    host.run(["nvidia-smi"], timeout=30).check()
"""

from ._shell import leader_alive
from .base import Host
from .errors import (
    CommandFailed,
    ConnectionDropped,
    HostAuthFailed,
    HostError,
    HostKeyMismatch,
    HostKeyUnknown,
    HostUnreachable,
    InvalidHostSpec,
    PortNotListening,
    RemoteFileNotFound,
    SimHostNotRunning,
    UnknownHostName,
)
from .factory import open_host
from .local import LocalHost
from .results import CommandResult, DetachedProcess
from .spec import parse_host_spec
from .ssh_options import SshOptions, SshTarget

__all__ = [
    "CommandFailed",
    "CommandResult",
    "ConnectionDropped",
    "DetachedProcess",
    "Host",
    "HostAuthFailed",
    "HostError",
    "HostKeyMismatch",
    "HostKeyUnknown",
    "HostUnreachable",
    "InvalidHostSpec",
    "LocalHost",
    "PortNotListening",
    "RemoteFileNotFound",
    "SimHostNotRunning",
    "SshOptions",
    "SshTarget",
    "UnknownHostName",
    "leader_alive",
    "open_host",
    "parse_host_spec",
]
