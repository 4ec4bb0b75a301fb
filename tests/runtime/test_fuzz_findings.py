"""What the cross-toolchain fuzzer (test_fuzz_toolchains.py) found, each as a plain test of
the smallest program that showed it, on the embedded executor and the CPU toolchains."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pytest

import stencilchain as sc

from .fuzz_programs import PRELUDE as FUZZ_PRELUDE

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F = sc.Field[[I, J, K], sc.float64]
SHAPE = (3, 4, 5)
TOOLCHAINS = ["embedded", "gtfn_cpu", "dace_cpu"]


@pytest.fixture(params=TOOLCHAINS)
def run(request: pytest.FixtureRequest) -> Any:
    """A function running a program on the toolchain."""
    if request.param == "embedded":
        return lambda prog: prog
    toolchain = request.getfixturevalue(request.param)
    return lambda prog: prog.with_backend(toolchain)


# --- A field operator without parameters -----------------------------------------------
# Found: `tmp = fill()` in a program was a DefinitionError "field operator fill called
# with ; call it from a @program ..." (the program's trace was found only through its
# arguments), and so was `fill()` in another field operator. Fixed in
# stencilchain/program/field_operator.py (dispatch_call, tracing_program) and program.py.


@sc.field_operator
def fill() -> F:
    return sc.broadcast(1.5, (I, J, K))


@sc.field_operator
def add_fill(a: F) -> F:
    return a + fill()


@sc.field_operator
def shifted_sum(t: F, a: F) -> F:
    return t(I + 1) + a


@sc.program
def temporary_from_nothing(a: F, out: F, out2: F) -> None:
    t = fill()
    shifted_sum(t, a, out=out)
    add_fill(a, out=out2, domain={K: (1, None)})


def test_field_operator_without_parameters_makes_a_temporary(run: Any) -> None:
    a = np.random.default_rng(0).random(SHAPE)
    out, out2 = np.zeros(SHAPE), np.zeros(SHAPE)
    run(temporary_from_nothing)(a, out, out2)
    expected = np.zeros(SHAPE)
    expected[:-1] = 1.5 + a[:-1]
    np.testing.assert_array_equal(out, expected)
    expected2 = np.zeros(SHAPE)
    expected2[..., 1:] = a[..., 1:] + 1.5
    np.testing.assert_array_equal(out2, expected2)


# --- A scan over edges read through a table in a field operator over cells -------------
# Found (mesh fuzzer, seeds 24 and 26): `neighbor_sum(scan(e)(C2E), axis=C2EDim)` in a field
# operator over (Cell, K), with the scan over (Edge, K), was a bare `KeyError: Edge` from the
# scan's lowering (stencilchain/program/scan_lowering.py, shifted_domain: the scan's domain
# was the call's, which has no Edge). Fixed: a dimension the call lacks is covered whole
# (a neighbour read lands anywhere along it).

Cell, Edge = sc.Dimension("Cell"), sc.Dimension("Edge")
KV = sc.Dimension("K", kind=sc.VERTICAL)
C2EDim = sc.Dimension("C2EDim", kind=sc.LOCAL)
C2E = sc.Connectivity("C2E", source=Edge, target=(Cell, C2EDim), max_neighbors=3, skip_values=True)
EK = sc.Field[[Edge, KV], sc.float64]
CK = sc.Field[[Cell, KV], sc.float64]


@sc.scan_operator(axis=KV, forward=True, init=0.0)
def decaying_sum(s, e: EK):
    return 0.5 * s + e


@sc.field_operator
def gathered_scan(e: EK) -> CK:
    return sc.neighbor_sum(decaying_sum(e)(C2E), axis=C2EDim)


@sc.field_operator
def gathered_scan_below(e: EK) -> CK:
    return decaying_sum(e)(KV - 1)(C2E[1])


@sc.program
def scan_through_table(e: EK, c2e: sc.Table[C2E], out: CK, below: CK) -> None:
    gathered_scan(e, out=out)
    gathered_scan_below(e, out=below)


@pytest.mark.parametrize("layout", ["C", "F"])
def test_a_scan_over_edges_is_read_through_a_table(run: Any, layout: str) -> None:
    rng = np.random.default_rng(4)
    n_cells, n_edges, n_k = 5, 7, 4
    e = np.asarray(rng.uniform(-1.0, 1.0, (n_edges, n_k)), order=layout)
    c2e = rng.integers(0, n_edges, (n_cells, 3)).astype(np.int32)
    c2e[0, :] = -1
    c2e[2, 1] = -1
    out = np.asarray(np.full((n_cells, n_k), 7.0), order=layout)
    below = out.copy()
    run(scan_through_table)(e, c2e, out, below)
    scanned = np.zeros_like(e)
    s = np.zeros(n_edges)
    for k in range(n_k):
        s = 0.5 * s + e[:, k]
        scanned[:, k] = s
    expected = np.zeros((n_cells, n_k))
    for c in range(n_cells):
        for j in range(3):
            if c2e[c, j] >= 0:
                expected[c] += scanned[c2e[c, j]]
    np.testing.assert_allclose(out, expected, rtol=1e-15, atol=1e-15)
    expected_below = np.full((n_cells, n_k), 7.0)
    neighbour = np.where(c2e[:, 1:2] >= 0, scanned[c2e[:, 1]], 0.0)
    expected_below[:, 1:] = neighbour[:, :-1]
    np.testing.assert_array_equal(below, expected_below)


# --- static_params listed in another order than the parameters ---------------------------
# Found (fuzzer, seed 104: static_params=('k0', 'kd0', 'm') for parameters m, k0, kd0): each
# static parameter was given another one's value (the names in the order written, the values
# in parameter order), so a bound took a wrong value (here `n` got `s`'s 10: a DomainError).
# Fixed in stencilchain/program/static_program.py: static_params is kept in parameter order.

KS = sc.Dimension("K")
FKS = sc.Field[[KS], sc.float64]


@sc.field_operator
def add_scalar(a: FKS, s: sc.int64) -> FKS:
    return a + sc.astype(s, sc.float64)


@sc.program(static_params=("n", "s"))  # not the parameters' order
def static_out_of_order(a: FKS, s: sc.int64, n: sc.int32, out: FKS) -> None:
    add_scalar(a, s, out=out, domain={KS: (0, n)})


def test_static_parameters_listed_out_of_order_get_their_own_values(run: Any) -> None:
    a = np.arange(6.0)
    out = np.full(6, -1.0)
    run(static_out_of_order)(a, 10, 2, out)
    np.testing.assert_array_equal(out, [10.0, 11.0, -1.0, -1.0, -1.0, -1.0])
    assert static_out_of_order.static_params == ("s", "n")


# --- A static bound from the end ---------------------------------------------------------
# Found: `domain={K: (n, n + 1)}` with a static `n = -1` was the literal range (-1, 0), a
# DefinitionError, where a scalar `n = -1` is the last level. Fixed in
# stencilchain/program/call_bounds.py (StaticInt), program.py and call_domains.py (_bound).


@sc.field_operator
def plus_one(a: F) -> F:
    return a + 1.0


@sc.program(static_params=("n",))
def static_level(a: F, n: sc.int32, out: F) -> None:
    plus_one(a, out=out, domain={K: (n, n + 1)})


@sc.program
def scalar_level(a: F, n: sc.int32, out: F) -> None:
    plus_one(a, out=out, domain={K: (n, n + 1)})


@pytest.mark.parametrize("n", [-1, -2, 1])
def test_a_static_bound_from_the_end_means_what_a_scalar_one_means(run: Any, n: int) -> None:
    a = np.arange(60.0).reshape(SHAPE)
    expected = np.full(SHAPE, -1.0)
    k = n % SHAPE[2]
    expected[:, :, k] = a[:, :, k] + 1.0
    for prog in (static_level, scalar_level):
        out = np.full(SHAPE, -1.0)
        run(prog)(a, n, out)
        np.testing.assert_array_equal(out, expected)


# --- A scan in a branch that an enclosing branch never selects -------------------------
# Found (fuzz finding 4): `concat_where(K > 3, concat_where(K < 2, up(f), ...), ...)` was a
# DefinitionError "... selected on 0 intervals along K (); ... split the condition into
# nested concat_wheres", advice that cannot help: the inner branch is empty. The scan now
# runs nowhere (stencilchain/program/scan_lowering.py, scan_branch) and the program runs.


@sc.scan_operator(axis=K, init=0.0)
def running_sum(total, a: F):  # type: ignore[no-untyped-def]
    return total + a


@sc.field_operator
def never_selected(f: F) -> F:
    return sc.concat_where(K > 3, sc.concat_where(K < 2, running_sum(f), 2.0 * f), -f)


@sc.program
def scan_in_an_empty_branch(f: F, out: F) -> None:
    never_selected(f, out=out)


def test_a_scan_in_a_branch_its_enclosing_branch_never_selects_runs_nowhere(run: Any) -> None:
    f = np.random.default_rng(4).random(SHAPE)
    out = np.zeros(SHAPE)
    run(scan_in_an_empty_branch)(f, out)
    expected = -f
    expected[..., 4:] = 2.0 * f[..., 4:]
    np.testing.assert_array_equal(out, expected)
    assert "K: [0, min(end, 0))" in str(scan_in_an_empty_branch.ir)  # the scan's domain


# --- Fields over their own ranges: a dimension a given domain leaves out -----------------
# Found (fuzzer, staggered programs): a call that gives its domain along I only, in a
# program with a field over KHalf (nlev + 1 half levels, so the index space along K is
# nlev + 1 points), ran along K over the whole index space, not the inferred range
# ("Dimensions left out are inferred", docs/dsl.md, "Domain"): its write to an output over
# the nlev full levels was a DomainError. stencilchain/program/own_ranges.py tightened the
# bounds to the fields' own ranges only when no dimension of the call's domain was given
# (`call.domain.explicit` is the whole call's). Fixed: each dimension a given domain leaves
# out is marked (`ir.DimDomain.inferred`) and narrowed like an inferred domain's. The same
# held along I or J with inputs one point longer (the fuzzer's `longer` programs). The
# fuzzer still gives such calls a domain along K too (fuzz_programs.py, `_left_out`).

KHalf = sc.staggered(K)
FH = sc.Field[[I, J, KHalf], sc.float64]


@sc.field_operator
def full_from_half(wh: FH) -> F:
    return wh(K + 0.5)


@sc.program
def left_out_along_k(wh: FH, a: F, x: F, y: F) -> None:
    full_from_half(wh, out=x)
    plus_one(a, out=y, domain={I: (0, None)})


def test_a_dimension_the_given_domain_leaves_out_is_inferred_over_own_ranges(run: Any) -> None:
    rng = np.random.default_rng(7)
    wh = rng.uniform(-1.0, 1.0, (SHAPE[0], SHAPE[1], SHAPE[2] + 1))
    a = rng.uniform(-1.0, 1.0, SHAPE)
    x, y = np.zeros(SHAPE), np.zeros(SHAPE)
    run(left_out_along_k)(wh, a, x, y)
    np.testing.assert_array_equal(x, wh[:, :, 1:])
    np.testing.assert_array_equal(y, a + 1.0)


# --- Fields over their own ranges: a concat_where branch beside a shorter field ----------
# Found (fuzzer, staggered programs): `a + sc.concat_where(K < sc.size(K) - 1, wh(K + 0.5),
# 1.0)` over the nlev full levels (domain {K: (0, -1)}, the index space nlev + 1) was
# a DomainError "reads from K+1 to K+1 in a concat_where branch ... leaves the array of size
# nlev + 1", although the branch reads wh[k + 1] inside wh's nlev + 1 levels: a branch's
# reads are checked against the narrowest range of all the fields the call reads (here a's
# nlev levels; stencilchain/program/own_ranges.py, `window_range`), not against the field
# the branch reads. Without `a`, or with `a` on nlev + 1 levels, the call ran. Fixed: each
# window holds the reads of one field (`ir.Window.field`), checked against that field's
# range (`ir.Window.range`).


@sc.field_operator
def branch_beside_shorter(a: F, wh: FH) -> F:
    return a + sc.concat_where(K < sc.size(K) - 1, wh(K + 0.5), 1.0)  # noqa: SIM300


@sc.program
def window_beside_shorter(a: F, wh: FH, x: F) -> None:
    branch_beside_shorter(a, wh, out=x, domain={K: (0, -1)})


def test_a_branch_reads_checked_against_the_field_it_reads(run: Any) -> None:
    rng = np.random.default_rng(8)
    a = rng.uniform(-1.0, 1.0, SHAPE)
    wh = rng.uniform(-1.0, 1.0, (SHAPE[0], SHAPE[1], SHAPE[2] + 1))
    x = np.zeros(SHAPE)
    run(window_beside_shorter)(a, wh, x)
    np.testing.assert_array_equal(x, a + wh[:, :, 1:])


# --- Fields over their own ranges: a scan called in a field operator, domain inferred ----
# Found (fuzzer, staggered programs): `op(c, out=x)` with `op` returning `scan(c)`, in a
# program with a field over KHalf (so the index space along K is nlev + 1 points), was a
# DomainError "call of scan in ...: domain K: [0, nlev + 1) ... of argument 'c' leaves its
# range [0, nlev)": the scan's lowered call takes the whole index space along K, not the
# call's inferred range. Fixed: the calls that lowering a scan makes keep how their
# domains were found (`ir.ProgramCall.lowered`), and a range specialisation derives them
# again from the field-operator call's narrowed domain (program/own_ranges.py).


@sc.scan_operator(axis=K, forward=False, init=0.0)
def falling_sum(s, x: F):
    return 0.5 * s + x


@sc.field_operator
def scanned(c: F) -> F:
    return falling_sum(c)


@sc.program
def scan_beside_half_levels(c: F, wh: FH, x: F, y: F) -> None:
    full_from_half(wh, out=y)
    scanned(c, out=x)


def test_a_scan_in_a_field_operator_keeps_to_the_inferred_range(run: Any) -> None:
    rng = np.random.default_rng(9)
    c = rng.uniform(-1.0, 1.0, SHAPE)
    wh = rng.uniform(-1.0, 1.0, (SHAPE[0], SHAPE[1], SHAPE[2] + 1))
    x, y = np.zeros(SHAPE), np.zeros(SHAPE)
    run(scan_beside_half_levels)(c, wh, x, y)
    expected = np.zeros(SHAPE)
    s = np.zeros(SHAPE[:2])
    for k in reversed(range(SHAPE[2])):
        s = 0.5 * s + c[:, :, k]
        expected[:, :, k] = s
    np.testing.assert_allclose(x, expected, rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(y, wh[:, :, 1:])


# --- A named collection result with a scalar `if` in it ------------------------------------
# Found (fuzzer, named collection results): `return Pair(a if alpha > 0.0 else 2.0 * a, a)`
# annotated `-> Pair` (a NamedTuple) was a DefinitionError "annotated to return Pair(...)
# but returns tuple[...]": joining the two paths of the `if` made a plain tuple of the
# NamedTuple. Fixed: the join keeps a NamedTuple's class (program/branches.py, _join).


class Pair(NamedTuple):
    u: F
    v: F


@sc.field_operator
def pair_by_sign(a: F, alpha: sc.float64) -> Pair:
    return Pair(a if alpha > 0.0 else 2.0 * a, a - 1.0)


@sc.program
def named_result_with_if(a: F, alpha: sc.float64, x: F, y: F) -> None:
    pair_by_sign(a, alpha, out=(x, y))


@pytest.mark.parametrize("alpha", [0.5, -0.5])
def test_a_named_tuple_result_keeps_its_class_through_an_if(run: Any, alpha: float) -> None:
    a = np.random.default_rng(10).uniform(-1.0, 1.0, SHAPE)
    x, y = np.zeros(SHAPE), np.zeros(SHAPE)
    run(named_result_with_if)(a, alpha, x, y)
    np.testing.assert_array_equal(x, a if alpha > 0.0 else 2.0 * a)
    np.testing.assert_array_equal(y, a - 1.0)


# --- A scan with no field argument whose scalar argument is a static parameter -------------
# Found (fuzzer, scans without field arguments, static parameters): `count(m, out=(x, y))`
# with `m` in static_params builds on the embedded executor and GTFN, but DaCe's SDFG
# construction fails: RuntimeError "Leftover nodes in queue: deque([AccessNode (x)])"
# (dace/sdfg/state.py scope_dict, from steps/dace/scans.py add_columns), with a scalar or a
# tuple state; the same program with `m` not static runs on every toolchain. Fixed: the
# map's empty edge into the column's SDFG comes before the outputs' memlets.


@sc.scan_operator(axis=K, forward=True, init=(0.0, 0))
def count_levels(state: tuple[float, int], step: sc.int64) -> tuple[float, int]:
    s, c = state
    return 0.5 * s + 1.0, c + step


@sc.program(static_params=("m",))
def static_scan_without_fields(m: sc.int64, x: F, y: sc.Field[[I, J, K], sc.int64]) -> None:
    count_levels(m, out=(x, y))


@pytest.mark.parametrize(
    "toolchain",
    ["embedded", "gtfn_cpu", "dace_cpu"],
)
def test_a_scan_without_fields_takes_a_static_parameter(
    request: pytest.FixtureRequest, toolchain: str
) -> None:
    prog = static_scan_without_fields
    if toolchain != "embedded":
        prog = prog.with_backend(request.getfixturevalue(toolchain))
    x, y = np.zeros(SHAPE), np.zeros(SHAPE, np.int64)
    prog(np.int64(2), x, y)
    s, expected_x = 0.0, np.zeros(SHAPE)
    for k in range(SHAPE[2]):
        s = 0.5 * s + 1.0
        expected_x[:, :, k] = s
    np.testing.assert_array_equal(x, expected_x)
    np.testing.assert_array_equal(y, np.broadcast_to(2 * np.arange(1, SHAPE[2] + 1), SHAPE))


# --- gtfn_cpu (with its IR transforms) differed from the embedded executor ----------------
# Found (fuzzer, the default derandomized draws of this branch before they changed): the
# program below, with FuzzProgram.arguments(41), gave output x3_0 that differed from the
# embedded executor's on gtfn_cpu in 18 of 196 points (relative 1e-8 to 3e-9), while
# gtfn_cpu_no_transforms and dace_cpu agreed bit for bit. The C++ was right; GCC 12.2 at -O3
# dropped the float32 rounding of `sc.astype(sc.astype(nu ** 2, sc.float32), sc.float64)`
# where predictive commoning had unrolled the K loop (nu is also read at K - 1) and the SLP
# vectorizer vectorized it. Fixed: both families compile with -fno-predictive-commoning
# (docs/adr/0041; the reduced program and loop: tests/steps/cpp/test_gcc_rounding_reproducer.py).

GTFN_TRANSFORMS_SOURCE = (
    FUZZ_PRELUDE
    + """

class Rec0(NamedTuple):
    u: F
    v: F


@sc.field_operator
def scan0_step(u: float, v: float) -> float:
    return 0.5 * u + v


@sc.scan_operator(axis=K, forward=False, init=(0.0, (1.0, 0)))
def scan0(state, x0: F):
    s, (t, c) = state
    return scan0_step(s, ((s ** 2) * s)), (0.5 * t - s, c + sc.astype(x0 > 0.0, sc.int64))


@sc.field_operator
def op0(a: F, b: F, nu: FK, koff: N32, alpha: sc.float64, beta: sc.float32, k0: sc.int32, k1: sc.int64) -> tuple[F, tuple[N, F]]:
    return sc.where(sc.astype((sc.where(sc.math.abs(sc.broadcast(alpha, (I, J, K))) < 1e9, sc.broadcast(alpha, (I, J, K)), 0.0)), sc.int64) >= sc.where(scan0(a)[1][0] == sc.concat_where(K >= k0 + 1, a, sc.broadcast(nu, (I, J, K))), k1, sc.astype(sc.broadcast(k0, (I, J, K)), sc.int64)), a(sc.as_offset(K, koff)), (sc.astype(sc.broadcast(beta, (I, J, K)), sc.float64) if beta < 0.5 else sc.broadcast((1.0 + nu), (I, J, K)))), (sc.astype(sc.math.floor(sc.where(sc.math.abs((-sc.math.minimum(b, sc.broadcast(alpha, (I, J, K))))) < 1e9, (-sc.math.minimum(b, sc.broadcast(alpha, (I, J, K)))), 0.0)), sc.int64), b(sc.as_offset(K, koff(J - 1))))


@sc.field_operator
def op1(x0_0: F) -> F:
    return x0_0


@sc.field_operator
def op2(beta: sc.float32) -> F32:
    return sc.concat_where(K < 2, sc.broadcast(beta, (I, J, K)), sc.broadcast(sc.float32((-0.3)), (I, J, K)))


@sc.field_operator
def op3(tp: Rec0, nu: FK, h: FIJ, alpha: sc.float64, k1: sc.int64, x0_2: F) -> tuple[F, F]:
    return sc.concat_where(I >= k1 - 1, (((-(tp.u)(K - 2)) * sc.astype(sc.astype((nu ** 2), sc.float32), sc.float64)), sc.concat_where((K >= 1) & (K < sc.size(K) - 1), ((nu)(K - 1) * (sc.broadcast(alpha, (I, J, K)) ** 2)), sc.broadcast((sc.astype(sc.astype(h, sc.float32), sc.float64))(I + 2), (I, J, K)))), (((tp.v / (1.0 + sc.float64(2.0) * sc.float64(2.0))))(I + 2), (sc.math.arctan(x0_2))(K - 1)))


@sc.program(static_params=('k1',))
def fuzz_program(a: F, b: F, nu: FK, h: FIJ, koff: N32, alpha: sc.float64, beta: sc.float32, k0: sc.int32, k1: sc.int64, kd0: sc.int64, x0_0: F, x0_1: N, x0_2: F, x1_0: F, x2_0: F32, x3_0: F, x3_1: F):
    op0(a, b, nu, koff, alpha, beta, k0 // 2, k1, out=(x0_0, (x0_1, x0_2)), domain={K: (0, None)})
    op1(x0_0, out=x1_0, domain={I: (1, None), K: (0, kd0)})
    op2(beta, out=x2_0, domain={K: (1, -1)})
    op3(Rec0(a, x0_0), nu, h, (-alpha) / 4.0, k1, x0_2, out=(x3_0, x3_1), domain={I: (1, -3), K: (3, -1)})
"""
)


def test_gtfn_transforms_agree_with_the_embedded_executor_on_a_fuzz_program(
    gtfn_cpu: Any,
) -> None:
    from .fuzz_programs import FuzzProgram, compare_outputs

    fuzz = FuzzProgram(
        source=GTFN_TRANSFORMS_SOURCE,
        shape=(7, 4, 7),
        params=GTFN_TRANSFORMS_PARAMS,
        outputs=("x0_0", "x0_1", "x0_2", "x1_0", "x2_0", "x3_0", "x3_1"),
        exact=(True, True, True, True, True, True, False),
        layout="C",
        bounds=(("kd0", "b", 0, 0),),
        static=("k1",),
    )
    prog = fuzz.build()
    expected = fuzz.arguments(41)
    prog(*expected)
    actual = fuzz.arguments(41)
    prog.with_backend(gtfn_cpu)(*actual)
    compare_outputs(fuzz, actual, expected, "gtfn_cpu")


GTFN_TRANSFORMS_PARAMS = (
    ("a", "float64", "IJK"),
    ("b", "float64", "IJK"),
    ("nu", "float64", "K"),
    ("h", "float64", "IJ"),
    ("koff", "int32", "IJK"),
    ("alpha", "float64", ""),
    ("beta", "float32", ""),
    ("k0", "int32", ""),
    ("k1", "int64", ""),
    ("kd0", "int64", ""),
    ("x0_0", "float64", "IJK"),
    ("x0_1", "int64", "IJK"),
    ("x0_2", "float64", "IJK"),
    ("x1_0", "float64", "IJK"),
    ("x2_0", "float32", "IJK"),
    ("x3_0", "float64", "IJK"),
    ("x3_1", "float64", "IJK"),
)
