"""The GTFN family: C++ (CPU) and CUDA (GPU) sources, built with CMake and Ninja."""

from __future__ import annotations

from stencilchain.program.names import CPP_RESERVED
from stencilchain.steps.family import Family

GTFN = Family(
    name="gtfn",
    languages=frozenset({"cpp", "cuda"}),
    marker_fields=frozenset({"precompiled_header"}),  # a precompiled prelude's folder
    support_prefixes=("toolchain-", "pch-"),  # CMake's tool-set folder, the precompiled headers
    reserved_names=CPP_RESERVED,
)
