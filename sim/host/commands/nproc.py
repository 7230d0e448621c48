"""`nproc`: the host's logical CPUs."""

from __future__ import annotations

import sys

from ._world import current_world


def run(argv: list[str]) -> int:
    for arg in argv:
        if arg not in ("--all",) and not arg.startswith("--ignore"):
            message = (
                f"nproc: unrecognized option '{arg}'"
                if arg.startswith("--")
                else f"nproc: invalid option -- '{arg.lstrip('-')[:1]}'"
            )
            if not arg.startswith("-"):
                message = f"nproc: extra operand '{arg}'"
            print(f"{message}\nTry 'nproc --help' for more information.", file=sys.stderr)
            return 1
    print(current_world().profile.cpu.cores)
    return 0


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
