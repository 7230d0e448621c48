#!/usr/bin/env bash
# The import gate: import-linter's contracts (pyproject.toml, [tool.importlinter]) over the packages as they install
# (specops.tools, ...), read through the tree of links namespace_tree.sh keeps. The tools and the agent import
# nothing of the simulator: they drive every host through the world contract (tools/hosts).
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/namespace_tree.sh
PYTHONPATH="$tree" exec .venv/bin/lint-imports --no-cache "$@"
