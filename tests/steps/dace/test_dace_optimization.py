"""The translator's CPU optimization (stencilchain.steps.dace.optimization) against DaCe's own:
the steps it leaves out find nothing to do in the translator's SDFGs, so DaCe's
`auto_optimize` (with auto-optimization) and DaCe's full `simplify` (without) give the
very SDFG text the translator gives, for every example, the test programs of every
construct, empty and constant domains, a zero-dimensional field, and both data layouts.

Compiles nothing; each case runs DaCe's slow passes once (seconds for the scans).
"""

from __future__ import annotations

from typing import Any

import pytest

dace = pytest.importorskip("dace")

import stencilchain as sc  # noqa: E402
from stencilchain import examples  # noqa: E402
from stencilchain.examples import mesh_model  # noqa: E402
from stencilchain.program.device import Device  # noqa: E402
from stencilchain.steps.dace.build_context import BuildContext  # noqa: E402
from stencilchain.steps.dace.configuration import sdfg_construction  # noqa: E402
from stencilchain.steps.dace.optimization import SKIPPED_SIMPLIFY_PASSES  # noqa: E402
from stencilchain.steps.dace.program_sdfg import program_sdfg  # noqa: E402
from stencilchain.steps.dace.sdfg_text import sdfg_to_source  # noqa: E402
from stencilchain.steps.dace.translator import DaCeTranslator  # noqa: E402
from stencilchain.steps.settings import DataLayout  # noqa: E402
from tests.steps.dace.test_dace_translator import (  # noqa: E402
    every_construct,
    one_dimension,
    sometimes_empty,
)

I, K = sc.Dimension("I"), sc.Dimension("K")
F1 = sc.Field[[I], sc.float64]
FK = sc.Field[[I, K], sc.float64]
F0 = sc.Field[[], sc.float64]


@sc.field_operator
def _scaled(f: F1, z: F0) -> F1:
    return f * z


@sc.field_operator
def _point(z: F0) -> F0:
    return z + 1.0


@sc.program
def constant_domains(f: F1, z: F0, out: F1, zz: F0) -> None:
    _scaled(f, z, out=out, domain={I: (2, 5)})  # a constant domain: never empty
    _scaled(f, z, out=out, domain={I: (-3, -1)})  # from the end on both sides
    _point(z, out=zz)  # zero-dimensional: one point


@sc.field_operator
def _column(f: FK) -> FK:
    return f(K - 1) + f


@sc.program
def parameter_bounds(f: FK, out: FK, lo: sc.int32, hi: sc.int32) -> None:
    _column(f, out=out, domain={I: (lo, hi), K: (1, None)})


PROGRAMS: dict[str, Any] = {
    **{m.__name__.rsplit(".", 1)[-1]: m.PROGRAM for m in examples.ALL_EXAMPLES},
    "mesh_model": mesh_model.PROGRAM,
    "every_construct": every_construct,
    "sometimes_empty": sometimes_empty,
    "one_dimension": one_dimension,
    "constant_domains": constant_domains,
    "parameter_bounds": parameter_bounds,
}
# the unit-stride layout changes the loop orders and scan blocks: one of each kind
UNIT_STRIDE = ("hdiff", "tridiagonal", "nabla", "mesh_column", "every_construct")


def _dace_optimized(translator: DaCeTranslator, program: Any) -> str:
    """The SDFG text of `program` built as the translator builds it, then optimized by
    DaCe's own auto_optimize (or full simplify), as the translator did before."""
    from dace.transformation.auto.auto_optimize import auto_optimize

    ir_program = program.ir
    with sdfg_construction():
        context = BuildContext.of(
            ir_program,
            device=Device.CPU,
            data_layout=translator.data_layout,
            auto_optimize=translator.auto_optimize,
            disable_transforms=False,
            external_workspace=False,
        )
        sdfg = program_sdfg(context)
        if translator.auto_optimize:
            symbols = translator.derived_auto_optimize_args(ir_program)["symbols"]
            auto_optimize(sdfg, dace.DeviceType.CPU, symbols=symbols)  # type: ignore[arg-type]
        else:
            sdfg.simplify()
        sdfg.validate()
    return sdfg_to_source(sdfg)


CASES = [
    (name, layout, optimize)
    for name in PROGRAMS
    for layout in (DataLayout.STRIDED, DataLayout.UNIT_STRIDE)
    if layout is DataLayout.STRIDED or name in UNIT_STRIDE
    for optimize in (True, False)
]


@pytest.mark.parametrize(
    ("name", "layout", "optimize"),
    CASES,
    ids=[f"{n}-{lay.value}-{'opt' if o else 'noopt'}" for n, lay, o in CASES],
)
def test_dace_optimizer_leaves_the_translation_unchanged(
    name: str, layout: DataLayout, optimize: bool
) -> None:
    translator = DaCeTranslator(Device.CPU, auto_optimize=optimize, data_layout=layout)
    ours = translator(PROGRAMS[name].ir).source_code
    assert ours == _dace_optimized(translator, PROGRAMS[name])


def test_the_skipped_passes_are_dace_simplify_passes() -> None:
    from dace.transformation.passes.simplify import SIMPLIFY_PASSES

    assert {p.__name__ for p in SIMPLIFY_PASSES} >= SKIPPED_SIMPLIFY_PASSES


@pytest.mark.parametrize("name", ["tridiagonal", "sedimentation", "mesh_column", "mesh_model"])
def test_nested_sdfgs_differ_so_dace_shares_no_code_between_them(name: str) -> None:
    """The CPU builds turn off DaCe's `unique_functions` (build_settings.py): it would hash
    every nested SDFG to generate equal ones once, and the translator's never are."""
    from stencilchain.steps.dace.sdfg_text import sdfg_from_source

    sdfg = sdfg_from_source(DaCeTranslator(Device.CPU)(PROGRAMS[name].ir).source_code)
    nested = [n.sdfg for n, _ in sdfg.all_nodes_recursive() if isinstance(n, dace.nodes.NestedSDFG)]
    hashes = [s.hash_sdfg() for s in nested]
    assert nested and len(set(hashes)) == len(hashes)
