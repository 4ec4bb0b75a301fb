// CPU arrays of the extension module: NumPy arrays, read through the leading fields of
// PyArrayObject, and the workspace.
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

// The array argument `o` into `out` (false: rejected, the message in `why`). `itemsize` is
// a template argument: the strides' checks and divisions compile to masks and shifts.
template <std::int64_t itemsize>
SC_INLINE bool sc_numpy_array(PyObject* o, const char* name, int ndim, int dtype, bool written,
                              bool unit_stride, sc_array& out, std::string& why) {
    if (!PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(sc_globals.ndarray))) {
        return sc_fail(why, name, "expected a numpy array");
    }
    auto* a = reinterpret_cast<sc_ndarray*>(o);
    if (a->nd != ndim) return sc_fail(why, name, "wrong number of dimensions");
    PyObject* expected = sc_globals.dtypes[dtype];
    if (a->descr != expected && PyObject_RichCompareBool(a->descr, expected, Py_EQ) != 1) {
        PyErr_Clear();
        return sc_fail(why, name, "wrong dtype");
    }
    if (written && !(a->flags & SC_NPY_WRITEABLE)) {
        return sc_fail(why, name, "is written by the program but is read-only");
    }
    out.data = a->data;
    bool shared = false, empty = false;
    for (int k = 0; k < ndim; ++k) {
        out.shape[k] = a->dimensions[k];
        if (a->strides[k] % itemsize != 0) return sc_fail(why, name, "a stride is not a multiple of the item size");
        out.strides[k] = a->strides[k] / itemsize;
        shared = shared || (out.strides[k] == 0 && out.shape[k] > 1);
        empty = empty || out.shape[k] == 0;
    }
    // an output with several points at one element (not an empty one: it has no element)
    if (written && shared && !empty) return sc_fail(why, name, "is written by the program but has stride 0");
    if (!sc_check_layout(out, ndim, unit_stride, name, why)) return false;
    sc_set_bounds(out, ndim, itemsize);
    return true;
}

// The same check, not inlined: for programs of many fields (extension_module.py's
// OUTLINED_FIELDS), whose entry would otherwise be one huge function that takes the
// compiler minutes.
template <std::int64_t itemsize>
__attribute__((noinline)) bool sc_numpy_array_outlined(PyObject* o, const char* name, int ndim, int dtype,
                                                       bool written, bool unit_stride, sc_array& out,
                                                       std::string& why) {
    return sc_numpy_array<itemsize>(o, name, ndim, dtype, written, unit_stride, out, why);
}

// The shape of `o` into `shape` when it is a NumPy array of `ndim` dimensions (else false):
// what the BoundEntry compares with the shapes of calls it remembers (module_entry.h).
bool sc_shape_of(PyObject* o, int ndim, Py_ssize_t* shape) {
    if (!PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(sc_globals.ndarray))) return false;
    auto* a = reinterpret_cast<sc_ndarray*>(o);
    if (a->nd != ndim) return false;
    std::copy(a->dimensions, a->dimensions + ndim, shape);
    return true;
}

constexpr int SC_NPY_C_CONTIGUOUS = 0x0001;

// The workspace: a writeable, contiguous 1-D uint8 array, 8-byte aligned (false: rejected).
bool sc_workspace(PyObject* o, char** data, std::size_t* nbytes, std::string& why) {
    const char* what = "must be a writeable, contiguous 1-D numpy array of uint8 (e.g. "
                       "numpy.empty(nbytes, numpy.uint8)) starting at an 8-byte boundary";
    if (!PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(sc_globals.ndarray))) {
        return sc_fail(why, "workspace", what);
    }
    auto* a = reinterpret_cast<sc_ndarray*>(o);
    if (a->nd != 1 || !(a->flags & SC_NPY_C_CONTIGUOUS) || !(a->flags & SC_NPY_WRITEABLE) ||
        (a->descr != sc_globals.uint8 && PyObject_RichCompareBool(a->descr, sc_globals.uint8, Py_EQ) != 1) ||
        reinterpret_cast<std::uintptr_t>(a->data) % 8 != 0) {
        PyErr_Clear();
        return sc_fail(why, "workspace", what);
    }
    *data = a->data;
    *nbytes = static_cast<std::size_t>(a->dimensions[0]);
    return true;
}
}  // namespace
