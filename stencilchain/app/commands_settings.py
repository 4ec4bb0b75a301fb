"""`stencilchain backends` and `stencilchain config`: what the environment configures."""

from __future__ import annotations

import argparse
import dataclasses
import enum
from pathlib import Path
from typing import Any

from stencilchain.app.output import print_json, table
from stencilchain.app.toolchains import backend_names, load_backend, run_problem
from stencilchain.containers import ToolchainConfig, build_container
from stencilchain.containers.environment import DEFAULT, resolve_settings
from stencilchain.runtime.toolchain import Toolchain
from stencilchain.steps.caches.cache_root import cache_root
from stencilchain.steps.settings import CacheLifetime


def add_parsers(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    backends = sub.add_parser(
        "backends",
        parents=[common],
        help="the pre-built toolchains and their resolved configuration",
    )
    backends.add_argument("--json", action="store_true", help="print them as JSON")
    backends.set_defaults(run=run_backends)
    config = sub.add_parser(
        "config",
        parents=[common],
        help="every setting, its value and where it came from",
        description="Every setting with its value and its source: the default, an environment "
        "variable, or the config file named by STENCILCHAIN_CONFIG.",
    )
    config.add_argument("--json", action="store_true", help="print them as JSON")
    config.set_defaults(run=run_config)


def text_of(value: object) -> str:
    """A setting's value as the environment would spell it."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return str(value.value)
    return str(value)


def _json_of(value: object) -> object:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    return value


def run_backends(args: argparse.Namespace) -> int:
    build_container()  # a bad environment fails here, once, with its own message
    rows: list[dict[str, Any]] = []
    for name in backend_names():
        backend = load_backend(name)
        toolchain = backend.toolchain
        config: dict[str, Any] = {}
        steps: dict[str, str] = {}
        root = None
        if toolchain is not None:
            steps = _steps(toolchain)
            config = {
                f.name: _json_of(getattr(toolchain.config, f.name))
                for f in dataclasses.fields(toolchain.config)
            }
            cfg = toolchain.config
            if not isinstance(cfg, ToolchainConfig):  # a toolchain made outside the containers
                root = None
            elif cfg.cache_lifetime is CacheLifetime.PERSISTENT:
                root = str(cache_root(cfg.cache_lifetime, cfg.cache_dir))
            else:
                root = "a temporary folder per process"
        rows.append(
            {
                "name": name,
                "family": backend.family,
                "available": not backend.unavailable,
                "reason": backend.unavailable,
                "runs_here": not run_problem(backend),
                "note": "" if backend.unavailable else run_problem(backend),
                "device": config.get("device", "cpu" if backend.value is not None else None),
                "cache": root,
                "config": config,
                "steps": steps,
            }
        )
    if args.json:
        print_json(rows)
    elif not args.quiet:
        lines = []
        for r in rows:
            if not r["available"]:
                state = f"unavailable: {r['reason']}"
            elif r["note"]:
                state = f"compiles; cannot run here: {r['note']}"
            else:
                state = "available"
            lines.append((r["name"], r["family"], str(r["device"] or "-"), state))
        print(table(("backend", "family", "device", "status"), lines))
        shown = next((r for r in rows if r["config"]), None)
        if shown is not None:
            print()
            print("configuration (every toolchain shares it; the device is each one's own):")
            for key, value in shown["config"].items():
                if key != "device":
                    print(f"  {key}: {text_of(value)}")
            print(f"  cache: {shown['cache']}")
    return 0


def _steps(toolchain: Toolchain) -> dict[str, str]:
    """The settings of each bare step (e.g. the translation's transforms)."""
    workflow = toolchain.workflow
    return {
        "translation": repr(workflow.translation),
        "bindings": repr(workflow.bindings),
        "compilation": repr(workflow.compilation),
    }


def run_config(args: argparse.Namespace) -> int:
    build_container()  # what a library user gets; raises on a bad value
    resolved = resolve_settings()
    rows: list[dict[str, Any]] = [
        {
            "name": r.setting.name,
            "variable": r.setting.env,
            "value": _json_of(r.value),
            "default": _json_of(r.setting.default),
            "source": r.source,
            "origin": r.origin,
        }
        for r in resolved
    ]
    if args.json:
        print_json({"settings": rows})
    elif not args.quiet:

        def source(row: dict[str, Any]) -> str:
            return (
                row["source"] if row["source"] == DEFAULT else f"{row['source']} ({row['origin']})"
            )

        print(
            table(
                ("setting", "variable", "value", "source"),
                [(r["name"], r["variable"], text_of(r["value"]), source(r)) for r in rows],
            )
        )
    return 0
