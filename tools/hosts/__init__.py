"""Hosts the agent's tools run on: one interface (Host), two backends (local, ssh), and kinds others register.

with open_host("ssh://root@gpu-1") as host:
    host.run(["nvidia-smi"], timeout=30).check()
"""

from ._shell import check_argv, check_env, leader_alive
from .base import Host
from .errors import (
    CommandFailed,
    ConnectionDropped,
    HostAuthFailed,
    HostError,
    HostKeyMismatch,
    HostKeyUnknown,
    HostNotRunning,
    HostUnreachable,
    InvalidHostSpec,
    PortNotListening,
    RemoteFileNotFound,
    UnknownHostName,
)
from .factory import open_host
from .kinds import HostKind, HostRequest, Provisioned, Provisioner, register_host_kind, register_provisioner
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
    "HostKind",
    "HostRequest",
    "HostUnreachable",
    "InvalidHostSpec",
    "LocalHost",
    "PortNotListening",
    "Provisioned",
    "Provisioner",
    "RemoteFileNotFound",
    "HostNotRunning",
    "SshOptions",
    "SshTarget",
    "UnknownHostName",
    "check_argv",
    "check_env",
    "leader_alive",
    "open_host",
    "register_host_kind",
    "register_provisioner",
    "parse_host_spec",
]
