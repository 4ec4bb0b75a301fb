"""The call-overhead baseline: an empty C extension call with the same arguments.

`build_empty_call(folder)` compiles, with the C compiler Python was built with, a CPython
extension of one METH_FASTCALL function that takes any arguments and returns None, and
loads it: what calling native code from Python costs at the least.

    python -m benchmarks.empty_call      # builds it in a temporary folder and times it
"""

from __future__ import annotations

import importlib.util
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python benchmarks/empty_call.py`
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from benchmarks._common import per_call_seconds

SOURCE = """\
#define PY_SSIZE_T_CLEAN
#include <Python.h>
static PyObject* empty(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    (void)self; (void)args; (void)nargs;
    Py_RETURN_NONE;
}
static PyMethodDef methods[] = {
    {"empty", (PyCFunction)(void (*)(void))empty, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL}
};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "sc_bench_empty", NULL, -1, methods};
PyMODINIT_FUNC PyInit_sc_bench_empty(void) { return PyModule_Create(&module); }
"""


def build_empty_call(folder: Path) -> Callable[..., None]:
    """Compile the empty extension into `folder` and return its function."""
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "sc_bench_empty.c"
    source.write_text(SOURCE)
    target = folder / f"sc_bench_empty{sysconfig.get_config_var('EXT_SUFFIX')}"
    compiler = shlex.split(sysconfig.get_config_var("CC") or "cc")
    include = sysconfig.get_paths()["include"]
    command = [*compiler, "-O2", "-fPIC", "-shared", f"-I{include}", str(source), "-o", str(target)]
    subprocess.run(command, check=True, capture_output=True)
    spec = importlib.util.spec_from_file_location("sc_bench_empty", target)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    function: Callable[..., None] = module.empty
    return function


def main() -> None:
    import numpy as np

    with tempfile.TemporaryDirectory() as folder:
        empty = build_empty_call(Path(folder))
        f, out = np.ones((8, 8)), np.zeros((8, 8))
        args: list[Any] = [np.ones((8, 8)) for _ in range(25)] + [0.5, 1.0]
        print(
            f"empty call, 2 arrays:             {1e6 * per_call_seconds(lambda: empty(f, out), 100000):.3f} us"
        )
        print(
            f"empty call, 25 arrays + 2 floats: {1e6 * per_call_seconds(lambda: empty(*args), 100000):.3f} us"
        )


if __name__ == "__main__":
    main()
