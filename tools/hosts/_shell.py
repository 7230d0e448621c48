"""POSIX shell lines the host layer sends, built from argv with every word quoted.

Nothing here interpolates text into a shell line unquoted: each argument goes
through shlex.quote, environment names are checked to be identifiers, and the
only literal shell code is the fixed wrappers below.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

# Runs "$@" in a new session (so its pgid is its own pid) after printing that pid
# as the first line of stdout: whoever runs the line learns which process group
# to kill on a timeout. `setsid -w` waits when setsid has to fork (the caller is
# already a group leader), so the exit status is the command's own. The trailing
# `exit` keeps sh from exec'ing setsid directly, which would force that fork.
_REPORT_PGID = 'echo "$$"; exec "$@"'

# Same, for a detached process: the pid and the host's clock just before its program starts (what a start-up is
# timed from, not a reading taken a round trip earlier) go to fd 3 (the caller's stdout), which is then closed so
# the caller's channel ends while the process runs on.
_REPORT_PID_DETACHED = 'echo "$$ $(date +%s.%N 2>/dev/null)" >&3; exec 3>&-; exec "$@"'


def check_argv(argv: Sequence[str]) -> list[str]:
    """argv as a list, refusing what no exec can take."""
    if isinstance(argv, str):
        raise TypeError("argv must be a sequence of arguments, not one string: use [program, arg, ...]")
    words = list(argv)
    if not words:
        raise ValueError("argv is empty: give at least the program to run")
    for word in words:
        if not isinstance(word, str):
            raise TypeError(f"argv items must be str, got {type(word).__name__}: {word!r}")
        if "\0" in word:
            raise ValueError(f"argv item contains a NUL byte: {word!r}")
    return words


def check_env(env: Mapping[str, str] | None) -> dict[str, str]:
    pairs = dict(env or {})
    for name, value in pairs.items():
        if not _ENV_NAME.match(name):
            raise ValueError(f"environment variable name {name!r} is not a shell identifier")
        if not isinstance(value, str) or "\0" in value:
            raise ValueError(f"environment variable {name} must be a str without NUL bytes")
    return pairs


def _cd(cwd: str | None) -> str:
    return f"cd {shlex.quote(cwd)} && " if cwd is not None else ""


def _env(env: Mapping[str, str] | None) -> str:
    pairs = check_env(env)
    return "env " + " ".join(shlex.quote(f"{k}={v}") for k, v in pairs.items()) + " " if pairs else ""


def run_line(argv: Sequence[str], *, cwd: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """A line whose stdout starts with the command's pgid, then carries the command's own output."""
    words = " ".join(shlex.quote(w) for w in check_argv(argv))
    inner = f'{_cd(cwd)}{_env(env)}setsid -w sh -c {shlex.quote(_REPORT_PGID)} sh {words}; exit "$?"'
    # `exec sh` so the line means the same whatever the login shell (bash, zsh, fish), and
    # because bash would add a "Killed" job notice to stderr when a timeout kills the group.
    return f"exec sh -c {shlex.quote(inner)}"


def env_exports(env: Mapping[str, str] | None) -> str:
    """`export K='v'` lines for a shell to read from its stdin: values never appear in a command line.

    A detached process lives long, and anything in its (or its launcher's) argv
    shows in every `ps` on the host: tokens travel this way instead.
    """
    return "".join(f"export {k}={shlex.quote(v)}\n" for k, v in check_env(env).items())


READ_EXPORTS = 'eval "$(cat)"; '


def detached_line(argv: Sequence[str], *, log_path: str, cwd: str | None = None) -> str:
    """A line that starts argv in its own session, output appended to log_path, and prints its pid and the host's
    time (`date +%s.%N`) just before argv runs.

    It carries no environment: start_detached passes that (secrets included) by
    stdin (env_exports), never in a command line.
    """
    words = " ".join(shlex.quote(w) for w in check_argv(argv))
    log = shlex.quote(log_path)
    log_dir = shlex.quote(log_path.rsplit("/", 1)[0] or "/") if "/" in log_path else None
    mkdir = f"mkdir -p -- {log_dir} && " if log_dir else ""
    return (
        f"{_cd(cwd)}{mkdir}setsid nohup sh -c {shlex.quote(_REPORT_PID_DETACHED)} sh {words}"
        f" 3>&1 >>{log} 2>&1 </dev/null &"
    )


def split_pgid_line(stdout: bytes) -> tuple[int | None, bytes]:
    """(pgid, the rest) from the output of a run_line; pgid is None when the wrapper never started."""
    head, sep, rest = stdout.partition(b"\n")
    if sep and head.strip().isdigit():
        return int(head.strip()), rest
    return None, stdout


def live_group_members(ps_output: str, pgid: int) -> list[int]:
    """Pids in process group `pgid` that are not zombies, from `ps -A -o pid=,pgid=,stat=`."""
    members = []
    for line in ps_output.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[1] == str(pgid) and not fields[2].startswith("Z"):
            members.append(int(fields[0]))
    return members


def leader_alive(ps_output: str, pid: int, pgid: int) -> bool:
    """Whether `pid` is alive, not a zombie, and still leads group `pgid` (a reused pid would not)."""
    for line in ps_output.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[0] == str(pid):
            return fields[1] == str(pgid) and not fields[2].startswith("Z")
    return False
