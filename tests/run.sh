#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the tests need, prepares the
# real resources they use, runs the lint, format, type and import gate and the whole suite.
#
# - a virtual environment with the project and its test extras;
# - OpenSSH's sshd, for the SSH host tests (they start their own on loopback);
# - Debian's chromium, for the test that opens `specops show --html` headless;
# - the SGLang release wheels the committed sglang_releases/data was read from
#   (pip download, kept in .cache/sglang-wheels); their folder goes to the tests
#   in SPECOPS_SGLANG_WHEELS;
# - a small real tmpfs (4 MiB) for the ENOSPC test, when running as root
#   (CI does); its path goes to the tests in SPECOPS_TEST_SMALL_FS.
#
# `bash tests/run.sh --quick [ARGS]`: the same set-up and gate, then only the
# tests not marked `slow` (the edit-test loop: under 2 minutes on 2 cores).
# A test a missing need would otherwise skip fails instead, saying what to run.
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
if [ "${1:-}" = "--quick" ]; then
  quick=1
  shift
fi

python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'

if [ ! -x /usr/sbin/sshd ] && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server openssh-client >/dev/null
fi

if ! command -v chromium >/dev/null && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

if [ -z "${SPECOPS_SGLANG_WHEELS:-}" ]; then
  mkdir -p .cache/sglang-wheels
  if .venv/bin/python tests/sglang_releases/test_committed_data.py .cache/sglang-wheels >/dev/null; then
    export SPECOPS_SGLANG_WHEELS="$PWD/.cache/sglang-wheels"
  else
    echo "warning: could not fetch every SGLang release wheel into .cache/sglang-wheels; the test that needs them will fail" >&2
  fi
fi

small_fs=""
cleanup() {
  if [ -n "$small_fs" ]; then
    umount "$small_fs" 2>/dev/null || true
    rmdir "$small_fs" 2>/dev/null || true
  fi
}
trap cleanup EXIT
if [ "$(id -u)" = "0" ] && [ -z "${SPECOPS_TEST_SMALL_FS:-}" ]; then
  small_fs=$(mktemp -d /tmp/specops-small-fs.XXXXXX)
  if mount -t tmpfs -o size=4m,mode=0755 specops-small-fs "$small_fs"; then
    export SPECOPS_TEST_SMALL_FS="$small_fs"
  else
    echo "warning: could not mount a tmpfs at $small_fs; the tests that need it will fail" >&2
    rmdir "$small_fs"; small_fs=""
  fi
fi

# Tests that measure time, or use the one small tmpfs, run alone (`serial`),
# so that no other test shares the two cores or the tmpfs with them; the rest
# run in parallel (one file per worker, so module fixtures such as a simulated
# world are built once per file).
# Every phase runs even when an earlier one fails (the set-up above still stops
# at its first failure): the exit status is non-zero if any phase failed, and
# the last lines say which.
failed=()
phase() {
  local name=$1; shift
  local status=0
  "$@" || status=$?
  # pytest's 5 (no test collected) is no failure when arguments or --quick chose the
  # tests (a path or -k that holds none of this phase's); without either it is one.
  if [ "$status" -ne 0 ] && { [ "$status" -ne 5 ] || { [ "$selected" = 0 ] && [ "$quick" = 0 ]; }; }; then
    failed+=("$name (exit $status)")
  fi
}
selected=$#
# --quick leaves out the tests marked slow (pyproject's markers say which).
serial_tests="serial"
parallel_tests="not serial"
if [ "$quick" = 1 ]; then
  serial_tests="serial and not slow"
  parallel_tests="not serial and not slow"
fi
# The gate: lint, format, types and import contracts, over the whole tree (not only what the arguments chose).
phase lint .venv/bin/ruff check --quiet .
phase format .venv/bin/ruff format --check --quiet .
phase types bash tests/typecheck.sh
phase imports bash tests/import_contracts.sh
phase serial .venv/bin/python -m pytest -m "$serial_tests" --durations=10 "$@"
phase parallel .venv/bin/python -m pytest -m "$parallel_tests" -n 4 --dist loadfile --durations=30 "$@"
if [ "${#failed[@]}" -ne 0 ]; then
  echo "tests/run.sh: failed phases: ${failed[*]}" >&2
  exit 1
fi
