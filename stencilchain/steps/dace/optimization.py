"""DaCe's auto-optimizer on the CPU, less the steps that find nothing to do in an SDFG the
translator built (docs/adr/0047-dace-cpu-optimizer-by-construction.md).

`dace.transformation.auto.auto_optimize.auto_optimize` simplifies an SDFG three times,
fuses maps greedily (twice), and looks for fast library implementations. The translator
already builds what those steps would make of its SDFGs (fused bodies, tiled maps,
no library nodes), and the seconds they take to find that out are most of a new
program's translation: `LiftTrivialIf` asks sympy's `simplify` whether each condition
on the strides is constant (the translator's conditions are never inside a loop, and
the constant ones, of constant domains, are removed by `DeadStateElimination`, which
`simplify` still runs), the map fusions propagate memlets. `optimize_for_cpu` runs the
rest, in the auto-optimizer's order; tests/steps/dace/test_dace_optimization.py checks
that DaCe's own auto_optimize leaves its result unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import dace

__all__ = ["SKIPPED_SIMPLIFY_PASSES", "optimize_for_cpu", "simplify"]

# Passes of DaCe's simplify that the translator's SDFGs never need (see the docstring)
SKIPPED_SIMPLIFY_PASSES = frozenset({"LiftTrivialIf"})


def simplify(sdfg: dace.SDFG, *, validate: bool = True, validate_all: bool = False) -> None:
    """DaCe's simplify without SKIPPED_SIMPLIFY_PASSES."""
    sdfg.simplify(validate=validate, validate_all=validate_all, skip=set(SKIPPED_SIMPLIFY_PASSES))


def optimize_for_cpu(
    sdfg: dace.SDFG,
    *,
    symbols: Mapping[str, int],
    validate: bool = True,
    validate_all: bool = False,
) -> None:
    """What DaCe's `auto_optimize(sdfg, CPU, validate, validate_all, symbols)` does to an
    SDFG of the translator, in place: simplified once, loops to maps, maps collapsed,
    connector types, schedules and storage inferred, small arrays on the stack, transients
    persistent, the known `symbols` specialized."""
    import dace
    from dace.sdfg import infer_types
    from dace.transformation.auto.auto_optimize import (
        make_transients_persistent,
        move_small_arrays_to_stack,
        tile_wcrs,
    )
    from dace.transformation.dataflow import MapCollapse, TrivialMapElimination
    from dace.transformation.interstate import LoopToMap, MoveLoopIntoMap

    sdfg.apply_transformations_repeated(
        TrivialMapElimination, validate=validate, validate_all=validate_all
    )
    while True:
        simplify(sdfg, validate=False, validate_all=validate_all)
        if not sdfg.apply_transformations_repeated(
            LoopToMap, validate=False, validate_all=validate_all
        ):
            break
    sdfg.apply_transformations_repeated(MapCollapse, validate=False, validate_all=validate_all)
    sdfg.reset_cfg_list()
    sdfg.apply_transformations_repeated([MoveLoopIntoMap])
    for nested in list(sdfg.all_sdfgs_recursive()):
        tile_wcrs(nested, validate_all)
    sdfg.apply_transformations_repeated(MapCollapse, validate=False, validate_all=validate_all)
    infer_types.infer_connector_types(sdfg)
    infer_types.set_default_schedule_and_storage_types(sdfg, None)
    sdfg.expand_library_nodes()
    for nested in sdfg.all_sdfgs_recursive():
        nested.openmp_sections = False
    move_small_arrays_to_stack(sdfg)
    make_transients_persistent(sdfg, dace.DeviceType.CPU)
    known = {name: value for name, value in symbols.items() if name in sdfg.free_symbols}
    if known:
        sdfg.specialize(known)
    sdfg.reset_cfg_list()
    if validate or validate_all:
        sdfg.validate()
