// The extension module on the CPython API (flavor "capi"): PyInit_<STENCILCHAIN_MODULE_NAME>
// with the METH_FASTCALL entry point sc_entry, named SC_ENTRY_NAME, and "_sc_bind" (sc_bind);
// `_sc_native_table_checks` says whether the entry checks the entries of neighbour tables.
#ifndef SC_NATIVE_TABLE_CHECKS
#define SC_NATIVE_TABLE_CHECKS 0
#endif
namespace {
PyMethodDef sc_methods[] = {
    {SC_ENTRY_NAME, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&sc_entry)),
     METH_FASTCALL, "Run program " SC_PROGRAM " (arguments in declaration order)."},
    {"_sc_bind", &sc_bind, METH_VARARGS,
     "_sc_bind(bind, explain[, field_value, fields]): a BoundEntry of program " SC_PROGRAM " (see module_entry.h)."},
    {nullptr, nullptr, 0, nullptr}};
PyModuleDef sc_module = {PyModuleDef_HEAD_INIT, SC_STR(STENCILCHAIN_MODULE_NAME),
                         "stencilchain program " SC_PROGRAM, -1, sc_methods,
                         nullptr, nullptr, nullptr, nullptr};
}  // namespace

PyMODINIT_FUNC SC_CAT(PyInit_, STENCILCHAIN_MODULE_NAME)(void) {
    if (!sc_init_globals() || !sc_init_entry()) return nullptr;
    PyObject* m = PyModule_Create(&sc_module);
    if (m == nullptr) return nullptr;
    sc_globals.mismatch = PyErr_NewException(SC_STR(STENCILCHAIN_MODULE_NAME) ".ArgumentMismatch",
                                             PyExc_TypeError, nullptr);
    Py_XINCREF(sc_globals.mismatch);
    if (sc_globals.mismatch == nullptr || PyModule_AddObject(m, "ArgumentMismatch", sc_globals.mismatch) < 0 ||
        PyModule_AddIntConstant(m, "_sc_native_table_checks", SC_NATIVE_TABLE_CHECKS) < 0) {
        Py_DECREF(m);
        return nullptr;
    }
    return m;
}
