"""extract.py on a small wheel written here: the facts it reads from source, without importing it."""

from __future__ import annotations

import zipfile
from pathlib import Path

from specops.sglang_releases.extract import extract

SERVER_ARGS = """
import argparse

LOAD_FORMATS = ["auto", "pt"]


class ServerArgs:
    tp_size: int = 1
    load_format: str = "auto"

    def check(self):
        if self.speculative_algorithm == "DFLASH":
            if self.pp_size != 1:
                raise ValueError("Currently DFLASH speculative decoding only supports pp_size == 1.")
            if self.speculative_draft_model_path is None:
                raise ValueError(
                    "DFLASH speculative decoding requires setting --speculative-draft-model-path."
                )
            if self.speculative_num_draft_tokens is None:
                logger.warning(
                    "speculative_num_draft_tokens is not set; defaulting to %d for DFLASH.", 16
                )
            logger.warning("Overlap scheduler is disabled when using DFLASH speculative decoding.")

    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--model-path", "--model", type=str, required=True)
        parser.add_argument("--tensor-parallel-size", "--tp-size", type=int, default=ServerArgs.tp_size)
        parser.add_argument("--load-format", type=str, choices=LOAD_FORMATS + ["dummy"], default=ServerArgs.load_format)
        parser.add_argument("--enable-metrics", action="store_true")
        parser.add_argument("--speculative-algorithm", type=str, choices=["EAGLE", "DFLASH"])
        parser.add_argument("--reasoning-parser", type=str, choices=compute_parsers())


def check_ports(dist_init_port):
    raise ValueError(f"Port is already in use. {dist_init_port=}")
"""

OTHER_FILES = {
    "sglang/srt/managers/tokenizer_manager.py": """
def metrics(meta_info, recv_obj, i):
    if recv_obj.spec_verify_ct[i] > 0:
        meta_info["spec_accept_length"] = 1
        meta_info["spec_verify_ct"] = recv_obj.spec_verify_ct[i]
""",
    "sglang/srt/managers/scheduler.py": """
class Scheduler:
    def get_internal_state(self):
        ret = dict(last_gen_throughput=self.t)
        ret["avg_spec_accept_length"] = self.a
        return ret

    def process(self, ret):
        ret["not_a_state_key"] = 1
""",
    "sglang/srt/entrypoints/http_server.py": """
@app.get("/health")
async def health(): ...

@app.post("/generate")
async def generate(): ...

def launch():
    logger.info("The server is fired up and ready to roll!")
""",
    "sglang/srt/utils/common.py": 'metrics = Mount("/metrics", app)\n',
    "sglang/srt/model_executor/pool.py": 'MSG = "Not enough memory. Please try to increase --mem-fraction-static."\n',
    "sglang/srt/model_executor/cuda_graph_runner.py": """
def capture(e):
    raise Exception(f"Capture cuda graph failed: {e}")
""",
    "sglang/srt/managers/metrics_reporter.py": """
def log_decode(n, a, r, t):
    msg = f"Decode batch, #running-req: {n}, "
    msg += f"accept len: {a:.2f}, accept rate: {r:.2f}, "
    msg += f"gen throughput (token/s): {t:.2f}, #queue-req: 0"
    gauge = "sglang:spec_accept_length"
""",
    "sglang/srt/models/dflash.py": "class DFlashDraftModel: ...\n\nEntryClass = DFlashDraftModel\n",
    "sglang/bench_serving.py": """
def run(metrics):
    result = {"completed": metrics.completed, "output_throughput": metrics.output_throughput, "p99_ttft_ms": 1}
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset-name", type=str, default="sharegpt", choices=["sharegpt", "random-ids"])
    parser.add_argument("--num-prompts", type=int, default=1000)
""",
}


def _wheel(tmp_path: Path) -> Path:
    path = tmp_path / "sglang-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("sglang/srt/server_args.py", SERVER_ARGS)
        for name, text in OTHER_FILES.items():
            wheel.writestr(name, text)
    return path


def test_a_wheel_is_read_into_facts(tmp_path):
    facts = extract(_wheel(tmp_path))
    assert facts.version == "9.9.9"
    tp = facts.flag("--tp-size")
    assert tp is not None and tp.names == ("--tensor-parallel-size", "--tp-size")
    assert (tp.dest, tp.type, tp.default) == ("tensor_parallel_size", "int", 1)  # ServerArgs.tp_size, resolved
    assert facts.flag("--model").required and facts.flag("--enable-metrics").kind == "store_true"
    load_format = facts.flag("--load-format")
    assert load_format.choices == ("auto", "pt", "dummy") and load_format.default == "auto"
    reasoning = facts.flag("--reasoning-parser")
    assert reasoning.choices is None and reasoning.choices_dynamic  # computed when SGLang runs: not guessed
    assert facts.speculative_algorithms == ("EAGLE", "DFLASH") and facts.speculative_algorithm_argparse_choices
    assert [(r.id, r.message) for r in facts.launch_rules] == [
        ("dflash_pp", "Currently DFLASH speculative decoding only supports pp_size == 1."),
        ("dflash_draft_model_path", "DFLASH speculative decoding requires setting --speculative-draft-model-path."),
    ]
    assert [(w.id, w.message) for w in facts.launch_warnings] == [
        ("dflash_block_size_default", "speculative_num_draft_tokens is not set; defaulting to %d for DFLASH."),
        ("dflash_overlap_disabled", "Overlap scheduler is disabled when using DFLASH speculative decoding."),
    ]
    assert facts.meta_info_speculative_keys == ("spec_accept_length", "spec_verify_ct")
    assert facts.server_info_internal_state_keys == ("avg_spec_accept_length", "last_gen_throughput")
    assert facts.endpoints == ("/generate", "/health", "/metrics")
    assert facts.metrics == ("sglang:spec_accept_length",)
    assert facts.dflash_architectures == ("DFlashDraftModel",)
    lines = facts.log_lines
    assert lines.ready == "The server is fired up and ready to roll!"
    assert lines.cuda_graph_capture_failed == "Capture cuda graph failed: {e}"
    assert lines.decode_batch[0] == "Decode batch, #running-req: {n}, " and "accept len" in lines.decode_batch[1]
    assert lines.port_in_use == "Port is already in use. dist_init_port={dist_init_port}"  # f"{x=}" as it prints
    bench = facts.bench_serving
    assert bench.module == "sglang.bench_serving" and bench.dataset_names == ("sharegpt", "random-ids")
    assert bench.result_fields == ("completed", "output_throughput", "p99_ttft_ms")


RECORD_STYLE = {
    # 0.5.20 on: flags are annotated fields of namespace records; a few are still added by hand.
    "sglang/srt/server_args.py": """
from sglang.srt.arg_groups.arg_utils import add_cli_args_from_dataclass
from sglang.srt.arg_groups.fields.exec_ import ExecGraph

_INPUT_NAMESPACES = [
    ExecGraph,
]


class ServerArgs:
    @staticmethod
    def add_cli_args(parser):
        add_cli_args_from_dataclass(parser, ServerArgs)
        parser.add_argument("--disable-cuda-graph", action=DeprecatedStoreTrueAction,
                            new_flag="--cuda-graph-backend-decode=disabled", help="Deprecated.")
""",
    "sglang/srt/arg_groups/fields/__init__.py": "",
    "sglang/srt/arg_groups/fields/exec_.py": """
class ExecGraph(msgspec.Struct):
    _NS_PATH = "exec"
    cuda_graph_max_bs_decode: A[Optional[int], "Maximum decode batch captured."] = None
    cuda_graph_backend_decode: A[Literal["full", "disabled"], Arg(help="Backend.", aliases=["--cgb"])] = "full"
    enable_dp_lm_head: A[bool, "Split the LM head over DP ranks."] = False
    attn_dp_size: A[int, Arg(help="DP attention size.", cli_name="--attn-dp-size")] = 1
    internal_only: A[int, Arg(no_cli=True)] = 3
""",
    "sglang/srt/speculative/spec_info.py": """
class SpeculativeAlgorithm(Enum):
    DFLASH = auto()
    EAGLE = auto()
    NONE = auto()

    @classmethod
    def from_string(cls, name):
        upper = name.upper()
        if upper in _RESERVED_ALIASES:
            return cls.EAGLE
""",
    "sglang/srt/speculative/spec_registry.py": '_RESERVED_ALIASES = frozenset({"NEXTN"})\n',
    "sglang/srt/managers/internal_state.py": """
class InternalState:
    def get_internal_state(self):
        state = resolved()
        for contribute in (self._add_topology, self._add_speculative):
            contribute(state)
        return state

    def _add_topology(self, state):
        state["world_size"] = 8

    def _add_speculative(self, state):
        state["avg_spec_accept_length"] = 3.0

    def _unrelated(self, other):
        other["not_a_state_key"] = 1
""",
}


def test_a_record_style_release_is_read_as_its_argparse_would_register_it(tmp_path):
    files = {**OTHER_FILES, **RECORD_STYLE}
    del files["sglang/srt/managers/scheduler.py"]
    path = tmp_path / "sglang-9.9.10-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)
    facts = extract(path)
    cap = facts.flag("--cuda-graph-max-bs-decode")
    assert cap is not None and (cap.type, cap.default, cap.kind) == ("int", None, "value")
    backend = facts.flag("--cgb")
    assert (
        backend is not None
        and backend.names[0] == "--cuda-graph-backend-decode"
        and backend.choices == ("full", "disabled")
    )
    assert (
        facts.flag("--enable-dp-lm-head").kind == "store_true" and facts.flag("--attn-dp-size").dest == "attn_dp_size"
    )
    assert facts.flag("--internal-only") is None  # no_cli
    old = facts.flag("--disable-cuda-graph")
    assert old.kind == "deprecated_store_true" and old.replacement == "--cuda-graph-backend-decode=disabled"
    # A free string checked at start-up: the enum's names, and the alias from_string maps to EAGLE.
    assert facts.speculative_algorithms == ("DFLASH", "EAGLE") and not facts.speculative_algorithm_argparse_choices
    assert facts.speculative_algorithm_aliases == {"NEXTN": "EAGLE"} and facts.offers("nextn")
    assert facts.server_info_internal_state_keys == ("avg_spec_accept_length", "world_size")


# Parser choices: 0.5.1x hands argparse the registry's keys; 0.5.23 a dependency-free copy of the names, through a
# function that reads the registry only where a plugin already imported it.
PARSERS_0_5_1X = """
from sglang.srt.parser.reasoning_parser import ReasoningParser
from sglang.srt.function_call.function_call_parser import FunctionCallParser


class ServerArgs:
    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--speculative-algorithm", type=str, choices=["EAGLE"])
        parser.add_argument("--reasoning-parser", type=str, choices=list(ReasoningParser.DetectorMap.keys()))
        tool_call_parser_choices = list(FunctionCallParser.ToolCallParserEnum.keys())
        parser.add_argument("--tool-call-parser", type=str, choices=tool_call_parser_choices)
        parser.add_argument("--sampling-backend", type=str, choices=list(Backends.ALL.keys()))
"""

PARSERS_0_5_23 = """
import sys


def _reasoning_parser_choices():
    module = sys.modules.get("sglang.srt.parser.reasoning_parser")
    if module is not None:
        return list(module.ReasoningParser.DetectorMap)
    from sglang.srt.parser.reasoning_parser_names import REASONING_PARSER_NAMES

    return list(REASONING_PARSER_NAMES)


class ServerArgs:
    @staticmethod
    def add_cli_args(parser):
        parser.add_argument("--model-path", type=str, required=True)
        parser.add_argument("--speculative-algorithm", type=str, choices=["EAGLE"])
        reasoning_parser_choices = _reasoning_parser_choices()
        parser.add_argument("--reasoning-parser", type=str, choices=["auto"] + reasoning_parser_choices)
"""

REGISTRIES = {
    "sglang/srt/parser/reasoning_parser.py": """
class ReasoningParser:
    DetectorMap: Dict[str, Type[Detector]] = {"deepseek-r1": R1, "qwen3": Qwen3}
""",
    "sglang/srt/function_call/function_call_parser.py": """
class FunctionCallParser:
    ToolCallParserEnum = {"kimi_k2": KimiK2, "qwen25": Qwen25}
""",
    "sglang/srt/parser/reasoning_parser_names.py": 'REASONING_PARSER_NAMES = ["qwen3", "deepseek-r1"]\n',
}


def test_parser_choices_are_read_from_the_registries(tmp_path):
    for version, server_args in (("9.9.13", PARSERS_0_5_1X), ("9.9.14", PARSERS_0_5_23)):
        path = tmp_path / f"sglang-{version}-py3-none-any.whl"
        with zipfile.ZipFile(path, "w") as wheel:
            for name, text in {**OTHER_FILES, **REGISTRIES, "sglang/srt/server_args.py": server_args}.items():
                wheel.writestr(name, text)
        facts = extract(path)
        reasoning = facts.flag("--reasoning-parser")
        assert reasoning is not None and not reasoning.choices_dynamic
        if version == "9.9.13":
            assert reasoning.choices == ("deepseek-r1", "qwen3")
            assert facts.flag("--tool-call-parser").choices == ("kimi_k2", "qwen25")
            other = facts.flag("--sampling-backend")  # not a parser registry: left to run time
            assert other.choices is None and other.choices_dynamic
        else:
            assert reasoning.choices == ("auto", "qwen3", "deepseek-r1")  # the names module's order, "auto" first


# 0.5.23's shape: `_handle_dflash` in arg_groups/speculative_hook.py, a helper of the same module logging for it.
DFLASH_HOOK = """
def _resolve_dflash_draft_attention_backend(server_args):
    if unsupported:
        logger.warning("DFLASH draft worker does not support attention_backend %r on %s. Falling back to '%s'.", b, p, f)


def _handle_dflash(server_args):
    if cfg.speculative_num_steps != 1:
        logger.warning("DFLASH only supports speculative_num_steps == 1; overriding speculative_num_steps=%s to 1.", n)
    _resolve_dflash_draft_attention_backend(server_args)
    if cfg.max_running_requests is None:
        logger.warning("Max running requests is reset to 48 for speculative decoding.")


def _handle_uno(server_args):
    logger.warning("Not DFLASH's.")
"""


def test_dflash_warnings_are_read_in_the_order_the_hook_logs_them(tmp_path):
    files = {**OTHER_FILES, **RECORD_STYLE, "sglang/srt/arg_groups/speculative_hook.py": DFLASH_HOOK}
    del files["sglang/srt/managers/scheduler.py"]
    path = tmp_path / "sglang-9.9.15-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)
    warnings = extract(path).launch_warnings
    assert [w.id for w in warnings] == [
        "dflash_num_steps_override",
        "dflash_draft_backend_fallback",  # logged by the helper, where _handle_dflash calls it
        "dflash_max_running_requests",
    ]
    assert {w.source for w in warnings} == {"sglang/srt/arg_groups/speculative_hook.py"}
