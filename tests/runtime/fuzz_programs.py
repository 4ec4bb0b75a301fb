"""Random valid stencil programs, generated as Python source, for cross-toolchain fuzzing.

`programs()` is a hypothesis strategy of `FuzzProgram`s: the source text of a module that
defines scan operators, field operators and one `@sc.program` over the dimensions I, J, K,
plus the shape and the names of the program's parameters. Printed, a failing example is its
source, so it pastes into a regular test as it is.

What a program holds: several calls, each writing a new field (a temporary when a later
call reads it and the generator says so, an `out` parameter otherwise, which later calls may
also read); tuple results, nested ones (`out=(x, (y, z))`), `sc.astype` of a tuple, tuples
as the branches of `sc.where` and `sc.concat_where`; shifts along I, J and K (up to 2 points
per read); `sc.where`; `sc.concat_where` on an index (`K == 0`, `K < sc.size(K) - 1`,
`I > 0`) and on scalar parameters (`K < k0`, `(K >= k0) & (K < k1)` with an int32 and an
int64 parameter, negative values counting from the end), with the scans in its branches;
scalar `if`s on parameters (`x if alpha > 0.0 else y`); math functions; casts between
float64, float32, int64, int32 and bool (mixed precision); dynamic offsets
`a(sc.as_offset(K, koff))` with valid offsets (shifted along I or J too, and computed:
`koff + 1 - 1`); explicit domains
(per dimension, at least as narrow as the reads need), domains bounded by program
parameters (`(kd0 - 1, kd0)`, `(2, kd0)`, `(kd0 // 2, kd0)`, `(kd0, kd0 + 1)`; values drawn
at call time among those giving a valid range) and inferred ones; scans over K, forward and
backward, with a scalar, a (float64, int64), a nested (float64, (float64, int64)) or a
float32 state, called from the program and from field operators; static parameters (a
random set of the program's integer scalars); a K-only field broadcast implicitly,
`sc.broadcast` of a scalar, and `sc.index(K)` (with int32 operands too); a field over (I,
J) broadcast along K; a zero-dimensional float64 input `z: sc.Field[[], sc.float64]` (a
0-d array; broadcast, never shifted); float64, float32, int64 and int32 fields and scalars;
literals that need all their digits, and dtype constructors as literals of values exact in
their dtype (`sc.float64(1.5)`, `sc.float32(0.25)`, `sc.int32(3)`, `sc.int64(-2)`, of the
dtype of the other operands); expressions of scalar parameters as call arguments
(PARAMETER_EXPRESSIONS: `alpha * 2.0`, `beta - 0.5`, `m - 2`, `k0 // 2`, none of them a
static parameter; k0 and k1 stay in [-size(K), size(K)]); tuple parameters of field
operators (two fields over (I, J, K) as `tp: tuple[F, N]`, read as `tp[0]` and `tp[1]`,
passed as `(a, x0_1)`; not koff or an operand of `sc.as_offset`); arrays in C order, Fortran order or strided, one program in five on
arrays large enough (80 000 points and more) for the compiled code's parallel loops.
Staggered dimensions, in about one program in four: inputs over (I, J, KHalf), `KHalf =
sc.staggered(K)`, on nlev + 1 half levels (float64 `wh` and int64 `nh`), read at full
levels with half shifts (`wh(K + 0.5)` reads wh[k + 1], `wh(K - 0.5)` wh[k], `K ± 1.5`),
fields over K sent through KHalf and back (`x(KHalf - 0.5)(K + 0.5)`), and an output over
KHalf (nlev + 1 levels) made from expressions over K read at half levels (`e(KHalf -
0.5)`, averaged) and `wh`, whole shifts along KHalf (`wh(KHalf + 1)`); the index space along
K is then nlev + 1 points, so the stops of given domains along K count from there. Half of
the staggered programs (those whose inputs are not longer along I) also have an input over
(IHalf, J, K), `IHalf = sc.staggered(I)`, on ni + 1 points (`wi`, read at `I + 0.5` and `I -
0.5`), and any staggered program sends fields over I through IHalf and back (`x(IHalf -
0.5)(I + 0.5)`); with `wi` the index space along I is ni + 1 points, and the stops of given
domains along I count from there.
The constructs of gt4py's and ICON's code (issue 21) too: named collections (a NamedTuple or
a frozen dataclass `Rec<n>` of two fields as a field operator's parameter `tp`, read as
`tp.u` and `tp.v` and passed as `Rec<n>(x, y)`; a NamedTuple `Rec<n>(e, f)` as a result,
written to `out=(x, y)`); origins (the inputs one point longer along I or J, in half of those
programs, given as `sc.as_field(dims, array, start={I: -1})`: they cover [-1, n), not [0, n +
1)); tuple results over different dimensions (`-> tuple[F, FIJ]`, an (I, J) expression of
the (I, J) fields beside the (I, J, K) one, each result over its own domain: both inferred,
or given per result, `domain=({I: ..., K: ...}, {I: ..., J: ...})`); scans called from the
program with a field over (I, J) or K beside the (I, J, K) ones (broadcast along the rest),
with no field argument at all (`scan0(alpha, m, out=x)`: only scalars and the state, over
the dimensions of `out=`), annotated as gt4py writes them (`state: tuple[float, int]`, `x0:
float`), and with a field operator of scalars called in the body (`scan0_step(s, ...)`,
`def scan0_step(u: float, v: float) -> float`). A program is built in a module of its own
in sys.modules (`FuzzProgram.build`): the source's annotations are strings, and a named
collection's are evaluated in its class's module.
Now and then a last call writes an output of an earlier call that it also reads (`op3(x0_0,
out=x0_0)`, read shifted, so through a snapshot of its values before the call, or at the
point only, in place: docs/adr/0042). Meshes are in fuzz_mesh_programs.py.

Exactness: every node records whether its value is bit-for-bit reproducible across
toolchains. `+ - * /`, `sqrt abs minimum maximum floor ceil trunc`, casts and integer
operations are (docs/dsl.md, "Tolerances"); the transcendental functions are not (C++'s
libm may round differently from NumPy's). An inexact value never feeds a comparison, a
rounding function or a cast to an integer or to float32, where a last-place difference
could become a large one, so an inexact output differs from the embedded one by a few ulp
of the values that made it, and the test compares it with a tolerance (TOLERANCE): of
float64 ulp, or of float32 ulp where a float32 value is in the chain (`coarse`). float32
arithmetic is exact like float64's (each operation rounds to float32 on every toolchain).
A cast of a float to an integer takes a value below 1000 (int32) or 1e9 (int64) in
magnitude, else 0, and an int64 narrowed to int32 is taken modulo 1000 first: C++ has no
value for an out-of-range conversion, and int32 products stay far from overflow.

The generator tracks which region each call writes (margins from the arrays' first and last
indices, per dimension) to choose explicit domains that read only what was written, and to
choose a shape in which every domain is non-empty. Its bookkeeping is conservative: a
concat_where's branches count as read everywhere, and the call gets an explicit domain along
the condition's dimension (a window is checked at the call, with the call's domain); a call
bounded by a parameter writes an output no later call reads, and reads no temporary written
over part of K (in a staggered program, every temporary). A program it makes is valid,
and the test rejects (hypothesis `reject`) the rare one that the DSL refuses anyway (a scan
in a concat_where branch that an enclosing branch makes empty); the long run counts them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import sys
import types
from typing import Any

import numpy as np
from hypothesis import strategies as st

import stencilchain as sc

DIMS = ("I", "J", "K")
#: The dimension of each letter of a field's dims (H: KHalf, G: IHalf).
DIMENSIONS = {
    "I": sc.Dimension("I"),
    "J": sc.Dimension("J"),
    "K": sc.Dimension("K"),
    "H": sc.staggered(sc.Dimension("K")),
    "G": sc.staggered(sc.Dimension("I")),
}
Offset = tuple[int, int, int]
Margins = tuple[tuple[int, int], ...]  # per dimension of DIMS: (from the first, from the end)

#: The annotations of the generated source, by dtype and dimensions.
ANNOTATION = {
    ("float64", "IJK"): "F",
    ("int64", "IJK"): "N",
    ("float64", "K"): "FK",
    ("float64", "IJ"): "FIJ",
    ("float64", "IJH"): "FH",
    ("int64", "IJH"): "NH",
    ("float32", "IJK"): "F32",
    ("int32", "IJK"): "N32",
    ("float64", "0"): "F0",
    ("float64", "GJK"): "FG",
    ("float64", ""): "sc.float64",
    ("int64", ""): "sc.int64",
    ("float32", ""): "sc.float32",
    ("int32", ""): "sc.int32",
}

PRELUDE = """\
import dataclasses
from typing import NamedTuple

import stencilchain as sc

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
KHalf = sc.staggered(K)
IHalf = sc.staggered(I)
F = sc.Field[[I, J, K], sc.float64]
N = sc.Field[[I, J, K], sc.int64]
FK = sc.Field[[K], sc.float64]
FIJ = sc.Field[[I, J], sc.float64]
F32 = sc.Field[[I, J, K], sc.float32]
N32 = sc.Field[[I, J, K], sc.int32]
FH = sc.Field[[I, J, KHalf], sc.float64]
NH = sc.Field[[I, J, KHalf], sc.int64]
F0 = sc.Field[[], sc.float64]
FG = sc.Field[[IHalf, J, K], sc.float64]
"""

#: The program's inputs: name -> (dtype, dims).
INPUTS = {
    "a": ("float64", "IJK"),
    "b": ("float64", "IJK"),
    "n": ("int64", "IJK"),
    "nu": ("float64", "K"),
    "h": ("float64", "IJ"),
    "c": ("float32", "IJK"),
    "p": ("int32", "IJK"),
    "koff": ("int32", "IJK"),  # valid offsets along K of sc.as_offset (and int32 data)
    "z": ("float64", "0"),  # a zero-dimensional field (a 0-d array): broadcast, never shifted
    "alpha": ("float64", ""),
    "m": ("int64", ""),
    "beta": ("float32", ""),
    "k0": ("int32", ""),  # in [-size(K), size(K)]: concat_where bounds
    "k1": ("int64", ""),
}
#: The inputs over (I, J, KHalf) of a staggered program (nlev + 1 half levels; dims "IJH"),
#: read at full levels with half shifts (`wh(K + 0.5)` reads wh[k + 1], `wh(K - 0.5)` wh[k]).
STAGGERED_INPUTS = {"wh": ("float64", "IJH"), "nh": ("int64", "IJH")}
#: The input over (IHalf, J, K) of a staggered program (ni + 1 half points along I; dims
#: "GJK"), read at full points (`wi(I + 0.5)` reads wi[i + 1], `wi(I - 0.5)` wi[i]).
I_STAGGERED_INPUTS = {"wi": ("float64", "GJK")}
I_HALF_TO_FULL = {"I + 0.5": 1, "I - 0.5": 0}
I_FULL_TO_HALF = {"IHalf + 0.5": 0, "IHalf - 0.5": -1}
#: A half shift of a field over KHalf onto K: the text and the whole offset it reads at.
HALF_TO_FULL = {"K + 0.5": 1, "K - 0.5": 0, "K + 1.5": 2, "K - 1.5": -1}
#: A half shift of a field over K onto KHalf: the text and the whole offset it reads at.
FULL_TO_HALF = {"KHalf + 0.5": 0, "KHalf - 0.5": -1, "KHalf + 1.5": 1, "KHalf - 1.5": -2}
FLOATS = ("float64", "float32")
INTS = ("int64", "int32")
#: A scalar of each dtype, broadcast by `sc.broadcast`.
BROADCAST_SCALAR = {"float64": "alpha", "int64": "m", "float32": "beta", "int32": "k0"}
#: Expressions of a scalar parameter that a program passes in its place as a call's argument
#: (docs/dsl.md, "Call arguments from expressions of parameters"), of its dtype (a literal
#: takes the parameter's): exact, and k0 and k1 stay in [-size(K), size(K)].
PARAMETER_EXPRESSIONS = {
    "alpha": ("alpha * 2.0", "alpha - 1.0", "(-alpha) / 4.0"),
    "beta": ("beta * 2.0", "beta - 0.5"),
    "m": ("m - 2", "m // 2", "2 * m + 1"),
    "k0": ("k0 // 2",),
    "k1": ("k1 // 2",),
}
#: The operand of `sc.as_offset` reads, per dtype (program inputs: written along all of K).
DYNAMIC_OPERANDS = {"float64": ("a", "b"), "float32": ("c",), "int64": ("n",), "int32": ("p",)}

EXACT_FLOAT_UNARY = ("sqrt_abs", "abs", "floor", "ceil", "trunc")
INEXACT_FLOAT_UNARY = {
    "sin": "sc.math.sin({})",
    "cos": "sc.math.cos({})",
    "tanh": "sc.math.tanh({})",
    "arctan": "sc.math.arctan({})",
    "exp": "sc.math.exp(sc.math.minimum({}, 3.0))",
    "log": "sc.math.log(1.0 + sc.math.abs({}))",
    "cbrt": "sc.math.cbrt({})",
}
SCAN_RESULT = "<scan result>"  # a pseudo-field read where a scan's result is read
COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")


@dataclasses.dataclass(frozen=True)
class Node:
    """An expression of the generated source and what the generator knows about it."""

    text: str
    dtype: str  # float64, int64 or bool
    kind: str  # field, scalar or literal
    dims: str  # IJK, K or "" (scalars and literals)
    exact: bool
    reads: frozenset[tuple[str, Offset]] = frozenset()  # (field, offset) pairs
    names: frozenset[str] = frozenset()  # program-level names it uses (fields and scalars)
    has_scan: bool = False  # holds a scan call (which reads along K from where it starts)
    coarse: bool = False  # inexact by a few float32 ulp (not only float64 ones)
    explicit: frozenset[str] = frozenset()  # dimensions the call's domain must give


def _union(*nodes: Node) -> dict[str, Any]:
    return {
        "exact": all(n.exact for n in nodes),
        "reads": frozenset().union(*(n.reads for n in nodes)),
        "names": frozenset().union(*(n.names for n in nodes)),
        "has_scan": any(n.has_scan for n in nodes),
        "coarse": any(n.coarse for n in nodes),
        "explicit": frozenset().union(*(n.explicit for n in nodes)),
    }


def _kind(*nodes: Node) -> str:
    kinds = {n.kind for n in nodes}
    return "field" if "field" in kinds else "scalar" if "scalar" in kinds else "literal"


def _nest(*nodes: Node) -> tuple[Node, ...]:
    """`nodes`, a field over (I, J) and one over (K) among them broadcast to (I, J, K): their
    dimensions are not nested, which is a DefinitionError (docs/dsl.md, "Broadcasting")."""
    dims = {n.dims for n in nodes}
    if not {"IJ", "K"} <= dims:
        return nodes
    return tuple(
        dataclasses.replace(n, text=f"sc.broadcast({n.text}, (I, J, K))", dims="IJK")
        if n.dims in ("IJ", "K")
        else n
        for n in nodes
    )


def _typed(node: Node) -> Node:
    """`node`, a literal of float32 or int32 written as one of that dtype: a literal on its
    own (broadcast, or both branches of a choice) has the default dtype of its kind."""
    if node.kind != "literal" or node.dtype in ("float64", "int64"):
        return node
    if node.text.startswith("sc."):  # a dtype constructor already
        return dataclasses.replace(node, kind="scalar")
    return dataclasses.replace(node, text=f"sc.{node.dtype}({node.text})", kind="scalar")


def _full(node: Node) -> Node:
    """`node` as a field over (I, J, K)."""
    if node.dims == "IJK" and node.kind == "field":
        return node
    node = _typed(node)
    return dataclasses.replace(
        node, text=f"sc.broadcast({node.text}, (I, J, K))", kind="field", dims="IJK"
    )


def _dims(*nodes: Node) -> str:
    return max((n.dims for n in nodes), key=len)


@dataclasses.dataclass
class Context:
    """What an expression may read: fields by name -> (dtype, dims, exact), scalars."""

    fields: dict[str, tuple[str, str, bool]]
    scalars: dict[str, str]  # name -> dtype
    in_scan: bool = False  # a scan's body: every value is a scalar, no shifts or index
    scans: list[str] = dataclasses.field(default_factory=list)  # source of scan operators
    recent: frozenset[str] = frozenset()  # the results of the call before
    allow_scans: bool = True  # at most one scan per field operator: set False by the first
    staggered: bool = False  # a staggered program: half shifts through KHalf and back
    records: list[str] | None = None  # source of named collections (None: make none)


def _has(ctx: Context, dtype: str) -> bool:
    """Whether a traced leaf of `dtype` exists (a scan's body may have none)."""
    if not ctx.in_scan:
        return True
    return any(f[0] == dtype for f in ctx.fields.values()) or dtype in ctx.scalars.values()


def _literal(draw: st.DrawFn, dtype: str, typed: bool = False) -> Node:
    """A literal: small exact values, and now and then one that needs every digit of its
    repr (a float64 not exact in float32) or more than 32 bits (an int64). `typed`: the
    dtype called with a value exact in it (`sc.float32(0.25)`, `sc.int64(-2)`), a literal of
    that dtype (docs/dsl.md, "Typing rules"), of the same dtype as its operands."""
    if typed:
        values = {
            "float64": [1.5, 0.25, -0.5, 2.0, -3.0, 0.1, 2.0**-30],
            "float32": [1.5, 0.25, -0.5, 2.0, -3.0, 0.125],
            "int32": [3, -2, 0, 5, 77],
            "int64": [3, -2, 1, 2**33 + 1],
        }[dtype]
        text = f"sc.{dtype}({draw(st.sampled_from(values))!r})"
        return Node(text, dtype, "literal", "", True)
    if dtype in FLOATS:  # a float32 literal is rounded to float32 (docs/dsl.md, "Typing")
        value = draw(
            st.one_of(
                st.sampled_from([0.0, 1.0, -0.5, 2.0, 0.25, 1.5, -3.0]),
                st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False),
                st.sampled_from([0.1, -0.3, 1e-7, 2.0**-30]),
            )
        )
    elif dtype == "int32":  # int32 products stay far from overflow (a leaf on one side)
        value = draw(st.one_of(st.integers(-5, 5), st.sampled_from([77, -77])))
    else:
        value = draw(st.one_of(st.integers(-5, 5), st.sampled_from([2**33 + 1, -(2**35), 2**31])))
    text = repr(value)
    return Node(f"({text})" if text.startswith("-") else text, dtype, "literal", "", True)


def leaf(draw: st.DrawFn, ctx: Context, dtype: str, *, traced: bool = False) -> Node:
    """A field, a scalar, a literal (unless `traced`), an index or a broadcast scalar."""
    options: list[Node] = []
    for name, (fdtype, dims, exact) in sorted(ctx.fields.items()):
        if fdtype == dtype and dims == "IJH":  # over KHalf: read at full levels
            text = draw(st.sampled_from([*HALF_TO_FULL, "K + 0.5", "K - 0.5"]))
            reads = frozenset({(name, (0, 0, HALF_TO_FULL[text]))})
            options.append(
                Node(f"{name}({text})", dtype, "field", "IJK", exact, reads, frozenset({name}))
            )
        elif fdtype == dtype and dims == "GJK":  # over IHalf: read at full points
            text = draw(st.sampled_from(sorted(I_HALF_TO_FULL)))
            reads = frozenset({(name, (I_HALF_TO_FULL[text], 0, 0))})
            options.append(
                Node(f"{name}({text})", dtype, "field", "IJK", exact, reads, frozenset({name}))
            )
        elif fdtype == dtype:
            reads = frozenset() if ctx.in_scan else frozenset({(name, (0, 0, 0))})
            kind = "scalar" if ctx.in_scan else "field"
            dims = "" if ctx.in_scan or dims == "0" else dims  # "0": over no dimension
            options.append(Node(name, dtype, kind, dims, exact, reads, frozenset({name})))
    for name, sdtype in sorted(ctx.scalars.items()):
        if sdtype == dtype:
            options.append(Node(name, dtype, "scalar", "", True, names=frozenset({name})))
    if not ctx.in_scan:
        if dtype == "int64":
            options.append(Node("sc.index(K)", dtype, "field", "K", True))
        if dtype == "int32" and "p" in ctx.fields:  # an index adopts the int32 of the other operand
            options.append(
                Node(
                    "(sc.index(K) + p)",
                    dtype,
                    "field",
                    "IJK",
                    True,
                    frozenset({("p", (0, 0, 0))}),
                    frozenset({"p"}),
                )
            )
        scalar = BROADCAST_SCALAR[dtype]
        if scalar in ctx.scalars:
            options.append(
                Node(
                    f"sc.broadcast({scalar}, (I, J, K))",
                    dtype,
                    "field",
                    "IJK",
                    True,
                    names=frozenset({scalar}),
                )
            )
    if not traced and draw(st.integers(0, 3)) == 0:
        return _literal(draw, dtype, typed=draw(st.integers(0, 3)) == 0)
    plain = [o for o in options if o.kind == ("scalar" if ctx.in_scan else "field") and o.names]
    recent = [o for o in plain if o.names & ctx.recent]
    if recent and draw(st.booleans()):  # often what the call before wrote
        return draw(st.sampled_from(recent))
    if plain and draw(st.integers(0, 2)) > 0:  # mostly a field of the program
        return draw(st.sampled_from(plain))
    return draw(st.sampled_from(options))


def _exact(draw: st.DrawFn, ctx: Context, node: Node, *, traced: bool = False) -> Node:
    """`node`, or an exact leaf in its place (an inexact value feeds no discontinuity)."""
    if node.exact:
        return node
    return leaf(draw, ctx, node.dtype, traced=traced)


def _traced(draw: st.DrawFn, ctx: Context, node: Node) -> Node:
    if node.kind != "literal":
        return node
    return leaf(draw, ctx, node.dtype, traced=True)


def shift(node: Node, offset: Offset) -> Node:
    """`node` read at `offset`. A scan inside still starts at the call's first level (last,
    backward) along K, so its reads along K cover every offset from 0 to the shift."""
    parts = [f"{d} {'+' if o > 0 else '-'} {abs(o)}" for d, o in zip(DIMS, offset) if o]
    ks = range(min(0, offset[2]), max(0, offset[2]) + 1) if node.has_scan else (offset[2],)
    reads = frozenset(
        (name, (o[0] + offset[0], o[1] + offset[1], o[2] + k)) for name, o in node.reads for k in ks
    )
    return dataclasses.replace(node, text=f"({node.text})({', '.join(parts)})", reads=reads)


#: Conditions of sc.concat_where: on an index (literal bounds, or from the end) and on the
#: scalar parameters k0 (int32) and k1 (int64). Each selects one interval along K (a scan in
#: a branch needs one) or along I.
CONCAT_CONDITIONS = (
    ("K == 0", ()),
    ("K < 2", ()),
    ("K >= 1", ()),
    ("K == sc.size(K) - 1", ()),
    ("(K >= 1) & (K < sc.size(K) - 1)", ()),
    ("I > 0", ()),
    ("K < k0", ("k0",)),
    ("K >= k0 + 1", ("k0",)),
    ("(K >= k0) & (K < k1)", ("k0", "k1")),
    ("I >= k1 - 1", ("k1",)),
)
#: Conditions of scalar branches (`x if cond else y`), on scalar parameters.
SCALAR_CONDITIONS = (
    ("alpha > 0.0", ("alpha",)),
    ("m != 0", ("m",)),
    ("beta < 0.5", ("beta",)),
    ("(k0 > 2) and (m < 0)", ("k0", "m")),
    ("not (alpha < -1.0)", ("alpha",)),
)


@st.composite
def expressions(draw: st.DrawFn, ctx: Context, dtype: str, depth: int) -> Node:
    if depth == 0 or draw(st.integers(0, 5)) == 0:
        return leaf(draw, ctx, dtype)
    sub = lambda d=dtype: expressions(ctx, d, depth - 1)  # noqa: E731
    ops = [
        "binary",
        "binary",
        "binary",
        "neg",
        "where",
        "minmax",
        "cast",
        "cast",
        "shift",
        "shift",
        "shift",
    ]
    ops += ["unary", "inexact", "divide", "square"] if dtype in FLOATS else ["integer", "abs"]
    if dtype in INTS and not _has(ctx, "float64"):
        ops.remove("cast")
        ops.remove("cast")
    if dtype in ("float64", "float32") and ctx.allow_scans and not ctx.in_scan:
        ops.append("scan")
    if not ctx.in_scan:
        ops += ["concat_where", "concat_where"]
        if any(all(n in ctx.scalars for n in names) for _, names in SCALAR_CONDITIONS):
            ops.append("branch")
        if "koff" in ctx.fields and any(o in ctx.fields for o in DYNAMIC_OPERANDS[dtype]):
            ops.append("dynamic")
        if ctx.staggered:
            ops.append("half")
    op = draw(st.sampled_from(ops))
    if op == "binary":
        sym = draw(st.sampled_from(["+", "-", "*"]))
        left = draw(sub())
        # an integer product has a leaf on one side: no overflow
        right = leaf(draw, ctx, dtype) if sym == "*" and dtype in INTS else draw(sub())
        if left.kind == right.kind == "literal":
            left = _traced(draw, ctx, left)
        left, right = _nest(left, right)
        return Node(
            f"({left.text} {sym} {right.text})",
            dtype,
            _kind(left, right),
            _dims(left, right),
            **_union(left, right),
        )
    if op == "neg":
        x = _traced(draw, ctx, draw(sub()))
        return dataclasses.replace(x, text=f"(-{x.text})")
    if op == "divide":  # a denominator >= 1
        x, y = draw(sub()), draw(sub())
        x = _traced(draw, ctx, x) if y.kind == "literal" else x
        x, y = _nest(x, y)
        text = f"({x.text} / (1.0 + {y.text} * {y.text}))"
        return Node(text, dtype, _kind(x, y), _dims(x, y), **_union(x, y))
    if op == "square":
        x = _traced(draw, ctx, draw(sub()))
        return dataclasses.replace(x, text=f"({x.text} ** 2)")
    if op == "where":
        cmp_dtype = draw(st.sampled_from([d for d in (*FLOATS, *INTS) if _has(ctx, d)]))
        left = _exact(draw, ctx, _traced(draw, ctx, draw(sub(cmp_dtype))), traced=True)
        right = _exact(draw, ctx, draw(sub(cmp_dtype)))
        while left.kind != "field" and not ctx.in_scan:  # a field condition
            left = leaf(draw, ctx, cmp_dtype, traced=True)
        sym = draw(st.sampled_from(COMPARISONS))
        true, false = draw(sub()), draw(sub())
        if true.kind == false.kind == "literal":
            true, false = _typed(true), _typed(false)
        left, right, true, false = _nest(left, right, true, false)
        text = f"sc.where({left.text} {sym} {right.text}, {true.text}, {false.text})"
        nodes = (left, right, true, false)
        return Node(text, dtype, "field", _dims(*nodes), **_union(*nodes))
    if op == "concat_where":  # each branch only where it is selected
        cond, scalars = draw(st.sampled_from(CONCAT_CONDITIONS))
        if not all(s in ctx.scalars for s in scalars):
            cond, scalars = "K < 2", ()
        true, false = (_full(n) for n in (draw(sub()), draw(sub())))
        dim = "I" if "I " in cond else "K"
        node = Node(
            f"sc.concat_where({cond}, {true.text}, {false.text})",
            dtype,
            "field",
            "IJK",
            **_union(true, false),
        )
        # where a window's reads stay is checked at the call, with the call's domain: the
        # generator gives the domain along the condition's dimension (its reads counted
        # everywhere, the conservative side)
        return dataclasses.replace(
            node, names=node.names | set(scalars), explicit=node.explicit | {dim}
        )
    if op == "branch":  # a scalar `if`, decided at run time
        options = [c for c in SCALAR_CONDITIONS if all(n in ctx.scalars for n in c[1])]
        cond, scalars = draw(st.sampled_from(options))
        # each side is what one path of the trace sees: traced, and a field if one is
        true, false = _traced(draw, ctx, draw(sub())), _traced(draw, ctx, draw(sub()))
        if "field" in (true.kind, false.kind):
            true, false = _full(true), _full(false)
        text = f"({true.text} if {cond} else {false.text})"
        kind = _kind(true, false)
        node = Node(
            text,
            dtype,
            "scalar" if kind == "literal" else kind,
            _dims(true, false),
            **_union(true, false),
        )
        return dataclasses.replace(node, names=node.names | set(scalars))
    if op == "dynamic":  # sc.as_offset(K, koff): koff's values keep every read inside
        operand = draw(st.sampled_from([o for o in DYNAMIC_OPERANDS[dtype] if o in ctx.fields]))
        offset, at = draw(
            st.sampled_from(
                [
                    ("koff", (0, 0, 0)),
                    ("koff(I + 1)", (1, 0, 0)),
                    ("koff(J - 1)", (0, -1, 0)),
                    # computed: the entries plus or minus scalars (summing to 0: every
                    # entry of koff keeps its read inside, so these do too)
                    ("koff + 1 - 1", (0, 0, 0)),
                    ("2 + koff(I + 1) - 2", (1, 0, 0)),
                ]
            )
        )
        reads = frozenset({(operand, (0, 0, 0)), ("koff", at)})
        return Node(
            f"{operand}(sc.as_offset(K, {offset}))",
            dtype,
            "field",
            "IJK",
            ctx.fields[operand][2],
            reads,
            frozenset({operand, "koff"}),
        )
    if op == "minmax":
        name = draw(st.sampled_from(["minimum", "maximum"]))
        x, y = _nest(_traced(draw, ctx, draw(sub())), draw(sub()))
        return Node(
            f"sc.math.{name}({x.text}, {y.text})", dtype, _kind(x, y), _dims(x, y), **_union(x, y)
        )
    if op == "abs":
        x = _traced(draw, ctx, draw(sub()))
        return dataclasses.replace(x, text=f"sc.math.abs({x.text})")
    if op == "integer":
        sym = draw(st.sampled_from(["//", "%", "&", "|", "^"]))
        x, y = _nest(_traced(draw, ctx, draw(sub())), draw(sub()))
        return Node(f"({x.text} {sym} {y.text})", dtype, _kind(x, y), _dims(x, y), **_union(x, y))
    if op == "unary":
        fn = draw(st.sampled_from(EXACT_FLOAT_UNARY))
        x = _traced(draw, ctx, draw(sub()))
        if fn in ("floor", "ceil", "trunc"):
            x = _exact(draw, ctx, x, traced=True)
        text = (
            f"sc.math.sqrt(sc.math.abs({x.text}))"
            if fn == "sqrt_abs"
            else f"sc.math.{fn}({x.text})"
        )
        return dataclasses.replace(x, text=text)
    if op == "inexact":
        fn = draw(st.sampled_from(sorted(INEXACT_FLOAT_UNARY)))
        x = _traced(draw, ctx, draw(sub()))
        return dataclasses.replace(
            x,
            text=INEXACT_FLOAT_UNARY[fn].format(x.text),
            exact=False,
            coarse=x.coarse or dtype == "float32",
        )
    if op == "cast":
        return _cast(draw, ctx, dtype, sub)
    if op == "scan":
        return draw(scan_in_field_operator(ctx, depth, dtype))
    if op == "half":  # onto KHalf and back: x(KHalf - 0.5)(K + 0.5) reads x[k]
        x = draw(sub())
        if x.kind == "field" and "I" in x.dims and draw(st.integers(0, 2)) == 0:  # IHalf
            up = draw(st.sampled_from(sorted(I_FULL_TO_HALF)))
            down = draw(st.sampled_from(sorted(I_HALF_TO_FULL)))
            node = shift(x, (I_FULL_TO_HALF[up] + I_HALF_TO_FULL[down], 0, 0))
            return dataclasses.replace(node, text=f"({x.text})({up})({down})")
        if x.kind != "field" or "K" not in x.dims:
            return x
        up = draw(st.sampled_from(["KHalf + 0.5", "KHalf - 0.5"]))
        down = draw(st.sampled_from(["K + 0.5", "K - 0.5"]))
        node = shift(x, (0, 0, FULL_TO_HALF[up] + HALF_TO_FULL[down]))
        return dataclasses.replace(node, text=f"({x.text})({up})({down})")
    assert op == "shift"
    x = draw(sub())
    if ctx.in_scan or x.kind != "field" or not x.dims:  # a zero-dimensional field: no shift
        return x
    offsets = st.sampled_from([-2, -1, -1, 1, 1, 2])
    offset = tuple(draw(offsets) if d in x.dims and draw(st.booleans()) else 0 for d in DIMS)
    if not any(offset):
        offset = (0, 0, draw(offsets)) if "K" in x.dims else (draw(offsets), 0, 0)
    return shift(x, offset)  # type: ignore[arg-type]


def _cast(draw: st.DrawFn, ctx: Context, dtype: str, sub: Any) -> Node:
    """A value of `dtype` cast from another dtype (mixed precision). A cast to an integer or
    to float32 takes an exact value only."""
    sources = {
        "float64": ["int64", "int32", "float32", "float32", "round trip", "bool"],
        "float32": ["float64", "float64", "int32", "int64"],
        "int64": ["float64", "int32"],
        "int32": ["float64", "float32", "int64"],
    }[dtype]
    sources = [s for s in sources if s in ("round trip", "bool") or _has(ctx, s)]
    if not sources:  # a scan's body without a value of another dtype
        return leaf(draw, ctx, dtype)
    source = draw(st.sampled_from(sources))
    target = f"sc.{dtype}"
    if source in INTS:  # an int64 narrowed to int32 is reduced first: no overflow after it
        x = _traced(draw, ctx, draw(sub(source)))
        text = f"({x.text} % 1000)" if (source, dtype) == ("int64", "int32") else x.text
        return dataclasses.replace(x, text=f"sc.astype({text}, {target})", dtype=dtype)
    if source == "float32" and dtype == "float64":  # widening: inexact stays inexact
        x = _traced(draw, ctx, draw(sub("float32")))
        return dataclasses.replace(x, text=f"sc.astype({x.text}, {target})", dtype=dtype)
    if source in ("round trip", "bool"):
        x = _exact(draw, ctx, _traced(draw, ctx, draw(sub())), traced=True)
        if source == "round trip":
            text = f"sc.astype(sc.astype({x.text}, sc.float32), sc.float64)"
        else:
            text = f"sc.astype({x.text} > 0.5, sc.float64)"
        return dataclasses.replace(x, text=text)
    x = _exact(draw, ctx, _traced(draw, ctx, draw(sub(source))), traced=True)
    if dtype in INTS:  # of a float in range (and no NaN): C++ has no value for the others
        fn = draw(st.sampled_from(["", "sc.math.floor", "sc.math.ceil"]))
        bound = "1000.0" if dtype == "int32" else "1e9"
        text = (
            f"sc.astype({fn}(sc.where(sc.math.abs({x.text}) < {bound}, {x.text}, 0.0)), {target})"
        )
        return dataclasses.replace(x, text=text, dtype=dtype)
    return dataclasses.replace(x, text=f"sc.astype({x.text}, {target})", dtype=dtype)


#: The states of generated scans: the structure of their results (dtypes, nested).
SCAN_STATES: dict[str, Any] = {
    "scalar": "float64",
    "pair": ("float64", "int64"),
    "nested": ("float64", ("float64", "int64")),
    "float32": "float32",
}
SCAN_INIT = {
    "scalar": "0.0",
    "pair": "(0.0, 0)",
    "nested": "(0.0, (1.0, 0))",
    "float32": "sc.float32(0.0)",
}


#: gt4py's annotations of a scan's state (docs/dsl.md, "As gt4py writes them").
GT4PY_STATES = {
    "scalar": "float",
    "pair": "tuple[float, int]",
    "nested": "tuple[float, tuple[float, int]]",
    "float32": "sc.float32",
}
#: gt4py's annotations of a scan's value parameters: `float` and `int` take the dimensions
#: of their argument (an (I, J) or K field broadcast along the rest); the others as fields.
GT4PY_VALUES = {"float64": "float", "int64": "int"}


@st.composite
def scan_definitions(
    draw: st.DrawFn,
    name: str,
    arg_dtypes: list[str],
    state: str | None = None,
    arg_dims: list[str] | None = None,
    gt4py: bool | None = None,
) -> tuple[str, bool, bool, str]:
    """A scan operator over K: its source, whether it is exact, whether it is inexact by
    float32 ulp (coarse), and its state (a key of SCAN_STATES). `arg_dims`: each argument's
    dimensions (IJK when not given; "" for a scalar, IJ or K for a field broadcast along
    the rest); `gt4py`: annotated as gt4py writes scans (`state: tuple[float, int]`, `x0:
    float`; None: drawn). Now and then its update is a field operator of scalars called in
    its body (`scan0_step(s, ...)`, defined before it)."""
    forward = draw(st.booleans())
    state = state or draw(st.sampled_from(sorted(SCAN_STATES)))
    arg_dims = arg_dims or ["IJK"] * len(arg_dtypes)
    gt4py = draw(st.integers(0, 2)) == 0 if gt4py is None else gt4py
    # `float` takes the dimensions of the parameters annotated as fields (F32) where there
    # are some, where an argument over fewer dimensions would need sc.broadcast
    gt4py = gt4py and all(d in GT4PY_VALUES for d, dims in zip(arg_dtypes, arg_dims) if dims)
    args = [f"x{i}" for i in range(len(arg_dtypes))]
    fields = {a: (d, "", True) for a, d in zip(args, arg_dtypes)}
    sdtype = "float32" if state == "float32" else "float64"
    fields["s"] = (sdtype, "", True)
    if state == "nested":
        fields["t"] = ("float64", "", True)
    body_ctx = Context(fields, {}, in_scan=True, allow_scans=False)
    update = draw(expressions(body_ctx, sdtype, 2))

    def annotation(dtype: str, dims: str) -> str:
        if not dims:  # a scalar parameter
            return f"sc.{dtype}"
        if gt4py and dtype in GT4PY_VALUES:
            return GT4PY_VALUES[dtype]
        return ANNOTATION[(dtype, dims)]

    params = [f"{a}: {annotation(d, dims)}" for a, d, dims in zip(args, arg_dtypes, arg_dims)]
    decorator = f"@sc.scan_operator(axis=K, forward={forward}, init={SCAN_INIT[state]})"
    first = "s" if state in ("scalar", "float32") else "state"
    if gt4py or not any(arg_dims):  # with no field argument: as gt4py writes it
        returns = "" if state == "float32" else f" -> {GT4PY_STATES[state]}"
        first = f"{first}: {GT4PY_STATES[state]}"
    else:
        returns = ""
    lines = [decorator, f"def {name}({', '.join([first, *params])}){returns}:"]
    new = f"0.5 * s + {update.text}"
    if sdtype == "float64" and draw(st.integers(0, 2)) == 0:  # a field operator of scalars
        lines = [
            "@sc.field_operator",
            f"def {name}_step(u: float, v: float) -> float:",
            "    return 0.5 * u + v",
            "",
            "",
            *lines,
        ]
        new = f"{name}_step(s, {update.text})"
    floats = ["s", *[a for a, d in zip(args, arg_dtypes) if d == "float64"]]
    if state in ("pair", "nested"):
        cond_left = draw(st.sampled_from(floats))
        count = f"c + sc.astype({cond_left} > 0.0, sc.int64)"
        if state == "pair":
            lines += ["    s, c = state", f"    return {new}, {count}"]
        else:
            lines += ["    s, (t, c) = state", f"    return {new}, (0.5 * t - s, {count})"]
    else:
        lines.append(f"    return {new}")
    coarse = update.coarse or (state == "float32" and not update.exact)
    return "\n".join(lines) + "\n", update.exact, coarse, state


@st.composite
def scan_in_field_operator(draw: st.DrawFn, ctx: Context, depth: int, dtype: str) -> Node:
    """A scan called in a field operator on one float64 (float32) field expression; a
    float element of its result (or the integer one, cast)."""
    name = f"scan{len(ctx.scans)}"
    ctx.scans.append("")  # reserve the name
    ctx.allow_scans = False
    state = "float32" if dtype == "float32" else draw(st.sampled_from(["scalar", "pair", "nested"]))
    arg = "float32" if dtype == "float32" else "float64"
    source, exact, coarse, state = draw(scan_definitions(name, [arg], state))
    ctx.scans[int(name[4:])] = source
    inner = Context(
        ctx.fields, ctx.scalars, scans=ctx.scans, allow_scans=False, staggered=ctx.staggered
    )
    x = draw(expressions(inner, arg, max(depth - 1, 0)))
    if x.kind != "field" or x.dims != "IJK":
        x = leaf(draw, ctx, arg, traced=True)
        while x.dims != "IJK":
            x = leaf(draw, ctx, arg, traced=True)
    text = f"{name}({x.text})"
    if state == "pair":  # the float64 element, or the int64 one cast back
        text = f"{text}[0]" if draw(st.booleans()) else f"sc.astype({text}[1], sc.float64)"
    elif state == "nested":
        text = draw(
            st.sampled_from([f"{text}[0]", f"{text}[1][0]", f"sc.astype({text}[1][1], sc.float64)"])
        )
    # the scan's result counts as a field the size of the arrays (docs/dsl.md, "Domain")
    reads = x.reads | {(SCAN_RESULT, (0, 0, 0))}
    node = dataclasses.replace(
        x,
        text=text,
        exact=x.exact and exact,
        has_scan=True,
        reads=reads,
        coarse=x.coarse or coarse,
    )
    if draw(st.booleans()):  # read at another level
        node = shift(node, (0, 0, draw(st.sampled_from([-2, -1, 1, 2]))))
    return node


#: Domain bounds along K from a program parameter `kd<n>` (an int32 or int64 scalar): the
#: texts of the start and the stop, with `{lo}` the least start the call's reads allow.
BOUND_FORMS = {
    "a": ("{p} - 1", "{p}"),
    "b": ("{lo}", "{p}"),
    "c": ("{p} // 2", "{p}"),
    "d": ("{p}", "{p} + 1"),
}


def resolve_bound(form: str, value: int, size: int, lo_min: int) -> tuple[int, int]:
    """The range [start, stop) that bound `form` with its parameter's `value` gives along a
    dimension of `size` points (docs/dsl.md, "Bounds from expressions of parameters": a
    negative value counts from the end, a constant added last is added after that)."""

    def r(v: int) -> int:
        return v if v >= 0 else size + v

    if form == "a":
        return r(value) - 1, r(value)
    if form == "b":
        return lo_min, r(value)
    if form == "c":
        return r(value // 2), r(value)
    return r(value), r(value) + 1


def bound_values(
    form: str, size: int, lo: int, hi: int, static: bool = False, space: int | None = None
) -> list[int]:
    """The parameter values for which the bound's range is non-empty and inside [lo, size -
    hi), a negative value counting from the end of the index space, `space` points (one
    more than `size` where a field is over KHalf; `size` if not given). A static parameter
    means what the same value means as a scalar parameter (`static` is kept for the
    callers)."""
    space = size if space is None else space
    values = []
    for v in range(-space, space + 1):
        if v == 0 or (form == "c" and v < 0):  # 0: an empty stop; c: one plain value
            continue
        start, stop = resolve_bound(form, v, space, lo)
        if lo <= start < stop <= size - hi:
            values.append(v)
    return values


@dataclasses.dataclass(frozen=True)
class FuzzProgram:
    """A generated program: its source, the shape of its arrays, its parameters."""

    source: str
    shape: tuple[int, int, int]
    params: tuple[tuple[str, str, str], ...]  # (name, dtype, dims), in order
    outputs: tuple[str, ...]
    exact: tuple[bool, ...]  # per output: bit for bit reproducible
    layout: str  # C, F (Fortran order) or strided (every other element of a larger array)
    coarse: tuple[bool, ...] = ()  # per output: inexact by float32 ulp (a float32 value fed it)
    bounds: tuple[tuple[str, str, int, int], ...] = ()  # (parameter, form, lo, hi) along K
    static: tuple[str, ...] = ()  # the static parameters
    # "I" or "J": every input field over it one point longer along it than the outputs
    # (fields over their own ranges, docs/dsl.md); "" for none
    longer: str = ""
    # whether a parameter is over (I, J, KHalf) (dims "IJH"): nlev + 1 points along it, one
    # more than the fields over K (so the index space along K is one longer)
    staggered: bool = False
    # whether the `longer` inputs are field values starting at -1 along it (an origin)
    origin: bool = False

    def __repr__(self) -> str:
        return (
            f"FuzzProgram(shape={self.shape}, layout={self.layout!r}, outputs={self.outputs}, "
            f"exact={self.exact}, coarse={self.coarse}, bounds={self.bounds}, "
            f"longer={self.longer!r}, staggered={self.staggered}, origin={self.origin}, "
            f"source=\n"
            f"{self.source})"
        )

    def build(self) -> sc.Program:
        """The program, defined in a module of its own in sys.modules: the source's
        annotations are strings (this module's `from __future__ import annotations`), and
        those of a named collection are evaluated in its class's module, as for a user's."""
        name = f"fuzz_program_{hashlib.sha256(self.source.encode()).hexdigest()[:16]}"
        module = sys.modules.get(name)
        if module is None:
            module = sys.modules[name] = types.ModuleType(name)
            try:
                exec(compile(self.source, "<fuzz program>", "exec"), module.__dict__)
            except BaseException:
                del sys.modules[name]
                raise
        return module.fuzz_program  # type: ignore[no-any-return]

    def arguments(self, seed: int) -> list[Any]:
        """The program's arguments: random inputs and outputs (their untouched points are
        compared too), in the program's layout; every `koff` entry a valid offset along K,
        every bound parameter one that gives a valid range."""
        rng = np.random.default_rng(seed)
        n_k = self.shape[2]
        bounds = {name: (form, lo, hi) for name, form, lo, hi in self.bounds}
        args: list[Any] = []
        for name, dtype, dims in self.params:
            if dims == "0":  # a zero-dimensional field: a 0-d array
                args.append(np.array(rng.uniform(-2.0, 2.0)))
                continue
            shape = tuple(
                n_k + 1
                if d == "H"
                else self.shape[0] + 1
                if d == "G"
                else self.shape[DIMS.index(d)] + (d == self.longer and name not in self.outputs)
                for d in dims
            )
            if not dims:
                if name in bounds:
                    form, lo, hi = bounds[name]
                    space = n_k + self.staggered
                    valid = bound_values(form, n_k, lo, hi, name in self.static, space=space)
                    value: Any = int(rng.choice(valid))
                elif name in ("k0", "k1"):
                    value = int(rng.integers(-n_k, n_k + 1))
                elif dtype in FLOATS:
                    value = rng.uniform(-2, 2)
                else:
                    value = int(rng.integers(-5, 6))
                args.append(np.dtype(dtype).type(value))
                continue
            if name == "koff":
                k = np.arange(n_k)
                value = rng.integers(-k, n_k - k, shape).astype(np.int32)
            elif dtype in FLOATS:
                value = rng.uniform(-2.0, 2.0, shape).astype(dtype)
            else:
                value = rng.integers(-20, 21, shape).astype(dtype)
            value = _laid_out(value, self.layout)
            if self.origin and self.longer in dims and name not in self.outputs:
                dimensions = [DIMENSIONS[d] for d in dims]
                value = sc.as_field(dimensions, value, start={DIMENSIONS[self.longer]: -1})
            args.append(value)
        return args

    def constructs(self) -> list[str]:
        """The constructs of CONSTRUCTS that the program holds (for the long run's counts)."""
        return [
            what for what, pattern in CONSTRUCTS.items() if re.search(pattern, self.source, re.M)
        ]


#: What the generator makes, each as a pattern of the source (the test checks each is
#: reached; the long run counts the programs holding it).
CONSTRUCTS = {
    "tuple outputs": r"out=\(",
    "nested tuple outputs": r"out=\(\w+, \(",
    "temporaries": r"^    x\w+ = op",
    "tuple temporaries": r"^    x\w+, \(?x\w+",
    "scans called from programs": r"^    (\w+ = )?scan\d+\(",
    "shifts in I": r"\(I [+-] \d",
    "shifts in J": r"[(,] J [+-] \d",
    "shifts in K": r"[(,] K [+-] \d",
    "where": r"sc\.where\(",
    "exact math": r"sc\.math\.(sqrt|floor|ceil|trunc|minimum|maximum)\(",
    "transcendental math": r"sc\.math\.(sin|cos|tanh|exp|log|arctan|cbrt)\(",
    "casts": r"sc\.astype\(.*sc\.(int64|float32)\)",
    "float32 fields": r": F32",
    "int32 fields": r": N32",
    "float32 scalars": r"beta: sc\.float32",
    "casts to int32": r"sc\.int32\)",
    "casts float32 to float64": r"sc\.astype\(c\b.*sc\.float64\)|F32.*\n.*sc\.float64\)",
    "astype of tuples": r"sc\.astype\(\(",
    "tuple where branches": r"sc\.where\([^\n]*, \(",
    "tuple concat_where branches": r"sc\.concat_where\([^\n]*, \(",
    "concat_where on indices": r"sc\.concat_where\((\(?[IK] [<>=!]+ (\d|sc\.size))",
    "concat_where on scalars": r"sc\.concat_where\(\(?[IK] [<>=]+ k[01]",
    "scans in concat_where branches": r"sc\.concat_where\(.*scan\d+\(",
    "scalar if": r" if .* else ",
    "dynamic offsets": r"sc\.as_offset\(K, (2 \+ )?koff",
    "computed dynamic offsets": r"sc\.as_offset\(K, (koff \+ 1 - 1|2 \+ koff)",
    "parameter domain bounds": r"domain=\{[^}]*kd\d",
    "parameter bound arithmetic": r"kd\d+ (//|[+-]) \d",
    "static parameters": r"static_params=",
    "explicit domains": r"domain=\{",
    "inferred domains": r"^    op\d+\([^{]*\)$",
    "forward scans": r"forward=True",
    "backward scans": r"forward=False",
    "tuple states": r"init=\(0\.0, 0\)",
    "nested tuple states": r"init=\(0\.0, \(",
    "float32 states": r"init=sc\.float32",
    "scans in field operators": r"return .*scan\d+\(",
    "shifted scan results": r"return .*\(\(?(sc\.astype\()?scan\d+\(.*\)\)\([IJK] [+-] \d",
    "implicit broadcast over I, J": r"nu: FK",
    "implicit broadcast over K": r"h: FIJ",
    "sc.broadcast": r"sc\.broadcast\(",
    "index": r"sc\.index\(K\)",
    "fields over their own ranges": r"^# inputs one point longer along [IJ]",
    "staggered fields": r"^# fields over \(I, J, KHalf\)",
    "half shifts to full levels": r"\bwh\(K [+-] 0\.5\)",
    "int64 fields over KHalf": r"nh: NH",
    "half shifts by 1.5": r"\(K(Half)? [+-] 1\.5\)",
    "half shifts through KHalf and back": r"\)\(KHalf [+-] 0\.5\)\(K [+-] 0\.5\)",
    "outputs over KHalf": r"-> FH:",
    "whole shifts along KHalf": r"\bwh\(KHalf [+-] 1\)",
    "tuple arguments": r"^    .*op\d+\(([^()=]*, )?\(\w+, \w+\)",
    "zero-dimensional fields": r"\bz: F0",
    "dtype constructors": r"return .*sc\.(float64|int64)\(-?\d",
    "parameter expressions as arguments": r"^    .*op\d+\(.*\b(alpha|beta|m|k0|k1) (//|[-*]) \d",
    "named collection arguments": r"\btp: Rec\d+\b",
    "dataclass collections": r"^@dataclasses\.dataclass",
    "named collection results": r"-> Rec\d+:",
    "origins": r"^# those inputs start at -1 along [IJ]",
    "tuple results over different dimensions": r"-> tuple\[\w+, FIJ\]:",
    "a domain per result": r"domain=\(\{",
    "scan arguments over fewer dimensions": r"^    .*scan\d+\([^\n]*\b(h|nu)\b",
    "scans without field arguments": r"^def scan\d+\([^\n]*: sc\.(float64|int64)\)( -> [^\n]*)?:$",
    "field operators in scan bodies": r"return scan\d+_step\(",
    "gt4py scan annotations": r"^def scan\d+\((s|state): (float|tuple\[|sc\.float32)",
    "fields over IHalf": r"\bwi: FG",
    "half shifts through IHalf and back": r"\)\(IHalf [+-] 0\.5\)\(I [+-] 0\.5\)",
    "int64 results": r"-> (N|tuple\[.*N\b.*\])",
    "float64 results": r"-> (F|tuple\[.*F\b.*\])",
    "calls writing a field they read": r"^    op\d+\((x\d+_\d+), out=\1\b",
}


#: The tolerances of inexact float outputs, by how inexact (docs/dsl.md, "Tolerances": the
#: transcendental functions may differ by a few ulp, 4 allowed): carried through at most a
#: few dozen operations on values below 1e4, a few hundred ulp of a value near 1. float64:
#: 1e-12 (about 4500 ulp); a float32 value in the chain (coarse): 2e-5 (about 170 float32 ulp).
TOLERANCE = {False: 1e-12, True: 2e-5}


def compare_outputs(
    program: FuzzProgram, got: list[Any], want: list[Any], toolchain: str
) -> list[tuple[str, float]]:
    """Assert that the outputs in `got` equal those in `want` (arguments in parameter order):
    integer and exact outputs bit for bit (NaN where NumPy has NaN), inexact ones within
    TOLERANCE. Returns each inexact output's dtype and largest difference relative to
    max(|value|, 1), for the record."""
    index = {name: i for i, (name, _, _) in enumerate(program.params)}
    coarse = program.coarse or (False,) * len(program.outputs)
    differences = []
    for output, exact, rough in zip(program.outputs, program.exact, coarse):
        g, w = got[index[output]], want[index[output]]
        message = f"{toolchain}: output {output} differs from the embedded executor's"
        if exact or w.dtype.kind != "f":
            np.testing.assert_array_equal(g, w, err_msg=message, strict=True)
            continue
        tol = TOLERANCE[rough or w.dtype == np.float32]
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, err_msg=message, strict=True)
        with np.errstate(all="ignore"):
            scale = np.maximum(np.abs(w.astype(np.float64)), 1.0)
            rel = np.abs(g.astype(np.float64) - w) / scale
            label = str(w.dtype)
            if rough and w.dtype == np.float64:
                label += " (a float32 value in the chain)"
            differences.append((label, float(np.nanmax(rel, initial=0.0))))
    return differences


def _laid_out(value: np.ndarray, layout: str) -> np.ndarray:
    if layout == "C":
        return value
    if layout == "F":
        return np.asfortranarray(value)
    base = np.zeros(tuple(2 * n + 1 for n in value.shape), dtype=value.dtype)
    view = base[tuple(slice(1, None, 2) for _ in value.shape)]
    view[...] = value
    return view


def _margins_of(
    reads: frozenset[tuple[str, Offset]], written: dict[str, Margins], dims_of: dict[str, str]
) -> list[list[int]]:
    """The narrowest domain (margins per dimension) in which every read stays inside what
    was written to the field it reads."""
    margins = [[0, 0] for _ in DIMS]
    for name, offset in reads:
        for axis, d in enumerate(DIMS):
            if name == SCAN_RESULT:
                lo = hi = 0
            elif d not in dims_of[name]:
                continue
            else:
                lo, hi = written[name][axis]
            margins[axis][0] = max(margins[axis][0], lo - offset[axis])
            margins[axis][1] = max(margins[axis][1], hi + offset[axis])
    return margins


def _domain_text(domain: tuple[Any, ...], longer: bool) -> str:
    """A call's range along one dimension: `("explicit", lo, hi)` (margins from the first and
    the last of the outputs' points; a stop counting from the end counts from the end of the
    index space, one point further when it is `longer`, fields over KHalf along K) or
    `("bound", start, stop)` (texts)."""
    if domain[0] == "bound":
        return f"({domain[1]}, {domain[2]})"
    _, lo, hi = domain
    hi += longer
    return f"({lo}, {-hi if hi else None})"


def _structure_text(structure: Any, names: list[str]) -> str:
    """The nested tuple `structure` (of leaf indices) written with `names`."""
    if isinstance(structure, int):
        return names[structure]
    return f"({', '.join(_structure_text(s, names) for s in structure)})"


def _annotation_text(structure: Any, dtypes: list[str]) -> str:
    if isinstance(structure, int):
        return ANNOTATION[(dtypes[structure], "IJK")]
    return f"tuple[{', '.join(_annotation_text(s, dtypes) for s in structure)}]"


def _numbered(structure: Any, start: int = 0) -> tuple[Any, int]:
    """A structure of dtypes (SCAN_STATES) as one of leaf indices, and the next index."""
    if isinstance(structure, str):
        return start, start + 1
    items = []
    for s in structure:
        item, start = _numbered(s, start)
        items.append(item)
    return tuple(items), start


def _leaves(structure: Any) -> list[Any]:
    return [structure] if isinstance(structure, str) else [x for s in structure for x in _leaves(s)]


def _field_condition(draw: st.DrawFn, ctx: Context) -> tuple[str, list[Node]]:
    """A comparison of an exact field with an exact value (a where's condition)."""
    cmp_dtype = draw(st.sampled_from([*FLOATS, *INTS]))
    left = leaf(draw, ctx, cmp_dtype, traced=True)
    while left.kind != "field" or not left.exact:
        left = leaf(draw, ctx, cmp_dtype, traced=True)
    right = _exact(draw, ctx, draw(expressions(ctx, cmp_dtype, 1)))
    left, right = _nest(left, right)
    return f"{left.text} {draw(st.sampled_from(COMPARISONS))} {right.text}", [left, right]


@st.composite
def _operator_body(
    draw: st.DrawFn, ctx: Context, depth: int
) -> tuple[str, Any, list[tuple[str, bool, bool]], list[Node]]:
    """A field operator's returned expression: its text, its structure (of leaf indices),
    each leaf's (dtype, exact, coarse), and every node it holds."""
    n_results = draw(st.sampled_from([1, 1, 1, 2, 2, 3]))
    dtypes = [
        draw(st.sampled_from(["float64", "float64", "int64", "float32", "int32"]))
        for _ in range(n_results)
    ]
    nodes = [_full(draw(expressions(ctx, d, depth))) for d in dtypes]
    texts = [n.text for n in nodes]
    structure: Any = 0 if n_results == 1 else tuple(range(n_results))
    results = [(n.dtype, n.exact, n.coarse) for n in nodes]
    every = list(nodes)
    form = "plain"
    if n_results == 2:
        form = draw(st.sampled_from(["plain", "astype", "where", "concat_where"]))
    elif n_results == 3:
        form = draw(st.sampled_from(["plain", "nested", "nested"]))
    if form == "nested":
        structure = (0, (1, 2))
        return f"{texts[0]}, ({texts[1]}, {texts[2]})", structure, results, every
    if form == "astype":  # to float32 only what is exact
        target = "float32" if all(n.exact for n in nodes) and draw(st.booleans()) else "float64"
        results = [(target, n.exact, n.coarse) for n in nodes]
        return f"sc.astype(({texts[0]}, {texts[1]}), sc.{target})", structure, results, every
    if form in ("where", "concat_where"):
        others = [_full(draw(expressions(ctx, d, depth - 1))) for d in dtypes]
        every += others
        results = [
            (n.dtype, n.exact and o.exact, n.coarse or o.coarse) for n, o in zip(nodes, others)
        ]
        branches = f"({texts[0]}, {texts[1]}), ({others[0].text}, {others[1].text})"
        if form == "where":
            cond, cond_nodes = _field_condition(draw, ctx)
            every += cond_nodes
            return f"sc.where({cond}, {branches})", structure, results, every
        cond, scalars = draw(st.sampled_from(CONCAT_CONDITIONS))
        dim = "I" if "I " in cond else "K"
        every.append(
            Node(
                "",
                "bool",
                "field",
                "IJK",
                True,
                names=frozenset(scalars),
                explicit=frozenset({dim}),
            )
        )
        return f"sc.concat_where({cond}, {branches})", structure, results, every
    if n_results == 1:
        return texts[0], structure, results, every
    if n_results == 2 and ctx.records is not None and draw(st.booleans()):
        # a named collection (a NamedTuple) as the result, written to out=(x, y)
        types = [ANNOTATION[(d, "IJK")] for d in dtypes]
        record = _record(ctx.records, types, named_tuple=True)
        return f"{record}({texts[0]}, {texts[1]})", structure, results, every
    return ", ".join(texts), structure, results, every


def _record(records: list[str], types: list[str], named_tuple: bool) -> str:
    """A new named collection `Rec<n>` of fields `u`, `v` of `types`, a NamedTuple or a
    frozen dataclass, its source appended to `records`; its name."""
    name = f"Rec{len(records)}"
    head = (
        f"class {name}(NamedTuple):"
        if named_tuple
        else f"@dataclasses.dataclass(frozen=True)\nclass {name}:"
    )
    records.append(f"{head}\n    u: {types[0]}\n    v: {types[1]}\n")
    return name


def _surface(draw: st.DrawFn, ctx: Context, depth: int = 2) -> Node:
    """An exact float64 expression over (I, J): the program's fields over (I, J) shifted
    along I and J, combined with each other, alpha and literals."""
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        names = sorted(
            n for n, (d, dims, _) in ctx.fields.items() if (d, dims) == ("float64", "IJ")
        )
        name = draw(st.sampled_from(names))
        di, dj = draw(st.sampled_from([-1, 0, 1])), draw(st.sampled_from([-1, 0, 1]))
        parts = [f"{d} {'+' if o > 0 else '-'} {abs(o)}" for d, o in (("I", di), ("J", dj)) if o]
        text = f"{name}({', '.join(parts)})" if parts else name
        reads = frozenset({(name, (di, dj, 0))})
        return Node(text, "float64", "field", "IJ", True, reads, frozenset({name}))
    x = _surface(draw, ctx, depth - 1)
    other = draw(st.integers(0, 2))
    if other == 0:
        y = _surface(draw, ctx, depth - 1)
    elif other == 1 and "alpha" in ctx.scalars:
        y = Node("alpha", "float64", "scalar", "", True, names=frozenset({"alpha"}))
    else:
        y = _literal(draw, "float64")
    sym = draw(st.sampled_from(["+", "-", "*"]))
    return Node(f"({x.text} {sym} {y.text})", "float64", "field", "IJ", **_union(x, y))


@st.composite
def _half_level_body(draw: st.DrawFn, ctx: Context, depth: int) -> Node:
    """A float64 expression over (I, J, KHalf): expressions over K read at half levels
    (`e(KHalf - 0.5)` reads e[h - 1]), perhaps averaged, plus a field over KHalf perhaps
    (whole shifts along KHalf). Its reads are in K's points (index h is level h)."""
    terms: list[Node] = []
    for _ in range(draw(st.integers(1, 2))):
        e = _full(draw(expressions(ctx, "float64", depth)))
        at = draw(st.sampled_from([*FULL_TO_HALF, "KHalf + 0.5", "KHalf - 0.5"]))
        node = shift(e, (0, 0, FULL_TO_HALF[at]))
        terms.append(dataclasses.replace(node, text=f"({e.text})({at})"))
    text = terms[0].text if len(terms) == 1 else f"(0.5 * ({terms[0].text} + {terms[1].text}))"
    node = Node(text, "float64", "field", "IJH", **_union(*terms))
    if "wh" in ctx.fields and draw(st.integers(0, 3)) > 0:
        whole = draw(st.sampled_from([0, 1, -1]))
        read = "wh" if not whole else f"wh(KHalf {'+' if whole > 0 else '-'} 1)"
        wh = Node(read, "float64", "field", "IJH", True, frozenset({("wh", (0, 0, whole))}))
        wh = dataclasses.replace(wh, names=frozenset({"wh"}))
        sym = draw(st.sampled_from(["+", "-", "*"]))
        node = Node(f"({text} {sym} {read})", "float64", "field", "IJH", **_union(node, wh))
    return node


@st.composite
def programs(
    draw: st.DrawFn, max_calls: int = 4, depth: int = 3, staggered: bool | None = None
) -> FuzzProgram:
    """A random valid program (see the module's docstring); `staggered`: whether it has
    fields over KHalf (None: drawn)."""
    longer = draw(st.sampled_from(["", "", "", "I", "J"]))
    # staggered: inputs over (I, J, KHalf) on nlev + 1 half levels (and perhaps an output
    # over them), so the index space along K is nlev + 1 points: the dynamic offsets are
    # checked against the nlev levels of the fields they shift, and a domain's stop along
    # K counts from nlev + 1
    drawn = draw(st.integers(0, 2)) == 0  # drawn in one in three, used in one in four
    staggered = drawn if staggered is None else staggered
    fields: dict[str, tuple[str, str, bool]] = {
        name: (dtype, dims, True) for name, (dtype, dims) in INPUTS.items() if dims
    }
    if staggered:
        fields.update(
            {name: (dtype, dims, True) for name, (dtype, dims) in STAGGERED_INPUTS.items()}
        )
        if longer != "I" and draw(st.booleans()):  # and one over (IHalf, J, K)
            fields.update(
                {name: (dtype, dims, True) for name, (dtype, dims) in I_STAGGERED_INPUTS.items()}
            )
    # inputs one point longer along I or J: now and then as field values starting at -1
    # along it (an origin), so that they cover [-1, n) rather than [0, n + 1)
    origin = bool(longer) and draw(st.booleans())
    coarse_of: dict[str, bool] = {}
    result_of: dict[str, tuple[str, bool]] = {}
    scalars = {name: dtype for name, (dtype, dims) in INPUTS.items() if not dims}
    # over KHalf: one level more than the outputs over K (in the margins of K's points)
    # over IHalf: one point more along I
    written: dict[str, Margins] = {
        name: ((0, -1 if dims == "GJK" else 0), (0, 0), (0, -1 if dims == "IJH" else 0))
        for name, (_, dims, _) in fields.items()
    }
    dims_of = {
        name: dims.replace("H", "K").replace("G", "I") for name, (_, dims, _) in fields.items()
    }
    scans: list[str] = []
    records: list[str] = []
    fops: list[str] = []
    temporary_candidates: set[str] = set()
    bounds: list[tuple[str, str, int, int]] = []
    bound_dtypes: dict[str, str] = {}
    extra_need = [0, 0, 0]
    # each call: its callee, argument names, result names and structure, domain texts,
    # temporary or not
    calls: list[dict[str, Any]] = []
    n_calls = draw(st.integers(1, max_calls))
    for index in range(n_calls):
        recent = frozenset(calls[-1]["results"]) if calls else frozenset()
        ctx = Context(
            dict(fields),
            dict(scalars),
            scans=scans,
            recent=recent,
            staggered=staggered,
            records=records,
        )
        force: frozenset[str] = frozenset()
        no_field = False
        surface: Node | None = None  # a second result over (I, J), its own domain
        if draw(st.integers(0, 4)) == 0:  # a scan called from the program
            candidates = sorted(n for n, (_, dims, _) in fields.items() if dims == "IJK")
            # now and then every result of a tuple call before (a tuple of temporaries)
            before = [r for r in calls[-1]["results"] if r in candidates] if calls else []
            variant = draw(st.integers(0, 5))
            if len(before) > 1 and calls[-1]["temporary"] and draw(st.booleans()):
                args, variant = before, 2
            else:
                args = draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=2))
            if variant == 0:  # no field argument: only scalars and its state, over out='s dims
                args = draw(
                    st.lists(st.sampled_from(["alpha", "m"]), min_size=1, max_size=2, unique=True)
                )
            elif variant == 1:  # a field over (I, J) or K broadcast along the rest
                args = [*args, draw(st.sampled_from(["h", "nu"]))]
            no_field = variant == 0
            arg_dtypes = [fields[a][0] if a in fields else scalars[a] for a in args]
            arg_dims = [fields[a][1] if a in fields else "" for a in args]
            name = f"scan{len(scans)}"
            source, exact, coarse, state = draw(
                scan_definitions(name, arg_dtypes, arg_dims=arg_dims)
            )
            scans.append(source)
            exact = exact and all(fields[a][2] for a in args if a in fields)
            coarse = coarse or any(coarse_of.get(a, False) for a in args)
            reads = frozenset((a, (0, 0, 0)) for a in args if a in fields)
            structure, _ = _numbered(SCAN_STATES[state])
            results = [
                (d, exact if d in FLOATS else True, coarse) for d in _leaves(SCAN_STATES[state])
            ]
            callee, names = name, list(args)
            argtexts = list(names)
        else:
            text, structure, results, nodes = draw(_operator_body(ctx, depth))
            # now and then a tuple over (I, J, K) and (I, J), of a field operator that calls no
            # scan and has no concat_where on scalars (docs/dsl.md: such a call is lowered
            # into a field operator of its own, which returns fields over one set of dims)
            mixable = not any(n.has_scan for n in nodes) and not re.search(
                r"sc\.concat_where\([^,]*\bk[01]\b", text
            )
            if structure == 0 and draw(st.integers(0, 3)) == 0 and mixable:
                surface = _surface(draw, ctx)
                text, structure = f"{text}, {surface.text}", (0, 1)
            used = frozenset().union(*(n.names for n in [*nodes, *([surface] if surface else [])]))
            force = frozenset().union(*(n.explicit for n in nodes))
            names = [
                n
                for n in [*INPUTS, *STAGGERED_INPUTS, *I_STAGGERED_INPUTS, *fields]
                if n in used and n in {**fields, **scalars}
            ]
            names = list(dict.fromkeys(names))
            callee = f"op{index}"
            param_texts = [
                f"{n}: {ANNOTATION[(fields[n][0], fields[n][1]) if n in fields else (scalars[n], '')]}"
                for n in names
            ]
            argtexts = list(names)
            # now and then two fields over (I, J, K) as one tuple parameter `tp`, read as
            # tp[0] and tp[1] and passed as `(x, y)` (not koff, nor an operand of as_offset)
            dynamic = set()
            if "koff" in names:
                dynamic = {"koff", *(o for ops in DYNAMIC_OPERANDS.values() for o in ops)}
            pairable = [
                n for n in names if fields.get(n, ("", ""))[1] == "IJK" and n not in dynamic
            ]
            if len(pairable) > 1 and draw(st.integers(0, 2)) > 0:
                first, second = draw(
                    st.lists(st.sampled_from(pairable), min_size=2, max_size=2, unique=True)
                )
                i, j = names.index(first), names.index(second)
                types = [param_texts[i].split(": ")[1], param_texts[j].split(": ")[1]]
                if draw(st.booleans()):  # a named collection: `tp.u`, passed as Rec<n>(x, y)
                    record = _record(records, types, named_tuple=draw(st.integers(0, 2)) == 0)
                    text = re.sub(rf"\b{first}\b", "tp.u", text)
                    text = re.sub(rf"\b{second}\b", "tp.v", text)
                    param_texts[i] = f"tp: {record}"
                    argtexts[i] = f"{record}({first}, {second})"
                else:
                    text = re.sub(rf"\b{first}\b", "tp[0]", text)
                    text = re.sub(rf"\b{second}\b", "tp[1]", text)
                    param_texts[i] = f"tp: tuple[{types[0]}, {types[1]}]"
                    argtexts[i] = f"({first}, {second})"
                del param_texts[j], argtexts[j]
            params = ", ".join(param_texts)
            if text.startswith("Rec"):  # a named collection
                annotation = text.split("(")[0]
            elif surface is not None:
                annotation = f"tuple[{ANNOTATION[(results[0][0], 'IJK')]}, FIJ]"
                results.append(("float64", True, False))
            else:
                annotation = _annotation_text(structure, [r[0] for r in results])
            fops.append(
                f"@sc.field_operator\ndef {callee}({params}) -> {annotation}:\n    return {text}\n"
            )
            reads = frozenset().union(*(n.reads for n in nodes))
        margins = _margins_of(reads, written, dims_of)
        # an explicit domain may read an output parameter's points that no call wrote
        readable = {
            n: m if n in temporary_candidates or n not in result_of else ((0, 0),) * 3
            for n, m in written.items()
        }
        explicit = _margins_of(reads, readable, dims_of)
        domain = {}
        # a bound from a parameter, if the call reads no temporary written over part of K
        # (in a staggered program every temporary is: K's nlev levels of nlev + 1 points)
        bounded = draw(st.integers(0, 5)) == 0 and all(
            n not in temporary_candidates or (written[n][2] == (0, 0) and not staggered)
            for n, _ in reads
        )
        for axis, d in enumerate(DIMS):
            if bounded and d == "K":
                lo, hi = explicit[axis]
                form = draw(st.sampled_from(sorted(BOUND_FORMS)))
                param = f"kd{len(bounds)}"
                bounds.append((param, form, lo, hi))
                bound_dtypes[param] = draw(st.sampled_from(["int32", "int64"]))
                domain[d] = ("bound", *(t.format(p=param, lo=lo) for t in BOUND_FORMS[form]))
                margins[axis] = [lo, hi]
                extra_need[axis] = max(extra_need[axis], (2 * lo if form == "c" else lo) + hi + 1)
            elif d in force or draw(st.integers(0, 2)) == 0:
                lo = explicit[axis][0] + draw(st.integers(0, 1))
                hi = explicit[axis][1] + draw(st.integers(0, 1))
                margins[axis] = [lo, hi]
                domain[d] = ("explicit", lo, hi)
        # the result over (I, J): its own domain, inferred as the call's, else given
        surface_domain: dict[str, tuple[Any, ...]] = {}
        result_dims = ["IJK"] * len(results)
        if surface is not None:
            result_dims[-1] = "IJ"
            surface_margins = _margins_of(surface.reads, written, dims_of)
            if domain:
                surface_explicit = _margins_of(surface.reads, readable, dims_of)
                for axis, d in enumerate(DIMS[:2]):
                    lo = surface_explicit[axis][0] + draw(st.integers(0, 1))
                    hi = surface_explicit[axis][1] + draw(st.integers(0, 1))
                    surface_margins[axis] = [lo, hi]
                    surface_domain[d] = ("explicit", lo, hi)
            surface_margins[2] = [0, 0]
        # if every later call reads them; a scan with no field argument writes to out=
        temporary = draw(st.integers(0, 2)) > 0 and not bounded and not no_field
        out_names: list[str] = []
        for (dtype, exact, coarse), dims in zip(results, result_dims):
            out_name = f"x{len(calls)}_{len(out_names)}"
            out_names.append(out_name)
            fields[out_name] = (dtype, dims, exact)
            coarse_of[out_name] = coarse
            result_of[out_name] = (dtype, exact)
            dims_of[out_name] = dims
            own = surface_margins if dims == "IJ" else margins
            written[out_name] = tuple((lo, hi) for lo, hi in own)
            if temporary:
                temporary_candidates.add(out_name)
        calls.append(
            {
                "callee": callee,
                "args": names,
                "argtexts": argtexts,
                "results": out_names,
                "structure": structure,
                "domain": domain,
                "temporary": temporary,
                "dims": "IJK",
                "result_dims": result_dims,
                "surface_domain": surface_domain,
            }
        )
        if bounded:  # written where only the call knows: no later call reads them
            for out_name in out_names:
                del fields[out_name]
    # now and then a call that writes an output it also reads (docs/adr/0042): shifted (it
    # reads a snapshot of the values before it) or at the point only (in place)
    in_place = [
        r
        for c in calls
        if not c["temporary"] and c["dims"] == "IJK"
        for r, dims in zip(c["results"], c["result_dims"])
        if dims == "IJK" and r in fields and fields[r][0] == "float64" and fields[r][2]
    ]
    if in_place and draw(st.integers(0, 3)) == 0:
        target = draw(st.sampled_from(in_place))
        offset = draw(st.sampled_from([(0, 0, 0), (1, 0, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)]))
        shifted = ", ".join(
            f"{d} {'+' if o > 0 else '-'} {abs(o)}" for d, o in zip(DIMS, offset) if o
        )
        read = f"{target}({shifted})" if shifted else target
        callee = f"op{len(calls)}"
        fops.append(
            f"@sc.field_operator\ndef {callee}({target}: F) -> F:\n"
            f"    return {read} - 0.5 * {target}\n"
        )
        full = {n: ((0, 0),) * 3 for n in written}  # an output holds values everywhere
        explicit = _margins_of(frozenset({(target, (0, 0, 0)), (target, offset)}), full, dims_of)
        domain = {}
        for axis, d in enumerate(DIMS):
            lo = explicit[axis][0] + draw(st.integers(0, 1))
            hi = explicit[axis][1] + draw(st.integers(0, 1))
            domain[d] = ("explicit", lo, hi)
            extra_need[axis] = max(extra_need[axis], lo + hi + 1)
        calls.append(
            {
                "callee": callee,
                "args": [target],
                "results": [target],
                "structure": 0,
                "domain": domain,
                "temporary": False,
                "dims": "IJK",
                "result_dims": ["IJK"],
                "in_place": True,
            }
        )
    if staggered and draw(st.booleans()):  # an output over KHalf, which no call reads
        ctx = Context(dict(fields), dict(scalars), scans=scans, staggered=staggered)
        node = draw(_half_level_body(ctx, depth - 1))
        names = [
            n
            for n in [*INPUTS, *STAGGERED_INPUTS, *I_STAGGERED_INPUTS, *fields]
            if n in node.names and n in {**fields, **scalars}
        ]
        names = list(dict.fromkeys(names))
        callee = f"op{len(calls)}"
        params = ", ".join(
            f"{n}: {ANNOTATION[(fields[n][0], fields[n][1]) if n in fields else (scalars[n], '')]}"
            for n in names
        )
        fops.append(f"@sc.field_operator\ndef {callee}({params}) -> FH:\n    return {node.text}\n")
        margins = _margins_of(node.reads, written, dims_of)
        readable = {
            n: m if n in temporary_candidates or n not in result_of else ((0, 0),) * 3
            for n, m in written.items()
        }
        explicit = _margins_of(node.reads, readable, dims_of)
        domain = {}
        for axis, d in enumerate(DIMS):
            if d in node.explicit or draw(st.integers(0, 2)) == 0:
                lo = explicit[axis][0] + draw(st.integers(0, 1))
                hi = explicit[axis][1] + draw(st.integers(0, 1))
                margins[axis] = [lo, hi]
                domain[d] = ("explicit", lo, hi)
        out_name = f"x{len(calls)}_0"
        result_of[out_name] = ("float64", node.exact)
        coarse_of[out_name] = node.coarse
        written[out_name] = tuple((lo, hi) for lo, hi in margins)
        calls.append(
            {
                "callee": callee,
                "args": names,
                "results": [out_name],
                "structure": 0,
                "domain": domain,
                "temporary": False,
                "dims": "IJH",
            }
        )
    # the programs's fields over KHalf, which make the index space along K one longer
    half_fields = [n for n in STAGGERED_INPUTS if any(n in c["args"] for c in calls)]
    half_fields += [r for c in calls if c["dims"] == "IJH" for r in c["results"]]
    # and over IHalf, which make it one longer along I
    i_half_fields = [n for n in I_STAGGERED_INPUTS if any(n in c["args"] for c in calls)]
    # the names each call reads, to know which results become temporaries
    read_later: set[str] = set()
    for call in calls:
        read_later.update(call["args"])
    program_params: list[tuple[str, str, str]] = []
    for name, (dtype, dims) in {**INPUTS, **STAGGERED_INPUTS, **I_STAGGERED_INPUTS}.items():
        if any(name in c["args"] for c in calls):
            program_params.append((name, dtype, dims))
    program_params += [(name, bound_dtypes[name], "") for name, _, _, _ in bounds]
    outputs: list[str] = []
    exact_outputs: list[bool] = []
    coarse_outputs: list[bool] = []
    lines = []
    in_expressions: set[str] = set()  # scalars passed in expressions: never static
    for call in calls:
        temporary = (
            call["temporary"] and call["args"] and all(r in read_later for r in call["results"])
        )
        args = list(call.get("argtexts", call["args"]))
        for i, arg in enumerate(args):  # now and then an expression of the scalar passed
            # (not of a scan: its scalar arguments are parameters or literals)
            if (
                arg in PARAMETER_EXPRESSIONS
                and call["callee"].startswith("op")
                and len(set(call.get("result_dims", ()))) < 2  # nor of one over several dims
                and draw(st.integers(0, 2)) == 0
            ):
                args[i] = draw(st.sampled_from(PARAMETER_EXPRESSIONS[arg]))
                in_expressions.add(arg)
        space = {"I": bool(i_half_fields), "J": False, "K": bool(half_fields)}
        domain = ", ".join(f"{d}: {_domain_text(v, space[d])}" for d, v in call["domain"].items())
        extra = [f"domain={{{domain}}}"] if domain else []
        if domain and call.get("surface_domain"):  # each result over its own domain
            surface = ", ".join(
                f"{d}: {_domain_text(v, space[d])}" for d, v in call["surface_domain"].items()
            )
            extra = [f"domain=({{{domain}}}, {{{surface}}})"]
        targets = _structure_text(call["structure"], call["results"])
        if temporary:
            targets = targets[1:-1] if targets.startswith("(") else targets
            arguments = ", ".join([*args, *extra])
            lines.append(f"    {targets} = {call['callee']}({arguments})")
        else:
            arguments = ", ".join([*args, f"out={targets}", *extra])
            lines.append(f"    {call['callee']}({arguments})")
            result_dims = call.get("result_dims", [call["dims"]] * len(call["results"]))
            if call.get("in_place"):  # writes an output of an earlier call again
                continue
            for result, dims in zip(call["results"], result_dims):
                dtype, exact = result_of[result]
                program_params.append((result, dtype, dims))
                outputs.append(result)
                exact_outputs.append(exact)
                coarse_outputs.append(coarse_of[result])
    signature = ", ".join(
        f"{name}: {ANNOTATION[(dtype, dims)]}" for name, dtype, dims in program_params
    )
    int_scalars = [
        n for n, d, dims in program_params if not dims and d in INTS and n not in in_expressions
    ]
    static: tuple[str, ...] = ()
    if int_scalars and draw(st.integers(0, 3)) == 0:
        static = tuple(sorted(draw(st.sets(st.sampled_from(int_scalars), min_size=1))))
    decorator = f"@sc.program(static_params={static!r})" if static else "@sc.program"
    program = f"{decorator}\ndef fuzz_program({signature}):\n" + "\n".join(lines) + "\n"
    if longer:
        program = f"# inputs one point longer along {longer} than the outputs\n{program}"
    if origin:
        program = f"# those inputs start at -1 along {longer} (sc.as_field, start=)\n{program}"
    if i_half_fields:
        program = (
            f"# fields over (IHalf, J, K), on ni + 1 half points: {', '.join(i_half_fields)}\n"
            f"{program}"
        )
    if half_fields:
        program = (
            f"# fields over (I, J, KHalf), on nlev + 1 half levels: {', '.join(half_fields)}\n"
            f"{program}"
        )
    source = "\n\n".join([PRELUDE, *records, *[s for s in scans if s], *fops, program])
    # a shape in which every domain holds at least one point
    need = [
        max([*(lo + hi for name in written for lo, hi in [written[name][axis]]), extra_need[axis]])
        for axis in range(3)
    ]
    shape = tuple(n + draw(st.integers(1, 3)) for n in need)
    if draw(st.integers(0, 4)) == 0:  # large enough for the compiled code's parallel loops
        shape = (shape[0] + 40, shape[1] + 40, shape[2] + draw(st.integers(0, 40)))
    return FuzzProgram(
        source=source,
        shape=shape,  # type: ignore[arg-type]
        params=tuple(program_params),
        outputs=tuple(outputs),
        exact=tuple(exact_outputs),
        layout=draw(st.sampled_from(["C", "F", "strided"])),
        coarse=tuple(coarse_outputs),
        bounds=tuple(bounds),
        static=static,
        longer=longer,
        staggered=bool(half_fields),
        origin=origin,
    )
