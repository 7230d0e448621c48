"""`/etc/os-release`: KEY=value lines, values optionally quoted (freedesktop.org's format)."""

from __future__ import annotations

import shlex


def parse_os_release(text: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        try:
            words = shlex.split(value)
        except ValueError:
            words = [value.strip("\"'")]
        fields[key.strip()] = words[0] if words else ""
    return fields


def pretty_name(fields: dict[str, str]) -> str | None:
    return fields.get("PRETTY_NAME") or " ".join(filter(None, (fields.get("NAME"), fields.get("VERSION")))) or None
