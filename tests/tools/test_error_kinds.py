"""ErrorKind: every ToolError subclass names a kind of the enum, and a record carries its plain value."""

from __future__ import annotations

import importlib
import pkgutil

import specops.tools as tools_package
from specops.tools.errors import ErrorKind, ToolError


def _subclasses(cls: type) -> set[type]:
    found = set(cls.__subclasses__())
    return found | {sub for child in found for sub in _subclasses(child)}


def test_every_tool_error_names_a_kind_of_the_enum():
    for module in pkgutil.walk_packages(tools_package.__path__, "specops.tools."):
        importlib.import_module(module.name)
    errors = _subclasses(ToolError)
    assert len(errors) >= 25
    assert all(isinstance(cls.kind, ErrorKind) for cls in errors), [
        c for c in errors if not isinstance(c.kind, ErrorKind)
    ]
    assert {cls.kind for cls in errors} >= {ErrorKind.LAUNCH_FAILED, ErrorKind.HOST_UNAVAILABLE, ErrorKind.REPO_GATED}


def test_a_record_carries_the_plain_value_a_transcript_and_a_grader_read():
    from specops.tools.hub import RepoGated

    record = RepoGated("gated", remedy="ask for access").record()
    assert record.kind == "repo_gated" and record.model_dump(mode="json")["kind"] == "repo_gated"
    assert ErrorKind("launch_failed") is ErrorKind.LAUNCH_FAILED
