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

from .facts import (
    BenchServing,
    LaunchFlag,
    LaunchRule,
    LaunchWarning,
    LogLines,
    NgramDefaults,
    ReleaseFacts,
    SpeculativeAutoParams,
    version_tuple,
)
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
        return self._zip.read(name).decode("utf-8-sig")  # a few sources start with a byte-order mark

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
        return _with_registry_choices(wheel, _record_style_flags(wheel, tree))
    constants = module_constants(tree)
    evaluate = StaticEval(constants, records={"ServerArgs": record_defaults(tree, "ServerArgs", constants)})
    flags = _dedupe(from_add_argument(call, evaluate) for call in add_argument_calls(tree, within="add_cli_args"))
    return _with_registry_choices(wheel, flags)


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


# --- choices SGLang computes from its registries when it runs ----------------------------------

# The flags whose argparse choices are the keys of a registry in SGLang's source: `--reasoning-parser` takes
# `ReasoningParser.DetectorMap`'s names, `--tool-call-parser` `FunctionCallParser.ToolCallParserEnum`'s (0.5.1x
# directly; 0.5.23 through `_reasoning_parser_choices()`, which reads a dependency-free copy of the names).
REGISTRY_CHOICE_FLAGS = ("--reasoning-parser", "--tool-call-parser")


def _with_registry_choices(wheel: Wheel, flags: list[LaunchFlag]) -> list[LaunchFlag]:
    """The flags, those of REGISTRY_CHOICE_FLAGS with their choices read from the registries they are built from.

    A flag whose choices cannot be followed to literals stays `choices_dynamic` (not guessed)."""
    server_args = wheel.tree(SERVER_ARGS)
    add_cli_args = _function(server_args, "add_cli_args")
    if add_cli_args is None:
        return flags
    calls = {
        name.value: call
        for call in add_argument_calls(add_cli_args)
        for name in call.args
        if isinstance(name, ast.Constant) and isinstance(name.value, str)
    }
    out = []
    for flag in flags:
        call = calls.get(flag.names[0])
        choices = next((k.value for k in call.keywords if k.arg == "choices"), None) if call is not None else None
        if flag.names[0] in REGISTRY_CHOICE_FLAGS and flag.choices_dynamic and choices is not None:
            try:
                resolved = _Registries(wheel, server_args)(choices, add_cli_args)
            except NotStatic:
                resolved = None
            if resolved is not None:
                flag = flag.model_copy(update={"choices": tuple(resolved), "choices_dynamic": False})
        out.append(flag)
    return out


def _module_file(wheel: Wheel, dotted: str) -> str:
    path = dotted.replace(".", "/")
    for name in (path + ".py", path + "/__init__.py"):
        if wheel.has(name):
            return name
    raise NotStatic(f"{dotted} is not in the wheel")


class _Registries:
    """Evaluates a `choices=` expression made of list literals, `+`, `list(...)`, local names, the keys of a dict
    literal on an imported class (`ReasoningParser.DetectorMap.keys()`), an imported constant, and calls of a
    module function without arguments (its last, unconditional `return`: 0.5.23's `_reasoning_parser_choices()`
    returns the registry module's names only where a plugin already imported that module; launch_server reads
    the dependency-free copy)."""

    def __init__(self, wheel: Wheel, module: ast.Module) -> None:
        self.wheel = wheel
        self.module = module

    def __call__(self, node: ast.expr, scope: ast.FunctionDef) -> list[Any]:
        match node:
            case ast.List(elts=elts) | ast.Tuple(elts=elts):
                return [self._constant(e) for e in elts]
            case ast.BinOp(left=left, op=ast.Add(), right=right):
                return self(left, scope) + self(right, scope)
            case ast.Call(func=ast.Name(id="list"), args=[arg], keywords=[]):
                return list(self(arg, scope))
            case ast.Call(func=ast.Attribute(value=value, attr="keys"), args=[], keywords=[]):
                return self(value, scope)
            case ast.Attribute(value=ast.Name(id=owner), attr=attr):
                return self._class_dict_keys(self._imported_from(owner, scope), owner, attr)
            case ast.Call(func=ast.Name(id=function), args=[], keywords=[]):
                called = next(
                    (n for n in self.module.body if isinstance(n, ast.FunctionDef) and n.name == function), None
                )
                last = called.body[-1] if called is not None and called.body else None
                if called is not None and isinstance(last, ast.Return) and last.value is not None:
                    return self(last.value, called)
            case ast.Name(id=name):
                assigned = [
                    n.value
                    for n in ast.walk(scope)
                    if isinstance(n, ast.Assign) and any(getattr(t, "id", None) == name for t in n.targets)
                ]
                if len(assigned) == 1:
                    return self(assigned[0], scope)
                module = self._imported_from(name, scope)
                constant = module_constants(self.wheel.tree(module)).get(name)
                if isinstance(constant, list):
                    return constant
        raise NotStatic(ast.unparse(node))

    @staticmethod
    def _constant(node: ast.expr) -> Any:
        if not isinstance(node, ast.Constant):
            raise NotStatic(ast.unparse(node))
        return node.value

    def _imported_from(self, name: str, scope: ast.FunctionDef) -> str:
        """The wheel file `name` is imported from (`from X import name`, in the function or at module level)."""
        for root in (scope, self.module):
            for node in ast.walk(root):
                if isinstance(node, ast.ImportFrom) and node.module and any(a.name == name for a in node.names):
                    return _module_file(self.wheel, node.module)
        raise NotStatic(f"{name} is not imported from a module of the wheel")

    def _class_dict_keys(self, module: str, owner: str, attr: str) -> list[Any]:
        for node in self.wheel.tree(module).body:
            if not (isinstance(node, ast.ClassDef) and node.name == owner):
                continue
            for item in node.body:
                target: ast.expr | None = item.target if isinstance(item, ast.AnnAssign) else None
                if isinstance(item, ast.Assign) and len(item.targets) == 1:
                    target = item.targets[0]
                value = getattr(item, "value", None)
                if getattr(target, "id", None) == attr and isinstance(value, ast.Dict):
                    return [self._constant(k) for k in value.keys if k is not None]
        raise NotStatic(f"{owner}.{attr} is not a dict literal in {module}")


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


# The other algorithms' rules, by the algorithm that raises them and words of the message.
_OTHER_RULE_IDS: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "STANDALONE": [("standalone_dp_attention", ("does not support dp attention",))],
    "EAGLE": [
        ("trtllm_mha_topk", ("trtllm_mha", "topk = 1")),
        ("eagle_spec_v2_topk", ("Spec v2", "topk = 1")),
        ("eagle_topk_page_size", ("speculative_eagle_topk > 1 with page_size > 1",)),
        ("eagle_rejection_sampling_multi_layer", ("rejection-sampling", "multi-layer EAGLE")),
        ("eagle_rejection_sampling_topk", ("rejection-sampling requires --speculative-eagle-topk",)),
        ("eagle_rejection_sampling_device", ("Deterministic rejection sampling",)),
        ("eagle_rejection_sampling_accept_thresholds", ("rejection-sampling", "accept-threshold")),
    ],
    "NGRAM": [
        ("ngram_dp_attention", ("does not support dp attention",)),
        ("ngram_device", ("Ngram speculative decoding only supports",)),
        ("ngram_topk_page_size", ("speculative_eagle_topk", "page_size")),
        ("ngram_external_sam_budget_positive", ("--speculative-ngram-external-sam-budget must be positive",)),
        ("ngram_external_corpus_max_tokens_positive", ("--speculative-ngram-external-corpus-max-tokens must be",)),
        ("ngram_external_sam_budget_max", ("speculative_ngram_external_sam_budget must be less than",)),
    ],
}


# Start-up asserts (a bare AssertionError, no message), by words of the condition they fail under.
_ASSERT_IDS = [
    # No --speculative-num-steps: SGLang picks all three, so topk and draft tokens must be unset too.
    ("eagle_partial_params", ("speculative_num_steps is None", "speculative_eagle_topk is None")),
]


def _assert_id(condition: str, algorithm: str) -> str:
    for rule_id, words in _ASSERT_IDS:
        if all(word in condition for word in words):
            return rule_id
    return algorithm.lower() + "_assert_" + re.sub(r"[^a-z0-9]+", "_", condition.lower()).strip("_")[:40]


def _rule_id(message: str, algorithm: str = "DFLASH") -> str:
    table = _RULE_IDS if algorithm == "DFLASH" else _OTHER_RULE_IDS.get(algorithm, [])
    for rule_id, words in table:
        if all(word in message for word in words):
            return rule_id
    return algorithm.lower() + "_" + re.sub(r"[^a-z0-9]+", "_", message.lower()).strip("_")[:40]


class _Raises(ast.NodeVisitor):
    """`raise ValueError(<message>)` statements with the `if` tests around them, and (`asserts`) the `assert`
    statements as the condition under which they fail."""

    def __init__(self, group: bool = False, asserts: bool = False) -> None:
        self.tests: list[str] = []
        self.found: list[tuple[str, str]] = []
        self.asserted: list[tuple[str, str]] = []  # (condition it fails under, its message or "")
        self.group = group  # an `or` test in parentheses, so that the joined condition reads as the code does
        self.asserts = asserts

    def visit_If(self, node: ast.If) -> None:
        test = ast.unparse(node.test)
        grouped = self.group and isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.Or)
        self.tests.append(f"({test})" if grouped else test)
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

    def visit_Assert(self, node: ast.Assert) -> None:
        if not self.asserts:
            return
        try:
            message = template(node.msg) if node.msg is not None else ""
        except NotStatic:
            return
        self.asserted.append((" and ".join([*self.tests[-2:], f"not ({ast.unparse(node.test)})"]), message))


def _dflash_bodies(wheel: Wheel) -> tuple[str, list[list[ast.stmt]]]:
    """(source file, statement lists) of DFLASH's start-up: 0.5.23's `_handle_dflash`, else the
    `if self.speculative_algorithm == "DFLASH":` branches of server_args.py."""
    if wheel.has(SPECULATIVE_HOOK):
        bodies = [
            node.body
            for node in ast.walk(wheel.tree(SPECULATIVE_HOOK))
            if isinstance(node, ast.FunctionDef) and node.name == "_handle_dflash"
        ]
        return SPECULATIVE_HOOK, bodies
    bodies = [
        node.body
        for node in ast.walk(wheel.tree(SERVER_ARGS))
        if isinstance(node, ast.If)
        and "'DFLASH'" in ast.unparse(node.test)
        and "speculative_algorithm" in ast.unparse(node.test)
    ]
    return SERVER_ARGS, bodies


def dflash_rules(wheel: Wheel) -> list[LaunchRule]:
    visitor = _Raises()
    source, bodies = _dflash_bodies(wheel)
    for body in bodies:
        for statement in body:
            visitor.visit(statement)
    return [
        LaunchRule(id=_rule_id(message), algorithm="DFLASH", condition=condition, message=message, source=source)
        for condition, message in visitor.found
    ]


# specops' name for each DFLASH start-up warning, by words of SGLang's own text.
_WARNING_IDS = [
    ("dflash_num_steps_override", ("only supports speculative_num_steps",)),
    ("dflash_topk_override", ("only supports speculative_eagle_topk",)),
    ("dflash_block_size_infer_failed", ("Failed to infer DFLASH block_size",)),
    ("dflash_block_size_default", ("speculative_num_draft_tokens is not set",)),
    ("dflash_max_running_requests", ("Max running requests is reset",)),
    ("dflash_overlap_disabled", ("Overlap scheduler is disabled",)),
    ("dflash_mixed_chunk_disabled", ("Mixed chunked prefill is disabled",)),
    ("dflash_draft_backend_fallback", ("does not support attention_backend",)),
    ("dflash_draft_trtllm_mha_fallback", ("only enables 'trtllm_mha'",)),
]


def _warning_calls(root: ast.AST) -> list[ast.Call]:
    """`logger.warning(...)` calls under `root`, in source order."""
    calls = [
        node
        for node in ast.walk(root)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "warning"
        and getattr(node.func.value, "id", None) == "logger"
        and node.args
    ]
    return sorted(calls, key=lambda c: (c.lineno, c.col_offset))


def dflash_warnings(wheel: Wheel) -> list[LaunchWarning]:
    """The warnings DFLASH's start-up logs (logger format strings), in the order the code reaches them: its own,
    and those of the functions of the same module it calls by name (0.5.23's
    `_resolve_dflash_draft_attention_backend`)."""
    source, bodies = _dflash_bodies(wheel)
    helpers = {
        node.name: node
        for node in wheel.tree(source).body
        if isinstance(node, ast.FunctionDef) and source != SERVER_ARGS
    }
    found: list[tuple[tuple[int, int], str]] = []
    for body in bodies:
        root = ast.Module(body=body, type_ignores=[])
        for call in _warning_calls(root):
            found.append(((call.lineno, call.col_offset), template(call.args[0])))
        for node in ast.walk(root):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in helpers:
                for call in _warning_calls(helpers[node.func.id]):
                    found.append(((node.lineno, call.lineno), template(call.args[0])))
    warnings = []
    for _, message in sorted(found):
        rule_id = next((i for i, words in _WARNING_IDS if all(w in message for w in words)), None)
        slug = re.sub(r"[^a-z0-9]+", "_", message.lower()).strip("_")[:40]
        warnings.append(
            LaunchWarning(id=rule_id or "dflash_" + slug, algorithm="DFLASH", message=message, source=source)
        )
    return warnings


def _entry_classes(wheel: Wheel, name: str) -> list[str]:
    """The model classes a file under sglang/srt/models registers (`EntryClass = X` or `[X, Y]`)."""
    for node in wheel.tree(name).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "EntryClass" for t in node.targets):
            if isinstance(node.value, ast.Name):
                return [node.value.id]
            if isinstance(node.value, (ast.List, ast.Tuple)):
                return [e.id for e in node.value.elts if isinstance(e, ast.Name)]
    return []


def dflash_architectures(wheel: Wheel) -> list[str]:
    name = "sglang/srt/models/dflash.py"
    return _entry_classes(wheel, name) if wheel.has(name) else []


MODELS_DIR = "sglang/srt/models/"


def _draft_kind(file_name: str) -> str | None:
    """Which algorithm a model file's drafts serve, by its name: *eagle3* EAGLE3, other *eagle* EAGLE,
    *_nextn / *_mtp NEXTN."""
    stem = file_name[: -len(".py")]
    if "eagle3" in stem:
        return "EAGLE3"
    if "eagle" in stem:
        return "EAGLE"
    if stem.endswith(("_nextn", "_mtp")):
        return "NEXTN"
    return None


def _draft_class_kind(class_name: str) -> str | None:
    """Which algorithm a draft class serves, by its own name: *Eagle3 EAGLE3, other *Eagle EAGLE, *NextN / *MTP
    NEXTN (the names SGLang's ModelConfig maps a draft checkpoint's architecture to)."""
    if "Eagle3" in class_name:
        return "EAGLE3"
    if "Eagle" in class_name:
        return "EAGLE"
    if class_name.endswith(("NextN", "MTP")):
        return "NEXTN"
    return None


def draft_architectures(wheel: Wheel) -> dict[str, tuple[str, ...]]:
    """EAGLE3 / EAGLE / NEXTN -> the draft classes the model files (directly in sglang/srt/models) register: every
    EntryClass of a file named for its kind, and the classes named for a kind in the other files (0.5.23 registers
    GlmMoeDsaForCausalLMNextN in glm4_moe.py, InklingForConditionalGenerationMTP in inkling.py)."""
    found: dict[str, set[str]] = {"EAGLE3": set(), "EAGLE": set(), "NEXTN": set()}
    for name in wheel.names_under(MODELS_DIR):
        file_name = name[len(MODELS_DIR) :]
        if "/" in file_name:
            continue
        file_kind = _draft_kind(file_name)
        for class_name in _entry_classes(wheel, name):
            kind = file_kind or _draft_class_kind(class_name)
            if kind is not None:
                found[kind].add(class_name)
    return {kind: tuple(sorted(classes)) for kind, classes in found.items()}


# --- the other algorithms' start-up: handlers, rules, defaults ----------------------------

SPECULATIVE_HOOK = "sglang/srt/arg_groups/speculative_hook.py"
SPEC_INFO = "sglang/srt/speculative/spec_info.py"


class _Handler:
    """The start-up code of one algorithm family: 0.5.23's `_handle_<family>` function, or the
    `if self.speculative_algorithm ...:` branch of the older `ServerArgs._handle_speculative_decoding`."""

    def __init__(self, family: str, algorithms: list[str], body: list[ast.stmt], source: str) -> None:
        self.family = family  # EAGLE, NGRAM, DFLASH, ...
        self.algorithms = algorithms  # the --speculative-algorithm names it serves
        self.body = body
        self.source = source


def _function(tree: ast.AST, name: str) -> ast.FunctionDef | None:
    return next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _algorithm_names(test: ast.expr) -> list[str]:
    """`speculative_algorithm == "X"` / `in ("X", "Y")`: the names compared against."""
    if not (isinstance(test, ast.Compare) and ast.unparse(test.left).endswith("speculative_algorithm")):
        return []
    if not all(isinstance(op, (ast.Eq, ast.In)) for op in test.ops):
        return []
    names = []
    for comparator in test.comparators:
        elements = comparator.elts if isinstance(comparator, (ast.List, ast.Tuple, ast.Set)) else [comparator]
        names += [e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return names


def _assigned(root: ast.AST, field: str) -> list[ast.expr]:
    """Values `root` sets `field` to: `self.<field> = v` (0.5.1x) or `declare_resolution(..., <field>=v)` (0.5.23)."""
    values: list[ast.expr] = []
    for node in ast.walk(root):
        if isinstance(node, ast.Assign):
            values += [node.value for t in node.targets if isinstance(t, ast.Attribute) and t.attr == field]
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "declare_resolution":
            values += [k.value for k in node.keywords if k.arg == field]
    return values


def _hook_handlers(wheel: Wheel) -> list[_Handler]:
    """0.5.23: `SpeculativeAlgorithm.handle_server_args` dispatches by `self.is_x()` tests, first match wins."""
    enum = next(
        (
            n
            for n in ast.walk(wheel.tree(SPEC_INFO))
            if isinstance(n, ast.ClassDef) and n.name == "SpeculativeAlgorithm"
        ),
        None,
    )
    dispatch = _function(enum, "handle_server_args") if enum is not None else None
    if enum is None or dispatch is None:
        return []
    predicates = {m.name: m for m in enum.body if isinstance(m, ast.FunctionDef) and m.name.startswith("is_")}

    def members(test: ast.expr) -> set[str]:
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
            return set().union(*(members(v) for v in test.values))
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr in predicates:
            returned = next((n.value for n in ast.walk(predicates[test.func.attr]) if isinstance(n, ast.Return)), None)
            return members(returned) if returned is not None else set()
        if isinstance(test, ast.Compare) and isinstance(test.ops[0], (ast.Eq, ast.In)):
            right = test.comparators[0]
            elements = right.elts if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [right]
            return {e.attr for e in elements if isinstance(e, ast.Attribute)}
        return set()

    hook = wheel.tree(SPECULATIVE_HOOK)
    handlers: list[_Handler] = []
    taken: set[str] = set()
    chain = next((n for n in dispatch.body if isinstance(n, ast.If)), None)
    while chain is not None:
        call = next(
            (n for n in ast.walk(ast.Module(body=chain.body, type_ignores=[])) if isinstance(n, ast.Call)), None
        )
        function = _function(hook, getattr(call.func, "id", "")) if call is not None else None
        if function is not None:
            algorithms = sorted(members(chain.test) - taken)
            taken.update(algorithms)
            family = function.name.removeprefix("_handle_").removesuffix("_family").upper()
            handlers.append(_Handler(family, algorithms, function.body, SPECULATIVE_HOOK))
        chain = chain.orelse[0] if len(chain.orelse) == 1 and isinstance(chain.orelse[0], ast.If) else None
    return handlers


def _server_args_handlers(wheel: Wheel) -> list[_Handler]:
    """0.5.1x: the top-level `if self.speculative_algorithm ...:` branches of `_handle_speculative_decoding`; a
    branch that only renames (`NEXTN` -> `EAGLE`) adds the old name to the branch that serves the new one."""
    function = _function(wheel.tree(SERVER_ARGS), "_handle_speculative_decoding")
    if function is None:
        return []
    handlers: list[_Handler] = []
    renames: dict[str, str] = {}
    for statement in function.body:
        names = _algorithm_names(statement.test) if isinstance(statement, ast.If) else []
        if not names or not isinstance(statement, ast.If):
            continue
        renamed = [v.value for v in _assigned(statement, "speculative_algorithm") if isinstance(v, ast.Constant)]
        if len(statement.body) == 1 and renamed:
            renames.update({name: str(renamed[0]) for name in names})
            continue
        family = "EAGLE" if "EAGLE" in names else names[0]
        handlers.append(_Handler(family, list(names), statement.body, SERVER_ARGS))
    for handler in handlers:
        handler.algorithms += [old for old, new in renames.items() if new in handler.algorithms]
    return handlers


def speculative_handlers(wheel: Wheel) -> list[_Handler]:
    if wheel.has(SPECULATIVE_HOOK) and wheel.has(SPEC_INFO):
        return _hook_handlers(wheel)
    return _server_args_handlers(wheel) if wheel.has(SERVER_ARGS) else []


def _handler(wheel: Wheel, family: str) -> _Handler | None:
    return next((h for h in speculative_handlers(wheel) if h.family == family), None)


def _local_constants(body: list[ast.stmt]) -> dict[str, Any]:
    """`NAME = <literal>` statements of a handler (0.5.23's `_PAGE_TREE_SPEC_BACKENDS = (...)`), a tuple kept a
    tuple (it prints as one)."""
    constants = module_constants(ast.Module(body=body, type_ignores=[]))
    for statement in body:
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Tuple):
            for target in statement.targets:
                if isinstance(target, ast.Name) and isinstance(constants.get(target.id), list):
                    constants[target.id] = tuple(constants[target.id])
    return constants


def other_rules(wheel: Wheel) -> list[LaunchRule]:
    """The ValueErrors and asserts of the EAGLE family's (EAGLE, EAGLE3, NEXTN, STANDALONE) and NGRAM's start-up;
    a check on `speculative_algorithm == "STANDALONE"` is STANDALONE's. A handler's local constants are written out (0.5.23's
    `_PAGE_TREE_SPEC_BACKENDS`): in the condition as source, in the message as the f-string prints them."""
    rules: list[LaunchRule] = []
    for family in ("EAGLE", "NGRAM"):
        handler = _handler(wheel, family)
        if handler is None:
            continue
        visitor = _Raises(group=True, asserts=True)
        for statement in handler.body:
            visitor.visit(statement)
        constants = _local_constants(handler.body)
        found = [(c, m, "ValueError") for c, m in visitor.found] + [
            (c, m, "AssertionError") for c, m in visitor.asserted
        ]
        for condition, message, exception in found:
            for name, value in constants.items():
                condition = re.sub(rf"\b{name}\b", repr(value).replace("\\", "\\\\"), condition)
                message = message.replace("{" + name + "}", str(value))  # as the f-string prints it
            algorithm = "STANDALONE" if "speculative_algorithm == 'STANDALONE'" in condition else family
            rules.append(
                LaunchRule(
                    id=_rule_id(message, algorithm) if exception == "ValueError" else _assert_id(condition, algorithm),
                    algorithm=algorithm,
                    condition=condition,
                    message=message,
                    source=handler.source,
                    exception=exception,
                )
            )
    return rules


def max_running_requests_defaults(wheel: Wheel) -> dict[str, int]:
    """algorithm -> the constant its start-up sets max_running_requests to (when the flag is unset)."""
    defaults: dict[str, int] = {}
    for handler in speculative_handlers(wheel):
        values = [
            v.value
            for v in _assigned(ast.Module(body=handler.body, type_ignores=[]), "max_running_requests")
            if isinstance(v, ast.Constant) and isinstance(v.value, int)
        ]
        if values:
            defaults.update({algorithm: values[0] for algorithm in handler.algorithms})
    return dict(sorted(defaults.items()))


def mtp_in_target_architectures(wheel: Wheel) -> list[str]:
    """The `model_arch in [...]` list of the EAGLE family under which the draft model path becomes the model path."""
    handler = _handler(wheel, "EAGLE")
    if handler is None:
        return []
    for node in ast.walk(ast.Module(body=handler.body, type_ignores=[])):
        if not (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Compare)
            and isinstance(node.test.ops[0], ast.In)
            and isinstance(node.test.comparators[0], (ast.List, ast.Tuple))
        ):
            continue
        draft_path = _assigned(ast.Module(body=node.body, type_ignores=[]), "speculative_draft_model_path")
        if any(isinstance(v, ast.Attribute) and v.attr == "model_path" for v in draft_path):
            return [str(e.value) for e in node.test.comparators[0].elts if isinstance(e, ast.Constant)]
    return []


def _triple(node: ast.stmt) -> tuple[int, int, int] | None:
    """`return (a, b, c)` of int literals."""
    if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
        values = [e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, int)]
        if len(values) == 3:
            return values[0], values[1], values[2]
    return None


def speculative_auto_params(wheel: Wheel) -> SpeculativeAutoParams:
    """`_auto_choose_speculative_params` (0.5.23, speculative_hook) or `auto_choose_speculative_params` (0.5.1x,
    server_args): its `if` chain on the algorithm and on the target architecture, and its final `else`."""
    source = SPECULATIVE_HOOK if wheel.has(SPECULATIVE_HOOK) else SERVER_ARGS
    tree = wheel.tree(source) if wheel.has(source) else ast.Module(body=[], type_ignores=[])
    function = _function(tree, "_auto_choose_speculative_params") or _function(tree, "auto_choose_speculative_params")
    if function is None:
        return SpeculativeAutoParams()
    standalone: tuple[int, int, int] | None = None
    by_architecture: dict[str, tuple[int, int, int]] = {}
    default: tuple[int, int, int] | None = None
    statements = list(function.body)
    while statements:
        statement = statements.pop(0)
        if isinstance(statement, ast.If):
            chosen = next((t for t in map(_triple, statement.body) if t is not None), None)
            test = statement.test
            if chosen is not None and "STANDALONE" in _algorithm_names(test):
                standalone = chosen
            elif chosen is not None and isinstance(test, ast.Compare) and isinstance(test.ops[0], ast.In):
                listed = test.comparators[0]
                for e in listed.elts if isinstance(listed, (ast.List, ast.Tuple)) else []:
                    if isinstance(e, ast.Constant):
                        by_architecture.setdefault(str(e.value), chosen)
            statements = statement.orelse + statements
        elif (chosen := _triple(statement)) is not None:
            default = chosen
            break
    return SpeculativeAutoParams(standalone=standalone, by_architecture=by_architecture, default=default)


def _arithmetic(node: ast.expr, values: dict[str, int]) -> int:
    """An int expression of literals and `<x>.<field>` read from `values`."""
    match node:
        case ast.Constant(value=int() as value):
            return value
        case ast.Attribute(attr=attr) if attr in values:
            return values[attr]
        case ast.BinOp(left=left, op=ast.FloorDiv(), right=right):
            return _arithmetic(left, values) // _arithmetic(right, values)
        case ast.BinOp(left=left, op=ast.Add(), right=right):
            return _arithmetic(left, values) + _arithmetic(right, values)
        case ast.BinOp(left=left, op=ast.Sub(), right=right):
            return _arithmetic(left, values) - _arithmetic(right, values)
    raise NotStatic(ast.unparse(node))


def ngram_defaults(wheel: Wheel, flags: list[LaunchFlag]) -> NgramDefaults:
    """NGRAM's draft tokens (a literal), topk (always the value of a flag: that flag's default) and steps (computed
    from the two, where the release sets them)."""
    handler = _handler(wheel, "NGRAM")
    if handler is None:
        return NgramDefaults()
    body = ast.Module(body=handler.body, type_ignores=[])
    draft_tokens = next(
        (v.value for v in _assigned(body, "speculative_num_draft_tokens") if isinstance(v, ast.Constant)), None
    )
    topk_flag = topk = None
    for value in _assigned(body, "speculative_eagle_topk"):
        flag = next((f for f in flags if isinstance(value, ast.Attribute) and f.dest == value.attr), None)
        if flag is not None:
            topk_flag, topk = flag.names[0], flag.default
            break
    steps_source = steps = None
    for value in _assigned(body, "speculative_num_steps"):
        steps_source = ast.unparse(value)
        known = {"speculative_num_draft_tokens": draft_tokens, "speculative_eagle_topk": topk}
        try:
            steps = _arithmetic(value, {k: v for k, v in known.items() if isinstance(v, int)})
        except (NotStatic, ZeroDivisionError):
            steps = None
        break
    return NgramDefaults(
        num_draft_tokens=draft_tokens if isinstance(draft_tokens, int) else None,
        eagle_topk_flag=topk_flag,
        eagle_topk=topk if isinstance(topk, int) else None,
        num_steps=steps,
        num_steps_source=steps_source,
    )


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
                    and isinstance(target.slice.value, str)
                    and target.slice.value.startswith("spec_")
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
    found: list[tuple[str, ast.AST]] = []
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
        launch_rules=(*dflash_rules(wheel), *other_rules(wheel)),
        launch_warnings=tuple(dflash_warnings(wheel)),
        dflash_architectures=tuple(dflash_architectures(wheel)),
        speculative_auto_params=speculative_auto_params(wheel),
        ngram_defaults=ngram_defaults(wheel, flags),
        speculative_max_running_requests_default=max_running_requests_defaults(wheel),
        mtp_in_target_architectures=tuple(mtp_in_target_architectures(wheel)),
        draft_architectures=draft_architectures(wheel),
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
            f"{len(facts.launch_rules)} launch rules, {len(facts.endpoints)} endpoints"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
