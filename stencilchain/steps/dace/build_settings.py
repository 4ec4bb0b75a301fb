"""DaCe's configuration for one build, set in the building thread only (DaCe's
configuration is thread-local) and restored exactly afterwards, so that a host
application that also uses DaCe sees no change (through `configuration.dace_configuration`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from stencilchain.program.device import Device
from stencilchain.steps.dace.configuration import dace_configuration
from stencilchain.steps.settings import BuildType


@contextlib.contextmanager
def dace_settings(
    *,
    device: Device,
    build_type: BuildType,
    cxx: str,
    cpu_args: tuple[str, ...],
    cuda_args: tuple[str, ...],
    cuda_architectures: str | None,
    build_jobs: int | None,
    linker_args: tuple[str, ...] = (),
) -> Iterator[None]:
    """Every `compiler.*` setting at its default (a user's .dace.conf or DACE_* variables
    are not part of the build key), then the ones the compiler step decides;
    `linker_args` go to the link of DaCe's library."""
    from dace.config import Config

    settings: dict[tuple[str, ...], object] = {}

    def defaults(meta: dict[str, Any], path: tuple[str, ...]) -> None:
        for key, entry in meta.items():
            if entry.get("type") == "dict":
                defaults(entry["required"], (*path, key))
                continue
            leaf = (*path, key)
            with contextlib.suppress(KeyError):
                settings[leaf] = Config.get_default(*leaf)

    defaults(Config.get_metadata("compiler")["required"], ("compiler",))
    settings.update(
        {
            ("compiler", "build_type"): build_type.cmake_name,
            ("compiler", "build_folder_mode"): "development",
            ("compiler", "use_cache"): False,
            ("compiler", "cpu", "executable"): cxx,
            ("compiler", "cpu", "args"): " ".join(cpu_args),
            ("compiler", "cuda", "args"): " ".join(cuda_args),
            ("compiler", "cuda", "cuda_arch"): cuda_architectures or "",
            ("debugprint",): False,
        }
    )
    if device is Device.GPU:
        settings[("compiler", "cuda", "backend")] = "cuda"
    else:
        # no hash of each nested SDFG (all its JSON, a third of the code generation of a
        # scan) to share the code of equal ones: the translator's CPU SDFGs have none (a
        # scan's blocks of columns differ in their labels), so the code is the same
        settings[("compiler", "unique_functions")] = "none"
    if build_jobs is not None:
        settings[("compiler", "build_jobs")] = build_jobs
    if linker_args:
        settings[("compiler", "linker", "args")] = " ".join(linker_args)
    with dace_configuration(settings):
        yield
