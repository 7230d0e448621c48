"""`python -m sglang.bench_serving` on a sim host, and the benchmark tool's client="bench_serving" path through it.

The sim host's sglang package ships the installed release's serving benchmark: its
flags (argparse refuses the others), its requests (streamed over real HTTP to the
serving simulator), its figures, summary and exactly its JSONL fields (0.5.23: p90
and p95 of every latency). `random` fetches ShareGPT from the Hub unless
--dataset-path names a copy, so without one it fails as SGLang does offline;
`random-ids` fetches nothing. Through the benchmark tool it must agree with our own
client against the same server, and it exists only where the profile installs SGLang.
"""

from __future__ import annotations

import json

import pytest

from specops.sglang_releases import facts
from specops.sim.profiles import load_profile
from specops.tools.benchmark import BenchmarkArgs, BenchServingUnavailable, run_benchmark
from specops.tools.benchmark.bench_serving import find_bench_serving
from specops.tools.context import ToolContext

from .test_benchmark_sim import FAST_LOAD, TIME_SCALE, launch
from .worlds import BACKENDS, reach, start_world

pytestmark = [pytest.mark.timeout(180), pytest.mark.slow]

VERSION = FAST_LOAD.software.sglang
RELEASE = facts.for_version(VERSION)
# The JSON line's fields, as the installed release's bench_serving writes them (read from its wheel).
FIELDS = RELEASE.bench_serving.result_fields


def bench(*extra: str, port: str = "30000", dataset: str = "random-ids") -> list[str]:
    # The installed release's own module (0.5.23: sglang.benchmark.serving; sglang.bench_serving is a shim that warns).
    return [
        "python3",
        "-m",
        RELEASE.bench_serving.module,
        "--backend",
        "sglang",
        "--host",
        "127.0.0.1",
        "--port",
        port,
        "--dataset-name",
        dataset,
        "--random-range-ratio",
        "1.0",
        "--request-rate",
        "inf",
        "--seed",
        "1",
        *extra,
    ]


@pytest.fixture(scope="module")
def served():
    """A seed-ct200 world at time scale 3 serving Kimi-K2.6 autoregressive (EP4), for the whole module."""
    with start_world(FAST_LOAD, time_scale=TIME_SCALE) as world, reach(world, "sim") as host:
        server = launch(host, str(world.layout.home), "logs/sglang-bench-serving.log")
        yield world
        host.stop(server)


def test_unknown_flags_and_bad_values_are_refused_like_argparse(served):
    with reach(served, "sim") as host:
        for argv, message in (
            (bench("--bogus"), "unrecognized arguments: --bogus"),
            (bench("--dataset-name", "nope"), "argument --dataset-name: invalid choice: 'nope'"),
            (bench("--num-prompts", "many"), "argument --num-prompts: invalid int value: 'many'"),
            (bench("--backend", "tgi"), "argument --backend: invalid choice: 'tgi'"),
        ):
            done = host.run(argv, timeout=60)
            assert done.exit_code == 2 and message in done.stderr and done.stderr.startswith("usage: "), done.stderr
            assert not host.exists("never.jsonl")


def test_a_run_streams_from_the_server_prints_the_summary_and_appends_sglangs_fields(served):
    with reach(served, "sim") as host:
        out = f"{served.layout.home}/bench/runs.jsonl"
        host.run(["mkdir", "-p", f"{served.layout.home}/bench"], timeout=30).check()
        first = host.run(
            bench(
                "--num-prompts",
                "8",
                "--max-concurrency",
                "4",
                "--random-input-len",
                "64",
                "--random-output-len",
                "48",
                "--warmup-requests",
                "1",
                "--flush-cache",
                "--output-file",
                out,
            ),
            timeout=120,
        )
        assert first.exit_code == 0, first.stdout[-2000:] + first.stderr[-2000:]
        for words in (
            "#Input tokens: 512",
            "Starting warmup with 1 sequences...",
            " Serving Benchmark Result ",
            "Successful requests:                     8",
            "Output token throughput (tok/s):",
            "Max request concurrency:                 4",
            "P95 ITL (ms):",
        ):
            assert words in first.stdout, words
        # The second run names the server by --base-url, asks for the model by name and lets lengths vary.
        second = host.run(
            [
                "python3",
                "-m",
                RELEASE.bench_serving.module,
                "--base-url",
                "http://127.0.0.1:30000",
                "--dataset-name",
                "random-ids",
                "--num-prompts",
                "6",
                "--random-input-len",
                "32",
                "--random-output-len",
                "40",
                "--random-range-ratio",
                "0.5",
                "--max-concurrency",
                "6",
                "--warmup-requests",
                "0",
                "--output-file",
                out,
                "--tag",
                "second",
            ],
            timeout=120,
        )
        assert second.exit_code == 0, second.stdout[-2000:] + second.stderr[-2000:]
        lines = [json.loads(line) for line in host.read_file(out).decode().splitlines()]
    assert len(lines) == 2, "each run appends one line"
    one, two = lines
    assert tuple(one) == FIELDS, "exactly the release's fields, in its order"
    assert one["completed"] == 8 and one["total_input_tokens"] == 8 * 64 and one["total_output_tokens"] == 8 * 48
    assert one["max_concurrency"] == 4 and one["request_rate"] == float("inf") and one["accept_length"] is None
    assert one["server_info"]["version"] == VERSION and one["server_info"]["ep_size"] == 4
    assert one["output_throughput"] == pytest.approx(one["total_output_tokens"] / one["duration"])
    assert one["concurrency"] == pytest.approx(4, rel=0.15), "four requests kept in flight"
    # Native backend: ITL is each chunk gap over its tokens, so its mean matches TPOT's (one token a chunk here).
    assert one["mean_itl_ms"] == pytest.approx(one["mean_tpot_ms"], rel=0.1)
    assert one["p99_e2e_latency_ms"] >= one["median_e2e_latency_ms"] >= one["median_ttft_ms"] > 0
    assert two["tag"] == "second" and two["completed"] == 6 and two["max_concurrency"] == 6
    assert 6 * 20 <= two["total_output_tokens"] <= 6 * 40 and 6 * 16 <= two["total_input_tokens"] <= 6 * 32


def test_random_without_a_dataset_path_fails_as_sglang_does_offline(served):
    small = ("--num-prompts", "2", "--random-input-len", "16", "--random-output-len", "8")
    with reach(served, "sim") as host:
        offline = host.run(bench(*small, dataset="random"), timeout=60)
        assert offline.exit_code == 1, offline.stdout[-2000:]
        assert (
            "huggingface_hub.errors.LocalEntryNotFoundError: An error happened while trying to locate the file on "
            "the Hub and we cannot find the requested files in the local cache."
        ) in offline.stderr
        # With a readable ShareGPT copy (--dataset-path), `random` runs.
        copy = f"{served.layout.home}/sharegpt.json"
        host.write_file(
            copy, json.dumps([{"conversations": [{"value": "hi"}, {"value": "hello"}]}]).encode(), mode=0o644
        )
        out = f"{served.layout.home}/bench/with-path.jsonl"
        host.run(["mkdir", "-p", f"{served.layout.home}/bench"], timeout=30).check()
        local = host.run(bench(*small, "--dataset-path", copy, "--output-file", out, dataset="random"), timeout=60)
        assert local.exit_code == 0, local.stdout[-2000:] + local.stderr[-2000:]
        assert json.loads(host.read_file(out).decode().splitlines()[-1])["dataset_name"] == "random"


def test_nothing_listening_fails_as_sglang_does(served):
    with reach(served, "sim") as host:
        done = host.run(bench("--num-prompts", "2", port="30999"), timeout=60)
    assert done.exit_code == 1 and "Failed to fetch model from http://127.0.0.1:30999/v1/models" in done.stdout


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_tool_runs_it_on_every_backend(served, backend):
    with reach(served, backend) as host:
        result = run_benchmark(
            ToolContext.for_host(host),
            BenchmarkArgs(levels=[1, 3], input_len=32, output_len=24, rounds=1, client="bench_serving", timeout_s=120),
        )
    assert result.client == "bench_serving" and result.host == host.spec and result.server_version == VERSION
    assert result.api.startswith(RELEASE.bench_serving.module) and "random-ids" in result.prompts
    assert [lv.requests_completed for lv in result.levels] == [1, 3] and not any(
        lv.requests_failed for lv in result.levels
    )
    # p90 / p95 kept where the release reports them (0.5.23: every latency; before: p90 of E2E, p95 of ITL).
    has = set(FIELDS)
    for level in result.levels:
        assert (level.ttft.p90_ms is not None) == ("p90_ttft_ms" in has)
        assert (level.ttft.p95_ms is not None) == ("p95_ttft_ms" in has)
        assert level.e2e.p90_ms is not None and level.itl_per_token.p95_ms is not None
    assert [lv.total_output_tokens for lv in result.levels] == [24, 72]
    assert "faster than the host it models" not in result.method


@pytest.mark.slow
@pytest.mark.serial
def test_the_tool_through_bench_serving_agrees_with_our_own_client(served):
    levels = [1, 16, 64]
    with reach(served, "sim") as host:
        ctx = ToolContext.for_host(host)
        ours = run_benchmark(ctx, BenchmarkArgs(levels=levels, input_len=128, output_len=256, rounds=1))
        theirs = run_benchmark(
            ctx, BenchmarkArgs(levels=levels, input_len=128, output_len=256, rounds=1, client="bench_serving")
        )
    assert theirs.api == f"{RELEASE.bench_serving.module} --backend sglang" and theirs.best_at_concurrency == 64
    for mine, sglang in zip(ours.levels, theirs.levels, strict=True):
        c = mine.concurrency
        assert sglang.concurrency == c and sglang.requests_completed == c == mine.requests_completed
        assert sglang.total_output_tokens == mine.total_output_tokens == 256 * c
        assert sglang.total_input_tokens == mine.total_input_tokens == 128 * c
        # Both in the host's seconds (both read the clock the host's python gives them): the same overall figure (tokens / first dispatch .. last response).
        assert sglang.output_tok_s == pytest.approx(mine.output_tok_s_overall, rel=0.05), f"C={c}"
        assert sglang.tpot.p50_ms == pytest.approx(mine.tpot.p50_ms, rel=0.05), f"C={c}"
        assert sglang.e2e.p50_ms == pytest.approx(mine.e2e.p50_ms, rel=0.05), f"C={c}"
        assert sglang.achieved_concurrency == pytest.approx(mine.achieved_concurrency, rel=0.05), f"C={c}"


def test_only_a_host_whose_profile_installs_sglang_has_bench_serving(served):
    with reach(served, "sim") as host:
        assert find_bench_serving(ToolContext.for_host(host))[0] == RELEASE.bench_serving.module
    seed = load_profile("seed-ct200")
    bare = seed.model_copy(update={"software": seed.software.model_copy(update={"sglang": None})})
    with start_world(bare, time_scale=TIME_SCALE) as world, reach(world, "sim") as host:
        assert not host.run(["python3", "-c", "import sglang"], timeout=60).ok
        with pytest.raises(BenchServingUnavailable, match="has no SGLang serving benchmark"):
            run_benchmark(ToolContext.for_host(host), BenchmarkArgs(levels=[1], client="bench_serving"))


def test_the_old_module_is_a_warning_shim_where_the_release_moved_it(served):
    with reach(served, "sim") as host:
        done = host.run(["python3", "-m", "sglang.bench_serving", "--help"], timeout=60)
    moved = RELEASE.bench_serving.module != "sglang.bench_serving"
    assert done.exit_code == 0 and "usage: " in done.stdout
    assert ("FutureWarning: `sglang.bench_serving` is deprecated" in done.stderr) == moved
