"""Read an SGLang release wheel and write the facts specops depends on, as JSON.

    python -m specops.sglang_releases.extract WHEEL [WHEEL ...] [--out DIR]
    python -m specops.sglang_releases.extract --history WHEEL [WHEEL ...]   # first release of each algorithm

Get a wheel with `pip download --no-deps sglang==X -d DIR` (about 40 MB). The
wheel is opened as a zip and its source parsed; SGLang is never imported (it
needs CUDA torch). The committed files in `data/` are this script's output for
the releases specops models; re-run it to add one.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

from .facts import BenchServing, LaunchFlag, LaunchRule, LogLines, ReleaseFacts, version_tuple
from .flags_from_source import add_argument_calls, from_add_argument, from_record_field, record_fields
from .static_eval import NotStatic, StaticEval, module_constants, record_defaults, template

DATA_DIR = Path(__file__).parent / "data"


class Wheel:
    """The Python sources of one wheel, parsed on demand."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._zip = zipfile.ZipFile(path)
        self._names = set(self._zip.namelist())
        self._trees: dict[str, ast.Module] = {}

    def has(self, name: str) -> bool:
        return name in self._names

    def names_under(self, prefix: str) -> list[str]:
        return sorted(n for n in self._names if n.startswith(prefix) and n.endswith(".py"))

    def text(self, name: str) -> str:
        return self._zip.read(name).decode("utf-8")

    def tree(self, name: str) -> ast.Module:
        if name not in self._trees:
            self._trees[name] = ast.parse(self.text(name), filename=name)
        return self._trees[name]

    @property
    def version(self) -> str:
        match = re.match(r"sglang-([^-]+)-", self.path.name)
        if match is None:
            raise ValueError(f"{self.path.name} is not named like an sglang wheel (sglang-X-...whl)")
        return match.group(1)


SERVER_ARGS = "sglang/srt/server_args.py"
FIELDS_DIR = "sglang/srt/arg_groups/fields/"


# --- launch flags --------------------------------------------------------------------


def launch_flags(wheel: Wheel) -> list[LaunchFlag]:
    tree = wheel.tree(SERVER_ARGS)
    if "add_cli_args_from_dataclass(" in wheel.text(SERVER_ARGS):
        return _record_style_flags(wheel, tree)
    constants = module_constants(tree)
    evaluate = StaticEval(constants, records={"ServerArgs": record_defaults(tree, "ServerArgs", constants)})
    return _dedupe(from_add_argument(call, evaluate) for call in add_argument_calls(tree, within="add_cli_args"))


def _record_style_flags(wheel: Wheel, server_args: ast.Module) -> list[LaunchFlag]:
    constants: dict[str, Any] = {}
    for module in ("sglang/srt/arg_groups/choices.py", *wheel.names_under(FIELDS_DIR), SERVER_ARGS):
        if wheel.has(module):
            module_constants(wheel.tree(module), into=constants)
    evaluate = StaticEval(constants)
    # 0.5.20 on: namespace records in arg_groups/fields; 0.5.14-0.5.19: annotated fields on ServerArgs itself.
    classes = {
        node.name: (module, node)
        for module in [*wheel.names_under(FIELDS_DIR), SERVER_ARGS]
        for node in wheel.tree(module).body
        if isinstance(node, ast.ClassDef)
    }
    flags: list[LaunchFlag | None] = []
    declared: dict[str, Any] = {}
    for class_name in _input_namespaces(server_args):
        module, _ = classes[class_name]
        for field in record_fields(wheel.tree(module), class_name):
            flag = from_record_field(field, evaluate)
            flags.append(flag)
            if isinstance(field.target, ast.Name) and field.value is not None:
                try:
                    declared[field.target.id] = evaluate(field.value)
                except (NotStatic, TypeError):
                    pass
    by_hand = StaticEval(constants, lookups={"_declared_default": declared})
    flags.extend(from_add_argument(call, by_hand) for call in add_argument_calls(server_args, within="add_cli_args"))
    return _dedupe(flags)


def _input_namespaces(server_args: ast.Module) -> list[str]:
    """The records whose annotated fields become flags."""
    for node in server_args.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "_INPUT_NAMESPACES" for t in node.targets):
            if isinstance(node.value, ast.List):
                return [e.id for e in node.value.elts if isinstance(e, ast.Name)]
    return ["ServerArgs"]


def _dedupe(flags: Any) -> list[LaunchFlag]:
    seen: set[str] = set()
    out = []
    for flag in flags:
        if flag is None or flag.names[0] in seen:
            continue
        seen.add(flag.names[0])
        out.append(flag)
    return out


# --- speculative algorithms and DFLASH's rules -----------------------------------------


def speculative_algorithms(wheel: Wheel, flags: list[LaunchFlag]) -> tuple[list[str], dict[str, str], bool]:
    """(names, aliases, whether argparse checks them): --speculative-algorithm's choices where it has them (up to
    0.5.1x), else the SpeculativeAlgorithm enum and the aliases `from_string` maps to EAGLE (0.5.23)."""
    flag = next((f for f in flags if "--speculative-algorithm" in f.names), None)
    if flag is not None and flag.choices:
        return [str(c).upper() for c in flag.choices], {}, True
    tree = wheel.tree("sglang/srt/speculative/spec_info.py")
    names = [
        target.id
        for node in tree.body
        if isinstance(node, ast.ClassDef) and node.name == "SpeculativeAlgorithm"
        for item in node.body
        if isinstance(item, ast.Assign)
        for target in item.targets
        if isinstance(target, ast.Name) and target.id != "NONE"
    ]
    aliases: dict[str, str] = {}
    registry = "sglang/srt/speculative/spec_registry.py"
    if wheel.has(registry):
        reserved = module_constants(wheel.tree(registry)).get("_RESERVED_ALIASES")
        # `from_string` maps every reserved alias to EAGLE.
        source = wheel.text("sglang/srt/speculative/spec_info.py")
        if reserved is None:
            match = re.search(r"_RESERVED_ALIASES\s*=\s*frozenset\(\{([^}]*)\}\)", wheel.text(registry))
            reserved = re.findall(r'"([A-Z0-9_]+)"', match.group(1)) if match else []
        if re.search(r"in _RESERVED_ALIASES:\s*return cls\.EAGLE", source):
            aliases = {alias: "EAGLE" for alias in reserved}
    return names, aliases, False


# specops' name for each DFLASH start-up rule, by words of SGLang's own message.
_RULE_IDS = [
    ("dflash_dp_attention_needs_dp_lm_head", ("dp attention", "--enable-dp-lm-head")),
    ("dflash_dp_attention_context_parallel", ("dp attention", "context parallel")),
    ("dflash_dp_attention_device", ("dp attention", "requires CUDA")),
    ("dflash_dp_attention_prefill_coordination", ("dp attention", "PREFILL_COORDINATION")),
    ("dflash_dp_attention", ("does not support dp attention",)),
    ("dflash_pp", ("pp_size == 1",)),
    ("dflash_draft_model_path", ("--speculative-draft-model-path",)),
    ("dflash_block_size_positive", ("block-size to be positive",)),
    ("dflash_block_size_mismatch", ("they differ",)),
    ("dflash_window_positive", ("window-size", "positive")),
    ("dflash_window_below_block", ("window-size must be >=",)),
    ("dflash_device", ("is not supported by",)),
]


def _rule_id(message: str) -> str:
    for rule_id, words in _RULE_IDS:
        if all(word in message for word in words):
            return rule_id
    return "dflash_" + re.sub(r"[^a-z0-9]+", "_", message.lower()).strip("_")[:40]


class _Raises(ast.NodeVisitor):
    """`raise ValueError(<message>)` statements with the `if` tests around them."""

    def __init__(self) -> None:
        self.tests: list[str] = []
        self.found: list[tuple[str, str]] = []

    def visit_If(self, node: ast.If) -> None:
        self.tests.append(ast.unparse(node.test))
        for statement in node.body:
            self.visit(statement)
        self.tests.pop()
        self.tests.append("not (" + ast.unparse(node.test) + ")")
        for statement in node.orelse:
            self.visit(statement)
        self.tests.pop()

    def visit_Raise(self, node: ast.Raise) -> None:
        exc = node.exc
        if isinstance(exc, ast.Call) and getattr(exc.func, "id", None) == "ValueError" and exc.args:
            try:
                message = template(exc.args[0])
            except NotStatic:
                return
            self.found.append((" and ".join(self.tests[-2:]) or "always", message))


def dflash_rules(wheel: Wheel) -> list[LaunchRule]:
    hook = "sglang/srt/arg_groups/speculative_hook.py"
    visitor = _Raises()
    source = hook
    if wheel.has(hook):
        for node in ast.walk(wheel.tree(hook)):
            if isinstance(node, ast.FunctionDef) and node.name == "_handle_dflash":
                for statement in node.body:
                    visitor.visit(statement)
    else:
        source = SERVER_ARGS
        for node in ast.walk(wheel.tree(SERVER_ARGS)):
            if (
                isinstance(node, ast.If)
                and "'DFLASH'" in ast.unparse(node.test)
                and "speculative_algorithm" in ast.unparse(node.test)
            ):
                for statement in node.body:
                    visitor.visit(statement)
    return [
        LaunchRule(id=_rule_id(message), algorithm="DFLASH", condition=condition, message=message, source=source)
        for condition, message in visitor.found
    ]


def dflash_architectures(wheel: Wheel) -> list[str]:
    name = "sglang/srt/models/dflash.py"
    if not wheel.has(name):
        return []
    for node in wheel.tree(name).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "EntryClass" for t in node.targets):
            if isinstance(node.value, ast.Name):
                return [node.value.id]
            if isinstance(node.value, (ast.List, ast.Tuple)):
                return [e.id for e in node.value.elts if isinstance(e, ast.Name)]
    return []


# --- HTTP API, metrics, logs -------------------------------------------------------------


def meta_info_speculative_keys(wheel: Wheel) -> list[str]:
    keys: list[str] = []
    for node in ast.walk(wheel.tree("sglang/srt/managers/tokenizer_manager.py")):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if (
                    isinstance(target, ast.Subscript)
                    and getattr(target.value, "id", None) == "meta_info"
                    and isinstance(target.slice, ast.Constant)
                    and str(target.slice.value).startswith("spec_")
                    and target.slice.value not in keys
                ):
                    keys.append(target.slice.value)
    return keys


def _subscript_keys(function: ast.AST, holders: set[str]) -> list[str]:
    """Constant keys assigned as `<holder>["key"] = ...`, or in a `<holder> = {...}` / `dict(...)` literal."""
    keys: list[str] = []
    for n in ast.walk(function):
        if not isinstance(n, ast.Assign):
            continue
        for t in n.targets:
            if (
                isinstance(t, ast.Subscript)
                and isinstance(t.value, ast.Name)
                and t.value.id in holders
                and isinstance(t.slice, ast.Constant)
                and isinstance(t.slice.value, str)
            ):
                keys.append(t.slice.value)
            elif isinstance(t, ast.Name) and t.id in holders:
                if isinstance(n.value, ast.Dict):
                    keys += [k.value for k in n.value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
                elif isinstance(n.value, ast.Call) and getattr(n.value.func, "id", None) == "dict":
                    keys += [k.arg for k in n.value.keywords if k.arg]
    return keys


def _calls_with(function: ast.AST, holders: set[str]) -> set[str]:
    """Names of the `self.<name>(..., holder, ...)` calls in `function` that hand a holder on."""
    return {
        n.func.attr
        for n in ast.walk(function)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and getattr(n.func.value, "id", None) == "self"
        and any(isinstance(a, ast.Name) and a.id in holders for a in n.args)
    }


def _handed_on(function: ast.AST, holders: set[str], methods: dict[str, ast.FunctionDef]) -> set[str]:
    """Methods `function` hands a holder to: called with it, or named (`for add in (self._add_x, ...): add(state)`)
    when they take a parameter of that name."""
    named = {
        n.attr for n in ast.walk(function) if isinstance(n, ast.Attribute) and getattr(n.value, "id", None) == "self"
    }
    takes_it = {name for name in named & set(methods) if holders & {a.arg for a in methods[name].args.args}}
    return (_calls_with(function, holders) | takes_it) & set(methods)


def internal_state_keys(wheel: Wheel) -> list[str]:
    """Keys the scheduler sets in one `internal_states[]` entry of /server_info, besides the server args 0.5.23
    starts it from: in the method that builds the entry (0.5.10's Scheduler.get_internal_state, 0.5.23's
    InternalState.get_internal_state) and in the methods it hands the entry to (0.5.23's `_add_*(state)`)."""
    for module in wheel.names_under("sglang/srt/managers/"):
        if '"avg_spec_accept_length"] =' not in wheel.text(module):
            continue
        for cls in ast.walk(wheel.tree(module)):
            if not isinstance(cls, ast.ClassDef):
                continue
            methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}
            for method in methods.values():
                holders = {
                    t.value.id
                    for n in ast.walk(method)
                    if isinstance(n, ast.Assign)
                    for t in n.targets
                    if isinstance(t, ast.Subscript)
                    and isinstance(t.value, ast.Name)
                    and isinstance(t.slice, ast.Constant)
                    and t.slice.value == "avg_spec_accept_length"
                }
                if not holders:
                    continue
                builder = method
                if holders & {a.arg for a in method.args.args}:  # filled in for a caller: that caller builds it
                    builder = next(
                        (m for m in methods.values() if method.name in _handed_on(m, holders, methods)), method
                    )
                keys = _subscript_keys(builder, holders)
                for name in _handed_on(builder, holders, methods) - {builder.name}:
                    keys += _subscript_keys(methods[name], holders)
                return sorted(set(keys))
    return []


def endpoints(wheel: Wheel) -> list[str]:
    """Routes of the HTTP server: `@app.<method>(path)` and `@router.<method>(path)` in srt/entrypoints,
    and the Prometheus app mounted at /metrics."""
    paths: set[str] = set()
    for module in wheel.names_under("sglang/srt/entrypoints/"):
        if "grpc" in module:
            continue
        for node in ast.walk(wheel.tree(module)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for decorator in node.decorator_list:
                if (
                    isinstance(decorator, ast.Call)
                    and isinstance(decorator.func, ast.Attribute)
                    and getattr(decorator.func.value, "id", None) in ("app", "router")
                    and decorator.args
                    and isinstance(decorator.args[0], ast.Constant)
                ):
                    paths.add(str(decorator.args[0].value))
    for module in wheel.names_under("sglang/srt/utils/"):
        if re.search(r'Mount\("/metrics"', wheel.text(module)):
            paths.add("/metrics")
    return sorted(paths)


def metrics(wheel: Wheel) -> list[str]:
    names: set[str] = set()
    for module in wheel.names_under("sglang/srt/"):
        names.update(re.findall(r"[\"'](sglang:[a-z0-9_]+)[\"']", wheel.text(module)))
    return sorted(names)


def _strings(root: ast.AST) -> list[ast.expr]:
    """String literals and f-strings under `root`, not the pieces inside an f-string."""
    inside = {
        id(part)
        for node in ast.walk(root)
        if isinstance(node, ast.JoinedStr)
        for part in ast.walk(node)
        if part is not node
    }
    return [
        node
        for node in ast.walk(root)
        if id(node) not in inside
        and (isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str)))
    ]


def _templates(wheel: Wheel, modules: list[str], contains: str) -> list[tuple[str, ast.AST]]:
    found = []
    for module in modules:
        text = wheel.text(module)
        if contains not in text:
            continue
        for node in _strings(wheel.tree(module)):
            try:
                rendered = template(node)
            except NotStatic:
                continue
            if contains in rendered:
                found.append((rendered, node))
    return found


def log_lines(wheel: Wheel) -> LogLines:
    srt = wheel.names_under("sglang/srt/")

    def first(contains: str) -> str:
        found = _templates(wheel, srt, contains)
        if not found:
            raise ValueError(f"no log text containing {contains!r} in {wheel.path.name}")
        return min((t for t, _ in found), key=len)

    port = _templates(wheel, [SERVER_ARGS], "Port is already in use")
    return LogLines(
        ready=first("The server is fired up and ready to roll!"),
        out_of_memory=first("Not enough memory. Please try to increase --mem-fraction-static"),
        cuda_graph_capture_failed=first("Capture cuda graph failed"),
        decode_batch=tuple(_decode_batch_parts(wheel, srt)),
        port_in_use=port[0][0] if port else None,
    )


def _decode_batch_parts(wheel: Wheel, modules: list[str]) -> list[str]:
    """The f-strings of the function that writes `Decode batch` lines, those that carry its fields."""
    markers = ("Decode batch", "accept len", "cuda graph:", "gen throughput", "#queue-req")
    for module in modules:
        if "Decode batch" not in wheel.text(module):
            continue
        for node in ast.walk(wheel.tree(module)):
            if not isinstance(node, ast.FunctionDef):
                continue
            parts: list[tuple[int, int, str]] = []
            for inner in _strings(node):
                try:
                    text = template(inner)
                except NotStatic:
                    continue
                if any(m in text for m in markers):
                    parts.append((inner.lineno, inner.col_offset, text))
            texts = [t for _, _, t in sorted(parts)]
            if any(t.startswith("Decode batch") for t in texts) and any("accept len" in t for t in texts):
                return texts
    raise ValueError(f"no Decode batch log function in {wheel.path.name}")


# --- bench_serving ------------------------------------------------------------------------


def bench_serving(wheel: Wheel) -> BenchServing:
    module_file = (
        "sglang/benchmark/serving.py" if wheel.has("sglang/benchmark/serving.py") else "sglang/bench_serving.py"
    )
    tree = wheel.tree(module_file)
    evaluate = StaticEval(module_constants(tree))
    flags = _dedupe(from_add_argument(call, evaluate) for call in add_argument_calls(tree))
    dataset = next(f for f in flags if "--dataset-name" in f.names)
    result_fields: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            if "output_throughput" in keys and "completed" in keys and len(keys) > len(result_fields):
                result_fields = keys
    return BenchServing(
        module=module_file[: -len(".py")].replace("/", "."),
        flags=tuple(flags),
        dataset_names=tuple(str(c) for c in dataset.choices or ()),
        result_fields=tuple(result_fields),
    )


# --- the whole release ----------------------------------------------------------------------


def extract(path: Path) -> ReleaseFacts:
    wheel = Wheel(path)
    flags = launch_flags(wheel)
    algorithms, aliases, argparse_choices = speculative_algorithms(wheel, flags)
    return ReleaseFacts(
        version=wheel.version,
        wheel=path.name,
        launch_flags=tuple(flags),
        speculative_algorithms=tuple(algorithms),
        speculative_algorithm_aliases=aliases,
        speculative_algorithm_argparse_choices=argparse_choices,
        launch_rules=tuple(dflash_rules(wheel)),
        dflash_architectures=tuple(dflash_architectures(wheel)),
        meta_info_speculative_keys=tuple(meta_info_speculative_keys(wheel)),
        server_info_internal_state_keys=tuple(internal_state_keys(wheel)),
        endpoints=tuple(endpoints(wheel)),
        metrics=tuple(metrics(wheel)),
        log_lines=log_lines(wheel),
        bench_serving=bench_serving(wheel),
    )


def algorithm_history(paths: list[Path]) -> dict[str, Any]:
    """For each speculative algorithm, the oldest of the given releases that accepts it."""
    first: dict[str, str] = {}
    scanned = []
    for path in sorted(paths, key=lambda p: version_tuple(Wheel(p).version)):
        wheel = Wheel(path)
        scanned.append(wheel.version)
        algorithms, aliases, _ = speculative_algorithms(wheel, launch_flags(wheel))
        for name in [*algorithms, *aliases]:
            first.setdefault(name, wheel.version)
    return {"scanned": scanned, "first_release_with": first}


def main(argv: list[str]) -> int:
    out = DATA_DIR
    if "--out" in argv:
        at = argv.index("--out")
        out = Path(argv[at + 1])
        argv = argv[:at] + argv[at + 2 :]
    if argv and argv[0] == "--history":
        history = algorithm_history([Path(p) for p in argv[1:]])
        (out / "algorithm_history.json").write_text(json.dumps(history, indent=1) + "\n", encoding="utf-8")
        print(json.dumps(history["first_release_with"]))
        return 0
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    for name in argv:
        facts = extract(Path(name))
        target = out / f"{facts.version}.json"
        target.write_text(facts.model_dump_json(indent=1) + "\n", encoding="utf-8")
        print(
            f"{target}: {len(facts.launch_flags)} flags, algorithms {', '.join(facts.speculative_algorithms)}, "
            f"{len(facts.launch_rules)} DFLASH rules, {len(facts.endpoints)} endpoints"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
