"""SDFGs as canonical text: the JSON of `SDFG.to_json()` without DaCe's random guids.

DaCe gives every SDFG, state and node a random `guid` (a uuid4), and may record the file
and line of the Python code that created each element (`debuginfo`, `source_files`:
absolute paths). The translation's output must be the same text for the same program in
every process and on every machine, because it enters the translation cache key and the
build-folder key, so these keys are dropped. DaCe draws new guids when the text is read
back (`sdfg_from_source`) and leaves the debug information empty.

`import dace` happens inside the functions: importing this module does not import DaCe.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import dace

# Keys that differ between processes or machines for the same SDFG: the random guids, and
# the debug information (absolute paths and line numbers of the Python code that built it).
_VOLATILE_KEYS = frozenset({"guid", "debuginfo", "source_files"})


def canonical_sdfg_json(value: Any) -> Any:
    """`value` (the result of `SDFG.to_json()`) without its volatile keys, recursively."""
    if isinstance(value, dict):
        return {k: canonical_sdfg_json(v) for k, v in value.items() if k not in _VOLATILE_KEYS}
    if isinstance(value, (list, tuple)):
        return [canonical_sdfg_json(v) for v in value]
    return value


def sdfg_to_source(sdfg: dace.SDFG) -> str:
    """The SDFG as canonical JSON text: equal SDFGs built in any process give equal text."""
    return json.dumps(canonical_sdfg_json(sdfg.to_json()), separators=(",", ":"))


def sdfg_from_source(text: str, *, validate: bool = True) -> dace.SDFG:
    """The SDFG of a `ProgramSource.source_code` of language "sdfg" (fresh guids),
    validated unless `validate` is False."""
    import dace

    sdfg = dace.SDFG.from_json(json.loads(text))
    if validate:
        sdfg.validate()
    return sdfg
