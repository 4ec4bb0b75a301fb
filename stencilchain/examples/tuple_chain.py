"""A forward-difference gradient (a tuple output) followed by a backward-difference
divergence that reads it: div(grad f) is the 5-point Laplacian.

    gx[i, j] = f[i+1, j] - f[i, j]                 on I: [0, end-1), J: [0, end-1)
    gy[i, j] = f[i, j+1] - f[i, j]                 (one call, out=(gx, gy))
    div[i, j] = gx[i, j] - gx[i-1, j] + gy[i, j] - gy[i, j-1]
              = f[i+1, j] + f[i-1, j] + f[i, j+1] + f[i, j-1] - 4 f[i, j]
                                                   on I: [1, end-1), J: [1, end-1)

(the mimetic / summation-by-parts pairing of forward and backward differences,
e.g. LeVeque, "Finite Difference Methods for ODEs and PDEs", sec. 3.1).

Dimensions: I, J (array axes 0, 1).
Field operators: `forward_gradient` (returns a tuple of two fields),
`backward_divergence`.
Program: `tuple_chain_program(f, gx, gy, div)`: two calls with inferred domains. The
first writes both elements of its tuple on the box where f(I+1) and f(J+1) are in
bounds; the second reads gx at I-1 and gy at J-1, so its domain is the box where
those reads hit points the first call wrote.
"""

from __future__ import annotations

import numpy as np

import stencilchain as sc

I = sc.Dimension("I")
J = sc.Dimension("J")

Field2D = sc.Field[[I, J], sc.float64]

DEFAULT_SHAPE = (64, 64)


# No return annotation: `-> tuple[Field2D, Field2D]` is rejected by the DSL at
# definition (it compares the annotation with its own TupleType; see the bug report
# that came with these examples). The returned type is inferred from the body.
@sc.field_operator
def forward_gradient(f: Field2D):
    return f(I + 1) - f, f(J + 1) - f


@sc.field_operator
def backward_divergence(gx: Field2D, gy: Field2D) -> Field2D:
    return gx - gx(I - 1) + gy - gy(J - 1)


@sc.program
def tuple_chain_program(f: Field2D, gx: Field2D, gy: Field2D, div: Field2D) -> None:
    forward_gradient(f, out=(gx, gy))
    backward_divergence(gx, gy, out=div)


PROGRAM = tuple_chain_program


def make_inputs(shape: tuple[int, ...], rng: np.random.Generator) -> dict[str, np.ndarray | float]:
    """`f` random in [0, 1); `gx`, `gy`, `div` zeros."""
    return {
        "f": rng.random(shape),
        "gx": np.zeros(shape),
        "gy": np.zeros(shape),
        "div": np.zeros(shape),
    }


def reference(
    f: np.ndarray, gx: np.ndarray, gy: np.ndarray, div: np.ndarray
) -> dict[str, np.ndarray]:
    """The expected `gx`, `gy` (all but the last row and column) and `div` (interior)."""
    expected_gx, expected_gy, expected_div = gx.copy(), gy.copy(), div.copy()
    expected_gx[:-1, :-1] = f[1:, :-1] - f[:-1, :-1]
    expected_gy[:-1, :-1] = f[:-1, 1:] - f[:-1, :-1]
    c = (slice(1, -1), slice(1, -1))
    expected_div[c] = (
        expected_gx[c] - expected_gx[:-2, 1:-1] + expected_gy[c] - expected_gy[1:-1, :-2]
    )
    return {"gx": expected_gx, "gy": expected_gy, "div": expected_div}
