"""What an SGLang server is launched with: one typed record, checked before anything runs.

Only settings the planner decides are here; each maps to one `launch_server`
flag (command.py). None means "SGLang's own default", and no flag is passed,
so an older SGLang is never asked for a flag the configuration does not need.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from ..inputs import HostPath, Port

# Parser names, served model names, bind addresses: words with no shell or flag meaning.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,199}")
_BIND_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9.:-]{0,252}")


def _check_name(value: str) -> str:
    if not _NAME.fullmatch(value):
        raise ValueError(f"{value!r}: expected letters, digits and . _ / : @ + - (no spaces, no leading '-')")
    return value


def _check_bind_host(value: str) -> str:
    if not _BIND_HOST.fullmatch(value):
        raise ValueError(f"{value!r} is not an address or host name to bind to (e.g. 127.0.0.1 or 0.0.0.0)")
    return value


Name = Annotated[str, AfterValidator(_check_name)]
BindHost = Annotated[str, AfterValidator(_check_bind_host)]
Size = Annotated[int, Field(ge=1, le=1024)]


class SpeculativeAlgorithm(StrEnum):
    # --speculative-algorithm values (NEXTN is EAGLE under another name: MTP heads). A comment, not a docstring: a
    # docstring would be sent in every tool schema that names the enum.

    DFLASH = "DFLASH"
    EAGLE = "EAGLE"
    EAGLE3 = "EAGLE3"
    NEXTN = "NEXTN"
    STANDALONE = "STANDALONE"
    NGRAM = "NGRAM"


# Algorithms that run a separate draft model and so need its path.
DRAFT_MODEL_ALGORITHMS = frozenset(
    {
        SpeculativeAlgorithm.DFLASH,
        SpeculativeAlgorithm.EAGLE,
        SpeculativeAlgorithm.EAGLE3,
        SpeculativeAlgorithm.STANDALONE,
    }
)

# Algorithms that draft in steps with SGLang's EAGLE settings (steps, top-k, draft tokens).
EAGLE_FAMILY = frozenset(
    {
        SpeculativeAlgorithm.EAGLE,
        SpeculativeAlgorithm.EAGLE3,
        SpeculativeAlgorithm.NEXTN,
        SpeculativeAlgorithm.STANDALONE,
    }
)


class ServerConfig(BaseModel):
    """One SGLang server: target model, parallelism, memory, CUDA graphs, speculative decoding, HTTP."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model_path: HostPath = Field(description="Target model directory on the host, or a cached repo id")
    tp: Size = Field(default=1, description="--tp-size")
    ep: Size = Field(default=1, description="--ep-size (MoE)")
    dp: Size = Field(default=1, description="--dp-size")
    pp: Size = Field(default=1, description="--pp-size")
    enable_dp_attention: bool = False
    enable_dp_lm_head: bool = Field(
        default=False,
        description="DFLASH on DP attention needs it (0.5.23)",
    )
    cuda_graphs: bool = Field(default=True, description="False passes --disable-cuda-graph")
    cuda_graph_max_bs: Annotated[int, Field(ge=1, le=4096)] | None = Field(
        default=None, description="CUDA-graph batch cap"
    )
    disable_cuda_graph_padding: bool = False
    mem_fraction_static: Annotated[float, Field(gt=0, le=1)] | None = None
    max_running_requests: Annotated[int, Field(ge=1, le=65536)] | None = None
    context_length: Annotated[int, Field(ge=1, le=16_777_216)] | None = None
    trust_remote_code: bool = False
    speculative_algorithm: SpeculativeAlgorithm | None = None
    drafter_path: HostPath | None = Field(default=None, description="--speculative-draft-model-path")
    block_size: Annotated[int, Field(ge=1, le=256)] | None = Field(
        default=None, description="--speculative-num-draft-tokens (DFLASH: unset, the drafter's)"
    )
    # EAGLE family and STANDALONE: set all three (with block_size) or none (SGLang's defaults).
    speculative_num_steps: Annotated[int, Field(ge=1, le=64)] | None = None
    speculative_eagle_topk: Annotated[int, Field(ge=1, le=64)] | None = None
    port: Port = 30000
    host: BindHost = "127.0.0.1"
    enable_metrics: bool = False
    tool_call_parser: Name | None = Field(default=None, description="e.g. kimi_k2 for Kimi K2.x")
    reasoning_parser: Name | None = Field(default=None, description="e.g. kimi_k2 for Kimi K2.x")
    served_model_name: Name | None = None
    replicas: Annotated[int, Field(ge=1)] = Field(default=1, description="Copies behind SGLang's gateway at `port`")

    @field_validator("model_path", "drafter_path")
    @classmethod
    def _not_a_flag(cls, value: str | None) -> str | None:
        if value is not None and value.startswith("-"):
            raise ValueError(f"path {value!r} starts with '-': it would read as a flag")
        return value

    @model_validator(mode="after")
    def _speculative_fields_agree(self) -> ServerConfig:
        algo = self.speculative_algorithm
        if algo is None:
            stray = [
                n
                for n in ("drafter_path", "block_size", "speculative_num_steps", "speculative_eagle_topk")
                if getattr(self, n) is not None
            ]
            if stray:
                raise ValueError(f"{', '.join(stray)} given without speculative_algorithm")
        elif algo in DRAFT_MODEL_ALGORITHMS and self.drafter_path is None:
            raise ValueError(f"{algo.value} needs drafter_path (--speculative-draft-model-path)")
        if self.enable_dp_lm_head and not self.enable_dp_attention:
            raise ValueError(
                "enable_dp_lm_head needs enable_dp_attention (it splits the LM head over the DP-attention ranks)"
            )
        if self.ep > 1 and self.tp % self.ep:
            raise ValueError(f"ep ({self.ep}) must divide tp ({self.tp}): SGLang places experts over the TP ranks")
        return self

    @property
    def gpus(self) -> int:
        """GPUs one server occupies: tp x pp, times dp unless DP attention splits the TP ranks."""
        return self.tp * self.pp * (1 if self.enable_dp_attention else self.dp)

    @property
    def total_gpus(self) -> int:
        """GPUs the deployment holds: every replica's."""
        return self.gpus * self.replicas
