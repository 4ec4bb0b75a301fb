"""The processes of a DaCe build: they run with an explicit environment (the process's own
is never changed, as a second thread sees while DaCe's CMake runs), and two builds in two
threads run their native compiles at the same time (only code generation is serialized).

DaCe's replay of a recorded build would skip CMake; these tests make each build run it.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

dace = pytest.importorskip("dace")

import stencilchain as sc  # noqa: E402
from stencilchain.program.device import Device  # noqa: E402
from stencilchain.steps.build.runner import BuildRunner, Job  # noqa: E402
from stencilchain.steps.build.tools import package_programs  # noqa: E402
from stencilchain.steps.caches.build_cache import BuildCache  # noqa: E402
from stencilchain.steps.dace import native_build  # noqa: E402
from stencilchain.steps.dace.bindings import DaCeBindings, DaCeExtensionSource  # noqa: E402
from stencilchain.steps.dace.compiler import DaCeCompiler  # noqa: E402
from stencilchain.steps.dace.translator import DaCeTranslator  # noqa: E402
from stencilchain.steps.settings import BuildType  # noqa: E402
from stencilchain.steps.stages import CompiledArtifact  # noqa: E402

I = sc.Dimension("I")
J = sc.Dimension("J")
F = sc.Field[[I, J], sc.float64]


@sc.field_operator
def _triple(f: F) -> F:
    return 3.0 * f


@sc.program
def triple_program(f: F, out: F) -> None:
    _triple(f, out=out)


@sc.field_operator
def _shifted_sum(f: F) -> F:
    return f(I + 1) + f(J + 1)


@sc.program
def shifted_sum_program(f: F, out: F) -> None:
    _shifted_sum(f, out=out)


def extension_of(program: sc.Program) -> DaCeExtensionSource:
    return DaCeBindings(Device.CPU)(DaCeTranslator(Device.CPU)(program.ir))


def is_configure(command: Sequence[str]) -> bool:
    """Whether `command` is DaCe's CMake configure, as native_build runs it."""
    shell = list(command[:2]) == ["/bin/sh", "-c"]
    return shell and command[2].startswith("cmake ") and not command[2].startswith("cmake --build")


@pytest.fixture()
def cmake_always(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every DaCe build runs CMake: no recorded build of its shape is replayed."""
    prepare = native_build.prepare

    def without_recording(program_folder: Path, program_name: str) -> native_build.NativeBuild:
        native = prepare(program_folder, program_name)
        return dataclasses.replace(native, recipe=None, recorded=False)

    monkeypatch.setattr(native_build, "prepare", without_recording)


def check(artifact: CompiledArtifact, expected: Callable[[np.ndarray], np.ndarray]) -> None:
    """Run `artifact` on a random field; `expected(f)` is the whole output array."""
    f = np.random.default_rng(0).random((6, 7))
    out = np.zeros_like(f)
    artifact.load()(f, out)
    np.testing.assert_allclose(out, expected(f), rtol=1e-14)


@pytest.mark.usefixtures("cmake_always")
def test_a_dace_build_never_changes_the_process_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    during: list[dict[str, str]] = []  # os.environ as another thread sees it during CMake
    cmake_env: list[dict[str, str]] = []
    start = BuildRunner.start

    def observed(self: BuildRunner, command: Sequence[str], what: str, **kwargs: Any) -> Job:
        if is_configure(command):
            # the build waits here while another thread reads the process's environment
            observer = threading.Thread(target=lambda: during.append(dict(os.environ)))
            observer.start()
            observer.join()
            cmake_env.append(dict(self.env))
        return start(self, command, what, **kwargs)

    monkeypatch.setattr(BuildRunner, "start", observed)
    # a flag variable CMake would read: the build keys do not cover it, the build drops it
    monkeypatch.setenv("CXXFLAGS", "-fno-such-flag-from-the-environment")
    before = dict(os.environ)
    compiler = DaCeCompiler(Device.CPU, BuildType.RELEASE, BuildCache(tmp_path))
    artifact = compiler(extension_of(triple_program))
    assert os.environ == before
    assert during == [before]  # CMake ran once, and os.environ was as before meanwhile
    tools_dirs = {os.path.dirname(p) for p in package_programs()}
    path = cmake_env[0]["PATH"].split(os.pathsep)
    assert set(path[: len(tools_dirs)]) == tools_dirs  # the packages' cmake and ninja first
    assert "CXXFLAGS" not in cmake_env[0]  # flag variables stay out of the build
    check(artifact, lambda f: 3.0 * f)
    log = (artifact.build_dir / "build.log").read_text()
    assert "$ /bin/sh -c cmake " in log and "$ /bin/sh -c cmake --build" in log


@pytest.mark.usefixtures("cmake_always")
def test_two_dace_builds_in_two_threads_compile_at_the_same_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each build stops before its CMake configure until the other one gets there too:
    # possible only if neither holds the DaCe lock while its native build runs.
    both_configuring = threading.Barrier(2, timeout=300)
    start = BuildRunner.start

    def meet(self: BuildRunner, command: Sequence[str], what: str, **kwargs: Any) -> Job:
        if is_configure(command):
            both_configuring.wait()
        return start(self, command, what, **kwargs)

    monkeypatch.setattr(BuildRunner, "start", meet)
    compiler = DaCeCompiler(Device.CPU, BuildType.RELEASE, BuildCache(tmp_path))
    sources = {"triple": extension_of(triple_program), "sum": extension_of(shifted_sum_program)}
    results: dict[str, CompiledArtifact | BaseException] = {}

    def build(name: str) -> None:
        try:
            results[name] = compiler(sources[name])
        except BaseException as error:
            results[name] = error

    threads = [threading.Thread(target=build, args=(name,)) for name in sources]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    triple, shifted = results["triple"], results["sum"]
    assert isinstance(triple, CompiledArtifact), triple
    assert isinstance(shifted, CompiledArtifact), shifted
    assert triple.built and shifted.built
    check(triple, lambda f: 3.0 * f)

    def shifted_expected(f: np.ndarray) -> np.ndarray:
        expected = np.zeros_like(f)  # the domain is where both shifts read inside f
        expected[:-1, :-1] = f[1:, :-1] + f[:-1, 1:]
        return expected

    check(shifted, shifted_expected)
