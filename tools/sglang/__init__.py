"""SGLang on a host: build the launch command, check it against the installed SGLang, launch, watch, stop.

    server = launch_server(ctx, LaunchArgs(config=ServerConfig(model_path="~/models/Kimi-K2.6", tp=8, ep=4)))
    status = server_status(ctx, StatusArgs(server=server))
    stop_server(ctx, StopArgs(server=server))

One concept per module: config (ServerConfig), command (argv), capabilities
(--help, cached per host), preflight (SGLang's rules and flags), readiness
(log line and /health), diagnosis (why a launch failed), handle
(RunningServer and its record on the host), launch, stop (and restart), status.
"""

from .capabilities import SglangCapabilities, parse_help, read_capabilities
from .command import launch_argv, launch_flags, needed_flags
from .config import ServerConfig, SpeculativeAlgorithm
from .diagnosis import Diagnosis, LaunchCause, diagnose
from .errors import (
    LaunchFailed,
    ServerNotOurs,
    SglangNotInstalled,
    SglangRuleViolation,
    SglangTooOld,
    StopIncomplete,
    UnsupportedFlags,
)
from .handle import RunningServer
from .launch import LaunchArgs, launch_server
from .preflight import check_launch, check_rules, check_supported
from .server_http import ServerInfoSummary, server_url
from .status import ServerStatus, StatusArgs, server_status
from .stop import RestartArgs, RestartResult, StopArgs, StopResult, restart_server, stop_server

__all__ = [
    "Diagnosis",
    "LaunchArgs",
    "LaunchCause",
    "LaunchFailed",
    "RestartArgs",
    "RestartResult",
    "RunningServer",
    "ServerConfig",
    "ServerInfoSummary",
    "ServerNotOurs",
    "ServerStatus",
    "SglangCapabilities",
    "SglangNotInstalled",
    "SglangRuleViolation",
    "SglangTooOld",
    "SpeculativeAlgorithm",
    "StatusArgs",
    "StopArgs",
    "StopIncomplete",
    "StopResult",
    "UnsupportedFlags",
    "check_launch",
    "check_rules",
    "check_supported",
    "diagnose",
    "launch_argv",
    "launch_flags",
    "launch_server",
    "needed_flags",
    "parse_help",
    "read_capabilities",
    "restart_server",
    "server_status",
    "server_url",
    "stop_server",
]
