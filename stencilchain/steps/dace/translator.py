"""DaCe translation: program IR -> SDFG, built with DaCe's Python API and serialized as text.

The step (`DaCeTranslator`): its settings, DaCe's auto-optimizer and the transients of an
external workspace. The SDFG is built by construct: `calling_convention` (the names the
caller passes), `program_sdfg` (symbols, arrays, one block per call), `maps` and
`tiled_maps` (field-operator calls), `scans` (scan calls), `tasklets` (their C++ code),
sharing one `build_context.BuildContext`.

Halo check: the SDFG does not check that a domain's reads stay inside the arrays (the
embedded executor raises DomainError there). The reads reach `ir.DimDomain.halo` below
the start and above the stop, and those inside a concat_where's branch its `windows`; the
caller (the Python call path of the DaCe toolchain) must do the check with
`stencilchain.program.domains.resolve_domain` on the sizes before calling the SDFG.
Inferred domains stay inside by construction; explicit ones can leave the arrays (a start
counted from the end on a small array, a stop beyond the size).

`import dace` happens only inside functions: importing this module does not import DaCe.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING

from stencilchain.program import ir
from stencilchain.program.device import Device
from stencilchain.steps.checks import require_type
from stencilchain.steps.dace.build_context import BuildContext
from stencilchain.steps.dace.calling_convention import check_names, field_params, stride_symbol
from stencilchain.steps.dace.configuration import sdfg_construction
from stencilchain.steps.dace.extra import require_dace
from stencilchain.steps.dace.lock import DACE_LOCK
from stencilchain.steps.dace.optimization import optimize_for_cpu, simplify
from stencilchain.steps.dace.program_sdfg import program_sdfg
from stencilchain.steps.dace.sdfg_text import sdfg_from_source, sdfg_to_source
from stencilchain.steps.settings import DataLayout
from stencilchain.steps.stages import ProgramSource, step_settings

if TYPE_CHECKING:
    import dace

__all__ = [
    "ACCEPTED_AUTO_OPTIMIZE_ARGS",
    "DERIVED_AUTO_OPTIMIZE_ARGS",
    "DaCeTranslator",
    "sdfg_from_source",
]


# The keyword arguments of dace.transformation.auto.auto_optimize.auto_optimize (DaCe 2.0)
# that the translator sets itself, with the config setting that decides each.
DERIVED_AUTO_OPTIMIZE_ARGS: dict[str, str] = {
    "sdfg": "it is the translation of the program",
    "device": "it is derived from the config's device (STENCILCHAIN_DEVICE); change the device there",
    "use_gpu_storage": (
        "it is derived from the config's device (STENCILCHAIN_DEVICE): the arrays live on "
        "the GPU exactly when the device is gpu; change the device there"
    ),
    "symbols": (
        "the constant symbols are derived from the config's data_layout "
        "(STENCILCHAIN_DATA_LAYOUT: unit_stride makes the innermost strides 1); change the "
        "data layout there. Sizes and other strides are never specialized: the SDFG must "
        "run on every array the argument checks accept"
    ),
}
# The ones a user may pass, with the type of their value.
ACCEPTED_AUTO_OPTIMIZE_ARGS: dict[str, type] = {"validate": bool, "validate_all": bool}
_UNSUPPORTED_AUTO_OPTIMIZE_ARGS: dict[str, str] = {
    "find_fast_library_fn": (
        "a callable cannot be part of the translation cache key, and the translated SDFGs "
        "have no library nodes for it to choose implementations of"
    ),
}


# --- the step ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DaCeTranslator:
    """Program IR -> ProgramSource holding the program's SDFG as canonical JSON ("sdfg").

    `device` has no default on purpose: a builder that forgets it fails.
    `auto_optimize` runs DaCe's auto-optimizer with `auto_optimize_args` (keyword arguments,
    as pairs) on top of what the translator derives from the config: the target device,
    GPU storage of the arrays, and the constant symbols of the data layout; passing one of
    those (or an argument the translator does not know) is a ValueError at construction.
    On the CPU it runs the auto-optimizer less the steps that find nothing to do in the
    translator's SDFGs (`optimization.optimize_for_cpu`; the result is DaCe's, a test
    checks it), and always validates the result.
    `disable_transforms` turns off stencilchain's IR transforms and DaCe's simplification:
    field-operator calls are still inlined (a tasklet computes one flat expression), but
    constants are not folded, common subexpressions are not shared, and the SDFG is not
    simplified (except by the auto-optimizer, which always simplifies).
    `data_layout` UNIT_STRIDE makes every innermost stride the constant 1.
    `external_workspace` gives every transient array (the program's temporaries and any
    the optimizer adds) External lifetime, so that the caller provides their memory; the
    ProgramSource then says `workspace=True` if any remain.
    """

    device: Device
    auto_optimize: bool = True
    auto_optimize_args: tuple[tuple[str, object], ...] = ()
    disable_transforms: bool = False
    data_layout: DataLayout = DataLayout.STRIDED
    external_workspace: bool = False

    def __post_init__(self) -> None:
        require_dace("DaCeTranslator")
        require_type(self, "device", Device)
        for name in ("auto_optimize", "disable_transforms", "external_workspace"):
            require_type(self, name, bool)
        require_type(self, "data_layout", DataLayout)
        args = self.auto_optimize_args
        if isinstance(args, Mapping):
            args = tuple(args.items())
        if not isinstance(args, tuple) or not all(
            isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], str) for a in args
        ):
            raise TypeError(
                "DaCeTranslator.auto_optimize_args must be a tuple of (name, value) pairs "
                f"(or a mapping of names to values), got {self.auto_optimize_args!r}"
            )
        seen: set[str] = set()
        for key, value in args:
            _check_auto_optimize_arg(key, value)
            if key in seen:
                raise ValueError(f"DaCeTranslator.auto_optimize_args: '{key}' is given twice")
            seen.add(key)
        # one spelling per setting: equal settings give equal steps and cache keys
        object.__setattr__(self, "auto_optimize_args", tuple(sorted(args)))

    def __call__(self, program: ir.Program, /) -> ProgramSource:
        with DACE_LOCK:  # DaCe's Python side is not thread-safe
            sdfg = self.build_sdfg(program)
            text = sdfg_to_source(sdfg)
            workspace = bool(_external_transients(sdfg))
        return ProgramSource(
            program=program,
            entry_point=program.name,
            source_code=text,
            language="sdfg",
            device=self.device,
            workspace=workspace,
            settings=step_settings(self),
        )

    def prepare(self) -> None:
        """The one-time set-up, done before translations run side by side: import DaCe
        and its auto-optimizer (their first import costs seconds), and the parts of sympy
        that DaCe's LoopToMap reaches through sympy's printer and `simplify` on the first
        loop it sees (a scan's levels; most of a second)."""
        with DACE_LOCK:
            import dace

            if self.auto_optimize:
                import dace.transformation.auto.auto_optimize  # noqa: F401

                for module in ("sympy.codegen.ast", "sympy.physics.units"):
                    importlib.import_module(module)

    def derived_auto_optimize_args(self, program: ir.Program) -> dict[str, object]:
        """What the translator passes to auto_optimize besides the SDFG (the device as text)."""
        return {
            "device": self.device.value,
            "use_gpu_storage": self.device is Device.GPU,
            "symbols": self._constant_symbols(program),
        }

    def _constant_symbols(self, program: ir.Program) -> dict[str, int]:
        """The symbols the data layout fixes: with UNIT_STRIDE every innermost stride is 1."""
        return {
            stride_symbol(name, len(ftype.dims) - 1): 1
            for name, ftype in field_params(program)
            if self.data_layout is DataLayout.UNIT_STRIDE
        }

    def build_sdfg(self, program: ir.Program) -> dace.SDFG:
        """The (validated, optionally optimized) SDFG of `program`, built and optimized under
        `configuration.sdfg_construction` (no line information in the text)."""
        check_names(program, self.data_layout)
        with sdfg_construction():
            context = BuildContext.of(
                program,
                device=self.device,
                data_layout=self.data_layout,
                auto_optimize=self.auto_optimize,
                disable_transforms=self.disable_transforms,
                external_workspace=self.external_workspace,
            )
            sdfg = program_sdfg(context)
            self._optimize(sdfg, program)
            if self.external_workspace:
                _externalize_transients(sdfg, self.device)
            sdfg.validate()
        return sdfg

    def _optimize(self, sdfg: dace.SDFG, program: ir.Program) -> None:
        import dace

        gpu = self.device is Device.GPU
        if self.auto_optimize and not gpu:
            # DaCe's auto_optimize less what finds nothing to do here (optimization.py);
            # the result is validated below in any case
            optimize_for_cpu(
                sdfg,
                symbols=self._constant_symbols(program),
                validate=False,
                validate_all=bool(dict(self.auto_optimize_args).get("validate_all", False)),
            )
        elif self.auto_optimize:
            from dace.transformation.auto.auto_optimize import auto_optimize

            auto_optimize(
                sdfg,
                dace.DeviceType.GPU,
                symbols=self._constant_symbols(program),
                use_gpu_storage=True,
                **dict(self.auto_optimize_args),
            )
        elif gpu:
            from dace.transformation.auto.auto_optimize import apply_gpu_storage

            apply_gpu_storage(sdfg)
            sdfg.apply_gpu_transformations(simplify=not self.disable_transforms)
        elif not self.disable_transforms:
            simplify(sdfg)


def _externalize_transients(sdfg: dace.SDFG, device: Device) -> None:
    """Give every transient array of `sdfg` and its nested SDFGs External lifetime, in the
    device's memory (a transient of another storage, e.g. a GPU kernel's registers, stays)."""
    import dace

    heap = dace.StorageType.GPU_Global if device is Device.GPU else dace.StorageType.CPU_Heap
    movable = {heap} if device is Device.GPU else {heap, dace.StorageType.Default}
    for _, _, desc in sdfg.arrays_recursive():
        if (
            desc.transient
            and type(desc) is dace.data.Array
            and desc.storage in movable
            and desc.lifetime is not dace.AllocationLifetime.External
        ):
            desc.storage = heap
            desc.lifetime = dace.AllocationLifetime.External


def _external_transients(sdfg: dace.SDFG) -> list[str]:
    """The names of the transients whose memory the caller provides."""
    import dace

    return [
        name
        for _, name, desc in sdfg.arrays_recursive()
        if desc.transient and desc.lifetime is dace.AllocationLifetime.External
    ]


def _check_auto_optimize_arg(key: str, value: object) -> None:
    where = f"DaCeTranslator.auto_optimize_args: '{key}'"
    if key in DERIVED_AUTO_OPTIMIZE_ARGS:
        raise ValueError(
            f"{where} cannot be set: {DERIVED_AUTO_OPTIMIZE_ARGS[key]} "
            "(the translator derives it from the toolchain config, so that the SDFG agrees "
            "with the config the arguments are checked against)"
        )
    if key in _UNSUPPORTED_AUTO_OPTIMIZE_ARGS:
        raise ValueError(f"{where} is not supported: {_UNSUPPORTED_AUTO_OPTIMIZE_ARGS[key]}")
    expected = ACCEPTED_AUTO_OPTIMIZE_ARGS.get(key)
    if expected is None:
        raise ValueError(
            f"{where} is not an argument of DaCe's auto_optimize that can be set; accepted: "
            f"{', '.join(sorted(ACCEPTED_AUTO_OPTIMIZE_ARGS))}"
        )
    if not isinstance(value, expected):
        raise ValueError(f"{where} must be a {expected.__name__}, got {value!r}")
