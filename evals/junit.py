"""JUnit XML for CI systems: one testsuite per eval, one testcase per scenario run and grader."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from .results import EvalReport


def junit_xml(report: EvalReport) -> str:
    cases = [(r, name, verdict) for r in report.results for name, verdict in r.graders.items()]
    failures = sum(not v.passed for _, _, v in cases)
    suite = ET.Element(
        "testsuite",
        name="specops-eval",
        tests=str(len(cases)),
        failures=str(failures),
        errors="0",
        time=f"{report.wall_s:.2f}",
    )
    for result, name, verdict in cases:
        case = ET.SubElement(
            suite, "testcase", classname=f"specops.eval.{result.run}", name=name, time=f"{result.duration_s:.2f}"
        )
        if not verdict.passed:
            failure = ET.SubElement(case, "failure", message=verdict.reason[:500], type=name)
            failure.text = f"{verdict.reason}\n\nscenario: {result.scenario} ({result.why})\nrun: {result.run_dir}"
        else:
            ET.SubElement(case, "system-out").text = verdict.reason
    suites = ET.Element("testsuites", tests=str(len(cases)), failures=str(failures))
    suites.append(suite)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(report: EvalReport, path: Path) -> Path:
    path.write_text(junit_xml(report), encoding="utf-8")
    return path
