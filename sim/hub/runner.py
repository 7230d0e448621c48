"""Running the Hub emulator for synchronous callers: its own event loop in a thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable
from types import TracebackType

from ..faults import Fault
from .emulator import HubEmulator
from .fixtures import FixtureRepo

START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 10.0


class HubEmulatorThread:
    """`with HubEmulatorThread(fixtures) as hub: ... hub.url ...` — the emulator serving in the background."""

    def __init__(
        self,
        fixtures: dict[str, FixtureRepo],
        *,
        datasets: dict[str, FixtureRepo] | None = None,
        faults: Iterable[Fault] = (),
        byte_scale: int = 1024,
        time_scale: float = 1.0,
        download_mb_s: float = 1000.0,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.emulator = HubEmulator(
            fixtures,
            datasets=datasets,
            faults=faults,
            byte_scale=byte_scale,
            time_scale=time_scale,
            download_mb_s=download_mb_s,
        )
        self._host, self._port = host, port
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="hub-emulator", daemon=True)
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self.url: str = ""

    def start(self) -> str:
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S):
            raise TimeoutError(f"the Hub emulator did not start within {START_TIMEOUT_S} s")
        if self._error is not None:
            raise RuntimeError("the Hub emulator failed to start") from self._error
        return self.url

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        future = asyncio.run_coroutine_threadsafe(self.emulator.stop(), self._loop)
        future.result(STOP_TIMEOUT_S)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(STOP_TIMEOUT_S)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self.url = self._loop.run_until_complete(self.emulator.start(self._host, self._port))
        except BaseException as exc:  # handed to start(), which re-raises it in the caller's thread
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()

    def __enter__(self) -> HubEmulatorThread:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
