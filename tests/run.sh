#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the tests need, prepares the
# real resources they use, and runs the whole suite.
#
# - a virtual environment with the project and its test extras;
# - OpenSSH's sshd, for the SSH host tests (they start their own on loopback);
# - Debian's chromium, for the test that opens `specops show --html` headless;
# - a small real tmpfs (4 MiB) for the ENOSPC test, when running as root
#   (CI does); its path goes to the tests in SPECOPS_TEST_SMALL_FS.
set -euo pipefail
cd "$(dirname "$0")/.."

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
    echo "warning: could not mount a tmpfs at $small_fs; the ENOSPC test will not run" >&2
    rmdir "$small_fs"; small_fs=""
  fi
fi

# Tests that measure time, or use the one small tmpfs, run alone (`serial`),
# so that no other test shares the two cores or the tmpfs with them; the rest
# run in parallel (one file per worker, so module fixtures such as a simulated
# world are built once per file).
.venv/bin/python -m pytest -m serial "$@"
.venv/bin/python -m pytest -m "not serial" -n 4 --dist loadfile "$@"
