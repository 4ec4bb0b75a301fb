"""What every construct of one program's SDFG reads: the translator's settings, the
program's definitions and local names, and which temporaries are fused or never read."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from stencilchain.program import ir
from stencilchain.program.call_bodies import bind_arguments
from stencilchain.program.device import Device
from stencilchain.program.dtypes import ScalarType
from stencilchain.program.transforms import (
    fold_constants,
    inline_calls,
    unread_temporaries,
)
from stencilchain.steps.cpp.scan_chains import chained_temporaries, scan_chains
from stencilchain.steps.dace.calling_convention import local_prefix, temporary_layouts
from stencilchain.steps.dace.tiling import fuse_temporaries
from stencilchain.steps.settings import DataLayout

__all__ = ["BuildContext"]


@dataclasses.dataclass(frozen=True)
class BuildContext:
    """One program's SDFG being built.

    `params` maps every parameter and temporary to its type; `prefix` starts every local
    name (`calling_convention.local_prefix`); `unread` are the temporaries that are neither
    allocated nor written; `tiled`: compound stencils run tile by tile with their
    intermediates in buffers (`tiling`), and `fused` holds the bodies (by call index) into
    which temporaries were fused unless they live in a workspace. Likewise `chains` are
    the calls (indices) of each chain of scans that runs block of columns by block of
    columns (`steps/cpp/scan_chains`), and `chained` the temporaries they pass along,
    held in a buffer of one block instead of an array. `stages_columns`: scans in C order
    store their outputs through a buffer of the block (ADR 0060), not with a workspace
    (whose caller provides all memory; the block's buffer is allocated per block).
    """

    program: ir.Program
    device: Device
    data_layout: DataLayout
    transforms: bool
    params: Mapping[str, ir.FieldType | ScalarType]
    fops: Mapping[str, ir.FieldOperatorDef]
    scans: Mapping[str, ir.ScanOperatorDef]
    fields: frozenset[str]
    prefix: str
    unread: frozenset[str]
    layouts: Mapping[str, str]
    tiled: bool
    fused: Mapping[int, ir.Expr]
    chains: tuple[tuple[int, ...], ...] = ()
    chained: frozenset[str] = frozenset()
    stages_columns: bool = True

    @classmethod
    def of(
        cls,
        program: ir.Program,
        *,
        device: Device,
        data_layout: DataLayout,
        auto_optimize: bool,
        disable_transforms: bool,
        external_workspace: bool,
    ) -> BuildContext:
        """The context of `program` translated with these settings of the translator."""
        transforms = not disable_transforms
        params = {p.name: p.type for p in (*program.params, *program.temporaries)}
        fops = {f.name: f for f in program.field_operators}
        unread = unread_temporaries(program)
        tiled = auto_optimize and device is Device.CPU and transforms
        fused: dict[int, ir.Expr] = {}
        chains: tuple[tuple[int, ...], ...] = ()
        if tiled and not external_workspace:
            chains = tuple(scan_chains(program, field_operators=False))
            bodies = {
                k: call_body(fops, c, transforms)
                for k, c in enumerate(program.calls)
                if c.callee in fops
            }
            found = fuse_temporaries(program, bodies)
            if found is not None:
                fused = found
                unread = frozenset(t.name for t in program.temporaries)
        return cls(
            program=program,
            device=device,
            data_layout=data_layout,
            transforms=transforms,
            params=params,
            fops=fops,
            scans={s.name: s for s in program.scan_operators},
            fields=frozenset(n for n, t in params.items() if isinstance(t, ir.FieldType)),
            prefix=local_prefix(program, data_layout),
            unread=unread,
            layouts=temporary_layouts(program),
            tiled=tiled,
            fused=fused,
            chains=chains,
            chained=frozenset(chained_temporaries(program, list(chains))),
            stages_columns=not external_workspace,
        )

    @property
    def gpu(self) -> bool:
        return self.device is Device.GPU

    def body(self, call: ir.ProgramCall) -> ir.Expr:
        """The call's field operator as one expression of program parameters and literals."""
        return call_body(self.fops, call, self.transforms)


def call_body(
    fops: Mapping[str, ir.FieldOperatorDef], call: ir.ProgramCall, transforms: bool
) -> ir.Expr:
    """The body of `call`'s field operator with its calls inlined and the call's arguments
    substituted, its constants folded if `transforms`."""
    fop = fops[call.callee]
    body = inline_calls(fop.body, fops)
    body = bind_arguments(body, fop.params, call.args)
    return fold_constants(body) if transforms else body
