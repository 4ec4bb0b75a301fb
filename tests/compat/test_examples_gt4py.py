"""The bundled examples in gt4py's spelling (stencilchain/examples/gt4py) called as gt4py
code calls them (arrays, offset_provider) on every CPU toolchain, in C and Fortran
layouts, against the NumPy references of their stencilchain twins."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.examples.gt4py import GT4PY_EXAMPLES
from tests.compat._support import LAYOUTS, TOOLCHAINS, laid_out, toolchain

SHAPES = {2: (11, 9), 3: (9, 8, 5)}

CASES = [
    pytest.param(m, mesh, id=m.__name__.rsplit(".", 1)[-1] + (f"-{mesh}" if mesh else ""))
    for m in GT4PY_EXAMPLES
    for mesh in getattr(m, "MESHES", [None])
]


def _inputs(module: ModuleType, mesh: str | None, order: str) -> dict[str, Any]:
    shape = SHAPES[len(module.DEFAULT_SHAPE)]
    options = {} if mesh is None else {"mesh": mesh}
    inputs = module.make_inputs(shape, np.random.default_rng(11), **options)
    return {k: laid_out(v, order) for k, v in inputs.items()}


@pytest.mark.parametrize("order", LAYOUTS)
@pytest.mark.parametrize("name", TOOLCHAINS)
@pytest.mark.parametrize(("module", "mesh"), CASES)
def test_gt4py_example_matches_reference(
    module: ModuleType, mesh: str | None, name: str, order: str, request: pytest.FixtureRequest
) -> None:
    inputs = _inputs(module, mesh, order)
    expected = module.reference(**{k: np.copy(v) for k, v in inputs.items()})
    backend = toolchain(request, name)
    program = module.GT_PROGRAM if backend is None else module.GT_PROGRAM.with_backend(backend)
    program(*(inputs[p] for p in module.OWN_PARAMS), offset_provider=module.offset_provider(inputs))
    assert expected
    for out, want in expected.items():
        assert np.count_nonzero(want) > 0
        np.testing.assert_allclose(inputs[out], want, rtol=1e-12, atol=1e-14, err_msg=out)


@pytest.mark.parametrize(("module", "mesh"), CASES)
def test_program_is_the_twins_program(module: ModuleType, mesh: str | None) -> None:
    """PROGRAM (what `stencilchain demo` runs) is stencilchain's program of GT_PROGRAM: its
    parameters are the gt4py program's, then its tables; it runs like the gt4py call."""
    assert isinstance(module.PROGRAM, sc.Program)
    inputs = _inputs(module, mesh, "C")
    assert [p.name for p in module.PROGRAM.ir.params][: len(module.OWN_PARAMS)] == list(
        module.OWN_PARAMS
    )
    assert list(inputs) == [p.name for p in module.PROGRAM.ir.params]
    other = {k: np.copy(v) for k, v in inputs.items()}
    module.PROGRAM(*inputs.values())
    module.GT_PROGRAM(
        *(other[p] for p in module.OWN_PARAMS), offset_provider=module.offset_provider(other)
    )
    for name in inputs:
        np.testing.assert_array_equal(inputs[name], other[name], err_msg=name)
