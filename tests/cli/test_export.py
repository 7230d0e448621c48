"""`specops export RUN`: the deployment a real run recommends, as the very commands its launches ran.

One quick playbook run on a simulated seed-ct200 host (a fake HF_TOKEN in its environment) is exported; the
commands are compared with the argv the transcript's launch of that configuration recorded. A run that cannot do its
goal (nothing launched), a run cut off before its report and a path that is no run are refused in one line,
changing nothing. A deployment over two nodes behind a gateway is rendered from the model directly.
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from specops.agent.report import Report
from specops.agent.report.deployment import Deployment, GatewayLaunch, NodeLaunch, render_shell
from specops.agent.report.export import export_deployment
from specops.agent.report.naming import ConfigNames
from specops.agent.run import RunOptions, run_goal
from specops.cli.main import app
from specops.sglang_releases.facts import for_version
from specops.tools.gateway.command import router_argv
from specops.tools.gateway.models import GatewayArgs, GatewayWorkerState, RunningGateway
from specops.tools.sglang.command import launch_argv
from specops.tools.sglang.config import ServerConfig
from specops.tools.sglang.handle import RankProcess
from specops.tools.sglang.multinode import node_flags

from ..agent.test_report_scenario import Transcript, running, server_config
from ..jobs import job_timeout

pytestmark = [job_timeout(), pytest.mark.slow]  # the module's playbook run, a whole job: only a hang fails

QUICK = "playbook:levels=1;ar_layouts=1;spec_layouts=1;acceptance_prompts=4"
GOAL = "deploy and benchmark SubSir/Kimi-K2.6-DFlash-tmp-long"
FAKE_TOKEN = "hf_exportTestFakeToken0123456789abcdef"


def _export(*args: str, env: dict[str, str] | None = None):  # noqa: ANN202 - click's Result
    return CliRunner().invoke(app, ["export", *args], env=env, catch_exceptions=False)


def _assert_one_line_refusal(result, words: str) -> None:
    assert result.exit_code != 0, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], result.stderr
    assert result.stdout == ""


def _snapshot(run_dir: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(run_dir)): (p.stat().st_size, p.stat().st_mtime_ns) for p in run_dir.rglob("*")}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    """One finished playbook run, the Hub token set in its environment."""
    runs = tmp_path_factory.mktemp("runs")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HF_TOKEN", FAKE_TOKEN)
        outcome = run_goal(GOAL, host="sim:seed-ct200", policy=QUICK, options=RunOptions(runs_dir=runs, fsync=False))
    assert outcome.status == "completed", outcome.reason
    return outcome.run_dir


def _report(run_dir: Path) -> Report:
    return Report.model_validate_json((run_dir / "report.json").read_text(encoding="utf-8"))


def _launched_argv(run_dir: Path) -> dict[str, list[str]]:
    """The argv each configuration's last successful launch recorded, by the report's name for it."""
    events = [json.loads(line) for line in (run_dir / "transcript.jsonl").read_text().splitlines()]
    results = [e for e in events if e["type"] == "tool_result" and e["tool"] == "launch_server" and e["ok"]]
    names = ConfigNames()
    return {names.name(ServerConfig.model_validate(r["result"]["config"])): r["result"]["argv"] for r in results}


def _commands(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def test_the_recommended_deployment_is_the_command_its_launch_ran(run_dir):
    recommended = _report(run_dir).recommendation.single_config
    assert recommended is not None and "dflash" in recommended  # the seed host's finding: DFlash wins at C=1
    result = _export(str(run_dir), env={"HF_TOKEN": FAKE_TOKEN})
    assert result.exit_code == 0, result.stderr
    comments = [line for line in result.stdout.splitlines() if line.startswith("#")]
    (command,) = _commands(result.stdout)
    assert shlex.split(command) == _launched_argv(run_dir)[recommended]
    assert shlex.join(shlex.split(command)) == command  # valid shell, every word quoted as shlex does
    host = _report(run_dir).host.spec
    assert comments[0].startswith(f"# {recommended} from run {run_dir.name}: recommended for every measured load")
    assert f"# on {host}, node rank 0 of 1" in comments
    assert "# flags for SGLang 0.5.23" in comments


def test_no_secret_is_printed(run_dir):
    assert FAKE_TOKEN not in (run_dir / "transcript.jsonl").read_text()  # the run's own redaction
    for args in ([], ["--json"], ["--config", "tp8"]):
        result = _export(str(run_dir), *args, env={"HF_TOKEN": FAKE_TOKEN})
        assert result.exit_code == 0, result.stderr
        assert FAKE_TOKEN not in result.stdout + result.stderr
        assert "HF_TOKEN" not in result.stdout


def test_json_is_the_deployment_model(run_dir):
    result = _export(str(run_dir), "--json")
    assert result.exit_code == 0, result.stderr
    deployment = Deployment.model_validate_json(result.stdout)
    recommended = _report(run_dir).recommendation.single_config
    assert deployment.config == recommended and deployment.run_id == run_dir.name
    (node,) = deployment.nodes
    assert (node.node_rank, node.nnodes, node.env) == (0, 1, {})
    assert node.argv == _launched_argv(run_dir)[recommended] and deployment.gateway is None
    assert deployment.notes == []  # today's rendering is the launch's, word for word


def test_another_configuration_and_a_run_id(run_dir):
    launched = _launched_argv(run_dir)
    picked = _export(str(run_dir), "--config", "tp8")
    assert picked.exit_code == 0, picked.stderr
    assert [shlex.split(c) for c in _commands(picked.stdout)] == [launched["tp8"]]
    assert "picked with --config" in picked.stdout
    by_id = _export(run_dir.name, "--runs-dir", str(run_dir.parent))
    assert by_id.exit_code == 0, by_id.stderr
    assert by_id.stdout == _export(str(run_dir)).stdout
    at_level = _export(str(run_dir), "--concurrency", "1")
    recommended = _report(run_dir).recommendation.bands[0].config
    assert [shlex.split(c) for c in _commands(at_level.stdout)] == [launched[recommended]]


def test_bad_choices_are_refused_in_one_line(run_dir):
    before = _snapshot(run_dir)
    unknown = _export(str(run_dir), "--config", "tp9+nope")
    _assert_one_line_refusal(unknown, "launched no configuration 'tp9+nope'; it launched: ")
    assert all(name in unknown.stderr for name in _launched_argv(run_dir))
    _assert_one_line_refusal(_export(str(run_dir), "--concurrency", "512"), "--concurrency 512 is not a measured load")
    _assert_one_line_refusal(_export(str(run_dir), "--config", "tp8", "--concurrency", "1"), "give one of them")
    assert _snapshot(run_dir) == before


def test_what_has_nothing_to_export_is_refused_in_one_line(run_dir, tmp_path):
    _assert_one_line_refusal(_export(str(tmp_path / "no-such-run")), "does not exist")
    # Cut off before its report: the transcript alone.
    cut = tmp_path / "cut-off"
    cut.mkdir()
    shutil.copy(run_dir / "transcript.jsonl", cut / "transcript.jsonl")
    before = _snapshot(cut)
    _assert_one_line_refusal(_export(str(cut)), "has no report.json: it never finished")
    assert _snapshot(cut) == before
    # A goal the playbook cannot do: it ends at once, nothing launched.
    outcome = run_goal(
        "fine-tune SubSir/Kimi-K2.6-DFlash-tmp-long on my logs",
        host="sim:seed-ct200",
        policy="playbook",
        options=RunOptions(runs_dir=tmp_path / "runs", fsync=False),
    )
    before = _snapshot(outcome.run_dir)
    _assert_one_line_refusal(_export(str(outcome.run_dir)), "launched no server that came up")
    assert _snapshot(outcome.run_dir) == before


def test_two_nodes_behind_a_gateway_render_one_command_each():
    server = ["python3", "-m", "sglang.launch_server", "--model-path", "/models/Kimi K2.6", "--tp-size", "16"]
    ranks = [
        NodeLaunch(
            host=f"ssh://gpu-{rank}",
            node_rank=rank,
            nnodes=2,
            argv=[*server, "--nnodes", "2", "--node-rank", str(rank), "--dist-init-addr", "gpu-0:50000"],
            env={"NCCL_SOCKET_IFNAME": "eth0"},
        )
        for rank in (0, 1)
    ]
    router = ["python3", "-m", "sglang_router.launch_router", "--port", "30100", "--worker-urls", "http://gpu-0:30000"]
    deployment = Deployment(
        run_id="r1",
        config="tp16+dflash-b8",
        chosen_because="picked with --config",
        sglang_version="0.5.23",
        nodes=ranks,
        gateway=GatewayLaunch(host="ssh://gpu-0", argv=router),
    )
    text = render_shell(deployment)
    comments = [line for line in text.splitlines() if line.startswith("#")]
    commands = _commands(text)
    assert comments[2:] == [
        "# on ssh://gpu-0, node rank 0 of 2",
        "# on ssh://gpu-1, node rank 1 of 2",
        "# gateway (sglang-router) on ssh://gpu-0, in front of 1 replica",
    ]
    assert commands[0] == (
        "env NCCL_SOCKET_IFNAME=eth0 python3 -m sglang.launch_server --model-path '/models/Kimi K2.6' --tp-size 16 "
        "--nnodes 2 --node-rank 0 --dist-init-addr gpu-0:50000"
    )
    assert [shlex.split(c)[2:] for c in commands[:2]] == [node.argv for node in ranks]
    assert shlex.split(commands[2]) == router
    assert Deployment.model_validate_json(deployment.model_dump_json()) == deployment


def test_a_secret_is_never_part_of_a_node_launch():
    with pytest.raises(ValueError, match="HF_TOKEN: a secret is never part of an exported command"):
        NodeLaunch(host="local", argv=["python3"], env={"HF_TOKEN": FAKE_TOKEN})


def test_a_server_over_two_nodes_exports_every_rank_with_its_node_flags(tmp_path):
    """A transcript whose launch spanned two nodes (RunningServer.ranks): one command per rank, each with its node
    flags, as the launch tools render them."""
    config = server_config("tp8+dflash").model_copy(update={"tp": 16})
    flags = frozenset(name for flag in for_version("0.5.10").launch_flags for name in flag.names)
    base = launch_argv(config, python="python3", flags=flags)
    stamp = running(config, pid=100).started_at
    ranks = [
        RankProcess(
            node_rank=rank,
            host=f"ssh://gpu-{rank}",
            pid=100 + rank,
            pgid=100 + rank,
            log_path=f"/logs/rank{rank}.log",
            argv=base + node_flags(2, rank, "gpu-0:50000"),
            started_at=stamp,
        )
        for rank in (0, 1)
    ]
    server = running(config, pid=100).model_copy(update={"argv": ranks[0].argv, "ranks": ranks, "id": "s1"})
    t = Transcript()
    t.start("deploy over two nodes")
    t.result(t.call("launch_server", {"config": config.model_dump(mode="json")}), "launch_server", server, 60.0)
    deployment = export_deployment(tmp_path, t.events, config=ConfigNames([config]).name(config))
    assert [(n.host, n.node_rank, n.nnodes, n.argv) for n in deployment.nodes] == [
        (r.host, r.node_rank, 2, r.argv) for r in ranks
    ]
    assert deployment.gateway is None and deployment.notes == [] and deployment.sglang_version == "0.5.10"
    text = render_shell(deployment)
    assert "# on ssh://gpu-1, node rank 1 of 2" in text and "--node-rank 1 --dist-init-addr gpu-0:50000" in text


def test_replicas_behind_the_gateway_export_each_replica_as_placed_and_the_router(tmp_path):
    """A launch of two replicas (RunningServer.replicas, the gateway in it): each replica's command as it was
    placed (its node, port and GPUs), then the router's with the replicas' URLs."""
    config = server_config("tp8+dflash").model_copy(update={"tp": 4, "replicas": 2})
    flags = frozenset(name for flag in for_version("0.5.10").launch_flags for name in flag.names)
    stamp = running(config, pid=100).started_at
    replicas = []
    for index, (host, gpu) in enumerate([("ssh://gpu-0", 0), ("ssh://gpu-1", 0)]):
        one = config.model_copy(
            update={"replicas": 1, "port": 30002 + index, "host": "0.0.0.0" if index else "127.0.0.1"}
        )
        argv = launch_argv(one, python="python3", flags=flags) + (["--base-gpu-id", str(gpu)] if gpu else [])
        replicas.append(running(one, pid=200 + index).model_copy(update={"host": host, "argv": argv, "port": one.port}))
    urls = ["http://127.0.0.1:30002", "http://gpu-1:30003"]
    router = router_argv(
        python="python3",
        worker_urls=urls,
        port=30000,
        metrics_port=30001,
        policy="cache_aware",
        startup_timeout_s=GatewayArgs.model_fields["ready_timeout_s"].default,
    )
    gateway = RunningGateway(
        id="g1",
        host="ssh://gpu-0",
        pid=300,
        pgid=300,
        started_at=stamp,
        argv=router,
        log_path="/logs/router.log",
        port=30000,
        metrics_port=30001,
        bound_port=30000,
        bound_metrics_port=30001,
        policy="cache_aware",
        version="0.3.2",
        workers=[GatewayWorkerState(url=url, healthy=True, model=None, gpus=4) for url in urls],
        ready_after_s=1.0,
    )
    server = running(config, pid=300).model_copy(
        update={"id": "s1", "argv": router, "replicas": replicas, "gateway": gateway, "host": "ssh://gpu-0"}
    )
    t = Transcript()
    t.start("deploy replicas")
    t.result(t.call("launch_server", {"config": config.model_dump(mode="json")}), "launch_server", server, 60.0)
    deployment = export_deployment(tmp_path, t.events, config=ConfigNames([config]).name(config))
    assert deployment.config == "tp4-r2+dflash"
    assert [(n.host, n.replica, n.argv) for n in deployment.nodes] == [
        (r.host, i, r.argv) for i, r in enumerate(replicas)
    ]
    assert deployment.gateway is not None and deployment.gateway.argv == router and deployment.notes == []
    text = render_shell(deployment)
    assert "# replica 1 on ssh://gpu-1, node rank 0 of 1" in text and "--host 0.0.0.0 --port 30003" in text
    assert "# gateway (sglang-router) on ssh://gpu-0, in front of 2 replicas" in text
    assert "--worker-urls http://127.0.0.1:30002 http://gpu-1:30003" in text
