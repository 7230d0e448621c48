"""Disk checked before download: each start_download follows a check_disk of that target that said it fits.

With the scenario's `expect.downloads` it also checks that a download happened
(True) or did not (False: a gated repo, nothing safe to free).
"""

from __future__ import annotations

from dataclasses import dataclass

from specops.tools.disk import DiskCheck

from ..evidence import RunEvidence
from ._base import Grader, Verdict


@dataclass
class DiskCheckedBeforeDownload(Grader):
    name = "disk_checked_before_download"

    def grade(self, evidence: RunEvidence) -> Verdict:
        downloads = [i for i, s in enumerate(evidence.steps) if s.tool == "start_download"]
        wanted = evidence.scenario.expect.downloads
        if wanted is True and not any(evidence.steps[i].ok for i in downloads):
            return Verdict.fail("the scenario needs a download and none started")
        if wanted is False and downloads:
            return Verdict.fail(f"{len(downloads)} download(s) started where none should")
        for i in downloads:
            target = evidence.steps[i].call.args.get("target_dir")
            checks = [s for s in evidence.steps[:i] if s.tool == "check_disk" and s.call.args.get("target") == target]
            if not checks:
                return Verdict.fail(f"start_download to {target} without a check_disk of that target before it")
            last = checks[-1].result_as(DiskCheck)
            if last is None or last.verdict != "fits":
                return Verdict.fail(f"start_download to {target} after a check_disk that did not say it fits")
        return Verdict.ok(f"{len(downloads)} download(s), each after a check that it fits")
