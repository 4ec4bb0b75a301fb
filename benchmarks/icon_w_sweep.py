"""ICON's forward sweep of the implicit `w` solve on (Cell, K): a field operator computing
the tridiagonal coefficients from shifted inputs and calling a scan with a tuple state
(`z_q`, `w`), on 20,000 cells x 65 levels, cells unit-stride (ICON's layout, Fortran order)
and levels unit-stride (C order), against a NumPy loop over levels in the same run.

    OMP_NUM_THREADS=1 python benchmarks/icon_w_sweep.py [--cells 20000] [--levels 65]

Prints, per layout, the median and minimum wall time and the minimum CPU time of a call
(the CPU time stays meaningful on a loaded machine), the NumPy loop's, and the load
average. Checks first that the compiled results equal the embedded executor's bit for
bit. Uses a private temporary cache, never the user's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as `python benchmarks/icon_w_sweep.py`
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import stencilchain as sc
from benchmarks._common import make_toolchains

Cell = sc.Dimension("Cell")
K = sc.Dimension("K", kind=sc.VERTICAL)
CK = sc.Field[[Cell, K], sc.float64]
C1 = sc.Field[[Cell], sc.float64]


@sc.scan_operator(axis=K, forward=True, init=(0.0, 0.0))
def tridiagonal_up(state, z_a: CK, z_b: CK, z_c: CK, rhs: CK):  # type: ignore[no-untyped-def]
    z_q_below, w_below = state
    z_g = 1.0 / (z_b + z_a * z_q_below)
    return (0.0 - z_c) * z_g, (rhs - z_a * w_below) * z_g


@sc.field_operator
def forward_sweep(
    vwind_impl_wgt: C1, theta_v_ic: CK, ddqz_z_half: CK, z_alpha: CK, z_beta: CK,
    z_w_expl: CK, z_exner_expl: CK, dtime: sc.float64, cpd: sc.float64,
) -> tuple[CK, CK]:  # fmt: skip
    z_gamma = dtime * cpd * vwind_impl_wgt * theta_v_ic / ddqz_z_half
    z_a = -z_gamma * z_beta(K - 1) * z_alpha(K - 1)
    z_c = -z_gamma * z_beta * z_alpha(K + 1)
    z_b = 1.0 + z_gamma * z_alpha * (z_beta(K - 1) + z_beta)
    rhs = z_w_expl - z_gamma * (z_exner_expl(K - 1) - z_exner_expl)
    return tridiagonal_up(z_a, z_b, z_c, rhs)  # type: ignore[no-any-return]


@sc.program
def w_forward_sweep(
    vwind_impl_wgt: C1, theta_v_ic: CK, ddqz_z_half: CK, z_alpha: CK, z_beta: CK,
    z_w_expl: CK, z_exner_expl: CK, dtime: sc.float64, cpd: sc.float64, z_q: CK, w: CK,
) -> None:  # fmt: skip
    forward_sweep(
        vwind_impl_wgt, theta_v_ic, ddqz_z_half, z_alpha, z_beta, z_w_expl, z_exner_expl,
        dtime, cpd, out=(z_q, w),
    )  # fmt: skip


def numpy_sweep(
    vw: np.ndarray, th: np.ndarray, dd: np.ndarray, al: np.ndarray, be: np.ndarray,
    we: np.ndarray, ex: np.ndarray, dtime: float, cpd: float, z_q: np.ndarray, w: np.ndarray,
) -> None:  # fmt: skip
    """The NumPy baseline: a loop over the levels, whole rows of cells at a time."""
    z_q_below = np.zeros(th.shape[0])
    w_below = np.zeros(th.shape[0])
    for k in range(1, th.shape[1] - 1):
        gamma = dtime * cpd * vw * th[:, k] / dd[:, k]
        a = -gamma * be[:, k - 1] * al[:, k - 1]
        c = -gamma * be[:, k] * al[:, k + 1]
        b = 1.0 + gamma * al[:, k] * (be[:, k - 1] + be[:, k])
        rhs = we[:, k] - gamma * (ex[:, k - 1] - ex[:, k])
        z_g = 1.0 / (b + a * z_q_below)
        z_q_below = z_q[:, k] = (0.0 - c) * z_g
        w_below = w[:, k] = (rhs - a * w_below) * z_g


def make_inputs(cells: int, levels: int, order: str) -> dict[str, Any]:
    rng = np.random.default_rng(0)

    def field() -> np.ndarray:
        return np.array(rng.uniform(0.5, 1.5, (cells, levels)), order=order)

    return {
        "vwind_impl_wgt": rng.uniform(0.5, 1.0, cells),
        "theta_v_ic": field(),
        "ddqz_z_half": field(),
        "z_alpha": field(),
        "z_beta": field(),
        "z_w_expl": field(),
        "z_exner_expl": field(),
        "dtime": 2.0,
        "cpd": 1004.0,
        "z_q": np.zeros((cells, levels), order=order),
        "w": np.zeros((cells, levels), order=order),
    }


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, float, float]:
    """Median wall, minimum wall and minimum CPU seconds of one call, after a warm-up."""
    fn()
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), min(wall), min(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, default=20000)
    parser.add_argument("--levels", type=int, default=65)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--families", default="gtfn")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # before the first compiled module loads
    notes: list[str] = []
    print(
        f"ICON w forward sweep, {args.cells} cells x {args.levels} levels, "
        f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}; ms: median / min wall, min CPU"
    )
    with tempfile.TemporaryDirectory() as folder:
        toolchains = make_toolchains(args.families.split(","), Path(folder), notes)
        for order in ("F", "C"):
            values = make_inputs(args.cells, args.levels, order)
            expected = {
                **values,
                "z_q": np.zeros_like(values["z_q"]),
                "w": np.zeros_like(values["w"]),
            }
            w_forward_sweep(**expected)  # the embedded executor
            inputs = [values[k] for k in list(values)[:9]]
            z_q, w = np.zeros_like(values["z_q"]), np.zeros_like(values["w"])
            t_numpy = timed(partial(numpy_sweep, *inputs, z_q, w), max(3, args.repeat // 3))
            for family, toolchain in toolchains.items():
                compiled = w_forward_sweep.with_backend(toolchain)
                compiled(**values)
                for name in ("z_q", "w"):
                    np.testing.assert_array_equal(values[name], expected[name], err_msg=name)
                t = timed(partial(compiled, **values), args.repeat)
                print(
                    f"{family:5} {order}: {1e3 * t[0]:7.2f} / {1e3 * t[1]:7.2f} / {1e3 * t[2]:7.2f}"
                    f"   numpy {1e3 * t_numpy[0]:7.2f} / {1e3 * t_numpy[1]:7.2f} / "
                    f"{1e3 * t_numpy[2]:7.2f}   x numpy (min CPU) {t_numpy[2] / t[2]:5.1f}"
                )
    for note in notes:
        print(note)
    load = os.getloadavg()
    print(f"load average (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
