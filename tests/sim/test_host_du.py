"""The sim host's `du`: GNU du's output off the virtual mounts, and on them the disk that df counts."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from specops.sim.host.commands.du import Fallback, parse

from .test_host_commands import fixtures, seed, sh  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

GNU_DU = shutil.which("du", path="/usr/bin:/bin")
BLOCK = 512  # the unit of st_blocks


def run_du(world, cwd: Path, argv: list[str], real: bool) -> subprocess.CompletedProcess[bytes]:
    """`du ARGV` in `cwd` with the world's environment: the world's own, or GNU's named `du` all the same."""
    return subprocess.run(
        ["du", *argv], executable=GNU_DU if real else None, env=world.env, cwd=cwd, capture_output=True, timeout=30
    )


@pytest.fixture
def tree(tmp_path) -> Path:
    """A directory outside any world: files, nested and empty directories, hard and symbolic links, sparse files."""
    top = tmp_path / "t"
    (top / "a" / "b" / "c").mkdir(parents=True)
    (top / "empty").mkdir()
    (top / "f1").write_bytes(b"x" * 5000)
    (top / "a" / "f2").write_bytes(b"y" * 100_000)
    (top / "a" / "b" / "f3").write_bytes(b"z" * 300_000)
    (top / "a" / "b" / "c" / "tiny").write_bytes(b"\n")
    os.link(top / "f1", top / "a" / "b" / "hard")
    (top / "a" / "sym").symlink_to("../f1")
    (top / "lnk").symlink_to("a")
    (top / "dangling").symlink_to("nowhere")
    with open(top / "sparse", "wb") as f:  # a 10 GiB apparent size holding no blocks: -h's larger units
        f.truncate(10 * 1024**3)
    with open(top / "a" / "b" / "c" / "edge", "wb") as f:  # 999.5 KiB: -h rounds it up to 1000K
        f.truncate(1_023_500)
    return top


IMPLEMENTED = [
    ["t"],
    ["-a", "t"],
    ["-s", "t"],
    ["-sb", "t"],
    ["-sh", "t"],
    ["-ah", "t"],
    ["-ab", "t"],
    ["--apparent-size", "-a", "t"],
    ["-aB1", "t"],
    ["-k", "t"],
    ["-m", "-a", "t"],
    ["-BM", "-a", "t"],
    ["-B1K", "t"],
    ["-BKB", "-a", "t"],
    ["-BMiB", "-a", "t"],
    ["-B", "4096", "-a", "t"],
    ["--block-size=1M", "-a", "t"],
    ["-hc", "t", "t/a"],
    ["-c", "t/a", "t"],
    ["-s", "t", "t/a"],
    ["-d1", "t"],
    ["--max-depth=2", "-a", "t"],
    ["--max-depth", "0", "t"],
    ["-L", "t"],
    ["-La", "t"],
    ["-P", "-L", "-a", "t"],
    ["-L", "-P", "-a", "t"],
    ["t/lnk"],
    ["-L", "t/lnk"],
    ["-D", "t/lnk"],
    ["-H", "t/lnk"],
    ["-S", "t"],
    ["-Sa", "t"],
    ["-Sc", "t"],
    ["-0", "-a", "t"],
    ["-x", "t"],
    ["-l", "-a", "t"],
    ["-a", "t/", "t//", "t"],
    ["--si", "-a", "t"],
    ["-h", "--apparent-size", "-a", "t"],
    ["t", "nope", "it's", "t/f1"],
    ["-a", "--", "t"],
    ["t", "-s"],
    ["--summ", "t"],
    ["--all", "--total", "--human", "t"],
]
# Left to the real du: options this du does not implement, and the errors GNU du words itself.
LEFT_TO_GNU = [
    ["--exclude=f1", "-a", "t"],
    ["--inodes", "t"],
    ["-t", "100K", "-a", "t"],
    ["-s", "-a", "t"],
    ["-s", "-d1", "t"],
    ["--d", "t"],
    ["-B0", "t"],
    ["--bogus", "t"],
]


@pytest.mark.skipif(GNU_DU is None, reason="needs GNU du (every Debian has it: CI never skips this)")
@pytest.mark.parametrize("argv", IMPLEMENTED + LEFT_TO_GNU, ids=" ".join)
def test_matches_gnu_du_off_the_virtual_mounts(seed, tree, argv):
    ours = run_du(seed, tree.parent, argv, real=False)
    theirs = run_du(seed, tree.parent, argv, real=True)
    assert (ours.stdout, ours.stderr, ours.returncode) == (theirs.stdout, theirs.stderr, theirs.returncode)


def test_the_comparison_runs_this_du_where_it_implements_the_options():
    for argv in IMPLEMENTED:
        parse(argv, {})
    for argv in LEFT_TO_GNU:
        with pytest.raises(Fallback):
            parse(argv, {})


# ---- on a virtual mount: the disk df counts ------------------------------------------------------


def allocated(stored: int, byte_scale: int) -> int:
    """Bytes a virtual mount counts for a file storing `stored` bytes, in whole 512-byte blocks."""
    return -(-stored * byte_scale // BLOCK) * BLOCK


def own_blocks(path: Path) -> int:
    return os.lstat(path).st_blocks * BLOCK


def parse_lines(stdout: str) -> dict[str, int]:
    return {path: int(size) for size, path in (line.split("\t") for line in stdout.splitlines())}


@pytest.fixture
def virtual_tree(seed) -> Path:
    """A directory under the seed host's home, which lies on its virtual `/`."""
    top = Path(seed.env["HOME"]) / "du-virtual"
    shutil.rmtree(top, ignore_errors=True)
    (top / "sub").mkdir(parents=True)
    (top / "w.bin").write_bytes(b"w" * 1000)
    (top / "sub" / "x.bin").write_bytes(b"x" * 3000)
    (top / "sub" / "empty.txt").write_bytes(b"")
    os.link(top / "w.bin", top / "sub" / "hard")
    return top


def test_summary_counts_byte_scale_times_what_is_stored(seed, virtual_tree):
    scale = seed.byte_scale
    assert scale > 1
    files = allocated(1000, scale) + allocated(3000, scale) + allocated(0, scale)  # the hard link counts once
    dirs = own_blocks(virtual_tree) + own_blocks(virtual_tree / "sub")
    summary = sh(seed, "du", "-s", "-B1", str(virtual_tree)).stdout
    assert summary == f"{files + dirs}\t{virtual_tree}\n"
    # The apparent size is what the files hold: the bytes a program reading them gets.
    apparent = sh(seed, "du", "-sb", "du-virtual").stdout
    stored = 1000 + 3000 + os.lstat(virtual_tree).st_size + os.lstat(virtual_tree / "sub").st_size
    assert apparent == f"{stored}\tdu-virtual\n"


def test_every_file_and_directory_counts_as_the_disk_does(seed, virtual_tree):
    scale = seed.byte_scale
    lines = parse_lines(sh(seed, "du", "-a", "-B1", "du-virtual").stdout)
    # One of the two names of the hard-linked file is listed, the first met; the other counts nothing.
    linked = [name for name in ("du-virtual/w.bin", "du-virtual/sub/hard") if name in lines]
    assert len(linked) == 1 and lines[linked[0]] == allocated(1000, scale)
    assert lines["du-virtual/sub/x.bin"] == allocated(3000, scale)
    assert lines["du-virtual/sub/empty.txt"] == 0
    in_sub = allocated(1000, scale) if linked == ["du-virtual/sub/hard"] else 0
    sub = own_blocks(virtual_tree / "sub") + allocated(3000, scale) + in_sub
    assert lines["du-virtual/sub"] == sub
    in_top = allocated(1000, scale) if linked == ["du-virtual/w.bin"] else 0
    assert lines["du-virtual"] == own_blocks(virtual_tree) + sub + in_top
    assert len(lines) == 5


def test_a_new_file_takes_what_df_says_it_took(seed, virtual_tree):
    def used() -> int:
        return int(sh(seed, "df", "-B1", "--output=used", str(virtual_tree)).stdout.splitlines()[1])

    before = used()
    new = virtual_tree / "shard.bin"
    new.write_bytes(b"s" * 4096)
    grown = used() - before
    assert grown == 4096 * seed.byte_scale
    assert sh(seed, "du", "-B1", str(new)).stdout == f"{grown}\t{new}\n"
    # -h reads the same disk: 4096 bytes stored at byte_scale 1024 are 4.0M.
    if seed.byte_scale == 1024:
        assert sh(seed, "du", "-h", str(new)).stdout == f"4.0M\t{new}\n"
