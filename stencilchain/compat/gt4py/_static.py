"""gt4py's static parameters in compat: the scalar parameters a program compiles in, one
specialisation per value set (`@program(static_params=...)`, `Program.compile(n=[...])`,
a scalar bound by `with_bound_args`), checked as stencilchain's own static programs check
them (program/static_program.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stencilchain.errors import ArgumentError
from stencilchain.program import ir
from stencilchain.program.dtypes import ScalarType
from stencilchain.program.static_program import python_kind, python_value, value_check
from stencilchain.program.tuple_params import annotation_tree

# a specialisation's static values: (name, value) pairs in parameter order (() for none)
StaticKey = tuple[tuple[str, Any], ...]


def scalar_of(annotation: object) -> ScalarType | None:
    """The dtype of a parameter annotated as a scalar (gt4py's `float`, `int32`, ...), or
    None for a field, a tuple or anything else."""
    if isinstance(annotation, ScalarType):
        return annotation
    tree = annotation_tree(tuple.__class_getitem__((annotation,)), python_scalars=True)
    leaf = tree[0] if isinstance(tree, tuple) else None
    return leaf if isinstance(leaf, ScalarType) else None


@dataclasses.dataclass(frozen=True)
class StaticParams:
    """A program's static parameters: their names and positions in parameter order, and
    each one's dtype with the check of its values."""

    names: tuple[str, ...]
    positions: tuple[int, ...]
    dtypes: tuple[ScalarType, ...]
    checks: tuple[Callable[[Any], bool], ...]

    def key(self, values: Sequence[Any], where: str) -> StaticKey:
        """The key of one value per static parameter (in `names`' order), each checked."""
        for name, dtype, check, value in zip(self.names, self.dtypes, self.checks, values):
            if not check(value):
                raise ArgumentError(
                    f"{where}: static argument '{name}' expected a value of type {dtype.name} (a "
                    f"Python {python_kind(dtype)} or a NumPy {dtype.name}), got {value!r}"
                )
        return tuple(zip(self.names, (python_value(v) for v in values)))


def static_params(
    names: Sequence[str],
    parameters: Sequence[str],
    annotations: Mapping[str, Any],
    error: Callable[[str], Exception],
) -> StaticParams:
    """The static parameters `names` of a program of `parameters` annotated (in
    stencilchain's terms) with `annotations`; `error(reason)` is raised where one is not a
    parameter or not a scalar."""
    for name in names:
        if name not in parameters:
            raise error(
                f"'{name}' is not a parameter of the program (its parameters: "
                f"{', '.join(parameters)}), so it cannot be static"
            )
    if len(set(names)) != len(names):
        raise error(f"static_params names a parameter twice ({', '.join(names)})")
    ordered = tuple(p for p in parameters if p in names)
    dtypes = []
    for name in ordered:
        dtype = scalar_of(annotations.get(name))
        if dtype is None:
            kind = "a field" if isinstance(annotations.get(name), ir.FieldType) else "no scalar"
            raise error(
                f"invalid static argument '{name}': it is {kind} ({annotations.get(name)!r}); "
                "a static parameter is a scalar, its value compiled in"
            )
        dtypes.append(dtype)
    return StaticParams(
        ordered,
        tuple(parameters.index(n) for n in ordered),
        tuple(dtypes),
        tuple(value_check(d) for d in dtypes),
    )


def text(key: StaticKey) -> str:
    return ", ".join(f"{n}={v!r}" for n, v in key)


__all__ = ["StaticKey", "StaticParams", "scalar_of", "static_params", "text"]
