"""The agent's escape hatch: run a command on the host to look at something.

Read-only commands run freely; anything else needs the policy's permission
(ToolContext.shell_may_change). Every command has a timeout and its output is
capped, so a stray `cat` of a weight file cannot flood the model. Commands
that would print secrets (the environment, token files, keys) are refused.
"""

from __future__ import annotations

import posixpath

from pydantic import BaseModel, ConfigDict, Field

from .context import ToolContext
from .errors import ErrorKind, InvalidToolInput, ToolError
from .registry import tool

# Programs that only look. Each maps to the arguments that would make it change things.
READ_ONLY: dict[str, tuple[str, ...]] = {
    "ls": (),
    "cat": (),
    "head": (),
    "tail": (),
    "wc": (),
    "stat": (),
    "file": (),
    "du": (),
    "df": (),
    "free": (),
    "nproc": (),
    "uname": (),
    "hostname": (),
    "uptime": (),
    "whoami": (),
    "id": (),
    "date": (),
    "nvidia-smi": (
        "-r",
        "--gpu-reset",
        "-pm",
        "--persistence-mode",
        "-pl",
        "--power-limit",
        "-e",
        "--ecc-config",
        "-c",
        "--compute-mode",
        "-mig",
        "--multi-instance-gpu",
        "-ac",
        "-rac",
        "-lgc",
        "-rgc",
    ),
    "ps": (),
    "pgrep": (),
    "top": (),
    "ss": (),
    "lsof": (),
    "lsblk": (),
    "findmnt": (),
    "mount": (),
    "grep": (),
    "which": (),
    "readlink": (),
    "realpath": (),
    "sha256sum": (),
    "md5sum": (),
    "find": ("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"),
    "python3": (),
    "python": (),
    "pip": ("install", "uninstall", "download", "wheel"),
    "hf": ("download", "upload", "delete", "rm", "prune", "login", "logout", "repo", "jobs", "auth"),
    "journalctl": ("--rotate", "--vacuum-size", "--vacuum-time", "--vacuum-files", "--flush"),
}
# python and pip are read-only only in these forms.
_PYTHON_READ_ONLY = (("--version",), ("-V",), ("-m", "pip", "list"), ("-m", "pip", "show"), ("-m", "pip", "freeze"))
# What would print secrets: the environment, Hub tokens, SSH keys, credential files.
_SECRET_FILES = {"token", "stored_tokens", ".netrc", "credentials", "environ", ".git-credentials", ".env"}
_SECRET_PROGRAMS = ("env", "printenv", "set", "export", "declare")
# Directories whose files are all secrets: naming anything under them is refused. (The Hugging Face
# cache is not one: its token files are caught by name, and its model files are what the agent sizes.)
_SECRET_DIRS = (".ssh", ".config/gcloud", ".aws", ".docker")
# Programs that are read-only only without positional arguments (with one they set something).
_NO_OPERANDS = {"hostname": ("-F", "--file", "-b", "--boot"), "mount": ()}


def _names_a_secret(arg: str) -> bool:
    name = posixpath.basename(arg.rstrip("/"))
    if name in _SECRET_FILES or name.startswith(("id_rsa", "id_ed25519", "id_ecdsa")):
        return True
    path = arg.rstrip("/")
    return any(path.endswith(d) or f"{d}/" in path for d in _SECRET_DIRS)


def reveals_secrets(argv: list[str]) -> bool:
    """Would print secrets: the environment (`env`, `ps e`), token or key files, or a recursive grep that
    could reach them."""
    program = argv[0].rsplit("/", 1)[-1]
    if program in _SECRET_PROGRAMS or any(_names_a_secret(arg) for arg in argv[1:]):
        return True
    # BSD-style ps options (no dash) with `e` print each process's environment: tokens included.
    if program == "ps" and any(not arg.startswith("-") and "e" in arg for arg in argv[1:]):
        return True
    # A recursive grep of a home or / reads token files whatever it is pointed at.
    if program == "grep" and any(
        arg in ("-r", "-R", "--recursive", "--dereference-recursive", "--directories=recurse")
        or (arg.startswith("-") and not arg.startswith("--") and ("r" in arg or "R" in arg))
        for arg in argv[1:]
    ):
        return True
    return False


OUTPUT_CAP_BYTES = 64 * 1024


class ShellArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    argv: list[str] = Field(min_length=1, description="The command and its arguments (no shell: no pipes, no globbing)")
    reason: str = Field(min_length=1, description="Why the agent runs it (recorded with the call)")
    timeout_s: float = Field(default=30.0, gt=0, le=600)
    cwd: str | None = None


class ShellResult(BaseModel):
    argv: list[str]
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool = Field(description="True when output was cut at the cap")
    read_only: bool = Field(description="Whether the command was judged read-only")
    duration_s: float


class ShellCommandRefused(InvalidToolInput):
    kind = ErrorKind.SHELL_REFUSED


class ShellCommandNeedsPermission(ToolError):
    kind = ErrorKind.SHELL_NEEDS_PERMISSION


def is_read_only(argv: list[str]) -> bool:
    program = argv[0].rsplit("/", 1)[-1]
    if program not in READ_ONLY:
        return False
    if program in ("python", "python3"):
        return tuple(argv[1:]) in _PYTHON_READ_ONLY or tuple(argv[1:4]) in _PYTHON_READ_ONLY
    if program == "pip":
        return len(argv) > 1 and argv[1] in ("list", "show", "freeze", "--version")
    if program == "hf":
        return len(argv) > 1 and (argv[1] in ("version", "env", "--help", "--version") or argv[1:3] == ["cache", "ls"])
    if program == "date":  # `date -s X`, `date --set=X` or `date MMDDhhmm` set the clock; `date +%s` only formats
        return all(
            arg.startswith("+")
            or arg in ("-u", "--utc", "--universal", "-R", "--rfc-email")
            or arg.startswith(("-I", "--iso-8601", "--rfc-3339"))
            for arg in argv[1:]
        )
    if program in _NO_OPERANDS:
        setting = _NO_OPERANDS[program]
        return all(arg.startswith("-") and arg.split("=")[0] not in setting for arg in argv[1:]) and (
            program != "mount" or all(arg in ("-l", "--show-labels") for arg in argv[1:])
        )
    forbidden = READ_ONLY[program]
    return not any(arg == bad or arg.startswith(bad + "=") for arg in argv[1:] for bad in forbidden)


def _cap(text: str) -> tuple[str, bool]:
    data = text.encode()
    if len(data) <= OUTPUT_CAP_BYTES:
        return text, False
    return data[:OUTPUT_CAP_BYTES].decode(
        errors="ignore"
    ) + f"\n[... {len(data) - OUTPUT_CAP_BYTES} more bytes cut]", True


@tool("shell", mutates=True)
def shell(ctx: ToolContext, args: ShellArgs) -> ShellResult:
    """Run one command on the host to look at something (argv, no shell; read-only unless the run allows more)."""
    program = args.argv[0].rsplit("/", 1)[-1]
    if reveals_secrets(args.argv):
        raise ShellCommandRefused(
            f"{' '.join(args.argv)!r} would print secrets (environment, tokens or keys)",
            remedy="ask for the specific non-secret fact instead (e.g. `hf auth whoami` is not available either: "
            "report that a token is needed)",
        )
    if program in ("sh", "bash", "zsh", "dash"):
        raise ShellCommandRefused(
            "a shell would hide what runs behind it", remedy="run the program itself, one command per call"
        )
    read_only = is_read_only(args.argv)
    if not read_only and not ctx.shell_may_change:
        raise ShellCommandNeedsPermission(
            f"{' '.join(args.argv)!r} may change the host, and this run only allows read-only commands",
            remedy="use the typed tool for the change (download, free_space, launch_server, stop_server), "
            "or run with a policy that allows host changes",
            details={"argv": args.argv},
        )
    result = ctx.host.run(args.argv, timeout=args.timeout_s, cwd=ctx.resolve(args.cwd) if args.cwd else None)
    stdout, cut_out = _cap(result.stdout)
    stderr, cut_err = _cap(result.stderr)
    return ShellResult(
        argv=args.argv,
        exit_code=result.exit_code,
        stdout=stdout,
        stderr=stderr,
        timed_out=result.timed_out,
        truncated=cut_out or cut_err,
        read_only=read_only,
        duration_s=result.duration_s,
    )
