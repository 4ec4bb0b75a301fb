"""The model: its state on this rank, a time step, diagnostics and the final checksum.

A step takes dt from the Courant number (a global maximum over the ranks, one allreduce),
runs three `rk_stage` calls (the SSP Runge-Kutta scheme of order three), then the implicit
vertical diffusion. Every program runs through `DistributedProgram`, so the state after
any number of steps is the same, bit for bit, on any number of ranks.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from typing import Any

import numpy as np

from stencilchain.distributed import Decomposition, DistributedProgram, compile_for_job, halo_of
from stencilchain.examples.model.physics import I, J, K, rk_stage, vertical_diffusion
from stencilchain.examples.model.settings import ModelSettings
from stencilchain.program.program import Backend
from stencilchain.runtime.toolchain import Toolchain

DIMS = (I, J, K)
# SSP-RK3: q_(s+1) = a q_n + b (q_s + dt L(q_s))
STAGES = ((0.0, 1.0), (0.75, 0.25), (1.0 / 3.0, 2.0 / 3.0))


@dataclasses.dataclass(frozen=True)
class StepReport:
    step: int
    dt: float
    tracer_max: float
    seconds: float  # the slowest rank's
    exchange_seconds: float  # of which in halo exchanges (the slowest rank's)


class AdvectionDiffusionModel:
    """A tracer in a rotating wind on a doubly periodic grid of `settings`, split by
    `decomposition`, its programs run by `toolchain`."""

    def __init__(
        self, settings: ModelSettings, toolchain: Backend, decomposition: Decomposition
    ) -> None:
        self.settings = settings
        self.toolchain = toolchain
        self.grid = decomposition
        self.halo = halo_of(rk_stage, decomposition.split)
        self.rk_stage = DistributedProgram(rk_stage, toolchain, decomposition)
        self.vertical_diffusion = DistributedProgram(
            vertical_diffusion, toolchain, decomposition, halo=self.halo
        )
        self.q, self.u, self.v, self.work, self.stage = (
            decomposition.allocate(DIMS, halo=self.halo) for _ in range(5)
        )
        self._initialize()

    def compile(self) -> tuple[float, int, int]:
        """Compile every program once for the job: (seconds, builds on this rank, programs)."""
        programs = [s.program for p in (self.rk_stage, self.vertical_diffusion) for s in p.stages]
        if not isinstance(self.toolchain, Toolchain):
            return 0.0, 0, len(programs)
        start = time.perf_counter()
        compiled = compile_for_job(self.toolchain, programs, comm=self.grid.comm)
        seconds = time.perf_counter() - start
        return seconds, sum(c.artifact.built for c in compiled), len(programs)

    def _initialize(self) -> None:
        """A Gaussian blob of tracer in a solid-body rotation, set from global positions."""
        s = self.settings
        offsets, sizes = self.grid.local_offsets(), self.grid.local_sizes()
        h = self.halo
        i = np.arange(offsets[I] - h[I], offsets[I] + sizes[I] + h[I])[:, None, None]
        j = np.arange(offsets[J] - h[J], offsets[J] + sizes[J] + h[J])[None, :, None]
        k = np.arange(s.nz)[None, None, :]
        x, y = (i % s.nx) / s.nx, (j % s.ny) / s.ny
        blob = np.exp(-((x - 0.3) ** 2 + (y - 0.5) ** 2) / 0.01) * (1.0 + k / s.nz)
        self.q.data[...] = blob
        self.u.data[...] = np.broadcast_to(
            -np.sin(2 * np.pi * y) * (1.0 + 0.1 * k), self.u.data.shape
        )
        self.v.data[...] = np.broadcast_to(
            np.sin(2 * np.pi * x) * (1.0 - 0.1 * k / s.nz), self.v.data.shape
        )

    def time_step(self) -> float:
        """dt for a Courant number `cfl` everywhere on the grid (one allreduce)."""
        local = float(np.max(np.abs(self.u.interior) + np.abs(self.v.interior)))
        speed = self.grid.comm.allreduce(local, op=_max())
        return self.settings.cfl / speed

    def step(self, number: int) -> StepReport:
        s = self.settings
        start = time.perf_counter()
        exchanged = self.rk_stage.exchange_seconds + self.vertical_diffusion.exchange_seconds
        dt = self.time_step()
        source = self.q
        for a, b in STAGES:
            target = self.work if source is not self.work else self.stage
            self.rk_stage(self.q, source, self.u, self.v, target, dt, a, b, 1.0, 1.0, s.nu)
            source = target
        self.vertical_diffusion(source, self.q, s.kappa * dt, s.nz - 1)
        tracer_max = self.grid.comm.allreduce(float(np.max(self.q.interior)), op=_max())
        exchange = (
            self.rk_stage.exchange_seconds + self.vertical_diffusion.exchange_seconds - exchanged
        )
        seconds = time.perf_counter() - start
        slowest = self.grid.comm.allreduce(seconds, op=_max())
        return StepReport(
            number, dt, tracer_max, slowest, self.grid.comm.allreduce(exchange, op=_max())
        )

    def checksum(self) -> tuple[float, str] | None:
        """(sum, sha256 prefix) of the whole tracer field on rank 0; None on the others."""
        whole = self.grid.gather(self.q)
        if whole is None:
            return None
        return float(np.sum(whole)), hashlib.sha256(whole.tobytes()).hexdigest()[:16]


def _max() -> Any:
    from stencilchain.distributed._mpi import mpi

    return mpi("the model").MAX
