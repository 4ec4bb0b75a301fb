"""Cross-toolchain fuzzing: random valid programs (tests/runtime/fuzz_programs.py over I, J,
K; tests/runtime/fuzz_mesh_programs.py on unstructured meshes) run by the
embedded executor and by every available compiled CPU toolchain (GTFN with and without its IR
transforms; DaCe auto-optimized and not, when the `dace` extra is installed), which must
give the embedded executor's results on every output array, including the points that no
call writes.

Comparison (fuzz_programs.py, `compare_outputs`): integer outputs, and float outputs whose
every operation is exact in IEEE arithmetic (`+ - * /`, `sqrt abs floor ceil trunc minimum
maximum`, casts, the reductions over neighbours, which add their slots in order), must be
equal bit for bit (NaN where NumPy has NaN), in float32 as in float64: the compiled code is
built with `-ffp-contract=off`, so no fused multiply-add changes a rounding, and a float32
operation rounds to float32 on every toolchain. A float output that a transcendental
function (`exp log sin cos tanh arctan cbrt`) feeds may differ by the libm's rounding of
those functions (docs/dsl.md, "Tolerances": a few ulp), carried through the arithmetic
after them; the generator keeps such values away from comparisons, roundings and casts to
integers or float32, so the difference stays of that order. float64: `rtol=atol=1e-12`
(about 4500 ulp of a value near 1; the values stay below 1e4). Where a float32 value is in
the chain (a float32 output, or a float32 value widened into a float64 one): `2e-5`, about
170 float32 ulp (1.19e-7 each), the same margin over the 4 ulp allowed per function as
float64's. The long runs of 2026-11-30 (424 programs) measured at most 4.2 float64 eps;
tests/runtime/fuzz_long_run.py prints the largest difference per dtype of each run.

Budget: in CI, 8 derandomized examples (and 4 mesh programs, and 2 programs with staggered
fields) (the same programs every run) on `gtfn_cpu` and
`dace_cpu`; each example is one new program, compiled once per toolchain into the session
cache, and a program of several calls and scans takes a few seconds per toolchain.
`SC_TESTS_FUZZ_EXAMPLES=<n>` runs n examples and adds `gtfn_cpu_no_transforms` and
`dace_cpu_noopt`; `SC_TESTS_FUZZ_SEED=<int>` draws another set of programs (docs/guide/
testing.md). The variables are not `STENCILCHAIN_*` ones: an unknown `STENCILCHAIN_*`
variable is a `ConfigError` for every container built from the environment.
A mesh program with a connectivity declared `max_neighbors=None` runs twice, with tables of
two widths (one specialisation each). The long run (several hundred programs, four
toolchains each, counts per construct) is
`python -m tests.runtime.fuzz_long_run` (its docstring). Every failure the fuzzer found is a
regular test in tests/runtime/test_fuzz_findings.py.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, reject, seed, settings
from hypothesis import strategies as st

import stencilchain as sc

from . import fuzz_mesh_programs, fuzz_programs
from .fuzz_mesh_programs import MeshProgram, mesh_programs
from .fuzz_programs import FuzzProgram, compare_outputs, programs

EXAMPLES = int(os.environ.get("SC_TESTS_FUZZ_EXAMPLES", "8"))
SEED = os.environ.get("SC_TESTS_FUZZ_SEED")
LONG = "SC_TESTS_FUZZ_EXAMPLES" in os.environ or SEED is not None
MESH_EXAMPLES = max(EXAMPLES // 2, 1)
STAGGERED_EXAMPLES = max(EXAMPLES // 4, 1)  # beside the staggered draws of the others
DRAWS = 400  # of the construct test

# The default toolchains of each family; a longer run adds their variants.
COMPILED = ["gtfn_cpu"] + (["gtfn_cpu_no_transforms"] if LONG else [])
if importlib.util.find_spec("dace") is not None:
    COMPILED += ["dace_cpu"] + (["dace_cpu_noopt"] if LONG else [])


#: The largest relative difference of each inexact output, for the record (`pytest -s`).
DIFFERENCES: list[tuple[str, float]] = []


@pytest.fixture(scope="module")
def toolchains(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """Every available compiled CPU toolchain, on the session cache (one compile per program
    and toolchain; different programs have different keys)."""
    yield {name: request.getfixturevalue(name) for name in COMPILED}
    for label in sorted({t for t, _ in DIFFERENCES}):
        diffs = [d for t, d in DIFFERENCES if t == label]
        worst, eps = max(diffs), np.finfo(label.split()[0]).eps
        print(
            f"\nfuzz: {len(diffs)} inexact {label} outputs compared, "
            f"{sum(d > 0 for d in diffs)} not bit for bit, largest relative difference "
            f"{worst:.3g} ({worst / eps:.1f} {label.split()[0]} eps)"
        )


def compare(program: Any, toolchains: dict[str, Any], data_seed: int) -> list[tuple[str, float]]:
    """Run `program` embedded and on every toolchain; assert equal results (fuzz_programs.py,
    `compare_outputs`). Returns the largest relative difference of each inexact output (for
    the record; 0.0 when equal)."""
    try:
        prog = program.build()
    except sc.DefinitionError:  # the generator's bookkeeping is conservative: rare
        reject()
    arguments = program.arguments(data_seed)  # the inputs, as they must stay
    expected = program.arguments(data_seed)  # each run gets fresh arrays in the layout
    try:
        prog(*expected)
    except sc.DomainError as err:  # fields over their own ranges: a domain beyond one
        _same_error(program, prog, toolchains, data_seed, arguments, str(err))
        return []
    except sc.DefinitionError:  # the same, where static parameters trace it at the call
        reject()
    differences: list[tuple[str, float]] = []
    for name, toolchain in toolchains.items():
        actual = program.arguments(data_seed)
        prog.with_backend(toolchain)(*actual)
        differences += compare_outputs(program, actual, expected, name)
        for i, (name_, _, _) in enumerate(program.params):  # inputs are never written
            if name_ not in program.outputs and not np.isscalar(arguments[i]):
                np.testing.assert_array_equal(_array(actual[i]), _array(arguments[i]), strict=True)
    return differences


def _array(value: Any) -> Any:
    """The array of a field value (an input with an origin), or `value` itself."""
    return value.asnumpy() if isinstance(value, sc.FieldValue) else value


def _same_error(
    program: Any,
    prog: Any,
    toolchains: dict[str, Any],
    data_seed: int,
    arguments: list[Any],
    message: str,
) -> None:
    """Every toolchain refuses the call with the embedded executor's DomainError, before
    anything is written (a given domain beyond an output's own range)."""
    assert program.longer, f"a DomainError of a program over one index space: {message}"
    for name, toolchain in toolchains.items():
        actual = program.arguments(data_seed)
        with pytest.raises(sc.DomainError) as info:
            prog.with_backend(toolchain)(*actual)
        assert str(info.value) == message, f"{name}: {info.value}"
        for got, want in zip(actual, arguments):
            if not np.isscalar(want):
                np.testing.assert_array_equal(_array(got), _array(want), strict=True)


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


@pytest.mark.slow
@_seeded
@settings(FUZZ_SETTINGS, max_examples=STAGGERED_EXAMPLES)
@given(program=programs(staggered=True), data_seed=st.integers(0, 2**16))
def test_random_staggered_programs_agree_on_every_toolchain(
    toolchains: dict[str, Any], program: FuzzProgram, data_seed: int
) -> None:
    """Programs with fields over KHalf (so the index space along K is nlev + 1 points),
    which the derandomized CI run of the test above happens to draw none of."""
    DIFFERENCES.extend(compare(program, toolchains, data_seed))


@pytest.mark.slow
@_seeded
@settings(FUZZ_SETTINGS, max_examples=MESH_EXAMPLES)
@given(program=mesh_programs(), data_seed=st.integers(0, 2**16))
def test_random_mesh_programs_agree_on_every_toolchain(
    toolchains: dict[str, Any], program: MeshProgram, data_seed: int
) -> None:
    """A program with a connectivity of any width (max_neighbors=None) runs with tables of
    both widths, one specialisation each (MeshProgram.arguments)."""
    DIFFERENCES.extend(compare(program, toolchains, data_seed))
    if program.flexible:
        DIFFERENCES.extend(compare(program, toolchains, data_seed ^ 1))


@pytest.mark.parametrize(
    ("strategy", "constructs", "extra"),
    [
        # staggered programs drawn in about half the draws (one in four otherwise): the
        # rarest constructs are theirs, and a full run's draws differ from a lone run's
        (st.one_of(programs(), programs(staggered=True)), fuzz_programs.CONSTRUCTS, ()),
        (
            mesh_programs(),
            fuzz_mesh_programs.CONSTRUCTS,
            (
                "tables with skip values",
                "tables without skip values",
                "int64 tables",
                "tables of any width",
            ),
        ),
    ],
    ids=["cartesian", "mesh"],
)
def test_the_generator_makes_every_construct(
    strategy: Any, constructs: dict[str, str], extra: tuple[str, ...]
) -> None:
    """Over a fixed set of draws, the generator reaches each construct the fuzz test claims,
    and every program it makes is one the DSL accepts (but for the few a conservative rule
    refuses, fewer than one in twenty) and runs embedded."""
    found: set[str] = set()
    refused = []

    @settings(
        max_examples=DRAWS,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(program=strategy)
    def collect(program: Any) -> None:
        try:
            built = program.build()
        except sc.DefinitionError as error:
            refused.append(str(error))
            return
        try:
            built(*program.arguments(0))
        except sc.DefinitionError as error:  # static parameters: traced at the call
            refused.append(str(error))
            return
        except sc.DomainError:  # a given domain beyond the range of a shorter output
            if not getattr(program, "longer", ""):
                raise
        found.update(program.constructs())

    collect()
    missing = [what for what in [*constructs, *extra] if what not in found]
    assert not missing, missing
    assert len(refused) < DRAWS // 20, refused
