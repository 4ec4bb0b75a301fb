"""The generated code of a program, for `compile --show-source`: C++/CUDA as it is,
an SDFG (DaCe) as a summary of its data, states and nodes."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from stencilchain.steps.stages import ProgramSource


def describe_source(source: ProgramSource) -> str:
    """The code of `source` (a summary for an SDFG, whose text is a large JSON)."""
    if source.language == "sdfg":
        try:
            return summarize_sdfg(json.loads(source.source_code))
        except (ValueError, TypeError, AttributeError, KeyError):
            pass  # not the JSON we know: show it as it is
    return source.source_code


def summarize_sdfg(sdfg: dict[str, Any]) -> str:
    """Name, arrays (dtype, shape, transient), symbols, and per state its node kinds."""
    attributes = sdfg.get("attributes", {})
    lines = [f"SDFG {attributes.get('name', '?')}"]
    arrays = attributes.get("_arrays", {})
    if arrays:
        lines.append("arrays:")
        for name, desc in arrays.items():
            a = desc.get("attributes", {})
            dtype = a.get("dtype", "int32")  # DaCe leaves out defaults, and int32 is its default
            transient = " (transient)" if a.get("transient") else ""
            if desc.get("type") == "Scalar":
                lines.append(f"  {name}: {dtype} scalar{transient}")
            else:
                shape = ", ".join(_symbolic(s) for s in a.get("shape", []))
                lines.append(f"  {name}: {dtype}[{shape}]{transient}")
    symbols = attributes.get("symbols", {})
    if symbols:
        lines.append(f"symbols: {', '.join(symbols)}")
    states = _states(sdfg)
    lines.append(f"states: {len(states)}")
    for state in states:
        kinds = Counter(str(n.get("type", "?")) for n in state.get("nodes", []))
        label = state.get("label", state.get("attributes", {}).get("label", "?"))
        summary = ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))
        lines.append(f"  {label}: {summary or 'empty'}")
    return "\n".join(lines) + "\n"


def _states(node: Any) -> list[dict[str, Any]]:
    """The SDFG states anywhere under `node`: DaCe nests them in control-flow regions
    (loops, conditional blocks and their branches)."""
    if isinstance(node, list):
        return [state for child in node for state in _states(child)]
    if not isinstance(node, dict):
        return []
    if node.get("type") == "SDFGState":
        return [node]
    return [state for key, child in node.items() if key != "attributes" for state in _states(child)]


def _symbolic(text: object) -> str:
    """`symbol($n_I, dtype=dace.int64)` as `n_I`."""
    return re.sub(r"symbol\(\$?(\w+)[^)]*\)", r"\1", str(text))
