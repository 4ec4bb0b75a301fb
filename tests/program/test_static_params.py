"""Static parameters (`@sc.program(static_params=...)`) on the embedded executor: one
specialisation per value set, each with the values as literals (a Python `if` on them, a
bound from them), `with_bound_args`, and the errors, against NumPy written here."""

from __future__ import annotations

import numpy as np
import pytest

import stencilchain as sc

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F3 = sc.Field[[I, J, K], sc.float64]


@sc.field_operator
def scale(f: F3, a: sc.float64) -> F3:
    return a * f


@sc.field_operator
def vdiff(f: F3) -> F3:
    return f(K + 1) - f(K - 1)


@sc.program(static_params=("n", "top"))
def levels(f: F3, out: F3, d: F3, n: sc.int32, alpha: sc.float64, top: sc.bool_) -> None:
    if top:  # decided when the specialisation is traced
        scale(f, alpha, out=out, domain={K: (n - 1, n)})
    else:
        scale(f, -alpha, out=out, domain={K: (0, n)})
    vdiff(f, out=d, domain={K: (1, n)})


def reference(f: np.ndarray, n: int, alpha: float, top: bool) -> tuple[np.ndarray, np.ndarray]:
    out, d = np.zeros_like(f), np.zeros_like(f)
    if top:
        out[..., n - 1 : n] = alpha * f[..., n - 1 : n]
    else:
        out[..., :n] = -alpha * f[..., :n]
    d[..., 1:n] = f[..., 2 : n + 1] - f[..., : n - 1]
    return out, d


CASES = [(3, 2.0, True), (5, 1.5, False), (np.int32(7), 0.5, np.bool_(True))]


@pytest.mark.parametrize(("n", "alpha", "top"), CASES)
def test_each_value_set_runs_its_specialisation(n: int, alpha: float, top: bool) -> None:
    f = np.random.default_rng(1).random((2, 3, 9))
    out, d = np.zeros_like(f), np.zeros_like(f)
    levels(f, out, d, n, alpha, top)
    want_out, want_d = reference(f, int(n), alpha, bool(top))
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(d, want_d)


def test_a_specialisation_has_the_values_as_literals_and_is_made_once() -> None:
    spec = levels.specialise((3, True))
    assert [p.name for p in spec.ir.params] == ["f", "out", "d", "alpha"]
    assert "K: [2, 3)" in str(spec.ir)
    assert levels.specialise((np.int32(3), np.bool_(True))) is spec
    assert levels.specialise((3, False)).fingerprint() != spec.fingerprint()


def test_keywords_and_bound_arguments() -> None:
    f = np.random.default_rng(2).random((2, 3, 9))
    out, d = np.zeros_like(f), np.zeros_like(f)
    levels(f, out=out, d=d, top=False, n=4, alpha=2.0)
    np.testing.assert_array_equal(out, reference(f, 4, 2.0, False)[0])
    bound = levels.with_bound_args(n=6, top=True)
    out2, d2 = np.zeros_like(f), np.zeros_like(f)
    bound(f, out2, d2, 3.0)
    want_out, want_d = reference(f, 6, 3.0, True)
    np.testing.assert_array_equal(out2, want_out)
    np.testing.assert_array_equal(d2, want_d)
    with pytest.raises(sc.errors.ArgumentError, match="'n' is bound by with_bound_args"):
        bound(f, out2, d2, 3.0, n=2)
    with pytest.raises(sc.errors.ArgumentError, match="'m' is not a parameter"):
        levels.with_bound_args(m=1)
    with pytest.raises(sc.errors.ArgumentError, match=r"levels\(\) takes 6 arguments .*, got 5"):
        levels(f, out, d, 3, 1.0)


@pytest.mark.parametrize(
    ("n", "top", "message"),
    [
        (3.0, True, "static argument 'n' must be a value of type int32"),
        (np.int64(3), True, "static argument 'n' must be a value of type int32"),
        (2**40, True, "static argument 'n' must be a value of type int32"),
        (3, 1, "static argument 'top' must be a value of type bool"),
    ],
)
def test_a_static_argument_of_another_type_is_an_argument_error(
    n: object, top: object, message: str
) -> None:
    f = np.ones((2, 3, 9))
    with pytest.raises(sc.errors.ArgumentError, match=message):
        levels(f, np.zeros_like(f), np.zeros_like(f), n, 1.0, top)


def test_a_static_parameter_that_is_a_field_or_unknown_is_a_definition_error() -> None:
    with pytest.raises(sc.DefinitionError, match="static parameter 'f' is a field"):

        @sc.program(static_params=("f",))
        def p(f: F3, out: F3) -> None:
            scale(f, 1.0, out=out)

    with pytest.raises(sc.DefinitionError, match="static parameter 'g' is not one of"):

        @sc.program(static_params=("g",))
        def q(f: F3, out: F3) -> None:
            scale(f, 1.0, out=out)

    with pytest.raises(sc.DefinitionError, match="static_params is empty"):

        @sc.program(static_params=())
        def r(f: F3, out: F3) -> None:
            scale(f, 1.0, out=out)

    with pytest.raises(sc.DefinitionError, match="static_params names a parameter twice"):

        @sc.program(static_params=("n", "n"))
        def t(f: F3, out: F3, n: sc.int32) -> None:
            scale(f, 1.0, out=out)

    with pytest.raises(sc.DefinitionError, match=r"give a tuple of parameter names"):

        @sc.program(static_params="n")
        def s(f: F3, out: F3, n: sc.int32) -> None:
            scale(f, 1.0, out=out)
