"""What each rank runs in the MPI tests of partitioned meshes (`mpiexec -n N python
mesh_ranks.py SCENARIO ...`). A failed check raises, so the rank exits non-zero; the
launching test (test_meshes.py) reads one "ok <rank> <scenario>" line per rank.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

import stencilchain as sc
from stencilchain import meshes
from stencilchain.distributed import (
    DistributedProgram,
    MeshDecomposition,
    compile_for_job,
    exchange,
    layers_of,
)

Cell, Edge, Vertex = sc.Dimension("Cell"), sc.Dimension("Edge"), sc.Dimension("Vertex")
K = sc.Dimension("K")
ON = {"cell": Cell, "edge": Edge, "vertex": Vertex}


def halos(method: str) -> None:
    """After one exchange of fields on cells, edges and vertices (with K, the entity axis
    first or last), every local entity holds the global value; the local tables are the
    global ones renumbered; scatter then gather gives the global array back."""
    for mesh in (meshes.torus(9, 7), meshes.rectangle(7, 5)):
        for layers in (1, 2):
            dec = MeshDecomposition.create(mesh, layers=layers, method=method)
            local = dec.local
            counts = {"cell": mesh.n_cells, "edge": mesh.n_edges, "vertex": mesh.n_vertices}
            fields, wanted = [], []
            for entity, dim in ON.items():
                n = counts[entity]
                whole = np.arange(n * 3, dtype=np.float64).reshape(n, 3) * 10.0 + 1.0
                first = dec.allocate((dim, K), sizes={K: 3})
                last = dec.allocate((K, dim), np.float32, sizes={K: 3})
                dec.scatter(first, whole if dec.rank == 0 else None)
                dec.scatter(last, whole.T if dec.rank == 0 else None)
                back = dec.gather(first)
                if dec.rank == 0:
                    assert back is not None and np.array_equal(back, whole)
                owned = local.owned[entity]
                first.data[owned:] = -1.0
                last.data[:, owned:] = -1.0
                fields += [first, last]
                numbers = local.global_index[entity]
                wanted += [whole[numbers], whole.T[:, numbers].astype(np.float32)]
            exchange(*fields)
            for field, want in zip(fields, wanted, strict=True):
                assert np.array_equal(field.data, want), (mesh, layers, field.entity, dec.rank)
            for name, table in dec.local.tables.items():
                source, target = (e.lower() for e in _entities(name))
                glob = np.asarray(mesh.table(name), dtype=np.int64)
                rows = glob[local.global_index[source]]
                mapped = np.where(table >= 0, local.global_index[target][table], -1)
                off = dec.local.off_mesh[name]
                assert np.array_equal(np.where(off, -1, rows), mapped), (name, dec.rank)
                inner = local.layer_starts[source][layers]  # rows within the inner layers
                assert not off[:inner].any(), (name, layers, dec.rank)


def _entities(name: str) -> tuple[str, str]:
    from stencilchain.meshes.local import TABLE_ENTITIES

    return TABLE_ENTITIES[name]


class _ThroughEdges:
    """programs.through_edges as a case: its inputs and a NumPy reference."""

    PROGRAM: Any = None  # set by `programs` (programs.py is beside this script)

    @staticmethod
    def make_inputs(mesh: meshes.Mesh) -> dict[str, Any]:
        u = np.random.default_rng(9).random(mesh.n_cells)
        return {"u": u, "e2c": mesh.e2c, "c2e": mesh.c2e, "out": np.zeros(mesh.n_cells)}

    @staticmethod
    def reference(
        u: np.ndarray, e2c: np.ndarray, c2e: np.ndarray, out: np.ndarray
    ) -> dict[str, np.ndarray]:
        mean = 0.5 * (u[e2c[:, 0]] + u[e2c[:, 1]])
        return {"out": mean[c2e[:, 0]] + mean[c2e[:, 1]] + mean[c2e[:, 2]]}


def _mesh_case(module: Any, shape: tuple[int, ...], kind: str = "") -> tuple[Any, dict[str, Any]]:
    rng = np.random.default_rng(5)
    if kind:
        return module.build_mesh(shape, kind), module.make_inputs(shape, rng, kind)
    if module.__name__.endswith("mesh_column"):
        return meshes.torus(shape[0], shape[1], dx=1000.0, dy=1000.0), module.make_inputs(
            shape, rng
        )
    return meshes.torus(shape[0], shape[1]), module.make_inputs(shape, rng)


def programs(toolchain_names: str) -> None:
    """Each mesh example and the mesh model's step, run by DistributedProgram on every
    rank's local mesh, gathers to what the same toolchain computes in one process on the
    global mesh, bit for bit; that in turn is the example's NumPy reference (to
    rounding). Then the model's checksum line for each toolchain."""
    from mpi4py import MPI

    from stencilchain import backends
    from stencilchain.examples import mesh_column, mesh_diffusion, mesh_model, nabla

    sys.path.insert(0, str(Path(__file__).parent))
    from programs import through_edges  # type: ignore[import-not-found]

    _ThroughEdges.PROGRAM = through_edges
    comm = MPI.COMM_WORLD
    model_mesh = meshes.torus(10, 8)
    model_inputs = mesh_model.make_inputs(model_mesh, 6, np.random.default_rng(5))
    cases: list[tuple[Any, Any, dict[str, Any]]] = [
        (nabla, *_mesh_case(nabla, (9, 7, 4), "torus")),
        (nabla, *_mesh_case(nabla, (8, 5, 3), "rectangle")),
        (mesh_diffusion, *_mesh_case(mesh_diffusion, (9, 8))),
        (mesh_column, *_mesh_case(mesh_column, (8, 7, 5))),
        (mesh_model, model_mesh, model_inputs),
        (_ThroughEdges, meshes.torus(14, 12), _ThroughEdges.make_inputs(meshes.torus(14, 12))),
    ]
    for name in toolchain_names.split(","):
        toolchain = backends.build(name)
        if name != "run_embedded":
            compile_for_job(toolchain, [case[0].PROGRAM for case in cases], comm=comm)
        for module, mesh, inputs in cases:
            program = module.PROGRAM
            dec = MeshDecomposition.create(mesh, layers=layers_of(program))
            args, fields = _distribute(dec, program, inputs)
            run = DistributedProgram(program, toolchain, dec)
            assert len(run.stages) == 1, (program.name, len(run.stages))
            run(*args)
            gathered = {n: dec.gather(f) for n, f in fields.items()}
            if dec.rank != 0:
                continue
            whole = {n: np.array(v) if isinstance(v, np.ndarray) else v for n, v in inputs.items()}
            program.with_backend(toolchain)(*whole.values())
            expected = module.reference(**{n: np.array(v) if isinstance(v, np.ndarray) else v
                                           for n, v in inputs.items()})  # fmt: skip
            for out, want in expected.items():
                got = gathered[out]
                assert got is not None and np.array_equal(got, whole[out]), (
                    name, program.name, mesh, out, comm.Get_size(),
                    float(np.abs(got - whole[out]).max()) if got is not None else None,
                )  # fmt: skip
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        lines: list[str] = []
        mesh_model.run(10, 8, 6, 3, name, say=lines.append)
        for line in lines:
            if line.startswith("checksum"):
                print(f"model {name} {line}", flush=True)


def _distribute(
    dec: MeshDecomposition, program: Any, inputs: dict[str, Any]
) -> tuple[list[Any], dict[str, Any]]:
    """The program's arguments on this rank: a scattered field per array (sizes from the
    global arrays), the local table per table."""
    args: list[Any] = []
    fields = {}
    for param in program.ir.params:
        value = inputs[param.name]
        if hasattr(param.type, "connectivity"):
            args.append(dec.table(param.type.connectivity.name))
        elif hasattr(param.type, "dims"):
            dims = param.type.dims
            sizes = {
                d: n for d, n in zip(dims, np.shape(value), strict=True) if dec.entity_of(d) is None
            }
            field = dec.allocate(dims, np.asarray(value).dtype, sizes=sizes)
            dec.scatter(field, value if dec.rank == 0 else None)
            fields[param.name] = field
            args.append(field)
        else:
            args.append(value)
    return args, fields


SCENARIOS = {
    "halos": lambda: halos(sys.argv[2]),
    "programs": lambda: programs(sys.argv[2]),
}

if __name__ == "__main__":
    from mpi4py import MPI

    SCENARIOS[sys.argv[1]]()
    print(f"\nok {MPI.COMM_WORLD.Get_rank()} {sys.argv[1]}", flush=True)
