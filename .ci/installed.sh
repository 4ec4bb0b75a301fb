# Sourced by .ci/python_matrix.sh and .ci/wheel.sh: stencilchain as a user installs it, tested
# from outside the checkout (docs/adr/0025-python-matrix-and-wheel.md).

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# find_python VERSION: the path of an interpreter of VERSION (3.10, 3.13): on PATH (as
# actions/setup-python leaves it; a pyenv shim that has no such version set does not count),
# else under pyenv's versions; nothing and status 1 if none.
find_python() {
    local version=$1 candidate
    local pyenv_root=${PYENV_ROOT:-$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")}
    for candidate in "$(command -v "python$version" || true)" \
        "$pyenv_root"/versions/"$version".*/bin/python"$version"; do
        if [[ -x $candidate ]] && "$candidate" -c "import sys; sys.exit(f'{sys.version_info[0]}.{sys.version_info[1]}' != '$version')" 2>/dev/null; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

# run_installed LABEL PYTHON REQUIREMENT: a fresh venv of PYTHON with REQUIREMENT pip-installed
# (not editable), then `stencilchain demo` and the fast subset (tests/_fast.py), both from a
# folder outside the checkout holding a copy of tests/ and pyproject.toml (its pytest
# settings), on a fresh cache. Prints each part's wall time.
run_installed() {
    local label=$1 python=$2 requirement=$3 work start
    work=$(mktemp -d "${TMPDIR:-/tmp}/stencilchain-ci-XXXXXX")
    start=$SECONDS
    "$python" -m venv "$work/venv"
    "$work/venv/bin/python" -m pip install --quiet --upgrade pip
    "$work/venv/bin/python" -m pip install --quiet "$requirement"
    local install=$((SECONDS - start))
    cp -r "$ROOT/tests" "$ROOT/pyproject.toml" "$work/"
    (
        cd "$work"
        export STENCILCHAIN_CACHE_DIR="$work/cache" OMP_NUM_THREADS=2
        # what runs is the installed package, never the checkout's stencilchain/
        venv/bin/python -c "
import pathlib, site, sys, stencilchain
where = pathlib.Path(stencilchain.__file__).resolve()
sites = [pathlib.Path(p).resolve() for p in site.getsitepackages()]
print(f'$label: Python {sys.version.split()[0]}, stencilchain {stencilchain.__version__} from {where.parent}')
sys.exit(None if any(where.is_relative_to(s) for s in sites) else f'not installed: {where}')"
        start=$SECONDS
        venv/bin/stencilchain demo
        local demo=$((SECONDS - start))
        start=$SECONDS
        # shellcheck disable=SC2046  # the paths, one word each
        venv/bin/python -m pytest -q -n 2 -p no:cacheprovider --durations=10 -m fast $(venv/bin/python tests/_fast.py)
        echo "$label: install ${install} s, demo ${demo} s, fast subset $((SECONDS - start)) s"
    )
    rm -rf "$work"
}
