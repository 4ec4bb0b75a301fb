"""The `fast` subset (docs/adr/0025-python-matrix-and-wheel.md): what CI runs on the other
supported Pythons and from the installed wheel. Marked by tests/conftest.py by path, not in the
test files: the layers that compile nothing, whole, and a few compiled end-to-end tests.

Run as a script, it prints the paths to give pytest with `-m fast` (relative to the folder
above tests/), so that nothing else is collected.
"""

from __future__ import annotations

# A folder (ending in /) or a file, relative to tests/, or a test of one (`file::name`, all its
# parameters; `file::name[id-prefix` for some). Tests marked slow are never fast.
FAST = (
    "program/",
    "containers/",
    "steps/cpp/",
    "meshes/",
    "runtime/test_gtfn_end_to_end.py::test_example_matches_embedded_and_reference[gtfn_cpu-",
    "runtime/test_gtfn_end_to_end.py::test_example_matches_embedded_and_reference[dace_cpu-laplacian]",
    "runtime/test_gtfn_end_to_end.py::test_example_matches_embedded_and_reference[dace_cpu-tridiagonal]",
    "runtime/test_gtfn_end_to_end.py::test_example_matches_embedded_and_reference[dace_cpu-nabla]",
    "runtime/test_gtfn_end_to_end.py::test_argument_errors_match_embedded[gtfn_cpu-",
    "runtime/test_meshes_compiled.py::test_reads_and_reductions",
)
# Tests under FAST that read the checkout (docs/), which the installed package lacks.
NEEDS_CHECKOUT = ("containers/test_config.py::test_docs_file_equals_rendered_reference",)


def _matches(test: str, entry: str) -> bool:
    if "::" not in entry:
        return test.partition("::")[0].startswith(entry)
    return test == entry or test.startswith(entry if "[" in entry else entry + "[")


def is_fast(test: str) -> bool:
    """Whether `test` (its path under tests/, `::`, its name with parameters) is in FAST."""
    return any(_matches(test, e) for e in FAST) and not any(
        _matches(test, e) for e in NEEDS_CHECKOUT
    )


def paths() -> list[str]:
    """The files and folders that hold FAST, as pytest arguments."""
    return sorted({"tests/" + e.split("::", 1)[0] for e in FAST})


if __name__ == "__main__":
    print(" ".join(paths()))
