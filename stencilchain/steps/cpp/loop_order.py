"""Loop order by strides: the C++ that picks, at run time, the loop nest whose innermost
loop runs along the dimension of smallest stride, so that C-order and Fortran-order arrays
both stream through memory. Only the loop order depends on it, never the result.
"""

from __future__ import annotations

from collections.abc import Sequence

from stencilchain.program.dimensions import Dimension


def loop_order(dims: Sequence[Dimension], inner: int) -> list[Dimension]:
    """The loops over `dims`, outermost first, `dims[inner]` innermost: with the first
    dimension innermost (Fortran order) the others run from the last, else in their order
    (C order)."""
    rest = [d for k, d in enumerate(dims) if k != inner]
    return [*(reversed(rest) if inner == 0 else rest), dims[inner]]


def stride_dispatch(
    strides: Sequence[str],
    branches: Sequence[Sequence[str]],
    *,
    fallback: tuple[str, Sequence[str]] | None = None,
    comment: str = "",
    setup: Sequence[str] = (),
) -> list[str]:
    """C++ that runs `branches[k]` (statements) where `strides[k]` (C++ of a stride) is the
    first of smallest magnitude: `sc_inner` holds its position and `sc_best` its magnitude.
    With `fallback` (a stride and statements), those statements run instead where that
    stride's magnitude is smaller than all of `strides` (`sc_inner` is then -1). `comment`
    ends the declaration of `sc_inner`; `setup` comes between the choice and the branches."""
    if len(strides) != len(branches) or not strides:
        raise ValueError("stride_dispatch needs one branch per stride, and at least one")
    magnitudes = [f"std::abs({s})" for s in strides]
    note = f"  // {comment}" if comment else ""
    if fallback is None:
        first, candidates = magnitudes[0], list(enumerate(magnitudes))[1:]
        lines = [f"int sc_inner = 0;{note}"]
    else:
        first, candidates = f"std::abs({fallback[0]})", list(enumerate(magnitudes))
        lines = [f"int sc_inner = -1;{note}"]
    lines.append(f"std::int64_t sc_best = {first};")
    for k, magnitude in candidates:
        lines.append(f"if ({magnitude} < sc_best) {{ sc_inner = {k}; sc_best = {magnitude}; }}")
    lines += setup
    opened = False
    if fallback is not None:
        lines.append("if (sc_inner < 0) {")
        lines += ["    " + s for s in fallback[1]]
        opened = True
    for k, branch in enumerate(branches):
        lines.append(f"{'} else if' if opened else 'if'} (sc_inner == {k}) {{")
        lines += ["    " + s for s in branch]
        opened = True
    lines.append("}")
    return lines


def innermost_conditions(magnitudes: Sequence[str], *, conjunction: str = " && ") -> list[str]:
    """Per position k, the condition that `magnitudes[k]` is the first smallest: smaller
    than each before it and no larger than each after it (exactly one holds), its tests
    joined by `conjunction` (`" and "` for a condition in Python syntax)."""
    return [
        conjunction.join(
            f"{magnitude} {'<' if j < k else '<='} {other}"
            for j, other in enumerate(magnitudes)
            if j != k
        )
        for k, magnitude in enumerate(magnitudes)
    ]
