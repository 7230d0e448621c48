"""`huggingface-cli`, as the host's huggingface_hub version has it.

- 0.34 up to 1.0: it still works, warning that `hf` replaces it, and runs as `hf`.
- before 0.34: it is the only CLI, and runs without a warning.
- 1.x: a stub that says it no longer works and exits 1, downloading nothing.
- 2.x: not installed (the builder puts no `huggingface-cli` on PATH).
"""

from __future__ import annotations

import sys

from ...profiles.schema import version_tuple
from ._world import current_world
from .hf import run as run_hf

# huggingface_hub 1.x's `huggingface-cli` entry point prints this and exits 1.
NO_LONGER_WORKS = (
    "Warning: `huggingface-cli` is deprecated and no longer works. Use `hf` instead.\n"
    "Hint: `hf` is already installed! Use it directly.\n"
)
NO_LONGER_WORKS_EXIT = 1


def run(argv: list[str]) -> int:
    version = current_world().profile.software.huggingface_hub
    major = version_tuple(version)[0]
    if major >= 1:
        sys.stderr.write(NO_LONGER_WORKS)
        return NO_LONGER_WORKS_EXIT
    if version_tuple(version) >= (0, 34):
        command = next((a for a in argv if not a.startswith("-")), None)
        old = f"huggingface-cli {command}" if command else "huggingface-cli"
        new = f"hf {command}" if command else "hf"
        print(f"⚠️  Warning: '{old}' is deprecated. Use '{new}' instead.", file=sys.stderr)
    return run_hf(argv)


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
