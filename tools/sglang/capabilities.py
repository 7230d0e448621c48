"""What the host's SGLang can do, read from itself: its version and its `launch_server --help`.

Flags and `--speculative-algorithm` choices change between releases (DFLASH
arrived in 0.5.11; 0.5.23 renamed the CUDA-graph cap), so a launch is checked against the installed
SGLang, never against assumptions. Reading --help imports SGLang (seconds on a
real host), so the answer is cached per host and interpreter.
"""

from __future__ import annotations

import re
import threading
import weakref

from pydantic import BaseModel, ConfigDict, Field

from ...sglang_releases.facts import ReleaseFacts, for_version
from ..errors import HostCommandFailed
from ..hosts import Host
from .command import LAUNCH_MODULE
from .errors import SglangNotInstalled

HELP_TIMEOUT_S = 180.0  # importing sglang (torch, triton) can take a minute on a cold host
_FLAG = re.compile(r"(?<![\w-])(--[a-z0-9][a-z0-9-]*)")
_CHOICES = re.compile(r"--speculative-algorithm\s+\{([^}]*)\}")
# Flags whose values argparse checks against names SGLang registers (a parser it lacks is 'invalid choice').
CHOICE_FLAGS = ("--reasoning-parser", "--tool-call-parser")
# One interpreter start for both answers (importing SGLang costs seconds): the version on the
# first line, then launch_server's --help exactly as `python3 -m sglang.launch_server --help`.
_PROBE = (
    "import runpy, sys, sglang; print(sglang.__version__, flush=True); "
    f"sys.argv = ['launch_server.py', '--help']; runpy.run_module({LAUNCH_MODULE!r}, run_name='__main__', alter_sys=True)"
)


class SglangCapabilities(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str
    python: str
    version: str = Field(description="sglang.__version__ on the host")
    flags: frozenset[str] = Field(description="Every --flag the installed launch_server --help lists")
    speculative_algorithms: tuple[str, ...] | None = Field(
        description="--speculative-algorithm choices; None when --help lists the flag without choices"
    )
    flag_choices: dict[str, tuple[str, ...]] = Field(
        default_factory=dict, description="CHOICE_FLAGS' choices as --help lists them (plugins' parsers included)"
    )

    @property
    def version_tuple(self) -> tuple[int, ...]:
        return version_tuple(self.version)

    def has(self, flag: str) -> bool:
        return flag in self.flags

    @property
    def release(self) -> ReleaseFacts:
        """The modelled release this version behaves as (the newest not newer than it)."""
        return for_version(self.version)

    @property
    def algorithms(self) -> tuple[str, ...]:
        """--speculative-algorithm values: --help's choices where it lists them (up to 0.5.1x); 0.5.23 takes
        a free string checked at start-up, so its own list of known algorithms is used."""
        if self.speculative_algorithms is not None:
            return self.speculative_algorithms
        return self.release.accepted_algorithms

    def offers(self, algorithm: str) -> bool:
        return algorithm.upper() in self.algorithms

    def choices(self, flag: str) -> tuple[str, ...] | None:
        """The values argparse takes for `flag`: --help's list, else the modelled release's; None: any value."""
        if flag in self.flag_choices:
            return self.flag_choices[flag]
        modelled = self.release.flag(flag)
        if modelled is None or modelled.choices is None or modelled.choices_dynamic:
            return None
        return tuple(str(c) for c in modelled.choices)


def version_tuple(version: str) -> tuple[int, ...]:
    """`0.5.10.post1` -> (0, 5, 10); `0.5.11rc2` -> (0, 5, 11)."""
    parts = []
    for piece in version.split(".")[:3]:
        digits = re.match(r"\d+", piece)
        if digits is None:
            break
        parts.append(int(digits.group()))
    return tuple(parts)


def parse_help(text: str) -> tuple[frozenset[str], tuple[str, ...] | None]:
    """The flags an argparse --help lists, and the --speculative-algorithm choices if it shows them."""
    flags = frozenset(_FLAG.findall(text))
    choices = _CHOICES.search(text)
    algorithms = tuple(c.strip().upper() for c in choices.group(1).split(",") if c.strip()) if choices else None
    return flags, algorithms


def parse_help_choices(text: str, flags: tuple[str, ...] = CHOICE_FLAGS) -> dict[str, tuple[str, ...]]:
    """`--flag {a,b,c}` in an argparse --help, for each of `flags` it shows with choices."""
    found = {}
    for flag in flags:
        match = re.search(re.escape(flag) + r"\s+\{([^}]*)\}", text)
        if match is not None:
            found[flag] = tuple(c.strip() for c in match.group(1).split(",") if c.strip())
    return found


# Per Host object, not per spec: two hosts of one name (an inventory name reused, a node re-created) are two hosts.
_cache: weakref.WeakKeyDictionary[Host, dict[str, SglangCapabilities]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def read_capabilities(host: Host, *, python: str = "python3", refresh: bool = False) -> SglangCapabilities:
    """The host's SGLang version and launch flags (cached per host and interpreter unless `refresh`)."""
    with _lock:
        cached = _cache.get(host, {}).get(python)
        if not refresh and cached is not None:
            return cached
    helped = host.run([python, "-c", _PROBE], timeout=HELP_TIMEOUT_S, idempotent=True)
    version, _, help_text = helped.stdout.partition("\n")
    if not version.strip() or "ModuleNotFoundError: No module named 'sglang'" in helped.stderr:
        raise SglangNotInstalled(
            f"SGLang is not importable with {python} on {host.spec}: "
            + ((helped.stderr.strip().splitlines() or ["no output"])[-1]),
            remedy="install SGLang on the host (pip install 'sglang[all]') or name the interpreter that has it",
            details={"python": python, "exit_code": helped.exit_code, "stderr": helped.stderr[-2000:]},
        )
    if not helped.ok or "--model-path" not in help_text:
        raise HostCommandFailed(
            f"`{python} -m {LAUNCH_MODULE} --help` on {host.spec} "
            + ("timed out" if helped.timed_out else f"exited {helped.exit_code}")
            + " without listing the launch flags",
            remedy="check the SGLang installation on the host (its import errors are in details.stderr)",
            details={"stdout": helped.stdout[-2000:], "stderr": helped.stderr[-2000:]},
        )
    flags, algorithms = parse_help(help_text)
    caps = SglangCapabilities(
        host=host.spec,
        python=python,
        version=version.strip(),
        flags=flags,
        speculative_algorithms=algorithms,
        flag_choices=parse_help_choices(help_text),
    )
    with _lock:
        _cache.setdefault(host, {})[python] = caps
    return caps
