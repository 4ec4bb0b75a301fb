"""What both families emit in C++: one place for each, so that GTFN and DaCe agree.

`signature` (the program function's C++ signature), `domain_checks` (each call's domain
against the arrays), `literals` and `expressions` (the one expression emitter, with the
policy knobs the families need), `extension_module` (the CPython argument-checking module)
and `package_text` (fixed C++ text, kept in .h/.cpp files beside the modules that use it).
GTFN and DaCe import from here and never from each other.
"""
