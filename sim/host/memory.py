"""The host's RAM as `free` reports it: the profile's total, and an idle system's footprint.

The footprint is in proportion to the total, as in shared/captures/h200-1gpu/misc.txt
(an idle 128 GiB host: 0.39% used, 0.74% buff/cache, 8 MiB shared), and
`available` is total minus used, as the kernel reports for an idle host.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: these run in every sim command, which must start fast
    from ..profiles.schema import Profile
    from ..world.state_view import Record


_USED_FRACTION = 0.0039
_CACHE_FRACTION = 0.0074
_SHARED_BYTES = 8 * 1024 * 1024
PAGE = 4096


@dataclass(frozen=True)
class MemoryFigures:
    total: int
    used: int
    free: int
    shared: int
    buff_cache: int
    available: int
    swap_total: int = 0
    swap_used: int = 0
    swap_free: int = 0


def _pages(n: float) -> int:
    return int(n) // PAGE * PAGE


def total_bytes(profile: Profile | Record) -> int:
    return _pages(profile.memory_gib * 1024**3)


def host_memory(profile: Profile | Record) -> MemoryFigures:
    total = total_bytes(profile)
    used = _pages(total * _USED_FRACTION)
    cache = _pages(total * _CACHE_FRACTION)
    return MemoryFigures(
        total=total,
        used=used,
        free=total - used - cache,
        shared=_SHARED_BYTES,
        buff_cache=cache,
        available=total - used,
    )


def shm_size_bytes(profile: Profile | Record) -> int:
    """/dev/shm: a tmpfs of half the RAM, the kernel's default."""
    return _pages(total_bytes(profile) / 2)
