"""Named collections on the embedded executor: dataclasses and NamedTuples of fields (and
scalars) as field-operator and program arguments and as results, with attribute access,
against a NumPy reference; a wrong collection is named as written (`state.wind.v`)."""

from __future__ import annotations

import dataclasses
import os
from typing import NamedTuple

import numpy as np
import pytest

import stencilchain as sc
from stencilchain.errors import ArgumentError, DefinitionError
from tests.program._support import assert_located

I, K = sc.Dimension("I"), sc.Dimension("K")
F = sc.Field[[I, K], sc.float64]
HERE = os.path.abspath(__file__)
SHAPE = (4, 5)


@dataclasses.dataclass(frozen=True)
class Wind:
    u: F
    v: F


class Tracers(NamedTuple):
    q: F
    scale: sc.float64


@dataclasses.dataclass(frozen=True)
class State:
    wind: Wind
    tracers: Tracers


class Pair(NamedTuple):
    total: F
    diff: F


@sc.field_operator
def advance(s: State, dt: sc.float64) -> Wind:
    return Wind(u=s.wind.u + dt * s.tracers.q, v=s.wind.v * s.tracers.scale)


@sc.field_operator
def pair(w: Wind) -> Pair:
    return Pair(w.u + w.v, w.u - w.v)


@sc.field_operator
def doubled(w: Wind) -> F:
    p = pair(w)  # a NamedTuple result inside a field operator
    return 2.0 * p.total + p.diff


F32 = sc.Field[[I, K], sc.float32]


@dataclasses.dataclass(frozen=True)
class Wind32:
    u: F32
    v: F32


@sc.field_operator
def calm(w: Wind, limit: sc.float64) -> Wind32:
    strong = w.u * w.u + w.v * w.v > limit
    kept = sc.where(strong, Wind(0.5 * w.u, 0.5 * w.v), w)  # records as branches
    low = sc.astype(kept, sc.float32)  # a record cast attribute by attribute
    return Wind32(low.u, low.v)


@sc.program
def calming(w: Wind, limit: sc.float64, out: Wind32) -> None:
    calm(w, limit, out=out)


@sc.program
def records(state: State, dt: sc.float64, new: Wind, out: Pair, out2: F, o3: F, o4: F) -> None:
    advance(state, dt, out=new)
    tmp = advance(State(state.wind, Tracers(state.tracers.q, 2.0)), dt)  # temporaries: a Wind
    pair(tmp, out=out)
    doubled(Wind(tmp.v, tmp.u), out=out2)
    pair(state.wind, out=(o3, o4))  # a NamedTuple result to a plain tuple


def _arrays() -> list[np.ndarray]:
    rng = np.random.default_rng(11)
    return [rng.random(SHAPE) for _ in range(3)]


def _outs() -> tuple[Wind, Pair, np.ndarray, np.ndarray, np.ndarray]:
    def nan() -> np.ndarray:
        return np.full(SHAPE, np.nan)

    return Wind(nan(), nan()), Pair(nan(), nan()), nan(), nan(), nan()


def test_dataclasses_and_named_tuples_as_arguments_and_results() -> None:
    u, v, q = _arrays()
    new, out, out2, o3, o4 = _outs()
    records(State(Wind(u, v), Tracers(q, 0.5)), 0.1, new, out, out2, o3, o4)
    np.testing.assert_array_equal(new.u, u + 0.1 * q)
    np.testing.assert_array_equal(new.v, v * 0.5)
    tu, tv = u + 0.1 * q, v * 2.0
    np.testing.assert_array_equal(out.total, tu + tv)
    np.testing.assert_array_equal(out.diff, tu - tv)
    np.testing.assert_array_equal(out2, 2.0 * (tv + tu) + (tv - tu))
    np.testing.assert_array_equal(o3, u + v)
    np.testing.assert_array_equal(o4, u - v)


def test_a_named_tuple_argument_may_be_a_plain_tuple() -> None:
    u, v, q = _arrays()
    new, out, out2, o3, o4 = _outs()
    records(State(Wind(u, v), (q, 0.5)), 0.1, new, tuple(out), out2, o3, o4)  # type: ignore[arg-type]
    np.testing.assert_array_equal(out.total, u + 0.1 * q + v * 2.0)


def test_the_ir_names_each_attribute() -> None:
    names = [p.name for p in records.ir.params]
    assert names[:4] == ["state_wind_u", "state_wind_v", "state_tracers_q", "state_tracers_scale"]
    assert "out_total" in names and "new_v" in names


def test_a_wrong_element_is_named_by_its_attributes() -> None:
    u, v, q = _arrays()
    new, out, out2, o3, o4 = _outs()
    bad = State(Wind(u, v.astype(np.float32)), Tracers(q, 0.5))
    with pytest.raises(ArgumentError, match=r"'state\.wind\.v'"):
        records(bad, 0.1, new, out, out2, o3, o4)
    not_a_wind = State((u, v), Tracers(q, 0.5))  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match=r"'state\.wind' must be a Wind\(u=field, v=field\)"):
        records(not_a_wind, 0.1, new, out, out2, o3, o4)


def test_records_as_branches_of_where_and_astype() -> None:
    u, v, _ = _arrays()
    out = Wind32(np.zeros(SHAPE, np.float32), np.zeros(SHAPE, np.float32))
    calming(Wind(u, v), 0.5, out)
    strong = u * u + v * v > 0.5
    np.testing.assert_array_equal(out.u, np.where(strong, 0.5 * u, u).astype(np.float32))
    np.testing.assert_array_equal(out.v, np.where(strong, 0.5 * v, v).astype(np.float32))


def test_where_of_a_record_and_a_tuple_is_located() -> None:
    with pytest.raises(DefinitionError) as info:

        @sc.field_operator
        def bad(w: Wind) -> Wind:
            return sc.where(w.u > 0.0, w, (w.u, w.v))  # L:record-tuple

    assert_located(info.value, "record-tuple", path=HERE)
    assert "Wind(u=value, v=value) and a tuple (value, value)" in str(info.value)


def test_a_call_with_the_wrong_collection_is_located() -> None:
    with pytest.raises(DefinitionError) as info:

        @sc.program
        def bad(a: F, b: F, t: F, d: F) -> None:
            pair((a, b), out=Pair(t, d))  # L:wrong-record

    assert_located(info.value, "wrong-record", path=HERE)
    assert "argument 'w' must be a Wind(u=field, v=field), got a tuple of 2" in str(info.value)


def test_a_result_annotation_of_another_collection_is_an_error() -> None:
    with pytest.raises(DefinitionError, match="annotated to return Pair"):

        @sc.field_operator
        def bad(w: Wind) -> Pair:
            return Wind(w.u, w.v)
