// The callables of every argument-checking extension module, around the generated
// `sc_call(args, nargs)` (which throws sc_mismatch for a rejected call):
// - sc_entry, the module's entry point (METH_FASTCALL): a rejected call raises the module's
//   ArgumentMismatch (a TypeError) with the native check's message;
// - sc_bind(bind, explain), the module function "_sc_bind": a BoundEntry for a bound program,
//   a vectorcall object that takes keyword arguments (bound here by the parameters' names,
//   sc_param_names) and explains a rejected call through two hooks of the Python side, so
//   that a call from the interpreter reaches the checks without a Python frame in between:
//     bind(args, kwargs)     -> the arguments in parameter order (a tuple), or raises (a
//                               call whose keywords do not name each missing parameter once);
//     explain(args, message) -> raises the shared checker's ArgumentError for `args`, or
//                               returns True after running a call of field values itself.
//   The hooks must not refer back to the BoundEntry (it does not take part in the garbage
//   collector's cycle detection).
#include <structmember.h>

namespace {
PyObject* sc_entry(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
    try {
        return sc_call(args, nargs);
    } catch (const sc_mismatch& e) {
        PyErr_SetString(sc_globals.mismatch, e.what());
        return nullptr;
    } catch (const std::exception& e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
        return nullptr;
    }
}

struct sc_bound {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject* bind;
    PyObject* explain;
};

PyObject* sc_args_tuple(PyObject* const* args, Py_ssize_t nargs) {
    PyObject* tuple = PyTuple_New(nargs);
    if (tuple == nullptr) return nullptr;
    for (Py_ssize_t k = 0; k < nargs; ++k) {
        Py_INCREF(args[k]);
        PyTuple_SET_ITEM(tuple, k, args[k]);
    }
    return tuple;
}

// A rejected call: the explain hook raises the shared checker's error (or, should it return,
// the native message is raised as the module's ArgumentMismatch).
PyObject* sc_explain(sc_bound* self, PyObject* const* args, Py_ssize_t nargs, const char* message) {
    PyObject* tuple = sc_args_tuple(args, nargs);
    if (tuple == nullptr) return nullptr;
    PyObject* result = PyObject_CallFunction(self->explain, "Os", tuple, message);
    Py_DECREF(tuple);
    if (result == Py_True) {  // the hook ran the call with the arrays of its field values
        Py_DECREF(result);
        Py_RETURN_NONE;
    }
    if (result != nullptr) {
        Py_DECREF(result);
        PyErr_SetString(sc_globals.mismatch, message);
    }
    return nullptr;
}

PyObject* sc_bound_call(PyObject* self, PyObject* const* args, std::size_t nargsf, PyObject* kwnames);

// The parameters' names as interned strings (sc_param_names, generated), made when the first
// BoundEntry is; null entries when that failed (keywords then all go to the bind hook).
PyObject* sc_param_objects[sc_param_count + 1] = {nullptr};
bool sc_param_objects_made = false;

bool sc_make_param_objects() {
    if (sc_param_objects_made) return true;
    for (Py_ssize_t k = 0; k < sc_param_count; ++k) {
        sc_param_objects[k] = PyUnicode_InternFromString(sc_param_names[k]);
        if (sc_param_objects[k] == nullptr) return false;
    }
    sc_param_objects_made = true;
    return true;
}

// The position of parameter `name`, searched from `hint` on (keywords usually come in the
// parameters' order), by identity first (a keyword of a call is an interned constant), then
// by value; -1 when no parameter has that name.
Py_ssize_t sc_param_index(PyObject* name, Py_ssize_t hint) {
    for (Py_ssize_t k = 0; k < sc_param_count; ++k) {
        const Py_ssize_t at = (hint + k) % sc_param_count;
        if (sc_param_objects[at] == name) return at;
    }
    if (!PyUnicode_Check(name)) return -1;
    for (Py_ssize_t k = 0; k < sc_param_count; ++k) {
        if (PyUnicode_Compare(sc_param_objects[k], name) == 0) return k;
    }
    PyErr_Clear();
    return -1;
}

PyObject* sc_bound_keywords_hook(sc_bound* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);

// A call with keyword arguments, bound here when every parameter is given once (by position
// or by name) and no other name is; anything else goes to the bind hook, which raises the
// shared error (or binds as Python does).
PyObject* sc_bound_keywords(sc_bound* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    const Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    if (sc_param_objects_made && nargs + nkw == sc_param_count) {
        PyObject* ordered[sc_param_count + 1] = {nullptr};
        for (Py_ssize_t k = 0; k < nargs; ++k) ordered[k] = args[k];
        bool bound = true;
        Py_ssize_t hint = nargs;
        for (Py_ssize_t k = 0; k < nkw && bound; ++k) {
            const Py_ssize_t at = sc_param_index(PyTuple_GET_ITEM(kwnames, k), hint);
            bound = at >= 0 && ordered[at] == nullptr;
            if (bound) {
                ordered[at] = args[nargs + k];
                hint = at + 1;
            }
        }
        // nargs + nkw names, none twice: every parameter has its argument
        if (bound) return sc_bound_call(reinterpret_cast<PyObject*>(self), ordered, static_cast<std::size_t>(sc_param_count), nullptr);
    }
    return sc_bound_keywords_hook(self, args, nargs, kwnames);
}

// A call with keyword arguments that sc_bound_keywords does not bind: the bind hook puts them
// in parameter order (or raises), then the call runs as a positional one.
PyObject* sc_bound_keywords_hook(sc_bound* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    PyObject* positional = sc_args_tuple(args, nargs);
    PyObject* keywords = positional ? PyDict_New() : nullptr;
    if (keywords == nullptr) {
        Py_XDECREF(positional);
        return nullptr;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); ++k) {
        if (PyDict_SetItem(keywords, PyTuple_GET_ITEM(kwnames, k), args[nargs + k]) < 0) {
            Py_DECREF(positional);
            Py_DECREF(keywords);
            return nullptr;
        }
    }
    PyObject* bound = PyObject_CallFunctionObjArgs(self->bind, positional, keywords, nullptr);
    Py_DECREF(positional);
    Py_DECREF(keywords);
    if (bound == nullptr) return nullptr;
    PyObject* result = nullptr;
    if (!PyTuple_Check(bound)) {
        PyErr_SetString(PyExc_SystemError, "the bind hook of " SC_PROGRAM "() returned no tuple");
    } else {
        result = sc_bound_call(reinterpret_cast<PyObject*>(self), &PyTuple_GET_ITEM(bound, 0),
                               static_cast<std::size_t>(PyTuple_GET_SIZE(bound)), nullptr);
    }
    Py_DECREF(bound);
    return result;
}

PyObject* sc_bound_call(PyObject* self, PyObject* const* args, std::size_t nargsf, PyObject* kwnames) {
    auto* bound = reinterpret_cast<sc_bound*>(self);
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) > 0) {
        return sc_bound_keywords(bound, args, nargs, kwnames);
    }
    try {
        return sc_call(args, nargs);
    } catch (const sc_mismatch& e) {
        return sc_explain(bound, args, nargs, e.what());
    } catch (const std::exception& e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
        return nullptr;
    }
}

void sc_bound_dealloc(PyObject* self) {
    auto* bound = reinterpret_cast<sc_bound*>(self);
    PyTypeObject* type = Py_TYPE(self);
    Py_XDECREF(bound->bind);
    Py_XDECREF(bound->explain);
    PyObject_Free(self);
    Py_DECREF(type);
}

PyMemberDef sc_bound_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(sc_bound, vectorcall), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyType_Slot sc_bound_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(&sc_bound_dealloc)},
    {Py_tp_call, reinterpret_cast<void*>(&PyVectorcall_Call)},
    {Py_tp_members, sc_bound_members},
    {Py_tp_doc, const_cast<char*>("Program " SC_PROGRAM " bound to the hooks of a bound program.")},
    {0, nullptr}};

PyType_Spec sc_bound_spec = {SC_STR(STENCILCHAIN_MODULE_NAME) ".BoundEntry", sizeof(sc_bound), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL, sc_bound_slots};

PyObject* sc_bound_type = nullptr;  // created when the module is imported

PyObject* sc_bind(PyObject*, PyObject* args) {
    PyObject* bind = nullptr;
    PyObject* explain = nullptr;
    if (!PyArg_ParseTuple(args, "OO:bind", &bind, &explain)) return nullptr;
    if (!PyCallable_Check(bind) || !PyCallable_Check(explain)) {
        PyErr_SetString(PyExc_TypeError, "bind(bind, explain) takes two callables");
        return nullptr;
    }
    if (!sc_make_param_objects()) return nullptr;
    sc_bound* bound = PyObject_New(sc_bound, reinterpret_cast<PyTypeObject*>(sc_bound_type));
    if (bound == nullptr) return nullptr;
    bound->vectorcall = &sc_bound_call;
    Py_INCREF(bind);
    bound->bind = bind;
    Py_INCREF(explain);
    bound->explain = explain;
    return reinterpret_cast<PyObject*>(bound);
}

// What both flavours add to the module when it is imported: BoundEntry's type.
bool sc_init_entry() {
    sc_bound_type = PyType_FromSpec(&sc_bound_spec);
    return sc_bound_type != nullptr;
}
}  // namespace
