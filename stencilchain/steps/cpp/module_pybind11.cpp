// The extension module inside PYBIND11_MODULE (flavor "pybind11"): the same sc_entry,
// named SC_ENTRY_NAME.
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
