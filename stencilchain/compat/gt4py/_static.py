"""gt4py's static parameters in compat: the scalar parameters a program compiles in, one
specialisation per value set (`@program(static_params=...)`, `Program.compile(n=[...])`,
a scalar bound by `with_bound_args`), checked by the rules of stencilchain's own static
programs (program/static_program.py) and refused in gt4py's words."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stencilchain.errors import ArgumentError
from stencilchain.program import ir
from stencilchain.program.dtypes import ScalarType
from stencilchain.program.static_program import (
    StaticParams,
    python_kind,
    python_value,
    static_params_of,
)
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


def static_key(static: StaticParams, values: Sequence[Any], where: str) -> StaticKey:
    """The key of one value per static parameter (in `static.names`' order), each checked."""
    refused = static.refused(values)
    if refused is not None:
        name, dtype, value = refused
        raise ArgumentError(
            f"{where}: static argument '{name}' expected a value of type {dtype.name} (a "
            f"Python {python_kind(dtype)} or a NumPy {dtype.name}), got {value!r}"
        )
    return tuple(zip(static.names, (python_value(v) for v in values)))


def static_params(
    names: Sequence[str],
    parameters: Sequence[str],
    annotations: Mapping[str, Any],
    error: Callable[[str], Exception],
) -> StaticParams:
    """The static parameters `names` of a program of `parameters` annotated (in
    stencilchain's terms) with `annotations`, checked by the DSL's rules
    (static_program.static_params_of); `error(reason)` is raised where one is not a
    parameter, is named twice or is not a scalar."""
    return static_params_of(
        tuple(names),
        tuple(parameters),
        lambda name: scalar_of(annotations.get(name)),
        _Refusals(tuple(parameters), annotations, error),
    )


@dataclasses.dataclass(frozen=True)
class _Refusals:
    """gt4py's words for the static parameters the DSL's rules refuse."""

    parameters: tuple[str, ...]
    annotations: Mapping[str, Any]
    error: Callable[[str], Exception]

    def not_a_parameter(self, name: str) -> Exception:
        return self.error(
            f"'{name}' is not a parameter of the program (its parameters: "
            f"{', '.join(self.parameters)}), so it cannot be static"
        )

    def named_twice(self, names: tuple[str, ...]) -> Exception:
        return self.error(f"static_params names a parameter twice ({', '.join(names)})")

    def not_a_scalar(self, name: str) -> Exception:
        annotation = self.annotations.get(name)
        kind = "a field" if isinstance(annotation, ir.FieldType) else "no scalar"
        return self.error(
            f"invalid static argument '{name}': it is {kind} ({annotation!r}); "
            "a static parameter is a scalar, its value compiled in"
        )


def text(key: StaticKey) -> str:
    return ", ".join(f"{n}={v!r}" for n, v in key)


__all__ = ["StaticKey", "scalar_of", "static_key", "static_params", "text"]
