"""specops as most users install it (`pip install .`, pipx, a built wheel), not as the editable install the tests use.

The wheel is built from a copy of the working tree (sdist first, then the wheel from the sdist, as `python -m build`
does; offline, with this environment's pinned setuptools), installed into a fresh venv, and its own `specops` console
script runs the README's main job, `specops eval --help` and `specops doctor`. Every file the package folders hold
must be in the wheel: the code reads its release facts, prompts, schemas, profiles, fixtures, scenarios and goldens
from beside itself.

Installing the dependencies anew would take minutes, so the fresh venv borrows this venv's site-packages through a
.pth file (a path there, not a site directory: the editable install's finder there stays off) and its dependencies'
console scripts; specops itself comes from the wheel alone, which the commands, run from an empty directory, check.
"""

from __future__ import annotations

import ast
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from ..jobs import HANG_S, job_timeout, run_job

# The build and install (the module fixture, set up by its first test) and the commands: only a hang fails.
pytestmark = [pytest.mark.serial, job_timeout(), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
# Repository files kept beside the code but never read by it: the CI example and the baseline it saves.
NOT_SHIPPED = {"evals/ci-example.yml", "evals/baseline/eval-report.json"}
# The playbook's smallest run, and a fast simulated clock: the same job in well under the README's minutes.
QUICK = ["--model", "playbook:levels=1;ar_layouts=1;spec_layouts=1;acceptance_prompts=4", "--time-scale", "100"]


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path
    cwd: Path  # empty: nothing there to import specops from
    env: dict[str, str]

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    def run(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
        """A command of the installed package, ended with what it started (tests/jobs.py)."""
        return run_job(argv, cwd=self.cwd, env=self.env, timeout=timeout)


def _top_level() -> list[str]:
    """setup.py's TOP_LEVEL: the folders that install as specops.<folder>."""
    for node in ast.walk(ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "TOP_LEVEL" for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise AssertionError("setup.py has no TOP_LEVEL")


def _tree_files() -> list[str]:
    """The working tree's files as git sees them (tracked or new, less what .gitignore ignores), that exist."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted({p for p in listed.split("\0") if p and (ROOT / p).is_file()})


def _borrow_scripts(venv: Path) -> None:
    """This venv's console scripts, pointed at the fresh venv's python, as installing the dependencies would have
    written them (the simulated host runs the real `hf` found beside the interpreter)."""
    here = Path(sys.executable).parent
    for script in here.iterdir():
        target = venv / "bin" / script.name
        if target.exists() or not script.is_file():
            continue
        with script.open("rb") as f:
            first = f.readline()
        interpreter = Path(first[2:].decode(errors="replace").strip())
        if not first.startswith(b"#!") or interpreter.parent != here or not interpreter.name.startswith("python"):
            continue  # a binary, or a script of another interpreter
        target.write_bytes(f"#!{venv / 'bin' / 'python'}\n".encode() + script.read_bytes()[len(first) :])
        target.chmod(0o755)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    work = tmp_path_factory.mktemp("wheel")
    # A copy, so that neither build/ nor *.egg-info lands in the working tree, and no stale build/lib feeds the wheel.
    src = work / "src"
    for name in _tree_files():
        if not name.startswith("tests/"):
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    dist = work / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(src)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (wheel,) = dist.glob("specops-*.whl")

    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "--quiet"]
    done = subprocess.run([*pip, str(wheel)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    _borrow_scripts(venv)

    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}}
    here = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(d for d in env.get("PATH", "").split(os.pathsep) if d and d != here)
    cwd = work / "cwd"
    cwd.mkdir()
    return Installed(wheel=wheel, venv=venv, cwd=cwd, env=env)


def test_the_wheel_holds_every_file_of_the_package_folders(installed):
    folders = tuple(f"{top}/" for top in _top_level())
    wanted = {
        f"specops/{name}"
        for name in _tree_files()
        if name.startswith(folders) and name not in NOT_SHIPPED and "__pycache__" not in name
    }
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        requires = [line for line in wheel.read(metadata).decode().splitlines() if line.startswith("Requires-Dist:")]
    assert sorted(wanted - names) == []
    assert any(n.startswith("specops/sglang_releases/data/") and n.endswith(".json") for n in names)
    # A simulated world brings what its profile says its hosts have: the gateway comes with the plain install.
    router = [line for line in requires if line.split()[1].startswith("sglang-router")]
    assert router and all("extra ==" not in line for line in router), requires


def test_specops_imports_from_the_wheel(installed):
    code = (
        "import json, specops, specops.sglang_releases, specops.sglang_releases.facts as f; "
        "print(json.dumps([list(specops.__path__), specops.sglang_releases.__file__, f.__file__]))"
    )
    done = installed.run([str(installed.bin / "python"), "-c", code], timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    namespace, package, facts = json.loads(done.stdout)
    for path in [*namespace, package, facts]:
        assert Path(path).resolve().is_relative_to(installed.venv.resolve()), path


def _readme_main_job() -> list[str]:
    """The README's first `specops run` command line, its arguments as given there."""
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        for part in line.split("&&"):
            argv = shlex.split(part)
            if len(argv) > 2 and Path(argv[0]).name == "specops" and argv[1] == "run":
                return argv[1:]
    raise AssertionError("README.md has no `specops run` command line")


@pytest.mark.slow
@job_timeout(jobs=2)  # the README's run, a whole job, and the module's build and install when set up here
def test_the_readme_main_job_runs_from_the_wheel(installed):
    argv = [str(installed.bin / "specops"), *_readme_main_job(), *QUICK]
    done = installed.run(argv, timeout=HANG_S)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    reports = list((installed.cwd / "runs").glob("*/report.md"))
    assert len(reports) == 1, done.stdout[-3000:]


def test_eval_and_doctor_start_from_the_wheel(installed):
    helped = installed.run([str(installed.bin / "specops"), "eval", "--help"], timeout=120)
    assert helped.returncode == 0 and "Usage" in helped.stdout, helped.stdout[-3000:] + helped.stderr[-3000:]
    # doctor exits 1 when it finds problems, as it does on seed-ct200's nearly full disk: a crash prints no JSON.
    doctor = installed.run([str(installed.bin / "specops"), "doctor", "sim:seed-ct200", "--json"], timeout=300)
    assert doctor.returncode in (0, 1), doctor.stdout[-3000:] + doctor.stderr[-3000:]
    assert json.loads(doctor.stdout)["reached"] is True
