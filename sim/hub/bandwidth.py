"""The host's download link: one rate shared by every transfer the emulator serves.

Transfers reserve time on the link chunk by chunk, so concurrent downloads
share the rate between them instead of each getting all of it.
"""

from __future__ import annotations

import asyncio
import time


def stored_bytes_per_second(download_mb_s: float, time_scale: float, byte_scale: int) -> float:
    """Stored bytes/s that stand for `download_mb_s` modelled MB/s at this time and byte scale."""
    return download_mb_s * 1e6 * time_scale / byte_scale


class SharedLink:
    def __init__(self, bytes_per_second: float) -> None:
        if bytes_per_second <= 0:
            raise ValueError("a link needs a positive rate")
        self.bytes_per_second = bytes_per_second
        self._next_free = 0.0  # monotonic time at which the link is free again
        self._lock = asyncio.Lock()

    async def send(self, nbytes: int) -> None:
        """Wait until `nbytes` have had their turn on the link."""
        async with self._lock:
            now = time.monotonic()
            start = max(now, self._next_free)
            self._next_free = start + nbytes / self.bytes_per_second
            done_at = self._next_free
        delay = done_at - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
