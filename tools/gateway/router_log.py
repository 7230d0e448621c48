"""Reading the router's log: which worker it gave up on, and why it exited.

The router (sglang-router 0.3.2) logs with ANSI colours even into a file. It
registers workers in the background after it starts serving: each failed health
check of a worker is a `Step failed ... for <url>: ... will_retry=true` line, and
once its --worker-startup-timeout-secs is spent a
`Failed job: type=AddWorker, worker=<url>, error=<why>` line. When it cannot
start (a port taken) the Python launcher logs `Error starting router: <why>` and
exits with a traceback ending in `RuntimeError: ...` or
`pyo3_runtime.PanicException: ...`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_FAILED_JOB = re.compile(r"Failed job: type=AddWorker, worker=(?P<url>\S+?), error=(?P<error>.*)$")
_STEP_FAILED = re.compile(r"Step failed .*?failed for (?P<url>https?://[^\s:]+:\d+)(?::|\s).*?will_retry=true")
_EXIT = re.compile(r"^(?:Error starting router: .+|[\w.]*(?:Error|Exception): .+|thread '.*' panicked at .*)$")


def plain(text: str) -> str:
    """The log without its colour codes."""
    return _ANSI.sub("", text)


@dataclass(frozen=True)
class WorkerFailure:
    url: str
    line: str
    final: bool  # the router gave up on it (Failed job); else its last failed check, to be retried


def worker_failures(log: str) -> dict[str, WorkerFailure]:
    """The workers the log shows failing, by URL: the router's final word where it gave one, else the last retry."""
    found: dict[str, WorkerFailure] = {}
    for line in plain(log).splitlines():
        if m := _FAILED_JOB.search(line):
            url = m["url"].rstrip(",")
            found[url] = WorkerFailure(url=url, line=line[m.start() :].strip(), final=True)
        elif (m := _STEP_FAILED.search(line)) and not (m["url"] in found and found[m["url"]].final):
            found[m["url"]] = WorkerFailure(url=m["url"], line=_step_error(line), final=False)
    return found


def _step_error(line: str) -> str:
    m = re.search(r'error="(.*?)"(?: will_retry|$)', line)
    return m.group(1) if m else line.strip()


def exit_line(log: str) -> str | None:
    """The line that says why the router exited: its launcher's error or the exception's last line."""
    lines = [line.strip() for line in plain(log).splitlines()]
    return next((line for line in reversed(lines) if _EXIT.match(line)), None)


def tail_lines(log: str, count: int = 40) -> str:
    return "\n".join(plain(log).splitlines()[-count:])
