"""The example programs (stencilchain/examples/) run embedded and match their independent NumPy references."""

from __future__ import annotations

import inspect
from types import ModuleType

import numpy as np
import pytest

import stencilchain as sc
import stencilchain.examples as examples

MODULES: list[ModuleType] = examples.ALL_EXAMPLES

# Per number of dimensions: a typical small shape, an odd one barely larger than the
# widest stencil, and one so small that some calls have an empty domain.
SHAPES = {
    2: [(12, 10), (5, 7), (3, 3)],
    3: [(10, 9, 4), (6, 5, 1), (4, 4, 2)],
}

CASES = [
    pytest.param(
        module, shape, id=f"{module.__name__.rsplit('.', 1)[-1]}-{'x'.join(map(str, shape))}"
    )
    for module in MODULES
    for shape in SHAPES[len(module.DEFAULT_SHAPE)]
]


def _copy(value: np.ndarray | float, order: str) -> np.ndarray | float:
    return np.array(value, order=order) if isinstance(value, np.ndarray) else value


def _written(module: ModuleType) -> list[str]:
    """The program's parameters that it writes (not its temporaries)."""
    program = module.PROGRAM.ir
    return sorted({o for call in program.calls for o in call.outs if not program.is_temporary(o)})


def _run_and_compare(module: ModuleType, shape: tuple[int, ...], order: str) -> None:
    inputs = module.make_inputs(shape, np.random.default_rng(1234))
    inputs = {name: _copy(value, order) for name, value in inputs.items()}
    before = {name: _copy(value, "K") for name, value in inputs.items()}
    expected = module.reference(**{name: _copy(v, "K") for name, v in inputs.items()})

    module.PROGRAM(*inputs.values())

    assert sorted(expected) == _written(module)
    for name, value in inputs.items():
        if name in expected:
            np.testing.assert_allclose(value, expected[name], rtol=1e-12, atol=0, err_msg=name)
        elif isinstance(value, np.ndarray):
            np.testing.assert_array_equal(value, before[name], err_msg=f"{name} was modified")
    if order == "F":
        assert all(v.flags.f_contiguous for v in inputs.values() if isinstance(v, np.ndarray))


@pytest.mark.parametrize(("module", "shape"), CASES)
def test_matches_reference_c_order(module: ModuleType, shape: tuple[int, ...]) -> None:
    _run_and_compare(module, shape, "C")


@pytest.mark.parametrize(("module", "shape"), CASES)
def test_matches_reference_fortran_order(module: ModuleType, shape: tuple[int, ...]) -> None:
    _run_and_compare(module, shape, "F")


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_example_interface(module: ModuleType) -> None:
    assert module.__doc__ and module.__doc__.strip()
    assert isinstance(module.PROGRAM, sc.Program)
    params = [p.name for p in module.PROGRAM.ir.params]
    inputs = module.make_inputs(module.DEFAULT_SHAPE, np.random.default_rng(0))
    assert list(inputs) == params
    assert list(inspect.signature(module.reference).parameters) == params
    for name in _written(module):
        assert isinstance(inputs[name], np.ndarray) and not inputs[name].any(), name
    for param in module.PROGRAM.ir.params:
        value = inputs[param.name]
        if isinstance(value, np.ndarray):
            assert value.shape == module.DEFAULT_SHAPE
            assert value.dtype == np.float64


def test_default_shapes_have_nonzero_results() -> None:
    """At the default shape every output is written somewhere (the tests are not vacuous)."""
    for module in MODULES:
        inputs = module.make_inputs(module.DEFAULT_SHAPE, np.random.default_rng(0))
        module.PROGRAM(*inputs.values())
        for name in _written(module):
            assert np.count_nonzero(inputs[name]) > 0, (module.__name__, name)


def test_hdiff_limiter_and_upwind_branches_are_exercised() -> None:
    """The sc.where of hdiff zeroes some fluxes and keeps others; upwind sees both signs."""
    hdiff = examples.hdiff
    inputs = hdiff.make_inputs((12, 10, 3), np.random.default_rng(0))
    inp = inputs["inp"]
    lap = 4.0 * inp[1:-1, 1:-1] - (inp[:-2, 1:-1] + inp[2:, 1:-1] + inp[1:-1, :-2] + inp[1:-1, 2:])
    flx = lap[1:] - lap[:-1]
    limited = flx * (inp[2:-1, 1:-1] - inp[1:-2, 1:-1]) > 0.0
    assert limited.any() and (~limited).any()

    upwind = examples.upwind.make_inputs((12, 10), np.random.default_rng(0))
    for name in ("u", "v"):
        assert (upwind[name] > 0).any() and (upwind[name] <= 0).any()
