"""Random valid stencil programs, generated as Python source, for cross-toolchain fuzzing.

`programs()` is a hypothesis strategy of `FuzzProgram`s: the source text of a module that
defines scan operators, field operators and one `@sc.program` over the dimensions I, J, K,
plus the shape and the names of the program's parameters. Printed, a failing example is its
source, so it pastes into a regular test as it is.

What a program holds: several calls, each writing a new field (a temporary when a later
call reads it and the generator says so, an `out` parameter otherwise, which later calls may
also read); tuple results; shifts along I, J and K (up to 2 points per read); `sc.where`;
math functions; casts (`sc.astype` between float64, float32, int64 and bool); explicit
domains (per dimension, at least as narrow as the reads need) and inferred ones; scans over
K, forward and backward, with a scalar or a (float64, int64) state, called from the program
and from field operators; a K-only field broadcast implicitly, `sc.broadcast` of a scalar,
and `sc.index(K)`; a field over (I, J) broadcast along K; float64 and int64 fields;
literals that need all their digits; arrays in C order, Fortran order or strided, one
program in five on arrays large enough (80 000 points and more) for the compiled code's
parallel loops.

Exactness: every node records whether its value is bit-for-bit reproducible across
toolchains. `+ - * /`, `sqrt abs minimum maximum floor ceil trunc`, casts and integer
operations are (docs/dsl.md, "Tolerances"); the transcendental functions are not (C++'s
libm may round differently from NumPy's). An inexact value never feeds a comparison, a
rounding function or a cast to an integer or to float32, where a last-place difference
could become a large one, so an inexact output differs from the embedded one by a few ulp
of the values that made it, and the test compares it with a tolerance.

The generator tracks which region each call writes (margins from the arrays' first and last
indices, per dimension) to choose explicit domains that read only what was written, and to
choose a shape in which every domain is non-empty. Its bookkeeping is conservative: a
program it makes is valid, and the test rejects (hypothesis `reject`) the rare one that the
DSL refuses anyway.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from hypothesis import strategies as st

import stencilchain as sc

DIMS = ("I", "J", "K")
Offset = tuple[int, int, int]
Margins = tuple[tuple[int, int], ...]  # per dimension of DIMS: (from the first, from the end)

#: The annotations of the generated source, by dtype and dimensions.
ANNOTATION = {
    ("float64", "IJK"): "F",
    ("int64", "IJK"): "N",
    ("float64", "K"): "FK",
    ("float64", "IJ"): "FIJ",
    ("float64", ""): "sc.float64",
    ("int64", ""): "sc.int64",
}

PRELUDE = """\
import stencilchain as sc

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F = sc.Field[[I, J, K], sc.float64]
N = sc.Field[[I, J, K], sc.int64]
FK = sc.Field[[K], sc.float64]
FIJ = sc.Field[[I, J], sc.float64]
"""

#: The program's inputs: name -> (dtype, dims).
INPUTS = {
    "a": ("float64", "IJK"),
    "b": ("float64", "IJK"),
    "n": ("int64", "IJK"),
    "nu": ("float64", "K"),
    "h": ("float64", "IJ"),
    "alpha": ("float64", ""),
    "m": ("int64", ""),
}

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


def _union(*nodes: Node) -> dict[str, Any]:
    return {
        "exact": all(n.exact for n in nodes),
        "reads": frozenset().union(*(n.reads for n in nodes)),
        "names": frozenset().union(*(n.names for n in nodes)),
        "has_scan": any(n.has_scan for n in nodes),
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


def _has(ctx: Context, dtype: str) -> bool:
    """Whether a traced leaf of `dtype` exists (a scan's body may have none)."""
    if not ctx.in_scan:
        return True
    return any(f[0] == dtype for f in ctx.fields.values()) or dtype in ctx.scalars.values()


def _literal(draw: st.DrawFn, dtype: str) -> Node:
    """A literal: small exact values, and now and then one that needs every digit of its
    repr (a float64 not exact in float32) or more than 32 bits (an int64)."""
    if dtype == "float64":
        value = draw(
            st.one_of(
                st.sampled_from([0.0, 1.0, -0.5, 2.0, 0.25, 1.5, -3.0]),
                st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False),
                st.sampled_from([0.1, -0.3, 1e-7, 2.0**-30]),
            )
        )
    else:
        value = draw(st.one_of(st.integers(-5, 5), st.sampled_from([2**33 + 1, -(2**35), 2**31])))
    text = repr(value)
    return Node(f"({text})" if text.startswith("-") else text, dtype, "literal", "", True)


def leaf(draw: st.DrawFn, ctx: Context, dtype: str, *, traced: bool = False) -> Node:
    """A field, a scalar, a literal (unless `traced`), an index or a broadcast scalar."""
    options: list[Node] = []
    for name, (fdtype, dims, exact) in sorted(ctx.fields.items()):
        if fdtype == dtype:
            reads = frozenset() if ctx.in_scan else frozenset({(name, (0, 0, 0))})
            kind = "scalar" if ctx.in_scan else "field"
            options.append(
                Node(
                    name, dtype, kind, "" if ctx.in_scan else dims, exact, reads, frozenset({name})
                )
            )
    for name, sdtype in sorted(ctx.scalars.items()):
        if sdtype == dtype:
            options.append(Node(name, dtype, "scalar", "", True, names=frozenset({name})))
    if not ctx.in_scan:
        if dtype == "int64":
            options.append(Node("sc.index(K)", dtype, "field", "K", True))
        scalar = "alpha" if dtype == "float64" else "m"
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
        return _literal(draw, dtype)
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
        "shift",
        "shift",
        "shift",
    ]
    ops += ["unary", "inexact", "divide", "square"] if dtype == "float64" else ["integer", "abs"]
    if dtype == "int64" and not _has(ctx, "float64"):
        ops.remove("cast")
    if dtype == "float64" and ctx.allow_scans and not ctx.in_scan:
        ops.append("scan")
    op = draw(st.sampled_from(ops))
    if op == "binary":
        sym = draw(st.sampled_from(["+", "-", "*"]))
        left = draw(sub())
        # an int64 product has a leaf on one side: no overflow
        right = leaf(draw, ctx, dtype) if sym == "*" and dtype == "int64" else draw(sub())
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
        cmp_dtype = draw(st.sampled_from([d for d in ("float64", "int64") if _has(ctx, d)]))
        left = _exact(draw, ctx, _traced(draw, ctx, draw(sub(cmp_dtype))), traced=True)
        right = _exact(draw, ctx, draw(sub(cmp_dtype)))
        while left.kind != "field" and not ctx.in_scan:  # a field condition
            left = leaf(draw, ctx, cmp_dtype, traced=True)
        sym = draw(st.sampled_from(COMPARISONS))
        true, false = draw(sub()), draw(sub())
        left, right, true, false = _nest(left, right, true, false)
        text = f"sc.where({left.text} {sym} {right.text}, {true.text}, {false.text})"
        nodes = (left, right, true, false)
        return Node(text, dtype, "field", _dims(*nodes), **_union(*nodes))
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
        return dataclasses.replace(x, text=INEXACT_FLOAT_UNARY[fn].format(x.text), exact=False)
    if op == "cast":
        if dtype == "float64":
            sources = ["int64", "float32", "bool"] if _has(ctx, "int64") else ["float32", "bool"]
            source = draw(st.sampled_from(sources))
            if source == "int64":
                x = _traced(draw, ctx, draw(sub("int64")))
                return dataclasses.replace(x, text=f"sc.astype({x.text}, sc.float64)", dtype=dtype)
            x = _exact(draw, ctx, _traced(draw, ctx, draw(sub())), traced=True)
            if source == "float32":
                text = f"sc.astype(sc.astype({x.text}, sc.float32), sc.float64)"
            else:
                text = f"sc.astype({x.text} > 0.5, sc.float64)"
            return dataclasses.replace(x, text=text)
        x = _exact(draw, ctx, _traced(draw, ctx, draw(sub("float64"))), traced=True)
        fn = draw(st.sampled_from(["", "sc.math.floor", "sc.math.ceil"]))
        return dataclasses.replace(x, text=f"sc.astype({fn}({x.text}), sc.int64)", dtype=dtype)
    if op == "scan":
        return draw(scan_in_field_operator(ctx, depth))
    assert op == "shift"
    x = draw(sub())
    if ctx.in_scan or x.kind != "field":
        return x
    offsets = st.sampled_from([-2, -1, -1, 1, 1, 2])
    offset = tuple(draw(offsets) if d in x.dims and draw(st.booleans()) else 0 for d in DIMS)
    if not any(offset):
        offset = (0, 0, draw(offsets)) if "K" in x.dims else (draw(offsets), 0, 0)
    return shift(x, offset)  # type: ignore[arg-type]


@st.composite
def scan_definitions(draw: st.DrawFn, name: str, arg_dtypes: list[str]) -> tuple[str, bool, bool]:
    """A scan operator over K: its source, whether it is exact, whether its state is a tuple."""
    forward = draw(st.booleans())
    pair = draw(st.booleans())
    args = [f"x{i}" for i in range(len(arg_dtypes))]
    fields = {a: (d, "", True) for a, d in zip(args, arg_dtypes)}
    fields["s"] = ("float64", "", True)
    body_ctx = Context(fields, {}, in_scan=True, allow_scans=False)
    update = draw(expressions(body_ctx, "float64", 2))
    params = ", ".join(f"{a}: {ANNOTATION[(d, 'IJK')]}" for a, d in zip(args, arg_dtypes))
    decorator = (
        f"@sc.scan_operator(axis=K, forward={forward}, init={'(0.0, 0)' if pair else '0.0'})"
    )
    lines = [decorator, f"def {name}({'state' if pair else 's'}, {params}):"]
    new = f"0.5 * s + {update.text}"
    if pair:
        cond_left = draw(
            st.sampled_from(["s", *[a for a, d in zip(args, arg_dtypes) if d == "float64"]])
        )
        lines += [
            "    s, c = state",
            f"    return {new}, c + sc.astype({cond_left} > 0.0, sc.int64)",
        ]
    else:
        lines.append(f"    return {new}")
    return "\n".join(lines) + "\n", update.exact, pair


@st.composite
def scan_in_field_operator(draw: st.DrawFn, ctx: Context, depth: int) -> Node:
    """A scan called in a field operator on one float64 field expression."""
    name = f"scan{len(ctx.scans)}"
    ctx.scans.append("")  # reserve the name
    ctx.allow_scans = False
    source, exact, pair = draw(scan_definitions(name, ["float64"]))
    ctx.scans[int(name[4:])] = source
    inner = Context(ctx.fields, ctx.scalars, scans=ctx.scans, allow_scans=False)
    x = draw(expressions(inner, "float64", max(depth - 1, 0)))
    if x.kind != "field" or x.dims != "IJK":
        x = leaf(draw, ctx, "float64", traced=True)
        while x.dims != "IJK":
            x = leaf(draw, ctx, "float64", traced=True)
    text = f"{name}({x.text})"
    if pair:  # the float64 element, or the int64 one cast back
        text = f"{text}[0]" if draw(st.booleans()) else f"sc.astype({text}[1], sc.float64)"
    # the scan's result counts as a field the size of the arrays (docs/dsl.md, "Domain")
    reads = x.reads | {(SCAN_RESULT, (0, 0, 0))}
    node = dataclasses.replace(x, text=text, exact=x.exact and exact, has_scan=True, reads=reads)
    if draw(st.booleans()):  # read at another level
        node = shift(node, (0, 0, draw(st.sampled_from([-2, -1, 1, 2]))))
    return node


@dataclasses.dataclass(frozen=True)
class FuzzProgram:
    """A generated program: its source, the shape of its arrays, its parameters."""

    source: str
    shape: tuple[int, int, int]
    params: tuple[tuple[str, str, str], ...]  # (name, dtype, dims), in order
    outputs: tuple[str, ...]
    exact: tuple[bool, ...]  # per output: bit for bit reproducible
    layout: str  # C, F (Fortran order) or strided (every other element of a larger array)

    def __repr__(self) -> str:
        return (
            f"FuzzProgram(shape={self.shape}, layout={self.layout!r}, outputs={self.outputs}, "
            f"exact={self.exact}, source=\n{self.source})"
        )

    def build(self) -> sc.Program:
        namespace: dict[str, Any] = {}
        exec(compile(self.source, "<fuzz program>", "exec"), namespace)
        return namespace["fuzz_program"]  # type: ignore[no-any-return]

    def arguments(self, seed: int) -> list[Any]:
        """The program's arguments: random inputs and outputs (their untouched points are
        compared too), in the program's layout."""
        rng = np.random.default_rng(seed)
        args: list[Any] = []
        for _name, dtype, dims in self.params:
            shape = tuple(self.shape[DIMS.index(d)] for d in dims)
            if not dims:
                args.append(
                    np.float64(rng.uniform(-2, 2))
                    if dtype == "float64"
                    else np.int64(rng.integers(-5, 6))
                )
                continue
            if dtype == "float64":
                value = rng.uniform(-2.0, 2.0, shape)
            else:
                value = rng.integers(-20, 21, shape, dtype=np.int64)
            args.append(_laid_out(value, self.layout))
        return args


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


@st.composite
def programs(draw: st.DrawFn, max_calls: int = 4, depth: int = 3) -> FuzzProgram:
    """A random valid program (see the module's docstring)."""
    fields: dict[str, tuple[str, str, bool]] = {
        name: (dtype, dims, True) for name, (dtype, dims) in INPUTS.items() if dims
    }
    scalars = {name: dtype for name, (dtype, dims) in INPUTS.items() if not dims}
    written: dict[str, Margins] = {name: ((0, 0),) * 3 for name in fields}
    dims_of = {name: dims for name, (_, dims, _) in fields.items()}
    scans: list[str] = []
    fops: list[str] = []
    temporary_candidates: set[str] = set()
    # each call: its callee, argument names, result names, domain texts, temporary or not
    calls: list[dict[str, Any]] = []
    n_calls = draw(st.integers(1, max_calls))
    for index in range(n_calls):
        recent = frozenset(calls[-1]["results"]) if calls else frozenset()
        ctx = Context(dict(fields), dict(scalars), scans=scans, recent=recent)
        if draw(st.integers(0, 4)) == 0:  # a scan called from the program
            candidates = sorted(n for n, (_, dims, _) in fields.items() if dims == "IJK")
            args = draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=2))
            arg_dtypes = [fields[a][0] for a in args]
            name = f"scan{len(scans)}"
            source, exact, pair = draw(scan_definitions(name, arg_dtypes))
            scans.append(source)
            exact = exact and all(fields[a][2] for a in args)
            reads = frozenset((a, (0, 0, 0)) for a in args)
            results = [("float64", exact)] + ([("int64", True)] if pair else [])
            callee, names = name, list(args)
        else:
            n_results = draw(st.sampled_from([1, 1, 1, 2]))
            nodes = []
            for _ in range(n_results):
                dtype = draw(st.sampled_from(["float64", "float64", "int64"]))
                node = draw(expressions(ctx, dtype, depth))
                if node.kind != "field" or node.dims != "IJK":
                    node = dataclasses.replace(
                        node, text=f"sc.broadcast({node.text}, (I, J, K))", kind="field", dims="IJK"
                    )
                nodes.append(node)
            used = frozenset().union(*(n.names for n in nodes))
            names = [n for n in [*INPUTS, *fields] if n in used and n in {**fields, **scalars}]
            names = list(dict.fromkeys(names))
            callee = f"op{index}"
            params = ", ".join(
                f"{n}: {ANNOTATION[(fields[n][0], fields[n][1]) if n in fields else (scalars[n], '')]}"
                for n in names
            )
            returns = [ANNOTATION[(n.dtype, "IJK")] for n in nodes]
            annotation = returns[0] if len(returns) == 1 else f"tuple[{', '.join(returns)}]"
            body = ", ".join(n.text for n in nodes)
            fops.append(
                f"@sc.field_operator\ndef {callee}({params}) -> {annotation}:\n    return {body}\n"
            )
            reads = frozenset().union(*(n.reads for n in nodes))
            results = [(n.dtype, n.exact) for n in nodes]
        margins = _margins_of(reads, written, dims_of)
        # an explicit domain may read an output parameter's points that no call wrote
        readable = {
            n: m if n in temporary_candidates else ((0, 0),) * 3 for n, m in written.items()
        }
        explicit = _margins_of(reads, readable, dims_of)
        domain = {}
        for axis, d in enumerate(DIMS):
            if draw(st.integers(0, 2)) == 0:  # explicit along d
                lo = explicit[axis][0] + draw(st.integers(0, 1))
                hi = explicit[axis][1] + draw(st.integers(0, 1))
                margins[axis] = [lo, hi]
                domain[d] = f"({lo}, {-hi if hi else None})"
        temporary = draw(st.booleans())  # if every later call reads its results
        out_names: list[str] = []
        for dtype, exact in results:
            out_name = f"x{len(calls)}_{len(out_names)}"
            out_names.append(out_name)
            fields[out_name] = (dtype, "IJK", exact)
            dims_of[out_name] = "IJK"
            written[out_name] = tuple((lo, hi) for lo, hi in margins)
            if temporary:
                temporary_candidates.add(out_name)
        calls.append(
            {
                "callee": callee,
                "args": names,
                "results": out_names,
                "domain": domain,
                "temporary": temporary,
            }
        )
    # the names each call reads, to know which results become temporaries
    read_later: set[str] = set()
    for call in calls:
        read_later.update(call["args"])
    program_params: list[tuple[str, str, str]] = []
    for name, (dtype, dims) in INPUTS.items():
        if any(name in c["args"] for c in calls):
            program_params.append((name, dtype, dims))
    outputs: list[str] = []
    exact_outputs: list[bool] = []
    lines = []
    for call in calls:
        temporary = (
            call["temporary"] and call["args"] and all(r in read_later for r in call["results"])
        )
        domain = ", ".join(f"{d}: {v}" for d, v in call["domain"].items())
        extra = [f"domain={{{domain}}}"] if domain else []
        if temporary:
            targets = ", ".join(call["results"])
            arguments = ", ".join([*call["args"], *extra])
            lines.append(f"    {targets} = {call['callee']}({arguments})")
        else:
            results = call["results"]
            out = results[0] if len(results) == 1 else f"({', '.join(results)})"
            arguments = ", ".join([*call["args"], f"out={out}", *extra])
            lines.append(f"    {call['callee']}({arguments})")
            for result in call["results"]:
                program_params.append((result, fields[result][0], "IJK"))
                outputs.append(result)
                exact_outputs.append(fields[result][2])
    signature = ", ".join(
        f"{name}: {ANNOTATION[(dtype, dims)]}" for name, dtype, dims in program_params
    )
    program = f"@sc.program\ndef fuzz_program({signature}):\n" + "\n".join(lines) + "\n"
    source = "\n\n".join([PRELUDE, *[s for s in scans if s], *fops, program])
    # a shape in which every domain holds at least one point
    need = [
        max(lo + hi for name in written for lo, hi in [written[name][axis]]) for axis in range(3)
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
    )
