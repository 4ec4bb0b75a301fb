"""What program-local temporaries cost, against the same program with a caller's array.

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/temporaries.py [--json] [--sizes 64,1024]

For each square size and toolchain (GTFN CPU, DaCe CPU, DaCe CPU with an external
workspace) the median time of one call of:

- `laplap_param`: lap(lap(f)) through a temporary array the caller passes (the baseline:
  no allocation in the call),
- `laplap_temporary`: the same through a program-local temporary (GTFN allocates it per
  call; DaCe keeps a transient; with the external workspace the caller's buffer is used),

and the hdiff example in one call (`hdiff`, which recomputes the Laplacian) against its
staged form through three temporaries (`hdiff_staged`), on (n, n, 8) arrays, plus the
NumPy executor as a scale. Uses a private temporary cache, never the user's.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import stencilchain as sc
from stencilchain.examples.laplacian import Field2D, laplacian


@sc.program
def laplap_temporary(f: Field2D, out: Field2D) -> None:
    t = laplacian(f)
    laplacian(t, out=out)


def median_seconds(fn: Callable[..., None], *args: Any) -> float:
    """The median time of `fn(*args)` over at least 5 calls and 0.3 s, after one call
    (compilation, first touch)."""
    fn(*args)
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < 5 or time.perf_counter() - start < 0.3:
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--sizes", default="8,64,1024,4096")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    cache = tempfile.mkdtemp(prefix="stencilchain-bench-")

    from stencilchain.containers import build_container
    from stencilchain.examples import hdiff, hdiff_staged, laplap

    toolchains: dict[str, Any] = {
        "gtfn": build_container({}, cache_dir=cache).gtfn.toolchain(),
        "dace": build_container({}, cache_dir=cache).dace.toolchain(),
    }
    external = build_container({}, cache_dir=cache, external_workspace=True)
    external.dace.name.override("run_dace_cpu_workspace")
    toolchains["dace+workspace"] = external.dace.toolchain()

    rows: list[dict[str, Any]] = []
    rng = np.random.default_rng(0)
    for n in (int(s) for s in args.sizes.split(",")):
        f = rng.random((n, n))
        tmp, out = np.zeros_like(f), np.zeros_like(f)
        inputs3 = hdiff.make_inputs((n, n, 8), rng) if n <= 1024 else None
        for name, toolchain in toolchains.items():
            row: dict[str, Any] = {"n": n, "toolchain": name}
            param = laplap.PROGRAM.with_backend(toolchain)
            row["laplap_param_s"] = median_seconds(param, f, tmp, out)
            temporary = laplap_temporary.with_backend(toolchain)
            needed = temporary.workspace_size(f, out)
            if needed:
                temporary.set_workspace(np.empty(needed, np.uint8))
            row["workspace_bytes"] = needed
            row["laplap_temporary_s"] = median_seconds(temporary, f, out)
            if inputs3 is not None:
                values = list(inputs3.values())
                one = hdiff.PROGRAM.with_backend(toolchain)
                staged = hdiff_staged.PROGRAM.with_backend(toolchain)
                needed = staged.workspace_size(*values)
                if needed:
                    staged.set_workspace(np.empty(needed, np.uint8))
                row["hdiff_s"] = median_seconds(one, *values)
                row["hdiff_staged_s"] = median_seconds(staged, *values)
            rows.append(row)
        if n <= 1024:
            rows.append(
                {
                    "n": n,
                    "toolchain": "numpy (embedded)",
                    "laplap_param_s": median_seconds(laplap.PROGRAM, f, tmp, out),
                    "laplap_temporary_s": median_seconds(laplap_temporary, f, out),
                }
            )
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}; median seconds per call")
    head = ["n", "toolchain", "laplap param", "laplap temp", "ratio", "hdiff", "hdiff staged"]
    print("  ".join(f"{h:>16}" for h in head))
    for r in rows:
        ratio = r["laplap_temporary_s"] / r["laplap_param_s"]
        cells = [
            str(r["n"]),
            r["toolchain"],
            _fmt(r["laplap_param_s"]),
            _fmt(r["laplap_temporary_s"]),
            f"{ratio:.2f}x",
            _fmt(r.get("hdiff_s")),
            _fmt(r.get("hdiff_staged_s")),
        ]
        print("  ".join(f"{c:>16}" for c in cells))


def _fmt(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    return f"{seconds * 1e3:.2f} ms"


if __name__ == "__main__":
    main()
