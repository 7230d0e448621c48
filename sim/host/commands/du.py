"""`du`: GNU du (coreutils 9) on a sim host, counting a virtual mount's files as its df counts them.

A virtual mount stores 1/byte_scale of each file (disk/usage.py), so the real du there would report a disk a
byte_scale smaller than the one df shows. This du walks the tree as GNU du's fts walk does and takes each
file's allocation from disk/allocation.py: byte_scale times what is stored on a virtual mount, the kernel's
figure anywhere else, where its output is GNU du's to the byte. What it does not implement (--exclude,
--time, --inodes, --threshold, --files0-from, --help, an option GNU du would refuse, ...) runs the real du
with the same arguments, so nothing GNU du accepts is refused and every usage error reads as GNU's.
"""

from __future__ import annotations

import getopt
import os
import re
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Literal

from ..disk.allocation import BLOCK_BYTES, AllocationView
from ..disk.gnu_df import human_size
from . import ROOT_VARIABLE

PROGRAM = "du"
_POWERS = "KMGTPEZY"
# getopt's spelling of GNU du's short options; t and X (threshold, exclude-from) are left to the real du.
_SHORT_OPTIONS = "0abchHklmsxDLPSd:B:t:X:"
# GNU du's long options: name -> (the short flag it means here, whether it takes a value). A name mapped to "" is
# one this module leaves to the real du.
_LONG_OPTIONS: dict[str, tuple[str, bool]] = {
    "all": ("a", False),
    "apparent-size": ("apparent-size", False),
    "block-size": ("B", True),
    "bytes": ("b", False),
    "count-links": ("l", False),
    "dereference": ("L", False),
    "dereference-args": ("D", False),
    "exclude": ("", True),
    "exclude-from": ("", True),
    "files0-from": ("", True),
    "human-readable": ("h", False),
    "inodes": ("", False),
    "si": ("si", False),
    "max-depth": ("d", True),
    "null": ("0", False),
    "no-dereference": ("P", False),
    "one-file-system": ("x", False),
    "separate-dirs": ("S", False),
    "summarize": ("s", False),
    "total": ("c", False),
    "threshold": ("", True),
    "time": ("", False),  # its value is optional, which getopt cannot say: any use goes to the real du anyway
    "time-style": ("", True),
    "help": ("", False),
    "version": ("", False),
}


class Fallback(Exception):
    """What this du leaves to the real one: an option it does not implement, or an error GNU du words itself."""


@dataclass(frozen=True)
class Units:
    """How sizes print: human-readable in `human` (1024 for -h, 1000 for --si), or in blocks of `block_size`
    bytes rounded up, followed by `suffix` when the block size was named by its unit alone (-BM prints 5M)."""

    block_size: int = 1024
    human: int | None = None
    suffix: str = ""

    def format(self, n: int) -> str:
        if self.human:
            return human_size(n, self.human)
        return f"{-(-n // self.block_size)}{self.suffix}"


_UNIT_FLAGS = {
    "h": Units(block_size=1, human=1024),
    "si": Units(block_size=1, human=1000),
    "k": Units(block_size=1024),
    "m": Units(block_size=1024 * 1024),
}
_FLAG_ATTRIBUTES = {
    "apparent-size": "apparent",
    "a": "all",
    "s": "summarize",
    "c": "total",
    "S": "separate_dirs",
    "l": "count_links",
    "0": "null",
    "x": "one_file_system",
}


@dataclass
class Options:
    units: Units = Units()
    apparent: bool = False
    all: bool = False
    summarize: bool = False
    total: bool = False
    separate_dirs: bool = False
    count_links: bool = False
    null: bool = False
    one_file_system: bool = False
    follow: Literal["none", "args", "all"] = "none"  # -P, -D/-H, -L
    max_depth: int | None = None
    paths: list[str] = field(default_factory=list)


def parse_block_size(spec: str) -> Units:
    """GNU's block-size spec (-B, DU_BLOCK_SIZE): 1, 4096, K, 1K, M, KB, MiB, human-readable, si.

    Anything else (octal 010, hex, overflow, an invalid spec) goes to the real du, which parses or refuses it.
    """
    if spec in ("human-readable", "si"):
        return Units(block_size=1, human=1024 if spec == "human-readable" else 1000)
    match = re.fullmatch(r"([1-9][0-9]*)?(?:([kKMGTPEZY])(iB|B)?)?", spec)
    if not spec or match is None:
        raise Fallback(spec)
    number, letter, bytes_suffix = match.groups()
    base = 1000 if bytes_suffix == "B" else 1024
    exponent = _POWERS.index(letter.upper()) + 1 if letter else 0
    size = int(number or 1) * base**exponent
    if size >= 2**64:
        raise Fallback(spec)
    suffix = ""
    if letter and not number:  # GNU prints the unit only when the spec named no number: K, kB, MiB
        suffix = "k" if base == 1000 and exponent == 1 else letter.upper()
        suffix += {"iB": "iB", "B": "B", None: ""}[bytes_suffix]
    return Units(block_size=size, suffix=suffix)


def default_units(env: Mapping[str, str]) -> Units:
    """The units before any option: DU_BLOCK_SIZE, else BLOCK_SIZE, else BLOCKSIZE, else 1K blocks."""
    for name in ("DU_BLOCK_SIZE", "BLOCK_SIZE", "BLOCKSIZE"):
        spec = env.get(name)
        if spec:
            return parse_block_size(spec)
    return Units()


def apply(options: Options, flag: str, value: str | None) -> None:
    """One option, as du's getopt loop applies it: the last of the unit and link-following options wins."""
    if flag in ("", "t", "X"):
        raise Fallback(flag)  # an option this du leaves to the real one
    if flag in _UNIT_FLAGS:
        options.units = _UNIT_FLAGS[flag]
    elif flag == "B":
        options.units = parse_block_size(value or "")
    elif flag == "b":
        options.apparent, options.units = True, Units(block_size=1)
    elif flag == "d":
        if value is None or not re.fullmatch(r"0|[1-9][0-9]*", value):
            raise Fallback(value)  # GNU reads 010 as octal and refuses a negative depth
        options.max_depth = int(value)
    elif flag in "LPDH":
        options.follow = "all" if flag == "L" else "none" if flag == "P" else "args"
    else:
        setattr(options, _FLAG_ATTRIBUTES[flag], True)


def parse(argv: list[str], env: Mapping[str, str]) -> Options:
    """GNU getopt_long over du's options (the stdlib's gnu_getopt: flags may follow operands, short ones combine
    as in -sh and -aB1, long ones may be abbreviated); what it refuses, the real du refuses in its own words."""
    if env.get("POSIXLY_CORRECT") is not None:
        raise Fallback("POSIXLY_CORRECT")  # 512-byte blocks and options only before operands: the real du's
    longs = [f"{name}=" if takes else name for name, (_, takes) in _LONG_OPTIONS.items()]
    try:
        given, paths = getopt.gnu_getopt(argv, _SHORT_OPTIONS, longs)
    except getopt.GetoptError as error:
        raise Fallback(str(error)) from None
    options = Options(units=default_units(env), paths=paths)
    for name, value in given:
        flag = _LONG_OPTIONS[name[2:]][0] if name.startswith("--") else name[1:]
        apply(options, flag, value)
    if options.summarize and (options.all or options.max_depth not in (None, 0)):
        raise Fallback("-s")  # GNU refuses -s with -a or with a depth other than 0
    return options


def quote(name: str) -> str:
    """coreutils' quoteaf (shell-escape-always): 'a b', "it's", 'a'$'\\n''b'."""
    control = [c for c in name if ord(c) < 32 or ord(c) == 127]
    if "'" in name and not control and not set(name) & set('"$`\\!'):
        return f'"{name}"'
    escapes = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r"}
    out, escaping = ["'"], False
    for c in name:
        if c in control:
            if not escaping:
                out.append("'$'")
                escaping = True
            out.append(escapes.get(c, f"\\{ord(c):03o}"))
            continue
        if escaping:
            out.append("''")
            escaping = False
        out.append("'\\''" if c == "'" else c)
    return "".join(out) + "'"


def root_path(arg: str) -> str:
    """An operand as fts keeps it: two or more trailing slashes become one ("d//" is "d/")."""
    while len(arg) > 2 and arg.endswith("//"):
        arg = arg[:-1]
    return arg


def child_path(parent: str, name: str) -> str:
    """fts's path for an entry: the parent's, less one trailing slash, then "/" and the name."""
    return f"{parent[:-1] if parent.endswith('/') else parent}/{name}"


class DiskUsage:
    """GNU du's walk: each entry is stat'ed, counted once, summed into its directory and printed in post-order."""

    def __init__(self, options: Options, view: AllocationView | None, out: BinaryIO) -> None:
        self.options = options
        self.view = view
        self.out = out
        self.seen: set[tuple[int, int]] = set()
        # With several operands or -L a file with one link can be met twice: du then remembers every inode.
        self.hash_all = len(options.paths) > 1 or options.follow == "all"
        self.max_depth = 0 if options.summarize else options.max_depth
        self.grand_total = 0
        self.ok = True

    def error(self, message: str) -> None:
        self.out.flush()  # what was printed before the error shows before it on a terminal
        print(f"{PROGRAM}: {message}", file=sys.stderr, flush=True)
        self.ok = False

    def print_size(self, size: int, path: str) -> None:
        end = b"\0" if self.options.null else b"\n"
        self.out.write(self.options.units.format(size).encode() + b"\t" + os.fsencode(path) + end)

    def stat_entry(self, path: str, level: int) -> os.stat_result | None:
        """The entry's stat as the disk counts it, following a symlink where -L (or -D for an operand) says to;
        None, with du's message, when it cannot be stat'ed."""
        follow = self.options.follow == "all" or (self.options.follow == "args" and level == 0)
        try:
            st = os.stat(path) if follow else os.lstat(path)
        except FileNotFoundError as error:
            if follow and os.path.lexists(path):
                self.error(f"cannot access {quote(path)}")  # a dangling symlink: fts reports it without errno
            else:
                self.error(f"cannot access {quote(path)}: {os.strerror(error.errno or 0)}")
            return None
        except OSError as error:
            self.error(f"cannot access {quote(path)}: {os.strerror(error.errno or 0)}")
            return None
        return self.view.present(st, path) if self.view else st

    def first_time(self, st: os.stat_result) -> bool:
        """Whether this inode is counted here: a hard link (or, when hashing all, anything) counts only once."""
        if self.options.count_links:
            return True
        if not (self.hash_all or (not stat.S_ISDIR(st.st_mode) and st.st_nlink > 1)):
            return True
        key = (st.st_dev, st.st_ino)
        if key in self.seen:
            return False
        self.seen.add(key)
        return True

    def size_of(self, st: os.stat_result) -> int:
        return max(0, st.st_size) if self.options.apparent else st.st_blocks * BLOCK_BYTES

    def shown(self, level: int, is_dir: bool) -> bool:
        within = self.max_depth is None or level <= self.max_depth
        return level == 0 or (within and (is_dir or self.options.all))

    def visit(self, path: str, level: int, root_dev: int, ancestors: frozenset[tuple[int, int]]) -> tuple[int, bool]:
        """Walk `path` at depth `level`: (bytes it adds to its directory's total, whether it is a directory)."""
        st = self.stat_entry(path, level)
        if st is None:
            return 0, False
        is_dir = stat.S_ISDIR(st.st_mode)
        if level > 0 and self.options.one_file_system and st.st_dev != root_dev:
            return 0, is_dir  # -x: another file system below an operand is not entered
        if (st.st_dev, st.st_ino) in ancestors:
            return 0, is_dir  # a symlink followed back up the tree (-L): fts reports a cycle, du skips it
        if not self.first_time(st):
            return 0, is_dir
        own = self.size_of(st)
        self.grand_total += own
        subtree = files = 0
        if is_dir:
            subtree, files = self.children(path, level, root_dev if level else st.st_dev, ancestors, st)
        if self.shown(level, is_dir):
            # -S: a directory's line leaves out its subdirectories.
            self.print_size(own + (files if self.options.separate_dirs else subtree), path)
        return own + subtree, is_dir

    def children(
        self, path: str, level: int, root_dev: int, ancestors: frozenset[tuple[int, int]], st: os.stat_result
    ) -> tuple[int, int]:
        """(bytes of everything below the directory `path`, bytes of its entries that are not directories)."""
        try:
            names = os.listdir(path)  # readdir's order, as fts lists a directory
        except OSError as error:
            self.error(f"cannot read directory {quote(path)}: {os.strerror(error.errno or 0)}")
            return 0, 0
        inside = ancestors | {(st.st_dev, st.st_ino)}
        subtree = files = 0
        for name in names:
            size, is_dir = self.visit(child_path(path, name), level + 1, root_dev, inside)
            subtree += size
            files += 0 if is_dir else size
        return subtree, files

    def run(self) -> int:
        for arg in self.options.paths or ["."]:
            if not arg:
                self.error("invalid zero-length file name")
                continue
            self.visit(root_path(arg), 0, 0, frozenset())
        if self.options.total:
            self.print_size(self.grand_total, "total")
        self.out.flush()
        return 0 if self.ok else 1


def real_du(bin_dir: Path | None) -> str | None:
    """The first `du` on PATH that is not this host's own wrapper."""
    own = os.path.realpath(bin_dir) if bin_dir else None
    for directory in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep):
        candidate = os.path.join(directory or ".", PROGRAM)
        if os.path.realpath(directory or ".") != own and os.access(candidate, os.X_OK) and os.path.isfile(candidate):
            return candidate
    return None


def exec_real_du(argv: list[str], root: str | None) -> int:
    layout = None
    if root:
        from ...world.clock import WorldClock
        from ...world.layout import WorldLayout

        layout = WorldLayout(Path(root))
        WorldClock(layout.sim_dir).release()  # exec skips atexit: the hold is given back here
    found = real_du(layout.bin_dir if layout else None)
    if found is None:
        print(f"{PROGRAM}: no GNU du on this host for these options", file=sys.stderr)
        return 1
    os.execv(found, [PROGRAM, *argv])


def run(argv: list[str]) -> int:
    root = os.environ.get(ROOT_VARIABLE)
    try:
        options = parse(argv, os.environ)
    except Fallback:
        return exec_real_du(argv, root)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))  # one frame per level of the deepest tree
    view = AllocationView(root) if root else None
    try:
        return DiskUsage(options, view, sys.stdout.buffer).run()
    except BrokenPipeError:  # `du -a | head`: the reader left, as SIGPIPE ends GNU du; nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    raise SystemExit(run(sys.argv[1:]))
