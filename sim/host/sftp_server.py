"""The sftp subsystem of a simulated host's sshd: files by host path (host_paths.py), served over the session's stdio.

OpenSSH's sftp-server would open `/root/models/...` on this machine. This server is paramiko's (the SFTP protocol
is paramiko's SFTPServer; this file only says where a path lies): every path a client names is translated to the
real one under the world's root, every path it is told (canonicalize, readlink) has the root taken out, and a text
file's contents cross as SimHost's do (paths inside them translated both ways).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from paramiko import SFTPAttributes, SFTPHandle, SFTPServer, SFTPServerInterface
from paramiko.sftp import SFTP_NO_SUCH_FILE, SFTP_OK

from .host_paths import HostPaths


class _Stdio:
    """What paramiko's SFTP loop needs of a channel, over this process's stdin and stdout."""

    def recv(self, n: int) -> bytes:
        return os.read(0, n)

    def send(self, data: bytes) -> int:
        return os.write(1, data)

    def close(self) -> None:
        os.close(1)

    def get_transport(self) -> _Stdio:
        return self

    def get_log_channel(self) -> str:
        return "specops.sim.sftp"

    def get_name(self) -> str:
        return "stdio"

    def get_hexdump(self) -> bool:
        return False


class _File(SFTPHandle):
    """A file open for reading or writing; text crosses translated when the whole file is read or written."""

    def __init__(self, paths: HostPaths, real: str, flags: int, fd: int) -> None:
        super().__init__(flags)
        self.paths, self.real = paths, real
        self.readfile = self.writefile = None
        self._fd = fd
        self._written: bytearray | None = bytearray() if flags & (os.O_WRONLY | os.O_RDWR) else None
        self._read: bytes | None = None

    def read(self, offset: int, length: int) -> bytes | int:
        if self._read is None:
            with open(self._fd, "rb", closefd=False) as f:
                f.seek(0)
                self._read = self.paths.outward_bytes(f.read())
        return self._read[offset : offset + length]

    def write(self, offset: int, data: bytes) -> int:
        assert self._written is not None
        if len(self._written) < offset:
            self._written.extend(b"\0" * (offset - len(self._written)))
        self._written[offset : offset + len(data)] = data
        return SFTP_OK

    def stat(self) -> SFTPAttributes | int:
        return SFTPAttributes.from_stat(os.fstat(self._fd))

    def chattr(self, attr: SFTPAttributes) -> int:
        try:
            SFTPServer.set_file_attr(self.real, attr)
        except OSError as exc:
            return SFTPServer.convert_errno(exc.errno)
        return SFTP_OK

    def close(self) -> None:
        if self._written is not None and self._written:
            os.ftruncate(self._fd, 0)
            os.pwrite(self._fd, self.paths.inward_bytes(bytes(self._written)), 0)
        os.close(self._fd)
        super().close()


class _HostFiles(SFTPServerInterface):
    def __init__(self, server: Any, paths: HostPaths) -> None:
        super().__init__(server)
        self.paths = paths

    def _real(self, path: str) -> str:
        path = path or "."
        return self.paths.real(path if path.startswith("/") else os.path.join(self.paths.home, path))

    @staticmethod
    def _errno(exc: OSError) -> int:
        return SFTPServer.convert_errno(exc.errno) if exc.errno is not None else SFTP_NO_SUCH_FILE

    def list_folder(self, path: str) -> list[SFTPAttributes] | int:
        real = self._real(path)
        try:
            return [SFTPAttributes.from_stat(os.lstat(os.path.join(real, name)), name) for name in os.listdir(real)]
        except OSError as exc:
            return self._errno(exc)

    def stat(self, path: str) -> SFTPAttributes | int:
        try:
            return SFTPAttributes.from_stat(os.stat(self._real(path)))
        except OSError as exc:
            return self._errno(exc)

    def lstat(self, path: str) -> SFTPAttributes | int:
        try:
            return SFTPAttributes.from_stat(os.lstat(self._real(path)))
        except OSError as exc:
            return self._errno(exc)

    def open(self, path: str, flags: int, attr: SFTPAttributes) -> SFTPHandle | int:
        real = self._real(path)
        mode = attr.st_mode if attr is not None and attr.st_mode is not None else 0o666
        try:
            fd = os.open(real, flags | getattr(os, "O_BINARY", 0), mode & 0o7777)
        except OSError as exc:
            return self._errno(exc)
        return _File(self.paths, real, flags, fd)

    def remove(self, path: str) -> int:
        return self._call(os.remove, self._real(path))

    def rename(self, oldpath: str, newpath: str) -> int:
        return self._call(os.rename, self._real(oldpath), self._real(newpath))

    def posix_rename(self, oldpath: str, newpath: str) -> int:
        return self._call(os.replace, self._real(oldpath), self._real(newpath))

    def mkdir(self, path: str, attr: SFTPAttributes) -> int:
        mode = attr.st_mode if attr is not None and attr.st_mode is not None else 0o777
        return self._call(os.mkdir, self._real(path), mode & 0o7777)

    def rmdir(self, path: str) -> int:
        return self._call(os.rmdir, self._real(path))

    def chattr(self, path: str, attr: SFTPAttributes) -> int:
        return self._call(SFTPServer.set_file_attr, self._real(path), attr)

    def symlink(self, target_path: str, path: str) -> int:
        return self._call(os.symlink, self.paths.real(target_path), self._real(path))

    def readlink(self, path: str) -> str | int:
        try:
            return self.paths.outward(os.readlink(self._real(path)))
        except OSError as exc:
            return self._errno(exc)

    def canonicalize(self, path: str) -> str:
        absolute = path if path.startswith("/") else os.path.join(self.paths.home, path or ".")
        return os.path.normpath(absolute)

    def _call(self, fn: Any, *args: Any) -> int:
        try:
            fn(*args)
        except OSError as exc:
            return self._errno(exc)
        return SFTP_OK


def serve(paths: HostPaths) -> None:
    """Serve one sftp session on stdin/stdout until the client goes."""
    channel = _Stdio()
    server = SFTPServer(channel, "sftp", server=None, sftp_si=_HostFiles, paths=paths)
    server.start_subsystem("sftp", None, channel)
    sys.stdout.flush()
