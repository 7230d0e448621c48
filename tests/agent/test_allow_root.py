"""--allow-root: the user lets a run write in another directory (a mount check_disk named); bad values refused."""

from __future__ import annotations

import pytest

from specops.agent.run import RunOptions, run_goal_async
from specops.tools.context import ToolContext
from specops.tools.errors import PathOutsideAllowedRoots
from specops.tools.hosts import LocalHost
from specops.transcripts import read_transcript

from ..jobs import job_timeout
from .scripted import invoke_run

pytestmark = [job_timeout(), pytest.mark.slow]


def test_an_allowed_root_makes_a_path_under_it_writable(tmp_path):
    context = ToolContext(host=LocalHost(), home=str(tmp_path / "home"), allowed_roots=(str(tmp_path / "home"),))
    with pytest.raises(PathOutsideAllowedRoots, match="--allow-root"):
        context.writable("/dev/shm/models/drafter")
    context.allow(["/dev/shm", "~/extra", "/dev/shm"])
    assert context.writable("/dev/shm/models/drafter") == "/dev/shm/models/drafter"
    assert context.allowed_roots == (str(tmp_path / "home"), "/dev/shm", str(tmp_path / "home" / "extra"))


async def test_the_run_may_write_under_an_allowed_root_and_records_it(tmp_path):
    """--allow-root reaches the run's tools: the host_opened event lists it among the roots the run may write in."""
    shm = "/dev/shm/specops-allowed"
    outcome = await run_goal_async(
        "fine-tune SubSir/Kimi-K2.6-DFlash-tmp-long on my logs",
        host="sim:seed-ct200",
        run_dir=tmp_path / "run",
        options=RunOptions(allow_roots=(shm,), fsync=False),
    )
    opened = next(
        e.host for e in read_transcript(outcome.run_dir / "transcript.jsonl").events if e.type == "host_opened"
    )
    roots = opened.allowed_roots
    assert roots[-1] == shm and len(roots) >= 2  # after the home and the data mounts


@pytest.mark.parametrize("value", ["dev/shm", "relative", "/data\nrm"])
def test_a_bad_allow_root_is_refused_before_anything_runs(tmp_path, value):
    result = invoke_run(tmp_path, "deploy SubSir/Kimi-K2.6-DFlash-tmp-long", "--allow-root", value)
    assert result.exit_code == 2 and "absolute path" in result.output
    assert list(tmp_path.iterdir()) == []
