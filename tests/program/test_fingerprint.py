"""The IR fingerprint: the same in every process, and changed by every change of meaning."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import stencilchain as sc

# A program touching most constructs; the placeholders are what the sensitivity tests vary.
TEMPLATE = """
import stencilchain as sc

I = sc.Dimension("I")
J = sc.Dimension("J")
F = sc.Field[[I, J], sc.{dtype}]
B = sc.Field[[I, J], sc.bool_]


@sc.field_operator
def {fop}(f: F, g: F, {scalar}: sc.{dtype}) -> F:
    {tmp} = f({offset}) {op} g * {literal}
    return sc.where({tmp} > g, {tmp} * {scalar}, sc.math.maximum(f, g(J - 1)))


@sc.field_operator
def other(f: F) -> tuple[F, B]:
    return {fop}(f, -f, 2)(I - 1) + sc.math.sqrt(sc.math.abs(f)), ~(f < 0.0)


@sc.program
def prog(f: F, g: F, {scalar}: sc.{dtype}, a: F, b: F, c: B):
    {calls}


if __name__ == "__main__":
    print(prog.fingerprint())
"""

CALLS = {
    "normal": "{fop}(f, g, {scalar}, out=a{domain})\n    other(g, out=(b, c))",
    "swapped": "other(g, out=(b, c))\n    {fop}(f, g, {scalar}, out=a{domain})",
}

BASE = {
    "dtype": "float64",
    "fop": "stencil",
    "scalar": "alpha",
    "tmp": "tmp",
    "offset": "I + 1",
    "op": "+",
    "literal": "0.5",
    "domain": ", domain={J: (1, -1)}",
    "order": "normal",
}


def source(**changes: str) -> str:
    values = {**BASE, **changes}
    calls = CALLS[values["order"]].format(**values)
    return TEMPLATE.format(calls=calls, **values)


def build(**changes: str) -> sc.Program:
    namespace: dict[str, object] = {"__name__": "fingerprint_variant"}
    exec(compile(source(**changes), "<fingerprint variant>", "exec"), namespace)
    prog = namespace["prog"]
    assert isinstance(prog, sc.Program)
    return prog


def test_fingerprint_is_a_sha256_hex_digest():
    fp = build().fingerprint()
    assert len(fp) == 64
    int(fp, 16)
    assert fp == build().ir.fingerprint()


def test_same_program_same_fingerprint_in_process():
    first, second = build(), build()
    assert first is not second
    assert first.ir == second.ir
    assert first.ir.canonical == second.ir.canonical
    assert first.fingerprint() == second.fingerprint()


def test_same_fingerprint_in_two_fresh_processes(tmp_path):
    module = tmp_path / "fingerprinted_program.py"
    module.write_text(source())
    fingerprints = []
    for seed in ("1", "2"):  # a different str hash seed in each process
        env = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run(
            [sys.executable, str(module)],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        fingerprints.append(result.stdout.strip())
    assert fingerprints[0] == fingerprints[1]
    # ... and the same here, where the program was compiled from another file name
    assert fingerprints[0] == build().fingerprint()


# Each variant changes the meaning of the program in one way.
SENSITIVE = {
    "operator": {"op": "-"},
    "operator-mul": {"op": "*"},
    "literal": {"literal": "0.25"},
    "literal-one-ulp": {"literal": "0.5000000000000001"},
    "literal-int-vs-negative": {"literal": "-0.5"},
    "dtype": {"dtype": "float32"},
    "domain-start": {"domain": ", domain={J: (2, -1)}"},
    "domain-stop": {"domain": ", domain={J: (1, -2)}"},
    "domain-stop-none": {"domain": ", domain={J: (1, None)}", "offset": "I + 1"},
    "domain-from-end": {"domain": ", domain={J: (-5, -1)}"},
    "domain-dimension": {"domain": ", domain={I: (1, -1)}"},
    "domain-inferred": {"domain": ""},
    "offset-amount": {"offset": "I + 2"},
    "offset-sign": {"offset": "I - 1"},
    "offset-dimension": {"offset": "J + 1"},
    "offset-two-dimensions": {"offset": "I + 1, J + 1"},
    "scalar-parameter-name": {"scalar": "beta"},
    "call-order": {"order": "swapped"},
    "field-operator-name": {"fop": "stencil2"},
}


@pytest.mark.parametrize("variant", SENSITIVE)
def test_each_kind_of_change_changes_the_fingerprint(variant):
    assert build(**SENSITIVE[variant]).fingerprint() != build().fingerprint()


def test_all_variants_have_distinct_fingerprints():
    fingerprints = {name: build(**changes).fingerprint() for name, changes in SENSITIVE.items()}
    fingerprints["base"] = build().fingerprint()
    assert len(set(fingerprints.values())) == len(fingerprints)


def test_renaming_a_local_variable_keeps_the_fingerprint():
    assert build(tmp="renamed_local").fingerprint() == build().fingerprint()


def test_the_source_location_does_not_enter_the_fingerprint():
    padded = "\n\n\n# moved down\n" + source()
    namespace: dict[str, object] = {"__name__": "moved"}
    exec(compile(padded, "/elsewhere/other_name.py", "exec"), namespace)
    prog = namespace["prog"]
    assert isinstance(prog, sc.Program)
    assert prog.fingerprint() == build().fingerprint()


def test_the_canonical_text_is_the_json_of_the_nodes_values():
    """The canonical text is written directly (ADR 0064); it is what `json.dumps` with
    sorted keys and no spaces writes of each node as `[type name, {fields}]`, floats as
    their hex, leaf values of subclasses (an IntEnum, numpy's float64) as their base type's."""
    import dataclasses
    import enum
    import json

    import numpy as np

    from stencilchain.program.ir import canonical_json

    class Level(enum.IntEnum):
        TOP = 3

    @dataclasses.dataclass(frozen=True)
    class Leaf:
        zeta: float
        alpha: str
        flag: bool
        none: None
        level: Level
        items: tuple[object, ...]

    @dataclasses.dataclass(frozen=True)
    class Pair:
        second: Leaf
        first: int

    leaf = Leaf(-0.1, 'ä"x', True, None, Level.TOP, (1, np.float64(2.5), ("a", False)))
    expected = [
        "Pair",
        {
            "second": [
                "Leaf",
                {
                    "zeta": {"float": (-0.1).hex()},
                    "alpha": 'ä"x',
                    "flag": True,
                    "none": None,
                    "level": 3,
                    "items": [1, {"float": (2.5).hex()}, ["a", False]],
                },
            ],
            "first": 7,
        },
    ]
    node = json.dumps(expected, sort_keys=True, separators=(",", ":"))
    assert canonical_json(Pair(leaf, 7)) == '{"exprs":[],"node":' + node + "}"
    with pytest.raises(TypeError, match="cannot serialize dict"):
        canonical_json(Pair(dataclasses.replace(leaf, items=({},)), 1))


def test_a_deep_expression_has_a_canonical_text():
    """A sum of 300 fields is an expression 300 levels deep: the encoder recurses no deeper
    per level than tracing does (two frames), so whatever traces is fingerprinted."""
    from stencilchain.program.ir import canonical_json

    n = 300
    source = (
        "def deep(" + ", ".join(f"f{k}: F" for k in range(n)) + ") -> F:\n"
        "    return " + " + ".join(f"f{k}" for k in range(n)) + "\n"
    )
    namespace = {"F": sc.Field[[sc.Dimension("I")], sc.float64]}
    exec(source, namespace)
    text = canonical_json(sc.field_operator(namespace["deep"]).definition)
    assert text.count('["Ref",') == n and text.count('["Binary",') == n - 1
