"""Every DSL construct and every example, compiled by the GTFN CPU toolchains (with and
without IR transforms) and by the DaCe CPU toolchains (with and without auto-optimization;
skipped without the `dace` extra), gives what the embedded executor gives, for C-order,
Fortran-order, sliced and reversed arrays; argument and domain errors raised through
the compiled path carry the embedded path's messages.

Compilation is the expensive part (about a second per program), so each program below
packs many constructs into several calls, and each test compiles one program with one
toolchain and then runs it on every layout and shape (as subtests).
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
import stencilchain.examples as examples
from stencilchain.program import ir
from tests import _support as shared
from tests._support import place, random_array, read_only

I = sc.Dimension("I")
J = sc.Dimension("J")
K = sc.Dimension("K")

F64 = sc.Field[[I, J], sc.float64]
F32 = sc.Field[[I, J], sc.float32]
I32 = sc.Field[[I, J], sc.int32]
I64 = sc.Field[[I, J], sc.int64]
B = sc.Field[[I, J], sc.bool_]
F1 = sc.Field[[I], sc.float64]
F3 = sc.Field[[I, J, K], sc.float64]
FT = sc.Field[[J, I], sc.float64]  # the dimensions in the other order

# The DaCe toolchains are the equivalents of run_dace_cpu and run_dace_cpu_noopt (conftest.py).
TOOLCHAINS = ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]
LAYOUTS = ["C", "F", "sliced", "reversed"]
# compiled against embedded: the relative and absolute tolerance per float dtype
TOLERANCE = {np.dtype(np.float64): 1e-13, np.dtype(np.float32): 1e-5}


def test_openmp_threads_are_fixed() -> None:
    assert os.environ["OMP_NUM_THREADS"] == "2"


@pytest.fixture(params=TOOLCHAINS)
def toolchain(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(request.param)


# --- running a program both ways --------------------------------------------------------------


Fill = Callable[[dict[str, np.ndarray], np.random.Generator], None]


@dataclasses.dataclass(frozen=True)
class Case:
    """A program, the sizes to run it on, and its scalar arguments (one set per run)."""

    program: sc.Program
    sizes: tuple[Mapping[sc.Dimension, int], ...]
    scalars: tuple[Mapping[str, Any], ...] = ({},)
    fill: Fill | None = None  # adjusts the random inputs (NaNs, equal points, ...)

    @property
    def id(self) -> str:
        return self.program.name


def make_arguments(
    case: Case, sizes: Mapping[sc.Dimension, int], scalars: Mapping[str, Any], seed: int
) -> dict[str, Any]:
    """Random fields (outputs too, so that untouched points show) and the scalars, in
    parameter order."""
    rng = np.random.default_rng(seed)
    fields: dict[str, np.ndarray] = {}
    for param in case.program.ir.params:
        if isinstance(param.type, ir.FieldType):
            shape = tuple(sizes[d] for d in param.type.dims)
            fields[param.name] = random_array(shape, param.type.dtype.numpy, rng)
    if case.fill is not None:
        case.fill(fields, rng)
    return {
        p.name: fields[p.name] if p.name in fields else scalars[p.name]
        for p in case.program.ir.params
    }


run_both = functools.partial(shared.run_both, tolerance=TOLERANCE)


def check_case(case: Case, toolchain: Any, subtests: Any, layouts: list[str] = LAYOUTS) -> None:
    bound = case.program.with_backend(toolchain)
    seed = 0
    for sizes in case.sizes:
        for index, layout in enumerate(layouts):
            scalars = case.scalars[index % len(case.scalars)]
            shape = "x".join(str(n) for n in sizes.values())
            with subtests.test(shape=shape, layout=layout, scalars=repr(dict(scalars))):
                seed += 1
                arguments = make_arguments(case, sizes, scalars, seed)
                run_both(case.program, bound, arguments, layout, seed)


# --- float64 expressions: arithmetic, every math function, comparisons, logic, where ------------


@sc.field_operator
def arith(f: F64, g: F64, alpha: sc.float64, beta: sc.float64) -> F64:
    return (
        alpha * f
        + beta
        - g * f / (g * g + 1.0)
        + (-f) ** 2
        + sc.math.abs(f) ** g
        + 2.0**g
        - f**3
        + 0.1 * (f - 1e-300) / 3.0
        + 2 * f
    )


@sc.field_operator
def all_math(f: F64, g: F64) -> F64:
    return (
        sc.math.sqrt(sc.math.abs(f))
        + sc.math.exp(f)
        + sc.math.log(sc.math.abs(g) + 0.01)
        + sc.math.sin(f) * sc.math.cos(g)
        + sc.math.floor(3.0 * f)
        - sc.math.ceil(3.0 * g)
        + sc.math.minimum(f, g) * sc.math.maximum(f, 0.5)
        - sc.math.minimum(-1, g)
        + abs(g)
    )


@sc.field_operator
def compare(f: F64, g: F64, flag: sc.bool_) -> B:
    return ((f < g) & ~(f >= 0.5)) | (f == g) | ((f != g) & (f <= -1.0) & flag) | (g > 1.5)


@sc.field_operator
def choose(f: F64, g: F64, flag: sc.bool_) -> F64:
    return sc.where((f > g) | flag, f, sc.where(g <= 0.0, -g, 1.5)) + sc.where(flag, f, g)


@sc.program
def float64_expressions(
    f: F64,
    g: F64,
    o_arith: F64,
    o_math: F64,
    o_cmp: B,
    o_where: F64,
    alpha: sc.float64,
    beta: sc.float64,
    flag: sc.bool_,
):
    arith(f, g, alpha, beta, out=o_arith)
    all_math(f, g, out=o_math)
    compare(f, g, flag, out=o_cmp)
    choose(f, g, flag, out=o_where)


def _nans_and_ties(fields: dict[str, np.ndarray], rng: np.random.Generator) -> None:
    f, g = fields["f"], fields["g"]
    g[::3] = f[::3]  # equal points, so that == and <= differ from <
    f[1, ::2] = np.nan  # NaN propagates through minimum, maximum, pow, ...


FLOAT64_CASE = Case(
    float64_expressions,
    sizes=({I: 9, J: 11}, {I: 300, J: 260}),  # the second is above the OpenMP threshold
    scalars=(
        {"alpha": 0.3, "beta": -0.75, "flag": True},
        {"alpha": np.float64(-1.5), "beta": 2, "flag": np.False_},
        {"alpha": 7, "beta": np.float64(1e-3), "flag": False},
        {"alpha": -0.0, "beta": 1e300, "flag": np.True_},
    ),
    fill=_nans_and_ties,
)


# --- float32, int32, int64, bool: every dtype, astype, scalars of every dtype ---------------------


@sc.field_operator
def f32_ops(a: F32, b: F32, s: sc.float32, d: sc.float64) -> F32:
    return (
        a * 0.1
        + 0.2
        - b / 3.0
        + s * sc.math.sqrt(sc.math.abs(a))
        + sc.math.sin(a) * sc.math.exp(b)
        - sc.math.log(sc.math.abs(b) + 0.5)
        + sc.math.cos(a(I + 1))
        + sc.math.floor(a) * sc.math.ceil(b)
        + a**2
        + sc.math.minimum(a, b)
        - sc.math.maximum(a, -0.5)
        + a * sc.astype(d, sc.float32)
        - (-b(J - 1))
    )


@sc.field_operator
def to_f64(a: F32, x: I32, y: I64, bl: B) -> F64:
    return (
        sc.astype(a, sc.float64) * 2.0
        + sc.astype(x, sc.float64) / 4.0
        + sc.astype(bl, sc.float64)
        - sc.astype(y(J + 1), sc.float64)
        + sc.astype(sc.astype(y, sc.float32), sc.float64)
    )


@sc.field_operator
def i32_ops(x: I32, y32: I32, k: sc.int32, a: F32) -> I32:
    return (
        (x + y32) * (x - y32)
        - -x
        + x**3
        + y32**0
        + sc.math.abs(x)
        + sc.math.minimum(x, y32)
        - sc.math.maximum(y32, 3)
        + k * x(J - 1)
        + 2147483647 * (x * 0)
        + x * 100000000  # wraps around, like NumPy
        + sc.astype(a * 10.0, sc.int32)
    )


@sc.field_operator
def i64_ops(y: I64, m: sc.int64, bl: B, f: F64) -> I64:
    return (
        y * 2
        - y(I + 1)
        + m
        + 2**40
        + y**2
        + sc.astype(bl, sc.int64) * 3
        + sc.math.abs(y)
        - sc.astype(sc.math.floor(f * 10.0), sc.int64)
        + (-9223372036854775807 - 1) * (y * 0)
        + 9007199254740993 * sc.astype(bl, sc.int64)  # not a float64: must stay exact
    )


@sc.field_operator
def bool_ops(bl: B, bl2: B, flag: sc.bool_, x: I32, f: F64) -> B:
    return (
        ((bl & flag) | ~bl2(I - 1) | (x > 10) & (bl == bl2)) & (bl != flag)
        | sc.astype(sc.math.floor(f), sc.bool_) & True
        | False
    )


@sc.program
def typed_expressions(
    a: F32,
    b: F32,
    x: I32,
    y32: I32,
    y: I64,
    bl: B,
    bl2: B,
    f: F64,
    o32: F32,
    o64: F64,
    oi32: I32,
    oi64: I64,
    ob: B,
    s: sc.float32,
    d: sc.float64,
    k: sc.int32,
    m: sc.int64,
    flag: sc.bool_,
):
    f32_ops(a, b, s, d, out=o32)
    to_f64(a, x, y, bl, out=o64)
    i32_ops(x, y32, k, a, out=oi32)
    i64_ops(y, m, bl, f, out=oi64)
    bool_ops(bl, bl2, flag, x, f, out=ob)


def _big_int64(fields: dict[str, np.ndarray], rng: np.random.Generator) -> None:
    fields["y"][0, :] = rng.integers(-(2**62), 2**62, size=fields["y"].shape[1])


TYPED_CASE = Case(
    typed_expressions,
    sizes=({I: 9, J: 11}, {I: 2, J: 3}),
    scalars=(
        {"s": 0.3, "d": 0.1, "k": 3, "m": 2**40 + 1, "flag": True},
        {
            "s": np.float32(-1.25),
            "d": np.float64(-2.5),
            "k": np.int32(-7),
            "m": np.int64(-5),
            "flag": np.False_,
        },
        {"s": 2, "d": 7, "k": -(2**31), "m": -(2**63), "flag": False},
        {"s": np.float32(3.4e38), "d": -0.0, "k": 2**31 - 1, "m": 2**63 - 1, "flag": np.True_},
    ),
    fill=_big_int64,
)


# --- shifts and field-operator calls ----------------------------------------------------------------


@sc.field_operator
def lap(f: F64) -> F64:
    return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1)


@sc.field_operator
def inner_scale(f: F64, a: sc.float64) -> F64:
    return f * a


@sc.field_operator
def middle(f: F64) -> F64:
    return inner_scale(f, 2.0)(J + 1) + f


@sc.field_operator
def outer(f: F64, a: sc.float64) -> F64:
    return middle(f)(I - 1) - inner_scale(f, a)


@sc.field_operator
def shifts(f: F64, g: F64) -> F64:
    return (
        f(I + 1)
        + f(I - 1, J + 2)
        + (f + g)(J - 1)
        + f(I + 1)(J - 1)
        - f(I + 1)(I - 1) * g(I, J)
        + (f * g)(I - 2)(J + 1)
        + g(J + 1, I - 1)
    )


@sc.field_operator
def calls(f: F64, g: F64, a: sc.float64) -> F64:
    return (
        lap(f)(I + 1)
        + lap(f(J + 1))
        - lap(lap(g))
        + outer(f, a)
        + lap(f + g)(J - 1)
        + inner_scale(g, a * 2.0 - 1.0)(I - 1, J - 1)
    )


@sc.program
def shifts_and_calls(f: F64, g: F64, o_shift: F64, o_calls: F64, o_outer: F64, a: sc.float64):
    shifts(f, g, out=o_shift)
    calls(f, g, a, out=o_calls)
    outer(f, a, out=o_outer)


SHIFTS_CASE = Case(
    shifts_and_calls,
    sizes=({I: 10, J: 12}, {I: 290, J: 270}, {I: 4, J: 4}),
    scalars=({"a": 0.5}, {"a": np.float64(-3.25)}),
)


# --- tuple returns, chained calls, explicit domains -------------------------------------------------


@sc.field_operator
def pair(f: F64, g: F64) -> tuple[F64, B]:
    return f + g, f > g


@sc.field_operator
def pair_user(f: F64, g: F64) -> F64:
    s, bigger = pair(f, g)
    return sc.where(bigger, s(I + 1), -s)


@sc.field_operator
def swap(f: F64, g: F64) -> tuple[F64, F64]:
    return g, f


@sc.field_operator
def double(f: F64) -> F64:
    return 2.0 * f


@sc.program
def tuples_chains_domains(
    f: F64,
    g: F64,
    s: F64,
    bigger: B,
    u: F64,
    t1: F64,
    t2: F64,
    t3: F64,
    p: F64,
    q: F64,
    d1: F64,
    d2: F64,
    d3: F64,
    d4: F64,
):
    pair(f, g, out=(s, bigger))  # a tuple written to two fields
    pair_user(f, g, out=u)  # a tuple used inside a field operator
    lap(f, out=t1)
    lap(t1, out=t2)  # inferred: where t1 was written, one point in
    double(t2, out=t3)  # pointwise, only where t2 was written
    swap(p, q, out=(p, q))  # tuple outputs that are also the inputs
    double(f, out=d1, domain={I: (-5, -1), J: (1, None)})
    lap(g, out=d2, domain={I: (2, -1), J: (1, -3)})
    double(g, out=d3, domain={I: (1, 6)})
    lap(d3, out=d4)  # inferred inside the explicitly written rows


CHAINS_CASE = Case(
    tuples_chains_domains,
    # the last sizes make the second lap and d2's explicit domain empty
    sizes=({I: 9, J: 11}, {I: 6, J: 5}, {I: 6, J: 3}),
)


# --- 1-D, 3-D and transposed fields in one program ---------------------------------------------------


@sc.field_operator
def lap_1d(f: F1) -> F1:
    return f(I - 1) - 2.0 * f + f(I + 1)


@sc.field_operator
def stencil_3d(f: F3, g: F3) -> F3:
    return f(K + 1) - f(K - 1) + g(I + 1, J - 1) * 0.5 + g(I - 1, J + 1, K + 2)


@sc.field_operator
def transposed(t: FT) -> FT:
    return t(I + 1) - t(J - 1) * 2.0 + t(I - 1, J + 1)


@sc.program
def dimensions(f1: F1, f3: F3, g3: F3, t: FT, f2: F64, o1: F1, o3: F3, o3b: F3, ot: FT, o2: F64):
    lap_1d(f1, out=o1)
    stencil_3d(f3, g3, out=o3)
    stencil_3d(g3, f3, out=o3b, domain={I: (-4, -1), K: (1, -2)})
    transposed(t, out=ot)
    lap(f2, out=o2)


DIMENSIONS_CASE = Case(dimensions, sizes=({I: 7, J: 6, K: 5}, {I: 5, J: 9, K: 4}))

# --- temporaries: fields a program makes without out=, allocated by the backend ----------------


@sc.field_operator
def mixed(f: F64, g: F32, m: I32):  # type: ignore[no-untyped-def]
    return g * 2.0, f(I + 1) - f, m + 1, f > 0.0


@sc.field_operator
def pick(positive: B, d: F64) -> F64:
    return sc.where(positive, d(J + 1), -d)


@sc.field_operator
def add32(a: F32, b: F32) -> F32:
    return a(I - 1) + b


@sc.field_operator
def mul_int(a: I32, b: I32) -> I32:
    return a * b(J - 1)


@sc.field_operator
def shift_back(f: F64) -> F64:
    return f(I - 1, J - 1) + f(I + 1)


@sc.program
def temporaries(
    f: F64,
    g: F32,
    m: I32,
    t: FT,
    f1: F1,
    o1: F64,
    o2: F64,
    o3: F32,
    o4: I32,
    o5: FT,
    o6: F1,
    o7: F64,
    o8: F64,
):
    a = lap(f)  # inferred [1, end-1)
    lap(a, out=o1)  # inferred where a holds values: [2, end-2)
    g2, df, m1, positive = mixed(f, g, m)  # four temporaries of four dtypes
    pick(positive, df, out=o2)
    add32(g2, g, out=o3, domain={I: (1, None)})  # an explicit domain inside what g2 holds
    mul_int(m1, m, out=o4)
    tt = transposed(t)  # a temporary over (J, I), laid out like t
    transposed(tt, out=o5)
    x = lap_1d(f1)
    lap_1d(x, out=o6)
    b = double(f, domain={I: (1, -1), J: (2, None)})  # an explicit producer
    shift_back(b, out=o7, domain={I: (2, -2), J: (3, None)})
    s, _ = pair(a, f)  # a tuple element nobody reads
    double(s, out=o8)


TEMPORARIES_CASE = Case(
    temporaries,
    # the last sizes make several domains empty
    sizes=({I: 9, J: 8}, {I: 5, J: 12}, {I: 3, J: 3}),
)

CASES = [FLOAT64_CASE, TYPED_CASE, SHIFTS_CASE, CHAINS_CASE, DIMENSIONS_CASE, TEMPORARIES_CASE]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_constructs_match_embedded(case: Case, toolchain: Any, subtests: Any) -> None:
    check_case(case, toolchain, subtests)


def test_cases_cover_every_dtype_and_scalar_dtype() -> None:
    field_dtypes, scalar_dtypes = set(), set()
    for case in CASES:
        for p in case.program.ir.params:
            if isinstance(p.type, ir.FieldType):
                field_dtypes.add(p.type.dtype.name)
            else:
                scalar_dtypes.add(p.type.name)
    everything = {"float32", "float64", "int32", "int64", "bool"}
    assert field_dtypes == everything
    assert scalar_dtypes == everything


def test_cases_cover_every_math_function() -> None:
    """Every sc.math function is compiled by the CASES here or by the programs of
    test_integer_and_math_compiled.py (which run on the same toolchains)."""
    from .test_integer_and_math_compiled import PROGRAMS

    used: set[str] = set()

    def walk(expr: ir.Expr) -> None:
        from stencilchain.program.ir import children

        if isinstance(expr, ir.MathCall):
            used.add(expr.fn)
        if isinstance(expr, ir.Binary) and expr.op == "pow":
            used.add("power")
        for child in children(expr):
            walk(child)

    programs = [case.program for case in CASES] + list(PROGRAMS.values())
    for program in programs:
        for fop in program.ir.field_operators:
            walk(fop.body)
    public = {n for n in dir(sc.math) if not n.startswith("_") and callable(getattr(sc.math, n))}
    public -= {"Symbol", "math_call", "annotations"}
    assert public <= used, public - used


# --- the examples -------------------------------------------------------------------------------------


def _example_id(module: ModuleType) -> str:
    return module.__name__.rsplit(".", 1)[-1]


@pytest.mark.parametrize("module", examples.ALL_EXAMPLES, ids=_example_id)
def test_example_matches_embedded_and_reference(
    module: ModuleType, toolchain: Any, subtests: Any
) -> None:
    bound = module.PROGRAM.with_backend(toolchain)
    if examples.uses_mesh(module) and "dace" in toolchain.name:
        try:  # DaCe does not compile neighbour reads yet; once it does, it must match
            bound.compile()
        except sc.UnsupportedError:
            return
    for seed, layout in enumerate(LAYOUTS):
        with subtests.test(layout=layout):
            inputs = module.make_inputs(module.DEFAULT_SHAPE, np.random.default_rng(seed))
            reference = module.reference(
                **{k: v.copy() if isinstance(v, np.ndarray) else v for k, v in inputs.items()}
            )
            embedded = run_both(module.PROGRAM, bound, inputs, layout, seed)
            for name, value in reference.items():
                np.testing.assert_allclose(embedded[name], value, rtol=1e-12, err_msg=name)


# --- argument errors through the compiled path ----------------------------------------------------------


def _typed_arguments() -> dict[str, Any]:
    return make_arguments(TYPED_CASE, {I: 5, J: 4}, TYPED_CASE.scalars[0], seed=99)


def _replace(name: str, value: Callable[[Any], Any]) -> Callable[[dict[str, Any]], list[Any]]:
    def change(arguments: dict[str, Any]) -> list[Any]:
        arguments = dict(arguments)
        arguments[name] = value(arguments[name])
        return list(arguments.values())

    return change


BAD_CALLS: dict[str, Callable[[dict[str, Any]], list[Any]]] = {
    "too_few": lambda args: list(args.values())[:-1],
    "too_many": lambda args: [*args.values(), 1.0],
    "none": lambda args: [],
    "dtype_f32_for_f64": _replace("f", lambda v: v.astype(np.float32)),
    "dtype_f64_for_f32": _replace("a", lambda v: v.astype(np.float64)),
    "dtype_int64_for_int32": _replace("x", lambda v: v.astype(np.int64)),
    "dtype_of_an_output": _replace("oi64", lambda v: v.astype(np.int32)),
    "dtype_big_endian": _replace("f", lambda v: v.astype(">f8")),
    "ndim_too_few": _replace("b", lambda v: v[0]),
    "ndim_too_many": _replace("o32", lambda v: v[..., None]),
    # other sizes and starts are fields over their own ranges (an input may start below 0:
    # tests/runtime/test_own_ranges_compiled.py)
    "output_start_below_zero": _replace("oi32", lambda v: sc.as_field((I, J), v, start={J: -1})),
    "output_over_other_dimensions": _replace("ob", lambda v: sc.as_field((J, I), v.T)),
    "read_only_output": _replace("o64", read_only),
    "list_for_a_field": _replace("x", lambda v: v.tolist()),
    "scalar_for_a_field": _replace("f", lambda v: 1.0),
    "float_for_int32": _replace("k", lambda v: 1.5),
    "bool_for_int32": _replace("k", lambda v: True),
    "int32_overflow": _replace("k", lambda v: 2**31),
    "int64_overflow": _replace("m", lambda v: -(2**63) - 1),
    "np_int32_for_int64": _replace("m", lambda v: np.int32(1)),
    "np_float64_for_float32": _replace("s", lambda v: np.float64(1.0)),
    "bool_for_float64": _replace("d", lambda v: True),
    "huge_int_for_float64": _replace("d", lambda v: 10**400),
    "int_for_bool": _replace("flag", lambda v: 1),
    "string_for_float32": _replace("s", lambda v: "1.0"),
    "array_for_a_scalar": _replace("d", lambda v: np.array(1.0)),
}


@pytest.mark.parametrize("bad", BAD_CALLS)
def test_argument_errors_match_embedded(bad: str, toolchain: Any) -> None:
    good = _typed_arguments()
    args = BAD_CALLS[bad](good)
    with pytest.raises(sc.ArgumentError) as embedded:
        typed_expressions(*args)
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]

    bound = typed_expressions.with_backend(toolchain)
    bound.compile()  # so that the native checks, not the first call's, see the arguments
    with pytest.raises(sc.ArgumentError) as compiled:
        bound(*args)
    assert str(compiled.value) == str(embedded.value)
    with pytest.raises(sc.ArgumentError) as direct:
        toolchain.compile(typed_expressions)(*args)
    assert str(direct.value) == str(embedded.value)
    for arg, old in zip(args, before):  # nothing ran
        if isinstance(arg, np.ndarray):
            np.testing.assert_array_equal(arg, old)


def test_argument_error_before_the_first_compilation(toolchain: Any) -> None:
    @sc.program
    def never_compiled(f: F64, out: F64):
        double(f, out=out)

    f = np.zeros((3, 3))
    with pytest.raises(sc.ArgumentError, match="argument 'out' of never_compiled"):
        never_compiled.with_backend(toolchain)(f, f.astype(np.float32))
    assert never_compiled.fingerprint() not in toolchain.pool


# --- domain errors ------------------------------------------------------------------------------------


@sc.program
def explicit_domain(f: F64, out: F64):
    lap(f, out=out, domain={I: (-6, 7), J: (1, -1)})


@pytest.mark.parametrize(
    ("n_i", "fits"),
    [(8, True), (12, True), (7, False), (5, False), (1, False)],
)
def test_explicit_domain_errors_match_embedded(n_i: int, fits: bool, toolchain: Any) -> None:
    rng = np.random.default_rng(n_i)
    f, out = rng.random((n_i, 6)), rng.random((n_i, 6))
    bound = explicit_domain.with_backend(toolchain)
    if fits:
        run_both(explicit_domain, bound, {"f": f, "out": out}, "F")
        return
    with pytest.raises(sc.DomainError) as embedded:
        explicit_domain(f, out.copy())
    with pytest.raises(sc.DomainError) as compiled:
        bound(f, out)
    assert str(compiled.value) == str(embedded.value)
    assert "leaves the array of size" in str(compiled.value)


# --- the unit_stride data layout ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gtfn_unit_stride(session_cache_dir: Any) -> Any:
    from stencilchain.containers import build_container

    container = build_container({}, cache_dir=session_cache_dir, data_layout="unit_stride")
    container.gtfn.name.override("run_gtfn_cpu_unit_stride")
    return container.gtfn.toolchain()


def test_unit_stride_toolchain(gtfn_unit_stride: Any, subtests: Any) -> None:
    module = examples.hdiff
    bound = module.PROGRAM.with_backend(gtfn_unit_stride)
    inputs = module.make_inputs(module.DEFAULT_SHAPE, np.random.default_rng(5))
    with subtests.test("C order runs"):
        run_both(module.PROGRAM, bound, inputs, "C")
    with subtests.test("rows and planes skipped, unit innermost stride runs"):
        bigger = {k: np.repeat(v, 2, axis=0)[::2, :, :] for k, v in inputs.items()}
        assert not bigger["inp"].flags.c_contiguous and bigger["inp"].strides[-1] == 8
        expected = {k: v.copy() for k, v in bigger.items()}
        module.PROGRAM(*expected.values())
        bound(*bigger.values())
        np.testing.assert_allclose(bigger["out"], expected["out"], rtol=1e-13)
    for layout in ("F", "sliced", "reversed"):
        with subtests.test(f"{layout} is rejected"):
            args = {k: place(v, layout, np.random.default_rng(0)).array for k, v in inputs.items()}
            out_before = args["out"].copy()
            with pytest.raises(sc.ArgumentError) as error:
                bound(*args.values())
            message = str(error.value)
            assert "unit_stride" in message and "argument 'inp' of hdiff_program()" in message
            np.testing.assert_array_equal(args["out"], out_before)


# --- the pybind11 bindings flavor ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gtfn_pybind11(session_cache_dir: Any) -> Any:
    from stencilchain.containers import build_container, make_gtfn_bindings, override_step

    container = build_container({}, cache_dir=session_cache_dir)
    container.gtfn.name.override("run_gtfn_cpu_pybind11")
    override_step(container.gtfn.bindings, functools.partial(make_gtfn_bindings, flavor="pybind11"))
    return container.gtfn.toolchain()


@pytest.mark.slow  # builds the precompiled pybind11 header first: 10-20 s
def test_pybind11_bindings_flavor(gtfn_pybind11: Any, subtests: Any) -> None:
    compiled = gtfn_pybind11.compile(tuples_chains_domains)
    assert (
        "PYBIND11_MODULE"
        in (compiled.artifact.build_dir / "src")
        .joinpath("tuples_chains_domains_bindings.cpp")
        .read_text()
    )
    check_case(CHAINS_CASE, gtfn_pybind11, subtests, layouts=["C", "sliced"])
    with subtests.test("argument error"):
        args = make_arguments(CHAINS_CASE, {I: 9, J: 11}, {}, seed=1)
        run = tuples_chains_domains.with_backend(gtfn_pybind11)
        run(*args.values())
        assert type(run.func).__name__ == "BoundEntry"  # the module's fast path, as capi's
        args["d2"] = args["d2"].astype(np.float32)
        with pytest.raises(sc.ArgumentError) as embedded:
            tuples_chains_domains(*args.values())
        with pytest.raises(sc.ArgumentError) as error:
            run(*args.values())
        assert str(error.value) == str(embedded.value)


# --- bugs found by these tests ----------------------------------------------------------------------------


@sc.field_operator
def reciprocal_of_abs(f: F64) -> F64:
    return 1.0 / sc.math.abs(f)


@sc.program
def abs_of_negative_zero(f: F64, out: F64):
    reciprocal_of_abs(f, out=out)


def test_abs_of_negative_zero_is_positive_zero(toolchain: Any) -> None:
    f = np.array([[-0.0, 0.0], [-1.0, 2.0]])
    expected, out = np.zeros_like(f), np.zeros_like(f)
    abs_of_negative_zero(f, expected)
    abs_of_negative_zero.with_backend(toolchain)(f, out)
    assert expected[0, 0] == np.inf
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("value", [1e39, -(10**39)], ids=["float", "int"])
def test_float32_scalar_overflow_is_an_argument_error(value: Any, toolchain: Any) -> None:
    args = _replace("s", lambda v: value)(_typed_arguments())
    with pytest.raises(sc.ArgumentError) as embedded:
        typed_expressions(*args)
    bound = typed_expressions.with_backend(toolchain)
    bound.compile()
    with pytest.raises(sc.ArgumentError) as compiled:
        bound(*args)
    assert str(compiled.value) == str(embedded.value)


def test_numpy_longlong_scalar_for_int64(toolchain: Any) -> None:
    args = _replace("m", lambda v: np.longlong(5))(_typed_arguments())
    assert np.dtype(np.longlong) == np.dtype(np.int64)
    run_both(
        typed_expressions,
        typed_expressions.with_backend(toolchain),
        dict(zip([p.name for p in typed_expressions.ir.params], args)),
        "C",
    )


@sc.program
def empty_after_outside(f: F64, out: F64):
    lap(f, out=out, domain={I: (1, 5), J: (4, 2)})  # J is empty whatever the sizes


def _outcome(run: Callable[[], None]) -> str:
    try:
        run()
    except (sc.DomainError, sc.ArgumentError) as error:
        return f"{type(error).__name__}: {error}"
    return "no error"


def test_empty_domain_with_an_out_of_bounds_dimension(toolchain: Any) -> None:
    f, out = np.ones((3, 8)), np.zeros((3, 8))
    embedded = _outcome(lambda: empty_after_outside(f, out.copy()))
    compiled = _outcome(lambda: empty_after_outside.with_backend(toolchain)(f, out))
    assert compiled == embedded


def test_same_array_as_input_and_output(toolchain: Any) -> None:
    program = examples.laplacian.PROGRAM
    names = [p.name for p in program.ir.params]
    field = np.random.default_rng(3).random(examples.laplacian.DEFAULT_SHAPE)
    embedded, compiled = field.copy(), field.copy()
    outcome_embedded = _outcome(lambda: program(*[embedded] * len(names)))
    outcome_compiled = _outcome(lambda: program.with_backend(toolchain)(*[compiled] * len(names)))
    assert outcome_compiled == outcome_embedded
    np.testing.assert_allclose(compiled, embedded, rtol=1e-13)


def test_field_of_a_structured_array(toolchain: Any) -> None:
    """Strides must be whole elements (the generated code indexes by element): a field of
    a structured array (stride 12 bytes for float64) is rejected by every backend alike."""
    records = np.zeros((8, 9), dtype=[("x", "f8"), ("y", "i4")])
    records["x"] = np.random.default_rng(4).random((8, 9))
    f = records["x"]
    assert f.strides[1] == 12
    program = examples.laplacian.PROGRAM
    expected, out = np.zeros((8, 9)), np.zeros((8, 9))
    with pytest.raises(sc.ArgumentError, match="multiple of the item size") as embedded:
        program(f, expected)
    with pytest.raises(sc.ArgumentError) as compiled:
        program.with_backend(toolchain)(f, out)
    assert str(compiled.value) == str(embedded.value)
    assert not out.any()


@sc.field_operator
def names_mix(a: F64, s_a: F64, p_a: F64, s0_a: F64, n_a: sc.float64) -> F64:
    return a(I + 1) + s_a * p_a(J - 1) - s0_a * n_a


@sc.program
def generated_looking_names(
    a: F64, s_a: F64, p_a: F64, s0_a: F64, n_a: sc.float64, sc_out: F64, t0: F64
):
    tmp0 = names_mix(a, s_a, p_a, s0_a, n_a)
    double(tmp0, out=sc_out)
    double(a, out=t0)


@pytest.mark.parametrize("fixture", ["gtfn_cpu", "gtfn_cpu_no_transforms"])
def test_parameter_names_like_generated_ones(fixture: str, request: pytest.FixtureRequest) -> None:
    """Parameters named like GTFN's C++ names of other parameters (`a` and `p_a`, `s_a`,
    `s0_a`) or of generated variables compile and compute the right thing. (Names of the
    generated symbols of every toolchain, `a_s0` or `n_I`, are refused at definition:
    tests/runtime/test_bad_input_corpus.py.)"""
    toolchain = request.getfixturevalue(fixture)
    case = Case(generated_looking_names, sizes=({I: 7, J: 6},), scalars=({"n_a": 0.5},))
    arguments = make_arguments(case, case.sizes[0], case.scalars[0], seed=3)
    run_both(case.program, case.program.with_backend(toolchain), arguments, "F")
