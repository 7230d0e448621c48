"""`specops sim ...`: start and use simulated GPU hosts."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError

from ..sim.faults import describe_fault_error, parse_fault
from ..sim.host.ssh_gateway import SshdMissing
from ..sim.profiles import UnknownProfileError, builtin_profiles, load_profile
from ..tools.inputs import one_line, validation_message
from .streams import fail

if TYPE_CHECKING:
    from ..sim.world.cluster import SimCluster
    from ..sim.world.world import SimWorld

sim_app = typer.Typer(
    help="Simulated GPU hosts with a Hub emulator and an SGLang serving simulator.", no_args_is_help=True
)


def _fail(message: str) -> typer.Exit:
    return fail(one_line(message), 2)


@sim_app.command("profiles")
def profiles() -> None:
    """List the built-in host profiles."""
    from ..sim.profiles.cluster import builtin_clusters, load_cluster_profile

    for name in builtin_profiles():
        p = load_profile(name)
        typer.echo(f"{name:<16} {p.description}  [{p.provenance}]")
    for name in builtin_clusters():
        c = load_cluster_profile(name)
        typer.echo(f"{name:<16} {c.description}  [cluster: {len(c.nodes)} x {c.node_profile}]")


@sim_app.command("faults")
def faults() -> None:
    """List the faults a world can be started with (`--fault name:key=value,...`)."""
    from ..sim.faults import FAULT_TYPES

    for name, model in FAULT_TYPES.items():
        params = ", ".join(
            f"{k}" if v.is_required() else f"{k}={v.default!r}" for k, v in model.model_fields.items() if k != "name"
        )
        doc = " ".join((model.__doc__ or "").split())
        typer.echo(f"{name.value:<22} {doc}")
        if params:
            typer.echo(f"{'':<22} params: {params}")


def _positive(value: float | None) -> float | None:
    if value is not None and not value > 0:  # nan too
        raise typer.BadParameter(f"{value} is not a time scale: give a positive number (10: ten times faster)")
    return value


@sim_app.command("up")
def up(
    profile: Annotated[
        str, typer.Argument(help="A built-in profile name (see `specops sim profiles`) or a profile YAML path")
    ],
    fault: Annotated[
        list[str] | None, typer.Option("--fault", "-f", help="Inject a fault: name or name:key=value,... (repeatable)")
    ] = None,
    root: Annotated[
        Path | None, typer.Option(help="Directory for the host's tree (default: a new temporary one, removed on exit)")
    ] = None,
    time_scale: Annotated[
        float | None, typer.Option(help="Modelled seconds per real second (10: ten times faster)", callback=_positive)
    ] = None,
    load_time_scale: Annotated[
        float | None,
        typer.Option(help="The same for model loading only (default: --time-scale)", callback=_positive),
    ] = None,
    mount: Annotated[
        list[str] | None,
        typer.Option(help="Back a profile mount by a real filesystem: MOUNT=DIR, e.g. /data=/mnt/small"),
    ] = None,
    ssh: Annotated[
        bool, typer.Option(help="Also serve the host over real SSH (an sshd on loopback); prints ssh_host")
    ] = False,
    keep: Annotated[bool, typer.Option(help="Keep the host's tree on exit")] = False,
) -> None:
    """Start a simulated host and its Hub emulator; print one JSON line; run until interrupted. A cluster profile
    starts one host per node (faults: name:node=I,... for node I only)."""
    from ..sim.profiles.cluster import is_cluster_profile
    from ..sim.world.world import SimWorld

    if is_cluster_profile(profile):
        if root is not None or mount:
            raise _fail("--root and --mount apply to one host, not to a cluster profile's nodes")
        _serve_until_stopped(_start_cluster(profile, fault or [], time_scale, load_time_scale, ssh), keep)
        return

    injected = []
    for spec in fault or []:
        try:
            injected.append(parse_fault(spec))
        except ValueError as exc:  # a ValidationError too
            raise _fail(f"--fault: {describe_fault_error(spec, exc)} (see `specops sim faults`)") from None
    try:
        backing = dict(_parse_mount(m) for m in mount or [])
        world = SimWorld.start(
            profile,
            faults=injected,
            root=root,
            time_scale=time_scale,
            load_time_scale=load_time_scale,
            mount_backing=backing or None,
        )
    except ValidationError as exc:
        raise _fail(validation_message(exc)) from None
    except (UnknownProfileError, FileExistsError, ValueError) as exc:  # ProfileInvalid too
        raise _fail(str(exc)) from None
    except OSError as exc:  # --root where no directory can be made, say
        raise _fail(f"cannot start the simulated host: {exc.strerror or exc}: {exc.filename or root}") from None
    if ssh:
        try:
            world.start_ssh()
        except (SshdMissing, RuntimeError) as exc:
            world.close()
            raise _fail(str(exc)) from None
    _serve_until_stopped(world, keep)


def _start_cluster(
    profile: str, faults: list[str], time_scale: float | None, load_time_scale: float | None, ssh: bool
) -> SimCluster:
    from ..sim.world.cluster import SimCluster

    try:
        return SimCluster.start(profile, faults=faults, time_scale=time_scale, load_time_scale=load_time_scale, ssh=ssh)
    except ValidationError as exc:
        raise _fail(f"--fault: {validation_message(exc)} (see `specops sim faults`)") from None
    except (SshdMissing, RuntimeError, ValueError) as exc:
        raise _fail(str(exc)) from None


def _serve_until_stopped(started: SimWorld | SimCluster, keep: bool) -> None:
    """Print the world's (or cluster's) summary as one JSON line, then run until SIGINT or SIGTERM."""
    from ..sim.world.cluster import SimCluster

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    try:
        sys.stdout.write(json.dumps(started.summary()) + "\n")
        sys.stdout.flush()
        stop.wait()
    finally:
        if isinstance(started, SimCluster):
            started.close()  # its nodes' trees are its own: always removed
        else:
            started.close(keep_root=keep)


def _parse_mount(spec: str) -> tuple[str, Path]:
    mount_point, eq, directory = spec.partition("=")
    if not eq or not mount_point.startswith("/") or not directory:
        raise ValueError(f"--mount {spec!r}: expected MOUNT=DIR, e.g. /data=/mnt/small")
    path = Path(directory)
    if not path.is_dir():
        raise ValueError(f"--mount {spec!r}: {directory} is not a directory")
    return mount_point, path


@sim_app.command("exec", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def exec_(
    host: Annotated[str, typer.Argument(help="The host a running `specops sim up` printed (sim:NAME)")],
    command: Annotated[list[str], typer.Argument(help="The command and its arguments (after --)")],
    timeout: Annotated[float, typer.Option(help="Seconds before the command is killed")] = 600.0,
) -> None:
    """Run one command on a running simulated host, as a shell on that host would."""
    from ..sim.host.sim_host import inherited_environment
    from ..sim.world.world import attach

    try:
        state = attach(host)
    except (ValueError, FileNotFoundError) as exc:
        raise _fail(str(exc)) from None
    env = {**inherited_environment(), **state.env}  # this machine's Hub token stays here
    try:
        done = subprocess.run(command, env=env, cwd=state.layout.home, timeout=timeout, check=False)
    except FileNotFoundError:
        typer.echo(f"{command[0]}: command not found", err=True)
        raise typer.Exit(code=127) from None
    except subprocess.TimeoutExpired:
        typer.echo(f"timed out after {timeout:g} s: {' '.join(command)}", err=True)
        raise typer.Exit(code=124) from None
    raise typer.Exit(code=done.returncode)
