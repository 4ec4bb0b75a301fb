"""scripts/icon4py_coverage.py: its mechanics on a small tree in icon4py's layout written
here (gt4py.next resolved to the compatible front end, icon4py's common modules, stand-ins
where they fail, programs traced, run embedded and on GTFN, compared, one file
deliberately not expressible), and optionally on a real icon4py tree named by
STENCILCHAIN_ICON4PY_SRC (skipped without it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "icon4py_coverage.py"
ENV = "STENCILCHAIN_ICON4PY_SRC"
COMMON = "model/common/src/icon4py/model/common"
STENCILS = "model/atmosphere/demo/src/icon4py/model/atmosphere/demo/stencils"

TREE = {
    f"{COMMON}/__init__.py": "",
    f"{COMMON}/dimension.py": """
        import gt4py.next as gtx

        KDim = gtx.Dimension("K", kind=gtx.DimensionKind.VERTICAL)
        CellDim = gtx.Dimension("Cell")
        EdgeDim = gtx.Dimension("Edge")
        VertexDim = gtx.Dimension("Vertex")
        C2EDim = gtx.Dimension("C2E", gtx.DimensionKind.LOCAL)
        E2CDim = gtx.Dimension("E2C", gtx.DimensionKind.LOCAL)
        V2EDim = gtx.Dimension("V2E", gtx.DimensionKind.LOCAL)
        C2E = gtx.FieldOffset("C2E", source=EdgeDim, target=(CellDim, C2EDim))
        E2C = gtx.FieldOffset("E2C", source=CellDim, target=(EdgeDim, E2CDim))
        V2E = gtx.FieldOffset("V2E", source=EdgeDim, target=(VertexDim, V2EDim))
        Koff = gtx.FieldOffset("Koff", source=KDim, target=(KDim,))
    """,
    f"{COMMON}/type_alias.py": """
        import gt4py.next as gtx

        wpfloat = gtx.float64
        vpfloat = wpfloat
    """,
    # generic aliases over a TypeVar, as icon4py writes them: a stand-in where the front
    # end cannot import them
    f"{COMMON}/field_type_aliases.py": """
        from typing import TypeVar

        import gt4py.next as gtx
        from gt4py.next import Dims, Field

        from icon4py.model.common import dimension as dims
        from icon4py.model.common.type_alias import vpfloat, wpfloat

        T = TypeVar("T", wpfloat, vpfloat, float, bool, gtx.int32)
        CellKField = Field[Dims[dims.CellDim, dims.KDim], T]
        EdgeKField = Field[Dims[dims.EdgeDim, dims.KDim], T]
        VertexKField = Field[Dims[dims.VertexDim, dims.KDim], T]
    """,
    f"{STENCILS}/__init__.py": "",
    f"{STENCILS}/edge_operators.py": """
        import gt4py.next as gtx
        from gt4py.next import neighbor_sum

        from icon4py.model.common import dimension as dims, field_type_aliases as fa
        from icon4py.model.common.dimension import E2C, V2E
        from icon4py.model.common.type_alias import wpfloat


        @gtx.field_operator
        def _edge_difference(c: fa.CellKField[wpfloat]) -> fa.EdgeKField[wpfloat]:
            return c(E2C[1]) - c(E2C[0])


        @gtx.field_operator
        def _vertex_sum(e: fa.EdgeKField[wpfloat]) -> fa.VertexKField[wpfloat]:
            return neighbor_sum(e(V2E), axis=dims.V2EDim)
    """,
    f"{STENCILS}/gradient_and_average.py": """
        import gt4py.next as gtx
        from gt4py.next import neighbor_sum

        from icon4py.model.atmosphere.demo.stencils.edge_operators import (
            _edge_difference,
            _vertex_sum,
        )
        from icon4py.model.common import dimension as dims, field_type_aliases as fa
        from icon4py.model.common.dimension import C2E
        from icon4py.model.common.type_alias import wpfloat


        @gtx.field_operator
        def _cell_average(
            e: fa.EdgeKField[wpfloat], w: gtx.Field[gtx.Dims[dims.CellDim, dims.C2EDim], wpfloat]
        ) -> fa.CellKField[wpfloat]:
            return neighbor_sum(e(C2E) * w, axis=dims.C2EDim)


        @gtx.program(grid_type=gtx.GridType.UNSTRUCTURED)
        def gradient_and_average(
            c: fa.CellKField[wpfloat],
            w: gtx.Field[gtx.Dims[dims.CellDim, dims.C2EDim], wpfloat],
            grad: fa.EdgeKField[wpfloat],
            avg: fa.CellKField[wpfloat],
            vsum: fa.VertexKField[wpfloat],
            horizontal_start: gtx.int32,
            horizontal_end: gtx.int32,
            vertical_start: gtx.int32,
            vertical_end: gtx.int32,
        ):
            _edge_difference(c, out=grad, domain={dims.KDim: (vertical_start, vertical_end)})
            _cell_average(
                grad,
                w,
                out=avg,
                domain={
                    dims.CellDim: (horizontal_start, horizontal_end),
                    dims.KDim: (vertical_start, vertical_end),
                },
            )
            _vertex_sum(grad, out=vsum, domain={dims.KDim: (vertical_start, vertical_end)})
    """,
    f"{STENCILS}/interface_levels.py": """
        import gt4py.next as gtx

        from icon4py.model.common import dimension as dims, field_type_aliases as fa
        from icon4py.model.common.dimension import Koff
        from icon4py.model.common.type_alias import vpfloat, wpfloat


        @gtx.field_operator
        def _to_interfaces(full: fa.CellKField[wpfloat]) -> fa.CellKField[vpfloat]:
            return 0.5 * (full + full(Koff[-1]))


        @gtx.field_operator
        def _layer_thickness(half: fa.CellKField[vpfloat], s: wpfloat) -> fa.CellKField[wpfloat]:
            return s * (half - half(Koff[1]))


        @gtx.program
        def to_interfaces(
            full: fa.CellKField[wpfloat],
            half: fa.CellKField[vpfloat],
            vertical_start: gtx.int32,
            vertical_end: gtx.int32,
        ):
            _to_interfaces(full, out=half, domain={dims.KDim: (vertical_start, vertical_end)})


        @gtx.program
        def layer_thickness(
            half: fa.CellKField[vpfloat],
            dz: fa.CellKField[wpfloat],
            scale: wpfloat,
            horizontal_start: gtx.int32,
            horizontal_end: gtx.int32,
            vertical_start: gtx.int32,
            vertical_end: gtx.int32,
        ):
            _layer_thickness(
                half,
                scale,
                out=dz,
                domain={
                    dims.CellDim: (horizontal_start, horizontal_end),
                    dims.KDim: (vertical_start, vertical_end),
                },
            )
    """,
    # deliberately not expressible: a reduction along K (a dimension that is not local)
    f"{STENCILS}/column_total.py": """
        import gt4py.next as gtx
        from gt4py.next import neighbor_sum

        from icon4py.model.common import dimension as dims, field_type_aliases as fa
        from icon4py.model.common.type_alias import wpfloat


        @gtx.field_operator
        def _column_total(f: fa.CellKField[wpfloat]) -> gtx.Field[gtx.Dims[dims.CellDim], wpfloat]:
            return neighbor_sum(f, axis=dims.KDim)


        @gtx.program
        def column_total(f: fa.CellKField[wpfloat], total: gtx.Field[gtx.Dims[dims.CellDim], wpfloat]):
            _column_total(f, out=total)
    """,
}


def write_tree(root: Path) -> Path:
    for rel, text in TREE.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root


def run_script(tree: Path, out: Path, cache: Path, *extra: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != ENV}  # no container knows it
    env.update(PYTHONPATH=str(REPO), OMP_NUM_THREADS="2")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--icon4py", str(tree), "--json", str(out),
         "--cache-dir", str(cache), "--quiet", *extra],
        capture_output=True, text=True, env=env, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(out.read_text())
    report["stdout"] = done.stdout
    return report


def by_program(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["program"]: r for r in report["results"]}


def test_mechanics_on_a_tree_written_here(tmp_path: Path, session_cache_dir: Path) -> None:
    tree = write_tree(tmp_path / "tree")
    report = run_script(tree, tmp_path / "report.json", session_cache_dir)
    results = by_program(report)
    assert set(results) == {
        "gradient_and_average", "to_interfaces", "layer_thickness", "column_total"
    }  # fmt: skip
    for name in ("gradient_and_average", "to_interfaces", "layer_thickness"):
        assert results[name]["verdict"] == "runs and agrees", results[name]
    # reads at K-1: the start raised to 1; at K+1 up to nlev: the field on nlev + 1 levels
    assert "half levels: half" in results["layer_thickness"]["detail"]
    wrong = results["column_total"]
    assert wrong["verdict"] == "not expressible"
    assert wrong["detail"].startswith("DefinitionError: ")
    assert wrong["location"] == f"{STENCILS}/column_total.py:10"
    # the file of field operators only is listed, imported, without a program
    files = {Path(f["file"]).name: f for f in report["files"]}
    assert files["edge_operators.py"]["programs"] == []
    assert files["edge_operators.py"]["field_operators"] == 2
    assert report["totals"] == {
        "stencil_files": 4,
        "files_with_programs": 3,
        "files_not_imported": 0,
        "files_not_expressible_at_import": 0,
        "programs": 4,
        "runs and agrees": 3,
        "runs and agrees within tolerance": 0,
        "runs and DISAGREES": 0,
        "defines but fails to run": 0,
        "not expressible": 1,
    }
    # only modules the script has stand-ins for, and only where the real import failed
    for standin in report["standins"]:
        assert standin["module"] == "icon4py.model.common.field_type_aliases"
    assert "| column_total.py | column_total | not expressible |" in report["stdout"]
    assert "| edge_operators.py | - | no program | 2 field operator(s) |" in report["stdout"]


def test_gt4py_alias_is_undone(tmp_path: Path) -> None:
    """In one process: inside the run gt4py.next is the front end; afterwards neither it
    nor the tree's icon4py modules remain."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("icon4py_coverage", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    before = sys.modules.get("gt4py.next")
    with module.gt4py_aliased():
        import gt4py.next as gtx  # type: ignore[import-not-found]

        import stencilchain.compat.gt4py as compat

        assert gtx is compat
        with pytest.raises(ImportError, match="no counterpart"):
            importlib.import_module("gt4py.next.iterator")
    assert sys.modules.get("gt4py.next") is before


@pytest.mark.slow
def test_a_real_icon4py_tree(tmp_path: Path, session_cache_dir: Path) -> None:
    """The whole run on the icon4py tree named by STENCILCHAIN_ICON4PY_SRC: no program
    whose embedded and compiled results disagree, and every file importable."""
    src = os.environ.get(ENV)
    if not src:
        pytest.skip(f"{ENV} names no icon4py source tree")
    report = run_script(Path(src), tmp_path / "report.json", session_cache_dir)
    totals = report["totals"]
    assert totals["programs"] > 0
    assert totals["runs and DISAGREES"] == 0, [
        r for r in report["results"] if r["verdict"] == "runs and DISAGREES"
    ]
