"""Start-up (ADR 0034): defining a stencil imports no compiler, no DaCe and no container;
the package's identity for cache keys is the installer's record where the package is
installed and its files' identities elsewhere, each changing when the code does; the host
CPU's identity reads the first processor only; a fresh process finds a cached program of
either family in both caches (no translation, no build) and computes what the embedded
executor does, through the load index (docs/adr/0039-load-index.md) or, without it,
through both caches."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from stencilchain import _version
from stencilchain.steps.build import tools

ROOT = Path(__file__).resolve().parents[2]

PROGRAMS = """
import stencilchain as sc
I, J = sc.Dimension("I"), sc.Dimension("J")
F = sc.Field[[I, J], sc.float64]

@sc.field_operator
def lap(f: F) -> F:
    return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + 0.5 * f(J - 1)

@sc.program
def startup_laplacian(f: F, out: F):
    lap(f, out=out)
"""


def run_python(code: str, env: dict[str, str], cwd: Path) -> Any:
    """The JSON that `code`, run in a fresh process, prints last."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env, cwd=cwd, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def fresh_env(folder: Path, cache: Path) -> dict[str, str]:
    path = os.pathsep.join([str(folder), str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {**os.environ, "PYTHONPATH": path, "STENCILCHAIN_CACHE_DIR": str(cache),
            "OMP_NUM_THREADS": "1"}  # fmt: skip


def test_defining_a_stencil_imports_no_compiler_nor_container(tmp_path: Path) -> None:
    (tmp_path / "startup_programs.py").write_text(PROGRAMS)
    loaded = run_python(
        """
        import json, sys
        import startup_programs
        print(json.dumps(sorted(sys.modules)))
        """,
        fresh_env(tmp_path, tmp_path / "cache"),
        tmp_path,
    )
    heavy = ("dace", "cmake", "ninja", "pybind11", "dependency_injector", "sympy", "yaml")
    assert [m for m in loaded if m.split(".")[0] in heavy] == []
    ours = [m for m in loaded if m.startswith("stencilchain.")]
    assert [m for m in ours if m.split(".")[1] in ("steps", "containers", "runtime", "app")] == []
    assert not (tmp_path / "cache").exists()  # nothing written


def test_the_import_loads_no_dsl_and_a_definition_only_what_tracing_needs(
    tmp_path: Path,
) -> None:
    """`import stencilchain` loads none of the DSL (nor NumPy); defining a stencil loads the
    DSL's tracing, not what a call needs (the embedded executor, the argument binder, the
    table checks, static programs), nor hashlib (OpenSSL), nor what the program does not
    use (table specialisation, lowered calls, scans); the first embedded call loads what a call
    needs and computes the Laplacian."""
    (tmp_path / "startup_programs.py").write_text(PROGRAMS)
    loaded = run_python(
        """
        import json, sys
        import stencilchain
        imported = sorted(sys.modules)
        import startup_programs
        defined = sorted(sys.modules)
        import numpy as np
        f = np.arange(25.0).reshape(5, 5) ** 2
        out = np.zeros_like(f)
        startup_programs.startup_laplacian(f, out)
        print(json.dumps([imported, defined, sorted(sys.modules), out.tolist()]))
        """,
        fresh_env(tmp_path, tmp_path / "cache"),
        tmp_path,
    )
    imported, defined, called, out = loaded
    assert [m for m in imported if m.startswith("stencilchain.")] == [
        "stencilchain._version",
        "stencilchain.errors",
    ]
    assert "numpy" not in imported and "dataclasses" not in imported
    call_only = [
        "stencilchain.program.arguments",
        "stencilchain.program.embedded",
        "stencilchain.program.own_ranges",
        "stencilchain.program.table_reads",
    ]
    assert "stencilchain.program.program_trace" in defined
    later = [*call_only, "stencilchain.program.static_program", "hashlib"]
    assert [m for m in later if m in defined] == []
    # what only some programs need: tables of open connectivities, lowered calls, scans
    unused = [
        "stencilchain.program.table_specialisation",
        "stencilchain.program.lowered_calls",
        "stencilchain.program.scan_operator",
    ]
    assert [m for m in unused if m in defined] == []
    assert [m for m in call_only if m not in called] == []
    f = [[(5.0 * i + j) ** 2 for j in range(5)] for i in range(5)]
    for i in range(1, 4):
        for j in range(1, 4):
            expected = -4.0 * f[i][j] + f[i + 1][j] + f[i - 1][j] + f[i][j + 1] + 0.5 * f[i][j - 1]
            assert out[i][j] == expected
    assert out[0] == [0.0] * 5  # outside the inferred domain: untouched


def test_an_installed_package_is_identified_by_its_record(tmp_path: Path) -> None:
    package = tmp_path / "site-packages" / "stencilchain"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    assert _version.installed_identity(str(package)) is None  # no record: not installed
    info = tmp_path / "site-packages" / f"stencilchain-{_version.__version__}.dist-info"
    info.mkdir()
    (info / "RECORD").write_text("stencilchain/__init__.py,sha256=x,0\n")
    first = _version.installed_identity(str(package))
    assert first is not None and str(info / "RECORD") in first
    (info / "RECORD").write_text("stencilchain/__init__.py,sha256=y,10\n")  # a reinstall
    assert _version.installed_identity(str(package)) not in (None, first)
    # another version's record is not this installation's
    other = tmp_path / "elsewhere" / "stencilchain"
    other.mkdir(parents=True)
    (tmp_path / "elsewhere" / "stencilchain-0.0.0.dist-info").mkdir()
    (tmp_path / "elsewhere" / "stencilchain-0.0.0.dist-info" / "RECORD").write_text("")
    assert _version.installed_identity(str(other)) is None


def test_a_checkout_is_identified_by_its_files(tmp_path: Path) -> None:
    tree = tmp_path / "stencilchain"
    (tree / "steps").mkdir(parents=True)
    (tree / "app").mkdir()
    for layer in ("runtime", "containers", "distributed", "meshes", "compat"):
        (tree / layer).mkdir()
        (tree / layer / "x.py").write_text("")
    (tree / "steps" / "a.py").write_text("x = 1\n")
    (tree / "steps" / "b.h").write_text("int x;\n")
    (tree / "steps" / "runtime").mkdir()  # a layer's name below the top is keyed
    (tree / "steps" / "runtime" / "c.py").write_text("")
    (tree / "app" / "cli.py").write_text("")
    (tree / "notes.txt").write_text("")

    def identity() -> list[str]:
        found: list[str] = []
        _version._add_identities(str(tree), "", found)
        return sorted(found)

    first = identity()
    assert [entry.split(":")[0] for entry in first] == [
        os.path.join("steps", "a.py"),
        os.path.join("steps", "b.h"),
        os.path.join("steps", "runtime", "c.py"),
    ]  # app/, the layers that make no cached output and other suffixes change no key
    with open(tree / "steps" / "a.py", "a") as file:  # an edit in place
        file.write("y = 2\n")
    assert identity() != first


def test_this_package_has_one_identity_per_process() -> None:
    version = _version.package_version()
    assert version.startswith(_version.__version__ + "+")
    assert _version.package_version() is version


def test_host_cpu_identity_reads_the_first_processor(tmp_path: Path) -> None:
    blocks = [f"processor\t: {n}\nflags\t\t: sse avx{n}\n" for n in range(200)]
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("\n".join(blocks))
    whole = cpuinfo.read_text().split("\n\n", 1)[0]  # what reading all of it gives
    assert tools._first_processor(str(cpuinfo)) == whole == blocks[0].rstrip("\n")
    one = tmp_path / "one"
    one.write_text("processor\t: 0\n" + "flags\t\t: " + "x " * 5000 + "\n")  # longer than a read
    assert tools._first_processor(str(one)) == one.read_text()


@pytest.mark.parametrize("family", ["gtfn", "dace"])
def test_a_fresh_process_loads_a_cached_program_without_a_build(
    family: str, tmp_path: Path, private_cache_dir: Path
) -> None:
    if family == "dace":
        pytest.importorskip("dace", reason="the DaCe toolchains need the `dace` extra")
    (tmp_path / "startup_programs.py").write_text(PROGRAMS)
    env = fresh_env(tmp_path, private_cache_dir)
    code = f"""
        import json
        import numpy as np
        import startup_programs as p
        from stencilchain.containers import build_container
        from stencilchain.runtime import tracing
        import stencilchain.backends as backends
        tc = getattr(build_container(), {family!r}).toolchain()
        f = np.random.default_rng(1).random((12, 9)); out = np.zeros_like(f)
        with tracing.trace() as recording:
            p.startup_laplacian.with_backend(tc)(f, out)
        expected = np.zeros_like(f)
        p.startup_laplacian.with_backend(backends.run_embedded)(f, expected)
        caches = {{e["cat"]: e["args"]["cache"] for e in recording.events
                  if e.get("ph") == "X" and "cache" in e.get("args", {{}})}}
        print(json.dumps({{"caches": caches, "same": bool(np.array_equal(out, expected)),
                          "out": float(out.sum())}}))
        """
    first = run_python(code, env, tmp_path)
    assert first["caches"] == {"translation": "miss", "compilation": "miss"}
    assert first["same"] is True
    second = run_python(code, env, tmp_path)
    assert second["caches"] == {"index": "hit"}  # the load index: no translation, no plan
    assert second["same"] is True and second["out"] == first["out"]
    shutil.rmtree(private_cache_dir / "index")  # without it: both caches answer
    third = run_python(code, env, tmp_path)
    assert third["caches"] == {"translation": "hit", "compilation": "hit"}
    assert third["same"] is True and third["out"] == first["out"]


def test_an_executable_is_identified_through_its_links(tmp_path: Path) -> None:
    first, second = tmp_path / "g++-12", tmp_path / "clang++"
    first.write_text("#!/bin/sh\n")
    second.write_text("#!/bin/sh\n")
    os.utime(second, ns=(first.stat().st_atime_ns, first.stat().st_mtime_ns))  # same size, time
    link = tmp_path / "c++"
    link.symlink_to(first)
    before = tools.executable_identity(str(link))
    assert tools.executable_identity(str(link)) == before
    link.unlink()
    link.symlink_to(second)  # the alternative switched: another file
    assert tools.executable_identity(str(link)) != before
    with open(second, "a") as file:  # an upgrade in place
        file.write("# 2\n")
    changed = tools.executable_identity(str(link))
    assert changed not in (before, tools.executable_identity(str(first)))
