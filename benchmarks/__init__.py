"""The speed figures of stencilchain, side by side with their baselines, in one command:

    OMP_NUM_THREADS=2 python -m benchmarks [--families gtfn,dace] [--json PATH] [--quick]
                                            [--only NAME,...]

`benchmarks.run` is that command; the modules next to it hold the figures (and still run
alone, `python benchmarks/x.py` or `python -m benchmarks.x`): `figures` (call overhead,
compile, warm start, import), `throughput` (Laplacian and hdiff against a compiled copy),
`tridiagonal`, `neighbor_sum`, `empty_call` (the empty C extension call baseline), and the
older single-purpose scripts `compile_time`, `dace_call_overhead`, `temporaries`,
`table_check`, `mesh_build`; `peers/` (hand-written Numba and Halide baselines of hdiff and
the Thomas solve, each in its own interpreter: `python -m benchmarks.peers setup`, ADR 0038).
"""
