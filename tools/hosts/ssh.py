"""A remote host over SSH (paramiko): commands on exec channels, files over SFTP, ports over direct-tcpip.

Connection rules
- Host keys are checked as OpenSSH would, with ~/.ssh/config's
  UserKnownHostsFile and StrictHostKeyChecking for the host unless its options
  (an inventory entry's `known_hosts`, `accept_unknown_host_key`) say otherwise
  (host_keys.py). An unknown key is refused (HostKeyUnknown, whose message says
  how to trust it) unless accept-new applies, which records it; a changed key
  is always refused (HostKeyMismatch), even with StrictHostKeyChecking no.
- The first connection is tried once, so a wrong address fails at once
  (HostUnreachable); a connection that dropped is re-established with
  tenacity, `connect_attempts` times with exponential backoff.

Re-run rule, for a connection that drops while a command runs
- Before the command was sent (the channel could not be opened): reconnect
  and run it; it never started.
- After it was sent it may have run, partly or wholly. The backend
  reconnects and kills the command's remote process group (learned from the
  wrapper's first output line), so no unobserved copy keeps going. Then it
  re-runs the command only when the caller said `idempotent=True` (at most
  `rerun_attempts` times); otherwise it raises ConnectionDropped with
  `may_have_run=True` and the partial output, and the caller decides.
- File operations are idempotent (reads, and whole-file writes renamed into
  place), so they are retried after a reconnect. start_detached is never
  re-run: two copies of a server are not harmless.

Every command runs under `setsid` and reports its process group first; a
command that outlives its timeout is killed with `kill -KILL -- -PGID` over a
second channel, and the output so far is kept.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import TypeVar

import paramiko
import structlog
import tenacity

from ._shell import check_argv, run_line, split_pgid_line
from ._ssh_forward import PortForwarder
from .base import Host
from .errors import (
    ConnectionDropped,
    HostAuthFailed,
    HostError,
    HostKeyMismatch,
    HostUnreachable,
    PortNotListening,
    RemoteFileNotFound,
)
from .host_keys import (
    changed_key_message,
    host_key_rules,
    load_known_hosts,
    missing_key_policy,
)
from .port_map import entry_path
from .results import CommandResult
from .ssh_options import SshOptions, SshTarget

log = structlog.get_logger(__name__)

T = TypeVar("T")

_CHUNK = 65536
_IDLE_POLL_S = 0.01
# After a kill, how long to keep reading what the command wrote before it died.
_DRAIN_AFTER_KILL_S = 1.0
# A channel closed without an exit status: how long to wait for the transport to report itself dead.
_DROP_SETTLE_S = 1.0
_KILL_TIMEOUT_S = 10.0
# SSH_OPEN_CONNECT_FAILED: sshd could not connect to the forwarded port.
_OPEN_CONNECT_FAILED = 2

# Transport-level failures: the connection, not the command, went wrong.
_LINK_ERRORS = (paramiko.SSHException, OSError, EOFError)


class _Dropped(Exception):
    """Internal: the connection broke during a command."""

    def __init__(
        self,
        *,
        sent: bool,
        pgid: int | None,
        partial: CommandResult | None,
        cause: BaseException | None,
        transport: paramiko.Transport | None = None,
    ) -> None:
        super().__init__(str(cause) if cause else "connection lost")
        self.transport = transport  # the session it broke on: another thread may have replaced it already
        self.sent = sent
        self.pgid = pgid
        self.partial = partial
        self.cause = cause


class SshHost(Host):
    def __init__(
        self,
        target: SshTarget,
        options: SshOptions | None = None,
        *,
        spec: str | None = None,
        ssh_config: str | Path | None = None,
    ) -> None:
        """`ssh_config`: the OpenSSH client config read for host key checking (default ~/.ssh/config)."""
        self.target = target
        self.options = options or SshOptions()
        self.spec = spec or target.url
        self.host_keys = host_key_rules(target, self.options, spec=self.spec, ssh_config=ssh_config)
        self._lock = threading.RLock()
        self._client: paramiko.SSHClient | None = None
        self._sftp: paramiko.SFTPClient | None = None
        self._closed = False
        self._connect()

    # -- connection ------------------------------------------------------------------------

    def _connect(self) -> None:
        """One attempt to set up a fresh session. Raises the typed connection errors."""
        opts, target = self.options, self.target
        rules = self.host_keys
        client = paramiko.SSHClient()
        load_known_hosts(client, rules)
        client.set_missing_host_key_policy(missing_key_policy(rules))
        where = f"{target.user}@{target.hostname}:{target.port}"
        # The options' key files, else the config's IdentityFile (those that exist: ssh skips the others too).
        keys = opts.key_filename or [f for f in rules.identity_files if Path(f).expanduser().is_file()]
        try:
            client.connect(
                target.hostname,
                port=target.port,
                username=target.user,
                key_filename=keys or None,
                allow_agent=opts.allow_agent,
                look_for_keys=opts.look_for_keys,
                timeout=opts.connect_timeout_s,
                banner_timeout=opts.auth_timeout_s,
                auth_timeout=opts.auth_timeout_s,
            )
        except HostError:
            client.close()
            raise
        except paramiko.BadHostKeyException as exc:
            client.close()
            raise HostKeyMismatch(changed_key_message(rules, exc.key, exc.expected_key), host=self.spec) from None
        except paramiko.AuthenticationException as exc:
            client.close()
            offered = [f"keys {', '.join(keys)}" if keys else "no key files"]
            offered += ["the ssh-agent"] if opts.allow_agent else []
            offered += ["~/.ssh/id_*"] if opts.look_for_keys else []
            raise HostAuthFailed(
                f"{where} refused authentication ({exc}); offered {', '.join(offered)}. Check the user name and that "
                f"the public key is in ~{target.user}/.ssh/authorized_keys on the host",
                host=self.spec,
            ) from None
        except _LINK_ERRORS as exc:
            client.close()
            raise HostUnreachable(
                f"cannot reach SSH on {where}: {exc or type(exc).__name__}. Check the address and port, that sshd "
                f"runs there and that no firewall is in between (connect timeout {opts.connect_timeout_s:g} s)",
                host=self.spec,
            ) from None
        transport = client.get_transport()
        assert transport is not None  # connect() succeeded
        if opts.keepalive_s:
            transport.set_keepalive(opts.keepalive_s)
        self._client, self._sftp = client, None

    def _reconnect(self) -> None:
        """Re-establish the session, retrying unreachable hosts with backoff; auth and key errors are final."""
        with self._lock:
            self._discard_session()
            retrying = tenacity.Retrying(
                stop=tenacity.stop_after_attempt(self.options.connect_attempts),
                wait=tenacity.wait_exponential(multiplier=0.2, max=5),
                retry=tenacity.retry_if_exception_type(HostUnreachable),
                reraise=True,
            )
            for attempt in retrying:
                with attempt:
                    log.info("ssh.reconnect", host=self.spec, attempt=attempt.retry_state.attempt_number)
                    self._connect()

    def _discard_session(self) -> None:
        client, self._client, self._sftp = self._client, None, None
        if client is not None:
            client.close()

    def _transport(self) -> paramiko.Transport:
        """The live transport; a dead one is replaced first (no command is in flight on it)."""
        with self._lock:
            if self._closed:
                raise HostError(f"{self.spec} was closed: open the host again", host=self.spec)
            transport = self._client.get_transport() if self._client is not None else None
            if transport is None or not transport.is_active():
                try:
                    self._reconnect()
                except HostError as exc:
                    raise ConnectionDropped(
                        f"the connection to {self.spec} is gone and could not be re-established: {exc}",
                        host=self.spec,
                        may_have_run=False,
                    ) from exc
                transport = self._client.get_transport() if self._client is not None else None
            assert transport is not None
            return transport

    def _link_alive(self, transport: paramiko.Transport) -> bool:
        """Whether a transport is still up; a dying one takes a moment to say so."""
        deadline = time.monotonic() + _DROP_SETTLE_S
        while transport.is_active() and time.monotonic() < deadline:
            time.sleep(0.02)
        active: bool = transport.is_active()
        return active

    def _recover(self, drop: _Dropped, what: str) -> None:
        """After a drop: reconnect, then kill the interrupted command's group if it may still run.

        Commands run side by side on one session (host_facts' probes): when it breaks they all drop, and the
        first to get here reconnects. The others find a new live session and use it: reconnecting again would
        break the commands already re-run on it, and those threads would do the same to theirs.
        """
        with self._lock:
            current = self._client.get_transport() if self._client is not None else None
            # Another thread has reconnected since the drop: its live session is used.
            if (
                current is not None
                and drop.transport is not None
                and current is not drop.transport
                and current.is_active()
            ):
                if drop.pgid is not None:
                    self._kill_group(current, drop.pgid)
                return
        try:
            self._reconnect()
        except HostError as exc:
            raise ConnectionDropped(
                f"the connection to {self.spec} dropped during {what} and could not be re-established after "
                f"{self.options.connect_attempts} attempts: {exc}",
                host=self.spec,
                may_have_run=drop.sent,
                partial=drop.partial,
            ) from exc
        if drop.pgid is not None:
            self._kill_group(self._transport(), drop.pgid)

    # -- commands --------------------------------------------------------------------------

    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
        idempotent: bool = False,
    ) -> CommandResult:
        words = check_argv(argv)
        line = run_line(words, cwd=cwd, env=env)
        reruns = unsent = 0
        while True:
            try:
                return self._run_once(words, line, timeout=timeout, stdin=stdin)
            except _Dropped as drop:
                self._recover(drop, f"`{words[0]}`")
                if not drop.sent and unsent < self.options.connect_attempts:
                    unsent += 1
                    continue
                if drop.sent and idempotent and reruns < self.options.rerun_attempts:
                    reruns += 1
                    log.info("ssh.rerun", host=self.spec, argv=words, rerun=reruns)
                    continue
                raise ConnectionDropped(
                    f"the connection to {self.spec} dropped while `{' '.join(words)}` ran; it may have done part "
                    "of its work (its remote processes were killed after reconnecting). Check its effects before "
                    "running it again, or pass idempotent=True for commands that are safe to repeat",
                    host=self.spec,
                    may_have_run=drop.sent,
                    partial=drop.partial,
                ) from drop.cause

    def _run_once(self, words: list[str], line: str, *, timeout: float, stdin: str | None) -> CommandResult:
        started = time.monotonic()
        out, err = bytearray(), bytearray()
        pgid: int | None = None

        def result(exit_code: int | None, timed_out: bool = False) -> CommandResult:
            _, rest = split_pgid_line(bytes(out)) if pgid is not None else (None, bytes(out))
            return CommandResult(
                argv=words,
                exit_code=exit_code,
                stdout=rest.decode("utf-8", "replace"),
                stderr=bytes(err).decode("utf-8", "replace"),
                duration_s=time.monotonic() - started,
                timed_out=timed_out,
                host=self.spec,
            )

        transport = self._transport()
        try:
            channel = transport.open_session(timeout=self.options.auth_timeout_s)
        except _LINK_ERRORS as exc:
            raise _Dropped(sent=False, pgid=None, partial=None, cause=exc, transport=transport) from exc
        try:
            channel.exec_command(line)
            pending = stdin.encode() if stdin is not None else b""
            if stdin is None or not pending:
                channel.shutdown_write()
            deadline = started + timeout
            while True:
                busy = False
                if channel.recv_ready():
                    out.extend(channel.recv(_CHUNK))
                    busy = True
                if channel.recv_stderr_ready():
                    err.extend(channel.recv_stderr(_CHUNK))
                    busy = True
                if pgid is None:
                    pgid, _ = split_pgid_line(bytes(out))
                if pending and channel.send_ready():
                    pending = pending[channel.send(pending[:_CHUNK]) :]
                    if not pending:
                        channel.shutdown_write()
                    busy = True
                # Done when the command exited and its output ended (a background child may hold it open).
                finished = channel.exit_status_ready() and (channel.eof_received or channel.closed)
                if finished and not channel.recv_ready() and not channel.recv_stderr_ready():
                    break
                if time.monotonic() >= deadline:
                    pgid = self._on_timeout(transport, channel, pgid, out, err)
                    return result(None, timed_out=True)
                if not busy:
                    time.sleep(_IDLE_POLL_S)
        except _LINK_ERRORS as exc:
            channel.close()
            raise _Dropped(sent=True, pgid=pgid, partial=result(None), cause=exc, transport=transport) from exc
        status = channel.exit_status
        channel.close()
        if status == -1:
            if not self._link_alive(transport):
                raise _Dropped(sent=True, pgid=pgid, partial=result(None), cause=None, transport=transport)
            status = 255  # closed without a status: what OpenSSH's client reports for that
        return result(status)

    def _on_timeout(
        self, transport: paramiko.Transport, channel: paramiko.Channel, pgid: int | None, out: bytearray, err: bytearray
    ) -> int | None:
        """Kill the timed-out command's process group and drain its last output; returns the group (None: the
        wrapper never reported one). On a loaded host the group's line may arrive only now: it is waited for."""
        deadline = time.monotonic() + _DRAIN_AFTER_KILL_S
        while pgid is None and time.monotonic() < deadline and not channel.exit_status_ready():
            _drain(channel, out, err)
            pgid, _ = split_pgid_line(bytes(out))
            time.sleep(_IDLE_POLL_S)
        killed_at = len(err)
        if pgid is not None:
            self._kill_group(transport, pgid)
        else:
            log.warning("ssh.timeout_before_start", host=self.spec, note="no process group reported; channel closed")
        deadline = time.monotonic() + _DRAIN_AFTER_KILL_S
        while time.monotonic() < deadline and not channel.exit_status_ready():
            _drain(channel, out, err)
            time.sleep(_IDLE_POLL_S)
        _drain(channel, out, err)
        channel.close()
        _drop_kill_notice(err, killed_at)
        return pgid

    def _kill_group(self, transport: paramiko.Transport, pgid: int) -> None:
        """SIGKILL a remote process group over its own channel (the command's channel may be stuck or gone)."""
        try:
            channel = transport.open_session(timeout=self.options.auth_timeout_s)
            channel.exec_command(f"kill -KILL -- -{int(pgid)}")
            channel.shutdown_write()
            deadline = time.monotonic() + _KILL_TIMEOUT_S
            while not channel.exit_status_ready() and time.monotonic() < deadline:
                time.sleep(_IDLE_POLL_S)
            channel.close()
        except _LINK_ERRORS as exc:
            log.warning("ssh.kill_failed", host=self.spec, pgid=pgid, error=str(exc))

    # -- files -----------------------------------------------------------------------------

    def _sftp_client(self) -> paramiko.SFTPClient:
        with self._lock:
            self._transport()
            if self._sftp is None:
                assert self._client is not None
                self._sftp = self._client.open_sftp()
            return self._sftp

    def _file_op(self, what: str, op: Callable[[paramiko.SFTPClient], T]) -> T:
        """Run an SFTP operation, reconnecting and repeating it if the connection drops (all are idempotent)."""
        for attempt in range(self.options.rerun_attempts + 1):
            transport: paramiko.Transport | None = None
            try:
                sftp = self._sftp_client()
                channel = sftp.get_channel()
                transport = channel.get_transport() if channel is not None else None
                return op(sftp)
            except (FileNotFoundError, PermissionError, IsADirectoryError, HostError):
                raise
            except _LINK_ERRORS as exc:
                if transport is not None and self._link_alive(transport):
                    raise  # the file system said no, not the connection
                if attempt == self.options.rerun_attempts:
                    raise ConnectionDropped(
                        f"the connection to {self.spec} kept dropping during {what}", host=self.spec, may_have_run=True
                    ) from exc
                self._recover(_Dropped(sent=True, pgid=None, partial=None, cause=exc), what)
        raise AssertionError("unreachable")

    def _not_found(self, path: str) -> RemoteFileNotFound:
        return RemoteFileNotFound(f"{path} does not exist on {self.spec}", host=self.spec, path=path)

    def read_file(self, path: str) -> bytes:
        def read(sftp: paramiko.SFTPClient) -> bytes:
            with sftp.open(path, "rb") as f:
                f.prefetch()
                data: bytes = f.read()
                return data

        try:
            return self._file_op(f"reading {path}", read)
        except FileNotFoundError:
            raise self._not_found(path) from None

    def write_file(self, path: str, data: bytes, *, mode: int | None = None) -> None:
        target = PurePosixPath(path)
        tmp = str(target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.tmp"))

        def write(sftp: paramiko.SFTPClient) -> None:
            self._make_parents(sftp, target.parent)
            keep_mode = mode
            if keep_mode is None:
                try:
                    keep_mode = (sftp.stat(path).st_mode or 0) & 0o7777
                except FileNotFoundError:
                    keep_mode = None  # new file: the server's umask decides, as with open()
            try:
                with sftp.open(tmp, "wb") as f:
                    f.set_pipelined(True)
                    f.write(data)
                if keep_mode is not None:
                    sftp.chmod(tmp, keep_mode)
                sftp.posix_rename(tmp, path)
            except BaseException:
                try:
                    sftp.remove(tmp)
                except (OSError, EOFError, paramiko.SSHException):
                    pass
                raise

        self._file_op(f"writing {path}", write)

    @staticmethod
    def _make_parents(sftp: paramiko.SFTPClient, directory: PurePosixPath) -> None:
        missing = []
        for parent in [directory, *directory.parents]:
            if str(parent) in ("", "."):
                break
            try:
                sftp.stat(str(parent))
                break
            except FileNotFoundError:
                missing.append(parent)
        for parent in reversed(missing):
            sftp.mkdir(str(parent))

    def exists(self, path: str) -> bool:
        def stat(sftp: paramiko.SFTPClient) -> bool:
            try:
                sftp.stat(path)
                return True
            except FileNotFoundError:
                return False

        return self._file_op(f"checking {path}", stat)

    # -- ports -----------------------------------------------------------------------------

    def _open_forward_channel(self, port: int, source: tuple[str, int]) -> paramiko.Channel:
        return self._transport().open_channel(
            "direct-tcpip", ("127.0.0.1", port), source, timeout=self.options.connect_timeout_s
        )

    @contextmanager
    def forward(self, port: int) -> Iterator[tuple[str, int]]:
        target = self.port_on_host(port)
        try:
            self._open_forward_channel(target, ("127.0.0.1", 0)).close()
        except paramiko.ChannelException as exc:
            reason = (
                "nothing accepts connections there: is the server up? check its log"
                if exc.code == _OPEN_CONNECT_FAILED
                else f"sshd refused to forward it ({exc.text}): AllowTcpForwarding may be off on the host"
            )
            raise PortNotListening(
                f"cannot reach 127.0.0.1:{port} on {self.spec}: {reason}", host=self.spec, port=port
            ) from None
        forwarder = PortForwarder(
            lambda source: self._open_forward_channel(target, source), describe=f"{self.spec}:{port}"
        )
        forwarder.start()
        try:
            yield forwarder.address
        finally:
            forwarder.stop()

    def port_on_host(self, port: int) -> int:
        """The loopback port to connect to on the host for `port`: itself, or what the host's port map says
        (port_map.py: hosts sharing one machine's loopback, as simulated ones do)."""
        map_dir = self.port_map_dir()
        if not map_dir:
            return port
        try:
            entry = json.loads(self.read_file(str(entry_path(map_dir, port))))
        except (RemoteFileNotFound, ValueError):
            return port
        return int(entry.get("real_port") or port)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._discard_session()


def _drain(channel: paramiko.Channel, out: bytearray, err: bytearray) -> None:
    """Whatever output the channel holds now, onto out and err."""
    while channel.recv_ready():
        out.extend(channel.recv(_CHUNK))
    while channel.recv_stderr_ready():
        err.extend(channel.recv_stderr(_CHUNK))


def _drop_kill_notice(err: bytearray, killed_at: int) -> None:
    """Remove the wrapper shell's own "Killed" notice (sh and bash print one) that our kill caused.

    Only a last line that arrived after the kill is considered: the command's own output is kept.
    """
    body = bytes(err[killed_at:]).rstrip(b"\n")
    head, _, last = body.rpartition(b"\n")
    if b"Killed" in last:
        del err[killed_at:]
        err.extend(head + b"\n" if head else b"")
