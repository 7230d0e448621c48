"""Host profiles: the YAML files beside this module, and their schema."""

from __future__ import annotations

from pathlib import Path

import yaml

from .schema import Profile

PROFILE_DIR = Path(__file__).parent


class UnknownProfileError(LookupError):
    """No built-in profile by that name and no such YAML file."""


def builtin_profiles() -> list[str]:
    return sorted(p.stem for p in PROFILE_DIR.glob("*.yaml"))


def load_profile(name_or_path: str | Path) -> Profile:
    """Load a built-in profile by name, or any profile YAML by path."""
    path = Path(name_or_path)
    if not path.suffix:
        path = PROFILE_DIR / f"{name_or_path}.yaml"
    if not path.is_file():
        raise UnknownProfileError(
            f"no host profile {str(name_or_path)!r}: built-in ones are {', '.join(builtin_profiles())}, "
            "or give the path of a profile YAML file"
        )
    return Profile.model_validate(yaml.safe_load(path.read_text()))


__all__ = ["Profile", "UnknownProfileError", "builtin_profiles", "load_profile"]
