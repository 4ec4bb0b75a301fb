"""The DaCe family: SDFG sources, built by DaCe with the argument-checking module around them."""

from __future__ import annotations

from stencilchain.program.names import SDFG_RESERVED
from stencilchain.steps.family import Family

DACE = Family(
    name="dace",
    languages=frozenset({"sdfg"}),
    marker_fields=frozenset({"sdfg_name", "dace_library"}),  # what a DaCe build's marker records
    reserved_names=SDFG_RESERVED,
)
