"""The identity of one build: its entry point, cache key, module name and build context.

Both compiler families plan the same way: the build context (everything that changes the
binary besides the sources: settings, tools, Python, the package version) is canonical
JSON text; the cache key and the module name are derived from the entry point, the
source fingerprint and that context, so equal inputs meet in one folder on any machine.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from typing import Generic, Protocol, TypeVar

from stencilchain._version import package_version
from stencilchain.program.device import Device
from stencilchain.program.hashing import sha256_of
from stencilchain.steps.build.tools import Tools, python_identity
from stencilchain.steps.caches.build_cache import BuildCache
from stencilchain.steps.settings import BuildType
from stencilchain.steps.stages import ExtensionSource

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")


class CompilerSettings(Protocol):
    """What every compiler step has: the device it builds for, its build type, its cache."""

    @property
    def device(self) -> Device: ...

    @property
    def build_type(self) -> BuildType: ...

    @property
    def cache(self) -> BuildCache: ...


C = TypeVar("C", bound=CompilerSettings)
S = TypeVar("S", bound=ExtensionSource)


@dataclasses.dataclass(frozen=True)
class BuildPlan(Generic[C, S]):
    """One build: the compiler (its settings), the source, the tools, and the identity
    derived from them (`key` names the build folder, `module_name` the extension)."""

    compiler: C
    source: S
    tools: Tools
    family: str
    entry_point: str
    key: str
    module_name: str
    context: str
    context_digest: str

    def marker(self, module: str, details: Mapping[str, str]) -> dict[str, str]:
        """The metadata of the build's completion marker: the module file (relative to the
        folder), what the CLI shows, the family's `details`, and the key's components."""
        return {
            "module": module,
            "module_name": self.module_name,
            "entry_point": self.entry_point,
            "device": self.compiler.device.value,
            "build_type": self.compiler.build_type.value,
            **details,
            **self.source.key_metadata(self.family, self.context),
        }


def plan_build(
    compiler: C,
    source: S,
    tools: Tools,
    *,
    family: str,
    key_tag: str | None,
    context: Mapping[str, object],
) -> BuildPlan[C, S]:
    """The plan of building `source` with `compiler`: `context` holds the compiler's own
    settings, to which the package version, device, build type, tools, Python and the
    cache's salt (if any) are added; `key_tag` (if any) follows the entry point in the key
    (`<entry>_dace_<digest>`)."""
    entry = source.entry_point
    if _IDENTIFIER.fullmatch(entry) is None:
        raise ValueError(
            f"{type(compiler).__name__}: entry point {entry!r} cannot name an extension module: "
            "expected a C identifier of at most 100 characters"
        )
    text = json.dumps(
        {
            **context,
            "package": package_version(),
            "device": compiler.device.value,
            "build_type": compiler.build_type.value,
            "tools": tools.identity,
            "python": python_identity(),
            **({"salt": compiler.cache.salt} if compiler.cache.salt else {}),
        },
        sort_keys=True,
    )
    digest = sha256_of(entry, source.fingerprint(), text)
    tag = "" if key_tag is None else f"{key_tag}_"
    return BuildPlan(
        compiler=compiler,
        source=source,
        tools=tools,
        family=family,
        entry_point=entry,
        key=f"{entry}_{tag}{digest[:32]}",
        module_name=f"_sc_{entry}_{digest[:12]}",
        context=text,
        context_digest=sha256_of(text),
    )
