"""A model directory on the sim host, as SGLang's loader sees it: config.json and weight shards.

Weight files on a sim host are stored at 1/byte_scale of their modelled size, so
the modelled weight size is the stored size of the *.safetensors times byte_scale.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..world.layout import WorldLayout
from .errors import LaunchError, python_traceback

GIB = 1024**3


@dataclass(frozen=True)
class Checkpoint:
    path: Path
    config: dict[str, Any]
    shard_count: int
    weight_bytes: int  # modelled

    @property
    def text_config(self) -> dict[str, Any]:
        """Kimi K2.5/K2.6 nest the language model's fields under text_config."""
        nested = self.config.get("text_config")
        return nested if isinstance(nested, dict) else self.config

    @property
    def architecture(self) -> str:
        archs = self.config.get("architectures") or ["UnknownForCausalLM"]
        return str(archs[0])

    @property
    def num_hidden_layers(self) -> int:
        return int(self.text_config.get("num_hidden_layers", self.config.get("num_hidden_layers", 0)))

    @property
    def context_length(self) -> int:
        return int(self.text_config.get("max_position_embeddings", 131072))

    @property
    def model_type(self) -> str:
        return str(self.config.get("model_type", "unknown"))

    @property
    def weight_gib(self) -> float:
        return self.weight_bytes / GIB


def resolve_model_dir(model_path: str, layout: WorldLayout) -> Path | None:
    """Where `--model-path` points on the host: a directory (absolute paths are host paths,
    relative ones relative to the working directory), or a repo id found in the host's
    Hugging Face cache. None: neither."""
    candidates: list[Path] = []
    p = Path(model_path)
    if p.is_absolute():
        candidates.append(layout.host_path(model_path))
    else:
        candidates.append(Path.cwd() / p)
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    if model_path.count("/") == 1 and not p.is_absolute():
        hub = Path(
            os.environ.get("HF_HUB_CACHE")
            or Path(os.environ.get("HF_HOME", layout.home / ".cache/huggingface")) / "hub"
        )
        snapshots = hub / f"models--{model_path.replace('/', '--')}" / "snapshots"
        if snapshots.is_dir():
            found = sorted(
                (d for d in snapshots.iterdir() if (d / "config.json").exists()), key=lambda d: d.stat().st_mtime
            )
            if found:
                return found[-1]
    return None


def load_checkpoint(
    model_path: str, layout: WorldLayout, byte_scale: int, fallback_weight_gib: float | None
) -> Checkpoint:
    """Read a model directory. Raises LaunchError with the errors transformers/SGLang give."""
    directory = resolve_model_dir(model_path, layout)
    if directory is None:
        raise LaunchError(
            python_traceback(
                [
                    (
                        "/usr/local/lib/python3.12/dist-packages/transformers/utils/hub.py",
                        479,
                        "cached_files",
                        "raise OSError(",
                    )
                ],
                f"OSError: {model_path} is not a local folder and is not a valid model identifier listed on "
                "'https://huggingface.co/models'\nIf this is a private repository, make sure to pass a token having "
                "permission to this repo either by logging in with `hf auth login` or by passing `token=<your_token>`",
            )
        )
    config_file = directory / "config.json"
    try:
        config = json.loads(config_file.read_text())
    except FileNotFoundError:
        raise LaunchError(
            python_traceback(
                [
                    (
                        "/usr/local/lib/python3.12/dist-packages/transformers/utils/hub.py",
                        511,
                        "cached_files",
                        "raise OSError(",
                    )
                ],
                f"OSError: {directory} does not appear to have a file named config.json. Checkout "
                f"'https://huggingface.co/{directory}/tree/None' for available files.",
            )
        ) from None
    except json.JSONDecodeError as exc:
        raise LaunchError(f"json.decoder.JSONDecodeError: {exc}") from None
    shards = sorted(directory.glob("*.safetensors"))
    stored = sum(s.stat().st_size for s in shards)
    weight_bytes = stored * byte_scale
    if not shards and fallback_weight_gib is not None:
        weight_bytes = int(fallback_weight_gib * GIB)
    return Checkpoint(path=directory, config=config, shard_count=len(shards), weight_bytes=weight_bytes)
