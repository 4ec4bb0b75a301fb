"""Which names a program and its parameters may have: those that every toolchain can use.

A program is checked once, at definition, so that a name is refused the same way on every
backend (a `DefinitionError`) instead of compiling on one and failing on another (ADR
0016). GTFN prefixes every parameter in its C++ (`p_<name>`, `s_<name>`), but DaCe uses
parameter names as they are, for the arrays and scalars of its SDFG and in the C++ that it
generates; and both families name a module and a C++ function after the program.

Refused:
- a program name that is not ASCII, or longer than 100 characters (it names a module);
- a parameter name that is not ASCII (the names of an SDFG are ASCII identifiers);
- a C++ or CUDA keyword, a name that the generated C++ takes (`std`, `dace`, `main`,
  fixed-width integer types), or a macro of the C library headers it includes (`NULL`,
  `errno`, `EOF`, `M_PI`, ...);
- a reserved identifier of C++: starting with `__`, or with `_` and an upper-case letter;
- a name of the generated symbols of the program: `n_<D>` (a size) or `i_<D>` (an index)
  for a dimension D of its fields, `<f>_s<k>` (a stride) for a field parameter or temporary f, and
  `<p>_bound_<D>` for an integer scalar parameter p.

Field-operator parameters and temporaries are never names in the generated code. The
reserved names are one list, `RESERVED`; a family whose generated code keeps more reads
its `ReservedNames` from here (DaCe's SDFG also refuses Python's keywords).
"""

from __future__ import annotations

import keyword
import re

from stencilchain.errors import DefinitionError
from stencilchain.program import ir
from stencilchain.program.records import frozen

# C++20 keywords and alternative tokens, CUDA's qualifiers and built-in variables, names the
# generated code uses unqualified or declares, and the macros of the C headers it includes.
_RESERVED_WORDS = """
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t
    char16_t char32_t class compl concept const consteval constexpr constinit const_cast
    continue co_await co_return co_yield decltype default delete do double dynamic_cast else
    enum explicit export extern false final float for friend goto if import inline int long
    module mutable namespace new noexcept not not_eq nullptr operator or or_eq override
    private protected public register reinterpret_cast requires return short signed sizeof
    static static_assert static_cast struct switch template this thread_local throw true try
    typedef typeid typename union unsigned using virtual void volatile wchar_t while xor
    xor_eq
    threadIdx blockIdx blockDim gridDim warpSize
    int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t size_t ptrdiff_t
    std dace main
    NULL EOF errno stdin stdout stderr offsetof
    INFINITY NAN HUGE_VAL HUGE_VALF M_E M_PI M_PI_2 M_PI_4 M_1_PI M_2_PI M_SQRT2 M_LN2
    M_LN10 M_LOG2E M_LOG10E FLT_MAX FLT_MIN FLT_EPSILON DBL_MAX DBL_MIN DBL_EPSILON
    CHAR_BIT INT_MAX INT_MIN LONG_MAX LLONG_MAX SIZE_MAX PATH_MAX RAND_MAX
    EXIT_SUCCESS EXIT_FAILURE
"""
RESERVED = frozenset(_RESERVED_WORDS.split())
# Python's keywords: DaCe parses the memlets, map ranges and interstate conditions of an
# SDFG, which name the parameters, as Python expressions.
PYTHON_KEYWORDS = frozenset(keyword.kwlist)
_RESERVED_IDENTIFIER = re.compile(r"__|_[A-Z]")


@frozen
class ReservedNames:
    """The names that a family's generated code keeps for itself: the whole `words`, and
    C++'s reserved identifiers (starting with `__`, or with `_` and an upper-case letter)."""

    words: frozenset[str]
    what: str  # what the words are, as the message says it

    def problem(self, name: str) -> str | None:
        """Why `name` cannot name a parameter in the generated code, or None."""
        if name in self.words:
            return f"is {self.what}"
        if _RESERVED_IDENTIFIER.match(name):
            return "starts with '__' or with '_' and an upper-case letter (reserved in C++)"
        return None


# What the C++ of every family keeps (checked at definition, `check_program_names`).
CPP_RESERVED = ReservedNames(
    RESERVED, "a C++ or CUDA keyword or a name that the generated C++ uses"
)
# What DaCe's SDFGs keep besides (checked again by the DaCe translator, on any IR).
SDFG_RESERVED = ReservedNames(
    RESERVED | PYTHON_KEYWORDS,
    "a C++ or CUDA keyword, a Python keyword or a name that the generated C++ uses",
)
_STRIDE = re.compile(r"(.+)_s[0-9]+")
_BOUND = re.compile(r"(.+)_bound_(.+)")
MAX_PROGRAM_NAME = 100


def check_program_names(program: ir.Program, location: tuple[str, int] | None = None) -> None:
    """A DefinitionError for the first name of `program` (its own or a parameter's) that
    some toolchain cannot use; see the module's docstring for the rules."""
    if not program.name.isascii() or len(program.name) > MAX_PROGRAM_NAME:
        raise DefinitionError(
            f"program {program.name}: a program's name names its compiled module and C++ "
            f"function, so it must be an ASCII identifier of at most {MAX_PROGRAM_NAME} "
            "characters; rename the function",
            location,
        )
    fields = {
        *(p.name for p in program.params if isinstance(p.type, ir.FieldType)),
        *(t.name for t in program.temporaries),
    }
    dims = {d.name for p in program.params if isinstance(p.type, ir.FieldType) for d in p.type.dims}
    integers = {
        p.name for p in program.params if not isinstance(p.type, ir.FieldType) and p.type.is_integer
    }
    for param in program.params:
        problem = _problem(param.name, fields, dims, integers)
        if problem is not None:
            raise DefinitionError(
                f"program {program.name}: parameter '{param.name}' {problem}; parameter "
                "names are names in the generated code of every toolchain, so rename it",
                location,
            )


def _problem(name: str, fields: set[str], dims: set[str], integers: set[str]) -> str | None:
    if not name.isascii():
        return "is not ASCII (the compiled toolchains take ASCII identifiers)"
    reserved = CPP_RESERVED.problem(name)
    if reserved is not None:
        return reserved
    for prefix, what in (("n_", "size"), ("i_", "index")):
        if name.startswith(prefix) and name[len(prefix) :] in dims:
            return f"is the name of the generated {what} of dimension {name[len(prefix) :]}"
    stride = _STRIDE.fullmatch(name)
    if stride is not None and stride.group(1) in fields:
        return f"is the name of a generated stride of field '{stride.group(1)}'"
    bound = _BOUND.fullmatch(name)
    if bound is not None and bound.group(1) in integers and bound.group(2) in dims:
        return f"is the name of a generated bound of parameter '{bound.group(1)}'"
    return None
