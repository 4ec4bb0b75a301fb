"""A small model on an unstructured mesh, on any number of MPI ranks: a tracer on the cells
of a periodic torus mesh, diffused across the cells' edges (explicit, C2E2C) and then in
the vertical (implicit: a tridiagonal solve per column, the Thomas scans), step by step.

    python -m stencilchain.examples.mesh_model --steps 10
    mpiexec -n 4 python -m stencilchain.examples.mesh_model --steps 10

Each run prints every step's time (the slowest rank's, with its share in halo
exchanges) and a checksum of the final tracer, the same on every rank count, bit for bit.

For every cell c and level k, with alpha[c] the vertical diffusion number of the column:

    r[c, k]  = q[c, k] + nu * sum_j (q[C2E2C[c, j], k] - q[c, k])
    -alpha q'[c, k - 1] + (1 + 2 alpha) q'[c, k] - alpha q'[c, k + 1] = r[c, k]

with no flux through the top and the bottom (the missing neighbour's term is dropped and
the diagonal has 1 + alpha there).

Dimensions: Cell, K; local C2E2CDim (3 slots). Program: `mesh_step(q, a, b, c, c2e2c, nu,
q_new)` (`horizontal`, then the scans `sweep_up` and `sweep_down`).
"""

from __future__ import annotations

import argparse
import hashlib
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

import stencilchain as sc
from stencilchain import meshes

Cell = sc.Dimension("Cell")
K = sc.Dimension("K", kind=sc.VERTICAL)
C2E2CDim = sc.Dimension("C2E2CDim", kind=sc.LOCAL)
C2E2C = sc.Connectivity("C2E2C", source=Cell, target=(Cell, C2E2CDim), max_neighbors=3,
                        skip_values=True)  # fmt: skip

CellK = sc.Field[[Cell, K], sc.float64]
NU = 0.1


@sc.field_operator
def horizontal(q: CellK, nu: sc.float64) -> CellK:
    return q + nu * sc.neighbor_sum(q(C2E2C) - q, axis=C2E2CDim)


@sc.scan_operator(axis=K, forward=True, init=(0.0, 0.0))
def sweep_up(state, a: CellK, b: CellK, c: CellK, d: CellK):  # type: ignore[no-untyped-def]
    c_below, d_below = state
    denominator = b - a * c_below
    return c / denominator, (d - a * d_below) / denominator


@sc.scan_operator(axis=K, forward=False, init=0.0)
def sweep_down(x_above, c_prime: CellK, d_prime: CellK):  # type: ignore[no-untyped-def]
    return d_prime - c_prime * x_above


@sc.program
def mesh_step(
    q: CellK, a: CellK, b: CellK, c: CellK, c2e2c: sc.Table[C2E2C], nu: sc.float64,
    q_new: CellK,
) -> None:  # fmt: skip
    r = horizontal(q, nu)
    c_prime, d_prime = sweep_up(a, b, c, r)
    sweep_down(c_prime, d_prime, out=q_new)


PROGRAM = mesh_step


def make_inputs(
    mesh: meshes.Mesh, levels: int, rng: np.random.Generator
) -> dict[str, np.ndarray | float]:
    """A random tracer, a vertical diffusion number per column in [0.5, 2), the
    tridiagonal coefficients it makes, C2E2C, nu, and `q_new` zeros."""
    alpha = np.repeat(rng.uniform(0.5, 2.0, (mesh.n_cells, 1)), levels, axis=1)
    a, c = -alpha.copy(), -alpha.copy()
    a[:, 0] = 0.0
    c[:, -1] = 0.0
    b = 1.0 - a - c
    return {"q": rng.random((mesh.n_cells, levels)), "a": a, "b": b, "c": c,
            "c2e2c": mesh.c2e2c, "nu": NU, "q_new": np.zeros((mesh.n_cells, levels))}  # fmt: skip


def reference(
    q: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray, c2e2c: np.ndarray,
    nu: float, q_new: np.ndarray,
) -> dict[str, np.ndarray]:  # fmt: skip
    """One step in NumPy: the neighbour sum with np.take (the torus has every
    neighbour), then the Thomas algorithm, a loop over K."""
    neighbours = np.take(q, c2e2c, axis=0)  # (cells, 3, levels)
    r = q + nu * ((neighbours[:, 0] - q) + (neighbours[:, 1] - q) + (neighbours[:, 2] - q))
    levels = q.shape[1]
    c_prime, d_prime = np.empty(q.shape), np.empty(q.shape)
    c_below, d_below = np.zeros(q.shape[0]), np.zeros(q.shape[0])
    for k in range(levels):
        denominator = b[:, k] - a[:, k] * c_below
        c_below = c_prime[:, k] = c[:, k] / denominator
        d_below = d_prime[:, k] = (r[:, k] - a[:, k] * d_below) / denominator
    x = np.empty(q.shape)
    above = np.zeros(q.shape[0])
    for k in range(levels - 1, -1, -1):
        above = x[:, k] = d_prime[:, k] - c_prime[:, k] * above
    return {"q_new": x}


def checksum(array: np.ndarray) -> str:
    """The first 16 hex digits of the sha256 of `array`'s bytes (C order, float64)."""
    return hashlib.sha256(np.ascontiguousarray(array, dtype=np.float64).tobytes()).hexdigest()[:16]


def run(
    nx: int, ny: int, levels: int, steps: int, toolchain_name: str, *,
    comm: Any = None, method: str = "neighbor", say: Any = print,
) -> np.ndarray | None:  # fmt: skip
    """`steps` steps on an nx x ny torus of `levels` levels over `comm` (default:
    COMM_WORLD); the final tracer on rank 0 (None elsewhere)."""
    from mpi4py import MPI

    from stencilchain import backends
    from stencilchain.distributed import (
        DistributedProgram,
        MeshDecomposition,
        compile_for_job,
        layers_of,
    )

    comm = MPI.COMM_WORLD if comm is None else comm
    mesh = meshes.torus(nx, ny)
    dec = MeshDecomposition.create(mesh, layers=layers_of(mesh_step), comm=comm, method=method)
    inputs = make_inputs(mesh, levels, np.random.default_rng(2026))
    fields = {name: dec.allocate((Cell, K), sizes={K: levels}) for name in ("q", "a", "b", "c")}
    q_new = dec.allocate((Cell, K), sizes={K: levels})
    for name, field in fields.items():
        dec.scatter(field, inputs[name] if dec.rank == 0 else None)
    toolchain = backends.build(toolchain_name)
    step = DistributedProgram(mesh_step, toolchain, dec)
    if toolchain.name != "run_embedded":
        compile_for_job(toolchain, [s.program for s in step.stages], comm=comm)
    q = fields["q"]
    total = exchanged = 0.0
    for number in range(steps):
        before = step.exchange_seconds
        start = time.perf_counter()
        step(q, fields["a"], fields["b"], fields["c"], dec.table("C2E2C"), NU, q_new)
        seconds = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
        exchange = comm.allreduce(step.exchange_seconds - before, op=MPI.MAX)
        total, exchanged = total + seconds, exchanged + exchange
        q, q_new = q_new, q
        if dec.rank == 0:
            say(f"step {number} {seconds * 1e3:.3f} ms (exchange {exchange * 1e3:.3f} ms)")
    result = dec.gather(q)
    if dec.rank == 0:
        assert result is not None
        halo = dec.pattern.halo_sizes()
        say(f"ranks {dec.ranks} partition {dec.partition.method} edge cut "
            f"{dec.partition.edge_cut} imbalance {dec.partition.imbalance:.4f}")  # fmt: skip
        sent = sum(len(at) for at in dec.pattern.send["cell"]) * levels * 8
        say(
            f"rank 0: {dec.local.owned['cell']} cells, {halo['cell']} halo cells, "
            f"{dec.pattern.messages()} messages, {sent} bytes sent per exchange"
        )
        share = exchanged / total if total else 0.0
        say(f"steps {total:.4f} s, exchange {exchanged:.4f} s ({share:.1%})")
        say(f"checksum {checksum(result)} sum {float(result.sum())!r}")
    return result


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nx", type=int, default=32)
    parser.add_argument("--ny", type=int, default=32)
    parser.add_argument("--nz", type=int, default=20)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--toolchain", default="run_gtfn_cpu")
    parser.add_argument("--method", choices=("neighbor", "p2p"), default="neighbor")
    args = parser.parse_args(argv)
    run(args.nx, args.ny, args.nz, args.steps, args.toolchain, method=args.method)


if __name__ == "__main__":
    main()
