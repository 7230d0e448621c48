"""`nvidia-smi`: the summary table, `-q`, `-L`, `topo -m`, `--query-gpu`, `--query-compute-apps`, `-i`."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from datetime import datetime

from ...world import hardware
from ...world.gpu_registry import live_holdings
from ..gpu.details import render_details
from ..gpu.devices import SimGpu, host_gpus
from ..gpu.query import CsvFormat, UnknownFieldError, parse_fields, render_apps_query, render_gpu_query
from ..gpu.table import render_table
from ..gpu.topology import render_topology
from ._world import current_world

# nvidia-smi's documented return codes.
EXIT_INVALID_ARGUMENT = 2
EXIT_NOT_FOUND = 6
EXIT_GPU_LOST = 15  # "A GPU has fallen off the bus or has otherwise become inaccessible" (nvidia-smi(1))
INVALID_COMBINATION = "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help."

HELP = """NVIDIA System Management Interface -- v{driver}

NVSMI provides monitoring information for each of NVIDIA's Tesla devices
and each of its high-end Fermi-based and Kepler-based Quadro devices.
It provides full management capability for Tesla devices.

nvidia-smi [OPTION1 [ARG1]] [OPTION2 [ARG2]] ...

    -h,   --help                Print usage information and exit.

  LIST OPTIONS:

    -L,   --list-gpus           Display a list of GPUs connected to the system.

  SUMMARY OPTIONS:

    <no arguments>              Show a summary of GPUs connected to the system.

    [plus any of]

    -i,   --id=                 Target a specific GPU.

  QUERY OPTIONS:

    -q,   --query               Display GPU or Unit info.

    [plus any of]

    -i,   --id=                 Target a specific GPU or Unit.

  SELECTIVE QUERY OPTIONS:

    --query-gpu                 Information about GPU.
                                Call --help-query-gpu for more info.
    --query-compute-apps        List of currently active compute processes.
                                Call --help-query-compute-apps for more info.
    --format=                   Comma separated list of format options:
                                  csv - comma separated values (MANDATORY)
                                  noheader - skip the first line with column headers
                                  nounits - don't print units for numerical
                                             values

  TOPOLOGY:

    topo                        Displays device/system topology. "nvidia-smi topo -h" for more information.
"""


class InvalidArguments(Exception):
    pass


@dataclass
class Request:
    mode: str = "table"  # table | details | list | topo | query-gpu | query-apps | help | version
    ids: list[str] = field(default_factory=list)
    fields: str = ""
    format: str | None = None


def _value(args: list[str], i: int, arg: str, long_name: str) -> tuple[str, int]:
    """The value of `--opt=V`, `--opt V` or `-o V`, and the index after it."""
    if arg.startswith(long_name + "="):
        return arg.split("=", 1)[1], i + 1
    if i + 1 >= len(args):
        raise InvalidArguments
    return args[i + 1], i + 2


def parse(args: list[str]) -> Request:
    request = Request()
    if args and args[0] == "topo":
        if args[1:] != ["-m"] and args[1:] != ["--matrix"]:
            raise InvalidArguments
        request.mode = "topo"
        return request
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-h", "--help"):
            request.mode, i = "help", i + 1
        elif arg == "--version":
            request.mode, i = "version", i + 1
        elif arg in ("-q", "--query"):
            request.mode, i = "details", i + 1
        elif arg in ("-L", "--list-gpus"):
            request.mode, i = "list", i + 1
        elif arg == "-i" or arg == "--id" or arg.startswith("--id="):
            value, i = _value(args, i, arg, "--id")
            request.ids += [v.strip() for v in value.split(",") if v.strip()]
        elif arg.startswith("-i") and len(arg) > 2:
            request.ids += [v.strip() for v in arg[2:].split(",") if v.strip()]
            i += 1
        elif arg == "--query-gpu" or arg.startswith("--query-gpu="):
            request.fields, i = _value(args, i, arg, "--query-gpu")
            request.mode = "query-gpu"
        elif arg == "--query-compute-apps" or arg.startswith("--query-compute-apps="):
            request.fields, i = _value(args, i, arg, "--query-compute-apps")
            request.mode = "query-apps"
        elif arg == "--format" or arg.startswith("--format="):
            request.format, i = _value(args, i, arg, "--format")
        else:
            raise InvalidArguments
    if request.mode in ("query-gpu", "query-apps") and request.format is None:
        raise InvalidArguments
    return request


def _select(gpus: list[SimGpu], ids: list[str]) -> list[SimGpu] | None:
    """GPUs by index, UUID or PCI bus id; None if one is not found."""
    if not ids:
        return gpus
    chosen = []
    for wanted in ids:
        match = next(
            (g for g in gpus if wanted == str(g.index) or wanted == g.uuid or wanted.upper() == g.bus_id.upper()),
            None,
        )
        if match is None:
            return None
        chosen.append(match)
    return chosen


def run(args: list[str]) -> int:
    try:
        request = parse(args)
    except InvalidArguments:
        print(INVALID_COMBINATION)
        return EXIT_INVALID_ARGUMENT
    world = current_world()
    profile = world.profile
    spec = profile.gpus
    if request.mode == "help":
        sys.stdout.write(HELP.format(driver=spec.driver_version))
        return 0
    if request.mode == "version":
        nvml = ".".join(spec.driver_version.split(".")[:2])
        sys.stdout.write(
            f"NVIDIA-SMI version  : {spec.driver_version}\nNVML version        : {nvml}\n"
            f"DRIVER version      : {spec.driver_version}\nCUDA Version        : {spec.cuda_version}\n"
        )
        return 0
    every_gpu = host_gpus(profile, live_holdings(world.layout))
    lost = set(hardware.lost_gpus(world.layout))  # fell off the bus (Xid 79): NVML cannot reach them
    for gpu in every_gpu:
        if gpu.index in lost:
            print(f"Unable to determine the device handle for GPU {gpu.bus_id[4:]}: Unknown Error")
    all_gpus = [g for g in every_gpu if g.index not in lost]
    gpus = _select(all_gpus, request.ids)
    if gpus is None:
        print("No devices were found")
        return EXIT_NOT_FOUND
    now = datetime.now()
    if request.mode == "table":
        sys.stdout.write(
            render_table(gpus, driver_version=spec.driver_version, cuda_version=spec.cuda_version, now=now)
        )
    elif request.mode == "details":
        sys.stdout.write(
            render_details(
                gpus,
                driver_version=spec.driver_version,
                cuda_version=spec.cuda_version,
                attached=len(all_gpus),
                now=now,
            )
        )
    elif request.mode == "list":
        sys.stdout.write("".join(f"GPU {g.index}: {g.name} (UUID: {g.uuid})\n" for g in gpus))
    elif request.mode == "topo":
        sys.stdout.write(render_topology(all_gpus, profile))
    else:
        try:
            fmt = CsvFormat.parse(request.format or "")
        except ValueError:
            print(INVALID_COMBINATION)
            return EXIT_INVALID_ARGUMENT
        fields = parse_fields(request.fields)
        try:
            if request.mode == "query-gpu":
                text = render_gpu_query(gpus, fields, fmt, all_count=len(all_gpus))
            else:
                text = render_apps_query(gpus, fields, fmt)
        except UnknownFieldError as error:
            print(f"{error}\n")
            return EXIT_INVALID_ARGUMENT
        sys.stdout.write(text)
    return EXIT_GPU_LOST if lost else 0


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
