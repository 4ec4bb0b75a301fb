"""What a DaCe build compiles and links, and what it leaves out: the extension's two units
read their system headers precompiled (and give the objects they give without), DaCe's
stub library is not built, the SDFG's text lies beside its code, and the program's result
is the embedded executor's."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import numpy as np
import pytest

dace = pytest.importorskip("dace")

import stencilchain as sc  # noqa: E402
from stencilchain.program.device import Device  # noqa: E402
from stencilchain.steps.caches.build_cache import BuildCache  # noqa: E402
from stencilchain.steps.dace.bindings import DaCeBindings  # noqa: E402
from stencilchain.steps.dace.compiler import DaCeCompiler  # noqa: E402
from stencilchain.steps.dace.translator import DaCeTranslator  # noqa: E402
from stencilchain.steps.settings import BuildType  # noqa: E402

I = sc.Dimension("I")
J = sc.Dimension("J")
F = sc.Field[[I, J], sc.float64]


@sc.field_operator
def _blend(f: F) -> F:
    return 0.25 * f(I + 1) + 0.75 * f(J - 1)


@sc.program
def blend_program(f: F, out: F) -> None:
    _blend(f, out=out)


def _unit_command(log: str, unit: str) -> list[str]:
    [line] = [line for line in log.splitlines() if line.startswith("$ ") and f"/{unit} " in line]
    return shlex.split(line[2:])


def _without_prelude(command: list[str]) -> list[str]:
    at = command.index("-include")
    return [*command[:at], *command[at + 3 :]]


def test_units_read_their_precompiled_headers_and_the_stub_is_not_built(tmp_path: Path) -> None:
    source = DaCeBindings(Device.CPU)(DaCeTranslator(Device.CPU)(blend_program.ir))
    compiler = DaCeCompiler(Device.CPU, BuildType.RELEASE, BuildCache(tmp_path))
    artifact = compiler(source)
    folder = artifact.build_dir
    log = (folder / "build.log").read_text()
    for unit in ("bindings.cpp", "shim.cpp"):
        command = _unit_command(log, unit)
        output = Path(command[command.index("-o") + 1])
        built = output.read_bytes()
        done = subprocess.run([*command, "-H"], capture_output=True, text=True, check=True)
        header = command[command.index("-include") + 1]
        assert f"! {header}.gch" in done.stderr, unit  # GCC read the precompiled header
        subprocess.run(_without_prelude(command), check=True)
        assert output.read_bytes() == built, unit  # the same object without it
    dace_build = folder / "dace" / "build"
    assert not list(dace_build.glob("*dacestub*"))
    sdfg_name = artifact.metadata["sdfg_name"]
    assert (folder / "dace" / "program.sdfg").read_text() == source.sdfg_source.source_code
    assert f"__HASH_{sdfg_name}" in (folder / "dace" / "include" / "hash.h").read_text()

    f = np.random.default_rng(1).random((7, 6))
    out, expected = np.zeros_like(f), np.zeros_like(f)
    artifact.load()(f, out)
    blend_program(f, expected)
    np.testing.assert_array_equal(out, expected)


def test_without_precompiled_headers_the_units_include_theirs(tmp_path: Path) -> None:
    source = DaCeBindings(Device.CPU)(DaCeTranslator(Device.CPU)(blend_program.ir))
    compiler = DaCeCompiler(
        Device.CPU, BuildType.RELEASE, BuildCache(tmp_path), precompiled_headers=False
    )
    artifact = compiler(source)
    log = (artifact.build_dir / "build.log").read_text()
    assert "-include" not in _unit_command(log, "bindings.cpp")
    assert "-include" not in _unit_command(log, "shim.cpp")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("pch-")]
    f = np.random.default_rng(2).random((5, 8))
    out, expected = np.zeros_like(f), np.zeros_like(f)
    artifact.load()(f, out)
    blend_program(f, expected)
    np.testing.assert_array_equal(out, expected)
