"""A tuple result over different dimensions, or given one domain per field of `out=`, split
into parts: a program's call of a field operator returning `(a_cell_k, b_edge_k)` into
`out=(x, y)` becomes one call per part, each a field operator of one element (the
expressions are pointwise, so computing them apart changes no value), each over its own
domain, given per element or inferred per element."""

from __future__ import annotations

from collections.abc import Mapping

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.records import frozen
from stencilchain.program.tuple_params import Record, leaves


@frozen
class Part:
    """Element `index` of a tuple result, written by a call of its own over one domain
    (`given`: the `domain=` of that element, or None to infer it)."""

    index: int
    given: Mapping[object, object] | None

    def body(self, tuple_body: ir.Expr) -> ir.Expr:
        if isinstance(tuple_body, ir.MakeTuple):
            return tuple_body.elems[self.index]
        assert isinstance(tuple_body.type, ir.TupleType)
        return ir.TupleGet(tuple_body, self.index, tuple_body.type.elems[self.index])


def result_parts(where: str, rtype: ir.TupleType, domain: object) -> list[Part]:
    """The parts of a call writing a tuple result `rtype` whose fields are over different
    dimensions. `domain` is None (inferred per element), one dict (each element takes the
    entries of its dimensions; each entry must be a dimension of some element) or a tuple
    of one dict (or None) per element."""
    n = len(rtype.elems)
    if isinstance(domain, (tuple, list)):
        if len(domain) != n:
            raise DefinitionError(
                f"{where}: domain= is a tuple of {len(domain)} domains, but the call writes "
                f"{n} fields ({rtype!r}); give one dict (or None) per field of out="
            )
        per_element = list(domain)
    else:
        if domain is not None and not isinstance(domain, Mapping):
            raise DefinitionError(
                f"{where}: domain= must be a dict {{Dim: (start, stop)}} or a tuple of one "
                f"per field of out=, got {domain!r}"
            )
        every = {d for e in rtype.elems for d in e.dims}
        for dim in domain or {}:
            if dim not in every:
                raise DefinitionError(
                    f"{where}: domain names {dim!r}, which is not a dimension of any field "
                    f"of the result {rtype!r}"
                )
        per_element = [
            None if domain is None else {d: v for d, v in domain.items() if d in e.dims}
            for e in rtype.elems
        ]
    for given in per_element:
        if given is not None and not isinstance(given, Mapping):
            raise DefinitionError(
                f"{where}: each domain of domain=(...) must be a dict {{Dim: (start, stop)}} "
                f"or None, got {given!r}"
            )
    # each field its own call: each is inferred over the reads of its own expression
    return [Part(index, given) for index, given in enumerate(per_element)]


def flat_domains(
    domain: tuple[object, ...] | list[object], tree: object, where: str
) -> tuple[object, ...]:
    """`domain=` nested as the result is (gt4py's `(({I: ...}, {J: ...}), {K: ...})` for
    `out=((a, b), c)`, `tree` the result's nesting) as one domain per field in the order of
    the fields; a dict (or None) in place of a nested tuple applies to each field under it.
    A tuple of one domain per field is returned as it is."""
    children = _children(tree)
    if children is None or len(domain) != len(children) or len(domain) == len(leaves(tree)):
        return tuple(domain)
    flat: list[object] = []

    def walk(given: object, sub: object) -> None:
        subtrees = _children(sub)
        if subtrees is None:  # one field: its domain as given (checked with the others)
            flat.append(given)
        elif not isinstance(given, tuple):
            flat.extend([given] * len(leaves(sub)))
        elif len(given) != len(subtrees):
            raise DefinitionError(
                f"{where}: domain= nests {len(given)} domains where out= nests "
                f"{len(subtrees)} values; nest domain= as out= is nested, or give one dict "
                "(or None) per field"
            )
        else:
            for g, s in zip(given, subtrees, strict=True):
                walk(g, s)

    walk(tuple(domain), tree)
    return tuple(flat)


def _children(tree: object) -> tuple[object, ...] | None:
    if isinstance(tree, Record):
        return tree.elems
    return tree if isinstance(tree, tuple) else None
