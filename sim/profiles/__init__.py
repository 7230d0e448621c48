"""Host profiles: the YAML files beside this module, and their schema."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import ValidationError

from .schema import Profile

PROFILE_DIR = Path(__file__).parent


class UnknownProfileError(LookupError):
    """No built-in profile by that name and no such YAML file."""


class ProfileInvalid(ValueError):
    """A profile file that cannot be read as a profile; the message (one line) names the file and what is wrong."""


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
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileInvalid(f"cannot read profile {path}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = " ".join(str(getattr(exc, "problem", None) or "unreadable").split())
        raise ProfileInvalid(f"profile {path} is not valid YAML: {problem}{where}") from None
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in e['loc']) or '(profile)'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        raise ProfileInvalid(f"profile {path} is not a host profile: {' '.join(problems.split())}") from None


__all__ = ["Profile", "ProfileInvalid", "UnknownProfileError", "builtin_profiles", "load_profile"]
