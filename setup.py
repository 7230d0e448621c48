"""Maps the design card's top-level folders onto the `specops` namespace.

pyproject.toml holds all metadata; this file only computes the package list,
which pyproject.toml cannot express (a folder `tools/` installing as
`specops.tools`).
"""

from setuptools import find_packages, setup

TOP_LEVEL = ["agent", "tools", "prompts", "transcripts", "evals", "sim", "cli", "sglang_releases"]

packages = [f"specops.{name}" for name in find_packages(include=[f"{top}*" for top in TOP_LEVEL] + TOP_LEVEL)]
setup(
    packages=packages,
    package_dir={f"specops.{top}": top for top in TOP_LEVEL},
)
