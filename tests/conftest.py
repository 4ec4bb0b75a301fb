"""Test-wide settings: no test writes to the user's real cache, OpenMP threads are fixed,
and compiled programs are shared between tests through one session-scoped cache."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._fast import is_fast

# Set before anything builds a container from the environment (stencilchain.backends does).
# The pytest-xdist workers inherit the controller's folder, so a program compiled by one
# worker is a cache hit for the others (the build cache's locks make that safe).
_WORKER = bool(os.environ.get("PYTEST_XDIST_WORKER"))
_INHERITED = os.environ.get("SC_TESTS_SESSION_CACHE") if _WORKER else None
_SESSION_CACHE = Path(_INHERITED or tempfile.mkdtemp(prefix="stencilchain-tests-"))
os.environ["SC_TESTS_SESSION_CACHE"] = str(_SESSION_CACHE)
os.environ["STENCILCHAIN_CACHE_DIR"] = str(_SESSION_CACHE)
os.environ["STENCILCHAIN_CACHE_LIFETIME"] = "persistent"
os.environ["OMP_NUM_THREADS"] = "2"


def pytest_unconfigure(config: pytest.Config) -> None:
    if not _WORKER:  # the controller made the folder; it removes it after the workers end
        shutil.rmtree(_SESSION_CACHE, ignore_errors=True)


@pytest.fixture(scope="session")
def session_cache_dir() -> Path:
    """The cache shared by every test that is not about caching."""
    return _SESSION_CACHE


@pytest.fixture(scope="session")
def gtfn_cpu(session_cache_dir: Path):  # type: ignore[no-untyped-def]
    """run_gtfn_cpu built from a container on the session cache."""
    from stencilchain.containers import build_container

    return build_container({}, cache_dir=session_cache_dir).gtfn.toolchain()


@pytest.fixture(scope="session")
def gtfn_cpu_no_transforms(session_cache_dir: Path):  # type: ignore[no-untyped-def]
    import functools

    from stencilchain.containers import build_container, make_gtfn_translation, override_step

    container = build_container({}, cache_dir=session_cache_dir)
    container.gtfn.name.override("run_gtfn_cpu_no_transforms")
    override_step(
        container.gtfn.translation,
        functools.partial(make_gtfn_translation, enable_transforms=False),
    )
    return container.gtfn.toolchain()


def _dace_cpu_toolchain(cache_dir: Path, name: str, auto_optimize: bool):  # type: ignore[no-untyped-def]
    """A DaCe CPU toolchain like stencilchain.backends' `name`, on `cache_dir`; skips the
    test when DaCe (the `dace` extra) cannot be imported."""
    pytest.importorskip("dace", reason="the DaCe toolchains need the `dace` extra")
    from stencilchain.containers import build_container

    container = build_container({}, cache_dir=cache_dir, auto_optimize=auto_optimize)
    container.dace.name.override(name)
    return container.dace.toolchain()


@pytest.fixture(scope="session")
def dace_cpu(session_cache_dir: Path):  # type: ignore[no-untyped-def]
    """run_dace_cpu (auto-optimized) built from a container on the session cache."""
    return _dace_cpu_toolchain(session_cache_dir, "run_dace_cpu", auto_optimize=True)


@pytest.fixture(scope="session")
def dace_cpu_noopt(session_cache_dir: Path):  # type: ignore[no-untyped-def]
    """run_dace_cpu_noopt (no auto-optimization) built from a container on the session cache."""
    return _dace_cpu_toolchain(session_cache_dir, "run_dace_cpu_noopt", auto_optimize=False)


@pytest.fixture()
def private_cache_dir(tmp_path: Path) -> Iterator[Path]:
    """A cache of this test's own, for tests about caching."""
    path = tmp_path / "cache"
    path.mkdir()
    yield path


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks the tests of tests/_fast.py `fast` (but those marked slow)."""
    here = Path(__file__).parent
    for item in items:
        if not item.path.is_relative_to(here):  # a test file given from elsewhere
            continue
        relative = item.path.relative_to(here).as_posix() + "::" + item.nodeid.partition("::")[2]
        if is_fast(relative) and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.fast)
