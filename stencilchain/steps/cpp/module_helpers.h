// Part of every argument-checking extension module (stencilchain.steps.cpp.extension_module):
// scalar and array checks, sizes, overlap and layout. Needs SC_PROGRAM (the program's name).
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <algorithm>
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

struct sc_mismatch : std::exception {
    explicit sc_mismatch(std::string m) : message(std::move(m)) {}
    const char* what() const noexcept override { return message.c_str(); }
    std::string message;
};

[[noreturn]] SC_COLD void sc_fail(const char* arg, const std::string& what) {
    throw sc_mismatch{std::string("argument '") + arg + "' of " SC_PROGRAM "(): " + what};
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

[[noreturn]] SC_COLD void sc_size_mismatch(std::int64_t size, std::int64_t value, const char* name,
                                           const char* dim) {
    sc_fail(name, std::string("size ") + std::to_string(value) + " along " + dim +
                      " differs from " + std::to_string(size) + " of another argument");
}

SC_INLINE void sc_set_size(std::int64_t& size, std::int64_t value, const char* name, const char* dim) {
    if (size < 0) {
        size = value;
    } else if (size != value) {
        sc_size_mismatch(size, value, name, dim);
    }
}

[[noreturn]] SC_COLD void sc_layout_mismatch(std::int64_t stride, const char* name) {
    sc_fail(name, "the toolchain is configured for data_layout=unit_stride, but the innermost "
                  "dimension has a stride of " + std::to_string(stride) + " elements (needs 1)");
}

SC_INLINE void sc_check_layout(const sc_array& a, int ndim, bool unit_stride, const char* name) {
    if (unit_stride && a.shape[ndim - 1] > 1 && a.strides[ndim - 1] != 1) {
        sc_layout_mismatch(a.strides[ndim - 1], name);
    }
}

}  // namespace
