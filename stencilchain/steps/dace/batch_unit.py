"""One DaCe program folder for a batch of programs: the CPU code DaCe generated for each,
compiled as ONE unit into one library.

Each program's generated file is included inside a namespace of its own, so that the
functions DaCe does not export (`__program_<sdfg>_internal`, nested SDFGs' functions)
never clash; the exported ones (`extern "C"`, named after the SDFG) keep their C names,
which the shims look up. The system headers the files include are included first, at
file scope (their guards make the includes inside the namespaces empty), and the
one-thread region wrapper (serial_regions.cpp) once: the programs' code is generated
without it. See docs/adr/0058-dace-batch-units.md.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from stencilchain.steps.cpp.package_text import package_text

_CPU_TARGET = "cpu"
_SYSTEM_INCLUDE = re.compile(r"^\s*#\s*include\s*<[^>]+>\s*$", re.MULTILINE)


class NotBatchable(Exception):
    """A program's generated code cannot go into a batch's unit; the message says why."""


def cpu_files(program_folder: Path) -> list[Path]:
    """The files of DaCe's code in `program_folder` (NotBatchable unless all are CPU
    code: another target is built by its own compiler, not in the batch's unit)."""
    files = []
    for line in (program_folder / "dace_files.csv").read_text().splitlines():
        if not line.strip():
            continue
        target, target_type, name = line.strip().split(",")
        if target != _CPU_TARGET or target_type:
            raise NotBatchable(f"DaCe generated code for its target {target!r}: {name}")
        files.append(program_folder / "src" / target / name)
    if (program_folder / "dace_environments.csv").read_text().strip():
        raise NotBatchable("DaCe's code needs library environments")
    return files


def unit_text(members: Sequence[Sequence[Path]], *, serial_regions: bool) -> str:
    """The batch's unit: the files of each member (a list of absolute paths) in a
    namespace of its own, after the system headers they include and, with
    `serial_regions`, the one-thread region wrapper."""
    headers: dict[str, None] = {"#include <dace/dace.h>": None}
    for files in members:
        for path in files:
            for match in _SYSTEM_INCLUDE.finditer(path.read_text()):
                headers.setdefault(match[0].strip(), None)
    lines = ["/* stencilchain: the DaCe code of a batch of programs, one unit */", *headers]
    if serial_regions:
        lines.append(package_text("stencilchain.steps.dace", "serial_regions.cpp"))
    for index, files in enumerate(members):
        lines.append(f"namespace sc_batch_member_{index} {{")
        lines += [f'#include "{path}"' for path in files]
        lines.append(f"}}  // namespace sc_batch_member_{index}")
    return "\n".join(lines) + "\n"


def write_program_folder(
    folder: Path, name: str, members: Sequence[Sequence[Path]], *, serial_regions: bool
) -> None:
    """Write DaCe's program folder of the batch's unit `name` (its code, and the lists of
    files and environments DaCe's build reads) into `folder`."""
    (folder / "src" / _CPU_TARGET).mkdir(parents=True)
    text = unit_text(members, serial_regions=serial_regions)
    (folder / "src" / _CPU_TARGET / f"{name}.cpp").write_text(text)
    (folder / "dace_files.csv").write_text(f"{_CPU_TARGET},,{name}.cpp\n")
    (folder / "dace_environments.csv").write_text("")
