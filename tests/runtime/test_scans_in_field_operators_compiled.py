"""Scans called inside field operators on GTFN CPU and DaCe CPU, in C and Fortran
layouts, against the embedded executor (whose results tests/program/
test_scans_in_field_operators.py compares with NumPy references): the program trace
lowers them into program calls that every toolchain runs as ever."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.examples import sedimentation

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F = sc.Field[[I, J, K], sc.float64]
FK = sc.Field[[K], sc.float64]
SHAPE = (5, 4, 9)
TOOLCHAINS = ["gtfn_cpu", "dace_cpu"]


@sc.scan_operator(axis=K, init=0.0)
def integral(total, f: F):  # type: ignore[no-untyped-def]
    return total + f


@sc.scan_operator(axis=K, forward=False, init=0.0)
def integral_down(total, f: F, weight: sc.float64):  # type: ignore[no-untyped-def]
    return total + weight * f


@sc.scan_operator(axis=K, init=(0.0, 1.0))
def sum_and_product(state, f: F, g: F):  # type: ignore[no-untyped-def]
    total, product = state
    return total + f, product * g


@sc.scan_operator(axis=K, init=0.0)
def column_sum(total, f: FK):  # type: ignore[no-untyped-def]
    return total + f


@sc.field_operator
def averaged_integral(f: F) -> F:
    return integral(0.5 * (f + f(K + 1)))  # type: ignore[no-any-return]


@sc.field_operator
def weighted_tendency(f: F, g: F, h: F) -> F:
    s = integral(f * g)
    return s * h + g - s(K - 1)


@sc.field_operator
def moments(f: F, g: F) -> tuple[F, F]:
    total, product = sum_and_product(f(K - 1), 1.0 + g)
    return total * g, product


@sc.field_operator
def pressure(rho: F, g: sc.float64) -> F:
    return integral_down(0.5 * (rho + rho(K + 1)), g) + 100.0 * integral_down(rho, 2.0)  # type: ignore[no-any-return]


@sc.field_operator
def outer(f: F, g: F) -> F:
    return averaged_integral(f * g)(K - 1) + g


@sc.field_operator
def second_integral(f: F) -> F:
    return integral(integral(f)(K + 1) - f)  # type: ignore[no-any-return]


@sc.field_operator
def with_a_profile(f: F, profile: FK) -> F:
    return f * column_sum(profile * profile)


@sc.field_operator
def doubled(f: F) -> F:
    return 2.0 * f


@sc.field_operator
def centred(f: F) -> F:
    return 0.5 * (f(K + 1) + f(K - 1))


@sc.field_operator
def copied(f: F) -> F:
    return f


@sc.program
def integrate_averages(f: F, out: F) -> None:
    averaged_integral(f, out=out)


@sc.program
def tendency(f: F, g: F, h: F, out: F) -> None:
    weighted_tendency(f, g, h, out=out)


@sc.program
def running_moments(f: F, g: F, a: F, b: F) -> None:
    moments(f, g, out=(a, b))


@sc.program
def hydrostatic(rho: F, p: F, g: sc.float64) -> None:
    pressure(rho, g, out=p)


@sc.program
def integrate_from_level_two(f: F, out: F) -> None:
    averaged_integral(f, out=out, domain={K: (2, -1)})


@sc.program
def tendency_in_a_window(f: F, g: F, h: F, out: F, k0: sc.int64) -> None:
    weighted_tendency(f, g, h, out=out, domain={K: (k0, -1), I: (1, 3)})


@sc.program
def calls_a_callee(f: F, g: F, out: F) -> None:
    outer(f, g, out=out)


@sc.program
def through_a_temporary(f: F, out: F) -> None:
    total = averaged_integral(f)
    doubled(total, out=out)


@sc.program
def double_integral(f: F, out: F) -> None:
    second_integral(f, out=out)


@sc.program
def scaled_by_a_profile(f: F, profile: FK, out: F) -> None:
    with_a_profile(f, profile, out=out)


@sc.program
def integrate_a_temporary(f: F, out: F) -> None:
    t = centred(f)
    averaged_integral(t, out=out)


@sc.program
def integrate_the_top_levels(f: F, out: F) -> None:
    t = copied(f, domain={K: (-5, None)})
    averaged_integral(t, out=out)


def _fields(*names: str, scalars: dict[str, Any] | None = None) -> Callable[[int], dict[str, Any]]:
    def make(seed: int) -> dict[str, Any]:
        rng = np.random.default_rng(seed)
        values: dict[str, Any] = {n: rng.random(SHAPE) for n in names}
        values.update(scalars or {})
        return values

    return make


def _profile(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    return {"f": rng.random(SHAPE), "profile": rng.random(SHAPE[2]), "out": np.zeros(SHAPE)}


def _sedimentation(seed: int) -> dict[str, Any]:
    return sedimentation.make_inputs(SHAPE, np.random.default_rng(seed))


CASES: dict[str, tuple[sc.Program, Callable[[int], dict[str, Any]]]] = {
    "shifted_argument": (integrate_averages, _fields("f", "out")),
    "combined_and_shifted": (tendency, _fields("f", "g", "h", "out")),
    "tuple_state": (running_moments, _fields("f", "g", "a", "b")),
    "backward_with_scalars": (hydrostatic, _fields("rho", "p", scalars={"g": 9.81})),
    "sub_range": (integrate_from_level_two, _fields("f", "out")),
    "parameter_window": (tendency_in_a_window, _fields("f", "g", "h", "out", scalars={"k0": 3})),
    "in_a_callee": (calls_a_callee, _fields("f", "g", "out")),
    "temporary": (through_a_temporary, _fields("f", "out")),
    "scan_of_a_scan": (double_integral, _fields("f", "out")),
    "fewer_dimensions": (scaled_by_a_profile, _profile),
    "temporary_argument": (integrate_a_temporary, _fields("f", "out")),
    "bounds_from_both_ends": (integrate_the_top_levels, _fields("f", "out")),
    "sedimentation": (sedimentation.PROGRAM, _sedimentation),
}


def _in_layout(value: Any, layout: str) -> Any:
    return np.array(value, order=layout) if isinstance(value, np.ndarray) else value


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
@pytest.mark.parametrize("case", CASES)
def test_compiled_equals_embedded(
    case: str, fixture: str, layout: str, request: pytest.FixtureRequest
) -> None:
    program, make = CASES[case]
    inputs = make(sum(map(ord, case)))
    embedded = {k: _in_layout(v, layout) for k, v in inputs.items()}
    compiled = {k: _in_layout(v, layout) for k, v in inputs.items()}
    program(**embedded)
    program.with_backend(request.getfixturevalue(fixture))(**compiled)
    written = {o for call in program.ir.calls for o in call.outs if not program.ir.is_temporary(o)}
    for name in written:
        assert np.any(embedded[name] != inputs[name]), f"{name} not written"
        np.testing.assert_allclose(compiled[name], embedded[name], rtol=1e-12, atol=0, err_msg=name)
