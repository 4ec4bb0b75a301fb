"""The build skeleton both compilers share, on a stand-in compiler (no C++ is compiled):
planning (key, module name, build context), and the build through the build cache (load,
discard a damaged folder, rebuild; the marker's metadata)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from stencilchain.errors import CompilationError
from stencilchain.program.device import Device
from stencilchain.program.hashing import sha256_of
from stencilchain.program.ir import Program
from stencilchain.steps.build.cached_build import compile_cached
from stencilchain.steps.build.plan import BuildPlan, plan_build
from stencilchain.steps.build.tools import Tools
from stencilchain.steps.caches.build_cache import MARKER_NAME, BuildCache
from stencilchain.steps.settings import BuildType
from stencilchain.steps.stages import BindingSource, ExtensionSource, ProgramSource

PROGRAM = Program(name="p", params=(), field_operators=(), calls=())
TOOLS = Tools(cxx="/usr/bin/c++", nvcc=None, identity='{"cxx": "stand-in"}')


@dataclasses.dataclass(frozen=True)
class StandInCompiler:
    device: Device
    build_type: BuildType
    cache: BuildCache


def source(entry: str = "axpy", code: str = "int x;") -> ExtensionSource:
    return ExtensionSource(
        ProgramSource(PROGRAM, entry, code, "cpp", Device.CPU, settings='{"t": "1"}'),
        BindingSource("int y;", "cpp", settings='{"b": "2"}'),
    )


def plan_of(
    compiler: StandInCompiler, src: ExtensionSource, **context: object
) -> BuildPlan[StandInCompiler, ExtensionSource]:
    return plan_build(compiler, src, TOOLS, family="test", key_tag=None, context=context)


@pytest.fixture()
def compiler(tmp_path: Path) -> StandInCompiler:
    return StandInCompiler(Device.CPU, BuildType.RELEASE, BuildCache(tmp_path))


def test_the_key_and_module_name_come_from_entry_source_and_context(
    compiler: StandInCompiler,
) -> None:
    plan = plan_of(compiler, source(), flags=("-O2",))
    context = json.loads(plan.context)
    assert context["flags"] == ["-O2"] and context["tools"] == TOOLS.identity
    assert {"package", "device", "build_type", "python"} <= set(context)
    digest = sha256_of("axpy", source().fingerprint(), plan.context)
    assert plan.key == f"axpy_{digest[:32]}" and plan.module_name == f"_sc_axpy_{digest[:12]}"
    assert plan.context_digest == sha256_of(plan.context)
    assert plan_of(compiler, source(), flags=("-O2",)) == plan  # stable
    tagged = plan_build(compiler, source(), TOOLS, family="t", key_tag="dace", context={})
    assert tagged.key.startswith("axpy_dace_")
    others = {
        plan_of(compiler, source(code="int z;"), flags=("-O2",)).key,
        plan_of(compiler, source(), flags=("-O3",)).key,
        plan_of(dataclasses.replace(compiler, build_type=BuildType.DEBUG), source()).key,
        plan_of(compiler, source(entry="other"), flags=("-O2",)).key,
    }
    assert len(others | {plan.key}) == 5


def test_an_entry_point_that_cannot_name_a_module_is_refused(compiler: StandInCompiler) -> None:
    with pytest.raises(ValueError, match=r"StandInCompiler: entry point 'a-b'.*C identifier"):
        plan_of(compiler, source(entry="a-b"))


def test_a_build_is_made_once_then_loaded(compiler: StandInCompiler) -> None:
    plan = plan_of(compiler, source())
    builds: list[Path] = []

    def build(folder: Path) -> dict[str, str]:
        builds.append(folder)
        (folder / "module.so").write_text("")
        return plan.marker("module.so", {"extra": "yes"})

    first = compile_cached(plan, build)
    second = compile_cached(plan, build)
    assert len(builds) == 1 and first.built and not second.built
    assert dataclasses.replace(second, built=True) == first
    assert first.module_path == compiler.cache.folder(plan.key) / "module.so"
    assert (first.module_name, first.entry_point) == (plan.module_name, "axpy")
    metadata = first.metadata
    assert metadata["module"] == "module.so" and metadata["extra"] == "yes"
    assert metadata["module_name"] == plan.module_name and metadata["entry_point"] == "axpy"
    assert (metadata["device"], metadata["build_type"]) == ("cpu", "release")
    assert metadata["family"] == "test" and metadata["key_context"] == plan.context
    assert metadata["key_source"] == source().fingerprint()
    assert metadata["translation_settings"] == '{"t": "1"}'
    assert metadata["bindings_settings"] == '{"b": "2"}'


def test_a_folder_that_lost_a_file_its_marker_names_is_built_again(
    compiler: StandInCompiler,
) -> None:
    plan = plan_of(compiler, source())
    builds: list[Path] = []

    def build(folder: Path) -> dict[str, str]:
        builds.append(folder)
        (folder / "module.so").write_text("")
        (folder / "library.so").write_text("")
        return plan.marker("module.so", {"library": "library.so"})

    first = compile_cached(plan, build, files=("module", "library"))
    (first.build_dir / "library.so").unlink()
    again = compile_cached(plan, build, files=("module", "library"))
    assert len(builds) == 2 and again.built and (again.build_dir / "library.so").is_file()


def test_a_build_that_produced_no_module_is_never_marked_complete(
    compiler: StandInCompiler,
) -> None:
    plan = plan_of(compiler, source())
    with pytest.raises(CompilationError, match=r"building 'axpy' produced no module\.so"):
        compile_cached(plan, lambda folder: plan.marker("module.so", {}))
    assert not (compiler.cache.folder(plan.key) / MARKER_NAME).exists()
    assert compiler.cache.lookup(plan.key) is None
