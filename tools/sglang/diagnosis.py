"""Why a launch failed, read from SGLang's log: the cause, the lines that show it, and a remedy.

Patterns are SGLang's (and PyTorch's, NCCL's, argparse's) own messages; those
SGLang writes itself (the DFLASH rules, the port check, out of memory, CUDA-graph
capture) come from the modelled releases' wheels (`specops.sglang_releases`), so a
message a release changes is recognised in every modelled spelling. They
are tried most specific first: a CUDA-graph capture that ran out of memory is a
CUDA-graph failure (turning graphs off or shrinking their batch sizes fixes
it), not a generic out-of-memory.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ...sglang_releases.facts import ReleaseFacts, load, modelled_versions

LaunchCause = Literal[
    "out_of_memory",
    "port_in_use",
    "dflash_rule",
    "speculative_rule",
    "cuda_graph_failure",
    "bad_drafter",
    "model_not_found",
    "crash",
    "timeout",
    "unsupported_flag",
]


@dataclass(frozen=True)
class _Signature:
    cause: LaunchCause
    pattern: re.Pattern[str]
    remedy: str
    names_peer: bool = False  # the remedy ends with the peer the log's NCCL socket line names


def _sig(cause: LaunchCause, pattern: str, remedy: str, *, names_peer: bool = False) -> _Signature:
    return _Signature(cause, re.compile(pattern), remedy, names_peer)


def _message_pattern(template: str) -> str:
    """A release's message as a regex: its text literally, each `{expression}` field between two texts as
    anything (a field at either end is left out: a search needs no `.*` there, and a leading one would make
    it quadratic on SGLang's long server_args line)."""
    parts = [re.escape(part) for part in re.split(r"\{[^{}]*\}", template)]
    while parts and not parts[0]:
        parts.pop(0)
    while parts and not parts[-1]:
        parts.pop()
    return "[^\n]*?".join(parts)


def _release_messages(pick: Callable[[ReleaseFacts], list[str]]) -> str:
    """One alternation of every modelled release's spelling of a message."""
    texts = {text for version in modelled_versions() for text in pick(load(version)) if text}
    return "|".join(sorted(_message_pattern(t) for t in texts))


_DFLASH_RULES = _release_messages(lambda r: [rule.message for rule in r.launch_rules if rule.algorithm == "DFLASH"])
_OTHER_SPECULATIVE_RULES = _release_messages(
    lambda r: [rule.message for rule in r.launch_rules if rule.algorithm != "DFLASH"]
)
# NCCL's ncclRemoteError as torch's watchdog raises it, and NCCL's own socket warning naming the peer.
PEER_LOST = (
    r"remote process exited or there was a network error|ncclRemoteError|Connection closed by remote peer"
    r"|NET/IB : Got completion from peer"
)
_PORT_CHECK = _release_messages(lambda r: [(r.log_lines.port_in_use or "").split(" dist_init_port")[0]])
_POOL_TOO_SMALL = _release_messages(lambda r: [r.log_lines.out_of_memory])
_GRAPH_CAPTURE = _release_messages(lambda r: [r.log_lines.cuda_graph_capture_failed.split(":")[0]])

SIGNATURES: tuple[_Signature, ...] = (
    _sig(
        "unsupported_flag",
        r"error: (unrecognized arguments: .*|ambiguous option: .*|argument --[\w-]+.*: invalid choice: .*)"
        r"|Unknown speculative algorithm name: .*",
        "the installed SGLang does not accept that flag or value (an 'ambiguous option' is a flag this release "
        "renamed, e.g. --cuda-graph-max-bs on 0.5.23): check launch_server --help on the host, upgrade SGLang, "
        "or drop the setting",
    ),
    _sig(
        "dflash_rule",
        _DFLASH_RULES,
        "change the configuration to what DFLASH allows on this SGLang (the quoted line says which rule): pp=1, "
        "a draft model path, one block size; DP attention only on 0.5.23 and with enable_dp_lm_head",
    ),
    _sig(
        "speculative_rule",
        _OTHER_SPECULATIVE_RULES,
        "change the configuration to what the speculative algorithm allows on this SGLang (the quoted line says "
        "which rule): no DP attention for STANDALONE and NGRAM, top-k 1 on page sizes above 1 outside flashinfer",
    ),
    _sig(
        "bad_drafter",
        r"DFLASH requires a DFlash draft model.*|DFLASH target_layer_ids must be.*"
        r"|implements neither set_dspark_layers_to_capture nor set_dflash_layers_to_capture.*"
        r"|'PretrainedConfig' object has no attribute 'num_hidden_layers'",
        "the drafter does not fit this target: check its config.json (a DFlash architecture this SGLang serves, "
        "num_hidden_layers, target_layer_ids within the target's layers) or download the right drafter",
    ),
    _sig(
        "model_not_found",
        r"OSError: .* (is not a local folder and is not a valid model identifier|"
        r"does not appear to have a file named config\.json).*",
        "the model or drafter path does not hold a model: download it there first, or fix the path",
    ),
    _sig(
        "port_in_use",
        r"Address already in use|address already in use|Failed to bind HTTP port|" + _PORT_CHECK,
        "another process holds the port (SGLang binds the HTTP port only after loading, and checks the ports "
        "it derives from it first with DP attention): choose another port, or stop that process if it is yours",
    ),
    _sig(
        "cuda_graph_failure",
        _GRAPH_CAPTURE + r"|CUDA graph capture failed|cuda_graph_runner",
        "relaunch with cuda_graphs off (slower), or a smaller cuda_graph_max_bs, "
        "or a lower mem_fraction_static so the graphs have room",
    ),
    _sig(
        "out_of_memory",
        _POOL_TOO_SMALL + r"|CUDA out of memory|OutOfMemoryError|CUDA error: out of memory",
        "see details.memory for which: the static pool is too small (raise mem_fraction_static, lower "
        "context_length, max_running_requests or cuda_graph_max_bs) or the weights do not fit (more GPUs per "
        "replica: larger tp or pp, or free the GPU memory other processes hold)",
    ),
    # Before the watchdog: torch's watchdog also reports a peer that went away ("remote process exited"), which is
    # a lost node or link, not load; its remedy names the peer.
    _sig(
        "crash",
        PEER_LOST,
        "another node's process went away or the network between the nodes failed (NCCL remote error): not load "
        "and not this configuration, so fewer running requests will not help. Check the node the peer line names "
        "(that it is up, its SGLang log, dmesg, nvidia-smi) and its link, then relaunch",
        names_peer=True,
    ),
    _sig(
        "crash",
        r"Watchdog caught collective operation timeout|Process group watchdog thread terminated",
        "an NCCL collective hung until PyTorch's watchdog killed the server (NCCL watchdog timeout). Under load it "
        "comes with too many requests at once: relaunch with a lower max_running_requests (--max-running-requests); "
        "at start, or at low load, relaunch once (it can be transient) and check the GPUs' links (nvidia-smi topo -m); "
        "a longer --watchdog-timeout only delays it",
    ),
    _sig(
        "crash",
        r"Traceback \(most recent call last\)|NCCL error|Received sigquit from a child process|"
        r"RuntimeError|Segmentation fault|core dumped|Killed",
        "the server crashed while starting: read the traceback in the log tail; if it looks transient "
        "(NCCL, illegal memory access) relaunch once, else change the configuration",
    ),
)

_NOT_ENOUGH_POOL = "Not enough memory. Please try to increase --mem-fraction-static"
# NCCL's socket line ("Connection closed by remote peer ADDR<PORT>") or its InfiniBand completion error ("Got
# completion from peer ADDR<PORT> with status=12 ..."), with what follows it in parentheses (the node, where named).
_PEER_LINE = re.compile(
    r"(?:Connection closed by remote peer|remote peer|Got completion from peer) (?P<peer>[^\s,;]+)"
    r"(?:[^\n]*?(?P<where> \(node_rank [^)]*\)))?"
)


class Diagnosis(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    cause: LaunchCause
    lines: list[str] = Field(description="The log lines that show the cause, in log order")
    remedy: str
    memory: Literal["pool_too_small", "weights_do_not_fit"] | None = Field(
        default=None, description="For out_of_memory: whether the static pool or the weights themselves are short"
    )


def fatal_line(text: str) -> bool:
    """Whether the log shows a failure the server will not recover from (it is exiting)."""
    return any(sig.cause != "crash" and sig.pattern.search(text) for sig in SIGNATURES) or (
        "Traceback (most recent call last)" in text and "Received sigquit" in text
    )


def diagnose(log_text: str) -> Diagnosis:
    """The first matching signature, most specific first; a bare crash when nothing more specific shows."""
    lines = log_text.splitlines()
    for sig in SIGNATURES:
        hits = [line.strip() for line in lines if sig.pattern.search(line)]
        if not hits:
            continue
        memory = None
        if sig.cause == "out_of_memory":
            memory = "pool_too_small" if any(_NOT_ENOUGH_POOL in h for h in hits) else "weights_do_not_fit"
        remedy = _remedy(sig, memory)
        if sig.names_peer:
            peers = [m.group("peer") + (m.group("where") or "") for line in lines if (m := _PEER_LINE.search(line))]
            hits = hits[:1] + [line.strip() for line in lines if _PEER_LINE.search(line)][:1]
            if peers:
                remedy += f" (the peer that went away: {peers[0]})"
        elif sig.cause == "crash":
            hits = hits[:1] + _last_exception(lines)
        return Diagnosis(cause=sig.cause, lines=list(dict.fromkeys(hits))[:20], remedy=remedy, memory=memory)
    return Diagnosis(
        cause="crash",
        lines=_last_exception(lines) or [line for line in lines[-3:] if line.strip()],
        remedy="the server exited without an error SGLang names: read the log tail; check host memory (dmesg for the "
        "OOM killer) and the driver (nvidia-smi)",
    )


def _remedy(sig: _Signature, memory: str | None) -> str:
    if memory == "pool_too_small":
        return (
            "the static memory pool leaves no room for a KV cache: raise mem_fraction_static (e.g. 0.9), or lower "
            "context_length, max_running_requests or cuda_graph_max_bs; check nvidia-smi for memory other "
            "processes hold"
        )
    if memory == "weights_do_not_fit":
        return (
            "the weights do not fit in GPU memory at this parallelism: shard over more GPUs (larger tp, or tp with "
            "ep), or free the GPU memory other processes hold (nvidia-smi)"
        )
    return sig.remedy


def _last_exception(lines: list[str]) -> list[str]:
    """The last `Name: message` line of a traceback (what Python says went wrong)."""
    exc = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit)\b.*")
    found = [line.strip() for line in lines if exc.match(line.strip())]
    return found[-1:]
