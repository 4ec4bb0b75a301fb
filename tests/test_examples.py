"""The example programs (stencilchain/examples/) run embedded and match their independent
NumPy references; the mesh examples also compiled, where DaCe may still refuse them."""

from __future__ import annotations

import inspect
from types import ModuleType

import numpy as np
import pytest

import stencilchain as sc
import stencilchain.examples as examples
from stencilchain.program import ir

MODULES: list[ModuleType] = examples.ALL_EXAMPLES

# Per number of dimensions: a typical small shape, an odd one barely larger than the
# widest stencil, and one so small that some calls have an empty domain.
SHAPES = {
    2: [(12, 10), (5, 7), (3, 3)],
    3: [(10, 9, 4), (6, 5, 1), (4, 4, 2)],
}


def _name(module: ModuleType) -> str:
    return module.__name__.rsplit(".", 1)[-1]


def _options(module: ModuleType) -> list[dict[str, str]]:
    """The keyword arguments of `make_inputs` to try: nabla on both of its meshes."""
    return [{"mesh": mesh} for mesh in module.MESHES] if hasattr(module, "MESHES") else [{}]


def _case_id(module: ModuleType, shape: tuple[int, ...], options: dict[str, str]) -> str:
    return "-".join([_name(module), "x".join(map(str, shape)), *options.values()])


CASES = [
    pytest.param(module, shape, options, id=_case_id(module, shape, options))
    for module in MODULES
    for shape in SHAPES[len(module.DEFAULT_SHAPE)]
    for options in _options(module)
]


def _copy(value: np.ndarray | float, order: str) -> np.ndarray | float:
    return np.array(value, order=order) if isinstance(value, np.ndarray) else value


def _written(module: ModuleType) -> list[str]:
    """The program's parameters that it writes (not its temporaries)."""
    program = module.PROGRAM.ir
    return sorted({o for call in program.calls for o in call.outs if not program.is_temporary(o)})


def _run_and_compare(
    module: ModuleType, shape: tuple[int, ...], options: dict[str, str], order: str
) -> None:
    inputs = module.make_inputs(shape, np.random.default_rng(1234), **options)
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


@pytest.mark.parametrize(("module", "shape", "options"), CASES)
def test_matches_reference_c_order(
    module: ModuleType, shape: tuple[int, ...], options: dict[str, str]
) -> None:
    _run_and_compare(module, shape, options, "C")


@pytest.mark.parametrize(("module", "shape", "options"), CASES)
def test_matches_reference_fortran_order(
    module: ModuleType, shape: tuple[int, ...], options: dict[str, str]
) -> None:
    _run_and_compare(module, shape, options, "F")


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
        if not isinstance(value, np.ndarray):
            continue
        if not examples.uses_mesh(module):
            assert value.shape == module.DEFAULT_SHAPE
            assert value.dtype == np.float64
        elif isinstance(param.type, ir.TableType):
            assert value.dtype == np.int32 and value.ndim == 2, param.name
        else:  # sized by the mesh; the levels are the shape's third entry
            assert isinstance(param.type, ir.FieldType) and value.dtype == np.float64
            assert value.ndim == len(param.type.dims), param.name
            if param.type.dims[-1].name == "K":
                assert value.shape[-1] == module.DEFAULT_SHAPE[2], param.name


def test_the_mesh_examples_are_told_apart() -> None:
    assert [m for m in MODULES if examples.uses_mesh(m)] == examples.MESH_EXAMPLES


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


# --- the mesh examples -------------------------------------------------------------------------


@pytest.mark.parametrize("mesh", ["torus", "rectangle"])
def test_nabla_is_the_gradient_of_a_linear_function(mesh: str) -> None:
    """Exact at every vertex whose dual cell is closed (all of them on the torus, where a
    linear function must be periodic: constant along y, a saw tooth along x is not)."""
    nabla = examples.nabla
    shape = (7, 5, 2)
    inputs = nabla.make_inputs(shape, np.random.default_rng(0), mesh=mesh)
    grid = nabla.build_mesh(shape, mesh)
    x, y = grid.vertex_coords[:, 0], grid.vertex_coords[:, 1]
    slope = (0.7, -1.3) if mesh == "rectangle" else (0.0, 0.0)
    inputs["pp"] = np.stack([slope[0] * x + slope[1] * y + 2.0] * shape[2], axis=1)
    nabla.PROGRAM(*inputs.values())
    inside = (grid.v2e >= 0).sum(axis=1) == (grid.v2c >= 0).sum(axis=1)
    assert inside.any() and (mesh == "torus") == inside.all()
    np.testing.assert_allclose(inputs["pnabla_x"][inside], slope[0], atol=1e-12)
    np.testing.assert_allclose(inputs["pnabla_y"][inside], slope[1], atol=1e-12)


def test_nabla_of_a_wave_on_the_torus_approximates_its_derivative() -> None:
    nabla = examples.nabla
    shape = (64, 48, 1)
    inputs = nabla.make_inputs(shape, np.random.default_rng(0))
    grid = nabla.build_mesh(shape)
    x = grid.vertex_coords[:, 0]
    wave = 2.0 * np.pi / shape[0]
    inputs["pp"] = np.sin(wave * x)[:, None]
    nabla.PROGRAM(*inputs.values())
    error = np.abs(inputs["pnabla_x"][:, 0] - wave * np.cos(wave * x)).max()
    assert error < 1e-2 * wave, error
    assert np.abs(inputs["pnabla_y"]).max() < 1e-2 * wave


def test_mesh_diffusion_conserves_the_integral() -> None:
    module = examples.mesh_diffusion
    inputs = module.make_inputs((17, 11), np.random.default_rng(5))
    module.PROGRAM(*inputs.values())
    u, out = inputs["u"], inputs["out"]
    assert out.std() < 0.5 * u.std()  # it did diffuse
    assert out.sum() == pytest.approx(u.sum(), rel=1e-13)


def test_mesh_column_weights_sum_to_one_and_integrate_downwards() -> None:
    module = examples.mesh_column
    inputs = module.make_inputs((6, 5, 7), np.random.default_rng(2))
    np.testing.assert_allclose(inputs["weights"].sum(axis=1), 1.0, rtol=1e-15)
    module.PROGRAM(*inputs.values())
    q_c, column, dz = inputs["q_c"], inputs["column"], inputs["dz"]
    np.testing.assert_allclose(column[:, -1], (q_c * dz).sum(axis=1), rtol=1e-13)
    assert (np.diff(column, axis=1) > 0).all()


MESH_CASES = [
    pytest.param(module, options, toolchain, id=f"{_case_id(module, (), options)}-{toolchain}")
    for module in examples.MESH_EXAMPLES
    for options in _options(module)
    for toolchain in ("gtfn_cpu", "dace_cpu")
]


@pytest.mark.parametrize(("module", "options", "toolchain_name"), MESH_CASES)
def test_mesh_examples_compiled(
    module: ModuleType, options: dict[str, str], toolchain_name: str,
    request: pytest.FixtureRequest,
) -> None:  # fmt: skip
    """GTFN must compile and match the embedded executor exactly; DaCe does not compile
    neighbour reads yet: it may refuse with UnsupportedError, or (once it does) match too."""
    toolchain = request.getfixturevalue(toolchain_name)
    inputs = module.make_inputs(module.DEFAULT_SHAPE, np.random.default_rng(7), **options)
    expected = {k: _copy(v, "K") for k, v in inputs.items()}
    module.PROGRAM(*expected.values())
    bound = module.PROGRAM.with_backend(toolchain)
    try:
        bound.compile()
    except sc.UnsupportedError as error:
        if toolchain_name != "dace_cpu":
            raise
        assert "neighbour" in str(error), error
        return
    bound(*inputs.values())
    for name in _written(module):
        np.testing.assert_allclose(inputs[name], expected[name], rtol=1e-13, atol=0, err_msg=name)
