"""Step builders take the config positionally and only step-local settings, keyword-only
and typed. A shared setting, a misspelled one or a value of the wrong type is a TypeError
when the toolchain is built, and mypy rejects it inside a `functools.partial`.

The mypy checks run mypy once, on one snippet whose bad lines end in `# expected error`.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import subprocess
import sys
import textwrap
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import stencilchain
from stencilchain.containers import (
    GTFNConfig,
    Materialization,
    build_container,
    make_gtfn_bindings,
    make_gtfn_compiler,
    make_gtfn_translation,
    override_step,
)
from stencilchain.program.device import Device
from stencilchain.steps.settings import BuildType, DataLayout

BUILDERS: dict[str, tuple[Callable[..., Any], dict[str, type]]] = {
    "translation": (
        make_gtfn_translation,
        {"enable_transforms": bool, "openmp_threshold": int, "materialization": Materialization},
    ),
    "bindings": (make_gtfn_bindings, {"flavor": str}),
    "compilation": (
        make_gtfn_compiler,
        {"extra_flags": tuple[str, ...], "openmp": bool, "native_cpu": bool},
    ),
}


@pytest.mark.parametrize("step", list(BUILDERS))
def test_builder_signature(step: str) -> None:
    """cfg is positional-only; every other parameter is keyword-only, typed, with a default."""
    builder, local = BUILDERS[step]
    params = list(inspect.signature(builder).parameters.values())
    hints = typing.get_type_hints(builder)
    assert params[0].name == "cfg"
    assert params[0].kind is inspect.Parameter.POSITIONAL_ONLY
    assert hints["cfg"] is GTFNConfig
    rest = params[1:]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in rest)
    assert all(p.default is not inspect.Parameter.empty for p in rest)
    assert {p.name: hints[p.name] for p in rest} == local
    shared = {"device", "build_type", "cache_lifetime", "cache_dir", "data_layout"}
    assert not shared & {p.name for p in rest}


def test_step_local_settings_are_keyword_only() -> None:
    cfg = GTFNConfig()
    with pytest.raises(TypeError):
        make_gtfn_translation(cfg, False)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        make_gtfn_bindings(cfg=cfg)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="config must be a GTFNConfig"):
        make_gtfn_compiler(object())  # type: ignore[arg-type]


BAD_PARTIALS: list[tuple[str, dict[str, Any], str]] = [
    # shared settings belong to the config
    ("translation", {"device": Device.GPU}, "device"),
    ("translation", {"data_layout": DataLayout.UNIT_STRIDE}, "data_layout"),
    ("bindings", {"device": Device.CPU}, "device"),
    ("compilation", {"build_type": BuildType.DEBUG}, "build_type"),
    ("compilation", {"cache_dir": Path("/tmp")}, "cache_dir"),
    # misspelled step-local settings
    ("translation", {"enable_transform": False}, "enable_transform"),
    ("bindings", {"flavour": "pybind11"}, "flavour"),
    ("compilation", {"extra_flag": ("-O3",)}, "extra_flag"),
    # wrong value types
    ("translation", {"enable_transforms": "no"}, "enable_transforms"),
    ("translation", {"openmp_threshold": 1.5}, "openmp_threshold"),
    ("translation", {"openmp_threshold": True}, "openmp_threshold"),
    ("bindings", {"flavor": 1}, "flavor"),
    ("compilation", {"extra_flags": ["-O3"]}, "extra_flags"),
    ("compilation", {"extra_flags": ("-O3", 3)}, "extra_flags"),
    ("compilation", {"openmp": 1}, "openmp"),
    ("translation", {"materialization": "auto"}, "materialization"),
    ("compilation", {"native_cpu": "yes"}, "native_cpu"),
]


@pytest.mark.parametrize(
    ("step", "kwargs", "name"),
    BAD_PARTIALS,
    ids=[f"{s}-{'-'.join(k)}-{type(next(iter(k.values()))).__name__}" for s, k, _ in BAD_PARTIALS],
)
def test_bad_partial_fails_when_the_toolchain_is_built(
    step: str, kwargs: dict[str, Any], name: str, session_cache_dir: Path
) -> None:
    c = build_container({}, cache_dir=session_cache_dir)
    builder, _ = BUILDERS[step]
    with (
        override_step(getattr(c.gtfn, step), functools.partial(builder, **kwargs)),
        pytest.raises(TypeError, match=re.escape(name)),
    ):
        c.gtfn.toolchain()


# --- mypy ----------------------------------------------------------------------------------

SNIPPET = """
from __future__ import annotations

import functools

from stencilchain.containers import (
    GTFNConfig,
    Materialization,
    build_container,
    make_gtfn_bindings,
    make_gtfn_compiler,
    make_gtfn_translation,
    override_step,
)
from stencilchain.program.device import Device
from stencilchain.steps.gtfn.bindings import GTFNBindingsStep
from stencilchain.steps.gtfn.translation import GTFNTranslationStep
from stencilchain.steps.settings import BuildType, DataLayout

# good partials: step-local settings with the right types
no_transforms = functools.partial(make_gtfn_translation, enable_transforms=False)
few_threads = functools.partial(make_gtfn_translation, enable_transforms=True, openmp_threshold=10)
pybind = functools.partial(make_gtfn_bindings, flavor="pybind11")
flags = functools.partial(make_gtfn_compiler, extra_flags=("-O3",), openmp=False)
step: GTFNTranslationStep = no_transforms(GTFNConfig(device=Device.GPU))

# shared settings
functools.partial(make_gtfn_translation, device=Device.GPU)  # expected error
functools.partial(make_gtfn_translation, data_layout=DataLayout.UNIT_STRIDE)  # expected error
functools.partial(make_gtfn_bindings, device=Device.CPU)  # expected error
functools.partial(make_gtfn_compiler, build_type=BuildType.DEBUG)  # expected error
# misspelled settings
functools.partial(make_gtfn_translation, enable_transform=False)  # expected error
functools.partial(make_gtfn_bindings, flavour="pybind11")  # expected error
functools.partial(make_gtfn_compiler, extra_flag=("-O3",))  # expected error
# wrong value types
functools.partial(make_gtfn_translation, enable_transforms="no")  # expected error
functools.partial(make_gtfn_translation, openmp_threshold=1.5)  # expected error
functools.partial(make_gtfn_bindings, flavor=1)  # expected error
functools.partial(make_gtfn_compiler, extra_flags=["-O3"])  # expected error
functools.partial(make_gtfn_compiler, openmp="yes")  # expected error

# customizing a step is one typed line
c = build_container()
with override_step(c.gtfn.translation, no_transforms):
    pass
override_step(c.gtfn.bindings, pybind)
override_step(c.gtfn.compilation, flags)


def pybind11_bindings(cfg: GTFNConfig) -> GTFNBindingsStep:
    return make_gtfn_bindings(cfg, flavor="pybind11")


override_step(c.gtfn.bindings, pybind11_bindings)
override_step(c.gtfn.translation, lambda: no_transforms(GTFNConfig()))  # expected error
override_step(c.gtfn.translation, functools.partial(make_gtfn_translation, device=Device.CPU))  # expected error
override_step(c.gtfn.translation, lambda cfg: make_gtfn_translation(cfg, enable_transforms=False))  # lambda of the default builder
"""
EXPECTED = "# expected error"
LAMBDA = "# lambda of the default builder"
ERROR = re.compile(r"^snippet\.py:(\d+): error: (.*)$", re.MULTILINE)


def lines_marked(marker: str) -> set[int]:
    text = textwrap.dedent(SNIPPET)
    return {n for n, line in enumerate(text.splitlines(), start=1) if line.endswith(marker)}


@pytest.fixture(scope="module")
def mypy_errors(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[str]]:
    """mypy --strict on SNIPPET: the error messages by line number."""
    folder = tmp_path_factory.mktemp("mypy")
    (folder / "snippet.py").write_text(textwrap.dedent(SNIPPET))
    root = Path(stencilchain.__file__).resolve().parents[1]
    env = {**os.environ, "MYPYPATH": str(root)}  # the editable install is invisible to mypy
    proc = subprocess.run(
        [
            sys.executable, "-m", "mypy", "--strict", "--no-incremental",
            f"--config-file={root / 'pyproject.toml'}",  # its overrides cover missing extras
            f"--cache-dir={folder / 'cache'}", "snippet.py",
        ],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    errors: dict[int, list[str]] = {}
    for line, message in ERROR.findall(proc.stdout):
        errors.setdefault(int(line), []).append(message)
    assert "import-not-found" not in proc.stdout, proc.stdout
    return errors


@pytest.mark.slow
def test_mypy_rejects_bad_partials(mypy_errors: dict[int, list[str]]) -> None:
    expected = lines_marked(EXPECTED)
    assert len(expected) == 14
    missing = sorted(expected - set(mypy_errors))
    assert not missing, f"mypy accepted the bad lines {missing}"
    text = textwrap.dedent(SNIPPET).splitlines()
    for line in expected:
        messages = " ".join(mypy_errors[line])
        if "device=" in text[line - 1] or "build_type=" in text[line - 1]:
            assert "Unexpected keyword argument" in messages, (line, messages)


@pytest.mark.slow
def test_mypy_accepts_good_partials(mypy_errors: dict[int, list[str]]) -> None:
    allowed = lines_marked(EXPECTED) | lines_marked(LAMBDA)
    unexpected = {n: m for n, m in mypy_errors.items() if n not in allowed}
    assert not unexpected


@pytest.mark.slow
def test_mypy_accepts_a_lambda_of_the_default_builder(mypy_errors: dict[int, list[str]]) -> None:
    (line,) = lines_marked(LAMBDA)
    assert line not in mypy_errors, mypy_errors.get(line)
