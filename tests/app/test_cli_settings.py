"""`stencilchain config` and `stencilchain backends`: values, sources, and bad environments."""

from __future__ import annotations

from pathlib import Path

import pytest

from stencilchain import backends

from .cli_support import CLI


def _by_name(result_json: dict[str, list[dict[str, str]]]) -> dict[str, dict[str, str]]:
    return {row["name"]: row for row in result_json["settings"]}


def test_config_shows_defaults_and_environment(cli: CLI, session_cache_dir: Path) -> None:
    result = cli("config", "--json")
    assert result.status == 0, result.err
    rows = _by_name(result.json())
    assert rows["device"] == {
        "name": "device",
        "variable": "STENCILCHAIN_DEVICE",
        "value": "cpu",
        "default": "cpu",
        "source": "default",
        "origin": "",
    }
    assert rows["cache_dir"]["value"] == str(session_cache_dir)
    assert rows["cache_dir"]["source"] == "environment"
    assert rows["cache_dir"]["origin"] == "STENCILCHAIN_CACHE_DIR"
    assert rows["config_file"]["variable"] == "STENCILCHAIN_CONFIG"
    assert rows["config_file"]["value"] is None
    assert {"auto_optimize", "external_workspace"} <= set(rows)


def test_config_file_is_layered_under_the_environment(
    cli: CLI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "sc.toml"
    config.write_text(
        'build_type = "minsizerel"\ndata_layout = "unit_stride"\nmetrics = true\n'
        'cache_dir = "relative/cache"\n'
    )
    monkeypatch.setenv("STENCILCHAIN_CONFIG", str(config))
    monkeypatch.setenv("STENCILCHAIN_BUILD_TYPE", "debug")
    monkeypatch.delenv("STENCILCHAIN_CACHE_DIR")
    rows = _by_name(cli("config", "--json").json())
    assert (rows["build_type"]["value"], rows["build_type"]["source"]) == ("debug", "environment")
    assert rows["data_layout"]["value"] == "unit_stride"
    assert (rows["data_layout"]["source"], rows["data_layout"]["origin"]) == (
        "config file",
        str(config),
    )
    assert rows["metrics"]["value"] is True
    assert rows["cache_dir"]["value"] == str(tmp_path / "relative" / "cache")  # next to the file
    assert rows["config_file"]["source"] == "environment"
    assert rows["config_file"]["value"] == str(config)

    text = cli("config").out
    assert f"config file ({config})" in text
    assert "environment (STENCILCHAIN_BUILD_TYPE)" in text

    # a library user's container sees the same
    from stencilchain.containers import build_container

    cfg = build_container().gtfn.toolchain_config()
    assert (cfg.build_type.value, cfg.data_layout.value) == ("debug", "unit_stride")


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        (
            "STENCILCHAIN_DEVICE",
            "tpu",
            "stencilchain: error: STENCILCHAIN_DEVICE='tpu' is not valid; accepted: cpu, gpu",
        ),
        (
            "STENCILCHAIN_BUILDTYPE",
            "debug",
            "stencilchain: error: unknown variable STENCILCHAIN_BUILDTYPE='debug': "
            "did you mean STENCILCHAIN_BUILD_TYPE?",
        ),
        ("STENCILCHAIN_CONFIG", "/nonexistent/sc.toml", "cannot read the file"),
    ],
)
@pytest.mark.parametrize("command", [["config"], ["backends", "--json"], ["demo"]])
def test_bad_environment_is_one_line(
    cli: CLI,
    monkeypatch: pytest.MonkeyPatch,
    command: list[str],
    variable: str,
    value: str,
    message: str,
) -> None:
    monkeypatch.setenv(variable, value)
    result = cli(*command)
    assert result.status == 2
    assert message in result.error_line
    assert result.out == ""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('build_typ = "debug"\n', "sc.toml: unknown setting 'build_typ'; did you mean build_type?"),
        ('build_type = "fast"\n', "sc.toml: build_type='fast' is not valid; accepted: debug,"),
        ("metrics = 3\n", "sc.toml: metrics=3 is not valid; accepted: 1, true"),
        ("build_type = \n", "not valid TOML"),
    ],
)
def test_bad_config_file_is_one_line(
    cli: CLI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str
) -> None:
    (tmp_path / "sc.toml").write_text(text)
    monkeypatch.setenv("STENCILCHAIN_CONFIG", str(tmp_path / "sc.toml"))
    result = cli("config")
    assert result.status == 2
    assert message in result.error_line


def test_backends_lists_every_prebuilt_toolchain(cli: CLI, session_cache_dir: Path) -> None:
    result = cli("backends", "--json")
    assert result.status == 0, result.err
    rows = {row["name"]: row for row in result.json()}
    assert list(rows) == list(backends.NAMES)
    cpu = rows["run_gtfn_cpu"]
    assert cpu["available"] and cpu["runs_here"]
    assert (cpu["family"], cpu["device"]) == ("gtfn", "cpu")
    assert cpu["config"]["cache_dir"] == str(session_cache_dir)
    assert cpu["config"]["build_type"] == "release"
    assert cpu["cache"] == str(session_cache_dir)
    assert "enable_transforms=True" in cpu["steps"]["translation"]
    assert "enable_transforms=False" in rows["run_gtfn_cpu_no_transforms"]["steps"]["translation"]
    assert rows["run_gtfn_gpu"]["device"] == "gpu"
    assert rows["run_embedded"]["family"] == "embedded"
    text = cli("backends").out
    assert all(name in text for name in backends.NAMES)


def test_backend_missing_its_extra_is_unavailable(
    cli: CLI, stencils: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def build(name: str) -> object:
        raise ImportError("run_fake_cpu needs the 'fake' extra: pip install 'stencilchain[fake]'")

    monkeypatch.setattr(backends, "NAMES", (*backends.NAMES, "run_fake_cpu"))
    monkeypatch.setitem(backends._BUILDERS, "run_fake_cpu", build)
    rows = {row["name"]: row for row in cli("backends", "--json").json()}
    fake = rows["run_fake_cpu"]
    assert not fake["available"]
    assert "pip install 'stencilchain[fake]'" in fake["reason"]
    assert fake["family"] == "fake"
    assert "unavailable: run_fake_cpu needs the 'fake' extra" in cli("backends").out

    result = cli("compile", f"{stencils}:smooth", "--backend", "run_fake_cpu")
    assert result.status == 1
    assert "backend run_fake_cpu is not available: run_fake_cpu needs" in result.error_line
