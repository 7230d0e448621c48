"""`launch_server` and bench_serving options, read from the syntax tree of SGLang's source.

Two registration styles exist. Up to the 0.5.2x series, `ServerArgs.add_cli_args`
calls `parser.add_argument(...)` once per option. 0.5.23 declares most options as
annotated record fields (`name: A[Optional[int], "help"] = None`, or `A[T, Arg(...)]`)
in `srt/arg_groups/fields/*.py` and derives argparse options from them with
`add_cli_args_from_dataclass`; only a few are still registered by hand. Both are
read here, and the derivation follows `arg_utils.add_cli_args_from_dataclass`.
"""

from __future__ import annotations

import ast
from typing import Any

from .facts import LaunchFlag
from .static_eval import NotStatic, StaticEval

_STORE_KINDS = {"store_true", "store_false", "store_const", "append"}


def _kind_of_action(action: Any) -> tuple[str, str | None]:
    """(kind, custom action name) for an argparse `action=`."""
    if action is None:
        return "value", None
    if isinstance(action, str) and action in _STORE_KINDS:
        return action, None
    name = str(action)
    if "StoreTrue" in name:
        return "deprecated_store_true", name
    return "custom", name


def from_add_argument(call: ast.Call, evaluate: StaticEval) -> LaunchFlag | None:
    """One `parser.add_argument(...)` call as a flag; None for positionals."""
    names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if not names or not names[0].startswith("-"):
        return None
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    values: dict[str, Any] = {}
    dynamic_choices = False
    for key in ("default", "choices", "nargs", "required", "dest", "const", "new_flag"):
        if key in keywords:
            try:
                values[key] = evaluate(keywords[key])
            except (NotStatic, TypeError):
                dynamic_choices |= key == "choices"
    action: Any = None
    if "action" in keywords:
        try:
            action = evaluate(keywords["action"])
        except NotStatic:
            action = ast.unparse(keywords["action"])
    kind, custom = _kind_of_action(action)
    type_name = evaluate.type_name(keywords["type"]) if "type" in keywords else ("str" if kind == "value" else None)
    choices = values.get("choices")
    help_node = keywords.get("help")
    help_text = help_node.value if isinstance(help_node, ast.Constant) and isinstance(help_node.value, str) else ""
    return LaunchFlag(
        names=tuple(names),
        dest=str(values.get("dest") or names[0].lstrip("-").replace("-", "_")),
        kind=kind,
        type=type_name,
        choices=tuple(choices) if isinstance(choices, (list, tuple, set)) else None,
        choices_dynamic=dynamic_choices,
        default=_jsonable(values.get("default", False if kind in ("store_true", "deprecated_store_true") else None)),
        nargs=values.get("nargs"),
        required=bool(values.get("required", False)),
        deprecated="deprecated" in (help_text + (custom or "")).lower(),
        action=custom,
        replacement=values.get("new_flag"),
    )


def add_argument_calls(tree: ast.AST, within: str | None = None) -> list[ast.Call]:
    """Every `<x>.add_argument(...)` call, optionally only inside function `within`."""
    roots: list[ast.AST] = [tree]
    if within is not None:
        roots = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == within]
    calls = []
    for root in roots:
        for node in ast.walk(root):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
                calls.append(node)
    return sorted(calls, key=lambda c: (c.lineno, c.col_offset))


# --- annotated record fields (0.5.23) -------------------------------------------------


def _subscript_parts(node: ast.expr) -> tuple[str, list[ast.expr]] | None:
    """`Name[a, b]` -> ("Name", [a, b]); `typing.Name[...]` likewise."""
    if not isinstance(node, ast.Subscript):
        return None
    head = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", None)
    if head is None:
        return None
    items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    return head, items


def _unwrap_optional(node: ast.expr) -> ast.expr:
    parts = _subscript_parts(node)
    if parts and parts[0] == "Optional":
        return parts[1][0]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = [node.left, node.right]
        rest = [s for s in sides if not (isinstance(s, ast.Constant) and s.value is None)]
        if len(rest) == 1:
            return rest[0]
    if parts and parts[0] == "Union":
        rest = [s for s in parts[1] if not (isinstance(s, ast.Constant) and s.value is None)]
        if len(rest) == 1:
            return rest[0]
    return node


def _arg_meta(items: list[ast.expr], evaluate: StaticEval) -> dict[str, Any] | None:
    """The `Arg(...)` (or bare help string) of an annotation, as keyword values; None if absent."""
    for item in items:
        if isinstance(item, ast.Constant) and isinstance(item.value, str):
            return {"help": item.value}
        if isinstance(item, ast.Call) and getattr(item.func, "id", None) == "Arg":
            meta: dict[str, Any] = {}
            for keyword in item.keywords:
                if keyword.arg is None:
                    continue
                try:
                    meta[keyword.arg] = evaluate(keyword.value)
                except (NotStatic, TypeError):
                    meta[keyword.arg] = _Unknown(ast.unparse(keyword.value))
            return meta
    return None


class _Unknown(str):
    """A value the source computes at run time (kept as its source text)."""


_MISSING = object()


def from_record_field(field: ast.AnnAssign, evaluate: StaticEval) -> LaunchFlag | None:
    """An annotated field as `add_cli_args_from_dataclass` would register it; None when it has no CLI."""
    if not isinstance(field.target, ast.Name):
        return None
    parts = _subscript_parts(field.annotation)
    if parts is None or parts[0] not in ("A", "Annotated"):
        return None
    raw_type, *metadata = parts[1]
    meta = _arg_meta(metadata, evaluate)
    if meta is None or meta.get("no_cli") is True:
        return None
    name = field.target.id
    cli_name = meta.get("cli_name") or "--" + name.replace("_", "-")
    aliases = meta.get("aliases") or []
    names = tuple([cli_name, *aliases])
    default: Any = _MISSING
    if field.value is not None:
        try:
            default = evaluate(field.value)
        except (NotStatic, TypeError):
            default = None  # a default_factory or a computed value: not a CLI concern
    help_text = str(meta.get("help") or "")
    common = {"names": names, "dest": name, "deprecated": "deprecated" in help_text.lower()}
    value_default = None if default is _MISSING else _jsonable(default)

    if meta.get("action") is not None:
        kind, custom = _kind_of_action(meta["action"])
        return LaunchFlag(**common, kind=kind, default=value_default, action=custom)
    inner = _unwrap_optional(raw_type)
    inner_parts = _subscript_parts(inner)
    choices = meta.get("choices")
    dynamic = isinstance(choices, _Unknown)
    if inner_parts and inner_parts[0] == "Literal":
        literal = [evaluate(v) for v in inner_parts[1]]
        chosen = choices if isinstance(choices, list) else literal
        value_type = type(literal[0]).__name__ if literal else "str"
        return LaunchFlag(**common, type=_type_name(meta, value_type), choices=tuple(chosen), default=value_default)
    if inner_parts and inner_parts[0] in ("List", "list") and meta.get("type_parser") is None:
        element = inner_parts[1][0] if inner_parts[1] else None
        element_type = getattr(element, "id", "str")
        return LaunchFlag(
            **common,
            type=element_type if element_type in ("int", "float", "str") else "str",
            nargs=meta.get("nargs") or "+",
            choices=tuple(choices) if isinstance(choices, list) else None,
            choices_dynamic=dynamic,
            default=value_default,
        )
    if getattr(inner, "id", None) == "bool":
        return LaunchFlag(**common, kind="store_true", default=False if default is _MISSING else value_default)
    required = meta.get("required") is True or (meta.get("required") is None and default is _MISSING)
    return LaunchFlag(
        **common,
        type=_type_name(meta, getattr(inner, "id", "str")),
        choices=tuple(choices) if isinstance(choices, list) else None,
        choices_dynamic=dynamic,
        nargs=meta.get("nargs"),
        default=value_default,
        required=required,
    )


def _type_name(meta: dict[str, Any], inferred: str) -> str:
    parser = meta.get("type_parser")
    if parser is not None:
        return str(parser)
    return inferred if inferred in ("int", "float", "str") else "str"


def record_fields(tree: ast.Module, class_name: str) -> list[ast.AnnAssign]:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return [item for item in node.body if isinstance(item, ast.AnnAssign)]
    return []


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)
