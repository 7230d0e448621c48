"""What a download's target directory holds, measured on the host, against what is expected.

hf (and snapshot_download) with a local dir moves each file into place only
once it is complete; while a file is in flight its bytes sit in
`.cache/huggingface/download/*.incomplete`. So a file at its path with its
stored size is done, and the in-flight bytes are the .incomplete files.
huggingface_hub 2.x drops a failed file's partial bytes (a fresh temporary
file per process), older versions resume them: either way complete files are
kept and a new run fetches only the rest.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass

from ..hosts import DetachedProcess, Host, RemoteFileNotFound, leader_alive
from ..hosts.base import HELPER_TIMEOUT_S
from .models import ExpectedFile

_PARTIALS_DIR = ".cache/huggingface/download/"

# One round trip for download_status: the process's ps line, then the target's files, then the log. Liveness is
# read first, so a process seen exited has written all of its log. Positional parameters: pid, target, log.
_SNAPSHOT = (
    'echo "== ps"; ps -o pid=,pgid=,stat= -p "$1"; '
    'echo "== find"; find "$2" -type f -printf \'%s\\t%P\\n\' 2>/dev/null; '
    'echo "== log"; cat -- "$3" 2>/dev/null; exit 0'
)

# Prints the nearest existing directory of $1 and df's POSIX line for it (the target may not exist yet).
_DF_NEAREST = 'd=$1; while [ ! -e "$d" ]; do d=$(dirname -- "$d"); done; df -P -B1 -- "$d"'


@dataclass(frozen=True)
class TargetScan:
    """Per-file sizes under the target (relative paths), and the bytes of in-flight partial files."""

    sizes: dict[str, int]
    in_flight_bytes: int


@dataclass(frozen=True)
class Snapshot:
    """What the host shows about a download at one moment."""

    running: bool
    scan: TargetScan
    log: str


@dataclass(frozen=True)
class Progress:
    complete: list[ExpectedFile]
    missing: list[ExpectedFile]
    stored_present: int
    done_listed: int

    @property
    def listed_complete(self) -> int:
        return sum(f.listed_bytes for f in self.complete)


def scan_target(host: Host, target_dir: str) -> TargetScan:
    done = host.run(
        ["find", target_dir, "-type", "f", "-printf", "%s\\t%P\\n"], timeout=HELPER_TIMEOUT_S, idempotent=True
    )
    # find exits 1 when the directory does not exist yet: nothing there.
    return _parse_find(done.stdout)


def snapshot(host: Host, process: DetachedProcess, target_dir: str) -> Snapshot:
    done = host.run(
        ["sh", "-c", _SNAPSHOT, "sh", str(process.pid), target_dir, process.log_path],
        timeout=HELPER_TIMEOUT_S,
        idempotent=True,
    ).check()
    _, _, rest = done.stdout.partition("== ps\n")
    ps_line, _, rest = rest.partition("== find\n")
    found, _, log = rest.partition("== log\n")
    return Snapshot(running=leader_alive(ps_line, process.pid, process.pgid), scan=_parse_find(found), log=log)


def _parse_find(output: str) -> TargetScan:
    sizes: dict[str, int] = {}
    in_flight = 0
    for line in output.splitlines():
        size, sep, path = line.partition("\t")
        if not sep or not size.isdigit():
            continue
        if path.startswith(_PARTIALS_DIR) and path.endswith(".incomplete"):
            in_flight += int(size)
        else:
            sizes[path] = int(size)
    return TargetScan(sizes=sizes, in_flight_bytes=in_flight)


def measure(files: list[ExpectedFile], scan: TargetScan) -> Progress:
    """Complete files compare stored size with stored size; in-flight bytes count in listed units by the
    ratio of listed to stored bytes still missing (1 on a real host)."""
    complete = [f for f in files if scan.sizes.get(f.path) == f.stored_bytes]
    missing = [f for f in files if scan.sizes.get(f.path) != f.stored_bytes]
    stored_missing = sum(f.stored_bytes for f in missing)
    listed_missing = sum(f.listed_bytes for f in missing)
    in_flight = min(scan.in_flight_bytes, stored_missing)
    ratio = listed_missing / stored_missing if stored_missing else 1.0
    stored_present = sum(f.stored_bytes for f in complete) + in_flight
    done_listed = sum(f.listed_bytes for f in complete) + round(in_flight * ratio)
    return Progress(complete=complete, missing=missing, stored_present=stored_present, done_listed=done_listed)


def config_parses(host: Host, target_dir: str, files: list[ExpectedFile]) -> bool | None:
    """Whether the downloaded config.json is JSON; None when config.json was not among the files."""
    if not any(f.path == "config.json" for f in files):
        return None
    try:
        json.loads(host.read_file(posixpath.join(target_dir, "config.json")))
    except (RemoteFileNotFound, ValueError):
        return False
    return True


def free_space(host: Host, path: str) -> dict[str, object]:
    """df's figures for the filesystem `path` is (or will be) on; empty when df cannot tell."""
    done = host.run(["sh", "-c", _DF_NEAREST, "sh", path], timeout=HELPER_TIMEOUT_S, idempotent=True)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    if not done.ok or len(lines) < 2:
        return {}
    fields = lines[-1].split(None, 5)
    if len(fields) < 6 or not all(x.isdigit() for x in fields[1:4]):
        return {}
    size, used, avail = (int(x) for x in fields[1:4])
    return {
        "mount_point": fields[5],
        "size_bytes": size,
        "used_bytes": used,
        "avail_bytes": avail,
        "use_percent": fields[4],
        "avail_human": human_bytes(avail),
    }


def human_bytes(n: int) -> str:
    """Decimal units, as the Hub shows sizes."""
    value = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.2f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")
