"""Random valid programs on unstructured meshes, for cross-toolchain fuzzing (the mesh half of
tests/runtime/fuzz_programs.py, with the same interface: `FuzzProgram`-like objects that
build, make their arguments and name their constructs).

A program holds fields over (Cell, K), (Edge, K) and (Vertex, K) (float64, float32 and
int32), weights over (Cell, C2EDim), and the tables of four connectivities (C2E with 3
slots, E2C, E2V with 2, V2E with 4), each declared with or without skip values, and E2C, E2V
and V2E now and then with `max_neighbors=None` (each call's table gives its width: the test
runs such a program with tables of the declared width and of one slot more, one
specialisation each, `MeshProgram.flexible`); its tables
are random valid ones for a random mesh size: entries in [0, n_target), and -1 in about one
slot in four (a whole row now and then) where the connectivity has skip values. Its calls
combine arithmetic, `sc.where`, casts, shifts along K, `sc.concat_where` along K, neighbour
reads of one slot (`f(C2E[1])`), slots of local fields (`w[C2EDim(0)]`, `f(C2E)[C2EDim(2)]`),
the reductions `sc.neighbor_sum`, `sc.max_over` and `sc.min_over` of neighbour reads (weighted
or not), chains of two neighbour reads reduced twice (`v(E2V)(C2E)`), dynamic offsets along K
(`ce(sc.as_offset(K, ko))`), and scans over K on the mesh's columns, from the program and
inside field operators.

Exactness: as in fuzz_programs.py; a reduction adds, or compares, its slots in their order
on every toolchain (a missing slot adds 0), so it is exact; the transcendental functions
are not, and feed no comparison, rounding or cast to float32.

Domains: a neighbour read lands anywhere along its source dimension, so no domain narrows a
mesh dimension (every temporary is written along all of it, as one read through a table
must be); along K the generator tracks margins as fuzz_programs.py does, and gives an
explicit K domain where a concat_where needs one.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np
from hypothesis import strategies as st

import stencilchain as sc

from .fuzz_programs import COMPARISONS, INEXACT_FLOAT_UNARY, compare_outputs  # noqa: F401

ENTITIES = ("Cell", "Edge", "Vertex")
#: name: (source, target entity, local dimension, max_neighbors)
CONNECTIVITIES = {
    "C2E": ("Edge", "Cell", "C2EDim", 3),
    "E2C": ("Cell", "Edge", "E2CDim", 2),
    "E2V": ("Vertex", "Edge", "E2VDim", 2),
    "V2E": ("Edge", "Vertex", "V2EDim", 4),
}
SHORT = {"Cell": "C", "Edge": "E", "Vertex": "V"}
DTYPE_SUFFIX = {"float64": "", "float32": "32", "int32": "I"}
#: The program's inputs: name -> (dtype, entity); `ko` holds valid offsets along K.
INPUTS = {
    "ce": ("float64", "Cell"),
    "ee": ("float64", "Edge"),
    "ve": ("float64", "Vertex"),
    "c32": ("float32", "Cell"),
    "e32": ("float32", "Edge"),
    "ci": ("int32", "Cell"),
    "ko": ("int32", "Cell"),
}
WEIGHTS = "wc"  # over (Cell, C2EDim)
PRELUDE_END = "WC = sc.Field[[Cell, C2EDim], sc.float64]\n"


def annotation(dtype: str, entity: str) -> str:
    return f"{SHORT[entity]}K{DTYPE_SUFFIX[dtype]}"


def prelude(skip: dict[str, bool], flexible: frozenset[str] = frozenset()) -> str:
    """The module's dimensions, connectivities and field types; those in `flexible`
    declared with `max_neighbors=None` (each call's table gives its width)."""
    lines = [
        "import stencilchain as sc",
        "",
        'Cell, Edge, Vertex = sc.Dimension("Cell"), sc.Dimension("Edge"), sc.Dimension("Vertex")',
        'K = sc.Dimension("K", kind=sc.VERTICAL)',
    ]
    for name, (source, target, local, width) in CONNECTIVITIES.items():
        lines.append(f'{local} = sc.Dimension("{local}", kind=sc.LOCAL)')
        lines.append(
            f'{name} = sc.Connectivity("{name}", source={source}, target=({target}, {local}), '
            f"max_neighbors={None if name in flexible else width}, skip_values={skip[name]})"
        )
    for entity in ENTITIES:
        for dtype, suffix in DTYPE_SUFFIX.items():
            lines.append(f"{SHORT[entity]}K{suffix} = sc.Field[[{entity}, K], sc.{dtype}]")
    lines.append(PRELUDE_END.strip())
    return "\n".join(lines) + "\n"


@dataclasses.dataclass(frozen=True)
class MNode:
    text: str
    dtype: str
    kind: str  # field, literal
    entity: str  # "" for a literal
    exact: bool
    reads: frozenset[tuple[str, int]] = frozenset()  # (field, offset along K)
    names: frozenset[str] = frozenset()
    tables: frozenset[str] = frozenset()
    coarse: bool = False
    explicit: bool = False  # needs an explicit K domain (a concat_where)
    has_scan: bool = False


def _u(*nodes: MNode) -> dict[str, Any]:
    return {
        "exact": all(n.exact for n in nodes),
        "reads": frozenset().union(*(n.reads for n in nodes)),
        "names": frozenset().union(*(n.names for n in nodes)),
        "tables": frozenset().union(*(n.tables for n in nodes)),
        "coarse": any(n.coarse for n in nodes),
        "explicit": any(n.explicit for n in nodes),
        "has_scan": any(n.has_scan for n in nodes),
    }


@dataclasses.dataclass
class MContext:
    fields: dict[str, tuple[str, str, bool, bool]]  # name -> dtype, entity, exact, coarse
    scans: list[str]
    allow_scans: bool = True


def _literal(draw: st.DrawFn, dtype: str) -> MNode:
    if dtype == "int32":
        value: Any = draw(st.integers(-5, 5))
    else:
        value = draw(st.sampled_from([0.0, 1.0, -0.5, 2.0, 0.1, -0.3, 1.5]))
    text = repr(value)
    return MNode(f"({text})" if text.startswith("-") else text, dtype, "literal", "", True)


def mleaf(draw: st.DrawFn, ctx: MContext, entity: str, dtype: str, traced: bool = False) -> MNode:
    options = [
        MNode(
            name,
            dtype,
            "field",
            entity,
            exact,
            frozenset({(name, 0)}),
            frozenset({name}),
            coarse=coarse,
        )
        for name, (d, e, exact, coarse) in sorted(ctx.fields.items())
        if d == dtype and e == entity and name != "ko"
    ]
    if not options or (not traced and draw(st.integers(0, 3)) == 0):
        if traced or not options:
            # a float field of the entity, cast: every entity has a float64 input
            base = f"{'ce' if entity == 'Cell' else 'ee' if entity == 'Edge' else 've'}"
            node = MNode(
                base, "float64", "field", entity, True, frozenset({(base, 0)}), frozenset({base})
            )
            if dtype == "float64":
                return node
            if dtype == "int32":
                text = f"sc.astype(sc.math.floor(4.0 * {base}), sc.int32)"
            else:
                text = f"sc.astype({base}, sc.{dtype})"
            return dataclasses.replace(node, text=text, dtype=dtype)
        return _literal(draw, dtype)
    return draw(st.sampled_from(options))


def _field(draw: st.DrawFn, ctx: MContext, node: MNode, entity: str) -> MNode:
    return node if node.kind == "field" else mleaf(draw, ctx, entity, node.dtype, traced=True)


def _exact(draw: st.DrawFn, ctx: MContext, node: MNode, entity: str) -> MNode:
    return node if node.exact else mleaf(draw, ctx, entity, node.dtype, traced=True)


def _shifted(node: MNode, k: int) -> MNode:
    reads = frozenset((n, o + k) for n, o in node.reads)
    if node.has_scan:
        ks = range(min(0, k), max(0, k) + 1)
        reads = frozenset((n, o + j) for n, o in node.reads for j in ks)
    sign = "+" if k > 0 else "-"
    return dataclasses.replace(node, text=f"({node.text})(K {sign} {abs(k)})", reads=reads)


@st.composite
def mexpr(draw: st.DrawFn, ctx: MContext, entity: str, dtype: str, depth: int) -> MNode:
    if depth <= 0 or draw(st.integers(0, 5)) == 0:
        return mleaf(draw, ctx, entity, dtype)
    sub = lambda e=entity, d=dtype: mexpr(ctx, e, d, depth - 1)  # noqa: E731
    conns = [c for c, (_, t, _, _) in CONNECTIVITIES.items() if t == entity]
    ops = ["binary", "binary", "neg", "where", "minmax", "shift", "shift", "concat_where"]
    ops += ["reduce", "reduce", "reduce", "neighbour", "slot", "chain"]
    if dtype != "int32":
        ops += ["inexact", "cast"]
    if entity == "Cell" and dtype == "float64":
        ops += ["dynamic", "weighted", "weight slot"]
    if dtype == "float64" and ctx.allow_scans:
        ops.append("scan")
    op = draw(st.sampled_from(ops))
    if op == "binary":
        sym = draw(st.sampled_from(["+", "-", "*"]))
        left = _field(draw, ctx, draw(sub()), entity)
        right = mleaf(draw, ctx, entity, dtype) if dtype == "int32" and sym == "*" else draw(sub())
        return MNode(f"({left.text} {sym} {right.text})", dtype, "field", entity, **_u(left, right))
    if op == "neg":
        x = _field(draw, ctx, draw(sub()), entity)
        return dataclasses.replace(x, text=f"(-{x.text})")
    if op == "minmax":
        fn = draw(st.sampled_from(["minimum", "maximum"]))
        x, y = _field(draw, ctx, draw(sub()), entity), draw(sub())
        return MNode(f"sc.math.{fn}({x.text}, {y.text})", dtype, "field", entity, **_u(x, y))
    if op == "where":
        left = _exact(draw, ctx, _field(draw, ctx, draw(sub(entity, "float64")), entity), entity)
        right = _exact(draw, ctx, draw(sub(entity, "float64")), entity)
        sym = draw(st.sampled_from(COMPARISONS))
        t, f = draw(sub()), draw(sub())
        text = f"sc.where({left.text} {sym} {right.text}, {t.text}, {f.text})"
        return MNode(text, dtype, "field", entity, **_u(left, right, t, f))
    if op == "shift":
        x = draw(sub())
        if x.kind != "field":
            return x
        return _shifted(x, draw(st.sampled_from([-1, 1, 2])))
    if op == "concat_where":
        cond = draw(st.sampled_from(["K == 0", "K < 2", "K >= 1", "K == sc.size(K) - 1"]))
        t, f = (_field(draw, ctx, draw(sub()), entity) for _ in range(2))
        node = MNode(
            f"sc.concat_where({cond}, {t.text}, {f.text})", dtype, "field", entity, **_u(t, f)
        )
        return dataclasses.replace(node, explicit=True)
    if op == "inexact":
        fn = draw(st.sampled_from(sorted(INEXACT_FLOAT_UNARY)))
        x = _field(draw, ctx, draw(sub()), entity)
        return dataclasses.replace(
            x,
            text=INEXACT_FLOAT_UNARY[fn].format(x.text),
            exact=False,
            coarse=x.coarse or dtype == "float32",
        )
    if op == "cast":
        other = "float32" if dtype == "float64" else "float64"
        x = _field(draw, ctx, draw(sub(entity, other)), entity)
        if dtype == "float32":
            x = _exact(draw, ctx, x, entity)
        return dataclasses.replace(x, text=f"sc.astype({x.text}, sc.{dtype})", dtype=dtype)
    if op == "dynamic":
        x = MNode(
            "ce(sc.as_offset(K, ko))",
            "float64",
            "field",
            "Cell",
            True,
            frozenset({("ce", 0), ("ko", 0)}),
            frozenset({"ce", "ko"}),
        )
        return x
    if op == "scan":
        return draw(mscan_in_operator(ctx, entity, depth))
    if op == "weight slot":  # a slot of a local field parameter
        x = _field(draw, ctx, draw(sub()), entity)
        slot = draw(st.integers(0, 2))
        return dataclasses.replace(
            x,
            text=f"({WEIGHTS}[C2EDim({slot})] * {x.text})",
            names=x.names | {WEIGHTS},
            tables=x.tables | {"C2E"},
        )
    # the neighbour constructs: read an expression over the source through a table
    conn = draw(st.sampled_from(conns))
    source, _, local, width = CONNECTIVITIES[conn]
    inner_dtype = dtype
    inner = _field(draw, ctx, draw(sub(source, inner_dtype)), source)
    tables = frozenset({conn})
    if op == "neighbour":
        slot = draw(st.integers(0, width - 1))
        text = f"({inner.text})({conn}[{slot}])"
        return dataclasses.replace(inner, text=text, entity=entity, tables=inner.tables | tables)
    if op == "slot":
        slot = draw(st.integers(0, width - 1))
        text = f"({inner.text})({conn})[{local}({slot})]"
        if entity == "Cell" and conn == "C2E" and draw(st.booleans()) and dtype == "float64":
            text = f"({WEIGHTS}[C2EDim({slot})] * {text})"
            inner = dataclasses.replace(inner, names=inner.names | {WEIGHTS})
        return dataclasses.replace(inner, text=text, entity=entity, tables=inner.tables | tables)
    reduction = draw(st.sampled_from(["sc.neighbor_sum", "sc.max_over", "sc.min_over"]))
    if op == "chain":  # entity <- source <- source of source, reduced twice
        inner_conns = [c for c, (_, t, _, _) in CONNECTIVITIES.items() if t == source]
        conn2 = draw(st.sampled_from(inner_conns))
        source2, _, local2, _ = CONNECTIVITIES[conn2]
        deep = _field(draw, ctx, draw(mexpr(ctx, source2, dtype, depth - 2)), source2)
        r2 = draw(st.sampled_from(["sc.neighbor_sum", "sc.max_over", "sc.min_over"]))
        text = f"{reduction}({r2}(({deep.text})({conn2})({conn}), axis={local2}), axis={local})"
        return dataclasses.replace(
            deep, text=text, entity=entity, tables=deep.tables | tables | {conn2}
        )
    local_text = f"({inner.text})({conn})"
    if op == "weighted" and conn == "C2E":
        local_text = f"{WEIGHTS} * {local_text}"
        inner = dataclasses.replace(inner, names=inner.names | {WEIGHTS})
        reduction = "sc.neighbor_sum"
    text = f"{reduction}({local_text}, axis={local})"
    return dataclasses.replace(inner, text=text, entity=entity, tables=inner.tables | tables)


@st.composite
def mscan_definition(
    draw: st.DrawFn, name: str, entity: str, dtypes: list[str]
) -> tuple[str, bool]:
    forward = draw(st.booleans())
    args = [f"x{i}" for i in range(len(dtypes))]
    params = ", ".join(f"{a}: {annotation(d, entity)}" for a, d in zip(args, dtypes))
    floats = [a for a, d in zip(args, dtypes) if d == "float64"]
    term = draw(st.sampled_from(floats or ["s"]))
    inexact = draw(st.integers(0, 3)) == 0
    update = f"sc.math.tanh({term})" if inexact else f"sc.math.maximum({term}, -s)"
    source = (
        f"@sc.scan_operator(axis=K, forward={forward}, init=0.0)\n"
        f"def {name}(s, {params}):\n    return 0.5 * s + {update}\n"
    )
    return source, not inexact


@st.composite
def mscan_in_operator(draw: st.DrawFn, ctx: MContext, entity: str, depth: int) -> MNode:
    name = f"scan{len(ctx.scans)}"
    ctx.scans.append("")
    ctx.allow_scans = False
    source, exact = draw(mscan_definition(name, entity, ["float64"]))
    ctx.scans[int(name[4:])] = source
    x = _field(draw, ctx, draw(mexpr(ctx, entity, "float64", depth - 1)), entity)
    node = dataclasses.replace(
        x,
        text=f"{name}({x.text})",
        exact=x.exact and exact,
        has_scan=True,
        reads=x.reads | {("<scan result>", 0)},
    )
    if draw(st.booleans()):
        node = _shifted(node, draw(st.sampled_from([-1, 1])))
    return node


@dataclasses.dataclass(frozen=True)
class MeshProgram:
    """A generated mesh program: source, sizes, parameters, and what the tables look like."""

    source: str
    sizes: tuple[tuple[str, int], ...]  # (dimension, size), K included
    params: tuple[tuple[str, str, str], ...]  # (name, dtype or "table", entity / conn)
    outputs: tuple[str, ...]
    exact: tuple[bool, ...]
    coarse: tuple[bool, ...]
    layout: str  # C or F
    skip: tuple[tuple[str, bool], ...]
    table_dtype: str
    # connectivities declared with max_neighbors=None: their tables have one slot more
    # than CONNECTIVITIES says in calls with an odd seed (one specialisation per width)
    flexible: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return (
            f"MeshProgram(sizes={self.sizes}, layout={self.layout!r}, outputs={self.outputs}, "
            f"exact={self.exact}, coarse={self.coarse}, skip={self.skip}, "
            f"table_dtype={self.table_dtype}, flexible={self.flexible}, source=\n{self.source})"
        )

    def build(self) -> sc.Program:
        namespace: dict[str, Any] = {}
        exec(compile(self.source, "<fuzz mesh program>", "exec"), namespace)
        return namespace["fuzz_program"]  # type: ignore[no-any-return]

    def arguments(self, seed: int) -> list[Any]:
        """Random fields and random valid tables: every entry in [0, n_source), or -1 in about
        one slot in four (and the whole first row) of a connectivity with skip values."""
        rng = np.random.default_rng(seed)
        sizes = dict(self.sizes)
        skip = dict(self.skip)
        n_k = sizes["K"]
        args: list[Any] = []
        for name, dtype, what in self.params:
            if dtype == "table":
                source, target, _, width = CONNECTIVITIES[what]
                width += int(what in self.flexible) * (seed % 2)
                table = rng.integers(0, sizes[source], (sizes[target], width))
                if skip[what]:
                    table[rng.random(table.shape) < 0.25] = -1
                    table[0, :] = -1
                args.append(self._laid_out(table.astype(self.table_dtype)))
                continue
            if name == WEIGHTS:
                args.append(self._laid_out(rng.uniform(-1.0, 1.0, (sizes["Cell"], 3))))
                continue
            shape = (sizes[what], n_k)
            if name == "ko":
                k = np.arange(n_k)
                value = rng.integers(-k, n_k - k, shape).astype(np.int32)
            elif dtype == "int32":
                value = rng.integers(-20, 21, shape).astype(np.int32)
            else:
                value = rng.uniform(-2.0, 2.0, shape).astype(dtype)
            args.append(self._laid_out(value))
        return args

    def _laid_out(self, value: np.ndarray) -> np.ndarray:
        return np.asfortranarray(value) if self.layout == "F" else value

    def constructs(self) -> list[str]:
        body = self.source.split(PRELUDE_END, 1)[1]
        found = [what for what, pattern in CONSTRUCTS.items() if re.search(pattern, body, re.M)]
        tables = [what for _, d, what in self.params if d == "table"]
        skip = dict(self.skip)
        if any(skip[t] for t in tables):
            found.append("tables with skip values")
        if any(not skip[t] for t in tables):
            found.append("tables without skip values")
        if tables and self.table_dtype == "int64":
            found.append("int64 tables")
        if any(t in self.flexible for t in tables):
            found.append("tables of any width")
        return found


CONSTRUCTS = {
    "mesh programs": r"fuzz_program",
    "neighbor_sum": r"sc\.neighbor_sum\(",
    "max_over": r"sc\.max_over\(",
    "min_over": r"sc\.min_over\(",
    "weighted reductions": r"neighbor_sum\(wc \*",
    "one neighbour": r"\((C2E|E2C|E2V|V2E)\[\d\]\)",
    "local slots of neighbour reads": r"\((C2E|E2C|E2V|V2E)\)\[\w+Dim\(\d\)\]",
    "slots of local field parameters": r"wc\[C2EDim\(\d\)\]",
    "chains of neighbour reads": r"\((C2E|E2C|E2V|V2E)\)\((C2E|E2C|E2V|V2E)\)",
    "mesh K shifts": r"\(K [+-] \d\)",
    "mesh concat_where": r"sc\.concat_where\(",
    "mesh dynamic offsets": r"sc\.as_offset\(K, ko\)",
    "mesh scans in field operators": r"return .*scan\d+\(",
    "mesh scans read through tables": r"scan\d+\(.*\)\)?\((C2E|E2C|E2V|V2E)",
    "mesh scans called from programs": r"^    (\w+ = )?scan\d+\(",
    "mesh float32 fields": r"K32\b",
    "mesh int32 fields": r"KI\b",
    "mesh tuple outputs": r"out=\(",
    "mesh temporaries": r"^    x\w+(, x\w+)? = ",
}


@st.composite
def mesh_programs(draw: st.DrawFn, max_calls: int = 3, depth: int = 3) -> MeshProgram:
    skip = {name: draw(st.booleans()) for name in CONNECTIVITIES}
    # now and then connectivities of any width (not C2E: the weights have its 3 slots)
    flexible = frozenset(c for c in ("E2C", "E2V", "V2E") if draw(st.integers(0, 2)) == 0)
    fields: dict[str, tuple[str, str, bool, bool]] = {
        name: (dtype, entity, True, False) for name, (dtype, entity) in INPUTS.items()
    }
    written: dict[str, tuple[int, int]] = {name: (0, 0) for name in fields}
    scans: list[str] = []
    fops: list[str] = []
    calls: list[dict[str, Any]] = []
    temporary_candidates: set[str] = set()
    for index in range(draw(st.integers(1, max_calls))):
        ctx = MContext(dict(fields), scans)
        entity = draw(st.sampled_from(ENTITIES))
        explicit_needed = False
        if draw(st.integers(0, 5)) == 0:  # a scan called from the program
            candidates = sorted(
                n for n, (d, e, _, _) in fields.items() if e == entity and n != "ko"
            )
            args = draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=2))
            name = f"scan{len(scans)}"
            source, exact = draw(mscan_definition(name, entity, [fields[a][0] for a in args]))
            scans.append(source)
            results = [
                (
                    "float64",
                    exact and all(fields[a][2] for a in args),
                    any(fields[a][3] for a in args),
                )
            ]
            reads = frozenset((a, 0) for a in args)
            callee, names, tables = name, args, frozenset[str]()
        else:
            n_results = draw(st.sampled_from([1, 1, 2]))
            dtypes = [
                draw(st.sampled_from(["float64", "float64", "float32", "int32"]))
                for _ in range(n_results)
            ]
            nodes = [_field(draw, ctx, draw(mexpr(ctx, entity, d, depth)), entity) for d in dtypes]
            used = frozenset().union(*(n.names for n in nodes))
            tables = frozenset().union(*(n.tables for n in nodes))
            explicit_needed = any(n.explicit for n in nodes)
            names = [n for n in [*INPUTS, WEIGHTS, *fields] if n in used]
            names = list(dict.fromkeys(names))
            params = ", ".join(
                f"{n}: {'WC' if n == WEIGHTS else annotation(fields[n][0], fields[n][1])}"
                for n in names
            )
            returns = [annotation(d, entity) for d in dtypes]
            ann = returns[0] if n_results == 1 else f"tuple[{', '.join(returns)}]"
            fops.append(
                f"@sc.field_operator\ndef op{index}({params}) -> {ann}:\n"
                f"    return {', '.join(n.text for n in nodes)}\n"
            )
            results = [(n.dtype, n.exact, n.coarse) for n in nodes]
            reads = frozenset().union(*(n.reads for n in nodes))
            callee = f"op{index}"
        lo = hi = 0
        readable_lo = readable_hi = 0
        for name, offset in reads:
            w = (0, 0) if name == "<scan result>" else written[name]
            lo, hi = max(lo, w[0] - offset), max(hi, w[1] + offset)
            r = w if name in temporary_candidates else (0, 0)
            readable_lo = max(readable_lo, r[0] - offset)
            readable_hi = max(readable_hi, r[1] + offset)
        domain = None
        if explicit_needed or draw(st.integers(0, 2)) == 0:
            lo = readable_lo + draw(st.integers(0, 1))
            hi = readable_hi + draw(st.integers(0, 1))
            domain = f"{{K: ({lo}, {-hi if hi else None})}}"
        temporary = draw(st.booleans())
        out_names: list[str] = []
        for dtype, exact, coarse in results:
            out = f"x{index}_{len(out_names)}"
            out_names.append(out)
            fields[out] = (dtype, entity, exact, coarse)
            written[out] = (lo, hi)
            if temporary:
                temporary_candidates.add(out)
        calls.append(
            {
                "callee": callee,
                "args": names,
                "results": out_names,
                "domain": domain,
                "temporary": temporary,
                "tables": tables,
                "entity": entity,
            }
        )
    read_later = {a for c in calls for a in c["args"]}
    used_tables = sorted(frozenset().union(*(c["tables"] for c in calls)))
    used_inputs = {a for c in calls for a in c["args"] if a in INPUTS or a == WEIGHTS}
    # each table's source and target dimension needs a field parameter over it
    have = {INPUTS[a][1] for a in used_inputs if a in INPUTS}
    if WEIGHTS in used_inputs:
        have.add("Cell")
    for c in calls:
        if not (c["temporary"] and c["args"] and all(r in read_later for r in c["results"])):
            have.add(c["entity"])
    for conn in used_tables:
        for entity in CONNECTIVITIES[conn][:2]:
            if entity not in have:
                used_inputs.add({"Cell": "ce", "Edge": "ee", "Vertex": "ve"}[entity])
                have.add(entity)
    program_params: list[tuple[str, str, str]] = [
        (n, INPUTS[n][0], INPUTS[n][1]) for n in INPUTS if n in used_inputs
    ]
    if WEIGHTS in used_inputs:
        program_params.append((WEIGHTS, "float64", "Cell"))
    table_dtype = draw(st.sampled_from(["int32", "int32", "int64"]))
    program_params += [(c.lower(), "table", c) for c in used_tables]
    lines, outputs, exacts, coarses = [], [], [], []
    for c in calls:
        extra = [f"domain={c['domain']}"] if c["domain"] else []
        temporary = c["temporary"] and c["args"] and all(r in read_later for r in c["results"])
        if temporary:
            lines.append(
                f"    {', '.join(c['results'])} = {c['callee']}({', '.join([*c['args'], *extra])})"
            )
            continue
        res = c["results"]
        out = res[0] if len(res) == 1 else f"({', '.join(res)})"
        lines.append(f"    {c['callee']}({', '.join([*c['args'], f'out={out}', *extra])})")
        for r in res:
            dtype, entity, exact, coarse = fields[r]
            program_params.append((r, dtype, entity))
            outputs.append(r)
            exacts.append(exact)
            coarses.append(coarse)
    table_ann = (
        (lambda c: f"sc.Table[{c}]")
        if table_dtype == "int32"
        else (lambda c: f"sc.Table[{c}, sc.int64]")
    )
    signature = ", ".join(
        f"{n}: {table_ann(w) if d == 'table' else 'WC' if n == WEIGHTS else annotation(d, w)}"
        for n, d, w in program_params
    )
    program = f"@sc.program\ndef fuzz_program({signature}):\n" + "\n".join(lines) + "\n"
    source = "\n\n".join([prelude(skip, flexible), *[s for s in scans if s], *fops, program])
    need = max([lo + hi for lo, hi in written.values()])
    n_k = need + draw(st.integers(1, 3))
    large = draw(st.integers(0, 4)) == 0
    sizes = {e: draw(st.integers(3, 12)) + (1500 if large else 0) for e in ENTITIES}
    sizes["K"] = n_k
    return MeshProgram(
        source=source,
        sizes=tuple(sizes.items()),
        params=tuple(program_params),
        outputs=tuple(outputs),
        exact=tuple(exacts),
        coarse=tuple(coarses),
        layout=draw(st.sampled_from(["C", "F"])),
        skip=tuple(skip.items()),
        table_dtype=table_dtype,
        flexible=tuple(sorted(flexible & set(used_tables))),
    )
