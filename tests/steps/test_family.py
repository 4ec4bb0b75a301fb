"""The family descriptors: which family a source language or a build marker is of."""

from __future__ import annotations

from stencilchain.program.names import RESERVED, SDFG_RESERVED
from stencilchain.steps.dace.family import DACE
from stencilchain.steps.family import Family, family_of_language, family_of_marker
from stencilchain.steps.gtfn.family import GTFN

BOTH = (GTFN, DACE)


def test_languages_name_their_family() -> None:
    assert [family_of_language(BOTH, lang) for lang in ("cpp", "cuda", "sdfg", "fortran")] == [
        "gtfn",
        "gtfn",
        "dace",
        "",
    ]
    assert family_of_language((), "cpp") == ""


def test_a_marker_naming_its_family_wins() -> None:
    assert family_of_marker(BOTH, "toolchain-" + "a" * 32, {"family": "dace"}) == "dace"


def test_a_marker_naming_no_family_is_recognized_by_its_fields_or_key() -> None:
    assert family_of_marker(BOTH, "p_" + "a" * 32, {"sdfg_name": "p"}) == "dace"
    assert family_of_marker(BOTH, "p_" + "a" * 32, {"dace_library": "x.so"}) == "dace"
    assert family_of_marker(BOTH, "p_" + "a" * 32, {"precompiled_header": "h"}) == "gtfn"
    assert family_of_marker(BOTH, "pch-" + "a" * 32, {}) == "gtfn"
    assert family_of_marker(BOTH, "toolchain-" + "a" * 32, {}) == "gtfn"
    assert family_of_marker(BOTH, "p_" + "a" * 32, {"entry_point": "p"}) == ""


def test_every_family_refuses_the_one_list_of_reserved_names() -> None:
    assert GTFN.reserved_names.words is RESERVED
    assert DACE.reserved_names is SDFG_RESERVED and DACE.reserved_names.words >= RESERVED
    assert {GTFN.name, DACE.name} == {"gtfn", "dace"}
    assert not GTFN.languages & DACE.languages


def test_a_new_family_only_adds_its_descriptor() -> None:
    other = Family("other", frozenset({"ispc"}), marker_fields=frozenset({"ispc_target"}))
    assert family_of_language((*BOTH, other), "ispc") == "other"
    assert family_of_marker((*BOTH, other), "k_" + "a" * 32, {"ispc_target": "avx2"}) == "other"
