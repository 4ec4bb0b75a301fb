"""The bundled examples in gt4py.next's spelling (`import stencilchain.compat.gt4py as
gtx`): the Laplacian, hdiff, the tridiagonal solve and the nabla on a mesh, each written as
gt4py code is, and checked against the NumPy reference of its stencilchain twin.

Each module has the interface of stencilchain/examples (PROGRAM, DEFAULT_SHAPE,
make_inputs, reference), PROGRAM being stencilchain's program that its gt4py program is
traced into (its tables, where it reads any, are its last parameters), and also:

- `GT_PROGRAM`: the gt4py program,
- `OWN_PARAMS`: the gt4py program's parameters (the first ones of PROGRAM),
- `offset_provider(inputs)`: the `offset_provider=` of a call with `make_inputs`' values,

so that `GT_PROGRAM(*(inputs[p] for p in OWN_PARAMS), offset_provider=offset_provider(inputs))`
is the call as gt4py code writes it.
"""

from __future__ import annotations

from types import ModuleType

from stencilchain.examples.gt4py import hdiff, laplacian, nabla, tridiagonal

GT4PY_EXAMPLES: list[ModuleType] = [laplacian, hdiff, tridiagonal, nabla]

__all__ = ["GT4PY_EXAMPLES"]
