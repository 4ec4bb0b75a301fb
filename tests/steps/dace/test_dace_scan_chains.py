"""Chains of scans on the DaCe CPU toolchain (steps/dace/scans.py, ADR 0053): consecutive
scans over one domain whose temporaries only the next one reads run in one nested SDFG per
block of columns, the temporaries in buffers of the block instead of arrays. Results equal
the embedded executor's bit for bit in C, Fortran and sliced layouts, for sizes that are
not multiples of a block, over a sub-range of the levels starting at a parameter, and with
a scan result that no call reads; the plain toolchain and an external workspace keep one
block per call and the temporaries as arrays.

Compiles: four small programs on each of the two CPU toolchains.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

dace = pytest.importorskip("dace")

import stencilchain as sc  # noqa: E402
from stencilchain.examples import tridiagonal  # noqa: E402
from stencilchain.program.device import Device  # noqa: E402
from stencilchain.steps.dace.translator import DaCeTranslator  # noqa: E402

I, J, K = tridiagonal.I, tridiagonal.J, tridiagonal.K
F3 = tridiagonal.Field3D


@sc.scan_operator(axis=K, forward=True, init=(0.0, 1.0))
def _sum_and_product(state, f: F3, g: F3):  # type: ignore[no-untyped-def]
    total, product = state
    return total + f, 0.5 * product * g + f


@sc.scan_operator(axis=K, forward=False, init=0.0)
def _down(above, s: F3, g: F3):  # type: ignore[no-untyped-def]
    return 0.25 * above + s * g


@sc.scan_operator(axis=K, forward=True, init=0.0)
def _up(below, t: F3):  # type: ignore[no-untyped-def]
    return below * 0.5 - t


@sc.program
def three_scans(f: F3, g: F3, out: F3, k0: sc.int64) -> None:
    """Three scans in a chain over levels [k0, end - 1); the product no call reads."""
    domain = {K: (k0, -1)}
    s, _p = _sum_and_product(f, g, domain=domain)
    t = _down(s, g, domain=domain)
    _up(t, out=out, domain=domain)


@sc.program
def product_read_later(f: F3, g: F3, out: F3, out2: F3) -> None:
    """The product is read two calls later: the first scan is no link of a chain."""
    s, p = _sum_and_product(f, g)
    t = _down(s, g)
    _up(t, out=out)
    _up(p, out=out2)


SHAPE = (67, 70, 9)  # neither I nor J a multiple of a block


def _inputs(*names: str, outs: tuple[str, ...] = ("out",)) -> Callable[[int], dict[str, Any]]:
    def make(seed: int) -> dict[str, Any]:
        rng = np.random.default_rng(seed)
        values: dict[str, Any] = {n: rng.uniform(0.5, 1.5, SHAPE) for n in names}
        for out in outs:
            values[out] = np.zeros(SHAPE)
        return values

    return make


def _tridiagonal_inputs(seed: int) -> dict[str, Any]:
    return dict(tridiagonal.make_inputs(SHAPE, np.random.default_rng(seed)))


def _three_scans_inputs(seed: int) -> dict[str, Any]:
    values = _inputs("f", "g")(seed)
    values["k0"] = 2
    return values


CASES: dict[str, tuple[sc.Program, Callable[[int], dict[str, Any]]]] = {
    "tridiagonal": (tridiagonal.PROGRAM, _tridiagonal_inputs),
    "three_scans": (three_scans, _three_scans_inputs),
    "product_read_later": (product_read_later, _inputs("f", "g", outs=("out", "out2"))),
}


def _in_layout(value: Any, kind: str) -> Any:
    if not isinstance(value, np.ndarray):
        return value
    if kind in ("C", "F"):
        return np.array(value, order=kind)  # a copy: the inputs stay as they were
    big = np.zeros(tuple(2 * n + 1 for n in value.shape), dtype=value.dtype)
    view = big[tuple(slice(1, None, 2) for _ in value.shape)]
    view[...] = value
    return view


@pytest.mark.parametrize("kind", ["C", "F", "sliced"])
@pytest.mark.parametrize("fixture", ["dace_cpu", "dace_cpu_noopt"])
@pytest.mark.parametrize("case", CASES)
def test_chains_equal_the_embedded_executor(
    case: str, fixture: str, kind: str, request: pytest.FixtureRequest
) -> None:
    program, make = CASES[case]
    inputs = make(sum(map(ord, case)))
    embedded = {k: _in_layout(v, kind) for k, v in inputs.items()}
    compiled = {k: _in_layout(v, kind) for k, v in inputs.items()}
    program(**embedded)
    program.with_backend(request.getfixturevalue(fixture))(**compiled)
    written = {o for call in program.ir.calls for o in call.outs if not program.ir.is_temporary(o)}
    for name in written:
        assert np.any(embedded[name] != inputs[name]), f"{name} not written"
        np.testing.assert_array_equal(compiled[name], embedded[name], err_msg=name)


def _chain_structure(sdfg: Any) -> tuple[set[str], list[str]]:
    """The transients of the program's SDFG, and the labels of its nested SDFGs."""
    from dace.sdfg import nodes

    transients = {name for name, desc in sdfg.arrays.items() if desc.transient}
    nested = [
        node.sdfg.label
        for node, _ in sdfg.all_nodes_recursive()
        if isinstance(node, nodes.NestedSDFG)
    ]
    return transients, nested


def test_a_chain_keeps_its_temporaries_in_buffers_of_a_block() -> None:
    program = tridiagonal.PROGRAM.ir
    temporaries = {t.name for t in program.temporaries}
    sdfg = DaCeTranslator(device=Device.CPU).build_sdfg(program)
    transients, nested = _chain_structure(sdfg)
    assert not transients & temporaries
    # one nested SDFG per loop order (I or J innermost) and block width
    assert len(nested) == 4 and all(label.startswith("calls0_1_chain") for label in nested)
    for column in sdfg.all_sdfgs_recursive():
        if column is sdfg:
            continue
        buffers = {n for n, d in column.arrays.items() if d.transient and n in temporaries}
        assert buffers == temporaries
        assert all(column.arrays[n].storage == dace.StorageType.CPU_Heap for n in buffers)


@pytest.mark.parametrize(
    "translator",
    [
        DaCeTranslator(device=Device.CPU, auto_optimize=False),
        DaCeTranslator(device=Device.CPU, external_workspace=True),
    ],
    ids=["noopt", "workspace"],
)
def test_no_chain_without_auto_optimization_or_with_a_workspace(
    translator: DaCeTranslator,
) -> None:
    program = tridiagonal.PROGRAM.ir
    transients, nested = _chain_structure(translator.build_sdfg(program))
    assert {t.name for t in program.temporaries} <= transients
    assert nested and not any("chain" in label for label in nested)


def test_a_result_read_two_calls_later_stops_the_chain() -> None:
    transients, nested = _chain_structure(
        DaCeTranslator(device=Device.CPU).build_sdfg(product_read_later.ir)
    )
    assert {label.split("_inner")[0] for label in nested} == {
        "call0__sum_and_product",
        "calls1_2_chain",
        "call3__up",
    }
    assert len(transients) == 2  # the product, and the sum that enters the chain


def test_in_c_order_a_block_stages_what_its_scans_write() -> None:
    """Where the levels are the fastest dimension (blocks of 64), the block writes `x` into
    a buffer of its columns at every level and one tasklet stores it column by column
    (ADR 0060); the wider blocks of the other order store `x` as they compute it. The
    fixed C++ of the column stores is in the program once."""
    sdfg = DaCeTranslator(device=Device.CPU).build_sdfg(tridiagonal.PROGRAM.ir)
    columns = [s for s in sdfg.all_sdfgs_recursive() if s is not sdfg]
    narrow = [s for s in columns if "_blocks64_" in s.label]
    wide = [s for s in columns if "_blocks256_" in s.label]
    assert len(narrow) == len(wide) == 2  # I or J innermost
    for column in narrow:
        assert column.arrays["sc_staged_x"].transient
        stores = [n for n, _ in column.all_nodes_recursive() if "store_columns" in str(n)]
        assert any(
            "sc_store_columns(" in getattr(n, "code", dace.properties.CodeBlock("")).as_string
            for n in stores
        )
    for column in wide:
        assert "sc_staged_x" not in column.arrays
    code = "".join(block.as_string for block in sdfg.global_code.values())
    assert code.count("inline void sc_store_tile8(") == 1


def test_with_a_workspace_no_block_stages_its_columns() -> None:
    """The caller of a workspace provides every transient's memory; a block's staging
    buffer, sized by the block's levels and allocated per block, would not fit it."""
    translator = DaCeTranslator(device=Device.CPU, external_workspace=True)
    sdfg = translator.build_sdfg(tridiagonal.PROGRAM.ir)
    assert not any(n.startswith("sc_staged_") for _, n, _ in sdfg.arrays_recursive())
    assert "sc_store_columns" not in "".join(b.as_string for b in sdfg.global_code.values())


def test_each_level_of_a_block_is_one_simd_loop_over_its_columns() -> None:
    """A block's level is one tasklet looping over the block's columns under `#pragma omp
    simd` (GTFN's loop, ADR 0065), its bound naming the level (GCC would unroll-and-jam
    the level loop otherwise); no map is left inside a level loop."""
    from dace.sdfg import nodes
    from dace.sdfg.state import LoopRegion

    sdfg = DaCeTranslator(device=Device.CPU).build_sdfg(tridiagonal.PROGRAM.ir)
    columns = [s for s in sdfg.all_sdfgs_recursive() if s is not sdfg]
    assert len(columns) == 4  # I or J innermost, blocks of 64 or 256
    for column in columns:
        loops = [b for b in column.all_control_flow_blocks() if isinstance(b, LoopRegion)]
        assert len(loops) == 2  # the forward sweep's levels, then the backward's
        for loop in loops:
            (state,) = loop.nodes()
            kinds = {type(n) for n in state.nodes()}
            assert nodes.MapEntry not in kinds
            (tasklet,) = [n for n in state.nodes() if isinstance(n, nodes.Tasklet)]
            code = tasklet.code.as_string
            assert "#pragma omp simd\nfor (std::int64_t sc_b = 0; sc_b < sc_columns;" in code
            assert "sc_columns_stop + sc_level - sc_start})" in code
