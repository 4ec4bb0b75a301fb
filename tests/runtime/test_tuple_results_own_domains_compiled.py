"""A tuple result over different dimensions, each field over its own domain, on every CPU
toolchain (GTFN with and without transforms, DaCe with and without auto-optimize) in C,
Fortran and sliced layouts, against the embedded executor and NumPy."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from tests.program import test_tuple_results_own_domains as cases
from tests.runtime.test_own_ranges_compiled import _layout

TOOLCHAINS = ["gtfn_cpu", "gtfn_cpu_no_transforms", "dace_cpu", "dace_cpu_noopt"]


@pytest.mark.parametrize("kind", ["C", "F", "sliced"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
@pytest.mark.parametrize(
    ("program", "reference"),
    [
        (cases.inferred, cases.expected_inferred),
        (cases.given_per_field, cases.expected_given),
        (cases.one_dict, cases.expected_one_dict),
    ],
    ids=["inferred", "given_per_field", "one_dict"],
)
def test_fields_over_their_own_domains(
    program: object,
    reference: Callable[..., tuple[np.ndarray, ...]],
    fixture: str,
    kind: str,
    request: pytest.FixtureRequest,
) -> None:
    toolchain = request.getfixturevalue(fixture)
    a, b = (_layout(v, kind) for v in cases.inputs())
    embedded = cases.outputs()
    program(a, b, *embedded)  # type: ignore[operator]
    got = tuple(_layout(v, kind) for v in cases.outputs())
    program.with_backend(toolchain)(a, b, *got)  # type: ignore[attr-defined]
    for g, e, r in zip(got, embedded, reference(a, b), strict=True):
        np.testing.assert_array_equal(g, e)
        np.testing.assert_array_equal(g, r)


@pytest.mark.parametrize("kind", ["C", "F", "sliced"])
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_temporaries_over_different_dimensions(
    fixture: str, kind: str, request: pytest.FixtureRequest
) -> None:
    toolchain = request.getfixturevalue(fixture)
    a, _ = cases.inputs()
    e = np.random.default_rng(2).random(cases.N_EDGE)
    x, y = _layout(np.zeros((cases.N_CELL, cases.N_K)), kind), _layout(np.zeros(cases.N_EDGE), kind)
    cases.through_temporaries.with_backend(toolchain)(_layout(a, kind), _layout(e, kind), x, y)
    np.testing.assert_array_equal(x, (a * 3.0) * 3.0)
    np.testing.assert_array_equal(y, e - 2.0)
