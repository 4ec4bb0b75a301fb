"""The C++ signature of a generated program function, shared by translations and bindings.

Its C++ names are injective in the program's names: a field's pointer is `p_<name>`, its
strides `s<axis>_<name>`, a scalar `s_<name>`, a size `n_<dim>`, an index `i_<dim>`, and
every other generated variable starts with `sc_` (a name cannot start with a digit, so
no two of these patterns meet).

    int sc_run_<program>(<field pointers and element strides, in parameter order>,
                         <dimension sizes>, <scalars>, [workspace,] char* err, std::size_t err_len)

With a workspace (DaCe's external transients) the three parameters `char* sc_workspace,
std::size_t sc_workspace_nbytes, std::size_t* sc_workspace_needed` come before `err`: a
null `sc_workspace` asks for the size the call needs (written to `sc_workspace_needed`)
and runs nothing.

It returns 0, or non-zero after writing a message to `err`: 1 a domain outside the arrays
(DomainError), 4 a workspace too small for the call (WorkspaceError), 5 a temporary that could not be allocated (MemoryError), anything else a
failure of the device or runtime (a kernel launch, DaCe's initialization; RuntimeError).
"""

from __future__ import annotations

import dataclasses

from stencilchain.program import ir
from stencilchain.program.dimensions import Dimension
from stencilchain.program.dtypes import ScalarType
from stencilchain.program.ir_walk import written_fields


@dataclasses.dataclass(frozen=True)
class FieldArg:
    name: str
    type: ir.FieldType
    written: bool

    @property
    def pointer(self) -> str:
        return f"p_{self.name}"

    def stride(self, axis: int) -> str:
        # not p_<name>_s<axis>: parameters `a` and `a_s0` would both have a `p_a_s0`
        return f"s{axis}_{self.name}"


@dataclasses.dataclass(frozen=True)
class ScalarArg:
    name: str
    dtype: ScalarType

    @property
    def variable(self) -> str:
        return scalar_var(self.name)


def scalar_var(name: str) -> str:
    """The C++ parameter holding scalar parameter `name` of the program."""
    return f"s_{name}"


def size_var(dim: Dimension) -> str:
    return f"n_{dim.name}"


def index_var(dim: Dimension) -> str:
    return f"i_{dim.name}"


def bound_var(dim: Dimension, side: str) -> str:
    """The local variable holding a call's `side` ("start" or "stop") along `dim`."""
    return f"sc_{side}_{dim.name}"


def domain_loop(dim: Dimension) -> str:
    """The head of the loop over a call's domain along `dim` (its body and `}` follow)."""
    v, start, stop = index_var(dim), bound_var(dim, "start"), bound_var(dim, "stop")
    return f"for (std::int64_t {v} = {start}; {v} < {stop}; ++{v}) {{"


@dataclasses.dataclass(frozen=True)
class ProgramSignature:
    function: str
    params: tuple[FieldArg | ScalarArg, ...]
    dims: tuple[Dimension, ...]
    workspace: bool = False

    @staticmethod
    def of(program: ir.Program, workspace: bool = False) -> ProgramSignature:
        written = written_fields(program)
        params: list[FieldArg | ScalarArg] = []
        dims: list[Dimension] = []
        for p in program.params:
            if isinstance(p.type, ir.FieldType):
                params.append(FieldArg(p.name, p.type, p.name in written))
                dims += [d for d in p.type.dims if d not in dims]
            else:
                params.append(ScalarArg(p.name, p.type))
        return ProgramSignature(f"sc_run_{program.name}", tuple(params), tuple(dims), workspace)

    @property
    def fields(self) -> tuple[FieldArg, ...]:
        return tuple(p for p in self.params if isinstance(p, FieldArg))

    @property
    def scalars(self) -> tuple[ScalarArg, ...]:
        return tuple(p for p in self.params if isinstance(p, ScalarArg))

    def declaration(self) -> str:
        parts: list[str] = []
        for f in self.fields:
            const = "" if f.written else "const "
            parts.append(f"{const}{f.type.dtype.cpp}* {f.pointer}")
            parts += [f"std::int64_t {f.stride(a)}" for a in range(len(f.type.dims))]
        parts += [f"std::int64_t {size_var(d)}" for d in self.dims]
        parts += [f"{s.dtype.cpp} {s.variable}" for s in self.scalars]
        if self.workspace:
            parts += [
                "char* sc_workspace",
                "std::size_t sc_workspace_nbytes",
                "std::size_t* sc_workspace_needed",
            ]
        parts += ["char* err", "std::size_t err_len"]
        return f"int {self.function}(" + ", ".join(parts) + ")"

    def argument_names(self) -> list[str]:
        """The C++ names, in declaration order, without the workspace and error buffer."""
        names: list[str] = []
        for f in self.fields:
            names.append(f.pointer)
            names += [f.stride(a) for a in range(len(f.type.dims))]
        names += [size_var(d) for d in self.dims]
        names += [s.variable for s in self.scalars]
        return names
