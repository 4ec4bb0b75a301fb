"""gt4py names that stencilchain cannot run: importing them works (so a module that imports
them but does not use them runs), using one is a DefinitionError that names it and says
why and what to write instead."""

from __future__ import annotations

from typing import Any, NoReturn

from stencilchain.errors import DefinitionError


class Unsupported:
    """A gt4py name with no counterpart here; calling, indexing or reading it fails."""

    def __init__(self, name: str, reason: str) -> None:
        self._name = name
        self._reason = reason

    def _fail(self) -> NoReturn:
        raise DefinitionError(
            f"gt4py's {self._name} is not supported by stencilchain.compat.gt4py: {self._reason}"
        )

    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._fail()

    def __getitem__(self, item: object) -> NoReturn:
        self._fail()

    def __getattr__(self, name: str) -> NoReturn:
        if name.startswith("__"):
            raise AttributeError(name)
        self._fail()

    def __repr__(self) -> str:
        return f"<unsupported gt4py name {self._name}>"


_DOMAIN = (
    "write a call's domain as a dict {Dim: (start, stop)}, or slice out= (out[1:-1, :]), "
    "and a field's domain as as_field's dict {Dim: size} or {Dim: (start, stop)}"
)

UNSUPPORTED: dict[str, Unsupported] = {
    name: Unsupported(name, reason)
    for name, reason in {
        "Domain": _DOMAIN,
        "domain": _DOMAIN,
        "UnitRange": _DOMAIN,
        "unit_range": _DOMAIN,
        "CartesianConnectivity": (
            "a Cartesian offset's provider is its Dimension, offset_provider={'Koff': K}"
        ),
        "FieldConstructor": "use as_field, zeros, ones, full or empty",
        "DeviceType": "a toolchain's device says where arrays live (run_gtfn_gpu takes CuPy arrays)",
        "Device": "a toolchain's device says where arrays live (run_gtfn_gpu takes CuPy arrays)",
        "iterator": "gt4py's iterator IR is not a front end of stencilchain",
        "program_processors": "pass a stencilchain toolchain as backend= or to with_backend",
        "common": "its public names are this module's (gtx.Dimension, gtx.Field, ...)",
        "ffront": "its public names are this module's (gtx.field_operator, gtx.FieldOffset, ...)",
        "typing": "annotate with gtx.Field[gtx.Dims[...], dtype]",
        "is_scalar_type": "a scalar argument is a Python or NumPy number of the parameter's dtype",
        "CUPY_DEVICE_TYPE": "a toolchain's device says where arrays live",
    }.items()
}


def wait_for_compilation() -> None:
    """gt4py compiles in the background; stencilchain compiles at the first call (or with
    compile_many), so there is nothing to wait for."""
