"""How SGLang tools fail: each error says what happened, with the facts, and what to do next."""

from __future__ import annotations

from ..errors import ErrorKind, InvalidToolInput, ToolError


class SglangNotInstalled(ToolError):
    """`python3 -c 'import sglang'` fails on the host: there is nothing to launch."""

    kind = ErrorKind.SGLANG_NOT_INSTALLED


class UnsupportedFlags(ToolError):
    """The installed SGLang's `--help` lacks flags (or choices) the configuration needs. Nothing was started."""

    kind = ErrorKind.UNSUPPORTED_FLAGS


class SglangTooOld(UnsupportedFlags):
    """The installed SGLang predates a feature the configuration needs (DFLASH among them). Nothing was started."""

    kind = ErrorKind.SGLANG_TOO_OLD


class SglangRuleViolation(InvalidToolInput):
    """SGLang itself would refuse this combination at start (DFLASH with pp > 1 or DP attention). Nothing was started."""

    kind = ErrorKind.SGLANG_RULE_VIOLATION


class LaunchFailed(ToolError):
    """The server did not become ready. `details` carries the cause, the matching log lines and the log tail."""

    kind = ErrorKind.LAUNCH_FAILED

    @property
    def cause(self) -> str:
        return str(self.details.get("cause", "crash"))


class ServerNotOurs(InvalidToolInput):
    """A stop or restart was asked for a server this run did not start, without the explicit permission."""

    kind = ErrorKind.SERVER_NOT_OURS


class StopIncomplete(ToolError):
    """The server's processes are gone but its port or GPU memory was not released in time."""

    kind = ErrorKind.STOP_INCOMPLETE
