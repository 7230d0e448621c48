"""`specops show RUN --html out.html`: the run as one self-contained page (no network: inline CSS and JS,
plots from the run directory embedded as base64 PNG).

The page has the run at a glance, the todo timeline (bars drawn by the inline
script from the spans embedded as JSON), every step as a <details> element
that opens on the arguments, the result or the error, and the report: its
headline facts, the final answer, report.md and the plots.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any

from .redaction import Redactor
from .timeline import Entry, Timeline

_PLOTS = ("throughput.png", "latency.png", "acceptance.png")

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1100px;color:#1d2330;padding:0 16px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #dde2ea;padding-bottom:4px}
.meta{color:#5a6475} .status{font-weight:600;padding:2px 8px;border-radius:10px}
.completed{background:#d9f5df;color:#17612a} .failed{background:#fde0e0;color:#8a1c1c} .unfinished,.partial,.budget_exceeded,.cancelled{background:#fff1cc;color:#7a5600}
#todo-timeline .row{display:flex;align-items:center;margin:3px 0} #todo-timeline .label{width:190px;font-size:12px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
#todo-timeline .lane{flex:1;position:relative;height:16px;background:#f3f5f8;border-radius:3px}
#todo-timeline .bar{position:absolute;top:0;height:16px;border-radius:3px;background:#5b8def;min-width:3px}
#todo-timeline .bar.cancelled{background:#b9c0cc} #todo-timeline .bar.pending{background:#e2e6ee}
details{border:1px solid #e3e7ee;border-radius:6px;margin:4px 0;background:#fff} details[open]{background:#fbfcfe}
summary{cursor:pointer;padding:6px 10px;list-style-position:inside} summary .t{color:#8a93a3;font-family:monospace;margin-right:8px}
summary .ok{color:#17612a} summary .err{color:#a32020;font-weight:600} summary .rec{color:#17612a;font-weight:600}
.kind-plan summary{color:#6b3fa0} .kind-note summary{color:#6a7383} .kind-retry summary{color:#8a6100} .kind-error summary{color:#a32020}
pre{margin:0;padding:8px 12px;overflow:auto;max-height:420px;font-size:12px;background:#f6f8fa;border-top:1px solid #e3e7ee;white-space:pre-wrap;word-break:break-word}
dl.facts dt{font-weight:600;margin-top:6px} dl.facts dd{margin:2px 0 0 0}
img.plot{max-width:100%;border:1px solid #e3e7ee;border-radius:6px;margin:8px 0}
button{font:inherit;padding:3px 10px;margin-right:6px}
"""

_JS = """
(function(){
  var spans = JSON.parse(document.getElementById('todo-data').textContent);
  var total = Math.max(spans.total_s, 0.001), box = document.getElementById('todo-timeline');
  spans.todos.forEach(function(t){
    var row = document.createElement('div'); row.className = 'row'; row.dataset.todo = t.id;
    var label = document.createElement('div'); label.className = 'label'; label.textContent = t.id + ' — ' + t.content; label.title = t.content;
    var lane = document.createElement('div'); lane.className = 'lane';
    var bar = document.createElement('div'); bar.className = 'bar ' + t.status;
    var start = t.start_s === null ? (t.end_s === null ? 0 : t.end_s) : t.start_s;
    var end = t.end_s === null ? (t.status === 'in_progress' ? total : start) : t.end_s;
    bar.style.left = (100 * start / total) + '%'; bar.style.width = Math.max(0.4, 100 * (end - start) / total) + '%';
    bar.title = t.id + ': ' + t.status + (t.end_s !== null && t.start_s !== null ? ' (' + (t.end_s - t.start_s).toFixed(1) + ' s)' : '');
    lane.appendChild(bar); row.appendChild(label); row.appendChild(lane); box.appendChild(row);
  });
  box.dataset.rendered = String(spans.todos.length);
  document.getElementById('expand').onclick = function(){ document.querySelectorAll('#steps details').forEach(function(d){ d.open = true; }); };
  document.getElementById('collapse').onclick = function(){ document.querySelectorAll('#steps details').forEach(function(d){ d.open = false; }); };
  window.addEventListener('load', function(){
    var imgs = Array.prototype.slice.call(document.querySelectorAll('img.plot'));
    document.body.dataset.plotsShown = String(imgs.filter(function(i){ return i.complete && i.naturalWidth > 0; }).length);
  });
})();
"""


def render_html(timeline: Timeline, run_dir: Path | None, *, redactor: Redactor | None = None) -> str:
    """The page; with `redactor`, everything it shows from the run (the timeline and report.md) is redacted first."""
    e = html.escape
    if redactor is not None:
        timeline = Timeline.model_validate(redactor.redact(timeline.model_dump(mode="json")))
    status = timeline.status or "unfinished"
    todo_data = {"total_s": timeline.duration_s, "todos": [s.model_dump(mode="json") for s in timeline.todos]}
    steps = "\n".join(_step(entry) for entry in timeline.entries)
    report_md = (
        (run_dir / "report.md").read_text(encoding="utf-8") if run_dir and (run_dir / "report.md").exists() else None
    )
    if report_md is not None and redactor is not None:
        report_md = redactor.redact_text(report_md)
    plots = [
        (name, base64.b64encode((run_dir / name).read_bytes()).decode())
        for name in _PLOTS
        if run_dir and (run_dir / name).is_file()
    ]
    facts = "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in timeline.headline.items() if k != "summary")
    summary = timeline.headline.get("summary")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>specops run {e(timeline.run_id)}</title>
<style>{_CSS}</style></head>
<body>
<h1>specops run {e(timeline.run_id)} <span class="status {e(status)}" id="run-status">{e(status)}</span></h1>
<div class="meta" id="goal">{e(timeline.goal)}</div>
<div class="meta">policy {e(timeline.policy)} · host {e(timeline.host)} · {timeline.duration_s:.1f} s ·
{timeline.model_turns} model turns · <span id="tool-calls">{timeline.tool_calls}</span> tool calls ·
<span id="failures">{timeline.failures}</span> failed ({timeline.recovered} recovered){f" · resumed {timeline.resumed}x" if timeline.resumed else ""}</div>
{f'<p class="meta">why: {e(timeline.reason)}</p>' if timeline.reason else ""}
<h2>Todo timeline</h2>
<div id="todo-timeline"></div>
<script type="application/json" id="todo-data">{_json_for_script(todo_data)}</script>
<h2>Steps</h2>
<p><button id="expand" type="button">expand all</button><button id="collapse" type="button">collapse all</button></p>
<div id="steps">
{steps}
</div>
<h2>Report</h2>
<div id="report">
<dl class="facts">{facts or "<dd>no report: the run did not finish</dd>"}</dl>
{f'<h3>Final answer</h3><pre id="final-answer">{e(summary)}</pre>' if summary else ""}
{"".join(f'<img class="plot" alt="{e(name)}" src="data:image/png;base64,{data}">' for name, data in plots)}
{f'<details id="report-md"><summary>report.md</summary><pre>{e(report_md)}</pre></details>' if report_md else ""}
</div>
<script>{_JS}</script>
</body></html>
"""


def _step(entry: Entry) -> str:
    e = html.escape
    if entry.kind == "call":
        if entry.ok is None:
            outcome = '<span class="err">cut off</span>'
        elif entry.ok:
            outcome = '<span class="ok">ok</span>'
        else:
            outcome = f'<span class="err">{e(entry.error_kind or "failed")}</span>'
            if entry.recovered:
                outcome += ' <span class="rec">→ recovered</span>'
        took = f" · {entry.duration_s:.1f} s" if entry.duration_s is not None else ""
        head = f"<b>{e(entry.title)}</b> {outcome}{took}"
    else:
        head = e(entry.title if len(entry.title) <= 240 else entry.title[:240] + "…")
    body = _pretty(entry.details) if entry.details else e(entry.title)
    return (
        f'<details class="step kind-{entry.kind}" data-seq="{entry.seq}" data-kind="{entry.kind}">'
        f'<summary><span class="t">{entry.at_s:7.1f}s</span>{head}</summary><pre>{e(body)}</pre></details>'
    )


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _json_for_script(value: Any) -> str:
    """JSON that cannot close its <script> element early."""
    return json.dumps(value, default=str).replace("</", "<\\/")
