"""`stencilchain cache verify [--fix]` (issue 24): every complete build checked against the
sizes and sha256 hashes its marker recorded when it was built; a file damaged at the same
size (which a first call does not notice before loading it) is reported, and `--fix`
removes it so that the next use builds it again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import stencilchain as sc
from stencilchain.steps.caches.build_cache import MARKER_NAME

from .cli_support import CLI


def _built(cli: CLI, stencils: Path, cache_dir: Path) -> Path:
    """The build folder of smooth, compiled now into the test's cache."""
    assert cli("compile", f"{stencils}:smooth").status == 0
    [folder] = [p for p in (cache_dir / "builds").glob("smooth_*") if (p / MARKER_NAME).is_file()]
    return folder


def _replace(path: Path, data: bytes) -> None:
    """Give `path` the content `data` as a new file: this process has the module loaded
    (mapped), which writing into it in place would change under it."""
    temporary = path.with_name(path.name + ".new")
    temporary.write_bytes(data)
    temporary.chmod(0o700)
    temporary.replace(path)


def _metadata(folder: Path) -> dict[str, str]:
    metadata: dict[str, str] = json.loads((folder / MARKER_NAME).read_text())["metadata"]
    return metadata


def test_verify_finds_a_module_damaged_at_the_same_size_and_fix_rebuilds(
    cli: CLI, stencils: Path, cache_dir: Path
) -> None:
    folder = _built(cli, stencils, cache_dir)
    metadata = _metadata(folder)
    assert set(json.loads(metadata["file_hashes"])) == set(json.loads(metadata["file_sizes"]))
    clean = cli("cache", "verify", "--json")
    assert clean.status == 0, clean.err
    assert clean.json()["damaged"] == [] and clean.json()["checked"] >= 1

    module = folder / metadata["module"]
    data = bytearray(module.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one byte: the same size, another content
    _replace(module, bytes(data))
    found = cli("cache", "verify")
    assert found.status == 1
    assert f"damaged smooth {folder}" in found.out and "sha256" in found.out
    assert folder.is_dir()  # reported, not removed

    fixed = cli("cache", "verify", "--fix", "--json")
    assert fixed.status == 0
    [entry] = fixed.json()["damaged"]
    assert entry["removed"] is True and entry["path"] == str(folder)
    assert not (folder / MARKER_NAME).exists()
    # the next process (this one holds the program in its pool) builds it again
    env = {**os.environ, "PYTHONPATH": str(Path(sc.__file__).parents[1])}
    done = subprocess.run(
        [sys.executable, "-m", "stencilchain", "compile", f"{stencils}:smooth", "--json"],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["build_cache"] == "miss"
    assert (folder / MARKER_NAME).is_file()
    assert cli("cache", "verify").status == 0


def test_verify_reports_sizes_missing_files_and_old_markers(
    cli: CLI, stencils: Path, cache_dir: Path
) -> None:
    folder = _built(cli, stencils, cache_dir)
    marker = folder / MARKER_NAME
    content = json.loads(marker.read_text())
    module = folder / content["metadata"]["module"]

    _replace(module, module.read_bytes() + b"\0")
    assert "bytes, built with" in cli("cache", "verify").out
    module.unlink()
    assert f"lacks its {content['metadata']['module']}" in cli("cache", "verify").out

    del content["metadata"]["file_hashes"]  # sizes but no hashes: checked as far as it goes
    marker.write_text(json.dumps(content))
    result = cli("cache", "verify", "--json")
    assert result.json()["damaged"][0]["problem"].startswith("lacks its")
    del content["metadata"]["file_sizes"]  # written before sizes were recorded
    marker.write_text(json.dumps(content))
    result = cli("cache", "verify", "--json")
    assert "records no file sizes" in result.json()["damaged"][0]["problem"]
