"""Both compilers check every setting once, when the step is made (built directly or by a
builder): the error names `<Compiler>.<field>`, the value given and what is accepted."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest

from stencilchain.errors import ConfigError, MissingExtraError
from stencilchain.program.device import Device
from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.gtfn.compiler import CMakeCompiler
from stencilchain.steps.settings import BuildType

CACHE = BuildCache(Path("/nonexistent/stencilchain-cache"))
REQUIRED: dict[str, Any] = {"device": Device.CPU, "build_type": BuildType.RELEASE, "cache": CACHE}

# (field, bad value, error type, what the message must say besides the field and the value)
CMAKE_BAD: list[tuple[str, Any, type[Exception], str]] = [
    ("device", "cpu", TypeError, "must be a Device"),
    ("build_type", "release", TypeError, "must be a BuildType"),
    ("cache", "/tmp", TypeError, "must be a BuildCache"),
    ("extra_flags", ["-O2"], TypeError, "must be a tuple of str"),
    ("extra_flags", ("-O2", 3), TypeError, "must be a tuple of str"),
    ("extra_flags", ("-a;-b",), ConfigError, "';' or a newline"),
    ("extra_flags", ("",), ConfigError, "is empty"),
    ("openmp", 1, TypeError, "must be a bool"),
    ("bindings_optimization", 1, TypeError, "must be a flag such as '-O1' or None"),
    ("bindings_optimization", "-O1\n-O2", ConfigError, "a newline"),
    ("precompiled_headers", "yes", TypeError, "must be a bool"),
    ("cuda_architectures", 80, TypeError, "CUDA architectures such as '80' or None"),
    ("cuda_architectures", "80;90", ConfigError, "';'"),
    ("cuda_flags", "-lineinfo", TypeError, "must be a tuple of str"),
    ("cxx", None, TypeError, "must be the name or path of the C++ compiler"),
    ("cxx", " ", ConfigError, "must name the C++ compiler"),
    ("nvcc", 0, TypeError, "must be the name or path of the CUDA compiler"),
    ("jobs", 0, ConfigError, "must be a positive int or None"),
    ("jobs", True, TypeError, "must be a positive int or None"),
    ("jobs", 2.0, TypeError, "must be a positive int or None"),
]

DACE_BAD: list[tuple[str, Any, type[Exception], str]] = [
    ("device", "gpu", TypeError, "must be a Device"),
    ("build_type", None, TypeError, "must be a BuildType"),
    ("cache", None, TypeError, "must be a BuildCache"),
    ("cpu_args", "-O2", TypeError, "must be a tuple of str"),
    ("cpu_args", ("-O2\n",), ConfigError, "a newline"),
    ("cuda_args", ["-lineinfo"], TypeError, "must be a tuple of str"),
    ("cuda_architectures", 80, TypeError, "CUDA architectures such as '80' or None"),
    ("cxx", "", ConfigError, "must name the C++ compiler"),
    ("build_jobs", -1, ConfigError, "must be a positive int or None"),
    ("build_jobs", "4", TypeError, "must be a positive int or None"),
    ("precompiled_headers", 1, TypeError, "must be a bool"),
]


def expect(step: type, field: str, value: Any, error: type[Exception], says: str) -> None:
    settings = {**REQUIRED, field: value}
    pattern = rf"{step.__name__}\.{field}\b.*{re.escape(says)}"
    with pytest.raises(error, match=pattern) as caught:
        step(**settings)
    given = [value, *value] if isinstance(value, tuple) else [value]  # or the bad flag
    assert any(repr(part) in str(caught.value) for part in given), caught.value


@pytest.mark.parametrize(("field", "value", "error", "says"), CMAKE_BAD)
def test_cmake_compiler_checks_every_setting(
    field: str, value: Any, error: type[Exception], says: str
) -> None:
    expect(CMakeCompiler, field, value, error, says)


@pytest.mark.parametrize(("field", "value", "error", "says"), DACE_BAD)
def test_dace_compiler_checks_every_setting(
    field: str, value: Any, error: type[Exception], says: str
) -> None:
    pytest.importorskip("dace")
    from stencilchain.steps.dace.compiler import DaCeCompiler

    expect(DaCeCompiler, field, value, error, says)


def test_the_defaults_are_accepted() -> None:
    CMakeCompiler(**REQUIRED)
    CMakeCompiler(
        **REQUIRED, bindings_optimization=None, cuda_architectures="80", jobs=2, cxx="g++"
    )


def test_a_dace_compiler_without_dace_is_a_missing_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from stencilchain.steps.dace.compiler import DaCeCompiler

    find_spec = importlib.util.find_spec

    def without_dace(name: str, package: str | None = None) -> Any:
        return None if name == "dace" else find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", without_dace)
    with pytest.raises(
        MissingExtraError, match=r"DaCeCompiler: .*pip install 'stencilchain\[dace\]'"
    ):
        DaCeCompiler(**REQUIRED)
