"""find_models: the models already on a host, so a drafter can be paired with its target without a download.

A model here is a directory holding a config.json beside weight files
(*.safetensors, *.bin, *.pt, *.gguf): directories under the run's allowed
roots (the home and the data mounts), at most MAX_DEPTH deep, and the
snapshots of the Hugging Face cache (`models--ORG--NAME/snapshots/SHA`),
named by their repo id. One python3 script on the host walks and reads them
all, so the tool costs one command on local, ssh:// and sim: hosts alike.

Sizes are the blocks the files take on the disk (what `df` counts), following
the cache's links to its blobs.
A config.json that does not parse is a fact (`config_error`), not a failure.
"""

from __future__ import annotations

import json
import posixpath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .context import ToolContext
from .disk import human_bytes
from .errors import HostCommandFailed
from .facts import is_sglang_server, scan_processes
from .inputs import HostPath
from .probing import probe
from .registry import tool

MAX_DEPTH = 4
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf")

# argv: max depth, the weight suffixes (comma-separated), then the roots. Prints one JSON list.
# Directory names starting with "." are skipped (caches, specops' own state), except the HF cache, walked on its own.
_FIND_MODELS = r"""
import json, os, sys
depth, suffixes, roots = int(sys.argv[1]), tuple(sys.argv[2].split(",")), sys.argv[3:]

def describe(path, repo_id=None):
    try:
        names = os.listdir(path)
    except OSError:
        return None
    if "config.json" not in names:
        return None
    weights = [n for n in names if n.endswith(suffixes)]
    if not weights:
        return None
    size = 0
    for top, dirs, files in os.walk(path):
        for f in files:
            try:
                size += os.stat(os.path.join(top, f)).st_blocks * 512  # what it takes on the disk; follows links
            except OSError:
                pass
    entry = {"path": path, "repo_id": repo_id, "weight_files": len(weights), "bytes_on_disk": size}
    try:
        with open(os.path.join(path, "config.json")) as f:
            entry["config"] = json.load(f)
    except (OSError, ValueError) as exc:
        entry["config_error"] = f"{type(exc).__name__}: {exc}"
    return entry

found, seen = [], set()
def add(entry):
    if entry and entry["path"] not in seen:
        seen.add(entry["path"])
        found.append(entry)

for root in roots:
    if not os.path.isdir(root):
        continue
    base = root.rstrip("/").count("/")
    for top, dirs, files in os.walk(root):
        level = top.rstrip("/").count("/") - base
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if level < depth else []
        if top != root and "config.json" in files:
            entry = describe(top)
            if entry:
                add(entry)
                dirs[:] = []  # what is inside a model directory belongs to it

hub = os.environ.get("HF_HUB_CACHE") or os.path.join(os.environ.get("HF_HOME") or os.path.expanduser("~/.cache/huggingface"), "hub")
if os.path.isdir(hub):
    for repo in sorted(os.listdir(hub)):
        if not repo.startswith("models--"):
            continue
        repo_id = repo[len("models--"):].replace("--", "/", 1)
        snapshots = os.path.join(hub, repo, "snapshots")
        for sha in sorted(os.listdir(snapshots)) if os.path.isdir(snapshots) else []:
            add(describe(os.path.join(snapshots, sha), repo_id))
print(json.dumps({"hub_cache": hub, "models": found}))
"""

_EXPERT_KEYS = ("n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts")


class FindModelsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    roots: list[HostPath] = Field(
        default_factory=list,
        description="Directories to look under; empty: the run's allowed roots (home, data mounts)",
    )
    name: str | None = Field(
        default=None, max_length=200, description="Only models whose name or repo id contains this"
    )


class ModelOnHost(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str = Field(description="The directory's name, or the repo's name for a cache snapshot")
    path: str = Field(description="Absolute path on the host: what --model-path takes")
    repo_id: str | None = Field(description="For a Hugging Face cache snapshot: its repo id")
    source: str = Field(description="'directory' or 'hf_cache'")
    architectures: list[str]
    model_type: str | None
    num_hidden_layers: int | None = Field(description="From text_config for multimodal models (Kimi-K2.x)")
    hidden_size: int | None
    vocab_size: int | None
    num_experts: int | None = Field(description="Routed experts of a MoE model; None: dense or not stated")
    weight_files: int
    size_bytes: int = Field(description="What df counts for the directory")
    size: str
    served_by: list[int] = Field(default_factory=list, description="PIDs of SGLang servers running it")
    config_error: str | None = None
    missing_on: list[str] = Field(
        default_factory=list,
        description="A host group: the other nodes without its config.json at the same path (a server across "
        "the nodes, or a replica there, would not find it)",
    )


class ModelsOnHost(BaseModel):
    models: list[ModelOnHost]
    searched: list[str] = Field(description="The roots walked, and the Hugging Face cache")
    max_depth: int
    summary: str


def _int(config: dict[str, Any], *keys: str) -> int | None:
    """The first integer under one of `keys`, at the top level or in text_config (multimodal models)."""
    for scope in (config, config.get("text_config") or {}):
        if not isinstance(scope, dict):
            continue
        for key in keys:
            value = scope.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def _served_paths(ctx: ToolContext) -> dict[str, list[int]]:
    """Model path -> PIDs of the SGLang servers on the host that run it."""
    served: dict[str, list[int]] = {}
    for proc in scan_processes(ctx.host):
        if not is_sglang_server(proc.argv):
            continue
        argv = proc.argv
        for i, word in enumerate(argv):
            value = None
            if word in ("--model-path", "--model") and i + 1 < len(argv):
                value = argv[i + 1]
            elif word.startswith(("--model-path=", "--model=")):
                value = word.split("=", 1)[1]
            if value:
                path = value if value.startswith("/") or proc.cwd is None else posixpath.join(proc.cwd, value)
                served.setdefault(posixpath.normpath(path), []).append(proc.pid)
    return served


def _missing_on(ctx: ToolContext, path: str) -> list[str]:
    """The other nodes of the group without the model's config.json at the same host path."""
    config = posixpath.join(path, "config.json")
    return [node.host.spec for node in ctx.peers if not node.host.exists(config)]


def models_view(found: ModelsOnHost) -> dict[str, Any]:
    """Each model by what a planner picks on: path, architecture, layers, experts, size, servers (the rest, and the
    summary that repeats it, stay in the transcript)."""
    keep = (
        "name",
        "path",
        "repo_id",
        "architectures",
        "num_hidden_layers",
        "num_experts",
        "size",
        "served_by",
        "config_error",
        "missing_on",
    )
    # A cached snapshot's name is its repo id's: the id alone says it.
    return {
        "models": [
            m.model_dump(mode="json", include=set(keep) - ({"name"} if m.repo_id else set())) for m in found.models
        ]
    }


@tool("find_models", mutates=False, view=models_view)
def find_models(ctx: ToolContext, args: FindModelsArgs) -> ModelsOnHost:
    """The models already on the host (directories with config.json and weights, Hugging Face cache snapshots):
    path, architecture, layers, experts, size, and the SGLang servers running each.
    """
    roots = [ctx.resolve(r) for r in args.roots] or list(ctx.allowed_roots)
    done = probe(
        ctx.host, ["python3", "-c", _FIND_MODELS, str(MAX_DEPTH), ",".join(WEIGHT_SUFFIXES), *roots], timeout=120
    )
    try:
        data = json.loads(done.stdout)
    except ValueError:
        raise HostCommandFailed(
            f"could not list the models on {ctx.host.spec} (python3 exited {done.exit_code}): "
            f"{(done.stderr or done.stdout).strip()[-300:]}",
            remedy="check that python3 runs on the host; list model directories with the shell tool instead",
            details={"roots": roots},
        ) from None
    served = _served_paths(ctx)
    models = []
    for entry in data["models"]:
        config = entry.get("config") or {}
        config = config if isinstance(config, dict) else {}
        repo_id = entry.get("repo_id")
        path = entry["path"]
        size = entry["bytes_on_disk"]
        architectures = config.get("architectures") or (config.get("text_config") or {}).get("architectures") or []
        model_type = config.get("model_type")
        models.append(
            ModelOnHost(
                name=repo_id.split("/")[-1] if repo_id else posixpath.basename(path.rstrip("/")),
                path=path,
                repo_id=repo_id,
                source="hf_cache" if repo_id else "directory",
                architectures=[a for a in architectures if isinstance(a, str)],
                model_type=model_type if isinstance(model_type, str) else None,
                num_hidden_layers=_int(config, "num_hidden_layers", "n_layer", "num_layers"),
                hidden_size=_int(config, "hidden_size", "d_model"),
                vocab_size=_int(config, "vocab_size"),
                num_experts=_int(config, *_EXPERT_KEYS),
                weight_files=entry["weight_files"],
                size_bytes=size,
                size=human_bytes(size),
                served_by=sorted(set(served.get(posixpath.normpath(path), []))),
                config_error=entry.get("config_error"),
            )
        )
    if args.name:
        wanted = args.name.lower()
        models = [m for m in models if wanted in m.name.lower() or wanted in (m.repo_id or "").lower()]
    if ctx.peers:
        models = [m.model_copy(update={"missing_on": _missing_on(ctx, m.path)}) for m in models]
    summary = (
        f"{len(models)} model(s) on {ctx.host.spec}: "
        + ", ".join(f"{m.name} ({m.size}, {m.path}{', served' if m.served_by else ''})" for m in models)
        if models
        else f"no model directory (config.json + weights) under {', '.join(roots)} or in {data['hub_cache']}"
    )
    return ModelsOnHost(models=models, searched=[*roots, data["hub_cache"]], max_depth=MAX_DEPTH, summary=summary)
