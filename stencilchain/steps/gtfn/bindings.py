"""GTFN bindings: the Python extension module source around a generated program function.

The module's entry point takes the program's arguments in order and converts nothing
(the `noconvert()` contract): arrays must be NumPy arrays (CPU) or expose
`__cuda_array_interface__` (GPU) with exactly the declared dtype and ndim; scalars must
be of the declared kind. Any mismatch raises the module's `ArgumentMismatch` (a
TypeError) before any work; the runtime then reports it through the shared Python
argument checker, so every backend gives the same messages. The GIL is released
around the kernel.

The entry point is a METH_FASTCALL function written against the CPython API, so a call
costs well under a microsecond and the module compiles without parsing pybind11's
headers (about 5 s each on a 2-core machine); `flavor="pybind11"` defines the same
entry point inside a `PYBIND11_MODULE` instead (see docs/adr/0004-bindings.md).
"""

from __future__ import annotations

import dataclasses

from stencilchain.program.arguments import overlap_message
from stencilchain.program.device import Device
from stencilchain.steps.gtfn.signature import FieldArg, ProgramSignature, ScalarArg, size_var
from stencilchain.steps.settings import DataLayout
from stencilchain.steps.stages import BindingSource, ExtensionSource, ProgramSource

_TYPESTR = {"float32": "f4", "float64": "f8", "int32": "i4", "int64": "i8", "bool": "b1"}
FLAVORS = ("capi", "pybind11")


@dataclasses.dataclass(frozen=True)
class GTFNBindingsStep:
    """ProgramSource -> ExtensionSource: the module that checks arguments and calls the program."""

    device: Device
    data_layout: DataLayout = DataLayout.STRIDED
    flavor: str = "capi"

    def __post_init__(self) -> None:
        if not isinstance(self.device, Device):
            raise TypeError(f"GTFNBindingsStep.device must be a Device, got {self.device!r}")
        if self.flavor not in FLAVORS:
            raise ValueError(
                f"GTFNBindingsStep.flavor must be one of {FLAVORS}, got {self.flavor!r}"
            )

    def __call__(self, source: ProgramSource, /) -> ExtensionSource:
        if source.device is not self.device:
            raise ValueError(
                f"bindings for {self.device} cannot wrap code generated for {source.device}"
            )
        code = _BindingWriter(self, source).source()
        language = "cuda" if self.device is Device.GPU else "cpp"
        deps = ("pybind11",) if self.flavor == "pybind11" else ()
        return ExtensionSource(source, BindingSource(code, language, deps))


_HELPERS = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <string>
#include <utility>

#define SC_CAT2(a, b) a##b
#define SC_CAT(a, b) SC_CAT2(a, b)
#define SC_STR2(x) #x
#define SC_STR(x) SC_STR2(x)

namespace {

struct sc_mismatch : std::exception {
    explicit sc_mismatch(std::string m) : message(std::move(m)) {}
    const char* what() const noexcept override { return message.c_str(); }
    std::string message;
};

[[noreturn]] void sc_fail(const char* arg, const std::string& what) {
    throw sc_mismatch{std::string("argument '") + arg + "' of " SC_PROGRAM "(): " + what};
}

enum sc_dtype_id { SC_FLOAT32 = 0, SC_FLOAT64 = 1, SC_INT32 = 2, SC_INT64 = 3, SC_BOOL = 4 };

// Objects looked up once, when the module is imported.
struct sc_globals_t {
    PyObject* mismatch = nullptr;      // this module's ArgumentMismatch(TypeError)
    PyObject* domain_error = nullptr;  // stencilchain.errors.DomainError
    PyObject* workspace_error = nullptr;  // stencilchain.errors.WorkspaceError
    PyObject* uint8 = nullptr;         // numpy.dtype("uint8"), of a CPU workspace
    PyObject* ndarray = nullptr;
    PyObject* float32 = nullptr;
    PyObject* int32 = nullptr;
    PyObject* int64 = nullptr;
    PyObject* bool_ = nullptr;
    PyObject* generic = nullptr;
    PyObject* dtypes[5] = {nullptr, nullptr, nullptr, nullptr, nullptr};
};
sc_globals_t sc_globals;

bool sc_init_globals() {
    PyObject* np = PyImport_ImportModule("numpy");
    PyObject* errors = PyImport_ImportModule("stencilchain.errors");
    if (np == nullptr || errors == nullptr) return false;
    sc_globals.domain_error = PyObject_GetAttrString(errors, "DomainError");
    sc_globals.workspace_error = PyObject_GetAttrString(errors, "WorkspaceError");
    sc_globals.ndarray = PyObject_GetAttrString(np, "ndarray");
    sc_globals.float32 = PyObject_GetAttrString(np, "float32");
    sc_globals.int32 = PyObject_GetAttrString(np, "int32");
    sc_globals.int64 = PyObject_GetAttrString(np, "int64");
    sc_globals.bool_ = PyObject_GetAttrString(np, "bool_");
    sc_globals.generic = PyObject_GetAttrString(np, "generic");
    const char* names[5] = {"float32", "float64", "int32", "int64", "bool"};
    PyObject* dtype = PyObject_GetAttrString(np, "dtype");
    for (int k = 0; k < 5; ++k) {
        sc_globals.dtypes[k] = dtype ? PyObject_CallFunction(dtype, "s", names[k]) : nullptr;
    }
    sc_globals.uint8 = dtype ? PyObject_CallFunction(dtype, "s", "uint8") : nullptr;
    Py_XDECREF(dtype);
    Py_DECREF(np);
    Py_DECREF(errors);
    return !PyErr_Occurred();
}

// A NumPy scalar whose dtype equals the cached dtype `id` (np.longlong for int64, say).
bool sc_is_numpy_scalar(PyObject* o, int id) {
    if (!PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(sc_globals.generic))) return false;
    PyObject* dtype = PyObject_GetAttrString(o, "dtype");
    const int equal = dtype ? PyObject_RichCompareBool(dtype, sc_globals.dtypes[id], Py_EQ) : -1;
    Py_XDECREF(dtype);
    if (equal < 0) PyErr_Clear();
    return equal == 1;
}

float sc_to_float32(double v, const char* name) {
    const float f = static_cast<float>(v);
    if (std::isfinite(v) && !std::isfinite(f)) sc_fail(name, "value out of the range of float32");
    return f;
}

template <class T> T sc_scalar(PyObject* o, const char* name);

template <> double sc_scalar<double>(PyObject* o, const char* name) {
    if (PyFloat_Check(o)) return PyFloat_AS_DOUBLE(o);  // float and numpy.float64
    if (PyLong_CheckExact(o)) {
        const double v = PyLong_AsDouble(o);
        if (v == -1.0 && PyErr_Occurred()) { PyErr_Clear(); sc_fail(name, "int too large for float64"); }
        return v;
    }
    sc_fail(name, "expected a float64 scalar");
}

template <> float sc_scalar<float>(PyObject* o, const char* name) {
    if (PyFloat_CheckExact(o)) return sc_to_float32(PyFloat_AS_DOUBLE(o), name);
    if (Py_TYPE(o) == reinterpret_cast<PyTypeObject*>(sc_globals.float32) || sc_is_numpy_scalar(o, SC_FLOAT32)) {
        return static_cast<float>(PyFloat_AsDouble(o));
    }
    if (PyLong_CheckExact(o)) {
        const double v = PyLong_AsDouble(o);
        if (v == -1.0 && PyErr_Occurred()) { PyErr_Clear(); sc_fail(name, "int too large for float32"); }
        return sc_to_float32(v, name);
    }
    sc_fail(name, "expected a float32 scalar");
}

template <class T> T sc_integer(PyObject* o, const char* name, PyObject* numpy_type, int id) {
    long long v = 0;
    if (PyLong_CheckExact(o)) {
        int overflow = 0;
        v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow) sc_fail(name, "int out of range");
    } else if (Py_TYPE(o) == reinterpret_cast<PyTypeObject*>(numpy_type) || sc_is_numpy_scalar(o, id)) {
        PyObject* index = PyNumber_Index(o);
        if (index == nullptr) { PyErr_Clear(); sc_fail(name, "not an integer"); }
        v = PyLong_AsLongLong(index);
        Py_DECREF(index);
    } else {
        sc_fail(name, "expected an integer scalar");
    }
    if (v < static_cast<long long>(std::numeric_limits<T>::min()) ||
        v > static_cast<long long>(std::numeric_limits<T>::max())) {
        sc_fail(name, "int out of range");
    }
    return static_cast<T>(v);
}

template <> std::int32_t sc_scalar<std::int32_t>(PyObject* o, const char* name) {
    return sc_integer<std::int32_t>(o, name, sc_globals.int32, SC_INT32);
}

template <> std::int64_t sc_scalar<std::int64_t>(PyObject* o, const char* name) {
    return sc_integer<std::int64_t>(o, name, sc_globals.int64, SC_INT64);
}

template <> bool sc_scalar<bool>(PyObject* o, const char* name) {
    if (o == Py_True) return true;
    if (o == Py_False) return false;
    if (Py_TYPE(o) == reinterpret_cast<PyTypeObject*>(sc_globals.bool_) || sc_is_numpy_scalar(o, SC_BOOL)) {
        return PyObject_IsTrue(o) == 1;
    }
    sc_fail(name, "expected a bool scalar");
}

// One array argument after every check: data pointer, shape and element strides.
struct sc_array {
    char* data;
    std::int64_t shape[8];
    std::int64_t strides[8];  // in elements
};

// Whether the bytes two arrays can touch overlap (a bounds test, like np.may_share_memory).
bool sc_overlap(const sc_array& a, int a_ndim, std::int64_t a_item, const sc_array& b, int b_ndim, std::int64_t b_item) {
    auto bounds = [](const sc_array& x, int ndim, std::int64_t item, std::int64_t& lo, std::int64_t& hi) {
        lo = 0;
        hi = item;
        for (int k = 0; k < ndim; ++k) {
            if (x.shape[k] == 0) return false;
            const std::int64_t reach = (x.shape[k] - 1) * x.strides[k] * item;
            (reach < 0 ? lo : hi) += reach;
        }
        return true;
    };
    std::int64_t alo, ahi, blo, bhi;
    if (!bounds(a, a_ndim, a_item, alo, ahi) || !bounds(b, b_ndim, b_item, blo, bhi)) return false;
    const auto pa = reinterpret_cast<std::intptr_t>(a.data), pb = reinterpret_cast<std::intptr_t>(b.data);
    return pa + alo < pb + bhi && pb + blo < pa + ahi;
}

void sc_set_size(std::int64_t& size, std::int64_t value, const char* name, const char* dim) {
    if (size < 0) {
        size = value;
    } else if (size != value) {
        sc_fail(name, std::string("size ") + std::to_string(value) + " along " + dim +
                          " differs from " + std::to_string(size) + " of another argument");
    }
}

void sc_check_layout(const sc_array& a, int ndim, bool unit_stride, const char* name) {
    if (unit_stride && a.shape[ndim - 1] > 1 && a.strides[ndim - 1] != 1) {
        sc_fail(name, "the toolchain is configured for data_layout=unit_stride, but the innermost "
                      "dimension has a stride of " + std::to_string(a.strides[ndim - 1]) +
                      " elements (needs 1)");
    }
}

}  // namespace
"""

_CPU_ARRAY = r"""
namespace {
// The leading fields of NumPy's PyArrayObject (stable ABI since NumPy 1.7).
struct sc_ndarray {
    PyObject_HEAD
    char* data;
    int nd;
    Py_ssize_t* dimensions;
    Py_ssize_t* strides;
    PyObject* base;
    PyObject* descr;
    int flags;
};
constexpr int SC_NPY_WRITEABLE = 0x0400;

sc_array sc_numpy_array(PyObject* o, const char* name, int ndim, int dtype, std::int64_t itemsize,
                        bool written, bool unit_stride) {
    if (!PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(sc_globals.ndarray))) {
        sc_fail(name, "expected a numpy array");
    }
    auto* a = reinterpret_cast<sc_ndarray*>(o);
    if (a->nd != ndim) sc_fail(name, "wrong number of dimensions");
    PyObject* expected = sc_globals.dtypes[dtype];
    if (a->descr != expected && PyObject_RichCompareBool(a->descr, expected, Py_EQ) != 1) {
        PyErr_Clear();
        sc_fail(name, "wrong dtype");
    }
    if (written && !(a->flags & SC_NPY_WRITEABLE)) sc_fail(name, "is written by the program but is read-only");
    sc_array out;
    out.data = a->data;
    for (int k = 0; k < ndim; ++k) {
        out.shape[k] = a->dimensions[k];
        if (a->strides[k] % itemsize != 0) sc_fail(name, "a stride is not a multiple of the item size");
        out.strides[k] = a->strides[k] / itemsize;
    }
    sc_check_layout(out, ndim, unit_stride, name);
    return out;
}

constexpr int SC_NPY_C_CONTIGUOUS = 0x0001;

// The workspace: a writeable, contiguous 1-D uint8 array, 8-byte aligned.
void sc_workspace(PyObject* o, char** data, std::size_t* nbytes) {
    const char* what = "must be a writeable, contiguous 1-D numpy array of uint8 (e.g. "
                       "numpy.empty(nbytes, numpy.uint8)) starting at an 8-byte boundary";
    if (!PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(sc_globals.ndarray))) sc_fail("workspace", what);
    auto* a = reinterpret_cast<sc_ndarray*>(o);
    if (a->nd != 1 || !(a->flags & SC_NPY_C_CONTIGUOUS) || !(a->flags & SC_NPY_WRITEABLE) ||
        (a->descr != sc_globals.uint8 && PyObject_RichCompareBool(a->descr, sc_globals.uint8, Py_EQ) != 1) ||
        reinterpret_cast<std::uintptr_t>(a->data) % 8 != 0) {
        PyErr_Clear();
        sc_fail("workspace", what);
    }
    *data = a->data;
    *nbytes = static_cast<std::size_t>(a->dimensions[0]);
}
}  // namespace
"""

_GPU_ARRAY = r"""
namespace {
std::int64_t sc_item(PyObject* seq, Py_ssize_t k) {
    PyObject* item = PySequence_GetItem(seq, k);
    const long long v = item ? PyLong_AsLongLong(item) : -1;
    Py_XDECREF(item);
    return v;
}

sc_array sc_cuda_array(PyObject* o, const char* name, int ndim, const char* typestr,
                       std::int64_t itemsize, bool written, bool unit_stride) {
    PyObject* cai = PyObject_GetAttrString(o, "__cuda_array_interface__");
    if (cai == nullptr || !PyDict_Check(cai)) {
        PyErr_Clear();
        Py_XDECREF(cai);
        sc_fail(name, "expected a GPU array exposing __cuda_array_interface__ (e.g. cupy)");
    }
    PyObject* shape = PyDict_GetItemString(cai, "shape");
    PyObject* ts = PyDict_GetItemString(cai, "typestr");
    PyObject* data = PyDict_GetItemString(cai, "data");
    PyObject* strides = PyDict_GetItemString(cai, "strides");
    sc_array out;
    std::string error;
    if (shape == nullptr || PySequence_Size(shape) != ndim) {
        error = "wrong number of dimensions";
    } else if (ts == nullptr || !PyUnicode_Check(ts) || std::string(PyUnicode_AsUTF8(ts)).substr(1) != typestr ||
               PyUnicode_AsUTF8(ts)[0] == '>') {
        error = "wrong dtype";
    } else if (data == nullptr || !PyTuple_Check(data) || PyTuple_Size(data) != 2) {
        error = "malformed __cuda_array_interface__";
    } else if (written && PyObject_IsTrue(PyTuple_GetItem(data, 1))) {
        error = "is written by the program but is read-only";
    } else {
        out.data = reinterpret_cast<char*>(PyLong_AsVoidPtr(PyTuple_GetItem(data, 0)));
        std::int64_t running = 1;
        for (int k = ndim - 1; k >= 0; --k) {
            out.shape[k] = sc_item(shape, k);
            out.strides[k] = running;
            running *= out.shape[k];
        }
        if (strides != nullptr && strides != Py_None) {
            for (int k = 0; k < ndim; ++k) {
                const std::int64_t s = sc_item(strides, k);
                if (s % itemsize != 0) error = "a stride is not a multiple of the item size";
                out.strides[k] = s / itemsize;
            }
        }
    }
    Py_DECREF(cai);
    if (PyErr_Occurred()) { PyErr_Clear(); error = "malformed __cuda_array_interface__"; }
    if (!error.empty()) sc_fail(name, error);
    sc_check_layout(out, ndim, unit_stride, name);
    return out;
}

// The workspace: a writeable, contiguous 1-D uint8 GPU array, 8-byte aligned.
void sc_workspace(PyObject* o, char** data, std::size_t* nbytes) {
    const char* what = "must be a writeable, contiguous 1-D uint8 GPU array (e.g. "
                       "cupy.empty(nbytes, cupy.uint8)) starting at an 8-byte boundary";
    sc_array a;
    try {
        a = sc_cuda_array(o, "workspace", 1, "u1", 1, true, true);
    } catch (const sc_mismatch&) {
        sc_fail("workspace", what);
    }
    if (a.shape[0] > 1 && a.strides[0] != 1) sc_fail("workspace", what);
    if (reinterpret_cast<std::uintptr_t>(a.data) % 8 != 0) sc_fail("workspace", what);
    *data = a.data;
    *nbytes = static_cast<std::size_t>(a.shape[0]);
}
}  // namespace
"""

_DTYPE_ID = {
    "float32": "SC_FLOAT32",
    "float64": "SC_FLOAT64",
    "int32": "SC_INT32",
    "int64": "SC_INT64",
    "bool": "SC_BOOL",
}

_CAPI_MODULE = r"""
namespace {
PyMethodDef sc_methods[] = {
    {SC_ENTRY_NAME, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&sc_entry)),
     METH_FASTCALL, "Run program " SC_PROGRAM " (arguments in declaration order)."},
    {nullptr, nullptr, 0, nullptr}};
PyModuleDef sc_module = {PyModuleDef_HEAD_INIT, SC_STR(STENCILCHAIN_MODULE_NAME),
                         "stencilchain program " SC_PROGRAM, -1, sc_methods,
                         nullptr, nullptr, nullptr, nullptr};
}  // namespace

PyMODINIT_FUNC SC_CAT(PyInit_, STENCILCHAIN_MODULE_NAME)(void) {
    if (!sc_init_globals()) return nullptr;
    PyObject* m = PyModule_Create(&sc_module);
    if (m == nullptr) return nullptr;
    sc_globals.mismatch = PyErr_NewException(SC_STR(STENCILCHAIN_MODULE_NAME) ".ArgumentMismatch",
                                             PyExc_TypeError, nullptr);
    Py_XINCREF(sc_globals.mismatch);
    if (sc_globals.mismatch == nullptr || PyModule_AddObject(m, "ArgumentMismatch", sc_globals.mismatch) < 0) {
        Py_DECREF(m);
        return nullptr;
    }
    return m;
}
"""

_PYBIND11_MODULE = r"""
#include <pybind11/pybind11.h>

namespace {
PyMethodDef sc_method = {SC_ENTRY_NAME, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&sc_entry)),
                         METH_FASTCALL, "Run program " SC_PROGRAM " (arguments in declaration order)."};
}  // namespace

PYBIND11_MODULE(STENCILCHAIN_MODULE_NAME, m) {
    if (!sc_init_globals()) throw pybind11::error_already_set();
    pybind11::object mismatch = pybind11::reinterpret_steal<pybind11::object>(PyErr_NewException(
        SC_STR(STENCILCHAIN_MODULE_NAME) ".ArgumentMismatch", PyExc_TypeError, nullptr));
    sc_globals.mismatch = mismatch.inc_ref().ptr();
    m.attr("ArgumentMismatch") = mismatch;
    m.add_object(SC_ENTRY_NAME, pybind11::reinterpret_steal<pybind11::object>(
                                    PyCFunction_NewEx(&sc_method, nullptr, m.ptr())));
}
"""


class _BindingWriter:
    def __init__(self, step: GTFNBindingsStep, source: ProgramSource) -> None:
        self.step = step
        self.entry_point = source.entry_point
        self.program = source.program
        self.signature = ProgramSignature.of(source.program, source.workspace)
        self.gpu = step.device is Device.GPU

    def _field_check(self, index: int, f: FieldArg) -> str:
        unit = "true" if self.step.data_layout is DataLayout.UNIT_STRIDE else "false"
        written = "true" if f.written else "false"
        itemsize = f.type.dtype.numpy.itemsize
        ndim = len(f.type.dims)
        if self.gpu:
            dtype = f'"{_TYPESTR[f.type.dtype.name]}"'
            check = "sc_cuda_array"
        else:
            dtype, check = _DTYPE_ID[f.type.dtype.name], "sc_numpy_array"
        return (
            f'    const sc_array a{index} = {check}(args[{index}], "{f.name}", {ndim}, {dtype}, '
            f"{itemsize}, {written}, {unit});"
        )

    def entry(self) -> str:
        sig = self.signature
        n = len(sig.params)
        takes = f"{n} arguments" + (" and a workspace (or None to ask its size)" if sig.workspace else "")
        lines = [
            "PyObject* sc_entry(PyObject*, PyObject* const* args, Py_ssize_t nargs) {",
            "    try {",
            f'    if (nargs != {n + sig.workspace}) throw sc_mismatch("{self.program.name}() takes {takes}");',
        ]
        lines += [f"    std::int64_t {size_var(d)} = -1;" for d in sig.dims]
        call_args: list[str] = []
        scalar_args: list[str] = []
        for index, p in enumerate(sig.params):
            if isinstance(p, FieldArg):
                lines.append(self._field_check(index, p))
                lines += [
                    f'    sc_set_size({size_var(d)}, a{index}.shape[{axis}], "{p.name}", "{d.name}");'
                    for axis, d in enumerate(p.type.dims)
                ]
                const = "" if p.written else "const "
                call_args.append(f"reinterpret_cast<{const}{p.type.dtype.cpp}*>(a{index}.data)")
                call_args += [f"a{index}.strides[{a}]" for a in range(len(p.type.dims))]
            else:
                assert isinstance(p, ScalarArg)
                lines.append(
                    f"    const {p.dtype.cpp} v{index} = "
                    f'sc_scalar<{p.dtype.cpp}>(args[{index}], "{p.name}");'
                )
                scalar_args.append(f"v{index}")
        fields = [(i, p) for i, p in enumerate(sig.params) if isinstance(p, FieldArg)]
        for i, w in fields:
            if not w.written:
                continue
            for j, other in fields:
                if j == i:
                    continue
                lines.append(
                    f"    if (sc_overlap(a{i}, {len(w.type.dims)}, {w.type.dtype.numpy.itemsize}, "
                    f"a{j}, {len(other.type.dims)}, {other.type.dtype.numpy.itemsize})) "
                    f'sc_fail("{w.name}", "{overlap_message(other.name)}");'
                )
        call_args += [size_var(d) for d in sig.dims] + scalar_args
        if sig.workspace:
            lines += [
                "    char* workspace = nullptr;",
                "    std::size_t workspace_nbytes = 0, workspace_needed = 0;",
                f"    if (args[{n}] != Py_None) sc_workspace(args[{n}], &workspace, &workspace_nbytes);",
            ]
            call_args += ["workspace", "workspace_nbytes", "&workspace_needed"]
        call_args += ["err", "sizeof(err)"]
        lines += [
            "    char err[512] = {0};",
            "    int status;",
            "    Py_BEGIN_ALLOW_THREADS",
            f"    status = {sig.function}({', '.join(call_args)});",
            "    Py_END_ALLOW_THREADS",
            "    if (status != 0) {  // see signature.py for the codes",
            "        PyObject* kind = status == 1   ? sc_globals.domain_error",
            "                         : status == 4 ? sc_globals.workspace_error",
            "                         : status == 5 ? PyExc_MemoryError",
            "                                       : PyExc_RuntimeError;",
            "        PyErr_SetString(kind, err);",
            "        return nullptr;",
            "    }",
            *(
                [f"    if (args[{n}] == Py_None) return PyLong_FromSize_t(workspace_needed);"]
                if sig.workspace
                else []
            ),
            "    Py_RETURN_NONE;",
            "    } catch (const sc_mismatch& e) {",
            "        PyErr_SetString(sc_globals.mismatch, e.what());",
            "        return nullptr;",
            "    } catch (const std::exception& e) {",
            "        PyErr_SetString(PyExc_RuntimeError, e.what());",
            "        return nullptr;",
            "    }",
            "}",
        ]
        return "\n".join(lines)

    def source(self) -> str:
        return "\n".join(
            [
                f"// generated by stencilchain: bindings of program {self.program.name}",
                f'#define SC_PROGRAM "{self.program.name}"',
                f'#define SC_ENTRY_NAME "{self.entry_point}"',
                _HELPERS,
                _GPU_ARRAY if self.gpu else _CPU_ARRAY,
                f"{self.signature.declaration()};",
                "namespace {",
                self.entry(),
                "}  // namespace",
                _PYBIND11_MODULE if self.step.flavor == "pybind11" else _CAPI_MODULE,
            ]
        )
