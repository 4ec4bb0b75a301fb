"""The pre-built toolchains of `stencilchain.backends`: built lazily on first access from a
default container, each named by its attribute name, all names unique; and a cheap
`import stencilchain` that imports neither the containers, the steps nor DaCe.

Building a toolchain compiles nothing; the toolchains here are only built and inspected.
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

import stencilchain
from stencilchain import backends
from stencilchain.program.device import Device
from stencilchain.program.embedded import EmbeddedBackend
from stencilchain.runtime.toolchain import Toolchain
from stencilchain.steps.gtfn.translation import GTFNTranslationStep
from stencilchain.steps.workflow import CachedStep

GTFN_BACKENDS = ("run_gtfn_cpu", "run_gtfn_cpu_no_transforms", "run_gtfn_gpu")
PREBUILT = ("run_embedded", *GTFN_BACKENDS)

# modules that `import stencilchain` (and `import stencilchain.backends`) must not import
HEAVY = (
    "dace",
    "dependency_injector",
    "stencilchain.containers",
    "stencilchain.steps",
    "stencilchain.runtime",
)


def run_python(script: str, cache_dir: Path, **environ: str) -> Any:
    """Run `script` in a fresh interpreter; it prints one JSON line, returned here."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("STENCILCHAIN_")}
    env.update(STENCILCHAIN_CACHE_DIR=str(cache_dir), **environ)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def translation_step(toolchain: Toolchain) -> Any:
    step = toolchain.workflow.translation
    return step.step if isinstance(step, CachedStep) else step


def test_import_stencilchain_is_light(session_cache_dir: Path) -> None:
    result = run_python(
        f"""
        import json, sys
        import stencilchain
        heavy = {HEAVY!r}
        print(json.dumps(sorted(m for m in sys.modules if m.startswith(heavy))))
        """,
        session_cache_dir,
    )
    assert result == []


def test_backends_are_built_on_first_access(session_cache_dir: Path) -> None:
    result = run_python(
        f"""
        import json, os, sys
        import stencilchain as sc
        import stencilchain.backends as backends
        heavy = {HEAVY!r}
        after_import = sorted(m for m in sys.modules if m.startswith(heavy))
        # configured by the environment of the first access, not of the import
        os.environ["STENCILCHAIN_BUILD_TYPE"] = "debug"
        toolchain = backends.run_gtfn_cpu
        print(json.dumps({{
            "after_import": after_import,
            "embedded": backends.run_embedded.name,
            "type": type(toolchain).__name__,
            "name": toolchain.name,
            "build_type": toolchain.config.build_type.value,
            "compiler_imported": "stencilchain.steps.gtfn.compiler" in sys.modules,
            "same": backends.run_gtfn_cpu is toolchain and sc.backends.run_gtfn_cpu is toolchain,
            "others_built": sorted(set(backends._built) - {{"run_gtfn_cpu"}}),
        }}))
        """,
        session_cache_dir,
    )
    assert result["after_import"] == []
    assert result["embedded"] == "run_embedded"
    assert result["type"] == "Toolchain"
    assert result["name"] == "run_gtfn_cpu"
    assert result["build_type"] == "debug"
    assert result["compiler_imported"] is True
    assert result["same"] is True
    assert result["others_built"] == []


def _available_names() -> list[str]:
    """Every pre-built name, less the DaCe ones where the dace extra is not installed."""
    has_dace = importlib.util.find_spec("dace") is not None
    return [n for n in backends.NAMES if has_dace or not n.startswith("run_dace")]


def test_each_name_is_its_attribute_name() -> None:
    assert set(PREBUILT) <= set(backends.NAMES)
    assert set(PREBUILT) <= set(dir(backends))
    for name in _available_names():
        assert getattr(backends, name).name == name


def test_names_are_unique() -> None:
    """Metrics and compiled-program pools are keyed by the name."""
    assert len(set(backends.NAMES)) == len(backends.NAMES)
    built = [getattr(backends, name) for name in _available_names()]
    assert len({backend.name for backend in built}) == len(built)
    assert len({id(backend) for backend in built}) == len(built)


def test_prebuilt_toolchains(session_cache_dir: Path) -> None:
    assert isinstance(backends.run_embedded, EmbeddedBackend)
    for name in GTFN_BACKENDS:
        toolchain = getattr(backends, name)
        assert isinstance(toolchain, Toolchain), name
        assert toolchain.family == "gtfn"
        assert toolchain.config.cache_dir == session_cache_dir  # never the user's cache
    assert backends.run_gtfn_cpu.device is Device.CPU
    assert backends.run_gtfn_cpu_no_transforms.device is Device.CPU
    assert backends.run_gtfn_gpu.device is Device.GPU
    assert translation_step(backends.run_gtfn_gpu).device is Device.GPU


def test_no_transforms_toolchain_differs_only_in_its_translation() -> None:
    plain = translation_step(backends.run_gtfn_cpu)
    no_transforms = translation_step(backends.run_gtfn_cpu_no_transforms)
    assert isinstance(no_transforms, GTFNTranslationStep)
    assert plain.enable_transforms is True
    assert no_transforms.enable_transforms is False
    assert no_transforms == GTFNTranslationStep(
        device=plain.device,
        enable_transforms=False,
        data_layout=plain.data_layout,
        openmp_threshold=plain.openmp_threshold,
    )
    assert backends.run_gtfn_cpu_no_transforms.workflow.bindings == backends.run_gtfn_cpu.workflow.bindings  # fmt: skip
    assert backends.run_gtfn_cpu_no_transforms.config == backends.run_gtfn_cpu.config


def test_unknown_backend_names_the_known_ones() -> None:
    with pytest.raises(AttributeError, match=r"run_gtfn_cpux.*known: run_embedded, run_gtfn_cpu"):
        backends.run_gtfn_cpux  # noqa: B018
    assert stencilchain.backends is backends
