"""The frozen values that flow between toolchain steps.

translation: Program IR -> ProgramSource
bindings:    ProgramSource -> ExtensionSource (program source + binding source)
compilation: ExtensionSource -> CompiledArtifact
"""

from __future__ import annotations

import dataclasses
import enum
import importlib.machinery
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stencilchain.program.device import Device
from stencilchain.program.hashing import sha256_of
from stencilchain.program.ir import Program


def step_settings(step: object) -> str:
    """The settings of a step as canonical JSON text: each dataclass field (a setting) as
    its text (enums by value). Stages record it, so that a cache miss can name the setting
    that differs (`stencilchain cache explain`); it never enters a fingerprint, the
    generated code does."""
    if not dataclasses.is_dataclass(step) or isinstance(step, type):
        return json.dumps({"step": repr(step)})
    values: dict[str, str] = {}
    for field in dataclasses.fields(step):
        value = getattr(step, field.name)
        values[field.name] = str(value.value) if isinstance(value, enum.Enum) else str(value)
    return json.dumps(values, sort_keys=True)


@dataclasses.dataclass(frozen=True)
class ProgramSource:
    """Generated code for one program, before bindings.

    `language` is "cpp", "cuda" or "sdfg"; `program` is the IR the code was generated
    from (the bindings need its signature). `workspace` says that the program's
    temporaries live in a buffer the caller provides (DaCe's external transients): the
    compiled entry point then takes it as a last argument.
    """

    program: Program
    entry_point: str
    source_code: str
    language: str
    device: Device
    library_deps: tuple[str, ...] = ()
    workspace: bool = False
    settings: str = "{}"  # the producing step's `step_settings`, recorded, not fingerprinted

    def fingerprint(self) -> str:
        return sha256_of(
            self.program.fingerprint(),
            self.entry_point,
            self.source_code,
            self.language,
            self.device.value,
            f"workspace={self.workspace}",
            *self.library_deps,
        )


@dataclasses.dataclass(frozen=True)
class BindingSource:
    """Source of the Python extension module that wraps a ProgramSource."""

    source_code: str
    language: str
    library_deps: tuple[str, ...] = ()
    settings: str = "{}"  # the producing step's `step_settings`, recorded, not fingerprinted


@dataclasses.dataclass(frozen=True)
class ExtensionSource:
    """Everything a compiler needs to build one Python extension module."""

    program_source: ProgramSource
    binding_source: BindingSource

    @property
    def entry_point(self) -> str:
        return self.program_source.entry_point

    def key_metadata(self, family: str, context: str) -> dict[str, str]:
        """The components of a build key, stored in the build's completion marker so that
        a miss can be explained (`stencilchain cache explain`)."""
        return {
            "family": family,
            "key_program": self.program_source.program.fingerprint(),
            "key_source": self.fingerprint(),
            "key_context": context,
            "translation_settings": self.program_source.settings,
            "bindings_settings": self.binding_source.settings,
        }

    def fingerprint(self) -> str:
        return sha256_of(
            self.program_source.fingerprint(),
            self.binding_source.source_code,
            self.binding_source.language,
            *self.binding_source.library_deps,
        )


@dataclasses.dataclass(frozen=True)
class CompiledArtifact:
    """A built extension module on disk; picklable, `load()` imports it.

    `module_name` is the name the extension was built under (its PyInit symbol);
    `entry_point` the attribute holding the program's callable.
    """

    module_path: Path
    module_name: str
    entry_point: str
    build_dir: Path
    metadata_json: str = "{}"
    built: bool = False  # whether the compilation that returned it built it (else: a cache hit)
    workspace: bool = (
        False  # the entry point takes a workspace buffer last (ProgramSource.workspace)
    )

    @property
    def metadata(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.metadata_json)
        return value

    def load(self) -> Callable[..., Any]:
        """Import the module (once per process) and return the entry point."""
        module = sys.modules.get(self.module_name)
        if module is None or getattr(module, "__file__", None) != str(self.module_path):
            loader = importlib.machinery.ExtensionFileLoader(
                self.module_name, str(self.module_path)
            )
            spec = importlib.util.spec_from_file_location(
                self.module_name, str(self.module_path), loader=loader
            )
            if spec is None:
                raise ImportError(f"cannot load extension module {self.module_path}")
            module = importlib.util.module_from_spec(spec)
            loader.exec_module(module)
            sys.modules[self.module_name] = module
        entry: Callable[..., Any] = getattr(module, self.entry_point)
        return entry
