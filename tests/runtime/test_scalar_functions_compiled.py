"""Field operators of scalars returning tuples, inlined in a scan's body and in a field
operator (tests/program/test_scalar_functions.py), on GTFN CPU and DaCe CPU against the
NumPy loops of that file."""

from __future__ import annotations

import numpy as np
import pytest

from tests.program.test_scalar_functions import SHAPE, column, inputs, reference


@pytest.mark.parametrize("name", ["gtfn_cpu", "dace_cpu"])
def test_a_tuple_of_scalars_in_a_scan_and_a_field_operator(
    name: str, request: pytest.FixtureRequest
) -> None:
    run = column.with_backend(request.getfixturevalue(name))
    t, q = inputs()
    for option in (1, 2):  # one build: the option is a scalar argument
        outs = [np.zeros(SHAPE) for _ in range(3)]
        run(t, q, np.int32(option), 3.5, *outs)
        for got, want in zip(outs, reference(t, q, option, 3.5), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-13)
