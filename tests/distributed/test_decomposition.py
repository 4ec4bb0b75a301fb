"""Domain decomposition and halo exchange on 1, 2 and 4 MPI ranks (`mpiexec`, with a
timeout: a hung rank fails the test), and the errors that need no second rank."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.distributed import Decomposition, exchange

from ._launch import launch

pytest.importorskip("mpi4py", reason="the mpi extra is not installed")

I, J, K = sc.Dimension("I"), sc.Dimension("J"), sc.Dimension("K")
F = sc.Field[[I, J], sc.float64]
RANKS = Path(__file__).with_name("ranks.py")


def run_ranks(n: int, *args: str, cache: Path) -> str:
    """`ranks.py args` on `n` ranks; its output, once every rank said it is done."""
    output = launch(n, [str(RANKS), *args], cache=cache)
    done = sorted(int(rank) for rank in re.findall(rf"ok (\d+) {args[0]}", output))
    assert done == list(range(n)), output  # every rank finished (lines may interleave)
    return output


@pytest.mark.parametrize("ranks", [1, 2, 4])
@pytest.mark.parametrize("scenario", ["scatter_gather", "halos_periodic", "halos_open"])
def test_blocks_and_halos(scenario: str, ranks: int, tmp_path: Path) -> None:
    run_ranks(ranks, scenario, cache=tmp_path)


@pytest.mark.parametrize(
    ("toolchain", "ranks"),
    [("run_gtfn_cpu", 1), ("run_gtfn_cpu", 4), ("run_dace_cpu", 2)],
)
def test_a_compiled_laplacian_on_blocks_equals_the_whole_grid(
    toolchain: str, ranks: int, private_cache_dir: Path
) -> None:
    """Every rank compiles the program into one shared cache (the build runs once, under
    the cache's lock) and runs it on its block; rank 0 compares the gathered result."""
    if toolchain.startswith("run_dace"):
        pytest.importorskip("dace")
    run_ranks(ranks, "laplacian", toolchain, cache=private_cache_dir)


@pytest.mark.parametrize(
    ("family", "ranks", "cache"),
    [("gtfn", 4, "shared"), ("gtfn", 2, "local"), ("dace", 2, "shared"), ("dace", 2, "local")],
)
def test_a_job_compiles_each_program_once(
    family: str, ranks: int, cache: str, private_cache_dir: Path
) -> None:
    """Six programs over the ranks, round-robin: one build each in the whole job, with
    a shared cache or one per rank (the builds are broadcast)."""
    if family == "dace":
        pytest.importorskip("dace")
    run_ranks(ranks, "compile_job", family, cache, "6", cache=private_cache_dir)


def test_a_failed_build_fails_every_rank_alike(private_cache_dir: Path) -> None:
    run_ranks(4, "compile_job", "gtfn", "shared", "5", "2", cache=private_cache_dir)


@pytest.mark.parametrize(
    ("toolchain", "ranks"),
    [
        ("run_embedded", 1),
        ("run_embedded", 4),
        ("run_gtfn_cpu", 1),
        ("run_gtfn_cpu", 4),
        ("run_dace_cpu", 2),
    ],
)
def test_distributed_programs_equal_one_process(
    toolchain: str, ranks: int, private_cache_dir: Path
) -> None:
    """Seven programs (several stages, temporaries carried across stages, scans, tuple
    outputs, explicit domains) on 1, 2 or 4 ranks, bitwise against one process."""
    only = []
    if toolchain.startswith("run_dace"):  # slower to compile: two programs of two stages
        pytest.importorskip("dace")
        only = ["laplap_program,carried_temporary"]
    run_ranks(ranks, "programs", toolchain, *only, cache=private_cache_dir)


def test_one_rank_splits_nothing_and_wraps_periodic_halos() -> None:
    grid = Decomposition.create({I: 5, J: 4}, periodic=(True, False), comm=_self())
    f = grid.allocate((I, J), halo={I: 1, J: 1})
    f.interior[...] = np.arange(20.0).reshape(5, 4)
    exchange(f)
    assert np.array_equal(f.data[0, 1:-1], f.interior[-1])  # wrapped along I
    assert np.array_equal(f.data[-1, 1:-1], f.interior[0])
    assert np.all(f.data[:, 0] == 0) and np.all(f.data[:, -1] == 0)  # J is not periodic


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"split": [K]}, "must name distinct dimensions of the grid"),
        ({"split": [I, I]}, "must name distinct dimensions"),
        ({"periodic": [True]}, "periodic has 1 flags for 2 split dimensions"),
        (
            {"grid": [2, 1]},
            r"grid=\[2, 1\] must have one positive count per split dimension and 1 ranks",
        ),
    ],
)
def test_bad_decompositions_say_what_is_wrong(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(sc.DecompositionError, match=message):
        Decomposition.create({I: 4, J: 4}, comm=_self(), **kwargs)  # type: ignore[arg-type]


def test_a_halo_wider_than_a_block_or_along_an_unsplit_dimension_is_refused() -> None:
    grid = Decomposition.create({I: 3, J: 4, K: 2}, comm=_self(), periodic=True)
    with pytest.raises(sc.DecompositionError, match="a halo along K, which is not split"):
        grid.allocate((I, J, K), halo={K: 1})
    wide = grid.allocate((I, J), halo=4)
    with pytest.raises(
        sc.DecompositionError, match="halo of 4 along I, wider than the thinnest block"
    ):
        exchange(wide)
    with pytest.raises(
        sc.DecompositionError, match=r"the global array has shape \(2, 2\), the grid \(3, 4\)"
    ):
        grid.scatter(grid.allocate((I, J)), np.zeros((2, 2)))


def test_programs_that_need_global_positions_are_refused() -> None:
    from stencilchain.distributed import DistributedProgram

    @sc.field_operator
    def ident(f: F) -> F:
        return f

    @sc.field_operator
    def at_index(f: F) -> F:
        return f + sc.astype(sc.index(I), sc.float64)

    @sc.program
    def fixed_end(f: F, out: F) -> None:
        ident(f, out=out, domain={I: (0, 5), J: (0, -1)})

    @sc.program
    def indexed(f: F, out: F) -> None:
        at_index(f, out=out)

    @sc.program
    def to_the_end_of_out(f: F, out: F) -> None:
        ident(f, out=out, domain={I: (0, sc.end_of(out, I))})

    grid = Decomposition.create({I: 8, J: 8}, comm=_self())
    with pytest.raises(sc.DecompositionError, match="ends at a fixed index"):
        DistributedProgram(fixed_end, sc.backends.run_embedded, grid)
    with pytest.raises(sc.DecompositionError, match="counted from a field's own range"):
        DistributedProgram(to_the_end_of_out, sc.backends.run_embedded, grid)
    with pytest.raises(sc.DecompositionError, match=r"at_index uses index\(I\)"):
        DistributedProgram(indexed, sc.backends.run_embedded, grid)


def test_without_mpi4py_a_distributed_feature_names_the_extra(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['mpi4py'] = None\n"
        "import stencilchain as sc\n"
        "from stencilchain.distributed import Decomposition\n"
        "try:\n"
        "    Decomposition.create({sc.Dimension('I'): 4})\n"
        "except sc.MissingExtraError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert "pip install 'stencilchain[mpi]'" in result.stdout
    assert "Decomposition.create needs mpi4py" in result.stdout


def _self() -> object:
    from mpi4py import MPI

    return MPI.COMM_SELF
