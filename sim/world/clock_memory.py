"""The world clock's shared state: one small memory-mapped file that every process of a world maps.

The clock is read on every `time.monotonic()` of every program a simulated host runs (host_time.py) and changed
at every decode step of a simulated server, so it cannot live in files read and rewritten each time (a reading that
way cost 74 microseconds, a change a millisecond). Here a reading is a shared `flock` and a few unpacked numbers;
a change, the exclusive lock and a few written ones.

Layout (little-endian, fixed):
- the header: the anchor (modelled seconds at this machine's wall time, or held), the rate it runs at, the rate
  asked when no one asks for more, the nearest horizon, how much of the wrappers' holds log has been taken in,
  and the participants table's high-water mark;
- the participants: one slot per process (a wrapper's hold, a loader's schedule, a server's next step), with
  what it does to the clock.
"""

from __future__ import annotations

import fcntl
import math
import mmap
import os
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HEADER = struct.Struct("<5d2q")
PARTICIPANT = struct.Struct("<2q3d")  # pid, kind, horizon, rate (nan: none asked), since (wall)
PARTICIPANTS = 512
HEADER_SIZE = 128
PARTICIPANTS_AT = HEADER_SIZE
SIZE = PARTICIPANTS_AT + PARTICIPANTS * PARTICIPANT.size

FREE, HOLD, WAIT = 0, 1, 2  # a participant's kind


@dataclass
class Header:
    model: float  # modelled epoch seconds at `wall`
    wall: float  # this machine's epoch seconds at that point; nan: the clock stands at `model` (held)
    rate: float  # modelled seconds per wall second while it runs
    base_rate: float  # the world's time_scale: the rate when no participant asks for more
    horizon: float  # the nearest horizon of the waiting participants (inf: none)
    holds_seen: int  # bytes of the wrappers' holds log already taken in
    participants_hw: int  # slots [0, hw) may be in use

    @property
    def held(self) -> bool:
        return math.isnan(self.wall)


@dataclass
class Participant:
    slot: int
    pid: int
    kind: int  # HOLD or WAIT
    horizon: float  # WAIT: the modelled time it waits for (inf: nothing in particular)
    rate: float  # WAIT: the rate it asks for while it waits (nan: none)
    since: float  # this machine's wall time when it took this state


class ClockMemory:
    """The mapped state of one world's clock (`directory`: its `.sim/clock`), with its lock."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._file = directory / "state"
        self._lock_path = directory / "lock"
        self._map: mmap.mmap | None = None
        self._lock_fd: int | None = None
        self._holds_fd: int | None = None
        self._thread_lock = threading.RLock()  # flock is per open file: one thread's unlock would free another's
        self._depth = 0

    @classmethod
    def create(cls, directory: Path, header: Header) -> ClockMemory:
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory / f".state.{os.getpid()}.tmp"
        with open(tmp, "wb") as blank:
            blank.write(b"\0" * SIZE)
        memory = cls(directory)
        with open(tmp, "r+b") as out, mmap.mmap(out.fileno(), SIZE) as mapped:
            HEADER.pack_into(mapped, 0, *_header_fields(header))
        tmp.replace(memory._file)
        return memory

    def exists(self) -> bool:
        return self._file.is_file()

    # ------------------------------------------------------------------ locking
    @contextmanager
    def locked(self, *, shared: bool = False) -> Iterator[None]:
        """The clock's lock: shared for a reading, exclusive for a change. Re-entrant within a process (a change
        made while reading upgrades the one lock)."""
        with self._thread_lock:
            fd = self._fd()
            outer = self._depth == 0
            if outer:
                fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            elif not shared:
                fcntl.flock(fd, fcntl.LOCK_EX)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    fcntl.flock(fd, fcntl.LOCK_UN)

    def _fd(self) -> int:
        if self._lock_fd is None:
            self._lock_fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        return self._lock_fd

    def _mapped(self) -> mmap.mmap:
        if self._map is None:
            fd = os.open(self._file, os.O_RDWR | os.O_CLOEXEC)
            try:
                self._map = mmap.mmap(fd, SIZE)
            finally:
                os.close(fd)
        return self._map

    def holds_size(self) -> int:
        """The wrappers' holds log's size: its end, from a descriptor kept open (no path to resolve, no stat a sim
        host's hooks may wrap: this runs at every reading)."""
        if self._holds_fd is None:
            try:
                self._holds_fd = os.open(self.directory / "holds", os.O_RDONLY | os.O_CLOEXEC)
            except FileNotFoundError:
                return 0
        return os.lseek(self._holds_fd, 0, os.SEEK_END)

    def forget(self) -> None:
        """After fork: the child opens its own lock (a lock shared with the parent's open file is the parent's)."""
        self._lock_fd = None
        self._thread_lock = threading.RLock()
        self._depth = 0

    # ------------------------------------------------------------------ header
    def header(self) -> Header:
        m, w, r, b, h, seen, hw = HEADER.unpack_from(self._mapped(), 0)
        return Header(m, w, r, b, h, seen, hw)

    def write_header(self, header: Header) -> None:
        HEADER.pack_into(self._mapped(), 0, *_header_fields(header))

    # ------------------------------------------------------------------ participants
    def participants(self, header: Header | None = None) -> list[Participant]:
        hw = (header or self.header()).participants_hw
        mapped, found = self._mapped(), []
        for slot in range(hw):
            pid, kind, horizon, rate, since = PARTICIPANT.unpack_from(mapped, PARTICIPANTS_AT + slot * PARTICIPANT.size)
            if kind != FREE:
                found.append(Participant(slot, pid, kind, horizon, rate, since))
        return found

    def find_participant(self, pid: int, header: Header) -> Participant | None:
        for p in self.participants(header):
            if p.pid == pid:
                return p
        return None

    def write_participant(self, p: Participant, header: Header) -> Header:
        """Write `p` into its slot (slot -1: the first free one); the header with the high-water mark it needs."""
        if p.slot < 0:
            used = {q.slot for q in self.participants(header)}
            p.slot = next((s for s in range(PARTICIPANTS) if s not in used), -1)
            if p.slot < 0:
                raise RuntimeError(f"the world clock has no room for another participant ({PARTICIPANTS})")
        PARTICIPANT.pack_into(
            self._mapped(),
            PARTICIPANTS_AT + p.slot * PARTICIPANT.size,
            p.pid,
            p.kind,
            p.horizon,
            p.rate,
            p.since,
        )
        header.participants_hw = max(header.participants_hw, p.slot + 1)
        return header

    def free_participant(self, slot: int) -> None:
        PARTICIPANT.pack_into(self._mapped(), PARTICIPANTS_AT + slot * PARTICIPANT.size, 0, FREE, 0.0, 0.0, 0.0)


def _header_fields(h: Header) -> tuple[float | int, ...]:
    return (
        h.model,
        h.wall,
        h.rate,
        h.base_rate,
        h.horizon,
        h.holds_seen,
        h.participants_hw,
    )
