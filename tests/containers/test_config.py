"""The config classes, the environment parsing and the generated configuration reference."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stencilchain.containers.config import (
    SETTINGS,
    ConfigError,
    DaCeConfig,
    GTFNConfig,
    ToolchainConfig,
    dace_config_from,
    gtfn_config_from,
    render_configuration_reference,
)
from stencilchain.containers.environment import settings_from_environ
from stencilchain.program.device import Device
from stencilchain.steps.settings import BuildType, CacheLifetime, DataLayout

DOCS = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"

TRUE_WORDS = ["1", "true", "TRUE", "True", "yes", "YES", "on", "On"]
FALSE_WORDS = ["0", "false", "FALSE", "no", "No", "off", "OFF"]


def test_defaults() -> None:
    assert DaCeConfig() == dace_config_from(settings_from_environ({}))
    assert GTFNConfig() == gtfn_config_from(settings_from_environ({}))
    cfg = DaCeConfig()
    assert cfg.device is Device.CPU
    assert cfg.build_type is BuildType.RELEASE
    assert cfg.cache_lifetime is CacheLifetime.PERSISTENT
    assert cfg.cache_dir is None
    assert cfg.data_layout is DataLayout.STRIDED
    assert cfg.cached_translation is True
    assert cfg.metrics is False
    assert cfg.auto_optimize is True
    assert cfg.external_workspace is False


def test_table_matches_config_fields() -> None:
    names = [s.name for s in SETTINGS]
    assert names == [f.name for f in dataclasses.fields(DaCeConfig)]
    assert [f.name for f in dataclasses.fields(GTFNConfig)] == [
        f.name for f in dataclasses.fields(ToolchainConfig)
    ]
    assert len({s.env for s in SETTINGS}) == len(SETTINGS)
    assert all(s.env.startswith("STENCILCHAIN_") for s in SETTINGS)


@pytest.mark.parametrize(
    ("env", "raw", "field", "expected"),
    [
        ("STENCILCHAIN_DEVICE", "gpu", "device", Device.GPU),
        ("STENCILCHAIN_DEVICE", "GPU", "device", Device.GPU),
        ("STENCILCHAIN_BUILD_TYPE", "Debug", "build_type", BuildType.DEBUG),
        ("STENCILCHAIN_BUILD_TYPE", "RelWithDebInfo", "build_type", BuildType.RELWITHDEBINFO),
        ("STENCILCHAIN_CACHE_DIR", "/tmp/sc-cache", "cache_dir", Path("/tmp/sc-cache")),
        ("STENCILCHAIN_CACHE_DIR", "~/sc", "cache_dir", Path.home() / "sc"),
        ("STENCILCHAIN_CACHE_LIFETIME", "SESSION", "cache_lifetime", CacheLifetime.SESSION),
        ("STENCILCHAIN_DATA_LAYOUT", "unit_stride", "data_layout", DataLayout.UNIT_STRIDE),
        ("STENCILCHAIN_CACHED_TRANSLATION", "no", "cached_translation", False),
        ("STENCILCHAIN_METRICS", "on", "metrics", True),
        ("STENCILCHAIN_DACE_AUTO_OPTIMIZE", "0", "auto_optimize", False),
        ("STENCILCHAIN_DACE_EXTERNAL_WORKSPACE", "true", "external_workspace", True),
    ],
)
def test_each_variable_parsed(env: str, raw: str, field: str, expected: object) -> None:
    values = settings_from_environ({env: raw})
    assert values[field] == expected
    assert getattr(dace_config_from(values), field) == expected
    if field in {f.name for f in dataclasses.fields(GTFNConfig)}:
        assert getattr(gtfn_config_from(values), field) == expected


@pytest.mark.parametrize(
    ("env", "raw", "accepted"),
    [
        ("STENCILCHAIN_DEVICE", "tpu", "cpu, gpu"),
        ("STENCILCHAIN_BUILD_TYPE", "fast", "debug, release, relwithdebinfo, minsizerel"),
        ("STENCILCHAIN_CACHE_LIFETIME", "forever", "session, persistent"),
        ("STENCILCHAIN_DATA_LAYOUT", "fortran", "strided, unit_stride"),
        ("STENCILCHAIN_CACHED_TRANSLATION", "maybe", "1, true, yes, on, 0, false, no, off"),
        ("STENCILCHAIN_METRICS", "2", "1, true, yes, on, 0, false, no, off"),
        ("STENCILCHAIN_DACE_AUTO_OPTIMIZE", "y", "1, true, yes, on, 0, false, no, off"),
        ("STENCILCHAIN_DACE_EXTERNAL_WORKSPACE", "enabled", "1, true, yes, on, 0, false, no, off"),
    ],
)
def test_bad_value_message(env: str, raw: str, accepted: str) -> None:
    with pytest.raises(ConfigError) as info:
        settings_from_environ({env: raw})
    assert str(info.value) == f"{env}={raw!r} is not valid; accepted: {accepted}"
    assert isinstance(info.value, ValueError)


def test_build_type_message_exactly() -> None:
    with pytest.raises(ConfigError, match=r"^STENCILCHAIN_BUILD_TYPE='fast' is not valid; "):
        settings_from_environ({"STENCILCHAIN_BUILD_TYPE": "fast"})


@pytest.mark.parametrize("raw", TRUE_WORDS + [f" {w} " for w in TRUE_WORDS[:2]])
def test_boolean_true_spellings(raw: str) -> None:
    assert settings_from_environ({"STENCILCHAIN_METRICS": raw})["metrics"] is True


@pytest.mark.parametrize("raw", FALSE_WORDS)
def test_boolean_false_spellings(raw: str) -> None:
    values = settings_from_environ({"STENCILCHAIN_CACHED_TRANSLATION": raw})
    assert values["cached_translation"] is False


@pytest.mark.parametrize("raw", ["y", "n", "t", "f", "2", "-1", "truee", "enable", "none", "1.0"])
def test_boolean_rejected_spellings(raw: str) -> None:
    with pytest.raises(ConfigError, match="STENCILCHAIN_METRICS="):
        settings_from_environ({"STENCILCHAIN_METRICS": raw})


@pytest.mark.parametrize(
    ("typo", "known"),
    [
        ("STENCILCHAIN_BUILDTYPE", "STENCILCHAIN_BUILD_TYPE"),
        ("STENCILCHAIN_DEVCIE", "STENCILCHAIN_DEVICE"),
        ("STENCILCHAIN_AUTO_OPTIMIZE", "STENCILCHAIN_DACE_AUTO_OPTIMIZE"),
        ("STENCILCHAIN_CACHEDIR", "STENCILCHAIN_CACHE_DIR"),
    ],
)
def test_unknown_variable_suggests_closest(typo: str, known: str) -> None:
    with pytest.raises(ConfigError) as info:
        settings_from_environ({typo: "1"})
    assert str(info.value) == f"unknown variable {typo}='1': did you mean {known}?"


def test_unknown_variable_without_close_match_lists_known() -> None:
    with pytest.raises(ConfigError) as info:
        settings_from_environ({"STENCILCHAIN_ZZZ": "1"})
    assert "STENCILCHAIN_ZZZ" in str(info.value)
    assert "known: STENCILCHAIN_DEVICE" in str(info.value)


def test_other_variables_ignored() -> None:
    values = settings_from_environ({"PATH": "/bin", "STENCIL_DEVICE": "x", "stencilchain_x": "1"})
    assert values == settings_from_environ({})


@pytest.mark.parametrize("raw", ["", "  "])
def test_empty_means_unset(raw: str) -> None:
    environ = {s.env: raw for s in SETTINGS} | {"STENCILCHAIN_UNKNOWN": raw}
    assert settings_from_environ(environ) == {s.name: s.default for s in SETTINGS}


def test_configs_frozen_and_hashable() -> None:
    cfg = GTFNConfig(device=Device.GPU)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.device = Device.CPU  # type: ignore[misc]
    assert hash(cfg) == hash(GTFNConfig(device=Device.GPU))
    assert len({DaCeConfig(), DaCeConfig(), DaCeConfig(auto_optimize=False)}) == 2
    gtfn: object = GTFNConfig()
    assert gtfn != DaCeConfig()
    assert not isinstance(GTFNConfig(), DaCeConfig)


def test_config_from_values() -> None:
    cfg = dace_config_from({"device": "GPU", "cache_dir": "/x", "metrics": True})
    assert cfg == DaCeConfig(device=Device.GPU, cache_dir=Path("/x"), metrics=True)
    assert gtfn_config_from({"auto_optimize": False}) == GTFNConfig()  # another family's setting
    with pytest.raises(ConfigError, match=r"did you mean device\?"):
        gtfn_config_from({"devcie": Device.GPU})
    with pytest.raises(ConfigError, match=r"^metrics=1 is not valid"):
        gtfn_config_from({"metrics": 1})
    with pytest.raises(ConfigError, match=r"^device='tpu' is not valid; accepted: cpu, gpu$"):
        gtfn_config_from({"device": "tpu"})


def test_reads_os_environ_only_when_called(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("STENCILCHAIN_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("STENCILCHAIN_DEVICE", "gpu")
    assert settings_from_environ()["device"] is Device.GPU
    monkeypatch.setenv("STENCILCHAIN_DEVICE", "cpu")
    assert settings_from_environ()["device"] is Device.CPU


def test_import_ignores_environment() -> None:
    env = dict(os.environ, STENCILCHAIN_DEVICE="tpu", STENCILCHAIN_TYPO="1")
    code = "import stencilchain.containers.config, stencilchain.containers.environment"
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


def test_docs_file_equals_rendered_reference() -> None:
    assert DOCS.read_text(encoding="utf-8") == render_configuration_reference(), (
        "docs/configuration.md is stale; regenerate: "
        "python -m stencilchain.containers.config > docs/configuration.md"
    )


def test_rendered_reference_covers_every_setting() -> None:
    text = render_configuration_reference()
    for s in SETTINGS:
        assert f"`{s.env}`" in text
        assert s.meaning in text
        assert s.accepted in text
