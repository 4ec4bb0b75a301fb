"""The DaCe CPU toolchains end to end, beyond what tests/runtime/test_gtfn_end_to_end.py
checks for them (it runs every construct program, every example, the argument errors and
the domain errors with `dace_cpu` and `dace_cpu_noopt` too): GTFN and DaCe agree with each
other on the examples, on every layout; the two DaCe toolchains are what their names say
(an auto-optimized and a plain SDFG).

The toolchains are the session fixtures of conftest.py, so the programs compiled here are
the ones the other end-to-end tests compiled (a DaCe build takes 2-3 s on two cores).
Skipped without the `dace` extra.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest

import stencilchain as sc
import stencilchain.examples as examples
from stencilchain.runtime.toolchain import Toolchain
from tests._support import place

pytest.importorskip("dace", reason="the DaCe toolchains need the `dace` extra")

LAYOUTS = ("C", "F", "sliced")
# GTFN and DaCe compute the same expressions in the same order: the embedded tolerance.
RTOL = ATOL = 1e-13
# A second, larger size per number of dimensions: big enough for the parallel loops.
LARGE_SHAPES = {2: (257, 263), 3: (67, 61, 9)}


def _example_id(module: ModuleType) -> str:
    return module.__name__.rsplit(".", 1)[-1]


@pytest.mark.slow  # up to two compiles per example when no other test compiled them here
@pytest.mark.parametrize("module", examples.ALL_EXAMPLES, ids=_example_id)
def test_gtfn_and_dace_agree_on_the_examples(
    module: ModuleType, gtfn_cpu: Toolchain, dace_cpu: Toolchain, subtests: Any
) -> None:
    """run_dace_cpu and run_gtfn_cpu give the same results (run_dace_cpu_noopt is compared
    with the embedded executor by test_gtfn_end_to_end.py; comparing it here too would add
    DaCe compiles, not coverage). DaCe may still refuse the mesh examples."""
    if examples.uses_mesh(module):
        try:
            module.PROGRAM.with_backend(dace_cpu).compile()
        except sc.UnsupportedError:
            return
    seed = 0
    for shape in (module.DEFAULT_SHAPE, LARGE_SHAPES[len(module.DEFAULT_SHAPE)]):
        for layout in LAYOUTS:
            seed += 1
            inputs = module.make_inputs(shape, np.random.default_rng(seed))
            results: dict[str, dict[str, np.ndarray]] = {}
            for name, toolchain in (("gtfn", gtfn_cpu), ("dace", dace_cpu)):
                rng = np.random.default_rng(seed)  # each toolchain writes copies of its own
                args = {
                    k: place(v, layout, rng).array if isinstance(v, np.ndarray) else v
                    for k, v in inputs.items()
                }
                module.PROGRAM.with_backend(toolchain)(*args.values())
                results[name] = {k: v for k, v in args.items() if isinstance(v, np.ndarray)}
            with subtests.test(shape=shape, layout=layout):
                for field, want in results["gtfn"].items():
                    np.testing.assert_allclose(
                        results["dace"][field], want, rtol=RTOL, atol=ATOL,
                        err_msg=f"{module.PROGRAM.name}: {field} ({layout}, {shape})",
                    )  # fmt: skip
                program = module.PROGRAM.ir
                written = [o for c in program.calls for o in c.outs if not program.is_temporary(o)]
                assert any(np.any(results["dace"][o] != 0) for o in written)


def test_dace_toolchains_translate_to_an_optimized_and_a_plain_sdfg(
    dace_cpu: Toolchain, dace_cpu_noopt: Toolchain
) -> None:
    """run_dace_cpu auto-optimizes and run_dace_cpu_noopt does not: their SDFGs differ, and
    so do their compiled-program pools (nothing is compiled here)."""
    program = examples.laplacian.PROGRAM.ir
    assert dace_cpu.config.auto_optimize is True
    assert dace_cpu_noopt.config.auto_optimize is False
    optimized = dace_cpu.workflow.translation(program)
    plain = dace_cpu_noopt.workflow.translation(program)
    assert optimized.language == plain.language == "sdfg"
    assert optimized.source_code != plain.source_code
    assert dace_cpu.identity != dace_cpu_noopt.identity
    assert dace_cpu.workflow.compilation == dace_cpu_noopt.workflow.compilation
