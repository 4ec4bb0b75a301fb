#!/usr/bin/env bash
# The lowest and the highest supported Python (SC_PYTHONS, default "3.10 3.13"; the whole suite
# runs on the default python3 in .ci/run): for each, a clean venv, `pip install` of the checkout
# with its extras, `stencilchain demo` and the fast subset, from outside the checkout. A machine
# without one of them says so and goes on (docs/adr/0025-python-matrix-and-wheel.md).
set -euo pipefail
source "$(dirname "$0")/installed.sh"
for version in ${SC_PYTHONS:-3.10 3.13}; do
    if ! python=$(find_python "$version"); then
        echo "python_matrix: no Python $version on this machine (PATH, pyenv): skipped"
        continue
    fi
    run_installed "python $version" "$python" "$ROOT[test,dace,mpi]"
done
