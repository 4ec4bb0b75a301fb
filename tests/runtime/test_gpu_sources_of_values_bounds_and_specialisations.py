"""The CUDA sources of the constructs of tuples as values (astype, branches, tuple and
nested arguments, tuple results over different dimensions, named collections, nested scan states, gt4py-style scan annotations),
bounds and conditions from scalars (parameter expressions, concat_where on scalars, scans
in concat_where branches), static parameters, tables of any width, scan arguments over
fewer dimensions and programs specialised for fields over their own ranges build with
nvcc, for both families (no GPU is needed to build them)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from stencilchain.containers import build_container
from stencilchain.program.own_ranges import specialise_ranges
from tests.program import test_concat_where_scalars as cws
from tests.program import test_named_collections as nc
from tests.program import test_own_ranges as own
from tests.program import test_parameter_expressions as pe
from tests.program import test_scan_annotations as sa
from tests.program import test_scan_broadcast_args as sb
from tests.program import test_scan_nested_state as sns
from tests.program import test_scans_in_concat_where as sic
from tests.program import test_staggered as stag
from tests.program import test_static_params as sp
from tests.program import test_table_specialisation as ts
from tests.program import test_tuple_results_own_domains as tro
from tests.program import test_tuple_values as tv

PROGRAMS: dict[str, Any] = {
    "astype": tv.astype_program,
    "branches": tv.branches_program,
    "tuple_arguments": tv.tuple_program,
    "tuple_results_own_domains": tro.given_per_field,
    "tuple_results_through_temporaries": tro.through_temporaries,
    "named_collections": nc.records,
    "named_collection_astype": nc.calming,
    "nested_scan_state": sns.nested_scan,
    "gt4py_scan_annotations": sa.gt4py_scans,
    "parameter_expressions": pe.levels,
    "concat_where_scalars": cws.columns,
    "concat_where_scalars_explicit": cws.explicit,
    "scans_in_concat_where": sic.sweeps,
    "static_parameters": sp.levels.specialise((3, True)),
    "table_width": ts.mesh_sums.specialise_tables(c2e=(4, True)),
    "scan_broadcast_cell": sb.column_decay,
    "scan_broadcast_ijk": sb.mixed_program,
    "scan_broadcast_gt4py": sb.gt4py_program,
    # half levels: theta and out one level short of w (the bindings shift no pointer)
    "own_ranges_half_levels": specialise_ranges(
        own.to_full_levels.ir, {"theta": ((0, 0), (0, 1)), "out": ((0, 0), (0, 1))}
    ),
    # an origin: out starts at 1 (the bindings shift its pointer back by one point)
    "own_ranges_origin": specialise_ranges(own.copy.ir, {"out": ((1, 2),)}),
    # staggered: w over KHalf, one level longer than dz and out over K
    "staggered_half_levels": specialise_ranges(
        stag.divergence.ir, {"dz": ((0, 0), (0, 1)), "out": ((0, 0), (0, 1))}
    ),
}


@pytest.fixture(scope="module", params=["gtfn", "dace"])
def gpu_toolchain(request: pytest.FixtureRequest, session_cache_dir: Path) -> Any:
    if request.param == "dace":
        pytest.importorskip("dace")
    container = build_container({}, cache_dir=session_cache_dir, device="gpu")
    return getattr(container, request.param).toolchain()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_cuda_sources_build(gpu_toolchain: Any, name: str) -> None:
    compiled = gpu_toolchain.compile(PROGRAMS[name])
    assert compiled.artifact.module_path.is_file()
