#!/usr/bin/env bash
# The type gate: mypy (with pydantic's plugin, strict: pyproject.toml's [tool.mypy] says where it is not yet) on
# every package the project installs (setup.py's TOP_LEVEL: agent/, tools/, prompts/, transcripts/, evals/, sim/,
# cli/, sglang_releases/), as the packages they install as (specops.agent, ...), through the tree of links
# namespace_tree.sh keeps, with mypy's cache beside it; then on the scripts of benchmarks/, which import them so
# (mypy takes packages or files in one run, not both; the second run reads the packages from the cache).
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/namespace_tree.sh
packages=()
for top in $tops; do
  packages+=(-p "specops.$top")
done
status=0
MYPYPATH="$tree" .venv/bin/mypy --cache-dir "$tree/cache" "${packages[@]}" "$@" || status=$?
MYPYPATH="$tree" .venv/bin/mypy --cache-dir "$tree/cache" benchmarks/*.py benchmarks/*/*.py "$@" || status=1
exit "$status"
