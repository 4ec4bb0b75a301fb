"""Arguments for running a program from the command line: shapes, random data, devices,
and the comparison of a result with the embedded executor's."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from stencilchain.app.errors import CLIError
from stencilchain.program import ir
from stencilchain.program.device import Device
from stencilchain.program.dimensions import Dimension
from stencilchain.program.dtypes import ScalarType
from stencilchain.program.ir_walk import written_fields
from stencilchain.program.program import Program
from stencilchain.runtime.toolchain import Toolchain

DEFAULT_SIZE = 64


def program_dims(program: ir.Program) -> tuple[Dimension, ...]:
    """The dimensions of the program's fields, in the order they first appear."""
    dims: dict[Dimension, None] = {}
    for param in program.params:
        if isinstance(param.type, ir.FieldType):
            dims.update(dict.fromkeys(param.type.dims))
    return tuple(dims)


def parse_shape(text: str | None, program: ir.Program) -> dict[Dimension, int]:
    """The size of each dimension of `program` from `512x512` (one size per dimension,
    in `program_dims` order; a single size applies to all), 64 each when `text` is None."""
    dims = program_dims(program)
    names = "x".join(d.name for d in dims) or "(none)"
    if text is None:
        return dict.fromkeys(dims, DEFAULT_SIZE)
    if re.fullmatch(r"\d+(x\d+)*", text.strip()) is None:
        raise CLIError(
            f"shape {text!r} is not valid: expected sizes like 512x512 (dimensions {names})"
        )
    sizes = [int(s) for s in text.strip().split("x")]
    if len(sizes) == 1:
        sizes *= len(dims)
    if len(sizes) != len(dims):
        raise CLIError(
            f"shape {text!r} has {len(sizes)} sizes but {program.name} has {len(dims)} "
            f"dimensions ({names}): give one size per dimension, e.g. {'x'.join(['64'] * len(dims))}"
        )
    if any(s < 1 for s in sizes):
        raise CLIError(f"shape {text!r}: every size must be at least 1")
    return dict(zip(dims, sizes))


def format_shape(sizes: Mapping[Dimension, int]) -> str:
    return "x".join(str(s) for s in sizes.values())


def random_arguments(
    program: ir.Program, sizes: Mapping[Dimension, int], rng: np.random.Generator
) -> list[Any]:
    """One argument per parameter: floats in [0, 1), ints in [1, 9], random bools; scalars
    as NumPy scalars of their dtype (floats in [0, 1), ints in [1, 9])."""
    args: list[Any] = []
    for param in program.params:
        if isinstance(param.type, ir.FieldType):
            shape = tuple(sizes[d] for d in param.type.dims)
            args.append(_random(param.type.dtype, shape, rng))
        else:
            assert isinstance(param.type, ScalarType)
            args.append(param.type.numpy.type(_random(param.type, (), rng)))
    return args


def _random(dtype: ScalarType, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    if dtype.is_bool:
        return rng.random(shape) < 0.5
    if dtype.is_integer:
        return rng.integers(1, 10, size=shape).astype(dtype.numpy)  # no division by zero
    return rng.random(shape).astype(dtype.numpy)


def copy_arguments(args: Sequence[Any]) -> list[Any]:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def to_device(args: Sequence[Any], device: Device) -> list[Any]:
    """Arrays moved to `device` (cupy arrays on the GPU); scalars as they are."""
    if device is Device.CPU:
        return list(args)
    import cupy

    return [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]


def to_host(args: Sequence[Any]) -> list[Any]:
    """NumPy arrays of GPU arrays; everything else as it is."""
    result = []
    for a in args:
        if hasattr(a, "__cuda_array_interface__") and not isinstance(a, np.ndarray):
            import cupy

            a = cupy.asnumpy(a)
        result.append(a)
    return result


def synchronize(device: Device) -> None:
    """Wait for the GPU, so that a time covers the work, not just its launch."""
    if device is Device.GPU:
        import cupy

        cupy.cuda.Device().synchronize()


@dataclasses.dataclass(frozen=True)
class Comparison:
    """The largest difference of each output from the reference, and whether all are close."""

    max_difference: dict[str, float]
    mismatched: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.mismatched


# (rtol, atol) by dtype: compiled code may contract a*b+c into one rounding (FMA)
_TOLERANCE = {"float64": (1e-9, 1e-9), "float32": (1e-4, 1e-5)}


def compare(program: ir.Program, actual: Sequence[Any], expected: Sequence[Any]) -> Comparison:
    """Compare the written fields of `actual` with `expected` (host arrays)."""
    written = written_fields(program)
    differences: dict[str, float] = {}
    mismatched = []
    for param, a, e in zip(program.params, actual, expected):
        if param.name not in written:
            continue
        a, e = np.asarray(a), np.asarray(e)
        rtol, atol = _TOLERANCE.get(str(e.dtype), (0.0, 0.0))
        wide_a, wide_e = a.astype(np.float64), e.astype(np.float64)
        with np.errstate(invalid="ignore"):
            diff = np.abs(wide_a - wide_e)
        both_nan = np.isnan(wide_a) & np.isnan(wide_e)
        diff = np.where(both_nan, 0.0, np.where(np.isnan(diff), np.inf, diff))
        differences[param.name] = float(np.max(diff, initial=0.0)) if diff.size else 0.0
        if not np.allclose(wide_a, wide_e, rtol=rtol, atol=atol, equal_nan=True):
            mismatched.append(param.name)
    return Comparison(differences, tuple(mismatched))


def bound_with_workspace(
    program: Program, toolchain: Toolchain, args: Sequence[Any]
) -> Callable[..., None]:
    """`program` compiled by `toolchain`, ready for calls like `args`: given a workspace of
    the size those calls need when the toolchain keeps temporaries in one (DaCe's
    `external_workspace`)."""
    bound = toolchain.executor(program)  # what program.with_backend(toolchain) returns
    bound.compile()
    needed = bound.workspace_size(*args)
    if needed:
        if toolchain.device is Device.GPU:
            import cupy

            bound.set_workspace(cupy.empty(needed, cupy.uint8))
        else:
            bound.set_workspace(np.empty(needed, np.uint8))
    return bound
