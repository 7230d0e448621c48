"""The JSON the Hub answers about repos: model info, dataset info, tree entries, paths-info entries.

Sizes are the declared (modelled) ones, so a listing shows a 4.97 GB shard as
4.97 GB whatever the world's byte_scale; hashes are those of the stored bytes,
which is what a client can check after downloading.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import yaml

from .fixtures import FixtureFile, FixtureRepo, FixtureRevision, GatedMode

# What the Hub's `config` block keeps of a quantization_config: enough to tell a quantized copy.
_QUANT_KEYS = ("quant_method", "bits")


def tree_id(revision: FixtureRevision, folder: str) -> str:
    """A stable object id for a folder at a revision."""
    return hashlib.sha1(f"tree:{revision.sha}:{folder}".encode()).hexdigest()


def last_commit(revision: FixtureRevision) -> dict[str, str]:
    return {"id": revision.sha, "title": revision.title, "date": revision.date}


def file_entry(f: FixtureFile, revision: FixtureRevision, byte_scale: int, expand: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "file", "oid": f.blob_id(byte_scale), "size": f.size, "path": f.path}
    if f.is_lfs:
        entry["lfs"] = {"oid": f.sha256(byte_scale), "size": f.size, "pointerSize": len(f.pointer(byte_scale))}
    if expand:
        entry["lastCommit"] = last_commit(revision)
        entry["securityFileStatus"] = {"status": "safe", "avScan": {"virusFound": False}, "pickleImportScan": None}
    return entry


def folder_entry(folder: str, revision: FixtureRevision, expand: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "directory", "oid": tree_id(revision, folder), "size": 0, "path": folder}
    if expand:
        entry["lastCommit"] = last_commit(revision)
    return entry


def tree_entries(
    revision: FixtureRevision, path: str, *, recursive: bool, expand: bool, byte_scale: int
) -> list[dict[str, Any]] | None:
    """Entries under `path` ('' for the root), folders first as the Hub lists them; None if no such folder."""
    prefix = f"{path}/" if path else ""
    if path and path not in revision.folders():
        return None

    def below(p: str) -> bool:
        if not p.startswith(prefix) or p == path:
            return False
        return recursive or "/" not in p[len(prefix) :]

    folders = [folder_entry(d, revision, expand) for d in revision.folders() if below(d)]
    files = [file_entry(f, revision, byte_scale, expand) for f in revision.files if below(f.path)]
    return folders + files


def paths_info(revision: FixtureRevision, paths: list[str], *, expand: bool, byte_scale: int) -> list[dict[str, Any]]:
    """Entries for those of `paths` that exist; the others are left out, as the Hub does."""
    folders = set(revision.folders())
    found = []
    for p in paths:
        p = p.strip("/")
        if p in folders:
            found.append(folder_entry(p, revision, expand))
            continue
        try:
            found.append(file_entry(revision.file(p), revision, byte_scale, expand))
        except KeyError:
            continue
    return found


def model_object_id(repo_id: str) -> str:
    """The Hub's `_id` (a 24-hex object id): stable per repo, the same in model info and in searches."""
    return hashlib.sha1(repo_id.encode()).hexdigest()[:24]


def config_summary(revision: FixtureRevision) -> dict[str, Any] | None:
    """The `config` block the Hub shows (model info, searches with config=true): a summary of config.json.

    Like the Hub's, it keeps architectures, model_type, auto_map and the kind of quantization,
    not the whole file: a client reads sizes from config.json itself.
    """
    try:
        raw = revision.file("config.json").content
    except KeyError:
        return None
    if raw is None:
        return None
    config = json.loads(raw)
    summary = {k: config[k] for k in ("architectures", "model_type", "auto_map") if k in config}
    quant = config.get("quantization_config")
    if isinstance(quant, dict):
        summary["quantization_config"] = {k: quant[k] for k in _QUANT_KEYS if k in quant}
    return summary


def card_data(revision: FixtureRevision) -> dict[str, Any] | None:
    """The model card's YAML front matter (the Hub's `cardData`), None when README.md has none."""
    try:
        raw = revision.file("README.md").content
    except KeyError:
        return None
    text = (raw or b"").decode("utf-8", errors="replace")
    if not text.startswith("---\n"):
        return None
    front, sep, _ = text[4:].partition("\n---")
    if not sep:
        return None
    try:
        data = yaml.safe_load(front)
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


def _siblings(revision: FixtureRevision, *, files_metadata: bool, byte_scale: int) -> list[dict[str, Any]]:
    siblings = []
    for f in revision.files:
        sibling: dict[str, Any] = {"rfilename": f.path}
        if files_metadata:
            sibling["size"] = f.size
            sibling["blobId"] = f.blob_id(byte_scale)
            if f.is_lfs:
                sibling["lfs"] = {
                    "sha256": f.sha256(byte_scale),
                    "size": f.size,
                    "pointerSize": len(f.pointer(byte_scale)),
                }
        siblings.append(sibling)
    return siblings


def model_info(
    repo: FixtureRepo, revision: FixtureRevision, *, gated: GatedMode, files_metadata: bool, byte_scale: int
) -> dict[str, Any]:
    """What GET /api/models/{repo_id} answers; popularity and tags are the repo's listing, as searches show."""
    siblings = _siblings(revision, files_metadata=files_metadata, byte_scale=byte_scale)
    shown = repo.listing
    info: dict[str, Any] = {
        "_id": model_object_id(repo.repo_id),
        "id": repo.repo_id,
        "modelId": repo.repo_id,
        "author": repo.author,
        "sha": revision.sha,
        "lastModified": repo.last_modified,
        "createdAt": repo.created_at,
        "private": False,
        "disabled": False,
        "gated": gated,
        "downloads": shown.downloads,
        "likes": shown.likes,
        "library_name": shown.library_name,
        "tags": repo.tags,
        "pipeline_tag": shown.pipeline_tag,
        "siblings": siblings,
        "usedStorage": revision.total_size(),
    }
    info = {k: v for k, v in info.items() if v is not None}  # the Hub leaves out what a repo lacks
    config = config_summary(revision)
    if config is not None:
        info["config"] = config
    return info


def dataset_info(
    repo: FixtureRepo, revision: FixtureRevision, *, gated: GatedMode, files_metadata: bool, byte_scale: int
) -> dict[str, Any]:
    """What GET /api/datasets/{repo_id} answers: the fields huggingface_hub's DatasetInfo reads."""
    org, _, _name = repo.repo_id.partition("/")
    formats = sorted({f.path.rsplit(".", 1)[-1] for f in revision.files if f.path.endswith((".parquet", ".jsonl"))})
    return {
        "_id": hashlib.sha1(f"dataset:{repo.repo_id}".encode()).hexdigest()[:24],
        "id": repo.repo_id,
        "author": org,
        "sha": revision.sha,
        "lastModified": repo.last_modified,
        "createdAt": min(r.date for r in repo.revisions),
        "private": False,
        "disabled": False,
        "gated": gated,
        "downloads": 0,
        "likes": 0,
        "tags": [f"format:{'json' if f == 'jsonl' else f}" for f in formats],
        "siblings": _siblings(revision, files_metadata=files_metadata, byte_scale=byte_scale),
        "usedStorage": revision.total_size(),
    }
