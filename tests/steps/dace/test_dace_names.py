"""The DaCe family's names: its check of parameter names reads the one list of reserved
names (`stencilchain.program.names`), and the fixed C++ of its shim is package data whose
sections are the ones the shim's writer uses."""

from __future__ import annotations

import dataclasses
import keyword
import re
from pathlib import Path

import pytest

import stencilchain as sc
from stencilchain.program import ir
from stencilchain.program.names import CPP_RESERVED, RESERVED, SDFG_RESERVED
from stencilchain.steps.dace import calling_convention, shim
from stencilchain.steps.settings import DataLayout

I = sc.Dimension("I")
F = sc.Field[[I], sc.float64]


@sc.field_operator
def _copy(f: F) -> F:
    return f


@sc.program
def copy_program(f: F, out: F) -> None:
    _copy(f, out=out)


def _renamed(name: str) -> ir.Program:
    """The program with its first parameter renamed, past the checks at definition (as a
    program built as IR would be)."""
    program = copy_program.ir
    first, *rest = program.params
    return dataclasses.replace(program, params=(dataclasses.replace(first, name=name), *rest))


def test_the_sdfg_reserves_every_cpp_word_and_python_keyword() -> None:
    assert SDFG_RESERVED.words == RESERVED | frozenset(keyword.kwlist)
    assert CPP_RESERVED.words == RESERVED


@pytest.mark.parametrize(
    "name", ["lambda", "None", "dace", "int64_t", "final", "__x", "_Big", "n_I"]
)
def test_the_translator_refuses_reserved_and_generated_names(name: str) -> None:
    with pytest.raises(ValueError, match=f"parameter '{re.escape(name)}'"):
        calling_convention.check_names(_renamed(name), DataLayout.STRIDED)


def test_the_translator_accepts_an_ordinary_name() -> None:
    calling_convention.check_names(_renamed("field"), DataLayout.STRIDED)


def test_every_section_of_shim_cpp_is_used_and_exists() -> None:
    text = Path(shim.__file__).with_name("shim.cpp").read_text()
    defined = set(re.findall(r"^//@ (\w+)$", text, flags=re.MULTILINE))
    used = set(re.findall(r'section\(\s*"(\w+)"', Path(shim.__file__).read_text()))
    assert defined == used
