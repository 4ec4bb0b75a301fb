"""The composition of the three steps of a toolchain, with the translation cache."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from stencilchain._version import package_version
from stencilchain.program import ir
from stencilchain.program.device import Device
from stencilchain.program.hashing import sha256_of
from stencilchain.steps.stages import CompiledArtifact, ExtensionSource, ProgramSource
from stencilchain.steps.workflow import CachedStep, Step, TextCache


@dataclasses.dataclass(frozen=True)
class CompileWorkflow:
    """translation -> bindings -> compilation."""

    translation: Step[ir.Program, ProgramSource]
    bindings: Step[ProgramSource, ExtensionSource]
    compilation: Step[ExtensionSource, CompiledArtifact]

    def __call__(self, program: ir.Program, /) -> CompiledArtifact:
        return self.compilation(self.bindings(self.translation(program)))


def cached_translation(
    step: Step[ir.Program, ProgramSource], cache: TextCache
) -> CachedStep[ir.Program, ProgramSource]:
    """`step` behind the persistent translation cache.

    The key covers the program's fingerprint, the step's settings (its frozen repr) and
    the package version; entries are JSON.
    """
    return CachedStep(
        step, cache, TranslationKey(repr(step)), encode_program_source, decode_program_source
    )


@dataclasses.dataclass(frozen=True)
class TranslationKey:
    """The translation cache key of a program under the step settings `settings` (a value,
    so that equal toolchains compare equal)."""

    settings: str

    def __call__(self, program: ir.Program) -> str:
        return sha256_of("translation/1", program.fingerprint(), self.settings, package_version())


def encode_program_source(source: ProgramSource) -> str:
    return json.dumps(
        {
            "entry_point": source.entry_point,
            "source_code": source.source_code,
            "language": source.language,
            "device": source.device.value,
            "library_deps": list(source.library_deps),
            "workspace": source.workspace,
            "program": source.program.fingerprint(),
        }
    )


def decode_program_source(program: ir.Program, text: str) -> ProgramSource:
    data: dict[str, Any] = json.loads(text)
    if data["program"] != program.fingerprint():
        raise ValueError("translation cache entry of another program")
    return ProgramSource(
        program=program,
        entry_point=str(data["entry_point"]),
        source_code=str(data["source_code"]),
        language=str(data["language"]),
        device=Device(data["device"]),
        library_deps=tuple(str(d) for d in data["library_deps"]),
        workspace=data["workspace"] is True,
    )
