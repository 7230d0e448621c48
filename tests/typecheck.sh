#!/usr/bin/env bash
# The type gate: mypy (with pydantic's plugin) on agent/, tools/, transcripts/ and evals/, as the packages they
# install as (specops.agent, ...). setup.py maps the design card's top-level folders under the specops namespace,
# which mypy cannot see through an editable install, so it checks a tree of links named that way
# (.typecheck/specops/agent -> agent/, ...), kept between runs with mypy's cache beside it.
set -euo pipefail
cd "$(dirname "$0")/.."

tree=.typecheck
mkdir -p "$tree/specops"
: > "$tree/specops/__init__.py"
tops=$(.venv/bin/python -c 'import re; print(*re.findall(r"\"(\w+)\"", re.search(r"TOP_LEVEL = \[(.*?)\]", open("setup.py").read()).group(1)))')
for top in $tops; do
  ln -sfn "../../$top" "$tree/specops/$top"
done
MYPYPATH="$tree" exec .venv/bin/mypy --cache-dir "$tree/cache" \
  -p specops.agent -p specops.tools -p specops.transcripts -p specops.evals "$@"
