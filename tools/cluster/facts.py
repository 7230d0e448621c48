"""cluster_facts: every node's host facts, and the checks a multi-node launch needs before anything changes.

    found = cluster_facts(contexts, models=["/data/models/Kimi-K2.6", "org/drafter"])   # contexts[0]: rank 0
    found.ok, found.problems, found.checks, found.shared

The checks, each a Check naming every node and its value:
- gpu_model, gpu_count: the same GPU model and count on every node (SGLang shards a model evenly over them);
- sglang_version: the same SGLang on every node (its ranks speak one protocol);
- model_present, one per model or drafter asked about: a host path (`/data/models/X`, `~/models/X`) must hold
  config.json and weights on every node (one python3 look per node); a repo id (`org/name`) must be on every
  node as find_models sees models (a Hugging Face cache snapshot of it, or a directory of that name).
  A relative path is told from a repo id by a leading `/`, `~` or `.`.

And `shared`: which of rank 0's writable roots (its ToolContext's allowed roots: home and data mounts) the
other nodes share, so a model is downloaded once there instead of once per node. Told by a marker file
specops writes under each root on rank 0 (never outside its allowed roots) and looks for, by the same host
path, on every other node (a random token in it, so a stale or foreign file is no proof); the markers are
removed afterwards. Nothing else is written anywhere.
"""

from __future__ import annotations

import json
import posixpath
import re
import secrets
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from specops.tools.context import ToolContext
from specops.tools.errors import InvalidToolInput, ToolError
from specops.tools.facts import HostFacts, gather_host_facts
from specops.tools.models_on_host import FindModelsArgs, find_models
from specops.tools.probing import probe

from .names import node_names

MARKER_PREFIX = ".specops-shared-"
_COMMAND_TIMEOUT_S = 60.0
_REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*/[A-Za-z0-9][A-Za-z0-9_.\-]*\Z")
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")

T = TypeVar("T")

# argv: the weight suffixes (comma-separated), then paths. Prints {path: {"dir", "config", "weights"}}.
_LOOK_MODELS = r"""
import json, os, sys
suffixes, paths = tuple(sys.argv[1].split(",")), sys.argv[2:]
out = {}
for path in paths:
    try:
        names = os.listdir(path)
    except OSError as exc:
        out[path] = {"dir": False, "error": exc.strerror or str(exc)}
        continue
    out[path] = {"dir": True, "config": "config.json" in names, "weights": sum(n.endswith(suffixes) for n in names)}
print(json.dumps(out))
"""

# argv: marker path, token. Creates the marker (never over an existing file), readable by its owner only.
_WRITE_MARKER = r"""
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
os.write(fd, sys.argv[2].encode())
os.close(fd)
"""

# argv: paths. Prints {path: its first 200 characters, or null when it cannot be read}.
_READ_MARKERS = r"""
import json, sys
out = {}
for path in sys.argv[1:]:
    try:
        with open(path) as f:
            out[path] = f.read(200)
    except (OSError, ValueError):
        out[path] = None
print(json.dumps(out))
"""


class NodeFacts(BaseModel):
    name: str = Field(description="The node's name in findings: its host spec (SPEC#RANK where two repeat)")
    rank: int
    facts: HostFacts


class Check(BaseModel):
    """One requirement every node must meet, with what each node has."""

    model_config = ConfigDict(frozen=True)

    name: Literal["gpu_model", "gpu_count", "sglang_version", "model_present"]
    subject: str | None = Field(default=None, description="For model_present: the model path or repo id asked about")
    ok: bool
    values: dict[str, str | int | None] = Field(description="Node name -> what it has (None: nothing)")
    failing: list[str] = Field(description="The nodes that differ from rank 0, or lack the thing")
    summary: str


class SharedRoot(BaseModel):
    """Whether the other nodes see rank 0's files under one of its writable roots."""

    model_config = ConfigDict(frozen=True)

    root: str = Field(description="The root, as a host path (what the nodes call it)")
    marker: str | None = Field(description="The marker file written on rank 0 (removed afterwards)")
    shared_with: list[str] = Field(description="Nodes that read rank 0's marker at the same host path")
    not_shared_with: list[str]
    all_nodes: bool = Field(description="Every node shares it: one download there serves all")
    error: str | None = Field(default=None, description="Why the check could not be made (the marker not written)")
    summary: str


class ClusterFacts(BaseModel):
    nodes: list[NodeFacts]
    checks: list[Check]
    shared: list[SharedRoot]
    shared_root: str | None = Field(description="The first of rank 0's roots every node shares (host path); None")
    ok: bool = Field(description="Every check passed")
    problems: list[str] = Field(description="The summary of each failed check")
    notes: list[str]
    summary: str


def _each(contexts: Sequence[ToolContext], fn: Callable[[ToolContext], T]) -> list[T]:
    """fn on every node at once (each its own connection or process); results in rank order."""
    with ThreadPoolExecutor(max_workers=min(len(contexts), 16)) as pool:
        return list(pool.map(fn, contexts))


def _same(
    name: Literal["gpu_model", "gpu_count", "sglang_version"],
    what: str,
    values: dict[str, str | int | None],
    *,
    missing: Callable[[str | int | None], bool],
) -> Check:
    """Every node has the same value as rank 0, and one there is."""
    names = list(values)
    first = values[names[0]]
    failing = [n for n in names if values[n] != first or missing(values[n])]
    if not failing:
        return Check(
            name=name, ok=True, values=values, failing=[], summary=f"{what}: {first} on every node ({len(names)})"
        )
    shown = "; ".join(f"{n}: {values[n] if not missing(values[n]) else 'none'}" for n in names)
    if all(values[n] == first for n in names):
        summary = f"{what}: none on any node ({shown})"
    else:
        summary = f"{what} differs between nodes: {shown}"
    return Check(name=name, ok=False, values=values, failing=failing, summary=summary)


def _gpu_model(facts: HostFacts) -> str | None:
    models = sorted({g.model for g in facts.gpus})
    return " + ".join(models) if models else None


def _is_path(model: str) -> bool:
    return model.startswith(("/", "~", "."))


def _model_check(contexts: Sequence[ToolContext], names: list[str], model: str) -> Check:
    """Whether `model` (a host path or a repo id) is on every node."""
    if _is_path(model):
        where = contexts[0].resolve(model)
        values = _each(contexts, lambda ctx: _look_path(ctx, where))
        subject = where
    else:  # a repo id (cluster_facts refused anything else)
        values = _each(contexts, lambda ctx: _look_repo(ctx, model))
        subject = model
    present = {n: v for n, v in zip(names, values, strict=True) if v[0]}
    failing = [n for n in names if n not in present]
    by_node: dict[str, str | int | None] = {n: v[1] for n, v in zip(names, values, strict=True)}
    if not failing:
        summary = f"{subject} is on every node ({len(names)})"
    else:
        summary = f"{subject} is missing on {', '.join(failing)}: " + "; ".join(f"{n}: {by_node[n]}" for n in failing)
    return Check(
        name="model_present", subject=subject, ok=not failing, values=by_node, failing=failing, summary=summary
    )


def _look_path(ctx: ToolContext, path: str) -> tuple[bool, str]:
    """(present, what the node has at `path`): config.json and at least one weight file make a model."""
    done = probe(
        ctx.host, ["python3", "-c", _LOOK_MODELS, ",".join(_WEIGHT_SUFFIXES), path], timeout=_COMMAND_TIMEOUT_S
    )
    try:
        seen = json.loads(done.stdout)[path]
    except (ValueError, KeyError, TypeError):
        return False, f"could not look (python3 exited {done.exit_code}): {(done.stderr or '').strip()[-200:]}"
    if not seen.get("dir"):
        return False, f"no directory ({seen.get('error')})"
    if not seen.get("config"):
        return False, "a directory without config.json"
    if not seen.get("weights"):
        return False, "config.json but no weight files"
    return True, f"present ({seen['weights']} weight files)"


def _look_repo(ctx: ToolContext, repo_id: str) -> tuple[bool, str]:
    """(present, where): a cache snapshot of repo_id, or a directory named as the repo, as find_models lists them."""
    name = repo_id.split("/")[-1]
    try:
        found = find_models(ctx, FindModelsArgs(name=name))
    except ToolError as exc:
        return False, f"could not look: {exc.what}"
    paths = [
        m.path
        for m in found.models
        if (m.repo_id or "").lower() == repo_id.lower() or (m.repo_id is None and m.name.lower() == name.lower())
    ]
    if not paths:
        return False, "not found (searched " + ", ".join(found.searched) + ")"
    return True, ", ".join(paths)


def _shared_roots(
    contexts: Sequence[ToolContext], names: list[str], writable: Sequence[str] | None
) -> tuple[list[SharedRoot], list[str]]:
    """Write a marker under each of rank 0's roots, read it on every other node by host path, remove it."""
    rank0 = contexts[0]
    notes: list[str] = []
    candidates = [rank0.writable(r) for r in writable] if writable is not None else list(rank0.allowed_roots)
    token = secrets.token_hex(16)
    written: dict[str, str] = {}  # root -> marker
    errors: dict[str, str] = {}
    for root in candidates:
        marker = rank0.writable(posixpath.join(root, MARKER_PREFIX + secrets.token_hex(6)))
        done = probe(rank0.host, ["python3", "-c", _WRITE_MARKER, marker, token], timeout=_COMMAND_TIMEOUT_S)
        if done.ok:
            written[root] = marker
        else:
            said = (done.stderr or done.stdout).strip().splitlines()
            errors[root] = f"could not write a marker under it on {names[0]}: {said[-1] if said else done.exit_code}"
    try:
        markers = list(written.values())
        seen = _each(contexts[1:], lambda ctx: _read_markers(ctx, markers))
    finally:
        for marker in written.values():
            removed = probe(rank0.host, ["rm", "-f", "--", marker], timeout=_COMMAND_TIMEOUT_S)
            if not removed.ok:
                notes.append(f"could not remove the marker {marker} on {names[0]}: {removed.stderr.strip()[-200:]}")
    results: list[SharedRoot] = []
    for root in candidates:
        shown = root
        if root in errors:
            results.append(
                SharedRoot(
                    root=shown,
                    marker=None,
                    shared_with=[],
                    not_shared_with=names[1:],
                    all_nodes=False,
                    error=errors[root],
                    summary=f"{shown}: {errors[root]}",
                )
            )
            continue
        index = list(written).index(root)
        sharing = [n for n, contents in zip(names[1:], seen, strict=True) if contents[index] == token]
        apart = [n for n in names[1:] if n not in sharing]
        if not apart:
            summary = f"{shown} on {names[0]} is shared by every node" if sharing else f"{shown}: one node only"
        elif sharing:
            summary = f"{shown} on {names[0]} is shared with {', '.join(sharing)}, not with {', '.join(apart)}"
        else:
            summary = f"{shown} on {names[0]} is not shared: no other node sees a file written there"
        results.append(
            SharedRoot(
                root=shown,
                marker=written[root],
                shared_with=sharing,
                not_shared_with=apart,
                all_nodes=not apart,
                summary=summary,
            )
        )
    return results, notes


def _read_markers(ctx: ToolContext, paths: list[str]) -> list[str | None]:
    """Each marker's contents as the node reads it at `paths` (None: not there, or no answer)."""
    if not paths:
        return []
    done = probe(ctx.host, ["python3", "-c", _READ_MARKERS, *paths], timeout=_COMMAND_TIMEOUT_S)
    try:
        data = json.loads(done.stdout)
    except ValueError:
        return [None] * len(paths)
    return [data.get(p) if isinstance(data, dict) else None for p in paths]


def cluster_facts(
    contexts: Sequence[ToolContext],
    *,
    models: Sequence[str] = (),
    shared_roots: Sequence[str] | None = None,
    check_shared: bool = True,
) -> ClusterFacts:
    """host_facts for every node (contexts[0] is rank 0), then the checks before a multi-node launch.

    `models`: model and drafter paths or repo ids that must be on every node. `shared_roots`: the roots of rank 0
    to test for sharing (default: its allowed roots); each must be writable there. Raises InvalidToolInput for no
    nodes or a model that is neither a path nor a repo id; a node that stops answering raises HostUnavailable.
    """
    if not contexts:
        raise InvalidToolInput("no nodes", remedy="give the group's contexts, rank 0 first")
    for model in models:  # refused before any node is asked
        if not _is_path(model) and not _REPO_ID.match(model):
            raise InvalidToolInput(
                f"{model!r} is neither a path nor a Hugging Face repo id",
                remedy="give an absolute path (/data/models/NAME, ~/models/NAME) or a repo id (org/name)",
                details={"model": model},
            )
    names = node_names(contexts)
    facts = _each(contexts, lambda ctx: gather_host_facts(ctx.host))  # each node alone (the tool would ask the group)
    checks = [
        _same(
            "gpu_model",
            "GPU model",
            {n: _gpu_model(f) for n, f in zip(names, facts, strict=True)},
            missing=lambda v: v is None,
        ),
        _same(
            "gpu_count",
            "GPU count",
            {n: f.gpu_count for n, f in zip(names, facts, strict=True)},
            missing=lambda v: not v,
        ),
        _same(
            "sglang_version",
            "SGLang version",
            {n: f.sglang_version for n, f in zip(names, facts, strict=True)},
            missing=lambda v: v is None,
        ),
    ]
    checks += [_model_check(contexts, names, model) for model in models]
    shared: list[SharedRoot] = []
    notes: list[str] = []
    if check_shared and len(contexts) > 1:
        shared, notes = _shared_roots(contexts, names, shared_roots)
    problems = [c.summary for c in checks if not c.ok]
    shared_root = next((s.root for s in shared if s.all_nodes), None)
    if problems:
        summary = f"{len(contexts)} node(s), {len(problems)} check(s) failed: " + "; ".join(problems)
    else:
        summary = f"{len(contexts)} node(s) agree: " + "; ".join(c.summary for c in checks)
    if len(contexts) > 1 and check_shared:
        summary += (
            f"; {shared_root} is shared by every node"
            if shared_root
            else "; no root of rank 0 is shared by every node (a download per node)"
        )
    return ClusterFacts(
        nodes=[NodeFacts(name=n, rank=i, facts=f) for i, (n, f) in enumerate(zip(names, facts, strict=True))],
        checks=checks,
        shared=shared,
        shared_root=shared_root,
        ok=not problems,
        problems=problems,
        notes=notes,
        summary=summary,
    )
