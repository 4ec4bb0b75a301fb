"""The DaCe translation (program IR -> SDFG text): its settings, the canonical text, the
SDFG's calling convention, and the meaning of what it builds: each SDFG is compiled with
DaCe and run on C-order, Fortran-order and sliced arrays against the embedded executor.

Compiles (about 0.5 s each here): the 5 examples, the all-constructs program three
times (auto-optimized; neither optimized nor transformed; unit stride) and a 1-D
program: 9. GPU SDFGs are only generated (and, where nvcc is installed, their CUDA
compiled in a slow test); nothing runs on a GPU.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

dace = pytest.importorskip("dace")

import stencilchain as sc  # noqa: E402
from stencilchain.examples import ALL_EXAMPLES, hdiff, uses_mesh  # noqa: E402
from stencilchain.program import ir  # noqa: E402
from stencilchain.program.device import Device  # noqa: E402
from stencilchain.steps.dace.bindings import DaCeBindings  # noqa: E402
from stencilchain.steps.dace.calling_convention import (  # noqa: E402
    size_symbol,
    stride_symbol,
    symbol_names,
    temporary_layouts,
)
from stencilchain.steps.dace.sdfg_text import sdfg_from_source, sdfg_to_source  # noqa: E402
from stencilchain.steps.dace.tasklets import cpp_literal  # noqa: E402
from stencilchain.steps.dace.translator import (  # noqa: E402
    DERIVED_AUTO_OPTIMIZE_ARGS,
    DaCeTranslator,
)
from stencilchain.steps.settings import DataLayout  # noqa: E402
from stencilchain.steps.stages import ProgramSource  # noqa: E402

I = sc.Dimension("I")
J = sc.Dimension("J")

F64 = sc.Field[[I, J], sc.float64]
F32 = sc.Field[[I, J], sc.float32]
I32 = sc.Field[[I, J], sc.int32]
I64 = sc.Field[[I, J], sc.int64]
B = sc.Field[[I, J], sc.bool_]
F1 = sc.Field[[I], sc.float64]

# --- a program with every construct of the DSL -----------------------------------------------


@sc.field_operator
def lap(a: F64) -> F64:
    return -4.0 * a + a(I + 1) + a(I - 1) + a(J + 1) + a(J - 1)


@sc.field_operator
def float64_ops(a: F64, b: F64, s: sc.float64) -> F64:
    shifted = a(I + 1) - a(I - 1) + b(J + 2) - b(I - 1, J - 1)
    power = sc.math.abs(b) ** s + b**2 + 2.0 ** sc.math.minimum(b, 1.0)
    return (a + b) * (a - b) / (sc.math.abs(b) + 1.0) + shifted + power - (-b) * s + 0.1


@sc.field_operator
def float32_ops(x: F32, y: F32, s: sc.float32) -> F32:
    power = sc.math.abs(y) ** x + y**3 + sc.math.abs(x) ** 0.5
    return (x + y) * (x - y) / (sc.math.abs(y) + 1.0) + power - (-y) * s + 0.1


@sc.field_operator
def int32_ops(m: I32, n: I32, s: sc.int32) -> I32:
    return (m + n) * (m - n) - -m + m**3 + n**0 + s * n + sc.math.abs(m) - 7


@sc.field_operator
def int64_ops(p: I64, q: I64, s: sc.int64) -> I64:
    return (p + q) * (p - q) - -p + p**5 + s * q + sc.math.abs(p) - 9223372036854775807


@sc.field_operator
def logic(a: F64, b: F64, m: I32, n: I32, bb: B, flag: sc.bool_) -> B:
    cmp = (a < b) | (a <= 0.0) & (m >= n) | (m > 3) & (n != 2) | (a == b) & (a > -1.0)
    return cmp & ~bb | (bb == flag) & (a != b) | (m == n)


@sc.field_operator
def math64(a: F64, b: F64):
    pos = sc.math.abs(b) + 0.5
    return (
        sc.math.sqrt(pos) + sc.math.exp(b) + sc.math.log(pos) + sc.math.sin(b) + sc.math.cos(b),
        sc.math.floor(b * 3.0) + sc.math.ceil(b * 3.0) + sc.math.abs(b),
        sc.math.minimum(a, b) + sc.math.maximum(a, b) + sc.math.maximum(b, a),
    )


@sc.field_operator
def math32(x: F32, y: F32, m: I32, n: I32, p: I64):
    pos = sc.math.abs(y) + 0.5
    return (
        sc.math.sqrt(pos) + sc.math.exp(y) + sc.math.log(pos) + sc.math.sin(y) + sc.math.cos(y)
        + sc.math.floor(y * 3.0) + sc.math.ceil(y * 3.0)
        + sc.math.minimum(x, y) + sc.math.maximum(y, x),
        sc.math.minimum(m, n) - sc.math.maximum(m, 7) + sc.math.abs(n),
        sc.math.maximum(p, sc.astype(m, sc.int64)),
    )  # fmt: skip


@sc.field_operator
def casts(a: F64, b: F64, x: F32, m: I32, p: I64, bb: B):
    return (
        sc.astype(x, sc.float64) + sc.astype(m, sc.float64) + sc.astype(bb, sc.float64)
        + sc.astype(p, sc.float64),
        sc.astype(b, sc.float32) + sc.astype(p, sc.float32),
        sc.astype(b * 40.0, sc.int32) + sc.astype(p, sc.int32) + sc.astype(bb, sc.int32),
        sc.astype(m, sc.int64) + sc.astype(b * 1e6, sc.int64),
        sc.astype(b, sc.bool_) & sc.astype(p, sc.bool_) | sc.astype(m, sc.bool_) & bb
        | sc.astype(a, sc.bool_),
    )  # fmt: skip


@sc.field_operator
def wheres(a: F64, b: F64, m: I32, bb: B, s: sc.float64, flag: sc.bool_):
    return (
        sc.where(a > b, a, b) + sc.where(bb, s, -1) + sc.where(flag, b, 0.5)
        + sc.where(bb, a, float("nan")) * 0.0 + sc.where(a > 0.0, float("inf"), b) * 0.0,
        sc.where(bb, m, 2147483647) + sc.where(m > 0, -5, m),
    )  # fmt: skip


@sc.field_operator
def scale_square(a: F64, s: sc.float64) -> F64:
    return a * s + s * s - 1.0  # `s * s` folds when s is a literal argument


@sc.field_operator
def smooth(a: F64, s: sc.float64) -> F64:
    return a + scale_square(lap(a), s)(J + 1) - lap(a(I - 1))


@sc.field_operator
def bump(p: I64) -> I64:
    return p + 1


@sc.program
def every_construct(
    a: F64, b: F64, x: F32, y: F32, m: I32, n: I32, p: I64, q: I64, bb: B,
    s64: sc.float64, s32: sc.float32, si32: sc.int32, si64: sc.int64, flag: sc.bool_,
    o64: F64, o32: F32, oi32: I32, oi64: I64, ob: B,
    t0: F64, t1: F64, t2: F64, t3: F32, t4: I32, t5: I64, t6: F64, t7: F32, t8: I32, t9: I64,
    t10: B, t11: F64, t12: I32, t13: F64, t14: F64, t15: F64,
):  # fmt: skip
    float64_ops(a, b, s64, out=o64)
    float32_ops(x, y, s32, out=o32)
    int32_ops(m, n, si32, out=oi32)
    int64_ops(p, q, si64, out=oi64)
    logic(a, b, m, n, bb, flag, out=ob, domain={I: (1, -1), J: (-5, None)})
    math64(a, b, out=(t0, t1, t2))
    math32(x, y, m, n, p, out=(t3, t4, t5))
    casts(a, b, x, m, p, bb, out=(t6, t7, t8, t9, t10))
    wheres(a, b, m, bb, s64, flag, out=(t11, t12))
    lap(a, out=t13, domain={I: (2, 8), J: (1, -1)})
    # chained: reads t13 shifted, on I: [max(2, 4), min(end - 1, 7)); a literal argument
    smooth(t13, 0.25, out=t14)
    scale_square(t14, s64, out=t15, domain={I: (-5, None)})
    bump(p, out=p)  # reads and writes p pointwise, after every other read of p


EVERY_CONSTRUCT_SCALARS = {
    "s64": np.float64(0.75),
    "s32": np.float32(-1.25),
    "si32": np.int32(-3),
    "si64": np.int64(123456789),
    "flag": np.bool_(True),
}


@sc.field_operator
def copy(a: F64) -> F64:
    return a


@sc.program
def sometimes_empty(f: F64, g: F64, h: F64, o: F64):
    lap(f, out=g, domain={I: (4, -1), J: (1, -1)})  # empty for n_I <= 5
    copy(f, out=h)  # never empty
    lap(g, out=o)  # on what the first call wrote, less one point


@sc.field_operator
def shift1d(f: F1, s: sc.float64) -> F1:
    return f(I - 1) * s + f(I + 2)


@sc.program
def one_dimension(f: F1, out: F1, s: sc.float64):
    shift1d(f, s, out=out)


# --- arrays in every layout ------------------------------------------------------------------

LAYOUTS = ("C", "F", "sliced")


def in_layout(values: np.ndarray, layout: str) -> np.ndarray:
    """A copy of `values` as C-order, Fortran-order, or a strided view of a larger array
    (every stride a multiple of the element size, the first axis reversed)."""
    if layout in ("C", "F"):
        return np.array(values, order=layout)
    big = np.zeros(tuple(2 * n + 1 for n in values.shape), dtype=values.dtype)
    index = [slice(1, None, 2)] * values.ndim
    index[0] = slice(2 * values.shape[0] - 1, None, -2)
    view = big[tuple(index)]
    view[...] = values
    assert values.size <= 1 or not (view.flags.c_contiguous or view.flags.f_contiguous)
    return view


def unit_stride_layout(values: np.ndarray, layout: str) -> np.ndarray:
    """C-order, or a view with unit innermost stride and a padded, reversed first axis."""
    if layout == "C":
        return np.array(values, order="C")
    big = np.zeros(
        (2 * values.shape[0] + 1, *values.shape[1:-1], values.shape[-1] + 3), values.dtype
    )
    view = big[2 * values.shape[0] - 1 :: -2, ..., 2 : 2 + values.shape[-1]]
    view[...] = values
    assert view.strides[-1] == view.itemsize and not view.flags.c_contiguous
    return view


def random_value(
    shape: tuple[int, ...], dtype: np.dtype[Any], rng: np.random.Generator
) -> np.ndarray:
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "i":
        values = rng.integers(-50, 50, size=shape).astype(dtype)
        # extremes, so that + - * ** abs and casts wrap around somewhere
        info = np.iinfo(dtype)
        values.flat[:4] = [info.min, info.max, info.min + 1, info.max - 1][: values.size]
        return values
    values = (rng.random(shape) * 4.0 - 2.0).astype(dtype)
    return values


def make_arguments(
    program: sc.Program, shape: dict[sc.Dimension, int], seed: int
) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    args: dict[str, Any] = {}
    for param in program.ir.params:
        if isinstance(param.type, ir.FieldType):
            dims = tuple(shape[d] for d in param.type.dims)
            args[param.name] = random_value(dims, param.type.dtype.numpy, rng)
        else:
            args[param.name] = EVERY_CONSTRUCT_SCALARS.get(param.name, param.type.numpy.type(0.5))
    if program is every_construct:
        a = args["a"]
        a.flat[::7] = np.nan  # NaN through minimum/maximum, comparisons and where
        args["b"][::3] = a[::3]  # equal values for == and <=
        args["y"].flat[::5] = np.float32(np.nan)
        args["p"] = np.where(np.abs(args["p"]) > 10**6, args["p"], args["p"] * 10**8)
        args["n"].flat[::4] = 2
    return args


def dace_call_arguments(
    program: ir.Program, values: dict[str, Any], layout: DataLayout
) -> dict[str, Any]:
    """The keyword arguments of the compiled SDFG: arrays, scalars, sizes and strides."""
    kwargs = dict(values)
    for param in program.params:
        if isinstance(param.type, ir.FieldType):
            array = values[param.name]
            for axis, dim in enumerate(param.type.dims):
                kwargs[size_symbol(dim)] = array.shape[axis]
                stride = array.strides[axis] // array.itemsize
                if axis < len(param.type.dims) - 1 or layout is DataLayout.STRIDED:
                    kwargs[stride_symbol(param.name, axis)] = stride
                else:
                    assert stride == 1
    if layout is DataLayout.STRIDED:  # the shim's dense_stride
        for name, like in temporary_layouts(program).items():
            array = values[like]
            magnitude = [abs(s) for s in array.strides]
            for axis in range(array.ndim):
                faster = [
                    k
                    for k in range(array.ndim)
                    if magnitude[k] < magnitude[axis]
                    or (magnitude[k] == magnitude[axis] and k > axis)
                ]
                kwargs[stride_symbol(name, axis)] = int(
                    np.prod([max(array.shape[k], 1) for k in faster], dtype=np.int64)
                )
    assert set(kwargs) - set(values) == set(symbol_names(program, layout))
    return kwargs


def assert_same(program: ir.Program, got: dict[str, Any], expected: dict[str, Any]) -> None:
    for param in program.params:
        if not isinstance(param.type, ir.FieldType):
            continue
        g, e = got[param.name], expected[param.name]
        assert g.dtype == e.dtype
        if param.type.dtype.is_float:
            tol = 1e-5 if param.type.dtype.name == "float32" else 1e-12
            np.testing.assert_allclose(g, e, rtol=tol, atol=tol, err_msg=param.name)
        else:
            np.testing.assert_array_equal(g, e, err_msg=param.name, strict=True)


def call_sdfg(compiled: Any, kwargs: dict[str, Any]) -> None:
    """DaCe's generic call; views (sliced arrays) are what the strides are for."""
    with dace.config.set_temporary("compiler", "allow_view_arguments", value=True):
        compiled(**kwargs)


# --- compiling (shared across tests) ----------------------------------------------------------


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("dace_build")


Compiler = Callable[[sc.Program, DaCeTranslator], Any]


@pytest.fixture(scope="module")
def compile_program(build_dir: Path) -> Iterator[Compiler]:
    """Translate, deserialize and compile (once per program and settings)."""
    cache: dict[tuple[str, DaCeTranslator], Any] = {}

    def compile_(program: sc.Program, step: DaCeTranslator) -> Any:
        key = (program.ir.fingerprint(), step)
        if key not in cache:
            source = translate(program, step)
            sdfg = sdfg_from_source(source.source_code)
            folder = build_dir / f"{program.ir.name}_{len(cache)}"
            with dace.config.set_temporary("default_build_folder", value=str(folder)):
                cache[key] = sdfg.compile()
        return cache[key]

    yield compile_
    cache.clear()


def run_both(
    compiled: Any,
    program: sc.Program,
    shape: dict[sc.Dimension, int],
    arrange: Callable[[np.ndarray, str], np.ndarray],
    layout: str,
    data_layout: DataLayout,
    seed: int = 0,
) -> None:
    values = make_arguments(program, shape, seed)
    arranged = {
        k: arrange(v, layout) if isinstance(v, np.ndarray) else v for k, v in values.items()
    }
    expected = {k: np.array(v) if isinstance(v, np.ndarray) else v for k, v in values.items()}
    with np.errstate(all="ignore"):
        program(*expected.values())
    call_sdfg(compiled, dace_call_arguments(program.ir, arranged, data_layout))
    assert_same(program.ir, arranged, expected)


@functools.cache
def translate(program: sc.Program, step: DaCeTranslator) -> ProgramSource:
    """The translation, once per program and settings in this process."""
    return step(program.ir)


CPU = DaCeTranslator(device=Device.CPU)
GPU = DaCeTranslator(device=Device.GPU)
CPU_NO_OPT = DaCeTranslator(device=Device.CPU, auto_optimize=False)
CPU_PLAIN = DaCeTranslator(device=Device.CPU, auto_optimize=False, disable_transforms=True)
CPU_UNIT = DaCeTranslator(device=Device.CPU, data_layout=DataLayout.UNIT_STRIDE)


# --- meaning: compiled SDFGs against the embedded executor -------------------------------------


@pytest.mark.parametrize("example", ALL_EXAMPLES, ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_examples_match_the_embedded_executor(example: Any, compile_program: Compiler) -> None:
    try:
        compiled = compile_program(example.PROGRAM, CPU)
    except sc.UnsupportedError:
        if not uses_mesh(example):
            raise
        return  # neighbour reads are not translated yet; once they are, they must match
    program = example.PROGRAM.ir
    for layout in LAYOUTS:
        values = example.make_inputs(example.DEFAULT_SHAPE, np.random.default_rng(3))
        arranged = {
            k: in_layout(v, layout) if isinstance(v, np.ndarray) else v for k, v in values.items()
        }
        call_sdfg(compiled, dace_call_arguments(program, arranged, DataLayout.STRIDED))
        expected = {k: np.array(v) if isinstance(v, np.ndarray) else v for k, v in values.items()}
        example.PROGRAM(*expected.values())
        assert_same(program, arranged, expected)
        for name, reference in example.reference(**values).items():
            np.testing.assert_allclose(arranged[name], reference, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(
    "step", [CPU, CPU_PLAIN], ids=["auto_optimize", "no_optimize_no_transforms"]
)
def test_every_construct_matches_the_embedded_executor(
    step: DaCeTranslator, layout: str, compile_program: Compiler
) -> None:
    compiled = compile_program(every_construct, step)
    run_both(compiled, every_construct, {I: 11, J: 13}, in_layout, layout, DataLayout.STRIDED)


@pytest.mark.parametrize("shape", [(9, 8), (7, 5), (6, 13), (4, 13), (3, 2), (1, 1)], ids=str)
def test_empty_domains_do_nothing(shape: tuple[int, int], compile_program: Compiler) -> None:
    compiled = compile_program(sometimes_empty, CPU)
    for layout in LAYOUTS:
        run_both(
            compiled,
            sometimes_empty,
            dict(zip((I, J), shape)),
            in_layout,
            layout,
            DataLayout.STRIDED,
        )


@pytest.mark.parametrize("layout", ["C", "sliced"])
def test_unit_stride_layout(layout: str, compile_program: Compiler) -> None:
    compiled = compile_program(every_construct, CPU_UNIT)
    run_both(
        compiled, every_construct, {I: 9, J: 10}, unit_stride_layout, layout, DataLayout.UNIT_STRIDE
    )


@pytest.mark.parametrize("layout", LAYOUTS)
def test_one_dimensional_program(layout: str, compile_program: Compiler) -> None:
    compiled = compile_program(one_dimension, CPU)
    run_both(compiled, one_dimension, {I: 17}, in_layout, layout, DataLayout.STRIDED)


# --- the SDFG and its text ------------------------------------------------------------------------


def test_program_source() -> None:
    source = translate(every_construct, CPU)
    assert (source.language, source.entry_point, source.device) == (
        "sdfg",
        "every_construct",
        Device.CPU,
    )
    assert source.program is every_construct.ir
    assert "guid" not in source.source_code
    assert translate(every_construct, GPU).device is Device.GPU


def test_calling_convention() -> None:
    program = every_construct.ir
    sdfg = sdfg_from_source(translate(every_construct, CPU_PLAIN).source_code)
    fields = [p for p in program.params if isinstance(p.type, ir.FieldType)]
    for param in program.params:
        desc = sdfg.arrays[param.name]
        assert not desc.transient
        if isinstance(param.type, ir.FieldType):
            assert desc.dtype.type == param.type.dtype.numpy.type
            assert [str(s) for s in desc.shape] == ["n_I", "n_J"]
            assert [str(s) for s in desc.strides] == [f"{param.name}_s0", f"{param.name}_s1"]
        else:
            assert isinstance(desc, dace.data.Scalar)
            assert desc.dtype.type == param.type.numpy.type
    names = symbol_names(program, DataLayout.STRIDED)
    assert len(names) == 2 + 2 * len(fields)
    for name in names:
        assert sdfg.symbols[name] == dace.int64
    assert set(sdfg.free_symbols) == set(names)
    assert len(sdfg.arrays) == len(program.params)  # no transients

    unit = sdfg_from_source(translate(every_construct, CPU_UNIT).source_code)
    for param in fields:
        assert [str(s) for s in unit.arrays[param.name].strides] == [f"{param.name}_s0", "1"]
    assert set(unit.free_symbols) == set(symbol_names(program, DataLayout.UNIT_STRIDE))
    assert not any(name.endswith("_s1") for name in unit.free_symbols)


K = sc.Dimension("K")


@sc.program
def with_unused(f: F1, z: sc.Field[[K], sc.float64], out: F1, s: sc.float32, t: sc.bool_):
    shift1d(f, 2.0, out=out)


def test_unused_parameters_stay_parameters() -> None:
    sdfg = sdfg_from_source(translate(with_unused, CPU).source_code)
    arguments = list(sdfg.arglist())
    assert {"f", "z", "out", "s", "t"} <= set(arguments)
    # the size and stride of z are symbols of the SDFG but no parameter of its code
    assert set(arguments) - {"f", "z", "out", "s", "t"} == {"n_I", "f_s0", "out_s0"}
    assert set(sdfg.free_symbols) == set(symbol_names(with_unused.ir, DataLayout.STRIDED))


def test_each_call_is_a_map_over_its_domain_with_one_connector_per_access() -> None:
    sdfg = sdfg_from_source(translate(smooth_program, CPU_PLAIN).source_code)
    tasklets = [(n, p) for n, p in sdfg.all_nodes_recursive() if isinstance(n, dace.nodes.Tasklet)]
    # one tasklet per possible innermost dimension (I or J)
    assert len(tasklets) == 2
    tasklet, state = tasklets[0]
    assert tasklet.language == dace.Language.CPP
    memlets = sorted(str(e.data) for e in state.in_edges(tasklet))
    # distinct (field, offset) reads of smooth1(f) = f + lap(f)(J+1) * s - lap(f(I-1))
    assert memlets == sorted(
        [f"f[{i}, {j}]" for i, j in {
            ("i_I", "i_J"), ("i_I", "i_J + 1"), ("i_I + 1", "i_J + 1"), ("i_I - 1", "i_J + 1"),
            ("i_I", "i_J + 2"), ("i_I - 1", "i_J"), ("i_I - 2", "i_J"), ("i_I - 1", "i_J - 1"),
        }] + ["s[0]"]
    )  # fmt: skip
    assert sorted(tasklet.out_connectors) == ["sc_out0_out"]
    maps = [n for n, _ in sdfg.all_nodes_recursive() if isinstance(n, dace.nodes.MapEntry)]
    assert sorted(tuple(m.map.params) for m in maps) == [("i_I", "i_J"), ("i_J", "i_I")]
    assert {str(m.map.range) for m in maps} <= {"2:n_I - 1, 1:n_J - 2", "1:n_J - 2, 2:n_I - 1"}


@sc.field_operator
def smooth1(f: F64, s: sc.float64) -> F64:
    return f + lap(f)(J + 1) * s - lap(f(I - 1))


@sc.program
def smooth_program(f: F64, out: F64, s: sc.float64):
    smooth1(f, s, out=out)


def test_float32_is_computed_in_float32() -> None:
    sdfg = sdfg_from_source(translate(every_construct, CPU_PLAIN).source_code)
    (code,) = {
        n.code.as_string
        for n, _ in sdfg.all_nodes_recursive()
        if isinstance(n, dace.nodes.Tasklet) and n.label == "call1_float32_ops"
    }
    assert "const float " in code and "double " not in code
    assert "static_cast<float>(0.1)" in code  # literals are rounded, never promote
    assert "std::pow(" in code


def test_domain_bounds_take_max_and_min() -> None:
    sdfg = sdfg_from_source(translate(every_construct, CPU_PLAIN).source_code)
    ranges = {
        str(n.map.range)
        for n, _ in sdfg.all_nodes_recursive()
        if isinstance(n, dace.nodes.MapEntry) and n.map.params[-1] == "i_J"
    }
    # t14 = smooth(t13) reads t13 written on I: [2, end-2), J: [1, end): an inferred domain
    # bounded by both its own reads and what the earlier call wrote
    assert any("Max(" in r or "Min(" in r for r in ranges), ranges


def test_disable_transforms_keeps_constants_and_repeats() -> None:
    folded = translate(every_construct, CPU_NO_OPT).source_code
    plain = translate(every_construct, CPU_PLAIN).source_code
    # `s * s` with s = 0.25 folds to 0.0625 only with transforms
    assert "0.0625" in folded and "0.0625" not in plain

    def statements(step: DaCeTranslator) -> int:
        sdfg = sdfg_from_source(translate(hdiff.PROGRAM, step).source_code)
        codes = {
            n.code.as_string
            for n, _ in sdfg.all_nodes_recursive()
            if isinstance(n, dace.nodes.Tasklet)
        }
        (code,) = codes  # one call; the same tasklet in each of its three maps
        return code.count(";")

    # hdiff's fluxes both compute the Laplacian at the centre: shared only with transforms
    assert statements(CPU_PLAIN) > statements(CPU_NO_OPT)


def test_literals_are_exact() -> None:
    assert cpp_literal(0.1, sc.float64) == "0.1"
    assert cpp_literal(-0.0, sc.float64) == "(-0.0)"
    assert cpp_literal(5e-324, sc.float64) == "5e-324"
    assert cpp_literal(0.1, sc.float32) == "static_cast<float>(0.1)"
    assert cpp_literal(float("nan"), sc.float64) == '__builtin_nan("")'
    assert cpp_literal(float("-inf"), sc.float32) == ("static_cast<float>(-__builtin_huge_val())")
    assert (
        cpp_literal(-(2**63), sc.int64) == "static_cast<std::int64_t>((-9223372036854775807LL - 1))"
    )
    assert cpp_literal(True, sc.bool_) == "true"
    for value in (0.1, 1e-300, 1.7976931348623157e308, 1.0 / 3.0):
        assert float(cpp_literal(value, sc.float64)) == value


def test_the_same_program_gives_the_same_text_in_every_process() -> None:
    script = textwrap.dedent(
        """
        import hashlib, sys
        sys.path.insert(0, sys.argv[1])
        from test_dace_translator import every_construct
        from stencilchain.examples import hdiff
        from stencilchain.program.device import Device
        from stencilchain.steps.dace.translator import DaCeTranslator
        for program in (every_construct, hdiff.PROGRAM):
            for device in (Device.CPU, Device.GPU):
                text = DaCeTranslator(device=device)(program.ir).source_code
                print(hashlib.sha256(text.encode()).hexdigest())
        text = DaCeTranslator(Device.CPU, auto_optimize=False)(hdiff.PROGRAM.ir).source_code
        print(hashlib.sha256(text.encode()).hexdigest())
        """
    )
    here = str(Path(__file__).parent)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, here],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        for seed in ("1", "2")
    ]
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        outputs.append(out.split())
    assert len(outputs[0]) == 5
    assert outputs[0] == outputs[1]
    # and this process agrees
    local = translate(every_construct, CPU).source_code
    assert hashlib.sha256(local.encode()).hexdigest() == outputs[0][0]


def test_source_round_trips() -> None:
    text = translate(every_construct, CPU).source_code
    sdfg = sdfg_from_source(text)
    assert sdfg.name == "every_construct"
    assert sdfg_to_source(sdfg) == text
    # nothing machine-specific: no paths of the code that built it
    assert "source_files" not in text and "debuginfo" not in text
    assert str(Path(sc.__file__).parent) not in text and str(Path(dace.__file__).parent) not in text


def test_parameter_names_that_clash_are_rejected() -> None:
    """At definition, for every toolchain (stencilchain.program.names); the translator's
    own check stays as a backstop for programs made from IR."""

    @sc.field_operator
    def scale(f: F64, n_I: sc.float64) -> F64:
        return f * n_I

    with pytest.raises(sc.DefinitionError, match="'n_I' is the name of the generated size"):

        @sc.program
        def clash(f: F64, out: F64, n_I: sc.float64):
            scale(f, n_I, out=out)


# --- GPU: generated without a GPU -----------------------------------------------------------------


@pytest.mark.parametrize("auto_optimize", [True, False])
def test_gpu_sdfg_generates_cuda(auto_optimize: bool, tmp_path: Path) -> None:
    step = DaCeTranslator(device=Device.GPU, auto_optimize=auto_optimize)
    sdfg = sdfg_from_source(translate(every_construct, step).source_code)
    for name, desc in sdfg.arrays.items():
        if isinstance(desc, dace.data.Array):
            assert desc.storage == dace.StorageType.GPU_Global, name
    maps = [n for n, _ in sdfg.all_nodes_recursive() if isinstance(n, dace.nodes.MapEntry)]
    assert maps and all(
        m.map.schedule in (dace.ScheduleType.GPU_Device, dace.ScheduleType.GPU_ThreadBlock)
        for m in maps
    )
    with dace.config.set_temporary("default_build_folder", value=str(tmp_path)):
        code = sdfg.generate_code()
    cuda = [c for c in code if c.language == "cu"]
    assert len(cuda) == 1 and "__global__" in cuda[0].clean_code


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_gpu_cuda_compiles_with_nvcc(tmp_path: Path) -> None:
    from dace.codegen import compiler

    sdfg = sdfg_from_source(translate(every_construct, GPU).source_code)
    with dace.config.set_temporary("default_build_folder", value=str(tmp_path)):
        code = sdfg.generate_code()
        compiler.generate_program_folder(sdfg, code, str(tmp_path / "prog"))
    include = Path(dace.__file__).parent / "runtime" / "include"
    (source,) = (tmp_path / "prog" / "src" / "cuda").glob("*.cu")
    result = subprocess.run(
        ["nvcc", "-std=c++20", "--expt-relaxed-constexpr", "-DWITH_CUDA", "-arch=sm_80",
         "-I", str(include), "-c", str(source), "-o", str(tmp_path / "prog.o")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-4000:]


# --- settings ----------------------------------------------------------------------------------------


def test_device_has_no_default() -> None:
    with pytest.raises(TypeError, match="device"):
        DaCeTranslator()  # type: ignore[call-arg]


@pytest.mark.parametrize(
    "settings",
    [
        {"device": "cpu"},
        {"device": Device.CPU, "data_layout": "unit_stride"},
        {"device": Device.CPU, "auto_optimize": 1},
        {"device": Device.CPU, "auto_optimize_args": ("validate", True)},
    ],
    ids=["device_as_text", "layout_as_text", "auto_optimize_as_int", "args_not_pairs"],
)
def test_settings_of_the_wrong_type_are_type_errors(settings: dict[str, Any]) -> None:
    with pytest.raises(TypeError):
        DaCeTranslator(**settings)


BAD_SETTINGS = [
    (DaCeTranslator, {"device": "cpu"}, TypeError, "DaCeTranslator.device must be a Device"),
    (DaCeTranslator, {"external_workspace": None}, TypeError,
     "DaCeTranslator.external_workspace must be a bool, got NoneType None"),
    (DaCeTranslator, {"auto_optimize_args": [("validate", True)]}, TypeError,
     "DaCeTranslator.auto_optimize_args must be a tuple of (name, value) pairs"),
    (DaCeBindings, {"device": "gpu"}, TypeError, "DaCeBindings.device must be a Device"),
    (DaCeBindings, {"data_layout": "strided"}, TypeError,
     "DaCeBindings.data_layout must be a DataLayout"),
    (DaCeBindings, {"openmp_threshold": False}, TypeError,
     "DaCeBindings.openmp_threshold must be a non-negative int, got bool False"),
    (DaCeBindings, {"openmp_threshold": -5}, ValueError,
     "DaCeBindings.openmp_threshold must be a non-negative int, got -5"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("step", "settings", "error", "message"),
    BAD_SETTINGS,
    ids=[f"{s.__name__}-{next(iter(k))}" for s, k, _, _ in BAD_SETTINGS],
)
def test_every_setting_is_checked_when_the_step_is_made(
    step: type, settings: dict[str, Any], error: type[Exception], message: str
) -> None:
    """A step built directly or by dataclasses.replace is checked like one from a builder."""
    with pytest.raises(error, match=re.escape(message)):
        step(**{"device": Device.CPU, **settings})
    with pytest.raises(error, match=re.escape(message)):
        dataclasses.replace(step(device=Device.CPU), **settings)


def test_a_missing_dace_is_the_missing_extra_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from stencilchain.steps.dace import extra

    find_spec = extra.importlib.util.find_spec
    monkeypatch.setattr(
        extra.importlib.util,
        "find_spec",
        lambda name, *args: None if name == "dace" else find_spec(name, *args),
    )
    with pytest.raises(
        sc.MissingExtraError, match=r"DaCeTranslator: the DaCe toolchains need DaCe"
    ):
        DaCeTranslator(device=Device.CPU)


def test_the_stages_record_their_steps_settings() -> None:
    step = DaCeTranslator(Device.CPU, auto_optimize=False, auto_optimize_args={"validate": True})  # type: ignore[arg-type]
    source = step(one_dimension.ir)
    assert json.loads(source.settings) == {
        "device": "cpu", "auto_optimize": "False", "auto_optimize_args": "(('validate', True),)",
        "disable_transforms": "False", "data_layout": "strided", "external_workspace": "False",
    }  # fmt: skip
    bindings = DaCeBindings(Device.CPU, openmp_threshold=3)
    extension = bindings(source)
    expected = {"device": "cpu", "data_layout": "strided", "openmp_threshold": "3"}
    # the shim stands for the translation in build markers: it carries the SDFG's settings
    assert extension.program_source.settings == source.settings
    assert json.loads(extension.binding_source.settings) == expected
    assert extension.sdfg_source is source


@pytest.mark.parametrize("key", sorted(DERIVED_AUTO_OPTIMIZE_ARGS))
def test_derived_auto_optimize_args_are_rejected(key: str) -> None:
    setting = {"device": "STENCILCHAIN_DEVICE", "use_gpu_storage": "STENCILCHAIN_DEVICE",
               "symbols": "STENCILCHAIN_DATA_LAYOUT", "sdfg": "translation"}[key]  # fmt: skip
    with pytest.raises(ValueError, match=rf"'{key}' cannot be set: .*{setting}"):
        DaCeTranslator(device=Device.CPU, auto_optimize_args=((key, None),))
    step = DaCeTranslator(device=Device.GPU)
    with pytest.raises(ValueError, match=rf"'{key}' cannot be set"):
        dataclasses.replace(step, auto_optimize_args=((key, None),))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((("validat", True),), "'validat' is not an argument of DaCe's auto_optimize"),
        ((("find_fast_library_fn", None),), "'find_fast_library_fn' is not supported"),
        ((("validate", "yes"),), "'validate' must be a bool"),
        ((("validate", True), ("validate", False)), "'validate' is given twice"),
    ],
)
def test_bad_auto_optimize_args_are_rejected(args: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        DaCeTranslator(device=Device.CPU, auto_optimize_args=args)
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(CPU, auto_optimize_args=args)


def test_accepted_auto_optimize_args_are_normalized_and_hashable() -> None:
    step = DaCeTranslator(
        device=Device.CPU, auto_optimize_args=(("validate_all", False), ("validate", True))
    )
    assert step.auto_optimize_args == (("validate", True), ("validate_all", False))
    same = DaCeTranslator(
        device=Device.CPU,
        auto_optimize_args={"validate": True, "validate_all": False},  # type: ignore[arg-type]
    )
    assert same == step and hash(same) == hash(step)
    assert step(one_dimension.ir).source_code == translate(one_dimension, CPU).source_code


def test_derived_settings_follow_the_config() -> None:
    program = every_construct.ir
    derived = DaCeTranslator(device=Device.GPU, data_layout=DataLayout.UNIT_STRIDE)
    args = derived.derived_auto_optimize_args(program)
    assert args["device"] == "gpu" and args["use_gpu_storage"] is True
    fields = [p.name for p in program.params if isinstance(p.type, ir.FieldType)]
    assert args["symbols"] == {f"{name}_s1": 1 for name in fields}
    args = CPU.derived_auto_optimize_args(program)
    assert args == {"device": "cpu", "use_gpu_storage": False, "symbols": {}}


def test_importing_the_translator_does_not_import_dace() -> None:
    code = (
        "import sys, stencilchain.steps.dace.translator, stencilchain.steps.dace.sdfg_text; "
        "assert 'dace' not in sys.modules, 'dace imported'"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
