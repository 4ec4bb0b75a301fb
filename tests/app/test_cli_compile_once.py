"""`stencilchain compile` runs each step once on a cold cache: the workflow's stage hook
tells it what the caches held, instead of translating and binding a second time."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from stencilchain.app import toolchains
from stencilchain.containers import build_container, override_step

from .cli_support import CLI


@dataclasses.dataclass(frozen=True)
class Counting:
    """A step that counts its calls (the count is not a setting: compare=False)."""

    inner: Any
    calls: list[str] = dataclasses.field(default_factory=list, compare=False, repr=False)

    def __call__(self, value: Any, /) -> Any:
        self.calls.append(type(value).__name__)
        return self.inner(value)


def test_compile_on_a_cold_cache_translates_and_binds_once(
    cli: CLI, stencils: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    container = build_container()
    translation = Counting(container.gtfn.translation())
    bindings = Counting(container.gtfn.bindings())
    override_step(container.gtfn.translation, lambda cfg: translation)
    override_step(container.gtfn.bindings, lambda cfg: bindings)
    monkeypatch.setattr(toolchains, "_construct", lambda name: container.gtfn.toolchain())

    cold = cli("compile", f"{stencils}:smooth", "--json", "--show-source")
    assert cold.status == 0, cold.err
    data = cold.json()
    assert (data["translation_cache"], data["build_cache"]) == ("miss", "miss")
    assert translation.calls == ["Program"]
    assert bindings.calls == ["ProgramSource"]
    assert "smooth" in data["source"]

    warm = cli("compile", f"{stencils}:smooth", "--json")
    assert warm.status == 0, warm.err
    assert (warm.json()["translation_cache"], warm.json()["build_cache"]) == ("hit", "hit")
    assert translation.calls == ["Program"]  # the cache served it
    assert Path(warm.json()["module"]) == Path(data["module"])
