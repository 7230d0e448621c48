"""The report reads what the real tools return: host_facts run against a simulated seed-ct200 host."""

from __future__ import annotations

import pytest

from specops.agent.report import build_report
from specops.tools.context import ToolContext
from specops.tools.facts import HostFactsArgs, host_facts

from ..tools.worlds import reach, start_world
from .test_report_scenario import Transcript


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_host_section_from_real_host_facts_on_the_sim_world():
    with start_world() as world, reach(world, "sim") as host:
        facts = host_facts(ToolContext.for_host(host), HostFactsArgs())
        profile = world.state.profile
    t = Transcript()
    t.start("report the host")
    t.tool("host_facts", {}, facts, 1.0)
    report = build_report(t.events, None, status="completed")
    h = report.host
    assert h.source == "host_facts" and h.spec == facts.host
    assert h.gpu_count == profile.gpus.count and h.gpu_model == profile.gpus.model and h.interconnect == "pcie"
    assert (h.versions.sglang, h.versions.python, h.versions.driver) == (
        profile.software.sglang,
        profile.software.python,
        profile.gpus.driver_version,
    )
    # What the host's python3 imports, as the tool read it (the simulator fakes the CLI, not the library).
    assert h.versions.huggingface_hub == facts.huggingface_hub_version
    assert report.notes == []
