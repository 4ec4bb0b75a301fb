// The callables of every argument-checking extension module, around the generated
// `sc_call(args, nargs, why)` (which returns null with the message in `why`, and no Python
// error, for a rejected call; null with `why` empty is an error raised; a C++ exception
// only an internal error, e.g. std::bad_alloc):
// - sc_entry, the module's entry point (METH_FASTCALL): a rejected call raises the module's
//   ArgumentMismatch (a TypeError) with the native check's message;
// - sc_bind(bind, explain), the module function "_sc_bind": a BoundEntry for a bound program,
//   a vectorcall object that takes keyword arguments (bound here by the parameters' names,
//   sc_param_names) and explains a rejected call through two hooks of the Python side, so
//   that a call from the interpreter reaches the checks without a Python frame in between:
//     bind(args, kwargs)     -> the arguments in parameter order (a tuple), or raises (a
//                               call whose keywords do not name each missing parameter once);
//     explain(args, message) -> raises the shared checker's ArgumentError for `args`, or
//                               returns True after running the call itself (one of field
//                               values, or over fields' own ranges), or the entry that ran
//                               it: the entry of the program specialised for its fields'
//                               own ranges, which the BoundEntry keeps with the shapes of
//                               the call's arrays (up to sc_remembered_count of them) and
//                               calls for every later call of arrays of those shapes.
//   The hooks must not refer back to the BoundEntry (it does not take part in the garbage
//   collector's cycle detection).
//   sc_bind(bind, explain, field_value, fields) also recognises field values (sc.as_field):
//   `field_value` is their type (a slots class with members array, dims and start), `fields`
//   per parameter None (a scalar) or (dims, starts), the ones the program runs as they are. An
//   argument of that type over those dims and starts runs as its array, checked and run here
//   with no Python frame; any other field value goes to the explain hook. A call of plain
//   arrays pays one type comparison per argument.
#include <structmember.h>

namespace {
// sc_call, with any C++ exception raised as a RuntimeError (null: rejected, the message in
// `why`, or an error raised).
PyObject* sc_checked_call(PyObject* const* args, Py_ssize_t nargs, std::string& why) {
    try {
        return sc_call(args, nargs, why);
    } catch (const std::exception& e) {
        why.clear();
        PyErr_SetString(PyExc_RuntimeError, e.what());
        return nullptr;
    }
}

PyObject* sc_entry(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
    std::string why;
    PyObject* result = sc_checked_call(args, nargs, why);
    if (result == nullptr && !why.empty()) PyErr_SetString(sc_globals.mismatch, why.c_str());
    return result;
}

constexpr int sc_remembered_count = 4;

struct sc_bound {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject* bind;
    PyObject* explain;
    PyObject* field_value;  // the type of field values, null when they are not recognised here
    PyObject* fields;       // per parameter None or (dims, starts); null with field_value
    // the offsets of a field value's members array, dims and start
    Py_ssize_t array_at, dims_at, start_at;
    // entries the explain hook returned (null: none), each with the shapes of the fields'
    // arrays (sc_field_shapes) of the call that it ran, the last remembered first
    PyObject* remembered[sc_remembered_count];
    Py_ssize_t remembered_shapes[sc_remembered_count][sc_shape_count + 1];
};

// The remembered entry for arrays of these shapes, or null.
PyObject* sc_remembered_entry(const sc_bound* self, const Py_ssize_t* shapes) {
    for (int k = 0; k < sc_remembered_count && self->remembered[k] != nullptr; ++k) {
        if (std::equal(shapes, shapes + sc_shape_count, self->remembered_shapes[k])) return self->remembered[k];
    }
    return nullptr;
}

// Remember `entry` for arrays of these shapes, first (dropping the last when all are taken).
void sc_remember(sc_bound* self, PyObject* entry, const Py_ssize_t* shapes) {
    int at = sc_remembered_count - 1;  // the slot that goes: one of the same shapes, or the last
    for (int k = 0; k < sc_remembered_count && self->remembered[k] != nullptr; ++k) {
        if (std::equal(shapes, shapes + sc_shape_count, self->remembered_shapes[k])) at = k;
    }
    Py_INCREF(entry);
    Py_XDECREF(self->remembered[at]);
    for (int k = at; k > 0; --k) {
        self->remembered[k] = self->remembered[k - 1];
        std::copy(self->remembered_shapes[k - 1], self->remembered_shapes[k - 1] + sc_shape_count, self->remembered_shapes[k]);
    }
    self->remembered[0] = entry;
    std::copy(shapes, shapes + sc_shape_count, self->remembered_shapes[0]);
}

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
// the native message is raised as the module's ArgumentMismatch). `plain` are the arguments
// with field values replaced by their arrays: when the hook returns the entry that ran the
// call, later calls of arrays of their shapes go to that entry (sc_run).
PyObject* sc_explain(sc_bound* self, PyObject* const* args, PyObject* const* plain, Py_ssize_t nargs, const char* message) {
    PyObject* tuple = sc_args_tuple(args, nargs);
    if (tuple == nullptr) return nullptr;
    PyObject* result = PyObject_CallFunction(self->explain, "Os", tuple, message);
    Py_DECREF(tuple);
    if (result == Py_True) {  // the hook ran the call (of field values, say)
        Py_DECREF(result);
        Py_RETURN_NONE;
    }
    if (result != nullptr && PyCallable_Check(result)) {  // it ran it with this entry
        Py_ssize_t shapes[sc_shape_count + 1];
        if (nargs == sc_param_count && sc_field_shapes(plain, shapes)) sc_remember(self, result, shapes);
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

// Run a call: `plain` (the arguments `args`, field values replaced by their arrays) by the
// entry remembered for their shapes, else by sc_call; a rejected call is explained. An
// entry's rejection (a TypeError, raised before any work) is explained too; any other
// error of its run is the call's.
PyObject* sc_run(sc_bound* self, PyObject* const* args, PyObject* const* plain, Py_ssize_t nargs) {
    Py_ssize_t shapes[sc_shape_count + 1];
    PyObject* entry = nullptr;
    if (self->remembered[0] != nullptr && nargs == sc_param_count && sc_field_shapes(plain, shapes)) {
        entry = sc_remembered_entry(self, shapes);
    }
    if (entry != nullptr) {
        PyObject* result = PyObject_Vectorcall(entry, plain, static_cast<std::size_t>(nargs), nullptr);
        if (result != nullptr || !PyErr_ExceptionMatches(PyExc_TypeError)) return result;
        PyErr_Clear();
        return sc_explain(self, args, plain, nargs, "rejected by the program specialised for these shapes");
    }
    std::string why;
    PyObject* result = sc_checked_call(plain, nargs, why);
    if (result == nullptr && !why.empty()) return sc_explain(self, args, plain, nargs, why.c_str());
    return result;
}

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

// A member of a field value at `offset` (a slot: null only in a value made without its
// __init__, which the explain hook then reports).
PyObject* sc_member(PyObject* value, Py_ssize_t offset) {
    return *reinterpret_cast<PyObject**>(reinterpret_cast<char*>(value) + offset);
}

// Whether member `offset` of field value `value` is set and equals `expected`.
bool sc_member_is(PyObject* value, Py_ssize_t offset, PyObject* expected) {
    PyObject* member = sc_member(value, offset);
    return member != nullptr && PyObject_RichCompareBool(member, expected, Py_EQ) == 1;
}

// A call holding at least one field value: each one over the dims and starts that its
// parameter runs as they are is replaced by its array and the call checked and run here;
// anything else (another field value, a rejected call) goes to the explain hook with the
// arguments as given.
PyObject* sc_bound_field_values(sc_bound* self, PyObject* const* args, Py_ssize_t nargs) {
    PyObject* plain[sc_param_count + 1] = {nullptr};
    bool native = true;
    for (Py_ssize_t k = 0; k < nargs && native; ++k) {
        plain[k] = args[k];
        if (reinterpret_cast<PyObject*>(Py_TYPE(args[k])) != self->field_value) continue;
        PyObject* expected = PyTuple_GET_ITEM(self->fields, k);
        native = expected != Py_None && sc_member_is(args[k], self->dims_at, PyTuple_GET_ITEM(expected, 0)) &&
                 sc_member_is(args[k], self->start_at, PyTuple_GET_ITEM(expected, 1)) &&
                 sc_member(args[k], self->array_at) != nullptr;
        plain[k] = sc_member(args[k], self->array_at);
    }
    if (!native) {
        PyErr_Clear();  // a comparison that raised: the explain hook says what is wrong
        return sc_explain(self, args, args, nargs, "a field value that the native check does not take");
    }
    return sc_run(self, args, plain, nargs);
}

PyObject* sc_bound_call(PyObject* self, PyObject* const* args, std::size_t nargsf, PyObject* kwnames) {
    auto* bound = reinterpret_cast<sc_bound*>(self);
    const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) > 0) {
        return sc_bound_keywords(bound, args, nargs, kwnames);
    }
    if (bound->field_value != nullptr && nargs == sc_param_count) {
        for (Py_ssize_t k = 0; k < nargs; ++k) {
            if (reinterpret_cast<PyObject*>(Py_TYPE(args[k])) == bound->field_value) {
                return sc_bound_field_values(bound, args, nargs);
            }
        }
    }
    return sc_run(bound, args, args, nargs);
}

void sc_bound_dealloc(PyObject* self) {
    auto* bound = reinterpret_cast<sc_bound*>(self);
    PyTypeObject* type = Py_TYPE(self);
    Py_XDECREF(bound->bind);
    Py_XDECREF(bound->explain);
    Py_XDECREF(bound->field_value);
    Py_XDECREF(bound->fields);
    for (PyObject* entry : bound->remembered) Py_XDECREF(entry);
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

// The offset of member `name` of type `type`, a slot holding an object; -1 (an error set)
// when it is not one.
Py_ssize_t sc_slot_offset(PyObject* type, const char* name) {
    PyObject* descr = PyObject_GetAttrString(type, name);
    if (descr == nullptr) return -1;
    Py_ssize_t offset = -1;
    if (Py_TYPE(descr) == &PyMemberDescr_Type) {
        const PyMemberDef* member = reinterpret_cast<PyMemberDescrObject*>(descr)->d_member;
        if (member->type == T_OBJECT_EX) offset = member->offset;
    }
    Py_DECREF(descr);
    if (offset < 0) PyErr_Format(PyExc_TypeError, "_sc_bind: member %s of the field value type is not a slot", name);
    return offset;
}

// Check the field values' arguments of sc_bind and keep them in `bound`.
bool sc_bind_field_values(sc_bound* bound, PyObject* field_value, PyObject* fields) {
    if (field_value == nullptr) return true;
    if (!PyType_Check(field_value) || fields == nullptr || !PyTuple_Check(fields) || PyTuple_GET_SIZE(fields) != sc_param_count) {
        PyErr_SetString(PyExc_TypeError, "_sc_bind: field_value must be a type and fields a tuple of one entry per parameter");
        return false;
    }
    for (Py_ssize_t k = 0; k < sc_param_count; ++k) {
        PyObject* entry = PyTuple_GET_ITEM(fields, k);
        if (entry != Py_None && !(PyTuple_Check(entry) && PyTuple_GET_SIZE(entry) == 2)) {
            PyErr_SetString(PyExc_TypeError, "_sc_bind: each entry of fields must be None or (dims, starts)");
            return false;
        }
    }
    bound->array_at = sc_slot_offset(field_value, "array");
    bound->dims_at = bound->array_at < 0 ? -1 : sc_slot_offset(field_value, "dims");
    bound->start_at = bound->dims_at < 0 ? -1 : sc_slot_offset(field_value, "start");
    if (bound->start_at < 0) return false;
    Py_INCREF(field_value);
    bound->field_value = field_value;
    Py_INCREF(fields);
    bound->fields = fields;
    return true;
}

PyObject* sc_bind(PyObject*, PyObject* args) {
    PyObject* bind = nullptr;
    PyObject* explain = nullptr;
    PyObject* field_value = nullptr;
    PyObject* fields = nullptr;
    if (!PyArg_ParseTuple(args, "OO|OO:bind", &bind, &explain, &field_value, &fields)) return nullptr;
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
    bound->field_value = nullptr;
    bound->fields = nullptr;
    for (PyObject*& entry : bound->remembered) entry = nullptr;
    if (!sc_bind_field_values(bound, field_value, fields)) {
        Py_DECREF(reinterpret_cast<PyObject*>(bound));
        return nullptr;
    }
    return reinterpret_cast<PyObject*>(bound);
}

// What both flavours add to the module when it is imported: BoundEntry's type.
bool sc_init_entry() {
    sc_bound_type = PyType_FromSpec(&sc_bound_spec);
    return sc_bound_type != nullptr;
}
}  // namespace
