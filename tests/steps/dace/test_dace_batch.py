"""DaCe's batch builds (DaCeCompiler.build_batch, steps/dace/batch_unit.py): `compile_many`
builds the DaCe code of a batch's programs as ONE unit of one library, each program still
its own build-cache entry (its module and the library), computing what the embedded
executor does; a later compile of a batched program is a cache hit; a program that fails
in the batch is left to its own build, which names it; a batch whose library fails leaves
no trusted entry, neither its own nor a program's."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("dace")

import stencilchain as sc
from stencilchain.containers import build_container, make_dace_bindings, override_step
from stencilchain.errors import CompilationError
from stencilchain.runtime.compile_many import CompileReport
from stencilchain.runtime.toolchain import Toolchain
from stencilchain.steps.caches.build_cache import MARKER_NAME
from stencilchain.steps.dace import batch_unit, native_build

I = sc.Dimension("I")
J = sc.Dimension("J")
K = sc.Dimension("K")
F1 = sc.Field[[I], sc.float64]
F2 = sc.Field[[I, J], sc.float64]
F3 = sc.Field[[I, J, K], sc.float64]
REPO = Path(__file__).resolve().parents[3]


def _scale(index: int, factor: float) -> sc.Program:
    """`out = factor * f(I + 1)`, named `dace_batch_<index>`."""

    def op(f: F1) -> F1:
        return factor * f(I + 1)

    op.__name__ = op.__qualname__ = f"dace_batch_op_{index}"
    operator = sc.field_operator(op)

    def run(f: F1, out: F1) -> None:
        operator(f, out=out)

    run.__name__ = run.__qualname__ = f"dace_batch_{index}"
    return sc.program(run)


@sc.field_operator
def _lap(f: F2) -> F2:
    return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1)


@sc.field_operator
def _update(f: F2, lap: F2, alpha: sc.float64) -> F2:
    return f + alpha * lap(I + 1) - lap(J - 1)


@sc.program
def dace_batch_two_maps(f: F2, lap: F2, out: F2, alpha: sc.float64) -> None:
    _lap(f, out=lap)
    _update(f, lap, alpha, out=out)


@sc.scan_operator(axis=K, forward=True, init=0.0)
def _running(below, f: F3):  # type: ignore[no-untyped-def]
    return 0.5 * below + f


@sc.program
def dace_batch_scan(f: F3, out: F3) -> None:
    _running(f, out=out)


def _arguments(program: sc.Program, seed: int) -> list[Any]:
    rng = np.random.default_rng(seed)
    if program is dace_batch_two_maps:
        return [rng.random((9, 7)), np.zeros((9, 7)), np.zeros((9, 7)), 0.3]
    if program is dace_batch_scan:
        return [rng.random((4, 3, 6)), np.zeros((4, 3, 6))]
    return [rng.random(10), np.zeros(10)]


def _check_against_embedded(program: sc.Program, compiled: Any) -> None:
    args = _arguments(program, 1)
    expected = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    compiled(*args)
    program(*expected)
    for got, want in zip(args, expected):
        np.testing.assert_array_equal(got, want)


def _dace(cache_dir: Path) -> Toolchain:
    toolchain = build_container({}, cache_dir=cache_dir).dace.toolchain()
    assert isinstance(toolchain, Toolchain)
    return toolchain


def test_compile_many_builds_the_dace_code_of_a_batch_as_one_unit(
    private_cache_dir: Path,
) -> None:
    programs = [_scale(0, 1.5), dace_batch_two_maps, _scale(1, 2.5), dace_batch_scan]
    compiled = _dace(private_cache_dir).compile_many(programs, jobs=2)
    for program, result in zip(programs, compiled):
        _check_against_embedded(program, result)
    metadata = [c.artifact.metadata for c in compiled]
    batches = {m["batch"] for m in metadata}
    assert len(batches) == 2 and all(m["batch_programs"] == "2" for m in metadata)
    for name in batches:
        folder = next(private_cache_dir.rglob(name))
        (unit,) = (folder / "dace" / "src" / "cpu").glob("*.cpp")
        text = unit.read_text()
        # one namespace per program, the one-thread region wrapper once
        assert text.count("namespace sc_batch_member_") == 2 * 2  # opened and closed
        assert text.count("__wrap_GOMP_parallel(") == 1
        libraries = list((folder / "dace" / "build").glob("lib*.so"))
        assert len(libraries) == 1
        # the bindings of its programs as one unit, their shims as another, one module
        for shared in ("shared_bindings.cpp", "shared_shims.cpp"):
            assert (folder / shared).read_text().count("namespace sc_member_") == 2 * 2
    assert all(m["batch_shared_units"] == "yes" for m in metadata)
    for result in compiled:  # each entry holds its module and the batch's library
        folder = result.artifact.module_path.parent
        library = folder / result.artifact.metadata["dace_library"]
        assert library.is_file() and (folder / MARKER_NAME).is_file()
        sizes = json.loads(result.artifact.metadata["file_sizes"])
        assert sizes[result.artifact.metadata["dace_library"]] == library.stat().st_size
    # a fresh process's compile of a batched program finds its entry
    reports: list[CompileReport] = []
    again = _dace(private_cache_dir).compile_many(programs, jobs=1, progress=reports.append)
    assert {r.outcome for r in reports} == {"cache"}
    for program, result in zip(programs, again):
        _check_against_embedded(program, result)


def test_a_batch_member_runs_after_the_entry_of_the_sibling_loaded_first_is_removed(
    private_cache_dir: Path, tmp_path: Path
) -> None:
    """The loader maps the links of one file once: member B, imported after member A of
    its batch, is A's mapping, which looked for the DaCe library beside A's module. A's
    entry removed in between (pruned after another process's build), B still runs (in a
    fresh process: the mapping is per process)."""
    programs = [_scale(index, index + 0.625) for index in range(4)]
    compiled = _dace(private_cache_dir).compile_many(programs, jobs=2)
    by_batch: dict[str, list[int]] = {}
    for index, result in enumerate(compiled):
        by_batch.setdefault(result.artifact.metadata["batch"], []).append(index)
    first, second = next(indices for indices in by_batch.values() if len(indices) == 2)
    a, b = compiled[first].artifact, compiled[second].artifact
    assert a.build_dir != b.build_dir
    assert a.module_path.stat().st_ino == b.module_path.stat().st_ino  # links of one file
    args = _arguments(programs[second], 1)
    np.savez(tmp_path / "args.npz", *args)
    code = textwrap.dedent(
        f"""
        import shutil
        import numpy as np
        from pathlib import Path
        from stencilchain.steps.stages import CompiledArtifact
        def artifact(path, name, entry):
            return CompiledArtifact(Path(path), name, entry, Path(path).parent)
        a = artifact(*{(str(a.module_path), a.module_name, a.entry_point)!r})
        b = artifact(*{(str(b.module_path), b.module_name, b.entry_point)!r})
        a.load()
        shutil.rmtree(a.build_dir)  # as pruning removes an entry
        run = b.load()
        maps = Path("/proc/self/maps").read_text()
        assert str(b.module_path) not in maps, "B's module was mapped on its own"
        args = list(np.load({str(tmp_path / "args.npz")!r}).values())
        run(*args)
        np.savez({str(tmp_path / "out.npz")!r}, *args)
        """
    )
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="2")
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert not a.build_dir.exists()
    got = list(np.load(tmp_path / "out.npz").values())
    programs[second](*args)  # the embedded executor
    for computed, expected in zip(got, args, strict=True):
        np.testing.assert_array_equal(computed, expected)


@dataclasses.dataclass(frozen=True)
class _BrokenUnitFor:
    """DaCe bindings whose `unit` ("program_source": the shim; "binding_source": the
    module's bindings) for the program `name` does not compile."""

    inner: Any
    name: str
    unit: str = "program_source"

    def __call__(self, source: Any, /) -> Any:
        extension = self.inner(source)
        if extension.program_source.entry_point != self.name:
            return extension
        unit = getattr(extension, self.unit)
        broken = dataclasses.replace(unit, source_code=unit.source_code + "\n#error broken\n")
        return dataclasses.replace(extension, **{self.unit: broken})


def test_a_dace_program_failing_in_a_batch_is_named_and_the_others_are_built(
    private_cache_dir: Path,
) -> None:
    container = build_container({}, cache_dir=private_cache_dir)
    override_step(
        container.dace.bindings,
        lambda cfg: _BrokenUnitFor(make_dace_bindings(cfg), "dace_batch_2"),
    )
    toolchain = container.dace.toolchain()
    programs = [_scale(index, index + 0.75) for index in range(4)]
    with pytest.raises(sc.BuildsFailedError) as caught:
        toolchain.compile_many(programs, jobs=2)
    error = caught.value
    assert set(error.failures) == {"dace_batch_2"}
    assert isinstance(error.failures["dace_batch_2"], CompilationError)
    assert "broken" in str(error.failures["dace_batch_2"])
    assert set(error.compiled) == {"dace_batch_0", "dace_batch_1", "dace_batch_3"}
    for program in programs:
        if program.name != "dace_batch_2":
            compiled = error.compiled[program.name]
            assert "batch" in compiled.artifact.metadata
            _check_against_embedded(program, compiled)
    with pytest.raises(CompilationError):  # no complete entry: tried again, fails again
        toolchain.compile(programs[2])


def test_dace_bindings_failing_in_a_batch_are_named_and_the_others_are_built(
    private_cache_dir: Path,
) -> None:
    container = build_container({}, cache_dir=private_cache_dir)
    override_step(
        container.dace.bindings,
        lambda cfg: _BrokenUnitFor(make_dace_bindings(cfg), "dace_batch_1", "binding_source"),
    )
    toolchain = container.dace.toolchain()
    programs = [_scale(index, index + 0.375) for index in range(4)]
    with pytest.raises(sc.BuildsFailedError) as caught:
        toolchain.compile_many(programs, jobs=2)
    error = caught.value
    assert set(error.failures) == {"dace_batch_1"}
    assert "broken" in str(error.failures["dace_batch_1"])
    assert set(error.compiled) == {"dace_batch_0", "dace_batch_2", "dace_batch_3"}
    shared = set()
    for program in programs:
        if program.name != "dace_batch_1":
            compiled = error.compiled[program.name]
            _check_against_embedded(program, compiled)
            shared.add(compiled.artifact.metadata["batch_shared_units"])
    # the broken program's batch built each module from units of its own; the other batch
    # (if the programs were split in two) shared its units
    assert "no" in shared
    with pytest.raises(CompilationError):  # no complete entry: tried again, fails again
        toolchain.compile(programs[1])


def test_a_failed_dace_batch_leaves_no_entry_and_each_program_is_built_alone(
    private_cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build = native_build.build

    def failing_for_batches(native: native_build.NativeBuild, *args: Any) -> Path:
        if native.program_name.startswith("sc_batch_"):
            raise CompilationError("the batch's library failed (by the test)", "", None)
        return build(native, *args)

    monkeypatch.setattr(native_build, "build", failing_for_batches)
    programs = [_scale(index, index + 0.125) for index in range(4)]
    compiled = _dace(private_cache_dir).compile_many(programs, jobs=2)
    for program, result in zip(programs, compiled):
        _check_against_embedded(program, result)
        assert "batch" not in result.artifact.metadata
    folders = [p for p in private_cache_dir.rglob("batch-*") if p.is_dir()]
    assert folders and not any((folder / MARKER_NAME).exists() for folder in folders)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_batch_unit_includes_each_program_in_a_namespace_after_its_system_headers(
    tmp_path: Path,
) -> None:
    first = _write(tmp_path / "a" / "a.cpp", "#include <dace/dace.h>\n#include <cmath>\nint f;\n")
    second = _write(tmp_path / "b" / "b.cpp", "#  include <vector>\nint f;\n")
    text = batch_unit.unit_text([[first], [second]], serial_regions=False)
    lines = text.splitlines()
    assert lines.index("#include <cmath>") < lines.index("namespace sc_batch_member_0 {")
    assert lines.index("#  include <vector>") < lines.index("namespace sc_batch_member_0 {")
    assert lines.count("#include <dace/dace.h>") == 1
    assert f'#include "{first}"' in lines and f'#include "{second}"' in lines
    assert "__wrap_GOMP_parallel" not in text
    assert "__wrap_GOMP_parallel" in batch_unit.unit_text([[first]], serial_regions=True)


def test_only_cpu_code_without_environments_is_batched(tmp_path: Path) -> None:
    _write(tmp_path / "dace_files.csv", "cpu,,p.cpp\n")
    _write(tmp_path / "dace_environments.csv", "")
    assert batch_unit.cpu_files(tmp_path) == [tmp_path / "src" / "cpu" / "p.cpp"]
    _write(tmp_path / "dace_files.csv", "cpu,,p.cpp\ncuda,,p_cuda.cu\n")
    with pytest.raises(batch_unit.NotBatchable, match="'cuda'"):
        batch_unit.cpu_files(tmp_path)
    _write(tmp_path / "dace_files.csv", "cpu,,p.cpp\n")
    _write(tmp_path / "dace_environments.csv", "MKL\n")
    with pytest.raises(batch_unit.NotBatchable, match="environments"):
        batch_unit.cpu_files(tmp_path)
