"""Models already on the host's disk when the world starts, laid down from Hub fixtures.

`local_dir`: the main revision's files under the path, as `hf download --local-dir`
leaves them. `hf_cache`: the huggingface_hub cache layout (`models--org--name/`
with `blobs/<etag>`, `snapshots/<commit>/<file>` relative links into blobs and
`refs/<branch>`), every revision of the fixture, so the real `hf cache ls` and
`scan_cache_dir()` see it as they would on a real host. Weight files are sparse:
they have their stored size but take no blocks, so laying down a 550 GiB model
costs nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..hub.fixtures import FixtureRepo
from ..profiles.schema import HostModel
from ..world.layout import WorldLayout


class UnknownFixtureError(LookupError):
    pass


def cache_repo_dir(cache_dir: Path, repo_id: str) -> Path:
    return cache_dir / ("models--" + repo_id.replace("/", "--"))


def lay_down_local_dir(dest: Path, repo: FixtureRepo, byte_scale: int) -> None:
    for f in repo.revision().files:
        f.write_to(dest / f.path, byte_scale, sparse=True)


def lay_down_hf_cache(cache_dir: Path, repo: FixtureRepo, byte_scale: int) -> Path:
    repo_dir = cache_repo_dir(cache_dir, repo.repo_id)
    blobs = repo_dir / "blobs"
    blobs.mkdir(parents=True, exist_ok=True)
    for revision in repo.revisions:
        snapshot = repo_dir / "snapshots" / revision.sha
        for f in revision.files:
            blob = blobs / f.etag(byte_scale)
            if not blob.exists():  # the same content in two revisions is one blob
                f.write_to(blob, byte_scale, sparse=True)
            link = snapshot / f.path
            link.parent.mkdir(parents=True, exist_ok=True)
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(os.path.relpath(blob, link.parent))
        for ref in revision.refs:
            ref_file = repo_dir / "refs" / ref
            ref_file.parent.mkdir(parents=True, exist_ok=True)
            ref_file.write_text(revision.sha)  # huggingface_hub writes the bare commit id
    return repo_dir


def lay_down_models(
    layout: WorldLayout, models: list[HostModel], fixtures: dict[str, FixtureRepo], byte_scale: int
) -> None:
    for model in models:
        try:
            repo = fixtures[model.fixture]
        except KeyError:
            raise UnknownFixtureError(
                f"host model {model.repo_id}: no Hub fixture {model.fixture!r} (have: {', '.join(sorted(fixtures))})"
            ) from None
        dest = layout.host_path(model.path)
        if model.layout == "local_dir":
            lay_down_local_dir(dest, repo, byte_scale)
        else:
            lay_down_hf_cache(dest, repo, byte_scale)
