"""Peer baselines: hand-written Numba loop nests and Halide pipelines of hdiff and the Thomas
solve, each run in its own interpreter (benchmarks/peers/worker.py), driven from
`python -m benchmarks` by benchmarks/peers/harness.py. Set-up: `python -m benchmarks.peers
setup` (docs/adr/0038-peer-baselines.md)."""
