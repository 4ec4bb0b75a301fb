// The extension module inside PYBIND11_MODULE (flavor "pybind11"): the same sc_entry,
// named SC_ENTRY_NAME, and "_sc_bind" (sc_bind).
#include <pybind11/pybind11.h>

#ifndef SC_NATIVE_TABLE_CHECKS
#define SC_NATIVE_TABLE_CHECKS 0
#endif

namespace {
PyMethodDef sc_method = {SC_ENTRY_NAME, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&sc_entry)),
                         METH_FASTCALL, "Run program " SC_PROGRAM " (arguments in declaration order)."};
PyMethodDef sc_bind_method = {"_sc_bind", &sc_bind, METH_VARARGS,
                              "_sc_bind(bind, explain[, field_value, fields]): a BoundEntry of program " SC_PROGRAM " (see module_entry.h)."};
}  // namespace

PYBIND11_MODULE(STENCILCHAIN_MODULE_NAME, m) {
    if (!sc_init_globals() || !sc_init_entry()) throw pybind11::error_already_set();
    pybind11::object mismatch = pybind11::reinterpret_steal<pybind11::object>(PyErr_NewException(
        SC_STR(STENCILCHAIN_MODULE_NAME) ".ArgumentMismatch", PyExc_TypeError, nullptr));
    sc_globals.mismatch = mismatch.inc_ref().ptr();
    m.attr("ArgumentMismatch") = mismatch;
    m.attr("_sc_native_table_checks") = SC_NATIVE_TABLE_CHECKS;
    // the module is the functions' __self__, as in a module made by PyModule_Create
    m.add_object(SC_ENTRY_NAME, pybind11::reinterpret_steal<pybind11::object>(
                                    PyCFunction_NewEx(&sc_method, m.ptr(), m.ptr())));
    m.add_object("_sc_bind", pybind11::reinterpret_steal<pybind11::object>(
                             PyCFunction_NewEx(&sc_bind_method, m.ptr(), m.ptr())));
}
