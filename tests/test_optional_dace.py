"""DaCe is an optional dependency (the `dace` extra).

Without it, stencilchain imports, and the GTFN toolchains build, compile and run; the
DaCe toolchains fail when they are built, with an ImportError (MissingExtraError) that
names the extra to install. With it, importing stencilchain does not import DaCe (about a
second): only translating (or building) a DaCe program does.

Each check runs in a fresh interpreter. "Without DaCe" is simulated two ways before
stencilchain is imported: a `sys.meta_path` finder that hides DaCe from every other finder
(as if it were not installed: `importlib.util.find_spec("dace")` is None and importing it
raises ModuleNotFoundError), or `sys.modules["dace"] = None` (importing it raises
ImportError).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

# Prepended to every "without DaCe" script: hides DaCe, then checks that it is hidden.
BLOCKERS = {
    "meta_path": """
        import importlib.abc, importlib.util, sys

        class HideDaCe(importlib.abc.MetaPathFinder):
            '''Wraps a finder and finds nothing for dace: as if DaCe were not installed.'''

            def __init__(self, inner):
                self.inner = inner

            def find_spec(self, name, path=None, target=None):
                if name == "dace" or name.startswith("dace."):
                    return None
                return self.inner.find_spec(name, path, target)

            def find_distributions(self, *args, **kwargs):  # importlib.metadata
                find = getattr(self.inner, "find_distributions", None)
                if find is None:
                    return []
                return [d for d in find(*args, **kwargs) if (d.metadata["Name"] or "").lower() != "dace"]

            def invalidate_caches(self):
                if hasattr(self.inner, "invalidate_caches"):
                    self.inner.invalidate_caches()

        sys.meta_path[:] = [HideDaCe(f) if hasattr(f, "find_spec") else f for f in sys.meta_path]
        assert importlib.util.find_spec("dace") is None
        import importlib.metadata
        try:
            importlib.metadata.version("dace")
        except importlib.metadata.PackageNotFoundError:
            pass
        else:
            raise AssertionError("the dace distribution is not hidden")
        try:
            import dace
        except ModuleNotFoundError:
            pass
        else:
            raise AssertionError("dace is not hidden")
        """,
    "sys_modules_none": """
        import sys

        sys.modules["dace"] = None
        try:
            import dace
        except ImportError:
            pass
        else:
            raise AssertionError("dace is not hidden")
        """,
}

WITHOUT_DACE = """
    import json, sys
    import numpy as np

    report = {}

    def attempt(what, run):
        try:
            value = run()
        except Exception as error:
            report[what] = {
                "error": type(error).__name__,
                "mro": [c.__name__ for c in type(error).__mro__],
                "message": str(error),
            }
        else:
            report[what] = {"ok": value}

    import stencilchain
    import stencilchain.backends
    import stencilchain.containers
    from stencilchain.containers import build_container

    def gtfn_backend():
        toolchain = stencilchain.backends.run_gtfn_cpu
        return [toolchain.name, toolchain.family]

    def gtfn_compile_and_run():
        from stencilchain.examples import laplacian
        inputs = laplacian.make_inputs(laplacian.DEFAULT_SHAPE, np.random.default_rng(0))
        expected = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in inputs.items()}
        laplacian.PROGRAM(*expected.values())
        laplacian.PROGRAM.with_backend(stencilchain.backends.run_gtfn_cpu)(*inputs.values())
        return all(
            np.allclose(inputs[k], expected[k], rtol=1e-13, atol=1e-13)
            for k, v in inputs.items() if isinstance(v, np.ndarray)
        )

    attempt("gtfn_backend", gtfn_backend)
    attempt("gtfn_compile_and_run", gtfn_compile_and_run)
    attempt("dace_config", lambda: build_container().dace.toolchain_config().auto_optimize)
    attempt("container_dace_toolchain", lambda: build_container().dace.toolchain().name)
    attempt("backends_run_dace_cpu", lambda: stencilchain.backends.run_dace_cpu.name)
    attempt("backends_run_dace_cpu_again", lambda: stencilchain.backends.run_dace_cpu.name)
    attempt("backends_run_dace_cpu_noopt", lambda: stencilchain.backends.run_dace_cpu_noopt.name)
    def flat_front_end():
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return stencilchain.containers.make_dace_backend(environ={}).name

    attempt("make_dace_backend", flat_front_end)
    report["dace_imported"] = sys.modules.get("dace") is not None
    print(json.dumps(report))
"""


def run_python(script: str, cache_dir: Path) -> Any:
    """Run `script` in a fresh interpreter (settings only from the test environment); it
    prints one JSON line, returned here."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("STENCILCHAIN_")}
    env.update(STENCILCHAIN_CACHE_DIR=str(cache_dir), STENCILCHAIN_CACHE_LIFETIME="persistent")
    proc = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module", params=list(BLOCKERS))
def without_dace(request: pytest.FixtureRequest, session_cache_dir: Path) -> dict[str, Any]:
    """What stencilchain does in a process where DaCe cannot be imported."""
    script = textwrap.dedent(BLOCKERS[request.param]) + textwrap.dedent(WITHOUT_DACE)
    return run_python(script, session_cache_dir)  # type: ignore[no-any-return]


def test_import_and_gtfn_work_without_dace(without_dace: dict[str, Any]) -> None:
    assert without_dace["gtfn_backend"] == {"ok": ["run_gtfn_cpu", "gtfn"]}
    assert without_dace["gtfn_compile_and_run"] == {"ok": True}
    assert without_dace["dace_config"] == {"ok": True}  # the config needs no DaCe
    assert without_dace["dace_imported"] is False


@pytest.mark.parametrize(
    "what",
    [
        "container_dace_toolchain",
        "backends_run_dace_cpu",
        "backends_run_dace_cpu_again",
        "backends_run_dace_cpu_noopt",
        "make_dace_backend",
    ],
)
def test_dace_toolchains_name_the_missing_extra(without_dace: dict[str, Any], what: str) -> None:
    outcome = without_dace[what]
    assert "error" in outcome, f"{what} built without DaCe: {outcome}"
    assert outcome["error"] == "MissingExtraError", outcome
    assert "ImportError" in outcome["mro"]
    assert "stencilchain[dace]" in outcome["message"], outcome["message"]


def test_missing_extra_error_is_an_import_error() -> None:
    from stencilchain.containers import MissingExtraError

    assert issubclass(MissingExtraError, ImportError)


HEAVY_SCRIPT = """
    import json, sys

    def dace_modules():
        return sorted(m for m in sys.modules if m == "dace" or m.startswith("dace."))

    seen = {}
    import stencilchain
    seen["import stencilchain"] = dace_modules()
    import stencilchain.containers
    seen["import stencilchain.containers"] = dace_modules()
    import stencilchain.backends
    seen["import stencilchain.backends"] = dace_modules()
    from stencilchain.containers import DaCeContainer, make_dace_backend, make_dace_translator
    import stencilchain.steps.dace.bindings, stencilchain.steps.dace.compiler
    import stencilchain.steps.dace.translator
    seen["import the DaCe steps"] = dace_modules()
    toolchain = stencilchain.containers.build_container().dace.toolchain()
    seen["build a DaCe toolchain"] = dace_modules()
    toolchain = stencilchain.backends.run_dace_cpu
    seen["stencilchain.backends.run_dace_cpu"] = dace_modules()
    print(json.dumps(seen))
"""


@pytest.mark.skipif(importlib.util.find_spec("dace") is None, reason="needs the `dace` extra")
def test_importing_stencilchain_does_not_import_dace(session_cache_dir: Path) -> None:
    seen = run_python(textwrap.dedent(HEAVY_SCRIPT), session_cache_dir)
    assert seen == {step: [] for step in seen}
    assert len(seen) == 6
