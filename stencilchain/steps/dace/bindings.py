"""DaCe bindings: ProgramSource("sdfg") -> DaCeExtensionSource.

The Python side is the argument-checking module of both families
(`stencilchain.steps.cpp.extension_module`) around a C++ shim that defines
`sc_run_<program>` (see `stencilchain.steps.dace.shim`), so a call checks its arguments
in C (exact dtype and ndim, sizes per dimension, writeable outputs, overlap, unit stride)
with GTFN's messages, checks the domains with the same code as GTFN, and then calls the
DaCe-compiled SDFG through function pointers, with the argument vector built in C from
the pointers, strides, sizes and scalars of the call. DaCe's generic
`CompiledSDFG.__call__` is never on the call path.

This step does not import DaCe: the bindings run on every first call of a program in a
process, cached or not, and importing DaCe takes about a second. Which arguments the
compiled SDFG takes, and in which order, is decided by DaCe's code generator, so the
adapter that maps the shim's values onto them is written by `DaCeCompiler` during the
build (the SDFG text is part of the source, hence of the build key).
"""

from __future__ import annotations

import dataclasses

from stencilchain.program.device import Device
from stencilchain.program.hashing import sha256_of
from stencilchain.steps.checks import require_non_negative_int, require_type
from stencilchain.steps.cpp.extension_module import extension_module_source
from stencilchain.steps.dace.shim import shim_source
from stencilchain.steps.settings import DataLayout
from stencilchain.steps.stages import BindingSource, ExtensionSource, ProgramSource, step_settings

__all__ = ["SHIM_LIBRARY_DEP", "DaCeBindings", "DaCeExtensionSource"]

# The shim's `library_deps`: it needs the DaCe library (and the adapter that calls it),
# which only DaCeCompiler provides (CMakeCompiler rejects an unknown library).
SHIM_LIBRARY_DEP = "dace-sdfg"


@dataclasses.dataclass(frozen=True)
class DaCeExtensionSource(ExtensionSource):
    """An ExtensionSource whose program is a DaCe SDFG.

    `program_source` is the C++ shim (language "cpp") and `binding_source` the
    argument-checking module around it; `sdfg_source` is the translator's SDFG (language "sdfg"),
    which the compiler builds with DaCe. The fingerprint covers all three.
    """

    sdfg_source: ProgramSource

    def fingerprint(self) -> str:
        return sha256_of(super().fingerprint(), self.sdfg_source.fingerprint())


@dataclasses.dataclass(frozen=True)
class DaCeBindings:
    """ProgramSource("sdfg") -> DaCeExtensionSource: the argument-checking module around a
    C++ shim that checks the domains and calls the SDFG (see the module docstring)."""

    device: Device
    data_layout: DataLayout = DataLayout.STRIDED
    openmp_threshold: int = 65536  # calls over domains of fewer points: one thread (CPU)

    def __post_init__(self) -> None:
        require_type(self, "device", Device)
        require_type(self, "data_layout", DataLayout)
        require_non_negative_int(self, "openmp_threshold")

    def __call__(self, source: ProgramSource, /) -> DaCeExtensionSource:
        if not isinstance(source, ProgramSource):
            raise TypeError(f"DaCeBindings takes a ProgramSource, got {type(source).__name__}")
        if source.language != "sdfg":
            raise ValueError(
                f"DaCeBindings wraps SDFGs (language 'sdfg'); the source of "
                f"{source.entry_point!r} is in {source.language!r}"
            )
        if source.device is not self.device:
            raise ValueError(
                f"DaCe bindings for {self.device} cannot wrap an SDFG generated for {source.device}"
            )
        shim = ProgramSource(
            program=source.program,
            entry_point=source.entry_point,
            source_code=shim_source(
                source.program, self.device, self.openmp_threshold, source.workspace
            ),
            language="cpp",
            device=source.device,
            library_deps=(SHIM_LIBRARY_DEP,),
            workspace=source.workspace,
            # the program source of the extension stands for the translation: build markers
            # record its settings as the translation's (this step's are the binding source's)
            settings=source.settings,
        )
        module = extension_module_source(
            shim, device=self.device, data_layout=self.data_layout, flavor="capi"
        )
        language = "cuda" if self.device is Device.GPU else "cpp"
        return DaCeExtensionSource(
            program_source=shim,
            binding_source=BindingSource(module, language, settings=step_settings(self)),
            sdfg_source=source,
        )
