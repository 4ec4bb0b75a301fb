// Part of every argument-checking extension module (stencilchain.steps.cpp.extension_module):
// scalar and array checks, sizes, overlap and layout. Needs SC_PROGRAM (the program's name).
// A check that rejects its argument writes the message into the call's `why` (a std::string
// that stays empty otherwise) and returns false; nothing is thrown, as a rejected call is a
// normal path (a call over fields' own ranges, one the explain hook takes: docs/adr/0037).
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <string>

#define SC_CAT2(a, b) a##b
#define SC_CAT(a, b) SC_CAT2(a, b)
#define SC_STR2(x) #x
#define SC_STR(x) SC_STR2(x)

// The checks of one argument are inlined into the entry point (the bindings unit is built
// with -O1, which would call each helper); what builds an error message stays out of line.
#if defined(__GNUC__)
#define SC_INLINE __attribute__((always_inline)) inline
#define SC_COLD __attribute__((noinline, cold))
#else
#define SC_INLINE inline
#define SC_COLD
#endif

namespace {

// Reject argument `arg` of the call: its message into `why`; false, what a check returns.
SC_COLD bool sc_fail(std::string& why, const char* arg, const std::string& what) {
    why = std::string("argument '") + arg + "' of " SC_PROGRAM "(): " + what;
    return false;
}

enum sc_dtype_id { SC_FLOAT32 = 0, SC_FLOAT64 = 1, SC_INT32 = 2, SC_INT64 = 3, SC_BOOL = 4 };

// Objects looked up once, when the module is imported.
struct sc_globals_t {
    PyObject* mismatch = nullptr;      // this module's ArgumentMismatch(TypeError)
    PyObject* domain_error = nullptr;  // stencilchain.errors.DomainError
    PyObject* workspace_error = nullptr;  // stencilchain.errors.WorkspaceError
    PyObject* empty_domain_warning = nullptr;  // stencilchain.errors.EmptyDomainWarning
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
    sc_globals.empty_domain_warning = PyObject_GetAttrString(errors, "EmptyDomainWarning");
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

bool sc_to_float32(double v, const char* name, float& out, std::string& why) {
    out = static_cast<float>(v);
    return !(std::isfinite(v) && !std::isfinite(out)) || sc_fail(why, name, "value out of the range of float32");
}

// The scalar argument `o` into `out` (false: rejected, the message in `why`).
template <class T> bool sc_scalar(PyObject* o, const char* name, T& out, std::string& why);

template <> bool sc_scalar<double>(PyObject* o, const char* name, double& out, std::string& why) {
    if (PyFloat_Check(o)) {  // float and numpy.float64
        out = PyFloat_AS_DOUBLE(o);
        return true;
    }
    if (PyLong_CheckExact(o)) {
        out = PyLong_AsDouble(o);
        if (out == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return sc_fail(why, name, "int too large for float64");
        }
        return true;
    }
    return sc_fail(why, name, "expected a float64 scalar");
}

template <> bool sc_scalar<float>(PyObject* o, const char* name, float& out, std::string& why) {
    if (PyFloat_CheckExact(o)) return sc_to_float32(PyFloat_AS_DOUBLE(o), name, out, why);
    if (Py_TYPE(o) == reinterpret_cast<PyTypeObject*>(sc_globals.float32) || sc_is_numpy_scalar(o, SC_FLOAT32)) {
        out = static_cast<float>(PyFloat_AsDouble(o));
        return true;
    }
    if (PyLong_CheckExact(o)) {
        const double v = PyLong_AsDouble(o);
        if (v == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return sc_fail(why, name, "int too large for float32");
        }
        return sc_to_float32(v, name, out, why);
    }
    return sc_fail(why, name, "expected a float32 scalar");
}

template <class T>
bool sc_integer(PyObject* o, const char* name, PyObject* numpy_type, int id, T& out, std::string& why) {
    long long v = 0;
    if (PyLong_CheckExact(o)) {
        int overflow = 0;
        v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow) return sc_fail(why, name, "int out of range");
    } else if (Py_TYPE(o) == reinterpret_cast<PyTypeObject*>(numpy_type) || sc_is_numpy_scalar(o, id)) {
        PyObject* index = PyNumber_Index(o);
        if (index == nullptr) {
            PyErr_Clear();
            return sc_fail(why, name, "not an integer");
        }
        v = PyLong_AsLongLong(index);
        Py_DECREF(index);
    } else {
        return sc_fail(why, name, "expected an integer scalar");
    }
    if (v < static_cast<long long>(std::numeric_limits<T>::min()) ||
        v > static_cast<long long>(std::numeric_limits<T>::max())) {
        return sc_fail(why, name, "int out of range");
    }
    out = static_cast<T>(v);
    return true;
}

template <> bool sc_scalar<std::int32_t>(PyObject* o, const char* name, std::int32_t& out, std::string& why) {
    return sc_integer<std::int32_t>(o, name, sc_globals.int32, SC_INT32, out, why);
}

template <> bool sc_scalar<std::int64_t>(PyObject* o, const char* name, std::int64_t& out, std::string& why) {
    return sc_integer<std::int64_t>(o, name, sc_globals.int64, SC_INT64, out, why);
}

template <> bool sc_scalar<bool>(PyObject* o, const char* name, bool& out, std::string& why) {
    if (o == Py_True || o == Py_False) {
        out = o == Py_True;
        return true;
    }
    if (Py_TYPE(o) == reinterpret_cast<PyTypeObject*>(sc_globals.bool_) || sc_is_numpy_scalar(o, SC_BOOL)) {
        out = PyObject_IsTrue(o) == 1;
        return true;
    }
    return sc_fail(why, name, "expected a bool scalar");
}

// One array argument after every check: data pointer, shape, element strides, and the
// addresses [begin, end) of the bytes it can touch (empty: an empty array).
struct sc_array {
    char* data;
    std::int64_t shape[8];
    std::int64_t strides[8];  // in elements
    std::intptr_t begin;
    std::intptr_t end;
    bool empty;
};

// The bytes `a` can touch, from its shape and strides: computed once per argument, so that
// the overlap test of two arguments is two comparisons.
SC_INLINE void sc_set_bounds(sc_array& a, int ndim, std::int64_t itemsize) {
    std::int64_t lo = 0, hi = itemsize;
    a.empty = false;
    for (int k = 0; k < ndim; ++k) {
        if (a.shape[k] == 0) a.empty = true;
        const std::int64_t reach = (a.shape[k] - 1) * a.strides[k] * itemsize;
        (reach < 0 ? lo : hi) += reach;
    }
    a.begin = reinterpret_cast<std::intptr_t>(a.data) + lo;
    a.end = reinterpret_cast<std::intptr_t>(a.data) + hi;
}

// Whether the bytes two arrays can touch overlap (a bounds test, like np.may_share_memory).
inline bool sc_overlap(const sc_array& a, const sc_array& b) {
    return !a.empty && !b.empty && a.begin < b.end && b.begin < a.end;
}

// Whether the written argument `a` (`name`) and `b` do not overlap (else `message` of `a`).
SC_INLINE bool sc_disjoint(const sc_array& a, const sc_array& b, const char* name, const char* message,
                           std::string& why) {
    return !sc_overlap(a, b) || sc_fail(why, name, message);
}

SC_COLD bool sc_size_mismatch(std::int64_t size, std::int64_t value, const char* name, const char* dim,
                              std::string& why) {
    return sc_fail(why, name, std::string("size ") + std::to_string(value) + " along " + dim +
                                  " differs from " + std::to_string(size) + " of another argument");
}

SC_INLINE bool sc_set_size(std::int64_t& size, std::int64_t value, const char* name, const char* dim,
                           std::string& why) {
    if (size < 0) {
        size = value;
        return true;
    }
    return size == value || sc_size_mismatch(size, value, name, dim, why);
}

SC_COLD bool sc_layout_mismatch(std::int64_t stride, const char* name, std::string& why) {
    return sc_fail(why, name, "the toolchain is configured for data_layout=unit_stride, but the innermost "
                              "dimension has a stride of " + std::to_string(stride) + " elements (needs 1)");
}

SC_INLINE bool sc_check_layout(const sc_array& a, int ndim, bool unit_stride, const char* name, std::string& why) {
    if (unit_stride && a.shape[ndim - 1] > 1 && a.strides[ndim - 1] != 1) {
        return sc_layout_mismatch(a.strides[ndim - 1], name, why);
    }
    return true;
}

}  // namespace
