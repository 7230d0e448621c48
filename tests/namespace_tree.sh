#!/usr/bin/env bash
# Sourced by the gate's checks that read the code as the packages it installs as (specops.agent, ...): setup.py maps
# the design card's top-level folders under the specops namespace, which tools cannot see through an editable
# install, so they read a tree of links named that way (.typecheck/specops/agent -> agent/, ...), kept between runs.
tree=.typecheck
mkdir -p "$tree/specops"
: > "$tree/specops/__init__.py"
tops=$(.venv/bin/python -c 'import re; print(*re.findall(r"\"(\w+)\"", re.search(r"TOP_LEVEL = \[(.*?)\]", open("setup.py").read()).group(1)))')
for top in $tops; do
  ln -sfn "../../$top" "$tree/specops/$top"
done
