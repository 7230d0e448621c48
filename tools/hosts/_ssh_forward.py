"""Local port forwarding over SSH: a listening socket here, one direct-tcpip channel per connection.

The accept loop and each relay run in daemon threads; all of them end when the
forwarder is stopped (they poll a stop flag), or when either side closes.
"""

from __future__ import annotations

import select
import socket
import threading
from collections.abc import Callable

import paramiko

_POLL_S = 0.2
_CHUNK = 65536

OpenChannel = Callable[[tuple[str, int]], paramiko.Channel]


class PortForwarder:
    def __init__(self, open_channel: OpenChannel, *, describe: str) -> None:
        self._open_channel = open_channel
        self._describe = describe
        self._stopped = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(_POLL_S)
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._listener.getsockname()[:2]
        return host, port

    def start(self) -> None:
        self._spawn(self._accept_loop, f"forward {self._describe}")

    def stop(self) -> None:
        self._stopped.set()
        self._listener.close()
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout=2 * _POLL_S + 1)

    def _spawn(self, target: Callable[..., None], name: str, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        thread.start()

    def _accept_loop(self) -> None:
        while not self._stopped.is_set():
            try:
                client, peer = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # listener closed by stop()
            try:
                channel = self._open_channel(peer[:2])
            except (paramiko.SSHException, OSError, EOFError):
                # The remote side refused (nothing listens, or the connection is gone): the
                # client sees its connection closed, as with a refused connection.
                client.close()
                continue
            self._spawn(self._relay, f"relay {self._describe} {peer}", client, channel)

    def _relay(self, client: socket.socket, channel: paramiko.Channel) -> None:
        try:
            while not self._stopped.is_set():
                readable, _, _ = select.select([client, channel], [], [], _POLL_S)
                if client in readable:
                    data = client.recv(_CHUNK)
                    if not data:
                        break
                    channel.sendall(data)
                if channel in readable:
                    data = channel.recv(_CHUNK)
                    if not data:
                        break
                    client.sendall(data)
        except (OSError, EOFError, paramiko.SSHException):
            pass  # either end went away: close both
        finally:
            channel.close()
            client.close()
