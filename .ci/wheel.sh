#!/usr/bin/env bash
# The wheel as a user installs it: `python -m build` makes an sdist and, from it, a wheel; both
# must hold every file of stencilchain/ that git tracks (the C++ headers and sources are package
# data); the wheel is installed (not editable) in a fresh venv, and the demo and the fast subset
# run from outside the checkout (docs/adr/0025-python-matrix-and-wheel.md).
# Usage: .ci/wheel.sh [PYTHON]  (PYTHON has the `build` package, from the test extra)
set -euo pipefail
source "$(dirname "$0")/installed.sh"
python=${1:-$ROOT/.venv/bin/python}
dist=$(mktemp -d "${TMPDIR:-/tmp}/stencilchain-dist-XXXXXX")
start=$SECONDS
"$python" -m build --outdir "$dist" "$ROOT" >"$dist/build.log" 2>&1 || { cat "$dist/build.log"; exit 1; }
"$python" "$ROOT/.ci/check_dist.py" "$ROOT" "$dist"/*.tar.gz "$dist"/*.whl
echo "wheel: build and check $((SECONDS - start)) s"
wheel=$(echo "$dist"/*.whl)
run_installed "wheel $(basename "$wheel")" "$python" "$wheel[test,dace,mpi]"
rm -rf "$dist"
