"""Evaluate the constant parts of SGLang's source without importing it.

SGLang imports CUDA torch at module level, so its facts are read from the syntax
tree: literals, module-level constants, `ServerArgs.field` defaults, list
arithmetic. Anything that needs the running program (a function call, an
environment variable) raises `NotStatic`, and the caller records the value as
unknown instead of guessing.
"""

from __future__ import annotations

import ast
from typing import Any


class NotStatic(Exception):
    """The expression's value depends on running SGLang."""


# Names of argparse `type=` callables that stand for themselves.
_TYPE_NAMES = {"int", "float", "str", "bool"}


class TypeRef(str):
    """A `type=` callable named in the source (`int`, `nullable_str`, `json_list_type`)."""


class StaticEval:
    """Evaluates expressions against module constants and record defaults."""

    def __init__(
        self,
        constants: dict[str, Any],
        records: dict[str, dict[str, Any]] | None = None,
        lookups: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.constants = constants
        self.records = records or {}
        # `_declared_default("name")`-style calls: a function name and the table it reads.
        self.lookups = lookups or {}

    def __call__(self, node: ast.expr) -> Any:
        match node:
            case ast.Constant(value=value):
                return value
            case ast.List(elts=elts) | ast.Tuple(elts=elts) | ast.Set(elts=elts):
                return [self(e) for e in elts]
            case ast.Dict(keys=keys, values=values) if all(k is not None for k in keys):
                return {self(k): self(v) for k, v in zip(keys, values, strict=True) if k is not None}
            case ast.UnaryOp(op=ast.USub(), operand=operand):
                return -self(operand)
            case ast.BinOp(left=left, op=ast.Add(), right=right):
                return self(left) + self(right)
            case ast.BinOp(left=left, op=ast.Mult(), right=right):
                return self(left) * self(right)
            case ast.Name(id=name) if name in _TYPE_NAMES:
                return TypeRef(name)
            case ast.Name(id=name) if name in self.constants:
                return self.constants[name]
            case ast.Attribute(value=ast.Name(id=owner), attr=attr) if owner in self.records:
                if attr not in self.records[owner]:
                    raise NotStatic(f"{owner}.{attr} has no static default")
                return self.records[owner][attr]
            case ast.Call(func=ast.Name(id="list" | "sorted" | "tuple" | "set"), args=[arg], keywords=[]):
                return (
                    sorted(self(arg))
                    if isinstance(node.func, ast.Name) and node.func.id == "sorted"
                    else list(self(arg))
                )
            case ast.Call(func=ast.Name(id=function), args=[ast.Constant(value=str() as key)]) if (
                function in self.lookups
            ):
                if key not in self.lookups[function]:
                    raise NotStatic(f"{function}({key!r}) has no static value")
                return self.lookups[function][key]
            case ast.JoinedStr():
                return template(node)
        raise NotStatic(ast.unparse(node))

    def type_name(self, node: ast.expr) -> str:
        """`type=` as a name: int, float, str, or the callable's own name."""
        try:
            value = self(node)
        except NotStatic:
            return ast.unparse(node)
        return str(value)


def template(node: ast.expr) -> str:
    """A message as written: f-string fields stay `{expression}`, concatenations joined."""
    match node:
        case ast.Constant(value=str() as text):
            return text
        case ast.JoinedStr(values=values):
            parts = []
            for value in values:
                if isinstance(value, ast.Constant):
                    parts.append(str(value.value))
                elif isinstance(value, ast.FormattedValue):
                    parts.append("{" + ast.unparse(value.value) + "}")
            return "".join(parts)
        case ast.BinOp(left=left, op=ast.Add(), right=right):
            return template(left) + template(right)
        case ast.BinOp(left=left, op=ast.Mod(), right=_):
            return template(left)
    raise NotStatic(ast.unparse(node))


def module_constants(tree: ast.Module, into: dict[str, Any] | None = None) -> dict[str, Any]:
    """Module-level `NAME = <static value>` assignments, in order (later ones may use earlier)."""
    constants: dict[str, Any] = {} if into is None else into
    evaluate = StaticEval(constants)
    for statement in tree.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets, value = [statement.target], statement.value
        for target in targets:
            if isinstance(target, ast.Name) and value is not None:
                try:
                    constants[target.id] = evaluate(value)
                except (NotStatic, TypeError):
                    continue
    return constants


def record_defaults(tree: ast.Module, class_name: str, constants: dict[str, Any]) -> dict[str, Any]:
    """`field: T = default` in a class body, for the defaults that are static."""
    evaluate = StaticEval(constants)
    defaults: dict[str, Any] = {}
    for statement in tree.body:
        if isinstance(statement, ast.ClassDef) and statement.name == class_name:
            for item in statement.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is not None:
                    try:
                        defaults[item.target.id] = evaluate(item.value)
                    except (NotStatic, TypeError):
                        continue
    return defaults
