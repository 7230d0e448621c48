"""--allow-root: the user lets a run write in another directory (a mount check_disk named); bad values refused."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from specops.agent.host import open_run_host
from specops.cli.run import run as run_command
from specops.tools.context import ToolContext
from specops.tools.errors import PathOutsideAllowedRoots
from specops.tools.hosts import LocalHost

pytestmark = pytest.mark.timeout(120)


def test_an_allowed_root_makes_a_path_under_it_writable(tmp_path):
    context = ToolContext(host=LocalHost(), home=str(tmp_path / "home"), allowed_roots=(str(tmp_path / "home"),))
    with pytest.raises(PathOutsideAllowedRoots, match="--allow-root"):
        context.writable("/dev/shm/models/drafter")
    context.allow(["/dev/shm", "~/extra", "/dev/shm"])
    assert context.writable("/dev/shm/models/drafter") == "/dev/shm/models/drafter"
    assert context.allowed_roots == (str(tmp_path / "home"), "/dev/shm", str(tmp_path / "home" / "extra"))


def test_the_run_records_the_roots_it_was_allowed():
    with open_run_host("sim:seed-ct200") as run_host:
        shm = f"{run_host.context.home.rsplit('/root', 1)[0]}/dev/shm"
        run_host.context.allow([shm])
        assert shm in run_host.describe()["allowed_roots"]


@pytest.mark.parametrize("value", ["dev/shm", "relative", "/data\nrm"])
def test_a_bad_allow_root_is_refused_before_anything_runs(tmp_path, value):
    app = typer.Typer()
    app.command()(run_command)
    result = CliRunner().invoke(app, ["deploy SubSir/Kimi-K2.6-DFlash-tmp-long", "--allow-root", value,
                                      "--runs-dir", str(tmp_path)])  # fmt: skip
    assert result.exit_code == 2 and "absolute path" in result.output
    assert list(tmp_path.iterdir()) == []
