"""The Python extension module around a program function `sc_run_<program>`: both
families' bindings are this module (GTFN around its program, DaCe around its shim).

Its entry point takes the program's arguments in order and converts nothing (the
`noconvert()` contract): arrays must be NumPy arrays (CPU) or expose
`__cuda_array_interface__` (GPU) with exactly the declared dtype and ndim; scalars must
be of the declared kind. Any mismatch raises the module's `ArgumentMismatch` (a
TypeError) before any work; the runtime then reports it through the shared Python
argument checker, so every backend gives the same messages. The GIL is released
around the program.

The entry point is a METH_FASTCALL function written against the CPython API, so a call
costs well under a microsecond and the module compiles without parsing pybind11's
headers (about 5 s each on a 2-core machine); flavor "pybind11" defines the same
entry point inside a `PYBIND11_MODULE` instead (see docs/adr/0004-bindings-on-the-cpython-api.md). The fixed
parts are the module_*.h/.cpp files beside this module.

The module's `_sc_bind(bind, explain)` makes a BoundEntry: the same checks and run, as a
vectorcall object that a bound program calls directly (runtime.toolchain.BoundProgram),
handing keyword arguments to `bind` and a rejected call to `explain` (module_entry.h).
The checks of one argument are inlined (itemsize a template argument), each array's
address range is computed once, so the overlap test of two arguments is two comparisons.
A check that rejects an argument returns false with the message in the call's `why`
string, and `sc_call` returns at once: a rejection throws no C++ exception (docs/adr/0037).
"""

from __future__ import annotations

import itertools

from stencilchain.program import ir
from stencilchain.program.arguments import overlap_message
from stencilchain.program.device import Device
from stencilchain.program.untabled_slots import untabled_slots
from stencilchain.steps.cpp.package_text import package_text
from stencilchain.steps.cpp.signature import FieldArg, ProgramSignature, ScalarArg, size_var
from stencilchain.steps.settings import DataLayout
from stencilchain.steps.stages import ProgramSource

FLAVORS = ("capi", "pybind11")
# From this many fields on, the CPU checks of each array are a call, not inlined: a
# program of 300 fields otherwise spends most of its build (35 of 58 s, measured on a
# loaded 2-core machine) compiling one function.
OUTLINED_FIELDS = 64
_TYPESTR = {"float32": "f4", "float64": "f8", "int32": "i4", "int64": "i8", "bool": "b1"}
_DTYPE_ID = {
    "float32": "SC_FLOAT32",
    "float64": "SC_FLOAT64",
    "int32": "SC_INT32",
    "int64": "SC_INT64",
    "bool": "SC_BOOL",
}


def extension_module_source(
    source: ProgramSource, *, device: Device, data_layout: DataLayout, flavor: str
) -> str:
    """The C++ (CUDA on the GPU) of the module that checks the arguments of
    `source.program` and calls its `sc_run_<program>`, which `source` defines."""
    if flavor not in FLAVORS:
        raise ValueError(f"extension module flavor must be one of {FLAVORS}, got {flavor!r}")
    return _ModuleWriter(source, device, data_layout).source(flavor)


def is_run_declaration(line: str) -> bool:
    """Whether `line` of a module's source is its declaration of the program's function
    (`int sc_run_<program>(...);`, at file scope: defined by another unit)."""
    return line.startswith("int sc_run_") and line.endswith(");")


def extension_module_deps(flavor: str) -> tuple[str, ...]:
    """The libraries a module of this flavor is built against."""
    return ("pybind11",) if flavor == "pybind11" else ()


def _plus(value: int) -> str:
    return f" + {value}" if value else ""


def _text(name: str) -> str:
    return package_text("stencilchain.steps.cpp", name)


class _ModuleWriter:
    def __init__(self, source: ProgramSource, device: Device, data_layout: DataLayout) -> None:
        self.entry_point = source.entry_point
        self.program = source.program
        self.signature = ProgramSignature.of(source.program, source.workspace)
        self.gpu = device is Device.GPU
        self.unit_stride = data_layout is DataLayout.UNIT_STRIDE

    def _field_check(self, index: int, f: FieldArg) -> str:
        unit = "true" if self.unit_stride else "false"
        written = "true" if f.written else "false"
        itemsize = f.type.dtype.numpy.itemsize
        ndim = len(f.type.dims)
        if self.gpu:
            dtype = f'"{_TYPESTR[f.type.dtype.name]}"'
            check = "sc_cuda_array"
        else:
            dtype, check = _DTYPE_ID[f.type.dtype.name], "sc_numpy_array"
            if len(self.signature.fields) >= OUTLINED_FIELDS:
                check += "_outlined"
        return (
            f"    sc_array a{index};\n"
            f'    if (!{check}<{itemsize}>(args[{index}], "{f.name}", {ndim}, {dtype}, {written}, '
            f"{unit}, a{index}, why)) return nullptr;"
        )

    def entry(self) -> str:
        sig = self.signature
        n = len(sig.params)
        takes = f"{n} arguments" + (
            " and a workspace (or None to ask its size)" if sig.workspace else ""
        )
        lines = [
            "// The checks and the run of one call; a rejected call returns null with the",
            "// message in `why` (see module_entry.h for the callables around it).",
            "PyObject* sc_call(PyObject* const* args, Py_ssize_t nargs, std::string& why) {",
            f"    if (nargs != {n + sig.workspace}) {{",
            f'        why = "{self.program.name}() takes {takes}";',
            "        return nullptr;",
            "    }",
        ]
        lines += [f"    std::int64_t {size_var(d)} = -1;" for d in sig.dims]
        call_args: list[str] = []
        scalar_args: list[str] = []
        ranges = dict(self.program.ranges)  # fields over their own ranges (own_ranges.py)
        for index, p in enumerate(sig.params):
            if isinstance(p, FieldArg):
                lines.append(self._field_check(index, p))
                axes = ranges.get(p.name, ((0, 0),) * len(p.type.dims))
                lines += [
                    f"    if (!sc_set_size({size_var(d)}, a{index}.shape[{axis}]{_plus(sum(axes[axis]))}, "
                    f'"{p.name}", "{d.name}", why)) return nullptr;'
                    for axis, d in enumerate(p.type.dims)
                ]
                const = "" if p.written else "const "
                pointer = f"reinterpret_cast<{const}{p.type.dtype.cpp}*>(a{index}.data)"
                # the data of a field starting at index s along an axis sits s points
                # after the program's index 0 (never dereferenced below s: domain_checks)
                back = [f"{s} * a{index}.strides[{a}]" for a, (s, _) in enumerate(axes) if s]
                if back:
                    pointer = f"({pointer} - ({' + '.join(back)}))"
                call_args.append(pointer)
                call_args += [f"a{index}.strides[{a}]" for a in range(len(p.type.dims))]
            else:
                assert isinstance(p, ScalarArg)
                lines += [
                    f"    {p.dtype.cpp} v{index};",
                    f'    if (!sc_scalar<{p.dtype.cpp}>(args[{index}], "{p.name}", v{index}, why)) '
                    "return nullptr;",
                ]
                scalar_args.append(f"v{index}")
        fields = [(i, p) for i, p in enumerate(sig.params) if isinstance(p, FieldArg)]
        for i, w in fields:
            if not w.written:
                continue
            for j, other in fields:
                if j == i:
                    continue
                lines.append(
                    f'    if (!sc_disjoint(a{i}, a{j}, "{w.name}", "{overlap_message(other.name)}", '
                    "why)) return nullptr;"
                )
        lines += self._table_checks()
        lines += self._slot_checks()
        call_args += [size_var(d) for d in sig.dims] + scalar_args
        if sig.workspace:
            lines += [
                "    char* workspace = nullptr;",
                "    std::size_t workspace_nbytes = 0, workspace_needed = 0;",
                f"    if (args[{n}] != Py_None && "
                f"!sc_workspace(args[{n}], &workspace, &workspace_nbytes, why)) return nullptr;",
            ]
            call_args += ["workspace", "workspace_nbytes", "&workspace_needed"]
        call_args += ["err", "sizeof(err)"]
        lines += [
            "    char err[512];",
            "    err[0] = '\\0';",
            "    int status;",
            "    Py_BEGIN_ALLOW_THREADS",
            f"    status = {sig.function}({', '.join(call_args)});",
            "    Py_END_ALLOW_THREADS",
            "    if (status != 0) {  // see stencilchain/steps/cpp/signature.py for the codes",
            "        PyObject* kind = status == 1   ? sc_globals.domain_error",
            "                         : status == 4 ? sc_globals.workspace_error",
            "                         : status == 5 ? PyExc_MemoryError",
            "                                       : PyExc_RuntimeError;",
            "        PyErr_SetString(kind, err);",
            "        return nullptr;",
            "    }",
            "    // a message without an error: an EmptyDomainWarning (domain_checks.py)",
            "    if (err[0] != '\\0' && PyErr_WarnEx(sc_globals.empty_domain_warning, err, 1) < 0) return nullptr;",
            *(
                [f"    if (args[{n}] == Py_None) return PyLong_FromSize_t(workspace_needed);"]
                if sig.workspace
                else []
            ),
            "    Py_RETURN_NONE;",
            "}",
        ]
        return "\n".join(lines)

    def _table_checks(self) -> list[str]:
        """The range checks of the neighbour tables' entries (CPU: module_cpu_tables.h; on
        the GPU the runtime checks them), after every size is known: a table whose
        connectivity's source dimension no argument has is read by nothing."""
        if self.gpu:
            return []
        lines: list[str] = []
        for index, p in enumerate(self.signature.params):
            if not isinstance(p, FieldArg) or not isinstance(p.type, ir.TableType):
                continue
            conn = p.type.connectivity
            if conn.source not in self.signature.dims:
                continue
            low = -1 if conn.skip_values else 0
            lines.append(
                f"    if (!sc_check_table<{p.type.dtype.cpp}>(args[{index}], a{index}, "
                f'"{p.name}", {low}, {size_var(conn.source)}, why)) return nullptr;'
            )
        return lines

    def _slot_checks(self) -> list[str]:
        """The check that the arguments hold every slot read of a local dimension that no
        table numbers (program/untabled_slots.py), after every size is known; the shared
        checker's message, which explains the rejection first."""
        lines: list[str] = []
        for need in untabled_slots(self.program):
            n = size_var(need.dim)
            before, after = need.message(self.program.name, "\x00").split("\x00")
            lines += [
                f"    if ({n} <= {need.slot}) {{",
                f'        why = std::string("{before}") + std::to_string({n}) + "{after}";',
                "        return nullptr;",
                "    }",
            ]
        return lines

    def parameter_names(self) -> str:
        """The parameters' names, in order, for keyword arguments, and the shapes of the
        fields' arrays of a call, for the calls it remembers (module_entry.h)."""
        names = [f'"{p.name}"' for p in self.signature.params]
        fields = [
            (index, len(p.type.dims))
            for index, p in enumerate(self.signature.params)
            if isinstance(p, FieldArg)
        ]
        return "\n".join(
            [
                f"constexpr Py_ssize_t sc_param_count = {len(names)};",
                "const char* const sc_param_names[sc_param_count + 1] = {"
                + "".join(f"{n}, " for n in names)
                + "nullptr};",
                f"constexpr Py_ssize_t sc_shape_count = {sum(n for _, n in fields)};",
                "// the shapes of the fields' arrays, in parameter order (false: an argument",
                "// for a field is not an array of its dimensions whose shape is at hand)",
                "bool sc_field_shapes(PyObject* const* args, Py_ssize_t* shapes) {",
                *(
                    f"    if (!sc_shape_of(args[{index}], {ndim}, shapes + {at})) return false;"
                    for (index, ndim), at in zip(
                        fields, itertools.accumulate((n for _, n in fields), initial=0)
                    )
                ),
                *(["    (void)args;", "    (void)shapes;"] if not fields else []),
                "    return true;",
                "}",
            ]
        )

    def source(self, flavor: str) -> str:
        return "\n".join(
            [
                f"// generated by stencilchain: bindings of program {self.program.name}",
                f'#define SC_PROGRAM "{self.program.name}"',
                f'#define SC_ENTRY_NAME "{self.entry_point}"',
                _text("module_helpers.h"),
                _text("module_gpu_arrays.h" if self.gpu else "module_cpu_arrays.h"),
                *([] if self.gpu else [_text("module_cpu_tables.h")]),
                f"{self.signature.declaration()};",
                "namespace {",
                self.parameter_names(),
                self.entry(),
                "}  // namespace",
                _text("module_entry.h"),
                _text("module_pybind11.cpp" if flavor == "pybind11" else "module_capi.cpp"),
            ]
        )
