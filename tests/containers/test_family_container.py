"""One container shape for every family: its descriptor, its build environment (read when
the container is built) and its build policy, the same providers for GTFN and DaCe."""

from __future__ import annotations

from pathlib import Path

import pytest

from stencilchain.containers import (
    DaCeContainer,
    GTFNContainer,
    build_container,
    make_gtfn_bindings,
    make_gtfn_compiler,
    make_gtfn_translation,
)
from stencilchain.containers.config import gtfn_config_from
from stencilchain.containers.family_container import family_container
from stencilchain.runtime.build_policy import BuildPolicy
from stencilchain.steps.build.compiler_step import CompilerStep
from stencilchain.steps.build.tools import BuildEnvironment
from stencilchain.steps.dace.family import DACE
from stencilchain.steps.gtfn.family import GTFN


def test_both_containers_are_the_one_shape_with_their_descriptor(session_cache_dir: Path) -> None:
    assert set(GTFNContainer.providers) == set(DaCeContainer.providers)
    assert (GTFNContainer.__name__, DaCeContainer.__name__) == ("GTFNContainer", "DaCeContainer")
    assert GTFNContainer.__module__ == "stencilchain.containers.gtfn"
    c = build_container({}, cache_dir=session_cache_dir)
    assert c.gtfn.family() is GTFN and c.dace.family() is DACE
    assert c.gtfn.toolchain().family == GTFN.name


def test_a_new_family_is_a_descriptor_and_three_builders(session_cache_dir: Path) -> None:
    other = family_container(
        GTFN,
        config_from=gtfn_config_from,
        make_translation=make_gtfn_translation,
        make_bindings=make_gtfn_bindings,
        make_compilation=make_gtfn_compiler,
        name="OtherContainer",
        module=__name__,
        doc="another",
    )
    assert other is not GTFNContainer and other.__doc__ == "another"
    c = other(config={"cache_dir": session_cache_dir})
    assert c.toolchain().name == "run_gtfn_cpu"


def test_the_build_environment_is_read_when_the_container_is_built(
    monkeypatch: pytest.MonkeyPatch, session_cache_dir: Path
) -> None:
    monkeypatch.setenv("SC_TEST_SEEN", "before")
    monkeypatch.setenv("CXXFLAGS", "-O0")
    c = build_container({}, cache_dir=session_cache_dir)
    monkeypatch.setenv("SC_TEST_SEEN", "after")  # too late: the container has read it
    environment = c.gtfn.build_environment()
    assert environment is c.dace.build_environment()  # one, shared by the families
    assert dict(environment.variables)["SC_TEST_SEEN"] == "before"
    assert "CXXFLAGS" not in dict(environment.variables)
    compilation = c.gtfn.toolchain().workflow.compilation
    assert isinstance(compilation, CompilerStep)
    assert compilation.environment is environment  # the step runs in what was read


def test_a_step_with_its_own_environment_keeps_it(session_cache_dir: Path) -> None:
    c = build_container({}, cache_dir=session_cache_dir)
    own = BuildEnvironment((("PATH", "/usr/bin"),))
    step = c.gtfn.compilation().with_environment(own)
    with c.gtfn.compilation.override(step):
        compilation = c.gtfn.toolchain().workflow.compilation
        assert isinstance(compilation, CompilerStep) and compilation.environment is own


def test_the_build_policy_prunes_only_a_persistent_cache_with_a_limit(tmp_path: Path) -> None:
    assert build_container({}, cache_dir=tmp_path).gtfn.build_policy() == BuildPolicy()
    session = build_container({}, cache_dir=tmp_path, cache_lifetime="session", cache_max_size=10)
    assert session.gtfn.build_policy() == BuildPolicy()
    limited = build_container({}, cache_dir=tmp_path, cache_max_size="1M").gtfn
    policy = limited.build_policy()
    assert policy.max_size == 1024**2 and policy.prune == limited.cache_location()
    assert limited.toolchain().policy == policy
