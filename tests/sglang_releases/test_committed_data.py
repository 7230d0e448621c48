"""The committed sglang_releases/data is what extract.py reads from each modelled release's own wheel, field by field.

The wheels are fetched with pip (the exact files the data names: the same on any machine, whatever its own Python
or platform). The test command fetches them before the tests (`python tests/sglang_releases/test_committed_data.py
DIR`, into .cache/sglang-wheels) and names the folder in SPECOPS_SGLANG_WHEELS; a wheel not there is fetched into
pytest's cache. A wheel that cannot be had fails the test in one line saying what to run: a fact checked only where a
wheel happens to lie about is a fact never checked.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from specops.sglang_releases.extract import extract
from specops.sglang_releases.facts import load, modelled_versions

WHEELS_ENV = "SPECOPS_SGLANG_WHEELS"
FETCH_SCRIPT = "tests/sglang_releases/test_committed_data.py"  # run as a script: fetches every wheel into a folder
DOWNLOAD_TIMEOUT_S = 300


class WheelUnavailable(Exception):
    """pip could not fetch a release wheel the committed data was extracted from."""


def _pip_download_argv(wheel_name: str, version: str, into: Path) -> list[str]:
    """pip's words for exactly this file: its Python, ABI and platform tags, whatever this machine's are."""
    _, _, python_tag, abi, platform = wheel_name.removesuffix(".whl").split("-")
    argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet"]
    argv += ["--disable-pip-version-check", "--dest", str(into)]
    if platform != "any":  # a compiled wheel: ask for its tags (cp311 -> Python 3.11)
        argv += ["--platform", platform, "--abi", abi, "--implementation", python_tag[:2]]
        argv += ["--python-version", f"{python_tag[2]}.{python_tag[3:]}"]
    return [*argv, f"sglang=={version}"]


def release_wheel(version: str, cache: Path) -> Path:
    """The wheel the committed facts of `version` were read from."""
    name = load(version).wheel
    for folder in (os.environ.get(WHEELS_ENV), cache):
        if folder and (Path(folder) / name).is_file():
            return Path(folder) / name
    done = subprocess.run(
        _pip_download_argv(name, version, cache), capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT_S
    )
    if done.returncode != 0 or not (cache / name).is_file():
        said = (done.stderr.strip().splitlines() or [""])[-1][-300:]
        raise WheelUnavailable(
            f"{name} is not in {WHEELS_ENV} and pip could not download it (exit {done.returncode}: {said}): run "
            f"`bash tests/run.sh tests/sglang_releases` where the package index is reachable (it fetches the wheels "
            f"into .cache/sglang-wheels), or `python {FETCH_SCRIPT} DIR` and set {WHEELS_ENV}=DIR"
        )
    return cache / name


@pytest.fixture(scope="module")
def wheels(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the wheels are kept: pytest's cache (kept between runs) when it is on, else this session's tmp."""
    cache = getattr(request.config, "cache", None)
    return cache.mkdir("sglang-wheels") if cache is not None else tmp_path_factory.mktemp("sglang-wheels")


@pytest.mark.slow
@pytest.mark.timeout(DOWNLOAD_TIMEOUT_S + 120)
@pytest.mark.parametrize("version", modelled_versions())
def test_the_extractor_reproduces_the_committed_data(version: str, wheels: Path) -> None:
    try:
        wheel = release_wheel(version, wheels)
    except WheelUnavailable as exc:
        unavailable = str(exc)
    else:
        unavailable = ""
    if unavailable:
        pytest.fail(unavailable, pytrace=False)  # one line: what to run
    extracted, committed = extract(wheel).model_dump(), load(version).model_dump()
    differing = [field for field in committed if extracted.get(field) != committed[field]]
    assert not differing, (
        f"sglang_releases/data/{version}.json differs from the wheel's extraction in {differing}: re-extract it "
        "(python -m specops.sglang_releases.extract WHEEL) or fix the extractor"
    )


def test_pip_is_asked_for_the_exact_file(tmp_path: Path) -> None:
    compiled = _pip_download_argv("sglang-0.5.23-cp311-cp311-manylinux_2_34_x86_64.whl", "0.5.23", tmp_path)
    assert compiled[-1] == "sglang==0.5.23" and "--no-deps" in compiled
    flags = dict(zip(compiled, compiled[1:], strict=False))
    assert flags["--platform"] == "manylinux_2_34_x86_64" and flags["--abi"] == "cp311"
    assert flags["--python-version"] == "3.11" and flags["--implementation"] == "cp"
    pure = _pip_download_argv("sglang-0.5.10.post1-py3-none-any.whl", "0.5.10.post1", tmp_path)
    assert "--platform" not in pure and pure[-1] == "sglang==0.5.10.post1"


def fetch_all(into: Path) -> int:
    """Fetch every modelled release's wheel into `into` (kept: a wheel already there is not fetched again)."""
    into.mkdir(parents=True, exist_ok=True)
    failed = 0
    for version in modelled_versions():
        try:
            print(release_wheel(version, into))
        except WheelUnavailable as exc:
            print(exc, file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: python {FETCH_SCRIPT} DIR")
    sys.exit(fetch_all(Path(sys.argv[1]).resolve()))
