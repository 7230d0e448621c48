"""The committed sglang_releases/data is what extract.py reads from each modelled release's own wheel, field by field.

The wheels are fetched with pip (the exact files the data names: the same on any machine, whatever its own Python
or platform) into pytest's cache, or taken from SPECOPS_SGLANG_WHEELS, a folder that already holds them. A wheel
that cannot be had fails the test: a fact checked only where a wheel happens to lie about is a fact never checked.
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
        raise WheelUnavailable(
            f"pip could not download {name} (exit {done.returncode}): {done.stderr.strip()[-1500:]}\n"
            f"Give the package index access, or put {name} in a folder named by {WHEELS_ENV}."
        )
    return cache / name


@pytest.fixture(scope="module")
def wheels(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the wheels are kept: pytest's cache (kept between runs) when it is on, else this session's tmp."""
    cache = getattr(request.config, "cache", None)
    return cache.mkdir("sglang-wheels") if cache is not None else tmp_path_factory.mktemp("sglang-wheels")


@pytest.mark.timeout(DOWNLOAD_TIMEOUT_S + 120)
@pytest.mark.parametrize("version", modelled_versions())
def test_the_extractor_reproduces_the_committed_data(version: str, wheels: Path) -> None:
    extracted, committed = extract(release_wheel(version, wheels)).model_dump(), load(version).model_dump()
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
