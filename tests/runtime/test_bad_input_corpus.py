"""A corpus of wrong calls and definitions (issue 13, "Bad input"), run on every toolchain
with the same outcome: the same error type and message as the embedded executor, the same
warnings, and where a call is accepted, the embedded executor's results (NaN and Inf
positions included). A rejected call writes nothing.

The behaviours are documented in docs/guide/testing.md ("Bad input"). Compiles: four small
programs per compiled family (shared through the session cache), the call program again on
each family's unit_stride toolchain, one more DaCe build without auto-optimization for the
huge temporaries, and the 300-field program once per family (marked slow).
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import stencilchain as sc
from stencilchain.errors import EmptyDomainWarning
from tests._support import read_only

I, J = sc.Dimension("I"), sc.Dimension("J")
F = sc.Field[[I, J], sc.float64]

REPO = Path(__file__).resolve().parents[2]

TOOLCHAINS = ["embedded", "gtfn_cpu", "dace_cpu"]


# --- the programs ---------------------------------------------------------------------------------


@sc.field_operator
def lap(f: F, g: F, alpha: sc.float64) -> F:
    return -4.0 * f + f(I + 1) + f(I - 1) + f(J + 1) + f(J - 1) + alpha * g


@sc.program
def calls(f: F, g: F, out: F, alpha: sc.float64) -> None:
    lap(f, g, alpha, out=out)


@sc.field_operator
def across(f: F) -> F:
    return f(I + 1) + f(I - 1)


@sc.program
def domains(f: F, out: F, chained: F, i0: sc.int64, i1: sc.int64) -> None:
    across(f, out=out, domain={I: (i0, i1)})  # explicit, by parameters
    t = across(f)  # inferred: [1, n-1)
    across(t, out=chained)  # inferred, narrowed by t's region: [2, n-2)


Cell, Edge = sc.Dimension("Cell"), sc.Dimension("Edge")
C2EDim = sc.Dimension("C2EDim", kind=sc.LOCAL)
C2E = sc.Connectivity("C2E", source=Edge, target=(Cell, C2EDim), max_neighbors=2)
CellF, EdgeF = sc.Field[[Cell], sc.float64], sc.Field[[Edge], sc.float64]


@sc.field_operator
def doubled(e: sc.Field[[Edge], sc.bool_]) -> EdgeF:
    return sc.where(e, 2.0, 0.0)


@sc.field_operator
def gathered(t: EdgeF) -> CellF:
    return sc.neighbor_sum(t(C2E), axis=C2EDim)


@sc.program
def edges_to_cells(e: sc.Field[[Edge], sc.bool_], c2e: sc.Table[C2E], out: CellF) -> None:
    t = doubled(e)  # a temporary over every edge
    gathered(t, out=out)


# Names that are C++ or CUDA keywords, reserved identifiers or non-ASCII are fine where the
# generated code never uses them: in field operators, and those every toolchain prefixes.
@sc.field_operator
def odd_names(int: F, new: F, ü: F, _Z: F, __global__: F, δt: sc.float64) -> F:
    return int(I + 1) + new + δt * ü - _Z + __global__(J - 1)


@sc.program
def odd_but_portable(a: F, p_a: F, s_a: F, s0_a: F, a__b: F, _z: F, n_a: sc.float64) -> None:
    odd_names(a, p_a, s_a, s0_a, a__b, n_a, out=_z)


# --- running a case on a toolchain ----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What a call did: its error (type name and message) or None, its warnings, and the
    arguments' arrays afterwards."""

    error: tuple[str, str] | None
    warned: tuple[tuple[str, str], ...]
    arrays: tuple[Any, ...]


def run_case(run: Callable[..., None], args: tuple[Any, ...]) -> Outcome:
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            run(*args)
        except Exception as err:
            error = (type(err).__name__, str(err))
    warned = tuple(
        (w.category.__name__, str(w.message))
        for w in caught
        if issubclass(w.category, sc.errors.EmptyDomainWarning)
    )
    arrays = tuple(np.array(a) if isinstance(a, np.ndarray) else None for a in args)
    return Outcome(error, warned, arrays)


def assert_same_outcome(got: Outcome, expected: Outcome) -> None:
    assert got.error == expected.error
    assert got.warned == expected.warned
    for mine, theirs in zip(got.arrays, expected.arrays):
        if mine is not None:
            np.testing.assert_array_equal(mine, theirs)  # NaN where NaN


def bound(program: Any, fixture: str, request: pytest.FixtureRequest) -> Any:
    if fixture == "embedded":
        return program
    return program.with_backend(request.getfixturevalue(fixture))


# --- the call corpus ------------------------------------------------------------------------------


class FakeGpuArray:
    """What a CPU toolchain sees of a GPU array: `__cuda_array_interface__`, no buffer."""

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape, self.dtype, self.ndim = shape, np.dtype(np.float64), len(shape)
        self.__cuda_array_interface__ = {
            "shape": shape, "typestr": "<f8", "data": (0, False), "version": 3, "strides": None
        }  # fmt: skip


def _arrays(shape: tuple[int, int] = (6, 5), seed: int = 0) -> tuple[Any, ...]:
    rng = np.random.default_rng(seed)
    return rng.random(shape), rng.random(shape), np.full(shape, -7.0), 0.5


def _structured(shape: tuple[int, int]) -> np.ndarray:
    record = np.zeros(shape, dtype=[("a", "f8"), ("b", "i1")])
    record["a"] = 1.5
    return record["a"]


def _with(index: int, make: Callable[[Any], Any]) -> Callable[[], tuple[Any, ...]]:
    def args() -> tuple[Any, ...]:
        values = list(_arrays())
        values[index] = make(values[index])
        return tuple(values)

    return args


def _overlapping() -> tuple[Any, ...]:
    f, g, _, alpha = _arrays()
    big = np.zeros((12, 5))
    big[:6] = f
    return big[:6], g, big[3:9], alpha


def _nan_and_inf() -> tuple[Any, ...]:
    f, g, out, alpha = _arrays()
    f[2, 2], f[4, 1] = np.nan, np.inf
    g[1, 3], g[3, 3] = -np.inf, np.nan
    return f, g, out, alpha


ERR = "ArgumentError"
CALLS: dict[str, tuple[Callable[[], tuple[Any, ...]], str | None]] = {
    # id: (arguments, expected error type or None for a run)
    "dtype-float32-field": (_with(0, lambda f: f.astype(np.float32)), ERR),
    "dtype-int-field": (_with(1, lambda g: g.astype(np.int64)), ERR),
    "dtype-str-scalar": (_with(3, lambda a: "0.5"), ERR),
    "dtype-float32-scalar": (_with(3, np.float32), ERR),
    "ndim-one-more": (_with(0, lambda f: f[np.newaxis]), ERR),
    "ndim-one-fewer": (_with(2, lambda out: out[0]), ERR),
    "ndim-zero": (_with(0, lambda f: np.float64(1.0)), ERR),
    # fields over their own ranges: run where every read stays inside its field
    "shape-differs": (_with(1, lambda g: g[:, :4]), None),
    "shape-transposed": (_with(1, lambda g: g.T.copy()), None),
    "start-below-zero-input": (_with(1, lambda g: sc.as_field((I, J), g, start={I: -1})), None),
    "start-below-zero-output": (_with(2, lambda o: sc.as_field((I, J), o, start={I: -1})), ERR),
    "device-gpu-array": (_with(0, lambda f: FakeGpuArray(f.shape)), ERR),
    "device-list": (_with(0, lambda f: f.tolist()), ERR),
    "stride-zero-input": (_with(0, lambda f: np.broadcast_to(f[:1], f.shape)), None),
    "stride-zero-output": (_with(2, lambda o: as_strided(o, strides=(0, 8))), ERR),
    "stride-zero-output-size-one": (  # one point along I: nothing shares an element
        lambda: (lambda f, g, o, a: (f, g, as_strided(o, (1, 5), (0, 8)), a))(*_arrays((1, 5))),
        None,
    ),
    "stride-negative-input": (_with(0, lambda f: f[::-1, ::-1]), None),
    "stride-negative-output": (_with(2, lambda o: o[::-1]), None),
    "stride-not-an-element": (_with(0, lambda f: _structured(f.shape)), ERR),
    "stride-non-unit-innermost": (_with(0, lambda f: np.repeat(f, 2, axis=1)[:, ::2]), None),
    "layout-fortran": (_with(2, np.asfortranarray), None),
    "output-read-only": (_with(2, read_only), ERR),
    "input-read-only": (_with(0, read_only), None),
    "output-aliases-input": (lambda: (lambda f, g, o, a: (f, g, f, a))(*_arrays()), ERR),
    "output-overlaps-input": (_overlapping, ERR),
    "inputs-alias-each-other": (lambda: (lambda f, g, o, a: (f, f, o, a))(*_arrays()), None),
    "nan-and-inf-inputs": (_nan_and_inf, None),
    "nan-scalar": (_with(3, lambda a: float("nan")), None),
    "inf-scalar": (_with(3, lambda a: float("-inf")), None),
    "size-zero": (lambda: _arrays((0, 5)), None),
    "size-zero-both": (lambda: _arrays((0, 0)), None),
    "one-point": (lambda: _arrays((1, 1)), None),  # EmptyDomainWarning
    "too-small-along-I": (lambda: _arrays((2, 5)), None),  # EmptyDomainWarning
    "too-small-along-J": (lambda: _arrays((7, 2)), None),  # EmptyDomainWarning
    "just-large-enough": (lambda: _arrays((3, 3)), None),  # one point
}


@pytest.mark.parametrize("fixture", TOOLCHAINS)
@pytest.mark.parametrize("case", list(CALLS))
def test_calls(case: str, fixture: str, request: pytest.FixtureRequest) -> None:
    make, error = CALLS[case]
    expected = run_case(calls, make())
    assert (expected.error or (None,))[0] == error, expected.error
    got = run_case(bound(calls, fixture, request), make())
    assert_same_outcome(got, expected)
    if error is not None:  # nothing written
        before = [np.array(a) if isinstance(a, np.ndarray) else None for a in make()]
        for after, then in zip(got.arrays, before):
            if then is not None:
                np.testing.assert_array_equal(after, then)


def test_the_corpus_outcomes_are_those_documented() -> None:
    """Spot checks of what the embedded executor (hence every toolchain) says."""
    f, g, out, alpha = _nan_and_inf()
    calls(f, g, out, alpha)
    inner = (slice(1, -1), slice(1, -1))
    numpy = (
        -4.0 * f[inner] + f[2:, 1:-1] + f[:-2, 1:-1] + f[1:-1, 2:] + f[1:-1, :-2] + alpha * g[inner]
    )
    np.testing.assert_array_equal(out[inner], numpy)  # NaN and Inf where NumPy has them
    assert np.isnan(out[inner]).any() and np.isinf(out[inner]).any()
    with pytest.warns(EmptyDomainWarning, match=r"domain I: \[1, 1\) is empty on arrays of size 2"):
        calls(*_arrays((2, 5)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        calls(*_arrays((0, 5)))  # empty arrays: nothing to write, no warning
    with pytest.raises(sc.ArgumentError, match="stride 0 along I"):
        calls(*_with(2, lambda o: as_strided(o, strides=(0, 8)))())


def test_empty_domain_warning_points_at_the_callers_line() -> None:
    with pytest.warns(EmptyDomainWarning) as record:
        calls(*_arrays((1, 4)))
    assert record[0].filename == __file__


# --- domains --------------------------------------------------------------------------------------


def _domain_args(shape: tuple[int, int], i0: int, i1: int) -> Callable[[], tuple[Any, ...]]:
    def args() -> tuple[Any, ...]:
        f = np.random.default_rng(2).random(shape)
        return f, np.full(shape, -7.0), np.full(shape, -9.0), i0, i1

    return args


DOMAINS: dict[str, tuple[Callable[[], tuple[Any, ...]], str | None]] = {
    "explicit-inside": (_domain_args((8, 3), 1, 7), None),
    "explicit-from-the-end": (_domain_args((8, 3), 1, -1), None),
    "explicit-empty": (_domain_args((8, 3), 4, 4), None),  # empty on purpose: no warning
    "explicit-reversed": (_domain_args((8, 3), 5, 2), None),
    "explicit-beyond-the-arrays": (_domain_args((8, 3), 1, 12), "DomainError"),
    "explicit-negative-start": (_domain_args((8, 3), -12, 4), "DomainError"),
    "explicit-starts-in-the-halo": (_domain_args((8, 3), 0, 4), "DomainError"),
    "explicit-beyond-and-empty": (_domain_args((8, 3), 12, 10), None),
    "arrays-too-small-for-both": (_domain_args((2, 3), 1, -1), None),  # warns, first call
    "inferred-chain-too-small": (_domain_args((4, 3), 1, 3), None),  # warns, third call
    "size-zero": (_domain_args((0, 3), 1, -1), None),
    "size-zero-other-dim": (_domain_args((8, 0), 1, -1), None),
}


@pytest.mark.parametrize("fixture", TOOLCHAINS)
@pytest.mark.parametrize("case", list(DOMAINS))
def test_domains(case: str, fixture: str, request: pytest.FixtureRequest) -> None:
    make, error = DOMAINS[case]
    expected = run_case(domains, make())
    assert (expected.error or (None,))[0] == error, expected.error
    if case.startswith(("arrays-too-small", "inferred-chain")):
        assert len(expected.warned) == 1
    elif case.startswith(("explicit-empty", "explicit-reversed", "size-zero")):
        assert not expected.warned
    got = run_case(bound(domains, fixture, request), make())
    assert_same_outcome(got, expected)
    if error is not None:
        assert (got.arrays[1] == -7.0).all() and (got.arrays[2] == -9.0).all()


# --- temporaries too large to allocate ------------------------------------------------------------

HUGE = {  # edges: bytes of the float64 temporary in the MemoryError
    "1-PiB": (2**47, 2**50),  # more than any machine's address space
    "beyond-size_t": (2**62, 2**64 - 1),  # 2**65 bytes: said as SIZE_MAX
}


@pytest.mark.parametrize("fixture", [*TOOLCHAINS, "dace_cpu_noopt"])
@pytest.mark.parametrize("huge", list(HUGE))
def test_a_temporary_that_cannot_be_allocated_is_a_memory_error(
    huge: str, fixture: str, request: pytest.FixtureRequest
) -> None:
    """The input is a zero-stride view of one bool (no memory); the float64 temporary
    over the edges would be 1 PiB, or more bytes than a size_t counts, which no allocator
    grants, so no toolchain gets it and starts writing. Nothing is written."""
    run = bound(edges_to_cells, fixture, request)
    table = np.array([[0, 1], [2, 3]], dtype=np.int32)
    small = np.array([True, False, True, True, False]), table, np.zeros(2)
    run(*small)  # compiled on small arrays first
    np.testing.assert_array_equal(small[2], [2.0, 4.0])
    edges, nbytes = HUGE[huge]
    e = as_strided(np.ones(1, dtype=bool), shape=(edges,), strides=(0,))
    out = np.full(2, -1.0)
    with pytest.raises(MemoryError) as caught:
        run(e, table, out)
    assert str(caught.value) == (
        f"cannot allocate {nbytes} bytes for temporary tmp0 of edges_to_cells()"
    )
    assert (out == -1.0).all()
    small[2][:] = 0.0
    run(*small)  # still usable
    np.testing.assert_array_equal(small[2], [2.0, 4.0])


# --- names ----------------------------------------------------------------------------------------

BAD_NAMES = {
    # parameter name: what the DefinitionError says
    "int": "C++ or CUDA keyword",
    "new": "C++ or CUDA keyword",
    "this": "C++ or CUDA keyword",
    "threadIdx": "C++ or CUDA keyword",
    "std": "C++ or CUDA keyword",
    "NULL": "C++ or CUDA keyword",
    "errno": "C++ or CUDA keyword",
    "M_PI": "C++ or CUDA keyword",
    "__x": "reserved in C++",
    "__global__": "reserved in C++",
    "_Z": "reserved in C++",
    "ü": "is not ASCII",
    "δt": "is not ASCII",
    "n_I": "generated size of dimension I",
    "i_J": "generated index of dimension J",
    "f_s0": "generated stride of field 'f'",
}


def _define(params: str, body: str, name: str = "named") -> Any:
    namespace: dict[str, Any] = {"sc": sc, "F": F, "across": across}
    exec(f"@sc.program\ndef {name}({params}) -> None:\n    {body}\n", namespace)
    return namespace[name]


@pytest.mark.parametrize("name", list(BAD_NAMES))
def test_parameter_names_no_toolchain_can_use_are_refused_at_definition(name: str) -> None:
    """Refused for every toolchain at once (before any backend is chosen): as a field
    parameter, and as a scalar parameter."""
    with pytest.raises(sc.DefinitionError, match=re.escape(BAD_NAMES[name])):
        _define(f"f: F, {name}: F", f"across(f, out={name})")
    if name != "f_s0":  # a scalar of that name is refused the same way
        with pytest.raises(sc.DefinitionError, match=re.escape(BAD_NAMES[name])):
            _define(f"f: F, out: F, {name}: sc.float64", "across(f, out=out)")


def test_colliding_names() -> None:
    """DaCe names the stride of field `a` `a_s0`, so a parameter `a_s0` beside a field `a`
    is refused; GTFN's names (p_<name>, s<axis>_<name>, s_<name>) are injective, and
    names like them are accepted (`odd_but_portable`)."""
    with pytest.raises(sc.DefinitionError, match="generated stride of field 'a'"):
        _define("a: F, a_s0: sc.float64, out: F", "across(a, out=out)")
    with pytest.raises(sc.DefinitionError, match="generated bound of parameter 'k'"):
        _define("a: F, out: F, k: sc.int64, k_bound_I: sc.int64", "across(a, out=out)")
    _define("a: F, b_s0: sc.float64, out: F, k_bound_I: sc.float64", "across(a, out=out)")


def test_program_names_must_be_ascii() -> None:
    with pytest.raises(sc.DefinitionError, match="ASCII identifier of at most 100"):
        _define("f: F, out: F", "across(f, out=out)", name="δ")
    with pytest.raises(sc.DefinitionError, match="ASCII identifier of at most 100"):
        _define("f: F, out: F", "across(f, out=out)", name="p" * 101)


@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_odd_but_portable_names_run_everywhere(
    fixture: str, request: pytest.FixtureRequest
) -> None:
    rng = np.random.default_rng(4)
    arrays = [rng.random((5, 4)) for _ in range(6)]
    expected = run_case(odd_but_portable, (*arrays, 0.25))
    assert expected.error is None
    got = run_case(bound(odd_but_portable, fixture, request), (*arrays, 0.25))
    assert_same_outcome(got, expected)


# --- the unit_stride layout -----------------------------------------------------------------------


@pytest.fixture(scope="module", params=["gtfn", "dace"])
def unit_stride(request: pytest.FixtureRequest, session_cache_dir: Path) -> Any:
    """Each family's toolchain configured with data_layout=unit_stride
    (STENCILCHAIN_DATA_LAYOUT=unit_stride)."""
    if request.param == "dace":
        pytest.importorskip("dace", reason="the DaCe toolchains need the `dace` extra")
    from stencilchain.containers import build_container

    container = build_container({}, cache_dir=session_cache_dir, data_layout="unit_stride")
    family = getattr(container, request.param)
    family.name.override(f"bad_input_{request.param}_unit_stride")
    return family.toolchain()


def test_a_non_unit_innermost_stride_under_unit_stride(unit_stride: Any) -> None:
    """Refused by the compiled check with the same message on both families; the embedded
    executor takes any layout. A unit innermost stride, or an innermost size of one, runs."""
    run = calls.with_backend(unit_stride)
    f, g, out, alpha = _arrays()
    run(f, g, out, alpha)
    expected = np.full_like(out, -7.0)
    calls(f, g, expected, alpha)
    np.testing.assert_array_equal(out, expected)
    strided = np.repeat(f, 2, axis=1)[:, ::2]
    with pytest.raises(sc.ArgumentError) as caught:
        run(strided, g, out, alpha)
    message = str(caught.value)
    assert message.startswith("argument 'f' of calls(): ") and "unit_stride" in message
    assert message == UNIT_STRIDE_MESSAGES.setdefault("f", message)  # the same on each family
    with pytest.raises(sc.ArgumentError, match="argument 'out' of calls"):
        run(f, g, np.asfortranarray(out), alpha)
    column = _arrays((6, 1))
    with pytest.warns(EmptyDomainWarning):  # J+1 and J-1 leave a column of one point
        run(*column)


UNIT_STRIDE_MESSAGES: dict[str, str] = {}


# --- 300 fields -----------------------------------------------------------------------------------

MANY = 300


def _many_fields() -> Any:
    names = [f"f{k}" for k in range(MANY - 1)]
    namespace: dict[str, Any] = {"sc": sc, "F": F, "I": I}
    total = " + ".join(f"{n}(I + {k % 3 - 1})" for k, n in enumerate(names))
    exec(
        f"@sc.field_operator\ndef total({', '.join(n + ': F' for n in names)}) -> F:\n"
        f"    return {total}\n"
        f"@sc.program\ndef many({', '.join(n + ': F' for n in names)}, out: F) -> None:\n"
        f"    total({', '.join(names)}, out=out)\n",
        namespace,
    )
    return namespace["many"]


# What a build of the 300-field program may take of memory in its largest compiler process:
# the DaCe shim's type checks once took 18 GB (an index into a std::tuple per parameter),
# enough for the kernel to kill the compiler on a CI machine
BUILD_MEMORY_BOUND_KIB = 2 * 1024 * 1024

_BUILD_MANY = """
import resource, sys
from pathlib import Path
import numpy as np
from stencilchain.containers import build_container
from tests.runtime.test_bad_input_corpus import MANY, _many_fields
container = build_container({}, cache_dir=Path(sys.argv[1]), auto_optimize=True)
if sys.argv[2] == "dace_cpu":
    container.dace.name.override("run_dace_cpu")
    toolchain = container.dace.toolchain()
else:
    toolchain = container.gtfn.toolchain()
_many_fields().with_backend(toolchain)(*[np.zeros((5, 4)) for _ in range(MANY)])
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _build_in_a_process_of_its_own(fixture: str, cache_dir: Path) -> int:
    """Build the 300-field program on `fixture`'s toolchain (into `cache_dir`) in a fresh
    process; the largest resident size in KiB of the compilers it ran."""
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    )
    done = subprocess.run(
        [sys.executable, "-c", _BUILD_MANY, str(cache_dir), fixture],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return int(done.stdout.split()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("fixture", TOOLCHAINS)
def test_a_program_of_300_fields(
    fixture: str, request: pytest.FixtureRequest, session_cache_dir: Path
) -> None:
    many = _many_fields()
    if fixture != "embedded":
        assert _build_in_a_process_of_its_own(fixture, session_cache_dir) < BUILD_MEMORY_BOUND_KIB
    rng = np.random.default_rng(5)
    arrays = [rng.random((5, 4)) for _ in range(MANY - 1)]
    expected = run_case(many, (*arrays, np.zeros((5, 4))))
    assert expected.error is None
    run = bound(many, fixture, request)
    assert_same_outcome(run_case(run, (*arrays, np.zeros((5, 4)))), expected)
    wrong = list(arrays)
    wrong[MANY - 2] = wrong[MANY - 2].astype(np.float32)  # the last input
    assert_same_outcome(
        run_case(run, (*wrong, np.zeros((5, 4)))), run_case(many, (*wrong, np.zeros((5, 4))))
    )
    assert os.environ["OMP_NUM_THREADS"]
