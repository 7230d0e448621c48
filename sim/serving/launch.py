"""`python -m sglang.launch_server` on a sim host: check, load, serve, as SGLang does.

The host's stub `sglang/launch_server.py` calls `main(sys.argv[1:], root)`. It
parses the arguments as the host's SGLang version would, picks the profile's serving
spec of the model it loads (targets.py), applies the speculative rules (DFLASH, the
EAGLE family, NGRAM: speculative.py) and the memory rules, takes the virtual port,
loads for that target's load_seconds on the host's clock (world/clock.py) with SGLang's log lines, then
serves over real HTTP on a loopback port recorded in the port registry, until
SIGTERM/SIGINT.

The HTTP port is bound when uvicorn starts, after the model has loaded (neither
0.5.10.post1, 0.5.11 nor 0.5.23 binds it earlier), so a taken port costs a whole
load and then fails with uvicorn's "address already in use". `/health` answers 503
from uvicorn's start until the warm-up request has run, then 200.

Over several nodes (--nnodes, multinode.py) each node loads its share on its own GPUs (world / nnodes of them from
--base-gpu-id); the nodes meet in torch.distributed's rendezvous at --dist-init-addr as the load begins; rank 0
serves the API once every node has loaded, the others only SGLang's health check, and a node that goes away takes
the others down.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import math
import os
import signal
import sys
import traceback
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from aiohttp import web

from ...sglang_releases.facts import LATEST, for_version
from ..fault_names import FaultName
from ..faults import CrashUnderLoad, CudaGraphDrafter, LoadHang, OutOfMemory, ServerCrashAtStart, SlowLoad
from ..profiles.schema import ServingSpec
from ..world import clock as world_clock
from ..world import gpu_registry, hardware, ports
from ..world.clock import WorldClock
from ..world.quiescence import Quiescence
from ..world.state import WorldState
from . import node_faults
from .checkpoint import GIB, Checkpoint, load_checkpoint
from .engine import Engine
from .errors import SGLANG_SRC, LaunchError, scheduler_traceback
from .http_api import ServerState, build_app
from .logs import ServerLog, scheduler_tag
from .memory import (
    MemoryPlan,
    default_chunked_prefill_size,
    default_cuda_graph_max_bs,
    default_mem_fraction_static,
    plan_memory,
)
from .multinode import (
    DEFAULT_DIST_TIMEOUT_S,
    NodePlacement,
    RankLink,
    RankZeroStore,
    check_devices,
    check_placement_args,
    dist_address,
    dummy_health_check_app,
    ib_completion_line,
    node_placement,
    remote_exit_lines,
)
from .pacing import WorldPacer
from .performance import Launch, PerformanceModel, build_performance_model, default_random_seed
from .server_args import ServerArgs, parse_server_args
from .spec_settings import canonical_algorithm
from .speculative import (
    EAGLE_FAMILY,
    SpeculativeSettings,
    check_dflash_args,
    check_dflash_drafter,
    check_eagle_args,
    check_eagle_drafter,
    check_ngram_args,
    mtp_architecture,
    mtp_drafter,
)
from .targets import choose_target

# Fractions of the load time at which each phase begins.
PHASE_DISTRIBUTED = 0.02
PHASE_WEIGHTS = 0.05
PHASE_WEIGHTS_END = 0.80
PHASE_DRAFTER_END = 0.84
PHASE_KV = 0.86
PHASE_GRAPHS_END = 0.97
WARMUP_FRACTION = 0.02
CRASH_COUNTER = "server_crash_at_start.json"
UNDER_LOAD_COUNTER = "crash_under_load.json"
SIMULATOR_LOG = "simulator.log"  # in the world's .sim folder


@dataclass
class PreparedLaunch:
    """What a launch settles before it loads anything."""

    args: ServerArgs
    target: Checkpoint
    drafter: Checkpoint | None  # None: no draft model (NGRAM, or none given)
    spec: SpeculativeSettings | None
    context_length: int
    model: PerformanceModel
    graph_fault: CudaGraphDrafter | None
    foreign: int  # MiB per GPU held by other processes
    plan: MemoryPlan | None  # None: plan_error says why
    plan_error: LaunchError | None  # raised where SGLang meets it, during the load


def _cuda_graph_capture_error() -> LaunchError:
    """DFlash's CUDA-graph capture failing, as SGLang's scheduler reports it."""
    return LaunchError(
        scheduler_traceback(
            [
                (
                    f"{SGLANG_SRC}/srt/speculative/dflash_worker.py",
                    188,
                    "init_cuda_graphs",
                    "self.cuda_graph_runner = DFlashCudaGraphRunner(self)",
                ),
                (f"{SGLANG_SRC}/srt/speculative/dflash_cuda_graph_runner.py", 142, "__init__", "self.capture()"),
                (
                    f"{SGLANG_SRC}/srt/model_executor/cuda_graph_runner.py",
                    523,
                    "capture",
                    ") = self.capture_one_batch_size(bs, forward)",
                ),
            ],
            "Exception: Capture cuda graph failed: CUDA error: operation not permitted when stream is capturing\n"
            "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
            "Possible solutions:\n1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
            "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)\n"
            "3. disable torch compile by not using --enable-torch-compile\n"
            "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)\n"
            "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose",
        )
    )


class Launcher:
    def __init__(self, argv: list[str], root: Path, stream: Any = None) -> None:
        self.argv = argv
        self.world = WorldState.load(root)
        self.layout = self.world.layout
        self.release = for_version(self.world.sglang_version or LATEST)
        # The host's clock: the log's stamps, and the loading schedule (held by this process's wrapper until the
        # load begins: Python starting the simulator is no time of the modelled host's).
        self.clock = WorldClock(self.layout.sim_dir)
        self.log = ServerLog(stream, clock=self.clock.now)
        self.load_began: float | None = None  # the host's time when loading began
        self.pid = os.getpid()
        self.port_taken = False
        self.gpu_registered = False
        self.elapsed = 0.0  # load fraction reached
        self.stop_event: asyncio.Event | None = None
        self.runner: web.AppRunner | None = None
        self.serving: ServingSpec = self.world.profile.serving  # the loaded model's, once _prepare knows it
        self.placement = NodePlacement(nnodes=1, node_rank=0, tp=1, pp=1, base_gpu_id=0, gpu_id_step=1)
        self.store: RankZeroStore | None = None  # rank 0 of a server over several nodes
        self.link: RankLink | None = None  # a node of rank >= 1
        self.rank_zero_shutdown = asyncio.Event()  # a node of rank >= 1: rank 0's ShutdownReq came
        self.following = False  # a node of rank >= 1 serving its health check: SIGTERM only warns
        self._watcher: asyncio.Task[None] | None = None  # a node of rank >= 1: its watch on rank 0's link
        self.survives_load = False  # crash_under_load with `times`: this server is one that does not crash

    # ------------------------------------------------------------------ helpers
    @property
    def load_seconds(self) -> float:
        """The modelled host's seconds this load takes."""
        slow = self.world.fault(FaultName.SLOW_LOAD)
        factor = slow.factor if isinstance(slow, SlowLoad) else 1.0
        return factor * self.serving.target.load_seconds

    async def _until_fraction(self, fraction: float) -> None:
        """Wait on the host's clock until `fraction` of the load has passed (the clock runs at the load's pace
        meanwhile, and never past that point before this process has got there)."""
        if self.load_began is None:
            self.load_began = self.clock.now()
        target = self.load_began + fraction * self.load_seconds
        await self.clock.sleep_until(target, rate=self.world.load_time_scale)

    async def _advance(self, fraction: float) -> None:
        """Wait until `fraction` of the load time has passed; crash or hang there if a fault says so."""
        hang = self._hang_by(fraction)
        if hang is not None:
            await self._until_fraction(max(hang.at_fraction, self.elapsed))
            self.clock.wait_for(math.inf, rate=self.world.load_time_scale)  # hung: the host's time goes on
            await asyncio.Event().wait()  # alive and silent until stopped
        crash = self._crash_by(fraction, after=self.elapsed)
        if crash is not None:
            await self._until_fraction(crash.after_fraction)
            self.elapsed = crash.after_fraction
            if self._count_crash(crash.times):
                raise LaunchError(
                    scheduler_traceback(
                        [
                            (
                                f"{SGLANG_SRC}/srt/model_executor/model_runner.py",
                                861,
                                "load_model",
                                "self.model = get_model(",
                            ),
                            (
                                f"{SGLANG_SRC}/srt/distributed/parallel_state.py",
                                1411,
                                "all_reduce",
                                "torch.distributed.all_reduce(input_, group=self.device_group)",
                            ),
                        ],
                        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.cpp:77, "
                        "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.27.3\n"
                        "ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\nCuda failure 'an illegal memory access was encountered'",
                    )
                    + f"\n[{self.log.stamp()}] Received sigquit from a child process. It usually means the child failed."
                )
        if fraction > self.elapsed:
            await self._until_fraction(fraction)
            self.elapsed = fraction

    def load_hangs(self) -> bool:
        """Whether this server's load hangs at some point (the load_hang fault), however long it is waited for."""
        return self._hang_by(1.0) is not None

    def _hang_by(self, fraction: float) -> LoadHang | None:
        """The load_hang fault, when it strikes this load by `fraction` of it."""
        hang = self.world.fault(FaultName.LOAD_HANG)
        return hang if isinstance(hang, LoadHang) and hang.at_fraction <= fraction else None

    def _crash_by(self, fraction: float, *, after: float = -math.inf) -> ServerCrashAtStart | None:
        """The server_crash_at_start fault, when it strikes this load past `after` and by `fraction` of it."""
        crash = self.world.fault(FaultName.SERVER_CRASH_AT_START)
        return crash if isinstance(crash, ServerCrashAtStart) and after < crash.after_fraction <= fraction else None

    def _strikes_by(self, fraction: float) -> bool:
        """Whether this server's load hangs or crashes (a fault) by `fraction` of the load."""
        return self._hang_by(fraction) is not None or self._crash_by(fraction) is not None

    def _count_crash(self, times: int, counter: str = CRASH_COUNTER) -> bool:
        """Count this server against the fault's `times` (in `counter`); True if it is one that crashes."""
        path = self.layout.counters_dir / counter
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                crashes = int(json.loads(path.read_text()).get("crashes", 0))
            except (FileNotFoundError, ValueError):
                crashes = 0
            if crashes >= times:
                return False
            path.write_text(json.dumps({"crashes": crashes + 1}))
            return True

    def _register_gpus(self, args: ServerArgs, mib: float) -> None:
        gpu_registry.register(
            self.layout,
            gpu_registry.GpuHolding(
                pid=self.pid,
                process_name="sglang::scheduler",
                gpu_mib={str(i): int(mib) for i in self._node_gpus()},
            ),
        )
        self.gpu_registered = True

    def _node_gpus(self) -> list[int]:
        """The GPUs of this node the launch uses (--base-gpu-id on; a GPU it lacks fails in check_devices)."""
        return [g for g in self.placement.gpu_ids if g < self.world.profile.gpus.count]

    def _foreign_mib(self) -> int:
        registered = max(
            (gpu_registry.foreign_mib(self.layout, g, exclude_pid=self.pid) for g in self._node_gpus()),
            default=0,
        )
        oom = self.world.fault(FaultName.OUT_OF_MEMORY)
        fault = oom.foreign_mib_per_gpu if isinstance(oom, OutOfMemory) else 0
        # The host builder may have registered the fault's foreign process already: take the larger, not the sum.
        return max(registered, fault)

    def _port_in_use_error(self, port: int, host: str) -> LaunchError:
        """uvicorn's answer when it binds, after the load."""
        return LaunchError(
            f"[{self.log.stamp()}] ERROR:    [Errno 98] error while attempting to bind on address "
            f"('{host}', {port}): address already in use"
        )

    def _claim_port(self, args: ServerArgs, real_port: int | None) -> None:
        if ports.read_entry(self.layout, args.port) is not None:
            raise self._port_in_use_error(args.port, args.host)
        ports.write_entry(
            self.layout,
            args.port,
            ports.PortEntry(
                pid=self.pid,
                real_port=real_port,
                owner="sglang",
                command=" ".join(["python3", "-m", "sglang.launch_server", *self.argv]),
            ),
        )
        self.port_taken = True

    def cleanup(self) -> None:
        if self.port_taken:
            ports.remove_entry(self.layout, self._port, self.pid)
            self.port_taken = False
        if self.gpu_registered:
            gpu_registry.unregister(self.layout, self.pid)
            self.gpu_registered = False

    # ------------------------------------------------------------------ the launch
    async def run(self) -> int:
        """Check the arguments, load, then serve until stopped; returns the exit status (0).

        Over several nodes (multinode.py) rank 0 serves once every node has loaded, then broadcasts the shutdown;
        a node of rank >= 1 serves only SGLang's health check until rank 0 ends it."""
        prepared = self.prepare()
        held = await self._load(prepared)
        max_running = self._log_capacity(prepared, held)
        if self.link is not None:
            # From here this node's time is rank 0's: it names no event of its own on the cluster's one clock.
            self.clock.wait_for(math.inf)
            await self.link.report_loaded()
            await self._serve_health_check(prepared.args)
            return 0
        if self.store is not None:
            self.clock.wait_for(math.inf)  # the other nodes' loads run on to their own ends meanwhile
            await self.store.wait_loaded()
        await self._serve(prepared, max_running)
        if self.store is not None:
            await self.store.shutdown()
        return 0

    # ------------------------------------------------------------------ before loading
    def prepare(self) -> PreparedLaunch:
        """Everything settled before the load: arguments, checkpoints, speculative rules, performance and memory
        (logged as SGLang logs its server_args; nothing is loaded). The regret oracle (evals/oracle.py) prepares
        every configuration of a space this way."""
        args = self._parse_args()
        target = self._load_target(args)
        spec, drafter = self._speculative(args, target)
        self._fill_defaults(args, spec)
        context_length = args.context_length or target.context_length
        dump = ", ".join(f"{k}={v!r}" for k, v in args.model_dump().items())
        self.log.server(f"server_args=ServerArgs({dump})")
        for warning in spec.warnings if spec else []:
            self.log.warning(warning)
        model, graph_fault = self._performance_model(args, spec)
        foreign = self._foreign_mib()
        plan, plan_error = self._plan_memory(args, target, drafter, foreign)
        return PreparedLaunch(
            args=args,
            target=target,
            drafter=drafter,
            spec=spec,
            context_length=context_length,
            model=model,
            graph_fault=graph_fault,
            foreign=foreign,
            plan=plan,
            plan_error=plan_error,
        )

    def _parse_args(self) -> ServerArgs:
        """Parse argv as the host's release does, print its deprecation warnings and set the log's tag and level."""
        args = parse_server_args(self.argv, self.release)
        for warning in args.deprecation_warnings:  # argparse's actions print these while parsing
            self.log.warning(warning)
        self._port = args.port
        self.placement = node_placement(args)
        check_placement_args(self.placement)
        pp_rank, tp_rank = self.placement.first_scheduler()
        self.log.scheduler_tag = scheduler_tag(
            args.tp_size,
            args.ep_size,
            args.pp_size,
            args.enable_dp_attention,
            tp_rank=tp_rank,
            pp_rank=pp_rank,
            dp=args.dp_size,
        )
        self.log.set_level(args.log_level)
        return args

    def _load_target(self, args: ServerArgs) -> Checkpoint:
        """The target's checkpoint, and the serving spec of that model (self.serving)."""
        target = load_checkpoint(args.model_path, self.layout, self.world.byte_scale, None)
        choice = choose_target(self.world.profile, args.model_path, target, self.layout)
        self.serving = choice.serving
        if len(self.world.profile.serving_specs) > 1:
            self._note(f"[sim] serving {choice.serving.target.repo_id}: {choice.how}")
        if not target.shard_count:  # no weight files: the profile's figure
            target = replace(target, weight_bytes=int(self.serving.target.weights_gib * GIB))
        return target

    def _note(self, line: str) -> None:
        """The simulator's own notes go to the world's log, never the host's: nothing of it shows through."""
        with open(self.layout.sim_dir / SIMULATOR_LOG, "a", encoding="utf-8") as notes:
            notes.write(f"{' '.join(self.argv)}: {line}\n")

    def _speculative(
        self, args: ServerArgs, target: Checkpoint
    ) -> tuple[SpeculativeSettings | None, Checkpoint | None]:
        """The resolved speculative settings (None without speculation, or for an algorithm the simulator serves
        at the base speed) and the draft checkpoint (None without one)."""
        spec: SpeculativeSettings | None = None
        drafter: Checkpoint | None = None
        algorithm = (
            canonical_algorithm(args.speculative_algorithm, self.release) if args.speculative_algorithm else None
        )
        if algorithm in EAGLE_FAMILY:
            if args.speculative_draft_model_path:  # its config is read first (0.5.23: to resolve the alias)
                drafter = load_checkpoint(args.speculative_draft_model_path, self.layout, self.world.byte_scale, None)
            spec = check_eagle_args(args, target, self.release)
            if spec.mtp:
                drafter = mtp_drafter(target, self.release)
            elif drafter is None:
                # No draft path on a target without MTP: SGLang's draft worker builds its model config from the
                # target's own path, so it loads the whole target again as its draft.
                drafter = target
            elif mtp_architecture(drafter.architecture, self.release) is not None:
                # A draft path to an MTP checkpoint (the target's own, say): its config is mapped to the NextN class
                drafter, spec.mtp = mtp_drafter(drafter, self.release), True
            return spec, drafter
        if algorithm == "NGRAM":
            return check_ngram_args(args, self.release), None
        if args.speculative_algorithm == "DFLASH":
            if args.speculative_draft_model_path:
                try:
                    drafter = load_checkpoint(
                        args.speculative_draft_model_path, self.layout, self.world.byte_scale, None
                    )
                except LaunchError:
                    drafter = None  # fails again, as SGLang would, when the draft model loads
            spec = check_dflash_args(args, drafter, self.release)
        elif args.speculative_algorithm and args.speculative_draft_model_path and args.speculative_algorithm != "NGRAM":
            drafter = load_checkpoint(args.speculative_draft_model_path, self.layout, self.world.byte_scale, None)
        return spec, drafter

    def _fill_defaults(self, args: ServerArgs, spec: SpeculativeSettings | None) -> None:
        """Fill in the server args SGLang derives when they are not given, then apply the speculative rules."""
        gpu_mib = self.world.profile.gpus.memory_mib
        if args.chunked_prefill_size is None:
            args.chunked_prefill_size = default_chunked_prefill_size(gpu_mib)
        if args.cuda_graph_max_bs is None:
            args.cuda_graph_max_bs = default_cuda_graph_max_bs(gpu_mib, args.tp_size)
        if args.mem_fraction_static is None:
            args.mem_fraction_static = default_mem_fraction_static(
                gpu_mib,
                args.tp_size,
                args.pp_size,
                args.dp_size,
                args.enable_dp_attention,
                args.chunked_prefill_size,
                args.cuda_graph_max_bs,
                bool(args.speculative_algorithm),
            )
        if spec is not None:
            args.speculative_algorithm = spec.algorithm
            args.speculative_num_draft_tokens = spec.num_draft_tokens
            if spec.algorithm == "DFLASH":
                args.speculative_dflash_block_size = spec.block_size
            args.speculative_num_steps = spec.num_steps
            args.speculative_eagle_topk = spec.topk
            if spec.draft_model_path is not None:
                args.speculative_draft_model_path = spec.draft_model_path
            args.max_running_requests = spec.max_running_requests
            if args.cuda_graph_max_bs > (args.max_running_requests or args.cuda_graph_max_bs):
                args.cuda_graph_max_bs = args.max_running_requests
        if args.random_seed is None:
            args.random_seed = default_random_seed(spec.algorithm if spec is not None else None)
        if args.served_model_name is None:
            args.served_model_name = args.model_path
        if args.tokenizer_path is None:
            args.tokenizer_path = args.model_path

    def _performance_model(
        self, args: ServerArgs, spec: SpeculativeSettings | None
    ) -> tuple[PerformanceModel, CudaGraphDrafter | None]:
        """The layout's performance model, and the CUDA-graph fault when it applies to this launch."""
        fault_graph = self.world.fault(FaultName.CUDA_GRAPH_DRAFTER)
        graph_fault = (
            fault_graph
            if isinstance(fault_graph, CudaGraphDrafter) and args.speculative_algorithm and args.cuda_graphs
            else None
        )
        launch = Launch(
            tp=args.tp_size,
            ep=args.ep_size,
            pp=args.pp_size,
            dp=args.dp_size,
            dp_attention=args.enable_dp_attention,
            cuda_graphs=args.cuda_graphs,
            nnodes=self.placement.nnodes,
            speculative_algorithm=args.speculative_algorithm,
            speculative_num_steps=spec.num_steps if spec else None,
            speculative_eagle_topk=spec.topk if spec else None,
            speculative_num_draft_tokens=spec.num_draft_tokens if spec else None,
        )
        model = build_performance_model(
            self.serving,
            launch,
            spec.block_size if spec else (args.speculative_num_draft_tokens or 1),
            collapsed=graph_fault is not None and graph_fault.mode == "collapse",
            release=self.release,
            link=self.world.profile.internode,
        )
        # The simulator's own notes (an uncalibrated layout) go to the world's log, never the host's.
        for warning in model.choice.warnings:
            self._note(warning)
        return model, graph_fault

    def _plan_memory(
        self, args: ServerArgs, target: Checkpoint, drafter: Checkpoint | None, foreign: int
    ) -> tuple[MemoryPlan | None, LaunchError | None]:
        """The GPU memory plan, or the error SGLang would meet (raised later, where SGLang meets it)."""
        profile = self.world.profile
        oom = self.world.fault(FaultName.OUT_OF_MEMORY)
        draft_layers = int(drafter.config.get("num_hidden_layers", 0)) if drafter else 0
        kv_per_token = self.serving.target.kv_mib_per_token
        draft_kv = (
            kv_per_token * draft_layers / target.num_hidden_layers if drafter and target.num_hidden_layers else 0.0
        )
        assert args.mem_fraction_static is not None, "_fill_defaults sets it"
        try:
            plan = plan_memory(
                gpu_mib=profile.gpus.memory_mib,
                foreign_mib=foreign,
                mem_fraction_static=args.mem_fraction_static,
                min_mem_fraction_static=oom.min_mem_fraction_static if isinstance(oom, OutOfMemory) else None,
                target_weight_gib=target.weight_gib,
                drafter_weight_gib=drafter.weight_gib if drafter else 0.0,
                gpus=args.gpus,
                tp=args.tp_size,
                pp=args.pp_size,
                cuda_graphs=args.cuda_graphs,
                cuda_graph_mib=self.serving.target.cuda_graph_mib,
                kv_mib_per_token=kv_per_token,
                draft_kv_mib_per_token=draft_kv,
                max_total_tokens=args.max_total_tokens,
            )
        except LaunchError as exc:
            return None, exc
        return plan, None

    # ------------------------------------------------------------------ several nodes
    async def _rendezvous(self, args: ServerArgs) -> None:
        """torch.distributed's rendezvous over the nodes (nothing on one node): rank 0 waits for every node, the
        others join it; from then on a node that goes away takes the others down."""
        if self.placement.nnodes <= 1:
            return
        timeout_s = int(getattr(args, "dist_timeout", None) or DEFAULT_DIST_TIMEOUT_S)
        version = self.world.sglang_version or LATEST
        address = dist_address(args)
        if self.placement.leader:
            self.store = RankZeroStore(
                placement=self.placement,
                address=address,
                version=version,
                timeout_s=timeout_s,
                time_scale=self.world.load_time_scale,
                log=self.log.scheduler,
                warn=lambda line: self.log.warning(line, scheduler=True),
                on_rank_lost=self._node_lost,
            )
            await self.store.open()
            # The cluster's one clock stands until every node has joined: whoever launches the other nodes starts
            # them one after another from this machine, which a real launcher does at once on every node.
            self.clock.hold()
            try:
                await self.store.wait_joined()
            except LaunchError:
                # Not every node came: torch's store waited its whole timeout on the host's clock first.
                await self.clock.sleep_until(self.clock.now() + timeout_s, rate=self.world.load_time_scale)
                raise
            return
        self.link = RankLink(
            placement=self.placement,
            address=address,
            version=version,
            timeout_s=timeout_s,
            time_scale=self.world.load_time_scale,
            stamp=self.log.stamp,
            log=self.log.scheduler,
            fault=node_faults.pending(self.world, self.layout),
        )
        await self.link.join()
        self._watcher = asyncio.get_running_loop().create_task(self._watch_rank_zero(address.host, address.port))

    async def _watch_rank_zero(self, host: str, port: int) -> None:
        assert self.link is not None
        said = await self.link.wait_for_rank_zero()
        if said == "shutdown":
            self.rank_zero_shutdown.set()
        elif said == "lost":
            self._node_lost(0, range(self.placement.ranks_per_node), f"{host}<{port}>")
        else:  # this node's fault strikes now
            self._strike(said, f"{host}<{port}>")

    def _strike(self, name: str, rank_zero: str) -> None:
        """This node's fault `name` strikes: acted out (node_faults.py), then the node's server dies with it."""
        node_faults.strike(
            name,
            world=self.world,
            layout=self.layout,
            log=self.log,
            placement=self.placement,
            rank_zero=rank_zero,
            pid=self.pid,
        )
        self.cleanup()
        os.killpg(os.getpgid(0), signal.SIGKILL)

    def _maybe_strike_own_node(self, running: int) -> None:
        """Rank 0's own node carries a node fault (`NAME:node=0`) that strikes at this load. A partition is the
        link's failing, so the other nodes are told to strike it too: each side then names the other
        (node_faults.py); anything else, this node acts it out and dies, and the others find rank 0 gone."""
        own = node_faults.pending(self.world, self.layout)
        if own is None or running < own[1] or self.store is None:
            return
        name = own[0]
        if name == FaultName.NETWORK_PARTITION:
            hardware.mark_fired(self.layout, name)
            self.store.partition_all()
            return
        self._strike(name, f"{self.store.address.host}<{self.store.address.port}>")

    def _node_lost(self, node_rank: int, ranks: range, peer: str, fault: str | None = None) -> None:
        """Another node's process went away: NCCL's remote error in the watchdog, and this server dies with it. A
        link that failed (`fault` network_partition) is NCCL's InfiniBand completion error instead of a socket
        closed by the peer."""
        last_error = None
        if fault == FaultName.NETWORK_PARTITION:
            last_error = ib_completion_line(peer, peer.split("<")[0], node_rank, ranks)
        own = self.placement.ranks.start
        self.log.raw(remote_exit_lines(own, node_rank, ranks, peer, self.log.stamp(), last_error=last_error))
        self.log.server("Received sigquit from a child process. It usually means the child failed.")
        self.cleanup()
        os.kill(os.getpid(), signal.SIGKILL)

    async def _serve_health_check(self, args: ServerArgs) -> None:
        """A node of rank >= 1: SGLang's dummy health check server on its own --port, until rank 0's shutdown."""
        self.following = True
        if ports.read_entry(self.layout, args.port) is not None:  # SGLang logs it and blocks on all the same
            self.log.server(
                f"Dummy health check server failed to start: [Errno 98] error while attempting to bind on address "
                f"('{args.host}', {args.port}): address already in use"
            )
        else:
            sock = ports.bind_loopback()
            self._claim_port(args, sock.getsockname()[1])
            runner = web.AppRunner(dummy_health_check_app(), access_log=None, handle_signals=False)
            await runner.setup()
            await web.SockSite(runner, sock).start()
            self.log.server(f"Dummy health check server started in background thread at {args.host}:{args.port}")
        await self.rank_zero_shutdown.wait()
        for i in range(self.placement.ranks_per_node):  # each scheduler exits on the ShutdownReq
            self.log.server(f"Scheduler or DataParallelController {self.pid + 1 + i} terminated with 0")

    def defers_sigterm(self) -> bool:
        """SIGTERM on a node of rank >= 1 that serves: only a warning, rank 0's shutdown stops it."""
        if not self.following:
            return False
        self.log.warning(
            f"SIGTERM received on node_rank {self.placement.node_rank}; waiting for the rank-0 ShutdownReq "
            "broadcast to stop the schedulers."
        )
        return True

    # ------------------------------------------------------------------ loading
    async def _load(self, p: PreparedLaunch) -> float:
        """Load as SGLang does, phase by phase with its log lines; returns the MiB held per GPU at the end."""
        # A node of rank >= 1 names no time on the cluster's clock before rank 0 has it in, unless its own fault
        # strikes before the rendezvous (it never joins).
        joining = self.placement.nnodes > 1 and not self.placement.leader and not self._strikes_by(PHASE_DISTRIBUTED)
        if joining:
            self.clock.wait_for(math.inf)  # its start-up hold would keep rank 0 from reaching the rendezvous
        else:
            await self._advance(PHASE_DISTRIBUTED)
        self.log.scheduler("Init torch distributed begin.")
        check_devices(self.placement, self.world.profile.gpus.count, hardware.lost_gpus(self.layout))
        await self._rendezvous(p.args)
        if joining:
            await self._advance(PHASE_DISTRIBUTED)
        self._register_gpus(p.args, 512)
        self.log.scheduler("Init torch distributed ends. mem usage=0.50 GB")
        await self._advance(PHASE_WEIGHTS)
        weights_mib = p.target.weight_gib * 1024 / p.args.gpus
        free_gib = (self.world.profile.gpus.memory_mib - p.foreign - 512) / 1024
        self.log.scheduler(f"Load weight begin. avail mem={free_gib:.2f} GB")
        await self._load_shards(p, weights_mib)
        self._register_gpus(p.args, 512 + weights_mib)
        self.log.scheduler(
            f"Load weight end. type={p.target.architecture}, dtype=torch.bfloat16, "
            f"avail mem={free_gib - weights_mib / 1024:.2f} GB, mem usage={weights_mib / 1024:.2f} GB."
        )
        await self._load_drafter(p, weights_mib, free_gib)
        await self._advance(PHASE_KV)
        if p.plan_error is not None:
            raise p.plan_error
        assert p.plan is not None
        plan = p.plan
        self.log.scheduler(
            f"KV Cache is allocated. #tokens: {plan.max_total_tokens}, KV size: {plan.kv_mib / 1024:.2f} GB"
        )
        if p.drafter is not None and p.spec is not None and p.spec.algorithm != "DFLASH":
            # The EAGLE worker binds the target's embedding and LM head into its draft as it allocates the draft's
            # pools, then captures the draft's graphs: where a draft of the wrong kind or width fails.
            check_eagle_drafter(p.spec, p.drafter, p.target, self.release)
        held = plan.weights_mib + plan.drafter_mib + plan.kv_mib + 512
        self._register_gpus(p.args, held)
        self.log.scheduler(f"Memory pool end. avail mem={plan.avail_gib(held):.2f} GB")
        if p.args.cuda_graphs:
            return await self._capture_cuda_graphs(p, plan, held)
        await self._advance(PHASE_GRAPHS_END)
        return held

    async def _load_shards(self, p: PreparedLaunch, weights_mib: float) -> None:
        """The checkpoint shards' progress bar; out of memory part-way when the plan says it does not fit."""
        gpu_mib = self.world.profile.gpus.memory_mib
        oom_at = None
        if p.plan_error is not None and "CUDA out of memory" in p.plan_error.text and not self._draft_ooms(p):
            oom_at = PHASE_WEIGHTS + (PHASE_WEIGHTS_END - PHASE_WEIGHTS) * max(
                min((gpu_mib - p.foreign) / max(weights_mib, 1), 0.99), 0.05
            )
        shards = max(p.target.shard_count, 1)
        for i in range(1, shards + 1):
            step = max(shards // 10, 1)
            if i % step and i != shards:
                continue
            frac = PHASE_WEIGHTS + (PHASE_WEIGHTS_END - PHASE_WEIGHTS) * i / shards
            if oom_at is not None and frac >= oom_at:
                await self._advance(oom_at)
                assert p.plan_error is not None, "oom_at is set only for a plan error"
                raise p.plan_error
            await self._advance(frac)
            elapsed = self.elapsed * self.load_seconds
            rate = i / max(elapsed, 1e-6)
            self.log.raw(
                f"Loading safetensors checkpoint shards: {100 * i // shards:3d}% Completed | {i}/{shards} "
                f"[{int(elapsed // 60):02d}:{int(elapsed % 60):02d}<{int((shards - i) / rate // 60):02d}:"
                f"{int((shards - i) / rate % 60):02d}, {rate:5.2f}it/s]"
            )

    def _draft_ooms(self, p: PreparedLaunch) -> bool:
        """The plan's CUDA OOM comes from the draft model: the target's weights alone fit."""
        if p.plan_error is None or "CUDA out of memory" not in p.plan_error.text or p.drafter is None:
            return False
        weights_mib = p.target.weight_gib * 1024 / p.args.gpus
        return weights_mib <= self.world.profile.gpus.memory_mib - p.foreign

    async def _load_drafter(self, p: PreparedLaunch, weights_mib: float, free_gib: float) -> None:
        """The draft model's load (checked against the target here, as SGLang's workers do); nothing without one."""
        if p.drafter is not None:
            await self._advance(PHASE_DRAFTER_END)
            if self._draft_ooms(p):
                assert p.plan_error is not None
                raise p.plan_error
            if p.spec is not None and p.spec.algorithm == "DFLASH":
                check_dflash_drafter(p.drafter, p.target, self.release)
            draft_mib = p.drafter.weight_gib * 1024 / p.args.tp_size
            self.log.scheduler(
                f"Load weight end. type={p.drafter.architecture}, dtype=torch.bfloat16, "
                f"avail mem={free_gib - (weights_mib + draft_mib) / 1024:.2f} GB, mem usage={draft_mib / 1024:.2f} GB."
            )
        elif p.spec is not None and p.spec.algorithm == "DFLASH":
            await self._advance(PHASE_DRAFTER_END)
            load_checkpoint(p.args.speculative_draft_model_path or "", self.layout, self.world.byte_scale, None)

    async def _capture_cuda_graphs(self, p: PreparedLaunch, plan: MemoryPlan, held: float) -> float:
        """Capture the CUDA graphs (or crash there, with the fault); returns the MiB held per GPU after."""
        args = p.args
        self.log.scheduler(
            f"Capture cuda graph begin. This can take up to several minutes. avail mem={plan.avail_gib(held):.2f} GB"
        )
        assert args.cuda_graph_max_bs is not None, "_fill_defaults sets it"
        bs = sorted({1, 2, 4, 8, 12, *range(16, args.cuda_graph_max_bs + 1, 8), args.cuda_graph_max_bs})
        self.log.scheduler(f"Capture cuda graph bs {bs}")
        if p.graph_fault is not None and p.graph_fault.mode == "crash":
            await self._advance((PHASE_KV + PHASE_GRAPHS_END) / 2)
            raise _cuda_graph_capture_error()
        await self._advance(PHASE_GRAPHS_END)
        held += plan.cuda_graph_mib
        self._register_gpus(args, held)
        self.log.scheduler(
            f"Capture cuda graph end. Time elapsed: {(PHASE_GRAPHS_END - PHASE_KV) * self.load_seconds:.2f} s. "
            f"mem usage={plan.cuda_graph_mib / 1024:.2f} GB. avail mem={plan.avail_gib(held):.2f} GB."
        )
        return held

    @staticmethod
    def max_running_requests(p: PreparedLaunch) -> int:
        """The server's max_running_requests: given, or SGLang's default from its KV cache and context length."""
        plan = p.plan
        assert plan is not None, "a launch whose memory plan failed never serves"
        return p.args.max_running_requests or min(
            4096, max(2048, plan.max_total_tokens * 512 // max(p.context_length, 1))
        )

    def _log_capacity(self, p: PreparedLaunch, held: float) -> int:
        """Log the scheduler's capacity line; returns max_running_requests (given, or SGLang's default)."""
        args, plan = p.args, p.plan
        assert plan is not None
        max_running = self.max_running_requests(p)
        self.log.scheduler(
            f"max_total_num_tokens={plan.max_total_tokens}, chunked_prefill_size={args.chunked_prefill_size}, "
            f"max_prefill_tokens=16384, max_running_requests={max_running}, context_len={p.context_length}, "
            f"available_gpu_mem={plan.avail_gib(held):.2f} GB"
        )
        return max_running

    # ------------------------------------------------------------------ serving
    async def _serve(self, p: PreparedLaunch, max_running: int) -> None:
        """Bind the HTTP port (uvicorn does it only now), serve until stopped, then shut down."""
        args = p.args
        if ports.read_entry(self.layout, args.port) is not None:
            raise self._port_in_use_error(args.port, args.host)
        sock = ports.bind_loopback()
        self._claim_port(args, sock.getsockname()[1])
        engine = self._engine(p, max_running)
        state = self._server_state(p, engine, max_running)
        engine.start()
        self.runner = web.AppRunner(build_app(state), access_log=None, handle_signals=False)
        await self.runner.setup()
        await web.SockSite(self.runner, sock).start()
        self.log.uvicorn(f"Started server process [{self.pid}]")
        self.log.uvicorn("Waiting for application startup.")
        self.log.uvicorn("Application startup complete.")
        self.log.uvicorn(f"Uvicorn running on http://{args.host}:{args.port} (Press CTRL+C to quit)")
        if not args.skip_server_warmup:
            await self._until_fraction(self.elapsed + WARMUP_FRACTION)
            self.log.uvicorn('127.0.0.1:0 - "GET /get_model_info HTTP/1.1" 200 OK')
            state.ready = True
            warm = await self._warmup(state)
            state.ready = False
            self.log.uvicorn(f'127.0.0.1:0 - "POST /generate HTTP/1.1" {warm} OK')
        state.ready = True
        self.log.server("The server is fired up and ready to roll!")
        self.clock.release()  # loaded: the host's clock runs on at the world's pace while this serves
        assert self.stop_event is not None
        await self.stop_event.wait()
        await self.runner.cleanup()
        await engine.stop()

    def _engine(self, p: PreparedLaunch, max_running: int) -> Engine:
        """The scheduler's engine, wired to crash under load when that fault applies to this launch."""
        args = p.args
        assert p.plan is not None
        assert args.cuda_graph_max_bs is not None, "_fill_defaults sets it"
        crash_fault = self.world.fault(FaultName.CRASH_UNDER_LOAD)
        crashes = isinstance(crash_fault, CrashUnderLoad) and (
            args.speculative_algorithm or not crash_fault.speculative_only
        )

        def on_running(n: int) -> None:  # `engine` is bound below, before the engine serves
            if crashes and isinstance(crash_fault, CrashUnderLoad):
                self._maybe_crash(engine, crash_fault, n, args)
            if self.store is not None:  # rank 0 over several nodes: a node fault may strike at this load
                self.store.load_changed(n)
                self._maybe_strike_own_node(n)

        pacer = self._pacer()
        engine = Engine(
            model=p.model,
            max_running_requests=max_running,
            max_total_tokens=p.plan.max_total_tokens,
            cuda_graph_max_bs=args.cuda_graph_max_bs,
            cuda_graphs=args.cuda_graphs,
            decode_log_interval=args.decode_log_interval,
            decode_log=self.log.scheduler,
            prefill_log=self.log.scheduler,
            accept_rate_in_log="accept rate" in "".join(self.release.log_lines.decode_batch),
            on_running=on_running,
            on_failure=self._scheduler_failed,
            pacer=pacer,
            # Off a sim host's clock (a server started outside its `python`), this machine's runs the world's
            # time_scale times faster than the host it models.
            time_scale=1.0 if pacer is not None else self.world.time_scale,
        )
        return engine

    def _pacer(self) -> WorldPacer | None:
        """The engine's steps on the world's clock, which this process reads as its own (host_time.py); None where
        it does not (a server started outside a sim host's `python`: this machine's clock)."""
        if world_clock.process_world is None:
            return None
        quiescence = Quiescence(self.clock.dir, self.layout.ports_dir)
        return WorldPacer(self.clock, world_clock.process_boot, quiescence)

    def _scheduler_failed(self, error: BaseException) -> None:
        """A bug in the simulated scheduler: SGLang's words for a scheduler exception, then the server dies (as
        SGLang's does), so that no client waits on requests nothing will serve."""
        trace = "".join(traceback.format_exception(error)).rstrip()
        self.log.scheduler(f"Scheduler hit an exception: {trace}")
        self.log.server("Received sigquit from a child process. It usually means the child failed.")
        self.cleanup()
        os.kill(os.getpid(), signal.SIGKILL)

    def _server_state(self, p: PreparedLaunch, engine: Engine, max_running: int) -> ServerState:
        """What the HTTP routes answer from: the served model, the server args as launched, memory figures."""
        args, plan, target = p.args, p.plan, p.target
        assert plan is not None
        # _fill_defaults sets these three
        assert args.served_model_name is not None and args.tokenizer_path is not None and args.random_seed is not None
        server_args = args.model_dump()
        server_args.update(max_running_requests=max_running, context_length=p.context_length)
        return ServerState(
            engine=engine,
            served_model_name=args.served_model_name,
            model_path=args.model_path,
            tokenizer_path=args.tokenizer_path,
            model_type=target.model_type,
            architectures=list(target.config.get("architectures") or []),
            context_length=p.context_length,
            version=self.world.sglang_version or "",
            server_args=server_args,
            speculative_algorithm=args.speculative_algorithm,
            random_seed=args.random_seed,
            dp_size=args.dp_size if args.enable_dp_attention else 1,
            enable_metrics=args.enable_metrics,
            release=self.release,
            api_key=args.api_key,
            incremental_streaming_output=args.incremental_streaming_output,
            extra_info={
                "derived": {"max_total_num_tokens": plan.max_total_tokens},
                "memory_usage": {
                    "weight": round(plan.weights_mib / 1024, 2),
                    "kvcache": round(plan.kv_mib / 1024, 2),
                    "graph": round(plan.cuda_graph_mib / 1024, 2),
                    "token_capacity": plan.max_total_tokens,
                },
            },
            access_log=self.log.uvicorn,
        )

    async def _warmup(self, state: ServerState) -> int:
        """SGLang's warm-up request, run through the API as a client's would be; returns its status."""
        from .http_api import Api

        await Api(state).run_internal(
            "The capital city of France is", 7, {"max_new_tokens": 8, "temperature": 0, "ignore_eos": True}
        )
        return 200

    def _maybe_crash(self, engine: Engine, fault: CrashUnderLoad, running: int, args: ServerArgs) -> None:
        if running < fault.at_running or engine.stalled or self.survives_load:
            return
        if fault.times is not None and not self._count_crash(fault.times, UNDER_LOAD_COUNTER):
            self.survives_load = True  # a server after the fault's `times`: the crash was transient
            return
        engine.stalled = True
        asyncio.get_running_loop().create_task(self._crash(args))

    async def _crash(self, args: ServerArgs) -> None:
        """The batch hangs in an all-reduce; the NCCL watchdog fires and the server dies."""
        # Hung: nothing is served while the watchdog counts, so the host's time goes on at the pace of waiting
        # (as a hung load's does), on the host's clock like every other modelled wait.
        hang_s = min(args.watchdog_timeout, 300)
        await self.clock.sleep_until(self.clock.now() + hang_s, rate=self.world.load_time_scale)
        stamp = self.log.stamp().replace("-", "").replace(" ", " ")
        self.log.raw(
            f"[rank3]:[E{stamp[4:8]} {stamp[9:]}.000000 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=1282411, OpType=ALLREDUCE, NumelIn=14680064, NumelOut=14680064, "
            "Timeout(ms)=600000) ran for 600043 milliseconds before timing out.\n"
            f"[rank3]:[E{stamp[4:8]} {stamp[9:]}.000000 ProcessGroupNCCL.cpp:2271] [PG ID 2 PG GUID 3 Rank 3]  failure "
            "detected by watchdog at work sequence id: 1282411 PG status: last enqueued work: 1282411, last completed work: 1282410\n"
            "terminate called after throwing an instance of 'c10::DistBackendError'\n"
            "  what():  [PG ID 2 PG GUID 3 Rank 3] Process group watchdog thread terminated with exception: [Rank 3] "
            "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1282411, OpType=ALLREDUCE) ran for 600043 "
            "milliseconds before timing out."
        )
        self.log.server("Received sigquit from a child process. It usually means the child failed.")
        self.cleanup()
        os.kill(os.getpid(), signal.SIGKILL)


def main(argv: list[str], root: Path) -> int:
    """Entry point of the host's `python -m sglang.launch_server`; returns the exit status."""
    launcher = Launcher(argv, Path(root))

    async def _main() -> int:
        loop = asyncio.get_running_loop()
        stop_event = launcher.stop_event = asyncio.Event()
        stopped: list[int] = []

        def _stop(signum: int) -> None:
            if signum == signal.SIGTERM and launcher.defers_sigterm():
                return
            stopped.append(signum)
            stop_event.set()

        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, _stop, signum)
        task = asyncio.ensure_future(launcher.run())
        stop_wait = asyncio.ensure_future(stop_event.wait())
        done, _ = await asyncio.wait({task, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            stop_wait.cancel()
            return task.result()
        if launcher.runner is None:  # stopped while loading: the process just dies
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, LaunchError):
                pass
            return 128 + stopped[0]
        return await task  # serving: run() shuts the HTTP server down and returns

    try:
        return asyncio.run(_main())
    except LaunchError as exc:
        if exc.exit_code == 0:
            sys.stdout.write(exc.text)
            return 0
        sys.stderr.write(exc.text if exc.text.endswith("\n") else exc.text + "\n")
        sys.stderr.flush()
        return exc.exit_code
    finally:
        launcher.cleanup()
