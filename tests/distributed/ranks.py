"""What each rank runs in the MPI tests (`mpiexec -n N python ranks.py SCENARIO ...`).

A failed check raises, so the rank exits non-zero and mpiexec fails; the launching test
(test_decomposition.py) reads the exit status and one "ok <rank> <scenario>" line per rank.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

import stencilchain as sc
from stencilchain.distributed import Decomposition, exchange
from stencilchain.examples.laplacian import laplacian_program

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")


def global_field(shape: tuple[int, ...], salt: int = 0) -> np.ndarray:
    """A global array whose every value tells where it is (so a misplaced point shows)."""
    return np.arange(np.prod(shape), dtype=np.float64).reshape(shape) * 10.0 + salt


def scatter_gather() -> None:
    """Blocks of uneven sizes travel to their ranks and back unchanged."""
    sizes = {I: 11, J: 7, K: 3}
    grid = Decomposition.create(sizes)
    whole = global_field((11, 7, 3))
    f = grid.allocate((I, J, K), halo=2)
    grid.scatter(f, whole if grid.rank == 0 else None)
    offsets, local = grid.local_offsets(), grid.local_sizes()
    mine = whole[tuple(slice(offsets[d], offsets[d] + local[d]) for d in (I, J, K))]
    assert np.array_equal(f.interior, mine), (grid.rank, grid.coords)
    back = grid.gather(f)
    if grid.rank == 0:
        assert back is not None and np.array_equal(back, whole)
    else:
        assert back is None
    total = grid.comm.allreduce(local[I] * local[J] * local[K])
    assert total == 11 * 7 * 3


def halos(periodic: bool) -> None:
    """After an exchange, every halo point (corners too) holds the global grid's value
    there: wrapped around along periodic dimensions, untouched beyond other edges."""
    sizes = {I: 9, J: 8, K: 2}
    width = 2
    grid = Decomposition.create(sizes, periodic=periodic)
    whole = global_field((9, 8, 2), salt=1)
    f = grid.allocate((K, I, J), halo=width)  # K first: the split axes need not lead
    f.data[...] = -1.0  # what an untouched halo keeps
    grid.scatter(f, np.moveaxis(whole, 2, 0) if grid.rank == 0 else None)
    exchange(f)
    offsets, local = grid.local_offsets(), grid.local_sizes()
    for a, i in enumerate(range(offsets[I] - width, offsets[I] + local[I] + width)):
        for b, j in enumerate(range(offsets[J] - width, offsets[J] + local[J] + width)):
            inside = 0 <= i < 9 and 0 <= j < 8
            expected = whole[i % 9, j % 8, :] if periodic or inside else np.full(2, -1.0)
            assert np.array_equal(f.data[:, a, b], expected), (grid.rank, i, j, f.data[:, a, b])


def laplacian(toolchain_name: str) -> None:
    """A compiled Laplacian on each rank's exchanged block equals, bit for bit, the same
    program on the whole periodic grid in one process."""
    from stencilchain import backends

    n_i, n_j = 24, 20
    grid = Decomposition.create({I: n_i, J: n_j}, periodic=True)
    rng = np.random.default_rng(7)
    whole = rng.random((n_i, n_j))
    f = grid.allocate((I, J), halo=1)
    out = grid.allocate((I, J), halo=1)
    grid.scatter(f, whole if grid.rank == 0 else None)
    exchange(f)
    toolchain = backends.build(toolchain_name)
    laplacian_program.with_backend(toolchain)(f.data, out.data)
    result = grid.gather(out)
    if grid.rank == 0:
        padded = np.pad(whole, 1, mode="wrap")
        expected = np.zeros_like(padded)
        laplacian_program(padded, expected)
        assert result is not None
        assert np.array_equal(result, expected[1:-1, 1:-1])


F = sc.Field[[I, J], sc.float64]


def numbered_program(number: int) -> sc.Program:
    """A program of its own for each `number` (a literal of its body)."""

    @sc.field_operator
    def weighted(f: F) -> F:
        return f(I + 1) * float(number + 1) - f(J - 1)

    def job_program(f: F, out: F) -> None:
        weighted(f, out=out)

    job_program.__name__ = f"job_program_{number}"
    return sc.program(job_program)


@dataclasses.dataclass(frozen=True)
class BrokenFor:
    """A translation that writes code no compiler takes for the program numbered `broken`."""

    step: Any
    broken: str

    def __call__(self, program: Any) -> Any:
        source = self.step(program)
        if program.name == f"job_program_{self.broken}":
            return dataclasses.replace(source, source_code=source.source_code + "\n#error broken\n")
        return source


def compile_job(family: str, cache_kind: str, programs: int, broken: str = "") -> None:
    """Every rank compiles `programs` programs with `compile_for_job`: each is built on
    one rank only (the artifacts say which built it), every rank runs each correctly.
    `cache_kind` "shared": one cache folder; "local": a folder per rank. With `broken`,
    one program's code does not compile: every rank raises the same CompilationError."""
    from mpi4py import MPI

    from stencilchain.containers import build_container, make_gtfn_translation, override_step
    from stencilchain.distributed import compile_for_job

    comm = MPI.COMM_WORLD
    root = Path(os.environ["STENCILCHAIN_CACHE_DIR"])
    cache_dir = root if cache_kind == "shared" else root / f"rank{comm.Get_rank()}"
    container = build_container({}, cache_dir=cache_dir)
    if broken:
        override_step(
            container.gtfn.translation, lambda cfg: BrokenFor(make_gtfn_translation(cfg), broken)
        )
    toolchain = getattr(container, family).toolchain()
    made = [numbered_program(n) for n in range(programs)]
    try:
        compiled = compile_for_job(toolchain, made, comm=comm)
    except sc.CompilationError as error:
        assert broken, error
        messages = comm.allgather(str(error))
        assert all(m == messages[0] for m in messages), messages
        assert "1 of" in messages[0] and "failed to build" in messages[0], messages[0]
        return
    assert not broken, "a broken program compiled"
    built = comm.allgather([c.artifact.built for c in compiled])
    per_program = [sum(rank[n] for rank in built) for n in range(programs)]
    assert per_program == [1] * programs, per_program  # one build per program in the job
    mine = [n for n in range(programs) if built[comm.Get_rank()][n]]
    assert mine == list(range(comm.Get_rank(), programs, comm.Get_size())), mine
    f = np.random.default_rng(3).random((9, 8))
    for n, program in enumerate(compiled):
        out, expected = np.zeros_like(f), np.zeros_like(f)
        program(f, out)
        made[n](f, expected)
        assert np.array_equal(out, expected), n
    if cache_kind == "local":
        assert str(cache_dir) in str(compiled[0].artifact.module_path)


def distributed_programs(toolchain_name: str, only: str = "") -> None:
    """Programs of one or several stages, run by `DistributedProgram` on a periodic grid,
    give bit for bit the single-process run of the program on the whole grid (its arrays
    padded by the halo, periodically)."""
    from mpi4py import MPI

    from stencilchain import backends
    from stencilchain.distributed import DistributedProgram, halo_of
    from stencilchain.examples import hdiff, hdiff_staged, laplap, tridiagonal, tuple_chain, upwind

    sys.path.insert(0, str(Path(__file__).parent))
    from programs import carried_temporary  # type: ignore[import-not-found]  # beside this script

    toolchain = backends.build(toolchain_name)
    comm = MPI.COMM_WORLD
    cases: list[tuple[Any, tuple[int, ...], int]] = [
        (hdiff.PROGRAM, (14, 12, 3), 1),
        (hdiff_staged.PROGRAM, (14, 12, 3), 1),
        (laplap.PROGRAM, (13, 11), 2),
        (tuple_chain.PROGRAM, (13, 11), 2),
        (upwind.PROGRAM, (13, 11), 1),
        (tridiagonal.PROGRAM, (9, 8, 6), 1),
        (carried_temporary, (13, 11), 2),
    ]
    for program, shape, expected_stages in cases:
        if only and program.name not in only.split(","):
            continue
        dims = [I, J, K][: len(shape)]
        grid = Decomposition.create(dict(zip(dims, shape, strict=True)), periodic=True)
        halo = halo_of(program, grid.split)
        rng = np.random.default_rng(11)
        values: dict[str, Any] = {}
        for param in program.ir.params:
            if param.name in ("weight",):
                values[param.name] = 0.75
            elif not hasattr(param.type, "dims"):
                values[param.name] = {"dt": 0.1, "dx": 1.0, "dy": 1.5}.get(param.name, 0.5)
            else:
                values[param.name] = rng.random(shape) + 1.0
        fields = {
            name: grid.allocate(dims, halo=halo)
            for name, value in values.items()
            if isinstance(value, np.ndarray)
        }
        for name, field in fields.items():
            grid.scatter(field, values[name] if grid.rank == 0 else None)
        run = DistributedProgram(program, toolchain, grid)
        assert len(run.stages) == expected_stages, (program.name, len(run.stages))
        run(*(fields.get(name, value) for name, value in values.items()))
        gathered = {name: grid.gather(field) for name, field in fields.items()}
        if grid.rank != 0:
            continue
        widths = [(halo.get(d, 0), halo.get(d, 0)) for d in dims]
        padded = {
            name: np.pad(value, widths, mode="wrap") if isinstance(value, np.ndarray) else value
            for name, value in values.items()
        }
        for name in fields:  # what the program writes starts as what the ranks held
            padded[name][
                tuple(slice(w, w + n) for (w, _), n in zip(widths, shape, strict=True))
            ] = values[name]
        program.with_backend(toolchain)(*padded.values())
        inside = tuple(slice(w, w + n) for (w, _), n in zip(widths, shape, strict=True))
        for name in fields:
            got, want = gathered[name], padded[name][inside]
            assert got is not None and np.array_equal(got, want), (
                program.name,
                name,
                comm.Get_size(),
                np.abs(got - want).max() if got is not None else None,
            )


SCENARIOS = {
    "scatter_gather": scatter_gather,
    "halos_periodic": lambda: halos(periodic=True),
    "halos_open": lambda: halos(periodic=False),
    "laplacian": lambda: laplacian(sys.argv[2]),
    "programs": lambda: distributed_programs(*sys.argv[2:]),
    "compile_job": lambda: compile_job(sys.argv[2], sys.argv[3], int(sys.argv[4]), *sys.argv[5:]),
}

if __name__ == "__main__":
    from mpi4py import MPI

    SCENARIOS[sys.argv[1]]()
    print(f"\nok {MPI.COMM_WORLD.Get_rank()} {sys.argv[1]}", flush=True)
