"""Loading the standard datasets ON THE HOST: download each file from the Hub there, read it there, format here.

The GPU host has the Hub (this machine may not): for each dataset asked for,

1. `hf download REPO FILE --repo-type dataset --revision REV --local-dir DIR` runs on
   the host (the Hub token, when the run has one, only in its environment). DIR is
   `~/.cache/specops/datasets/<org>/<name>` by default, beside the benchmark client's
   `~/.cache/specops/bench`: one small file per dataset, kept for the next run (hf
   checks it against the Hub and fetches it again only if it changed), removable at
   will. When `hf` is missing or does not download (an old stub, help text), the same
   download runs through huggingface_hub in the host's python3.
2. host_reader.py, uploaded next to the datasets, runs with the host's python3 and
   prints the first N rows' needed columns as JSON (parquet through pyarrow).
3. The rows become prompts here, formatted as z-lab/dflash's benchmark formats them
   (catalog.py); the commit comes from the download's own record
   (DIR/.cache/huggingface/download/<file>.metadata).

Every host command is an argv (no shell line) bounded by `timeout_s`. A dataset
that fails becomes a typed DatasetError recorded in the result's `failures`; the
others still load. The host itself failing (HostUnavailable) or a target outside the
run's allowed roots (PathOutsideAllowedRoots) stops everything, before or as it happens.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..context import ToolContext
from ..download.command import DOWNLOAD_ENV
from ..errors import InvalidToolInput
from ..hosts import CommandResult, HostError
from ..probing import probe
from .catalog import DATASET_NAMES, DFLASH_BENCHMARK, StandardDataset, standard_dataset
from .errors import (
    OFFLINE_FALLBACK,
    DatasetError,
    DatasetUnreadable,
    cli_unusable,
    download_error,
    last_error_line,
)
from .models import DatasetFailure, DatasetPrompts, StandardPrompts

DEFAULT_DATASETS_DIR = "~/.cache/specops/datasets"
DEFAULT_TIMEOUT_S = 300.0
READER_SCRIPT = Path(__file__).with_name("host_reader.py")
READER_DIR = ".reader"  # under the datasets directory

# The library route: fixed code, its inputs from sys.argv (never spliced into the source).
LIBRARY_SNIPPET = """\
import sys
from huggingface_hub import hf_hub_download
repo_id, filename, revision, local_dir = sys.argv[1:5]
print(hf_hub_download(repo_id=repo_id, filename=filename, repo_type="dataset", revision=revision, local_dir=local_dir))
"""

_READER_REMEDIES = {
    2: "delete {local} on the host so that the next load downloads it again",
    3: "the dataset's layout changed on the Hub: pin an older revision (revisions=...)",
    4: "install pyarrow for the host's python3 (pip install pyarrow; SGLang's `datasets` brings it)",
}


def load_standard_prompts(
    ctx: ToolContext,
    names: Sequence[str],
    per_dataset: int | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    *,
    revisions: Mapping[str, str] | None = None,
    datasets_dir: str = DEFAULT_DATASETS_DIR,
) -> StandardPrompts:
    """Fetch and read `names` (catalog names: gsm8k, math500, humaneval, mbpp, mt-bench) on the host.

    per_dataset: prompts per dataset, the first rows of the file; None takes each
    dataset's usual count (catalog default_samples), fewer when the file is shorter.
    timeout_s bounds each host command (one download, one read). revisions pins a
    dataset to a branch or commit (default main). Returns the loaded datasets in the
    order asked, a list whose `failures` names those that did not load and why.
    """
    datasets, per, pinned = _validate(ctx, names, per_dataset, timeout_s, revisions, datasets_dir)
    reader = _upload_reader(ctx, datasets_dir)
    loaded: list[DatasetPrompts] = []
    failures: list[DatasetFailure] = []
    for dataset in datasets:
        try:
            loaded.append(
                _load_one(
                    ctx,
                    dataset,
                    limit=per or dataset.default_samples,
                    timeout_s=timeout_s,
                    revision=pinned.get(dataset.name, "main"),
                    datasets_dir=datasets_dir,
                    reader=reader,
                )
            )
        except DatasetError as exc:
            failures.append(DatasetFailure(name=dataset.name, repo_id=dataset.repo_id, error=exc.record()))
    return StandardPrompts(loaded, failures)


def load_standard_dataset(
    ctx: ToolContext,
    name: str,
    per_dataset: int | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    *,
    revision: str = "main",
    datasets_dir: str = DEFAULT_DATASETS_DIR,
) -> DatasetPrompts:
    """One dataset, as load_standard_prompts loads it; its failure is raised (a DatasetError subclass)."""
    (dataset,), per, _ = _validate(ctx, [name], per_dataset, timeout_s, {name: revision}, datasets_dir)
    reader = _upload_reader(ctx, datasets_dir)
    return _load_one(
        ctx,
        dataset,
        limit=per or dataset.default_samples,
        timeout_s=timeout_s,
        revision=revision,
        datasets_dir=datasets_dir,
        reader=reader,
    )


# ---------------------------------------------------------------- steps


def _validate(
    ctx: ToolContext,
    names: Sequence[str],
    per_dataset: int | None,
    timeout_s: float,
    revisions: Mapping[str, str] | None,
    datasets_dir: str,
) -> tuple[list[StandardDataset], int | None, dict[str, str]]:
    """The catalog entries asked for (each once, in order); InvalidToolInput before anything runs."""
    if isinstance(names, str):
        names = [names]
    unknown = [n for n in names if n not in DATASET_NAMES]
    if not names or unknown:
        raise InvalidToolInput(
            f"unknown standard datasets {unknown}" if unknown else "no standard dataset named",
            remedy=f"name some of {', '.join(DATASET_NAMES)}",
            details={"names": list(names)},
        )
    if per_dataset is not None and per_dataset < 1:
        raise InvalidToolInput(
            f"per_dataset must be 1 or more, not {per_dataset}", remedy="give a positive count, or None for the usual"
        )
    if timeout_s <= 0:
        raise InvalidToolInput(f"timeout_s must be positive, not {timeout_s}", remedy="give seconds above 0")
    pinned = dict(revisions or {})
    stray = sorted(set(pinned) - set(names))
    if stray or any(not r for r in pinned.values()):
        raise InvalidToolInput(
            f"revisions names datasets not asked for {stray}" if stray else "an empty revision",
            remedy="pin only datasets that are asked for, each to a branch or commit",
        )
    for name in names:
        ctx.writable(_target_dir(datasets_dir, standard_dataset(name)))  # PathOutsideAllowedRoots before any command
    return [standard_dataset(n) for n in dict.fromkeys(names)], per_dataset, pinned


def _target_dir(datasets_dir: str, dataset: StandardDataset) -> str:
    return posixpath.join(datasets_dir, dataset.repo_id)


def _upload_reader(ctx: ToolContext, datasets_dir: str) -> str:
    """host_reader.py on the host, under a name carrying its hash (a changed reader is a new file)."""
    data = READER_SCRIPT.read_bytes()
    path = ctx.writable(
        posixpath.join(datasets_dir, READER_DIR, f"host_reader-{hashlib.sha256(data).hexdigest()[:12]}.py")
    )
    try:
        if not ctx.host.exists(path):
            ctx.host.write_file(path, data, mode=0o644)
    except (HostError, OSError) as exc:
        raise DatasetError(
            f"could not put the dataset reader on the host at {path}: {exc}",
            remedy=f"check that the host's disk under {datasets_dir} is writable, {OFFLINE_FALLBACK}",
            details={"path": path},
        ) from None
    return path


def _load_one(
    ctx: ToolContext,
    dataset: StandardDataset,
    *,
    limit: int,
    timeout_s: float,
    revision: str,
    datasets_dir: str,
    reader: str,
) -> DatasetPrompts:
    target = ctx.writable(_target_dir(datasets_dir, dataset))
    local = posixpath.join(target, dataset.path)
    _download(ctx, dataset, target=target, local=local, revision=revision, timeout_s=timeout_s)
    table = _read(ctx, dataset, reader=reader, local=local, limit=limit, timeout_s=timeout_s)
    rows: list[dict[str, Any]] = table["rows"]
    total = int(table["total_rows"])
    try:
        prompts = [dataset.format(row) for row in rows]
    except (ValueError, KeyError, IndexError) as exc:
        raise DatasetUnreadable(
            f"{dataset.name}: a row of {dataset.repo_id}/{dataset.path} does not make a prompt: {exc}",
            remedy=f"the dataset's layout changed on the Hub: pin an older revision, {OFFLINE_FALLBACK}",
            details={"dataset": dataset.name, "local_path": local},
        ) from None
    if not prompts:
        raise DatasetUnreadable(
            f"{dataset.name}: {dataset.repo_id}/{dataset.path} holds no rows",
            remedy=f"check the file on the host ({local}), {OFFLINE_FALLBACK}",
            details={"dataset": dataset.name, "local_path": local},
        )
    commit = _commit(ctx, target, dataset.path)
    turn = " (the first turn of each conversation)" if dataset.turn == 0 else ""
    at = f"commit {commit[:12]}" if commit else f"revision {revision}"
    return DatasetPrompts(
        name=dataset.name,
        repo_id=dataset.repo_id,
        config=dataset.config,
        split=dataset.split,
        path=dataset.path,
        revision=revision,
        commit=commit,
        category=dataset.category,
        prompts=prompts,
        rows_in_file=total,
        local_path=local,
        source=(
            f"{dataset.describe()}: the first {len(prompts)} of {total} rows of {dataset.path} at {at}{turn}, "
            f"downloaded on the host and formatted as {DFLASH_BENCHMARK} formats them"
        ),
    )


def _download(
    ctx: ToolContext, dataset: StandardDataset, *, target: str, local: str, revision: str, timeout_s: float
) -> None:
    env = {**DOWNLOAD_ENV, **ctx.command_env()}
    cli = [
        "hf",
        "download",
        dataset.repo_id,
        dataset.path,
        "--repo-type",
        "dataset",
        "--revision",
        revision,
        "--local-dir",
        target,
    ]
    done = probe(ctx.host, cli, timeout=timeout_s, env=env)
    if done.ok and ctx.host.exists(local):
        return
    if not (cli_unusable(_output(done), done.exit_code) or done.ok):
        raise _download_failure(dataset, done, timeout_s)
    # No working `hf` (missing, a stub, help text instead of a download): huggingface_hub in python3.
    library = ["python3", "-c", LIBRARY_SNIPPET, dataset.repo_id, dataset.path, revision, target]
    again = probe(ctx.host, library, timeout=timeout_s, env=env)
    if again.ok and ctx.host.exists(local):
        return
    if cli_unusable(_output(again), again.exit_code) or again.ok:
        raise DatasetError(
            f"{dataset.name}: the host has no working `hf` CLI nor huggingface_hub for python3 "
            f"({last_error_line(_output(again)) or 'nothing downloaded'})",
            remedy=f"install huggingface_hub on the host (pip install -U huggingface_hub), {OFFLINE_FALLBACK}",
            details={
                "dataset": dataset.name,
                "hf_output": _output(done)[-1500:],
                "python3_output": _output(again)[-1500:],
            },
        )
    raise _download_failure(dataset, again, timeout_s)


def _download_failure(dataset: StandardDataset, done: CommandResult, timeout_s: float) -> DatasetError:
    return download_error(
        dataset.name, dataset.repo_id, dataset.path, _output(done), done.exit_code, done.timed_out, timeout_s
    )


def _read(
    ctx: ToolContext, dataset: StandardDataset, *, reader: str, local: str, limit: int, timeout_s: float
) -> dict[str, Any]:
    argv = [
        "python3",
        reader,
        "--format",
        dataset.file_format,
        "--columns",
        json.dumps(list(dataset.columns)),
        "--limit",
        str(limit),
        local,
    ]
    done = probe(ctx.host, argv, timeout=timeout_s)
    details = {
        "dataset": dataset.name,
        "local_path": local,
        "exit_code": done.exit_code,
        "stderr_tail": done.stderr[-1500:],
    }
    if done.timed_out:
        raise DatasetError(
            f"{dataset.name}: reading {local} on the host did not finish within {timeout_s:.0f} s",
            remedy=f"raise timeout_s, {OFFLINE_FALLBACK}",
            details=details,
        )
    if not done.ok:
        remedy = _READER_REMEDIES.get(done.exit_code or 0, "check that python3 (3.8 or newer) runs on the host")
        raise DatasetUnreadable(
            f"{dataset.name}: the host could not read {local} ({last_error_line(done.stderr) or f'exit {done.exit_code}'})",
            remedy=f"{remedy.format(local=local)}, {OFFLINE_FALLBACK}",
            details=details,
        )
    try:
        table = json.loads(done.stdout)
        if not isinstance(table, dict) or not isinstance(table.get("rows"), list):
            raise ValueError("no rows")
        return table
    except ValueError:
        raise DatasetUnreadable(
            f"{dataset.name}: the dataset reader printed no rows for {local}",
            remedy=f"check that python3 (3.8 or newer) runs on the host, {OFFLINE_FALLBACK}",
            details={**details, "stdout_head": done.stdout[:500]},
        ) from None


def _commit(ctx: ToolContext, target: str, path: str) -> str | None:
    """The commit hf recorded for the file (first line of its download metadata); None if it left none."""
    metadata = posixpath.join(target, ".cache", "huggingface", "download", f"{path}.metadata")
    try:
        first = ctx.host.read_file(metadata).decode("utf-8", "replace").splitlines()[0].strip()
    except (HostError, OSError, IndexError):
        return None
    return first if len(first) == 40 and all(c in "0123456789abcdef" for c in first) else None


def _output(done: CommandResult) -> str:
    return f"{done.stdout}\n{done.stderr}"
