"""Cross-toolchain fuzzing: random valid programs (tests/runtime/fuzz_programs.py) run by the
embedded executor and by every available compiled CPU toolchain (GTFN with and without its IR
transforms; DaCe auto-optimized and not, when the `dace` extra is installed), which must
give the embedded executor's results on every output array, including the points that no
call writes.

Comparison: integer outputs, and float outputs whose every operation is exact in IEEE
arithmetic (`+ - * /`, `sqrt abs floor ceil trunc minimum maximum`, casts), must be equal bit
for bit (NaN where NumPy has NaN): the compiled code is built with `-ffp-contract=off`, so no
fused multiply-add changes a rounding; it held on all 424 programs of the long runs of
2026-11-30 (four toolchains each). A float output that a transcendental function (`exp log
sin cos tanh arctan cbrt`) feeds may differ by the libm's rounding of those functions
(docs/dsl.md, "Tolerances": a few ulp), carried through the arithmetic after them; the generator keeps such values away from comparisons,
roundings and casts to integers or float32, so the difference stays of that order:
`rtol=1e-12, atol=1e-12` (about 4500 ulp of a value near 1; the values stay below 1e4).
Measured on those runs: 84 of 428 such outputs differed, by at most 9.2e-16 relative
(4.2 eps of max(|value|, 1)).

Budget: in CI, 8 derandomized examples (the same programs every run) on `gtfn_cpu` and
`dace_cpu`; each example is one new program, compiled once per toolchain into the session
cache, and a program of several calls and scans takes a few seconds per toolchain.
`SC_TESTS_FUZZ_EXAMPLES=<n>` runs n examples and adds `gtfn_cpu_no_transforms` and
`dace_cpu_noopt`; `SC_TESTS_FUZZ_SEED=<int>` draws another set of programs (docs/guide/
testing.md). The variables are not `STENCILCHAIN_*` ones: an unknown `STENCILCHAIN_*`
variable is a `ConfigError` for every container built from the environment.
Every failure the fuzzer found is a regular test in tests/runtime/test_fuzz_findings.py.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, reject, seed, settings
from hypothesis import strategies as st

import stencilchain as sc

from .fuzz_programs import FuzzProgram, programs

EXAMPLES = int(os.environ.get("SC_TESTS_FUZZ_EXAMPLES", "8"))
SEED = os.environ.get("SC_TESTS_FUZZ_SEED")
LONG = "SC_TESTS_FUZZ_EXAMPLES" in os.environ or SEED is not None
RTOL = ATOL = 1e-12

# The default toolchains of each family; a longer run adds their variants.
COMPILED = ["gtfn_cpu"] + (["gtfn_cpu_no_transforms"] if LONG else [])
if importlib.util.find_spec("dace") is not None:
    COMPILED += ["dace_cpu"] + (["dace_cpu_noopt"] if LONG else [])


#: The largest relative difference of each inexact output, for the record (`pytest -s`).
DIFFERENCES: list[float] = []


@pytest.fixture(scope="module")
def toolchains(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """Every available compiled CPU toolchain, on the session cache (one compile per program
    and toolchain; different programs have different keys)."""
    yield {name: request.getfixturevalue(name) for name in COMPILED}
    if DIFFERENCES:
        worst = max(DIFFERENCES)
        unequal = sum(d > 0 for d in DIFFERENCES)
        print(
            f"\nfuzz: {len(DIFFERENCES)} inexact outputs compared, {unequal} not bit for bit, "
            f"largest relative difference {worst:.3g} ({worst / np.finfo(np.float64).eps:.1f} eps)"
        )


def compare(program: FuzzProgram, toolchains: dict[str, Any], data_seed: int) -> list[float]:
    """Run `program` embedded and on every toolchain; assert equal results. Returns the largest
    relative difference of each inexact output (for the record; 0.0 when equal)."""
    try:
        prog = program.build()
    except sc.DefinitionError:  # the generator's bookkeeping is conservative: rare
        reject()
    arguments = program.arguments(data_seed)  # the inputs, as they must stay
    index = {name: i for i, (name, _, _) in enumerate(program.params)}
    expected = program.arguments(data_seed)  # each run gets fresh arrays in the layout
    prog(*expected)
    differences = []
    for name, toolchain in toolchains.items():
        actual = program.arguments(data_seed)
        prog.with_backend(toolchain)(*actual)
        for output, exact in zip(program.outputs, program.exact):
            got, want = actual[index[output]], expected[index[output]]
            message = f"{name}: output {output} differs from the embedded executor's"
            if exact or want.dtype.kind != "f":
                np.testing.assert_array_equal(got, want, err_msg=message, strict=True)
            else:
                np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=message)
                with np.errstate(all="ignore"):
                    scale = np.maximum(np.abs(want), 1.0)
                    differences.append(float(np.nanmax(np.abs(got - want) / scale, initial=0.0)))
        for i, (name_, _, _) in enumerate(program.params):  # inputs are never written
            if name_ not in program.outputs and isinstance(arguments[i], np.ndarray):
                np.testing.assert_array_equal(actual[i], arguments[i], strict=True)
    return differences


FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=SEED is None,
    print_blob=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)


def _seeded(test: Any) -> Any:
    return seed(int(SEED))(test) if SEED is not None else test


@pytest.mark.slow
@_seeded
@FUZZ_SETTINGS
@given(program=programs(), data_seed=st.integers(0, 2**16))
def test_random_programs_agree_on_every_toolchain(
    toolchains: dict[str, Any], program: FuzzProgram, data_seed: int
) -> None:
    DIFFERENCES.extend(compare(program, toolchains, data_seed))


def test_the_generator_makes_every_construct() -> None:
    """Over a fixed set of draws, the generator reaches each construct the fuzz test claims,
    and every program it makes is one the DSL accepts and runs embedded."""
    texts = []

    @settings(
        max_examples=150,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(program=programs())
    def collect(program: FuzzProgram) -> None:
        program.build()(*program.arguments(0))
        texts.append(program.source)

    collect()
    source = "\n".join(texts)
    constructs = {
        "tuple outputs": r"out=\(",
        "temporaries": r"^    x\w+ = op",
        "tuple temporaries": r"^    x\w+, x\w+ = ",
        "scans called from programs": r"^    scan\d+\(",
        "shifts in I": r"\(I [+-] \d",
        "shifts in J": r"[(,] J [+-] \d",
        "shifts in K": r"[(,] K [+-] \d",
        "where": r"sc\.where\(",
        "exact math": r"sc\.math\.(sqrt|floor|ceil|trunc|minimum|maximum)\(",
        "transcendental math": r"sc\.math\.(sin|cos|tanh|exp|log|arctan|cbrt)\(",
        "casts": r"sc\.astype\(.*sc\.(int64|float32)\)",
        "explicit domains": r"domain=\{",
        "inferred domains": r"^    op\d+\([^{]*\)$",
        "forward scans": r"forward=True",
        "backward scans": r"forward=False",
        "tuple states": r"init=\(0\.0, 0\)",
        "scans in field operators": r"return .*scan\d+\(",
        "shifted scan results": r"return .*\(\(?(sc\.astype\()?scan\d+\(.*\)\)\([IJK] [+-] \d",
        "implicit broadcast over I, J": r"nu: FK",
        "implicit broadcast over K": r"h: FIJ",
        "sc.broadcast": r"sc\.broadcast\(",
        "index": r"sc\.index\(K\)",
        "int64 results": r"-> (N|tuple\[.*N.*\])",
        "float64 results": r"-> (F|tuple\[.*F.*\])",
    }
    missing = [what for what, pattern in constructs.items() if not re.search(pattern, source, re.M)]
    assert not missing, missing
