"""DaCe's code of one SDFG, and what the shim's adapter needs to know of it: the exact C
parameters of the functions DaCe exports, whether its init function reads the symbols,
and the storage of the external transients (the workspace), if any.

Run it under the DaCe lock, with the build's DaCe settings in place: DaCe's code
generator is not thread-safe.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stencilchain.program.device import Device
from stencilchain.program.hashing import sha256_of
from stencilchain.steps.cpp.package_text import package_text
from stencilchain.steps.dace.shim import CArgument
from stencilchain.steps.stages import ProgramSource

if TYPE_CHECKING:
    import dace

# What the link of a CPU SDFG's library adds: its OpenMP regions go through the wrapper
# that serial_regions.cpp (in its code) defines, which runs a region of one thread as a
# plain call.
SERIAL_REGIONS_LINK_FLAGS = ("-Wl,--wrap=GOMP_parallel",)


class GenerationError(Exception):
    """DaCe's code is not what stencilchain can call; the message says why."""


@dataclasses.dataclass(frozen=True)
class GeneratedProgram:
    """DaCe's code of one SDFG, written to its program folder, not compiled yet."""

    sdfg: Any  # dace.SDFG
    sdfg_name: str
    program_folder: Path
    program_args: tuple[CArgument, ...]
    init_args: tuple[CArgument, ...]
    init_reads_symbols: bool
    workspace_storage: str | None  # the storage of the external transients, if any


def generate_program(
    source: ProgramSource, program_folder: Path, *, serial_regions: bool = True
) -> GeneratedProgram:
    """Deserialize the SDFG of `source` and generate its code into `program_folder`; a
    CPU program's code holds the one-thread region wrapper unless not `serial_regions`
    (a batch's unit holds it once for all its programs, see batch_unit).

    DaCe's own errors propagate as they are; GenerationError if the code is not what the
    shim can call (or has external transients its translation did not ask for)."""
    from dace.codegen import codegen
    from dace.codegen import compiler as dace_compiler

    from stencilchain.steps.dace.sdfg_text import sdfg_from_source

    entry = source.entry_point
    # not validated again: the text is the translator's, which validated the SDFG before
    # writing it (the same code either way, about 0.1 s less of hdiff's generation)
    sdfg = sdfg_from_source(source.source_code, validate=False)
    sdfg.build_folder = str(program_folder)
    if source.device is Device.CPU and serial_regions:  # SERIAL_REGIONS_LINK_FLAGS link it
        sdfg.append_global_code(package_text("stencilchain.steps.dace", "serial_regions.cpp"))
    # SDFG.compile would also rename an SDFG whose library this process loaded; the
    # module dlopens its library privately (RTLD_LOCAL), so equal names never clash
    code_objects = codegen.generate_code(sdfg, validate=False)
    # without the SDFG, DaCe writes neither its copy nor its source map (see _write_sdfg)
    dace_compiler.generate_program_folder(
        None, code_objects, str(program_folder), folder_mode="development"
    )
    _write_sdfg(program_folder, sdfg.name, source.source_code)
    code = "\n".join(str(obj.code) for obj in code_objects)
    name = sdfg.name
    storages = sorted(set(re.findall(r"__dace_get_external_memory_size_(\w+)\(", code)))
    if len(storages) > 1 or bool(storages) != source.workspace:
        raise GenerationError(
            f"the SDFG of {entry!r} has external transients in {storages or 'no storage'}, "
            + (
                "but stencilchain supports one workspace, in the device's memory"
                if source.workspace
                else "but its translation did not ask for a workspace"
            )
        )
    return GeneratedProgram(
        sdfg=sdfg,
        sdfg_name=name,
        program_folder=program_folder,
        program_args=_exported_params(
            code, rf"void __program_{name}\({name}_state_t \*__state", entry
        ),
        init_args=_exported_params(code, rf"{name}_state_t \*__dace_init_{name}\(", entry),
        init_reads_symbols=_init_reads_symbols(sdfg),
        workspace_storage=storages[0] if storages else None,
    )


def _write_sdfg(program_folder: Path, name: str, text: str) -> None:
    """The SDFG's text beside its code (`program.sdfg`, which DaCe's tools open), and the
    `include/hash.h` its code includes (the hash labels DaCe's instrumentation reports).
    DaCe's generate_program_folder would serialize the SDFG again, hash it and compress it
    for the same: a third of the code generation of a small program."""
    (program_folder / "program.sdfg").write_text(text)
    include = program_folder / "include"
    include.mkdir(exist_ok=True)
    (include / "hash.h").write_text(f'#define __HASH_{name} "{sha256_of(text)}"\n')


def _exported_params(code: str, head: str, entry: str) -> tuple[CArgument, ...]:
    """The parameters after `head` (a regex) in DaCe's exported declaration, by name."""
    match = re.search(rf"DACE_EXPORTED {head}(?:, )?([^)]*)\)", code)
    if match is None:
        raise GenerationError(
            f"DaCe's code for {entry!r} lacks the exported function {head!r} stencilchain calls "
            "(an unsupported DaCe version?)"
        )
    params: list[CArgument] = []
    for text in filter(None, (p.strip() for p in match[1].split(","))):
        name = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*$", text)
        if name is None:
            raise GenerationError(f"cannot read DaCe's parameter {text!r} of {entry!r}")
        params.append(CArgument(declaration=text, name=name[1]))
    return tuple(params)


def _init_reads_symbols(sdfg: dace.SDFG) -> bool:
    """Whether DaCe's init function uses the symbol values: it allocates persistent and
    global transients and runs init code, nothing else (external transients live in the
    caller's workspace)."""
    from dace import dtypes
    from dace.sdfg import nodes

    persistent = (dtypes.AllocationLifetime.Persistent, dtypes.AllocationLifetime.Global)
    reads = False
    for _, _name, desc in sdfg.arrays_recursive():
        if not desc.transient:
            continue
        reads = reads or desc.lifetime in persistent
    for sd in sdfg.all_sdfgs_recursive():
        reads = reads or any(block.as_string.strip() for block in sd.init_code.values())
    for node, _ in sdfg.all_nodes_recursive():
        if isinstance(node, nodes.Tasklet) and node.code_init.as_string.strip():
            reads = True
    return reads
