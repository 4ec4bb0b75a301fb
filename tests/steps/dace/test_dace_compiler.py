"""DaCe bindings and compiler, end to end: translator -> DaCeBindings -> DaCeCompiler -> load.

Programs run on C-order, Fortran-order, sliced and reversed arrays and must give what the
embedded executor gives; argument and domain errors carry the embedded messages; a
cached build loads in a fresh process without DaCe (no code generation, no CMake); a
build leaves DaCe's configuration as it was and honours the build type; a folder that
lost its marker or its files is rebuilt; an SDFG whose init reads the symbols (a
persistent transient) is re-initialized when they change.

Each test builds into a temporary cache, never the user's. A build takes about a second
(translation included) on two cores, so programs are few and each runs many layouts.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests import _support as shared
from tests._support import place, random_array, read_only

dace = pytest.importorskip("dace")

import stencilchain as sc  # noqa: E402
from stencilchain.containers.config import DaCeConfig  # noqa: E402
from stencilchain.examples import hdiff, laplacian  # noqa: E402
from stencilchain.program import ir  # noqa: E402
from stencilchain.program.device import Device  # noqa: E402
from stencilchain.runtime.toolchain import Toolchain  # noqa: E402
from stencilchain.steps.caches.build_cache import MARKER_NAME, BuildCache  # noqa: E402
from stencilchain.steps.dace.bindings import DaCeBindings, DaCeExtensionSource  # noqa: E402
from stencilchain.steps.dace.compiler import DaCeCompiler  # noqa: E402
from stencilchain.steps.dace.shim import shim_members  # noqa: E402
from stencilchain.steps.dace.translator import DaCeTranslator  # noqa: E402
from stencilchain.steps.settings import BuildType  # noqa: E402
from stencilchain.steps.stages import CompiledArtifact, ExtensionSource, ProgramSource  # noqa: E402
from stencilchain.steps.workflow import CompileWorkflow  # noqa: E402

I = sc.Dimension("I")
J = sc.Dimension("J")
F64 = sc.Field[[I, J], sc.float64]
F32 = sc.Field[[I, J], sc.float32]
I32 = sc.Field[[I, J], sc.int32]
I64 = sc.Field[[I, J], sc.int64]
B = sc.Field[[I, J], sc.bool_]
LAYOUTS = ("C", "F", "sliced", "reversed")
REPO = Path(__file__).resolve().parents[3]


# --- programs ---------------------------------------------------------------------------------


@sc.field_operator
def scale64(a: F64, x: sc.float64) -> F64:
    return a * x + a(I + 1)


@sc.field_operator
def scale32(b: F32, y: sc.float32) -> F32:
    return b * y - b(J - 1)


@sc.field_operator
def add32(c: I32, k: sc.int32) -> I32:
    return c * k + c(I - 1)


@sc.field_operator
def add64(d: I64, m: sc.int64) -> I64:
    return d * m - d(J + 1)


@sc.field_operator
def pick(e: B, flag: sc.bool_) -> B:
    return (e & flag) | ~e(I + 1)


@sc.program
def scalars_of_every_dtype(
    a: F64,
    b: F32,
    c: I32,
    d: I64,
    e: B,
    oa: F64,
    ob: F32,
    oc: I32,
    od: I64,
    oe: B,
    x: sc.float64,
    y: sc.float32,
    k: sc.int32,
    m: sc.int64,
    flag: sc.bool_,
) -> None:
    scale64(a, x, out=oa)
    scale32(b, y, out=ob)
    add32(c, k, out=oc)
    add64(d, m, out=od)
    pick(e, flag, out=oe)


SCALARS = (
    {"x": 0.5, "y": np.float32(-1.25), "k": 3, "m": 2**40 + 1, "flag": True},
    {"x": np.float64(-2.0), "y": 2, "k": np.int32(-7), "m": np.int64(-(2**62)), "flag": np.False_},
)


@sc.field_operator
def lap(f: F64) -> F64:
    return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1)


@sc.program
def explicit_domain(f: F64, out: F64) -> None:
    lap(f, out=out, domain={I: (-6, 7), J: (1, -1)})


@sc.field_operator
def affine(f: F64) -> F64:
    return 2.0 * f + 1.0


@sc.program
def affine_program(f: F64, out: F64) -> None:
    affine(f, out=out)


# --- arrays ---------------------------------------------------------------------------------


def arguments(
    program: sc.Program, shape: tuple[int, int], scalars: dict[str, Any], seed: int
) -> list[Any]:
    rng = np.random.default_rng(seed)
    return [
        random_array(shape, p.type.dtype.numpy, rng)
        if isinstance(p.type, ir.FieldType)
        else scalars[p.name]
        for p in program.ir.params
    ]


# compiled against embedded, relative and absolute, for every float dtype
run_both = functools.partial(
    shared.run_both, tolerance={np.dtype(np.float64): 1e-6, np.dtype(np.float32): 1e-6}
)


# --- toolchains ---------------------------------------------------------------------------


def dace_toolchain(cache: Path, name: str, build_type: BuildType = BuildType.RELEASE) -> Toolchain:
    workflow = CompileWorkflow(
        DaCeTranslator(Device.CPU),
        DaCeBindings(Device.CPU),
        DaCeCompiler(Device.CPU, build_type, BuildCache(cache)),
    )
    return Toolchain(
        name=name, family="dace", config=DaCeConfig(build_type=build_type), workflow=workflow
    )


@pytest.fixture(scope="module")
def toolchain(tmp_path_factory: pytest.TempPathFactory) -> Toolchain:
    return dace_toolchain(tmp_path_factory.mktemp("dace-cache"), "test_dace_cpu")


def extension_of(program: sc.Program) -> DaCeExtensionSource:
    return DaCeBindings(Device.CPU)(DaCeTranslator(Device.CPU)(program.ir))


# --- results -----------------------------------------------------------------------------------


@pytest.mark.parametrize("module", [laplacian, hdiff], ids=["laplacian", "hdiff"])
def test_examples_match_embedded_and_reference(
    module: Any, toolchain: Toolchain, subtests: Any
) -> None:
    bound = module.PROGRAM.with_backend(toolchain)
    for seed, layout in enumerate(LAYOUTS):
        with subtests.test(layout=layout):
            inputs = module.make_inputs(module.DEFAULT_SHAPE, np.random.default_rng(seed))
            reference = module.reference(**{k: v.copy() for k, v in inputs.items()})
            placed = {
                k: place(v, layout, np.random.default_rng(seed)).array for k, v in inputs.items()
            }
            bound(*placed.values())
            for name, value in reference.items():
                np.testing.assert_allclose(placed[name], value, rtol=1e-12, err_msg=name)
            run_both(module.PROGRAM, bound, list(inputs.values()), layout)


def test_scalars_of_every_dtype(toolchain: Toolchain, subtests: Any) -> None:
    bound = scalars_of_every_dtype.with_backend(toolchain)
    seed = 0
    for shape in ((9, 11), (3, 4), (1, 7)):
        for index, layout in enumerate(LAYOUTS):
            seed += 1
            scalars = SCALARS[index % len(SCALARS)]
            with subtests.test(shape=shape, layout=layout, scalars=repr(scalars)):
                run_both(
                    scalars_of_every_dtype,
                    bound,
                    arguments(scalars_of_every_dtype, shape, scalars, seed),
                    layout,
                )


def test_sizes_change_between_calls(toolchain: Toolchain) -> None:
    bound = laplacian.PROGRAM.with_backend(toolchain)
    for shape in ((5, 4), (40, 33), (3, 3), (2, 9), (5, 4)):
        run_both(laplacian.PROGRAM, bound, arguments(laplacian.PROGRAM, shape, {}, sum(shape)), "F")


def test_artifact_is_the_extension_beside_its_dace_library(toolchain: Toolchain) -> None:
    artifact = toolchain.compile(laplacian.PROGRAM).artifact
    meta = artifact.metadata
    assert artifact.module_path == artifact.build_dir / meta["module"]
    assert (artifact.build_dir / meta["dace_library"]).is_file()
    assert meta["init"] == "once"
    assert meta["sdfg_name"] == laplacian.PROGRAM.ir.name
    # picklable, and load() is CompiledArtifact's own
    import pickle

    again = pickle.loads(pickle.dumps(artifact))
    assert again == artifact and type(artifact) is CompiledArtifact


# --- errors ------------------------------------------------------------------------------------


def _replace(index: int, value: Callable[[Any], Any]) -> Callable[[list[Any]], list[Any]]:
    def change(args: list[Any]) -> list[Any]:
        args = list(args)
        args[index] = value(args[index])
        return args

    return change


BAD_CALLS: dict[str, Callable[[list[Any]], list[Any]]] = {
    "too_few": lambda args: args[:-1],
    "too_many": lambda args: [*args, 1.0],
    "dtype_f32_for_f64": _replace(0, lambda v: v.astype(np.float32)),
    "dtype_big_endian": _replace(0, lambda v: v.astype(">f8")),
    "dtype_of_an_output": _replace(8, lambda v: v.astype(np.int32)),
    "ndim": _replace(1, lambda v: v[0]),
    # differing sizes and starts are fields over their own ranges (an input may start below
    # 0: tests/runtime/test_own_ranges_compiled.py)
    "output_start_below_zero": _replace(7, lambda v: sc.as_field((I, J), v, start={I: -1})),
    "read_only_output": _replace(5, read_only),
    "list_for_a_field": _replace(3, lambda v: v.tolist()),
    "float_for_int32": _replace(12, lambda v: 1.5),
    "int32_overflow": _replace(12, lambda v: 2**31),
    "np_int32_for_int64": _replace(13, lambda v: np.int32(1)),
    "int_for_bool": _replace(14, lambda v: 1),
    "string_for_float32": _replace(11, lambda v: "1.0"),
    "output_is_an_input": lambda args: [*args[:5], args[0], *args[6:]],
}


@pytest.mark.parametrize("bad", BAD_CALLS)
def test_argument_errors_match_embedded(bad: str, toolchain: Toolchain) -> None:
    args = BAD_CALLS[bad](arguments(scalars_of_every_dtype, (4, 3), SCALARS[0], 7))
    with pytest.raises(sc.ArgumentError) as embedded:
        scalars_of_every_dtype(*args)
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    compiled = toolchain.compile(scalars_of_every_dtype)
    # the module's own check, in C: its ArgumentMismatch (a TypeError)
    mismatch = sys.modules[compiled.artifact.module_name].ArgumentMismatch
    assert issubclass(mismatch, TypeError)
    with pytest.raises(mismatch):
        compiled.entry(*args)
    # through the toolchain: the shared checker's message, as for every backend
    with pytest.raises(sc.ArgumentError) as error:
        scalars_of_every_dtype.with_backend(toolchain)(*args)
    assert str(error.value) == str(embedded.value)
    for arg, old in zip(args, before):  # nothing ran
        if isinstance(arg, np.ndarray):
            np.testing.assert_array_equal(arg, old)


@pytest.mark.parametrize(("n_i", "fits"), [(8, True), (12, True), (7, False), (1, False)])
def test_explicit_domain_errors_match_embedded(n_i: int, fits: bool, toolchain: Toolchain) -> None:
    rng = np.random.default_rng(n_i)
    f, out = rng.random((n_i, 6)), rng.random((n_i, 6))
    bound = explicit_domain.with_backend(toolchain)
    if fits:
        run_both(explicit_domain, bound, [f, out], "F")
        return
    with pytest.raises(sc.DomainError) as embedded:
        explicit_domain(f, out.copy())
    before = out.copy()
    with pytest.raises(sc.DomainError) as compiled:
        bound(f, out)
    assert str(compiled.value) == str(embedded.value)
    assert "leaves the array of size" in str(compiled.value)
    np.testing.assert_array_equal(out, before)


# --- caching and loading ---------------------------------------------------------------------------


def _pin_package_version() -> str:
    """Code that makes a subprocess see this process's package version: the version hashes
    the package's sources, which may be edited while the tests run (a new key, a rebuild)."""
    from stencilchain.steps.build import plan

    return (
        "import stencilchain.steps.build.plan as _plan\n"
        f"_plan.package_version = lambda: {plan.package_version()!r}\n"
    )


def _build_log(artifact: CompiledArtifact) -> str:
    return (artifact.build_dir / "build.log").read_text()


def test_cached_build_loads_in_a_fresh_process_without_dace(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    extension = extension_of(laplacian.PROGRAM)
    artifact = DaCeCompiler(Device.CPU, BuildType.RELEASE, BuildCache(cache))(extension)
    log = _build_log(artifact)
    sdfg_file = tmp_path / "sdfg.json"
    sdfg_file.write_text(extension.sdfg_source.source_code)
    code = _pin_package_version() + textwrap.dedent(
        f"""
        import json, sys, time
        import importlib.machinery
        class Refuse:
            def create_module(self, spec):
                return None
            def exec_module(self, module):
                raise ImportError("a cached build imported dace")
        class NoDaCe:  # DaCe's code generator, its CMake build and its loader need `import dace`
            def find_spec(self, name, path=None, target=None):
                if name == "dace" or name.startswith("dace."):
                    spec = importlib.machinery.PathFinder.find_spec(name, path)
                    if spec is not None:  # found (the compiler identifies the installation)
                        spec.loader = Refuse()  # but never imported
                    return spec
                return None
        sys.meta_path.insert(0, NoDaCe())
        start = time.perf_counter()
        import numpy as np
        from pathlib import Path
        from stencilchain.examples import laplacian
        from stencilchain.program.device import Device
        from stencilchain.steps.caches.build_cache import BuildCache
        from stencilchain.steps.dace.bindings import DaCeBindings
        from stencilchain.steps.dace.compiler import DaCeCompiler
        from stencilchain.steps.settings import BuildType
        from stencilchain.steps.stages import ProgramSource
        program = laplacian.PROGRAM.ir
        f = np.random.default_rng(0).random((9, 8)); out = np.zeros_like(f)
        t0 = time.perf_counter()
        source = ProgramSource(program, program.name, Path({str(sdfg_file)!r}).read_text(), "sdfg", Device.CPU)
        extension = DaCeBindings(Device.CPU)(source)
        artifact = DaCeCompiler(Device.CPU, BuildType.RELEASE, BuildCache(Path({str(cache)!r})))(extension)
        artifact.load()(f, out)
        t1 = time.perf_counter()
        expected = laplacian.reference(f, np.zeros_like(f))["out"]
        print(json.dumps({{
            "module": str(artifact.module_path),
            "correct": bool(np.allclose(out, expected, rtol=1e-13)),
            "dace_imported": "dace" in sys.modules,
            "first_call_s": t1 - t0,
        }}))
        """
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["module"] == str(artifact.module_path)
    assert result["correct"]
    assert not result["dace_imported"]
    assert _build_log(artifact) == log  # nothing ran in the folder


def test_key_is_stable_across_processes_and_covers_the_build_settings(tmp_path: Path) -> None:
    extension = extension_of(laplacian.PROGRAM)
    cache = BuildCache(tmp_path)
    release = DaCeCompiler(Device.CPU, BuildType.RELEASE, cache).plan(extension)
    debug = DaCeCompiler(Device.CPU, BuildType.DEBUG, cache).plan(extension)
    other_flags = DaCeCompiler(Device.CPU, BuildType.RELEASE, cache, cpu_args=("-O1",)).plan(
        extension
    )
    assert len({release.key, debug.key, other_flags.key}) == 3
    assert release.key.startswith("laplacian_program_dace_")
    sdfg_file = tmp_path / "sdfg.json"
    sdfg_file.write_text(extension.sdfg_source.source_code)
    code = _pin_package_version() + textwrap.dedent(
        f"""
        from pathlib import Path
        from stencilchain.program.device import Device
        from stencilchain.steps.caches.build_cache import BuildCache
        from stencilchain.steps.dace.bindings import DaCeBindings
        from stencilchain.steps.dace.compiler import DaCeCompiler
        from stencilchain.steps.settings import BuildType
        from stencilchain.steps.stages import ProgramSource
        from stencilchain.examples import laplacian
        program = laplacian.PROGRAM.ir
        source = ProgramSource(program, program.name, Path({str(sdfg_file)!r}).read_text(), "sdfg", Device.CPU)
        plan = DaCeCompiler(Device.CPU, BuildType.RELEASE, BuildCache(Path({str(tmp_path)!r}))).plan(DaCeBindings(Device.CPU)(source))
        print(plan.key)
        """
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == release.key


def test_folder_without_marker_or_files_is_rebuilt(tmp_path: Path) -> None:
    compiler = DaCeCompiler(Device.CPU, BuildType.RELEASE, BuildCache(tmp_path))
    extension = extension_of(affine_program)
    first = compiler(extension)

    def check(artifact: CompiledArtifact) -> None:
        """Load and run `artifact` in a fresh process (this one never loads it)."""
        where = (str(artifact.module_path), artifact.module_name, artifact.entry_point)
        code = textwrap.dedent(
            f"""
            import numpy as np
            from pathlib import Path
            from stencilchain.steps.stages import CompiledArtifact
            path, name, entry = {where!r}
            artifact = CompiledArtifact(Path(path), name, entry, Path(path).parent)
            f = np.arange(12.0).reshape(3, 4); out = np.zeros_like(f)
            artifact.load()(f, out)
            assert (out == 2.0 * f + 1.0).all(), out
            """
        )
        env = dict(os.environ, PYTHONPATH=str(REPO))
        subprocess.run([sys.executable, "-c", code], env=env, check=True)

    check(first)
    # the marker is gone (a crashed build): rebuilt from scratch
    (first.build_dir / MARKER_NAME).unlink()
    (first.build_dir / "stale-file").write_text("from a crashed build")
    second = compiler(extension)
    assert second.module_path == first.module_path
    assert not (second.build_dir / "stale-file").exists()
    check(second)
    # the marker survived, the DaCe library did not: rebuilt
    (second.build_dir / second.metadata["dace_library"]).unlink()
    third = compiler(extension)
    assert (third.build_dir / third.metadata["dace_library"]).is_file()
    check(third)
    # a complete folder is loaded as is
    log = _build_log(third)
    loaded = compiler(extension)
    assert third.built and not loaded.built
    assert dataclasses.replace(loaded, built=True) == third
    assert _build_log(third) == log


def test_a_module_without_its_dace_library_fails_its_first_call_naming_it(tmp_path: Path) -> None:
    """The module opens the DaCe library as it is loaded; where it cannot, the import
    succeeds and the first call says which file is missing (the load of a cached entry
    checks its files before: this is what a folder damaged afterwards does)."""
    artifact = DaCeCompiler(Device.CPU, BuildType.RELEASE, BuildCache(tmp_path))(
        extension_of(affine_program)
    )
    library = artifact.build_dir / artifact.metadata["dace_library"]
    library.unlink()
    where = (str(artifact.module_path), artifact.module_name, artifact.entry_point)
    code = textwrap.dedent(
        f"""
        import numpy as np
        from pathlib import Path
        from stencilchain.steps.stages import CompiledArtifact
        path, name, entry = {where!r}
        run = CompiledArtifact(Path(path), name, entry, Path(path).parent).load()
        f = np.arange(12.0).reshape(3, 4); out = np.zeros_like(f)
        try:
            run(f, out)
        except RuntimeError as error:
            print(error)
        else:
            raise SystemExit("the call ran without its DaCe library")
        """
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert f"cannot load {library}" in done.stdout
    assert "the build folder is damaged" in done.stdout


def test_build_leaves_dace_config_alone_and_honours_the_build_type(
    tmp_path: Path, toolchain: Toolchain
) -> None:
    from dace.config import Config

    extension = extension_of(affine_program)
    flags = "--not-a-flag-stencilchain-uses"
    with (
        dace.config.set_temporary("compiler", "cpu", "args", value=flags),
        dace.config.set_temporary("compiler", "build_type", value="RelWithDebInfo"),
    ):
        before = copy.deepcopy(Config._data._config)
        artifact = DaCeCompiler(Device.CPU, BuildType.DEBUG, BuildCache(tmp_path))(extension)
        assert Config._data._config == before
        assert Config.get("compiler", "cpu", "args") == flags
    commands = json.loads(
        (artifact.build_dir / "dace" / "build" / "compile_commands.json").read_text()
    )
    program = next(c["command"] for c in commands if "affine_program.cpp" in c["file"])
    assert " -g" in program and "-O3" not in program and "--not-a-flag" not in program
    log = _build_log(artifact)
    assert "-O0 -g" in log and "-O2" not in log
    assert artifact.metadata["build_type"] == "debug"
    # the Release build of the same SDFG (same name, same symbols) runs beside it
    release = toolchain.compile(affine_program).artifact
    assert release.module_name != artifact.module_name
    f = np.linspace(-1, 1, 20).reshape(4, 5)
    for entry in (artifact.load(), release.load(), artifact.load()):
        out = np.zeros_like(f)
        entry(f, out)
        np.testing.assert_array_equal(out, 2.0 * f + 1.0)


# --- DaCe's init reading the symbols ---------------------------------------------------------------


def _sdfg_with_a_persistent_transient(program: ir.Program) -> str:
    """affine_program's SDFG by hand, through a persistent transient `tmp` (allocated by
    DaCe's init function, with the sizes of the first call)."""
    from stencilchain.steps.dace.sdfg_text import sdfg_to_source

    sym = {
        n: dace.symbol(n, dace.int64) for n in ("n_I", "n_J", "f_s0", "f_s1", "out_s0", "out_s1")
    }
    sdfg = dace.SDFG(program.name)
    for name in sym:
        sdfg.add_symbol(name, dace.int64)
    shape = [sym["n_I"], sym["n_J"]]
    sdfg.add_array("f", shape, dace.float64, strides=[sym["f_s0"], sym["f_s1"]])
    sdfg.add_array("out", shape, dace.float64, strides=[sym["out_s0"], sym["out_s1"]])
    sdfg.add_transient("tmp", shape, dace.float64, lifetime=dace.AllocationLifetime.Persistent)
    state = sdfg.add_state("main")
    rng = {"i": "0:n_I", "j": "0:n_J"}
    state.add_mapped_tasklet(
        "twice",
        rng,
        {"a": dace.Memlet("f[i, j]")},
        "b = 2.0 * a",
        {"b": dace.Memlet("tmp[i, j]")},
        external_edges=True,
    )
    second = sdfg.add_state_after(state, "plus_one")
    second.add_mapped_tasklet(
        "plus",
        rng,
        {"a": dace.Memlet("tmp[i, j]")},
        "b = a + 1.0",
        {"b": dace.Memlet("out[i, j]")},
        external_edges=True,
    )
    sdfg.validate()
    return sdfg_to_source(sdfg)


def test_init_reading_the_symbols_is_redone_when_they_change(tmp_path: Path) -> None:
    program = affine_program.ir
    source = ProgramSource(
        program, program.name, _sdfg_with_a_persistent_transient(program), "sdfg", Device.CPU
    )
    artifact = DaCeCompiler(Device.CPU, BuildType.RELEASE, BuildCache(tmp_path))(
        DaCeBindings(Device.CPU)(source)
    )
    assert artifact.metadata["init"] == "per-symbols"
    entry = artifact.load()
    for shape in ((3, 4), (40, 50), (3, 4), (7, 2), (40, 50)):
        f = np.random.default_rng(shape[0]).random(shape)
        for layout in ("C", "F"):
            g = place(f, layout, np.random.default_rng(0)).array
            out = np.zeros_like(g)
            entry(g, out)
            np.testing.assert_array_equal(out, 2.0 * g + 1.0)


# --- steps ----------------------------------------------------------------------------------


def test_bindings_and_compiler_reject_other_stages() -> None:
    program = laplacian.PROGRAM.ir
    cpp = ProgramSource(program, program.name, "int x;", "cpp", Device.CPU)
    with pytest.raises(ValueError, match="language 'sdfg'"):
        DaCeBindings(Device.CPU)(cpp)
    sdfg = ProgramSource(program, program.name, "{}", "sdfg", Device.GPU)
    with pytest.raises(ValueError, match="cannot wrap an SDFG generated for gpu"):
        DaCeBindings(Device.CPU)(sdfg)
    with pytest.raises(TypeError, match="must be a Device"):
        DaCeBindings("cpu")  # type: ignore[arg-type]
    extension = DaCeBindings(Device.CPU)(
        ProgramSource(program, program.name, "{}", "sdfg", Device.CPU)
    )
    compiler = DaCeCompiler(Device.CPU, BuildType.RELEASE, BuildCache(Path("/nonexistent")))
    with pytest.raises(TypeError, match="DaCeExtensionSource"):
        compiler(ExtensionSource(extension.program_source, extension.binding_source))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="for gpu"):
        DaCeCompiler(Device.GPU, BuildType.RELEASE, BuildCache(Path("/nonexistent"))).plan(
            extension
        )
    with pytest.raises(TypeError, match="cpu_args"):
        DaCeCompiler(Device.CPU, BuildType.RELEASE, BuildCache(Path("/x")), cpu_args="-O2")  # type: ignore[arg-type]


def test_extension_source_fingerprint_covers_the_sdfg() -> None:
    program = laplacian.PROGRAM.ir
    a = DaCeBindings(Device.CPU)(ProgramSource(program, program.name, "{}", "sdfg", Device.CPU))
    b = DaCeBindings(Device.CPU)(ProgramSource(program, program.name, "[]", "sdfg", Device.CPU))
    assert a.program_source == b.program_source and a.binding_source == b.binding_source
    assert a.fingerprint() != b.fingerprint()


def test_shim_members_are_named_like_the_sdfg_arguments() -> None:
    names = [m.name for m in shim_members(scalars_of_every_dtype.ir)]
    assert names[:3] == ["a", "a_s0", "a_s1"]
    assert {"n_I", "n_J", "x", "y", "k", "m", "flag"} <= set(names)


def test_modules_do_not_import_dace() -> None:
    code = (
        "import sys\n"
        "import stencilchain.steps.dace.bindings, stencilchain.steps.dace.compiler\n"
        "import stencilchain.steps.dace.shim\n"
        "assert 'dace' not in sys.modules, 'dace imported'\n"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


def test_failed_build_raises_compilation_error_and_leaves_no_marker(tmp_path: Path) -> None:
    from stencilchain.errors import CompilationError

    compiler = DaCeCompiler(
        Device.CPU, BuildType.RELEASE, BuildCache(tmp_path), cpu_args=("-fno-such-flag-anywhere",)
    )
    extension = extension_of(affine_program)
    with pytest.raises(CompilationError) as error:
        compiler(extension)
    assert "no-such-flag" in str(error.value)
    assert error.value.log_path is not None and error.value.log_path.is_file()
    folder = error.value.log_path.parent
    assert not (folder / MARKER_NAME).exists()
    assert not list(folder.glob("build.log.*"))  # the side jobs were stopped and cleaned up


@pytest.mark.parametrize("which", ["program", "init"])
def test_a_dace_parameter_of_another_type_stops_the_build_naming_it(
    which: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shim checks each parameter DaCe declares against what it passes (a static_assert
    per parameter): one that differs is a build error naming it, never a conversion."""
    from stencilchain.errors import CompilationError
    from stencilchain.steps.dace import compiler as compiler_module
    from stencilchain.steps.dace.shim import CArgument

    generate = compiler_module.generate_program
    names: list[str] = []

    def retyped(*args: Any) -> Any:
        generated = generate(*args)
        field = "program_args" if which == "program" else "init_args"
        params = list(getattr(generated, field))
        k = len(params) - 1
        names.append(params[k].name)
        params[k] = CArgument(
            f"int * {params[k].name}" if which == "program" else f"double {params[k].name}",
            params[k].name,
        )
        return dataclasses.replace(generated, **{field: tuple(params)})

    monkeypatch.setattr(compiler_module, "generate_program", retyped)
    compiler = DaCeCompiler(Device.CPU, BuildType.RELEASE, BuildCache(tmp_path))
    with pytest.raises(CompilationError) as error:
        compiler(extension_of(affine_program))
    log = error.value.log_path.read_text() if error.value.log_path else ""
    named = {"program": "DaCe argument ", "init": "DaCe init argument "}[which]
    (last,) = names
    assert f"{named}{last} of affine_program differs in type" in log
    assert error.value.log_path is not None
    assert not (error.value.log_path.parent / MARKER_NAME).exists()


def test_the_marker_records_the_translators_and_the_bindings_settings(
    toolchain: Toolchain,
) -> None:
    """A DaCe build's marker says what translated it (auto_optimize, ...) and what bound it
    (openmp_threshold), each under its own name, so that `cache explain` can name them."""
    from stencilchain.steps.stages import step_settings

    artifact = toolchain.compile(laplacian.PROGRAM).artifact
    cache = toolchain.workflow.compilation.cache
    (entry,) = [e for e in cache.entries() if e.path == artifact.build_dir]
    assert entry.translation_settings == json.loads(step_settings(toolchain.workflow.translation))
    assert "auto_optimize" in entry.translation_settings
    assert entry.bindings_settings == json.loads(step_settings(toolchain.workflow.bindings))
    assert "openmp_threshold" in entry.bindings_settings
