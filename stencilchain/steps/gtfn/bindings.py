"""GTFN bindings: the Python extension module around a generated program function.

The module is the one both families use (`stencilchain.steps.cpp.extension_module`):
it checks every argument and calls `sc_run_<program>`, which the GTFN translation
defines.
"""

from __future__ import annotations

import dataclasses

from stencilchain.program.device import Device
from stencilchain.steps.checks import require_choice, require_type
from stencilchain.steps.cpp.extension_module import (
    FLAVORS,
    extension_module_deps,
    extension_module_source,
)
from stencilchain.steps.settings import DataLayout
from stencilchain.steps.stages import BindingSource, ExtensionSource, ProgramSource, step_settings

__all__ = ["FLAVORS", "GTFNBindingsStep"]


@dataclasses.dataclass(frozen=True)
class GTFNBindingsStep:
    """ProgramSource -> ExtensionSource: the module that checks arguments and calls the program.

    `flavor` is "capi" (the CPython API) or "pybind11" (the same entry point inside a
    PYBIND11_MODULE; docs/adr/0004-bindings-on-the-cpython-api.md).
    """

    device: Device
    data_layout: DataLayout = DataLayout.STRIDED
    flavor: str = "capi"

    def __post_init__(self) -> None:
        require_type(self, "device", Device)
        require_type(self, "data_layout", DataLayout)
        require_choice(self, "flavor", FLAVORS)

    def __call__(self, source: ProgramSource, /) -> ExtensionSource:
        if source.device is not self.device:
            raise ValueError(
                f"bindings for {self.device} cannot wrap code generated for {source.device}"
            )
        code = extension_module_source(
            source, device=self.device, data_layout=self.data_layout, flavor=self.flavor
        )
        language = "cuda" if self.device is Device.GPU else "cpp"
        binding = BindingSource(
            code, language, extension_module_deps(self.flavor), settings=step_settings(self)
        )
        return ExtensionSource(source, binding)
