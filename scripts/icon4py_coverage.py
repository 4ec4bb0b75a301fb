"""Which of icon4py's stencils stencilchain.compat.gt4py runs, counted on icon4py's own source.

Usage:
    python scripts/icon4py_coverage.py --icon4py PATH [--json OUT] [--only TEXT]
        [--cache-dir DIR] [--nlev N] [--mesh NX NY] [--precision double|mixed|single]
        [--python-scalars-as-numpy] [--commit SHA] [--quiet]

PATH is an icon4py source tree (a checkout, or `git archive` of one). For the duration of
the run `gt4py.next` (and `gt4py.next.experimental`, `gt4py.next.constructors`) resolve to
`stencilchain.compat.gt4py`, and every `model/**/src` folder of the tree is on `sys.path`.
Each stencil file (`model/**/stencils/*.py`) is imported, and each program it defines is
traced (a DefinitionError there: not expressible), then run on a small torus mesh with
inputs made from its annotations, embedded and on run_gtfn_cpu (built in a temporary
cache folder, or in --cache-dir), and the two compared: bit for bit, or within the
tolerance docs/dsl.md gives for transcendental functions where a program uses one.

icon4py modules that stencils import but that cannot be imported here (they need Python
3.12 syntax or packages unrelated to stencils) are replaced by stand-ins written here,
only after the real import failed; the output names each one and why. Nothing of icon4py
is part of this script: it reads the tree it is given.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import importlib.abc
import importlib.machinery
import inspect
import json
import os
import re
import sys
import tempfile
import time
import traceback
import types
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

# --------------------------------------------------------------------------------------
# gt4py.next as stencilchain.compat.gt4py, for the duration of a run

ALIASES = {
    "gt4py.next": "stencilchain.compat.gt4py",
    "gt4py.next.experimental": "stencilchain.compat.gt4py.experimental",
    "gt4py.next.constructors": "stencilchain.compat.gt4py.constructors",
}


class _NoCounterpart(importlib.abc.MetaPathFinder):
    """Any other `gt4py...` module: an ImportError that says it has no counterpart."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname == "gt4py" or fullname.startswith("gt4py."):
            raise ImportError(
                f"{fullname} has no counterpart in stencilchain.compat.gt4py "
                f"(aliased: {', '.join(ALIASES)})",
                name=fullname,
            )
        return None


@contextlib.contextmanager
def gt4py_aliased() -> Iterator[None]:
    """`import gt4py.next as gtx` gives stencilchain.compat.gt4py inside the block; the
    modules named gt4py... are put back as they were afterwards."""
    saved = {n: m for n, m in sys.modules.items() if n == "gt4py" or n.startswith("gt4py.")}
    for name in saved:
        del sys.modules[name]
    package = types.ModuleType("gt4py", "stand-in package: gt4py.next is stencilchain's")
    package.__path__ = []
    sys.modules["gt4py"] = package
    for alias, target in ALIASES.items():
        module = importlib.import_module(target)
        sys.modules[alias] = module
    package.next = sys.modules["gt4py.next"]  # type: ignore[attr-defined]
    finder = _NoCounterpart()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        for name in [n for n in sys.modules if n == "gt4py" or n.startswith("gt4py.")]:
            del sys.modules[name]
        sys.modules.update(saved)


# --------------------------------------------------------------------------------------
# stand-ins for icon4py modules stencils need, used only where the real import fails


def _gtx() -> Any:
    return importlib.import_module("stencilchain.compat.gt4py")


def _standin_type_alias(precision: str) -> dict[str, Any]:
    gtx = _gtx()
    wp = gtx.float32 if precision == "single" else gtx.float64
    vp = wp if precision == "double" else gtx.float32
    return {"wpfloat": wp, "vpfloat": vp, "precision": precision}


class _FieldAlias:
    """`CellKField[wpfloat]`: a field type over fixed dimensions, its dtype given."""

    def __init__(self, *dims: Any) -> None:
        self.dims = dims

    def __getitem__(self, dtype: Any) -> Any:
        gtx = _gtx()
        return gtx.Field[gtx.Dims[self.dims], dtype]


FIELD_ALIASES = {
    "CellField": ("CellDim",),
    "EdgeField": ("EdgeDim",),
    "VertexField": ("VertexDim",),
    "KField": ("KDim",),
    "KHalfField": ("KHalfDim",),
    "CellKField": ("CellDim", "KDim"),
    "EdgeKField": ("EdgeDim", "KDim"),
    "VertexKField": ("VertexDim", "KDim"),
}


def _standin_field_type_aliases(precision: str) -> dict[str, Any]:
    """Each alias over the dimensions of icon4py's dimension module (those it has)."""
    d = vars(importlib.import_module(f"{COMMON}.dimension"))
    return {
        alias: _FieldAlias(*(d[n] for n in dims))
        for alias, dims in FIELD_ALIASES.items()
        if all(n in d for n in dims)
    }


def _standin_config_io(precision: str) -> dict[str, Any]:
    def register_enum(enum_type: Any) -> Any:
        return enum_type

    def register_config_union(union_type: Any, mapping: Any) -> None:
        return None

    return {"register_enum": register_enum, "register_config_union": register_config_union}


def _standin_data_allocation(precision: str) -> dict[str, Any]:
    def array_namespace(*arrays: Any) -> Any:
        return np

    return {"NDArray": np.ndarray, "array_namespace": array_namespace}


COMMON = "icon4py.model.common"
STANDINS: dict[str, Callable[[str], dict[str, Any]]] = {
    f"{COMMON}.type_alias": _standin_type_alias,
    f"{COMMON}.field_type_aliases": _standin_field_type_aliases,
    f"{COMMON}.config.config_io": _standin_config_io,
    f"{COMMON}.utils.data_allocation": _standin_data_allocation,
}


def _one_line(err: BaseException) -> str:
    text = f"{type(err).__name__}: {err}".strip()
    return " ".join(text.split())


def _module_path(name: str, sources: Sequence[Path]) -> Path | None:
    """The file of module `name` in one of the source folders, or None."""
    parts = name.split(".")
    for src in sources:
        for candidate in (
            src.joinpath(*parts).with_suffix(".py"),
            src.joinpath(*parts, "__init__.py"),
        ):
            if candidate.is_file():
                return candidate
    return None


def _importable_parents(name: str, sources: Sequence[Path], replaced: list[dict[str, str]]) -> None:
    """Import the packages above `name`; one whose __init__ fails (it imports what stencils
    do not need) becomes an empty package over the same folder."""
    parts = name.split(".")
    for i in range(1, len(parts)):
        package = ".".join(parts[:i])
        try:
            importlib.import_module(package)
            continue
        except Exception as err:
            reason = _one_line(err)
        init = _module_path(package, sources)
        module = types.ModuleType(package, f"stand-in package written by {__file__}")
        module.__path__ = [str(init.parent)] if init is not None else []
        sys.modules[package] = module
        replaced.append({"module": package, "reason": f"{reason}; an empty package instead"})


def install_standins(precision: str, sources: Sequence[Path]) -> list[dict[str, str]]:
    """Import each module of STANDINS that the tree has; where that fails, put a stand-in
    in its place. Returns what was replaced and why."""
    replaced: list[dict[str, str]] = []
    for name, make in STANDINS.items():
        if _module_path(name, sources) is None:
            continue
        _importable_parents(name, sources, replaced)
        try:
            importlib.import_module(name)
            continue
        except Exception as err:  # the real module cannot be imported here
            reason = _one_line(err)
        sys.modules.pop(name, None)
        module = types.ModuleType(name, f"stand-in written by {__file__}")
        module.__dict__.update(make(precision))
        sys.modules[name] = module
        parent, _, leaf = name.rpartition(".")
        setattr(sys.modules[parent], leaf, module)
        replaced.append({"module": name, "reason": reason})
    return replaced


# --------------------------------------------------------------------------------------
# the stencil files of a tree


def source_dirs(root: Path) -> list[Path]:
    """Every `src` folder under model/ that holds an `icon4py` package."""
    return sorted(p.parent for p in root.glob("model/**/src/icon4py") if p.is_dir())


def stencil_files(root: Path) -> list[tuple[Path, str]]:
    """(file, module name) of every stencils/*.py under model/, by path."""
    found = []
    for src in source_dirs(root):
        for f in sorted(src.glob("icon4py/**/stencils/*.py")):
            if f.name == "__init__.py":
                continue
            module = ".".join(f.relative_to(src).with_suffix("").parts)
            found.append((f, module))
    return sorted(found, key=lambda fm: str(fm[0].relative_to(root)))


# --------------------------------------------------------------------------------------
# the mesh and its offset provider


@dataclasses.dataclass
class Mesh:
    sizes: dict[str, int]  # entity dimension name -> size ("Cell", "Edge", "Vertex")
    tables: dict[str, np.ndarray]  # connectivity name -> table
    skips: set[str]  # connectivities with -1 entries (declared skip_value=-1)


def _rows(table: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(table, dtype=np.int32)


def make_mesh(nx: int, ny: int) -> Mesh:
    """A torus (every neighbourhood full) and the connectivities icon4py's stencils read,
    with icon4py's widths; V2E, V2C and V2E2V get -1 in their last slot at two vertices,
    as at the pentagons of ICON's global grid (the only tables with skip values there)."""
    from stencilchain import meshes

    m = meshes.torus(nx, ny)
    c2e, e2c, c2e2c, c2v = (np.asarray(t) for t in (m.c2e, m.e2c, m.c2e2c, m.c2v))
    e2v, v2e, v2c, e2c2v = (np.asarray(t) for t in (m.e2v, m.v2e, m.v2c, m.e2c2v))
    cells, edges = np.arange(m.n_cells), np.arange(m.n_edges)
    e2c2e = np.stack(
        [[x for c in e2c[e] for x in c2e[c] if x != e] for e in edges]
    )  # the other two edges of each of the edge's two cells: 4
    v2e2v = np.where(e2v[v2e, 0] == np.arange(m.n_vertices)[:, None], e2v[v2e, 1], e2v[v2e, 0])
    tables = {
        "C2E": c2e,
        "E2C": e2c,
        "C2V": c2v,
        "E2V": e2v,
        "V2E": v2e.copy(),
        "V2C": v2c.copy(),
        "V2E2V": v2e2v,
        "C2E2C": c2e2c,
        "C2E2CO": np.concatenate([cells[:, None], c2e2c], axis=1),
        "E2C2V": e2c2v,
        "E2C2E": e2c2e,
        "E2C2EO": np.concatenate([edges[:, None], e2c2e], axis=1),
        "C2E2C2E": c2e[c2e2c].reshape(m.n_cells, 9),
        "C2E2C2E2C": c2e2c[c2e2c].reshape(m.n_cells, 9),
    }
    pentagons = (0, m.n_vertices // 2)
    for name in ("V2E", "V2C", "V2E2V"):
        tables[name][list(pentagons), -1] = -1
    return Mesh(
        sizes={"Cell": m.n_cells, "Edge": m.n_edges, "Vertex": m.n_vertices},
        tables={k: _rows(v) for k, v in tables.items()},
        skips={"V2E", "V2C", "V2E2V"},
    )


def offset_provider(mesh: Mesh, dimension_module: Any) -> dict[str, Any]:
    """Every FieldOffset of icon4py's dimension module: a connectivity from the mesh's
    table of that name, or a Cartesian offset's dimension."""
    gtx = _gtx()
    provider: dict[str, Any] = {}
    for value in vars(dimension_module).values():
        if not isinstance(value, gtx.FieldOffset):
            continue
        name = value.value if hasattr(value, "value") else value.name
        target = tuple(value.target)
        if len(target) == 1:
            provider[name] = value.source
        elif name in mesh.tables:
            provider[name] = gtx.as_connectivity(
                list(target),
                value.source,
                mesh.tables[name],
                skip_value=-1 if name in mesh.skips else None,
            )
    return provider


# --------------------------------------------------------------------------------------
# inputs from a program's annotations and its traced domains

TRANSCENDENTAL = {
    "exp", "log", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh",
    "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "cbrt", "gamma", "power", "pow",
}  # fmt: skip
ULP_TOLERANCE = 4  # docs/dsl.md, "Tolerances": of a transcendental function's result


def _walk(value: Any) -> Iterator[Any]:
    """Every dataclass node under `value` (IR nodes, tuples of them), depth first."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (tuple, list)):
            stack.extend(v)
        elif dataclasses.is_dataclass(v) and not isinstance(v, type):
            yield v
            stack.extend(getattr(v, f.name) for f in dataclasses.fields(v))


def uses_transcendental(program_ir: Any) -> bool:
    for node in _walk(program_ir):
        name = type(node).__name__
        if name == "MathCall" and node.fn in TRANSCENDENTAL:
            return True
        if name == "Binary" and node.op in ("pow", "power", "**"):
            return True
    return False


@dataclasses.dataclass
class Plan:
    """What a program is called with: scalars by name, field shapes by name."""

    scalars: dict[str, Any]
    shapes: dict[str, tuple[int, ...]]
    half_levels: list[str]  # fields given one level more than the others


def _entity_size(dim: Any, mesh: Mesh, nlev: int) -> int:
    if dim.name in mesh.sizes:
        return mesh.sizes[dim.name]
    if dim.kind == "vertical":
        return nlev + 1 if dim.name.endswith("Half") else nlev
    if dim.kind == "local" and dim.name in mesh.tables:
        return int(mesh.tables[dim.name].shape[1])
    raise KeyError(f"no size for dimension {dim.name} ({dim.kind}) on this mesh")


def _raise_starts(program_ir: Any, scalars: dict[str, Any], mesh: Mesh, nlev: int) -> None:
    """A parameter that starts a call's domain, where the call (or a concat_where branch
    of it) reads below index 0 from there: raised to the lowest start that reads none."""
    for _ in range(4):
        changed = False
        for call in program_ir.calls:
            for dd in call.domain.dims:
                size = _entity_size(dd.dim, mesh, nlev)
                start, stop = dd.resolve(size, scalars)
                below = dd.halo[0]
                for w in dd.windows:
                    where = w.resolve(start, stop, size, scalars)
                    if where is not None:
                        below = max(below, start - (where[0] + w.reads[0]))
                for b in dd.starts:
                    if isinstance(b.param, str) and scalars[b.param] + b.value - below < 0:
                        scalars[b.param] = below - b.value
                        changed = True
        if not changed:
            return


def plan_call(program_ir: Any, annotations: dict[str, Any], mesh: Mesh, nlev: int) -> Plan:
    """Bounds to the whole domain (a parameter that starts a call's domain is 0, one that
    stops it is the dimension's size; raised where the call reads below it), other integer
    parameters nlev // 2, bools True, floats in [0.1, 1); each field its dimensions'
    sizes, one more level along K where a call reads or writes it above nlev (icon4py's
    half levels)."""
    rng = np.random.default_rng(len(program_ir.name))
    scalars: dict[str, Any] = {}
    for call in program_ir.calls:
        for dd in call.domain.dims:
            size = _entity_size(dd.dim, mesh, nlev)
            for b in dd.starts:
                if isinstance(b.param, str):
                    scalars.setdefault(b.param, 0)
            for b in dd.stops:
                if isinstance(b.param, str):
                    scalars.setdefault(b.param, size)
    for name, t in annotations.items():
        if name in scalars or hasattr(t, "dims"):
            continue
        dtype = np.dtype(t)
        if dtype == np.bool_:
            scalars[name] = True
        elif dtype.kind == "i":
            scalars[name] = nlev // 2
        else:
            scalars[name] = float(rng.uniform(0.1, 1.0))
    _raise_starts(program_ir, scalars, mesh, nlev)
    for name, t in annotations.items():
        if name in scalars and not hasattr(t, "dims"):
            scalars[name] = np.dtype(t).type(scalars[name])
    # a call writing a field it reads around reads a snapshot of it (program/snapshots.py):
    # the snapshot's reads are the field's
    from stencilchain.program.snapshots import snapshot_sources

    snapshot_of = snapshot_sources(program_ir)
    shapes, half = {}, []
    for name, t in annotations.items():
        if not hasattr(t, "dims"):
            continue
        names = {name} | {tmp for tmp, source in snapshot_of.items() if source == name}
        shape = [_entity_size(d, mesh, nlev) for d in t.dims]
        for axis, d in enumerate(t.dims):
            if d.kind != "vertical" or d.name.endswith("Half"):
                continue
            need = shape[axis]
            for call in program_ir.calls:
                for dd in call.domain.dims:
                    if dd.dim != d:
                        continue
                    _, stop = dd.resolve(nlev, scalars)
                    if name in call.outs:
                        need = max(need, stop)
                    for field, _lo, hi in dd.reads:
                        if field in names:
                            need = max(need, stop + hi)
                    start = max(b.resolve(nlev, scalars) for b in dd.starts)
                    for w in dd.windows:
                        where = w.resolve(start, stop, nlev, scalars)
                        if where is not None and (w.field == "" or w.field in names):
                            need = max(need, where[1] + w.reads[1])
            if need > shape[axis]:
                half.append(name)
            shape[axis] = need
        shapes[name] = tuple(shape)
    return Plan(scalars, shapes, half)


FLOAT_RANGES = ((0.1, 1.0), (0.5, 5.0))


def make_arguments(
    annotations: dict[str, Any],
    plan: Plan,
    nlev: int,
    seed: int,
    floats: tuple[float, float] = FLOAT_RANGES[0],
) -> dict[str, Any]:
    """Random fields of the planned shapes (floats in [low, high) of `floats`; int32
    fields over K named like an offset: offsets to a level inside the column but the last,
    as icon4py's own tests make them (ICON interpolates between `k + off` and `k + off +
    1`); other integers in [0, nlev); bools at random) and the planned scalars."""
    rng = np.random.default_rng(seed)
    args: dict[str, Any] = {}
    for name, t in annotations.items():
        if not hasattr(t, "dims"):
            args[name] = plan.scalars[name]
            continue
        shape = plan.shapes[name]
        dtype = t.dtype.numpy
        if dtype.kind == "f":
            args[name] = rng.uniform(*floats, shape).astype(dtype)
        elif dtype.kind == "b":
            args[name] = rng.random(shape) < 0.5
        else:
            k_axes = [i for i, d in enumerate(t.dims) if d.kind == "vertical"]
            values = rng.integers(0, nlev, shape)
            if "off" in name.lower() and k_axes:
                k = np.arange(shape[k_axes[0]]).reshape(
                    [-1 if i == k_axes[0] else 1 for i in range(len(shape))]
                )
                # k + offset is a level of the column, and so is k + offset + 1
                values = rng.integers(0, nlev - 1, shape) - k
            args[name] = values.astype(dtype)
    return args


# --------------------------------------------------------------------------------------
# one program: traced, run embedded and compiled, compared

AGREES = "runs and agrees"
AGREES_TOL = "runs and agrees within tolerance"
DISAGREES = "runs and DISAGREES"
FAILS = "defines but fails to run"
NOT_EXPRESSIBLE = "not expressible"
NO_IMPORT = "cannot be imported"
VERDICTS = (AGREES, AGREES_TOL, DISAGREES, FAILS, NOT_EXPRESSIBLE, NO_IMPORT)


@dataclasses.dataclass
class Result:
    file: str
    program: str
    verdict: str
    detail: str = ""
    location: str = ""  # file:line of the user's code a DefinitionError points at


def _location(err: BaseException, root: Path) -> str:
    loc = getattr(err, "location", None)
    if not loc:
        return ""
    path = Path(loc[0])
    with contextlib.suppress(ValueError):
        path = path.relative_to(root)
    return f"{path}:{loc[1]}"


def _reason(err: BaseException) -> str:
    """The message without the location prefix a DefinitionError puts in front."""
    reason = getattr(err, "reason", None)
    text = reason if isinstance(reason, str) else str(err)
    return f"{type(err).__name__}: {' '.join(text.split())}"


def _annotations(prog: Any) -> dict[str, Any]:
    raw = inspect.get_annotations(prog.definition, eval_str=True)
    return {n: v for n, v in raw.items() if n != "return"}


def max_ulps(want: np.ndarray, got: np.ndarray) -> float:
    """The largest difference of two arrays in units in the last place of the larger
    magnitude (NaN where the other is not, or any integer difference: inf)."""
    if np.array_equal(want, got, equal_nan=want.dtype.kind == "f"):
        return 0.0
    if want.dtype.kind != "f" or want.shape != got.shape:
        return float("inf")
    if not np.array_equal(np.isnan(want), np.isnan(got)):
        return float("inf")
    ok = ~np.isnan(want)
    w, g = want[ok].astype(np.float64), got[ok].astype(np.float64)
    spacing = np.spacing(np.maximum(np.abs(w), np.abs(g)).astype(want.dtype)).astype(np.float64)
    with np.errstate(invalid="ignore"):
        ulps = np.where(w == g, 0.0, np.abs(w - g) / spacing)
    return float(np.max(ulps)) if ulps.size else 0.0


PYTHON_SCALARS = {bool: np.bool_, float: np.float64, int: np.int64}


def numpy_scalar_annotations(prog: Any) -> list[str]:
    """--python-scalars-as-numpy: the program's parameters annotated bool, float or int
    re-annotated np.bool_, np.float64, np.int64 (what gt4py reads them as); their names."""
    raw = inspect.get_annotations(prog.definition, eval_str=True)
    changed = [n for n, v in raw.items() if n != "return" and v in PYTHON_SCALARS]
    if changed:
        fixed = {n: PYTHON_SCALARS.get(v, v) if n in changed else v for n, v in raw.items()}
        prog.definition.__annotations__ = fixed
    return changed


def check_program(
    prog: Any, file: str, root: Path, mesh: Mesh, provider: dict[str, Any], toolchain: Any,
    nlev: int, python_scalars_as_numpy: bool = False,
) -> Result:  # fmt: skip
    from stencilchain.errors import DefinitionError

    name = prog.__name__
    try:
        if python_scalars_as_numpy:
            numpy_scalar_annotations(prog)
        annotations = _annotations(prog)
        made, _ = prog.stencilchain_program(offset_provider=provider)
    except DefinitionError as err:
        where = _location(err, root)
        if not where or where.startswith(str(Path(__file__).resolve())):
            # the error points at no line, or at this script's call: the program's line
            code = prog.definition.__code__
            where = f"{Path(code.co_filename).resolve().relative_to(root)}:{code.co_firstlineno}"
        return Result(file, name, NOT_EXPRESSIBLE, _reason(err), where)
    except Exception as err:
        return Result(file, name, FAILS, f"while tracing: {_one_line(err)}", _where_raised(err))
    try:
        plan = plan_call(made.ir, annotations, mesh, nlev)
    except Exception as err:
        return Result(file, name, FAILS, f"making inputs: {_one_line(err)}")
    for low, high in FLOAT_RANGES:  # a second, wider draw where the first wrote nothing
        args = make_arguments(annotations, plan, nlev, seed=len(name), floats=(low, high))
        ran = _run_both(prog, file, root, provider, toolchain, args)
        if isinstance(ran, Result):
            return ran
        runs = ran
        written = [
            k
            for k, v in runs["embedded"].items()
            if isinstance(v, np.ndarray) and not np.array_equal(v, args[k], equal_nan=True)
        ]
        if written:
            break
    worst, field = 0.0, ""
    for k, v in runs["embedded"].items():
        if isinstance(v, np.ndarray):
            ulps = max_ulps(v, runs["run_gtfn_cpu"][k])
            if ulps > worst:
                worst, field = ulps, k
    notes = f"; wrote {', '.join(written) or 'nothing'}"
    notes += f" (floats in [{low}, {high}))" if (low, high) != FLOAT_RANGES[0] else ""
    notes += f"; half levels: {', '.join(plan.half_levels)}" if plan.half_levels else ""
    if worst == 0.0:
        return Result(file, name, AGREES, f"bit for bit{notes}")
    transcendental = uses_transcendental(made.ir)
    detail = f"{field} differs by up to {worst:.3g} ulp{notes}"
    if transcendental and worst <= ULP_TOLERANCE:
        return Result(file, name, AGREES_TOL, detail + " (transcendental functions)")
    return Result(file, name, DISAGREES, detail + ("" if transcendental else " (exact ops)"))


def _run_both(
    prog: Any, file: str, root: Path, provider: dict[str, Any], toolchain: Any,
    args: dict[str, Any],
) -> dict[str, dict[str, Any]] | Result:  # fmt: skip
    """The arguments after an embedded run and after a run_gtfn_cpu run (each on its own
    copy of `args`), or the Result of the first that failed."""
    from stencilchain.errors import StencilchainError

    order = list(inspect.signature(prog.definition).parameters)
    name = prog.__name__
    runs: dict[str, dict[str, Any]] = {}
    for label, backend in (("embedded", None), ("run_gtfn_cpu", toolchain)):
        values = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in args.items()}
        runner = prog if backend is None else prog.with_backend(backend)
        try:
            runner(*(values[p] for p in order), offset_provider=provider)
        except StencilchainError as err:
            return Result(file, name, FAILS, f"{label}: {_reason(err)}", _location(err, root))
        except Exception as err:
            detail = f"{label} crashed: {_one_line(err)}"
            return Result(file, name, FAILS, detail, _where_raised(err))
        runs[label] = values
    return runs


def _where_raised(err: BaseException) -> str:
    frames = traceback.extract_tb(err.__traceback__)
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ""


# --------------------------------------------------------------------------------------
# why a program fails: the reasons seen on icon4py, grouped by the message

FRONT_END = "front end: gt4py accepts it (tests/compat/test_icon4py_findings.py)"
LANGUAGE = "language gap: docs/dsl.md"
REASONS: tuple[tuple[str, str, str], ...] = (
    (
        "program parameter annotated bool, float or int",
        FRONT_END,
        r"needs an annotation .* got <class '(bool|float|int)'>",
    ),
    ("scan parameter annotated with a NumPy dtype", FRONT_END, r"expected a \w+ scalar, got Field"),
    ("`**` of a float by an int literal", FRONT_END, r"`\*\*`: mismatched dtypes"),
    ("tuple of domains over the same dimensions", FRONT_END, r"domain= must be a dict"),
    ("math function of a literal", FRONT_END, r"of literals only"),
    (
        "concat_where condition on two dimensions",
        LANGUAGE + ", concat_where: one condition involves one dimension",
        r"one condition may involve only one dimension",
    ),
    (
        "maximum/minimum in a domain or condition bound",
        LANGUAGE + ", bounds from expressions of parameters: + - * //",
        r"a bound is built from|sc\.math\.(maximum|minimum): cannot use ProgramArg",
    ),
    (
        "as_offset of a computed offset",
        LANGUAGE + ", Not supported yet",
        r"sc\.as_offset\(.*the offset must be a field parameter",
    ),
    (
        "slot of a local field without its connectivity",
        LANGUAGE + ", Not supported yet",
        r"reads slot .* no table parameter numbers the slots",
    ),
)


def reason_group(detail: str) -> tuple[str, str]:
    """(group, kind) of a failure's message; ("other", "") where none matches."""
    for group, kind, pattern in REASONS:
        if re.search(pattern, detail):
            return group, kind
    return "other", ""


def grouped(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The programs that are not expressible or fail to run, by reason group."""
    by_group: dict[str, dict[str, Any]] = {}
    for r in results:
        if r["verdict"] not in (NOT_EXPRESSIBLE, FAILS, NO_IMPORT):
            continue
        group, kind = reason_group(r["detail"])
        entry = by_group.setdefault(group, {"reason": group, "kind": kind, "programs": []})
        entry["programs"].append(r["program"] if r["program"] != "-" else r["file"])
    return sorted(by_group.values(), key=lambda g: -len(g["programs"]))


# --------------------------------------------------------------------------------------
# the run


def _commit(root: Path) -> str:
    import subprocess

    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return out.stdout.strip()


def run(
    root: Path, *, only: str | None, nlev: int, mesh_size: tuple[int, int], precision: str,
    cache_dir: Path, log: Callable[[str], None], python_scalars_as_numpy: bool = False,
    commit: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Every stencil file of `root` imported and its programs checked: the report as a
    dict (see main for its printed form)."""
    from stencilchain.containers import build_container
    from stencilchain.errors import DefinitionError

    # the environment less the test-only variable naming the tree (tests/compat/
    # test_icon4py_coverage.py), which no container knows
    environ = {k: v for k, v in os.environ.items() if k != "STENCILCHAIN_ICON4PY_SRC"}
    toolchain = build_container(
        environ, cache_dir=str(cache_dir), cache_lifetime="persistent"
    ).gtfn.toolchain()
    mesh = make_mesh(*mesh_size)
    results: list[Result] = []
    files: list[dict[str, Any]] = []
    added = [str(p) for p in source_dirs(root)]
    sys.path[:0] = added
    before = set(sys.modules)
    try:
        with gt4py_aliased():
            standins = install_standins(precision, source_dirs(root))
            gtx = _gtx()
            dimension = importlib.import_module(f"{COMMON}.dimension")
            provider = offset_provider(mesh, dimension)
            for path, module_name in stencil_files(root):
                rel = str(path.relative_to(root))
                if only and only not in rel:
                    continue
                entry: dict[str, Any] = {"file": rel, "module": module_name, "programs": []}
                files.append(entry)
                try:
                    module = importlib.import_module(module_name)
                except DefinitionError as err:
                    entry["error"] = _reason(err)
                    results.append(
                        Result(rel, "-", NOT_EXPRESSIBLE, _reason(err), _location(err, root))
                    )
                    log(f"{rel}: {NOT_EXPRESSIBLE} at import")
                    continue
                except Exception as err:
                    entry["error"] = _one_line(err)
                    results.append(Result(rel, "-", NO_IMPORT, _one_line(err)))
                    log(f"{rel}: {NO_IMPORT}: {_one_line(err)}")
                    continue
                programs = [
                    v
                    for v in vars(module).values()
                    if isinstance(v, gtx.Program) and v.definition.__module__ == module_name
                ]
                entry["field_operators"] = sum(
                    isinstance(v, gtx.FieldOperator) and v.definition.__module__ == module_name
                    for v in vars(module).values()
                )
                for prog in programs:
                    t0 = time.perf_counter()
                    result = check_program(
                        prog, rel, root, mesh, provider, toolchain, nlev, python_scalars_as_numpy
                    )
                    results.append(result)
                    entry["programs"].append(prog.__name__)
                    log(
                        f"{rel} {prog.__name__}: {result.verdict} ({time.perf_counter() - t0:.1f} s)"
                        + (f": {result.detail}" if result.verdict != AGREES else "")
                    )
    finally:
        for name in set(sys.modules) - before:
            if name.startswith("icon4py"):
                del sys.modules[name]
        for p in added:
            sys.path.remove(p)
    program_results = [r for r in results if r.program != "-"]
    totals = {
        "stencil_files": len(files),
        "files_with_programs": sum(bool(f["programs"]) for f in files),
        "files_not_imported": sum(r.verdict == NO_IMPORT for r in results),
        "files_not_expressible_at_import": sum(
            r.program == "-" and r.verdict == NOT_EXPRESSIBLE for r in results
        ),
        "programs": len(program_results),
        **{v: sum(r.verdict == v for r in program_results) for v in VERDICTS[:5]},
    }
    return {
        "icon4py": str(root),
        "icon4py_commit": commit or _commit(root),
        "mesh": f"torus {mesh_size[0]}x{mesh_size[1]}: "
        + ", ".join(f"{k} {v}" for k, v in mesh.sizes.items()),
        "nlev": nlev,
        "precision": precision,
        "python_scalars_as_numpy": python_scalars_as_numpy,
        "standins": standins,
        "totals": totals,
        "reasons": grouped([dataclasses.asdict(r) for r in results]),
        "files": files,
        "results": [dataclasses.asdict(r) for r in results],
    }


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table(report: dict[str, Any]) -> str:
    """The report as Markdown: stand-ins, totals, one row per program (per file where
    the file defines none or cannot be imported)."""
    lines = [f"icon4py {report['icon4py_commit']}; {report['mesh']}; nlev {report['nlev']}; "
             f"precision {report['precision']}", ""]  # fmt: skip
    if report["python_scalars_as_numpy"]:
        lines[0] += (
            "; --python-scalars-as-numpy: program parameters annotated bool, float, int "
            "read as np.bool_, np.float64, np.int64"
        )
    for s in report["standins"]:
        lines.append(f"- stand-in for `{s['module']}` (the real import failed: {s['reason']})")
    lines += ["", "| total | count |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in report["totals"].items()]
    lines += ["", "| reason | kind | programs | which |", "|---|---|---|---|"]
    lines += [
        f"| {g['reason']} | {g['kind']} | {len(g['programs'])} | {', '.join(g['programs'])} |"
        for g in report["reasons"]
    ]
    lines += ["", "| stencil file | program | verdict | detail |", "|---|---|---|---|"]
    with_rows = {r["file"] for r in report["results"]}
    for r in report["results"]:
        detail = r["detail"] + (f" ({r['location']})" if r["location"] else "")
        short = r["file"].split("/stencils/")[-1]
        lines.append(f"| {_cell(short)} | {r['program']} | {r['verdict']} | {_cell(detail)} |")
    for f in report["files"]:
        if f["file"] not in with_rows:
            short = f["file"].split("/stencils/")[-1]
            n = f.get("field_operators", 0)
            lines.append(f"| {_cell(short)} | - | no program | {n} field operator(s) |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--icon4py", type=Path, required=True, help="an icon4py source tree")
    parser.add_argument("--json", type=Path, help="also write the report as JSON here")
    parser.add_argument("--only", help="only stencil files whose path contains this text")
    parser.add_argument(
        "--cache-dir", type=Path, help="keep builds here (default: a temporary folder)"
    )
    parser.add_argument("--nlev", type=int, default=6)
    parser.add_argument("--mesh", type=int, nargs=2, default=(4, 3), metavar=("NX", "NY"))
    parser.add_argument("--precision", choices=("double", "mixed", "single"), default="double")
    parser.add_argument(
        "--python-scalars-as-numpy",
        action="store_true",
        help="re-annotate program parameters annotated bool/float/int as NumPy's types "
        "(to see past that front-end bug; not the stencils as written)",
    )
    parser.add_argument("--commit", help="the icon4py commit to report (default: git's HEAD)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)
    root = args.icon4py.resolve()
    if not (root / "model").is_dir():
        parser.error(f"{root} has no model/ folder: not an icon4py source tree")

    def log(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        cache = args.cache_dir
        if cache is None:
            cache = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="icon4py-cov-")))
        report = run(
            root, only=args.only, nlev=args.nlev, mesh_size=tuple(args.mesh),
            precision=args.precision, cache_dir=cache, log=log,
            python_scalars_as_numpy=args.python_scalars_as_numpy, commit=args.commit,
        )  # fmt: skip
    report["wall_s"] = round(time.perf_counter() - start, 1)
    print(table(report))
    print(f"\nwall time {report['wall_s']} s")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
