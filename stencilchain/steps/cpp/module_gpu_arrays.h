// GPU arrays of the extension module: objects exposing __cuda_array_interface__ (e.g. cupy),
// and the workspace.
namespace {
// GPU arrays have no shape that is cheap to read: the BoundEntry remembers no call of them
// (module_entry.h; their calls over their own ranges go to the explain hook).
bool sc_shape_of(PyObject*, int, Py_ssize_t*) { return false; }

std::int64_t sc_item(PyObject* seq, Py_ssize_t k) {
    PyObject* item = PySequence_GetItem(seq, k);
    const long long v = item ? PyLong_AsLongLong(item) : -1;
    Py_XDECREF(item);
    return v;
}

// The GPU array argument `o` into `out` (false: rejected, the message in `why`).
template <std::int64_t itemsize>
bool sc_cuda_array(PyObject* o, const char* name, int ndim, const char* typestr, bool written,
                   bool unit_stride, sc_array& out, std::string& why) {
    PyObject* cai = PyObject_GetAttrString(o, "__cuda_array_interface__");
    if (cai == nullptr || !PyDict_Check(cai)) {
        PyErr_Clear();
        Py_XDECREF(cai);
        return sc_fail(why, name, "expected a GPU array exposing __cuda_array_interface__ (e.g. cupy)");
    }
    PyObject* shape = PyDict_GetItemString(cai, "shape");
    PyObject* ts = PyDict_GetItemString(cai, "typestr");
    PyObject* data = PyDict_GetItemString(cai, "data");
    PyObject* strides = PyDict_GetItemString(cai, "strides");
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
            bool shared = false, empty = false;
            for (int k = 0; k < ndim; ++k) {
                shared = shared || (out.strides[k] == 0 && out.shape[k] > 1);
                empty = empty || out.shape[k] == 0;
            }
            if (written && shared && !empty) error = "is written by the program but has stride 0";
        }
    }
    Py_DECREF(cai);
    if (PyErr_Occurred()) { PyErr_Clear(); error = "malformed __cuda_array_interface__"; }
    if (!error.empty()) return sc_fail(why, name, error);
    if (!sc_check_layout(out, ndim, unit_stride, name, why)) return false;
    sc_set_bounds(out, ndim, itemsize);
    return true;
}

// The workspace: a writeable, contiguous 1-D uint8 GPU array, 8-byte aligned (false: rejected).
bool sc_workspace(PyObject* o, char** data, std::size_t* nbytes, std::string& why) {
    const char* what = "must be a writeable, contiguous 1-D uint8 GPU array (e.g. "
                       "cupy.empty(nbytes, cupy.uint8)) starting at an 8-byte boundary";
    sc_array a;
    std::string array_why;  // replaced by the workspace's own message
    if (!sc_cuda_array<1>(o, "workspace", 1, "u1", true, true, a, array_why) ||
        (a.shape[0] > 1 && a.strides[0] != 1) || reinterpret_cast<std::uintptr_t>(a.data) % 8 != 0) {
        return sc_fail(why, "workspace", what);
    }
    *data = a.data;
    *nbytes = static_cast<std::size_t>(a.shape[0]);
    return true;
}
}  // namespace
