"""Random expression trees: embedded evaluation against direct NumPy evaluation.

Hypothesis builds each tree as pairs of (DSL builder, NumPy evaluator). The DSL side is
traced into a field operator and run by a program over the interior {I: (1, -1), J: (1, -1)};
the NumPy side evaluates the same tree on the whole arrays, with `np.roll` for shifts
(cumulative shifts stay within one point, so the interior is exact), and the interiors
must be equal bit for bit.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stencilchain as sc

I = sc.Dimension("I")
J = sc.Dimension("J")
F = sc.Field[[I, J], sc.float64]
L = sc.Field[[I, J], sc.int64]

SHAPE = (6, 7)
INTERIOR = np.s_[1:-1, 1:-1]
FIELDS = ("f", "g", "h")
RANK = {"literal": 0, "scalar": 1, "field": 2}

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@dataclasses.dataclass(frozen=True)
class Node:
    """One tree: what it is (a field, a scalar or a Python literal), and its two evaluations."""

    kind: str
    build: Callable[[Mapping[str, Any]], Any]  # traced parameters -> Symbol or literal
    numpy: Callable[[Mapping[str, Any]], Any]  # whole arrays and scalars -> array or scalar
    text: str

    def __repr__(self) -> str:
        return self.text


def widest(*nodes: Node) -> str:
    return max((n.kind for n in nodes), key=RANK.__getitem__)


def field_leaf(name: str) -> Node:
    return Node("field", lambda env: env[name], lambda env: env[name], name)


def scalar_leaf() -> Node:
    return Node("scalar", lambda env: env["a"], lambda env: env["a"], "a")


def literal_leaf(value: float | int) -> Node:
    return Node("literal", lambda env: value, lambda env: value, repr(value))


BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul}
# Integer operators with NumPy's values where Python's raise (a zero divisor, a negative
# shift count): their left operand is traced, so that NumPy computes both sides.
INTEGER_BINARY = {
    "//": operator.floordiv,
    "%": operator.mod,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "<<": operator.lshift,
    ">>": operator.rshift,
}
COMPARE = {
    "<": (operator.lt, np.less),
    "<=": (operator.le, np.less_equal),
    ">": (operator.gt, np.greater),
    ">=": (operator.ge, np.greater_equal),
    "==": (operator.eq, np.equal),
    "!=": (operator.ne, np.not_equal),
}
CASTS = {
    "float32": (sc.float32, np.float32),
    "int64": (sc.int64, np.int64),
    "bool": (sc.bool_, np.bool_),
}
OPS = {
    "float": ["binary", "binary", "neg", "minmax", "abs", "where", "shift", "shift", "cast"],
    "int": ["binary", "binary", "integer", "integer", "invert", "where", "shift"],
}
LITERALS = {
    "float": st.one_of(
        st.sampled_from([0.0, 1.0, -0.5, 2.0, 0.25]),
        st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False),
    ),
    "int": st.integers(-9, 9),
}


@st.composite
def leaves(draw: st.DrawFn, mode: str) -> Node:
    choice = draw(st.integers(0, 5))
    if choice <= 2:
        return field_leaf(FIELDS[choice])
    if choice == 3:
        return scalar_leaf()
    return literal_leaf(draw(LITERALS[mode]))


def traced(draw: st.DrawFn, node: Node) -> Node:
    """`node`, or a field in its place if it is a Python literal (some operands must be traced)."""
    if node.kind != "literal":
        return node
    return field_leaf(draw(st.sampled_from(FIELDS)))


@st.composite
def trees(draw: st.DrawFn, mode: str, depth: int, shift: tuple[int, int] = (0, 0)) -> Node:
    if depth == 0 or draw(st.integers(0, 4)) == 0:
        return draw(leaves(mode))
    op = draw(st.sampled_from(OPS[mode]))
    sub = trees(mode, depth - 1, shift)
    if op == "binary":
        sym = draw(st.sampled_from(sorted(BINARY)))
        fn = BINARY[sym]
        left, right = draw(sub), draw(sub)
        return Node(
            widest(left, right),
            lambda env: fn(left.build(env), right.build(env)),
            lambda env: fn(left.numpy(env), right.numpy(env)),
            f"({left!r} {sym} {right!r})",
        )
    if op == "integer":
        sym = draw(st.sampled_from(sorted(INTEGER_BINARY)))
        fn = INTEGER_BINARY[sym]
        left, right = traced(draw, draw(sub)), draw(sub)
        return Node(
            widest(left, right),
            lambda env: fn(left.build(env), right.build(env)),
            lambda env: fn(np.asarray(left.numpy(env))[()], right.numpy(env)),
            f"({left!r} {sym} {right!r})",
        )
    if op == "invert":
        x = traced(draw, draw(sub))
        return Node(x.kind, lambda env: ~x.build(env), lambda env: ~x.numpy(env), f"~{x!r}")
    if op == "neg":
        x = draw(sub)
        return Node(x.kind, lambda env: -x.build(env), lambda env: -x.numpy(env), f"-{x!r}")
    if op == "minmax":
        name = draw(st.sampled_from(["minimum", "maximum"]))
        left, right = traced(draw, draw(sub)), draw(sub)
        if draw(st.booleans()):
            left, right = right, left
        dsl, ref = getattr(sc.math, name), getattr(np, name)
        return Node(
            widest(left, right),
            lambda env: dsl(left.build(env), right.build(env)),
            lambda env: ref(left.numpy(env), right.numpy(env)),
            f"{name}({left!r}, {right!r})",
        )
    if op == "abs":
        x = traced(draw, draw(sub))
        return Node(
            x.kind,
            lambda env: sc.math.abs(x.build(env)),
            lambda env: np.abs(x.numpy(env)),
            f"abs({x!r})",
        )
    if op == "where":
        sym = draw(st.sampled_from(sorted(COMPARE)))
        dsl_cmp, np_cmp = COMPARE[sym]
        left, right = traced(draw, draw(sub)), draw(sub)
        if draw(st.booleans()):
            left, right = right, left
        true, false = draw(sub), draw(sub)
        return Node(
            widest(left, right, true, false),
            lambda env: sc.where(
                dsl_cmp(left.build(env), right.build(env)), true.build(env), false.build(env)
            ),
            lambda env: np.where(
                np_cmp(left.numpy(env), right.numpy(env)), true.numpy(env), false.numpy(env)
            ),
            f"where({left!r} {sym} {right!r}, {true!r}, {false!r})",
        )
    if op == "shift":
        di = draw(st.sampled_from([d for d in (-1, 0, 1) if abs(shift[0] + d) <= 1]))
        dj = draw(st.sampled_from([d for d in (-1, 0, 1) if abs(shift[1] + d) <= 1]))
        x = draw(trees(mode, depth - 1, (shift[0] + di, shift[1] + dj)))
        if x.kind != "field":
            return x
        return Node(
            "field",
            lambda env: x.build(env)(I + di, J + dj),
            lambda env: np.roll(x.numpy(env), (-di, -dj), axis=(0, 1)),
            f"{x!r}(I{di:+d}, J{dj:+d})",
        )
    assert op == "cast"
    name = draw(st.sampled_from(sorted(CASTS)))
    dsl_type, np_type = CASTS[name]
    x = traced(draw, draw(sub))
    return Node(
        x.kind,
        lambda env: sc.astype(sc.astype(x.build(env), dsl_type), sc.float64),
        lambda env: np.asarray(x.numpy(env)).astype(np_type).astype(np.float64),
        f"float64({name}({x!r}))",
    )


def rooted(node: Node) -> Node:
    """A tree whose value is a field (a scalar or literal tree is added to f)."""
    if node.kind == "field":
        return node
    return Node(
        "field",
        lambda env: node.build(env) + env["f"],
        lambda env: node.numpy(env) + env["f"],
        f"({node!r} + f)",
    )


def float_program(tree: Node) -> sc.Program:
    def rand_expr(f: F, g: F, h: F, a: sc.float64) -> F:
        return tree.build({"f": f, "g": g, "h": h, "a": a})

    fop = sc.field_operator(rand_expr)

    @sc.program
    def rand_prog(f: F, g: F, h: F, a: sc.float64, out: F):
        fop(f, g, h, a, out=out, domain={I: (1, -1), J: (1, -1)})

    return rand_prog


def int_program(tree: Node) -> sc.Program:
    def rand_int_expr(f: L, g: L, h: L, a: sc.int64) -> L:
        return tree.build({"f": f, "g": g, "h": h, "a": a})

    fop = sc.field_operator(rand_int_expr)

    @sc.program
    def rand_int_prog(f: L, g: L, h: L, a: sc.int64, out: L):
        fop(f, g, h, a, out=out, domain={I: (1, -1), J: (1, -1)})

    return rand_int_prog


def check(prog: sc.Program, tree: Node, env: dict[str, Any], sentinel: Any) -> None:
    out = np.full(SHAPE, sentinel, dtype=env["f"].dtype)
    prog(env["f"], env["g"], env["h"], env["a"], out)
    with np.errstate(all="ignore"):
        expected = np.broadcast_to(tree.numpy(env), SHAPE)
    assert expected.dtype == out.dtype
    np.testing.assert_array_equal(out[INTERIOR], expected[INTERIOR], strict=True)
    border = np.ones(SHAPE, dtype=bool)
    border[INTERIOR] = False
    assert (out[border] == sentinel).all()


@SETTINGS
@given(
    tree=trees("float", 4).map(rooted),
    seed=st.integers(0, 2**32 - 1),
    a=st.floats(-2.0, 2.0, allow_nan=False),
)
def test_random_float_expressions(tree, seed, a):
    rng = np.random.default_rng(seed)
    env: dict[str, Any] = {name: rng.uniform(-2.0, 2.0, SHAPE) for name in FIELDS}
    env["a"] = np.float64(a)
    check(float_program(tree), tree, env, sentinel=np.float64(1e300))


@SETTINGS
@given(
    tree=trees("int", 4).map(rooted),
    seed=st.integers(0, 2**32 - 1),
    a=st.integers(-9, 9),
)
def test_random_int64_expressions(tree, seed, a):
    rng = np.random.default_rng(seed)
    env: dict[str, Any] = {name: rng.integers(-20, 21, SHAPE, dtype=np.int64) for name in FIELDS}
    env["a"] = np.int64(a)
    check(int_program(tree), tree, env, sentinel=np.int64(-(2**62)))


def test_the_generator_reaches_every_construct():
    """A fixed tree with every construct, so the comparison itself is known to work."""
    f, g, h, a = field_leaf("f"), field_leaf("g"), field_leaf("h"), scalar_leaf()
    shifted = Node(
        "field",
        lambda env: (env["f"] * env["g"])(I + 1, J - 1),
        lambda env: np.roll(env["f"] * env["g"], (-1, 1), axis=(0, 1)),
        "(f * g)(I+1, J-1)",
    )
    tree = Node(
        "field",
        lambda env: sc.where(
            shifted.build(env) < env["a"],
            sc.math.minimum(-env["h"], 0.5),
            sc.astype(sc.astype(sc.math.abs(env["f"] - env["g"]), sc.float32), sc.float64),
        ),
        lambda env: np.where(
            shifted.numpy(env) < env["a"],
            np.minimum(-env["h"], 0.5),
            np.abs(env["f"] - env["g"]).astype(np.float32).astype(np.float64),
        ),
        "fixed",
    )
    assert {f.kind, g.kind, h.kind, a.kind} == {"field", "scalar"}
    rng = np.random.default_rng(5)
    env: dict[str, Any] = {name: rng.uniform(-2.0, 2.0, SHAPE) for name in FIELDS}
    env["a"] = np.float64(0.3)
    check(float_program(tree), tree, env, sentinel=np.float64(1e300))
