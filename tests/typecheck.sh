#!/usr/bin/env bash
# The type gate: mypy (with pydantic's plugin) on agent/, tools/, transcripts/ and evals/, as the packages they
# install as (specops.agent, ...), through the tree of links namespace_tree.sh keeps, with mypy's cache beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
source tests/namespace_tree.sh
MYPYPATH="$tree" exec .venv/bin/mypy --cache-dir "$tree/cache" \
  -p specops.agent -p specops.tools -p specops.transcripts -p specops.evals "$@"
