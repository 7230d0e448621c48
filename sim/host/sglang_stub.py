"""The `sglang` package a sim host "has installed": its version, `python -m sglang.launch_server` and
`python -m sglang.bench_serving` (and `sglang.benchmark.serving` where the release has it).

The launcher hands over to the serving simulator (specops.sim.serving.launch),
the benchmark to specops.sim.host.bench_serving, each with the world root baked
in, so they find their world from any shell. A host whose profile has no SGLang
(software.sglang: null) gets no package, so neither module exists there.
"""

from __future__ import annotations

from pathlib import Path

from ...sglang_releases.facts import for_version


def _launch_server(root: Path) -> str:
    return f'''"""SGLang's server entry point on this simulated host."""

import sys
from pathlib import Path

ROOT = {str(root)!r}

if __name__ == "__main__":
    from specops.sim.serving.launch import main

    raise SystemExit(main(sys.argv[1:], Path(ROOT)))
'''


def _bench_serving(root: Path, prelude: str = "") -> str:
    return f'''"""SGLang's serving benchmark on this simulated host."""
{prelude}
import sys
from pathlib import Path

ROOT = {str(root)!r}

if __name__ == "__main__":
    from specops.sim.host.bench_serving import main

    raise SystemExit(main(sys.argv[1:], Path(ROOT)))
'''


# 0.5.23's sglang/bench_serving.py: a shim over sglang.benchmark.serving that warns, then runs it.
_DEPRECATED_BENCH_SERVING = """
import warnings

warnings.warn(
    "`sglang.bench_serving` is deprecated and will be removed in a future "
    "release; use `sglang.benchmark.serving` instead "
    "(e.g. `python -m sglang.benchmark.serving`).",
    FutureWarning,
    stacklevel=1,
)
"""


def write_sglang_stub(site_dir: Path, root: Path, version: str) -> Path:
    package = site_dir / "sglang"
    package.mkdir(parents=True, exist_ok=True)
    (package / "version.py").write_text(f"__version__ = {version!r}\n")
    (package / "__init__.py").write_text('from sglang.version import __version__\n\n__all__ = ["__version__"]\n')
    (package / "launch_server.py").write_text(_launch_server(root))
    # 0.5.23 moved the benchmark to sglang.benchmark.serving (sglang.bench_serving stays as a shim that warns).
    module = for_version(version).bench_serving.module
    shim = _DEPRECATED_BENCH_SERVING if module != "sglang.bench_serving" else ""
    (package / "bench_serving.py").write_text(_bench_serving(root, prelude=shim))
    if module != "sglang.bench_serving":
        folder = site_dir / Path(*module.split(".")[:-1])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").touch()
        (folder / f"{module.rsplit('.', 1)[-1]}.py").write_text(_bench_serving(root))
    return package
