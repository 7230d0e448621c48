"""`df`: GNU df over the sim host's mounts, with GNU's options, messages and exit codes."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..disk.gnu_df import FIELDS, DfOptions, DfRow, InvalidBlockSize, Units, cells, render, total_cells
from ..disk.usage import mount_of, mount_usage
from ._world import current_world

if TYPE_CHECKING:  # annotations only: these run in every sim command, which must start fast
    from ...world.state_view import WorldStateView

TRY_HELP = "Try 'df --help' for more information."
_SAFE = re.compile(r"[\w@%+=:,./-]+")


class UsageError(Exception):
    """A command-line error: df prints the message and the --help hint, and exits 1."""


@dataclass
class Arguments:
    units: Units = Units()
    posix: bool = False
    inodes: bool = False
    print_type: bool = False
    total: bool = False
    output: list[str] | None = None
    types: list[str] = field(default_factory=list)
    excluded_types: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)


def quote(name: str) -> str:
    """coreutils' quotef: a name is quoted only when a shell would need it."""
    return name if _SAFE.fullmatch(name) else "'" + name.replace("'", "'\\''") + "'"


def _block_size(spec: str, option: str) -> Units:
    try:
        return Units.parse_block_size(spec)
    except InvalidBlockSize:
        raise UsageError(f"df: invalid {option} argument {quote(spec)}") from None


def _output_fields(spec: str) -> list[str]:
    chosen = []
    for name in spec.split(","):
        if name not in FIELDS:
            raise UsageError(f"df: option --output: field {quote(name)} unknown")
        if name in chosen:
            raise UsageError(f"df: option --output: field {quote(name)} used more than once")
        chosen.append(name)
    return chosen


_LONG_FLAGS = {
    "--all": "a",
    "--human-readable": "h",
    "--si": "H",
    "--inodes": "i",
    "--local": "l",
    "--portability": "P",
    "--print-type": "T",
    "--sync": "",
    "--no-sync": "",
}
_LONG_VALUES = {"--block-size": "B", "--type": "t", "--exclude-type": "x"}


def parse(argv: list[str]) -> Arguments:
    args = Arguments()

    def apply(flag: str, value: str | None, spelled: str) -> None:
        if flag == "h":
            args.units = Units(human=1024)
        elif flag == "H":
            args.units = Units(human=1000)
        elif flag == "k":
            args.units = Units(block_size=1024)
        elif flag == "B":
            args.units = _block_size(value or "", spelled)
        elif flag == "P":
            args.posix = True
        elif flag == "i":
            args.inodes = True
        elif flag == "T":
            args.print_type = True
        elif flag == "t":
            args.types.append(value or "")
        elif flag == "x":
            args.excluded_types.append(value or "")
        # -a, -l, --sync: nothing to change on a host without pseudo or remote filesystems

    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            args.paths += argv[i:]
            break
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if name == "--output":
                args.output = _output_fields(value) if eq else list(FIELDS)
            elif name == "--total":
                args.total = True
            elif name in _LONG_FLAGS and not eq:
                apply(_LONG_FLAGS[name], None, name)
            elif name in _LONG_VALUES:
                if not eq:
                    if i >= len(argv):
                        raise UsageError(f"df: option '{name}' requires an argument")
                    value, i = argv[i], i + 1
                apply(_LONG_VALUES[name], value, name)
            else:
                raise UsageError(f"df: unrecognized option '{arg}'")
        elif arg.startswith("-") and arg != "-":
            j = 1
            while j < len(arg):
                flag = arg[j]
                j += 1
                if flag in "BtxO":
                    value = arg[j:]
                    if not value:
                        if i >= len(argv):
                            raise UsageError(f"df: option requires an argument -- '{flag}'")
                        value, i = argv[i], i + 1
                    apply(flag, value, f"-{flag}")
                    break
                if flag not in "ahHiklPTv":
                    raise UsageError(f"df: invalid option -- '{flag}'")
                apply(flag, None, f"-{flag}")
        else:
            args.paths.append(arg)
    if args.output is not None:
        for flag, on in (("-i", args.inodes), ("-P", args.posix), ("-T", args.print_type)):
            if on:
                raise UsageError(f"df: options {flag} and --output are mutually exclusive")
    return args


def _fields(args: Arguments) -> tuple[str, ...]:
    if args.output is not None:
        return tuple(args.output)
    numbers = ("itotal", "iused", "iavail", "ipcent") if args.inodes else ("size", "used", "avail", "pcent")
    return ("source", *(("fstype",) if args.print_type else ()), *numbers, "target")


def _rows(world: WorldStateView, args: Arguments) -> tuple[list[DfRow], list[str]]:
    errors = []
    rows = []
    if not args.paths:
        for mount in world.mounts:
            rows.append(DfRow(mount_usage(world, mount), file="-", target=mount.path))
    for path in args.paths:
        if not os.path.exists(path):
            errors.append(f"df: {quote(path)}: No such file or directory")
            continue
        mount = mount_of(world, path)
        rows.append(DfRow(mount_usage(world, mount), file=path, target=mount.path))
    kept = [
        r
        for r in rows
        if (not args.types or r.usage.mount.fstype in args.types) and r.usage.mount.fstype not in args.excluded_types
    ]
    return kept, errors


def run(argv: list[str]) -> int:
    if "--help" in argv:
        print(
            "Usage: df [OPTION]... [FILE]...\nShow information about the file system on which each FILE resides,\n"
            "or all file systems by default."
        )
        return 0
    if "--version" in argv:
        print("df (GNU coreutils) 9.4")
        return 0
    try:
        args = parse(argv)
    except UsageError as error:
        print(f"{error}\n{TRY_HELP}", file=sys.stderr)
        return 1
    world = current_world()
    rows, errors = _rows(world, args)
    for message in errors:
        print(message, file=sys.stderr)
    if rows:
        options = DfOptions(
            fields=_fields(args), units=args.units, posix=args.posix, output_mode=args.output is not None
        )
        table = [cells(r, options) for r in rows]
        if args.total:
            table.append(total_cells(rows, options))
        sys.stdout.write(render(table, options))
    elif not errors:
        print("df: no file systems processed", file=sys.stderr)
        return 1
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
