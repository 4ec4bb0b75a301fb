"""`stencilchain cache info | list | clear | prune | explain | verify`: the persistent caches."""

from __future__ import annotations

import argparse
import time
from typing import Any

from stencilchain.app import cache_inventory as inventory
from stencilchain.app.cache_explain import explain_build, explain_translation
from stencilchain.app.cache_probe import probe
from stencilchain.app.errors import CLIError
from stencilchain.app.loading import load_program
from stencilchain.app.output import note, print_json, table
from stencilchain.app.toolchains import DEFAULT_BACKEND, require_toolchain
from stencilchain.app.units import format_age, format_size, parse_age, parse_size
from stencilchain.containers import build_container
from stencilchain.steps.build.cached_build import UNVERIFIED, verify_build
from stencilchain.steps.caches import entries as kinds


def add_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    cache = sub.add_parser(
        "cache",
        help="inspect, explain, prune or clear the persistent caches",
        description="The persistent caches of the configured cache folder "
        "(STENCILCHAIN_CACHE_DIR): translated programs and build folders.",
    )
    actions = cache.add_subparsers(dest="action", required=True, metavar="ACTION")
    info = actions.add_parser("info", parents=[common], help="size and entries per family and kind")
    info.add_argument("--json", action="store_true")
    info.set_defaults(run=run_info)
    listing = actions.add_parser("list", parents=[common], help="every entry, oldest first")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(run=run_list)
    clear = actions.add_parser(
        "clear", parents=[common], help="remove every entry (folders being built are skipped)"
    )
    clear.add_argument("--json", action="store_true")
    clear.set_defaults(run=run_clear)
    prune = actions.add_parser(
        "prune",
        parents=[common],
        help="remove the least recently used entries until under a size, or those older than "
        "an age",
        description="Remove leftovers of crashed builds, then entries not used for --older-than, "
        "then the least recently used entries until the caches fit in --max-size. Without "
        "either, the limit is STENCILCHAIN_CACHE_MAX_SIZE, the one kept after builds. A build "
        "folder that another process is building is skipped.",
    )
    prune.add_argument(
        "--max-size",
        type=parse_size,
        metavar="SIZE",
        help="e.g. 500M, 2G (default: STENCILCHAIN_CACHE_MAX_SIZE)",
    )
    prune.add_argument("--older-than", type=parse_age, metavar="AGE", help="e.g. 7d, 12h")
    prune.add_argument("--dry-run", action="store_true", help="list what would be removed")
    prune.add_argument("--json", action="store_true")
    prune.set_defaults(run=run_prune)
    explain = actions.add_parser(
        "explain",
        parents=[common],
        help="would a program hit the caches, and if not, what differs",
        description="Say whether compiling FILE.py:PROGRAM with a toolchain would load from the "
        "translation cache and the build cache, and on a miss which component of the key "
        "(program fingerprint, step settings, build context, version) differs from the nearest "
        "cached entry of the same program name. Builds nothing.",
    )
    explain.add_argument("target", metavar="FILE.py:PROGRAM")
    explain.add_argument("--backend", default=DEFAULT_BACKEND, help="a pre-built toolchain")
    explain.add_argument("--json", action="store_true")
    explain.set_defaults(run=run_explain)
    verify = actions.add_parser(
        "verify",
        parents=[common],
        help="check every build's files against the sizes and hashes recorded when it was built",
        description="Read every complete build folder and check each file its marker records: "
        "present, of the size it was built with, and of the same content (sha256). Reports the "
        "damaged ones (exit status 1) and, with --fix, removes them, so that the next use "
        "builds them again. Builds recorded by an older version without hashes are reported "
        "as unverified.",
    )
    verify.add_argument("--fix", action="store_true", help="remove the damaged builds")
    verify.add_argument("--json", action="store_true")
    verify.set_defaults(run=run_verify)


def _caches() -> inventory.Caches:
    return inventory.locate(build_container())


def run_info(args: argparse.Namespace) -> int:
    caches = _caches()
    entries = inventory.scan(caches)
    groups = inventory.summarize(entries)
    total = sum(e.size for e in entries)
    if args.json:
        print_json(
            {
                "root": str(caches.location.root),
                "translations": str(caches.translations.root),
                "builds": str(caches.builds.root),
                "entries": len(entries),
                "bytes": total,
                "groups": groups,
                "locks": caches.builds.lock_count(),
            }
        )
        return 0
    if args.quiet:
        return 0
    print(f"cache: {caches.location.root}")
    print(f"total: {format_size(total)} in {len(entries)} entries")
    if groups:
        rows = [
            (str(g["family"]), str(g["kind"]), str(g["entries"]), format_size(int(str(g["bytes"]))))
            for g in groups
        ]
        print(table(("family", "kind", "entries", "size"), rows))
    return 0


def run_list(args: argparse.Namespace) -> int:
    entries = inventory.scan(_caches())
    if args.json:
        print_json([inventory.as_dict(e) for e in entries])
        return 0
    if not args.quiet:
        now = time.time()
        rows = [
            (
                e.kind,
                e.family or "?",
                e.device or "-",
                e.build_type or "-",
                e.name,
                format_size(e.size),
                format_age(now - e.completed),
                format_age(now - e.last_used),
                e.key[:24],
            )
            for e in entries
        ]
        header = ("kind", "family", "device", "build_type", "name", "size", "age", "used", "key")
        print(table(header, rows))
        for e in entries:
            if e.problem:
                note(f"{e.kind} {e.path}: {e.problem}", quiet=args.quiet)
    return 0


def run_clear(args: argparse.Namespace) -> int:
    caches = _caches()
    result = inventory.remove(caches, inventory.scan(caches))
    caches.location.load_index().clear()  # entries naming builds that are gone
    remaining = sum(e.size for e in inventory.scan(caches))
    return _report(args, caches, "removed", result, remaining)


def run_prune(args: argparse.Namespace) -> int:
    container = build_container()
    max_size = args.max_size
    if max_size is None and args.older_than is None:
        max_size = container.gtfn.toolchain_config().cache_max_size
        if max_size is None:
            raise CLIError(
                "cache prune needs --max-size SIZE, --older-than AGE, or both, or a "
                "configured limit (STENCILCHAIN_CACHE_MAX_SIZE)"
            )
    caches = inventory.locate(container)
    pruned = inventory.prune(
        caches, max_size=max_size, older_than=args.older_than, dry_run=args.dry_run
    )
    result = pruned.removal
    if args.dry_run and not args.json and not args.quiet and result.removed:
        rows = [(e.kind, e.name, format_size(e.size), str(e.path)) for e in result.removed]
        print(table(("kind", "name", "size", "path"), rows))
    verb = "would remove" if args.dry_run else "removed"
    return _report(args, caches, verb, result, pruned.remaining)


def _report(
    args: argparse.Namespace,
    caches: inventory.Caches,
    verb: str,
    result: inventory.Removal,
    remaining: int,
) -> int:
    if args.json:
        print_json(
            {
                "dry_run": bool(getattr(args, "dry_run", False)),
                "removed": [inventory.as_dict(e) for e in result.removed],
                "busy": [inventory.as_dict(e) for e in result.busy],
                "freed_bytes": result.freed,
                "remaining_bytes": remaining,
            }
        )
    elif not args.quiet:
        print(
            f"{verb} {len(result.removed)} entries ({format_size(result.freed)}); "
            f"{format_size(remaining)} left in {caches.location.root}"
        )
    for e in result.busy:
        note(f"skipped {e.path}: another process is building it", quiet=args.quiet)
    return 0


def run_explain(args: argparse.Namespace) -> int:
    program = load_program(args.target)
    toolchain = require_toolchain(args.backend)
    caches = _caches()
    found = probe(toolchain, program.ir)
    entries = inventory.scan(caches)
    answers = [
        explain_translation(found, entries, toolchain.family),
        explain_build(found, entries, toolchain.family),
    ]
    would_hit = all(a.hit or not a.enabled for a in answers) and answers[1].enabled
    if args.json:
        result: dict[str, Any] = {
            "program": program.name,
            "fingerprint": program.ir.fingerprint(),
            "backend": toolchain.name,
            "would_hit": would_hit,
            "translation": answers[0].as_dict(),
            "build": answers[1].as_dict(),
        }
        print_json(result)
        return 0
    if args.quiet:
        return 0
    print(f"{program.name} ({program.ir.fingerprint()[:12]}) with {toolchain.name}:")
    for answer in answers:
        if not answer.enabled:
            state = "not used" if answer.cache == "translation" else "unknown"
        else:
            state = "hit" if answer.hit else "miss"
        print(f"  {answer.cache} cache: {state}" + (f" (key {answer.key})" if answer.key else ""))
        if answer.nearest is not None:
            age = format_age(time.time() - answer.nearest.completed)
            print(f"    nearest entry of {answer.nearest.name}: {answer.nearest.path} ({age} old)")
            for component, status in answer.components.items():
                print(f"      {component}: {status}")
        for detail in answer.details:
            print(f"    {detail}")
    print("  -> " + ("loads from the cache, no compilation" if would_hit else "would compile"))
    return 0


def run_verify(args: argparse.Namespace) -> int:
    caches = _caches()
    damaged, unverified, checked = [], [], 0
    for entry in caches.builds.entries():
        if entry.kind == kinds.DAMAGED:
            damaged.append((entry, entry.problem))
        elif entry.kind == kinds.BUILD:
            checked += 1
            problem = verify_build(entry.path, entry.metadata)
            if problem == UNVERIFIED:
                unverified.append(entry)
            elif problem:
                damaged.append((entry, problem))
    removal = inventory.remove(caches, [e for e, _ in damaged]) if args.fix else None
    removed = {e.path for e in removal.removed} if removal is not None else set()
    if args.json:
        print_json(
            {
                "checked": checked,
                "damaged": [
                    {**inventory.as_dict(e), "problem": p, "removed": e.path in removed}
                    for e, p in damaged
                ],
                "unverified": [str(e.path) for e in unverified],
            }
        )
    elif not args.quiet:
        for entry, problem in damaged:
            fixed = " (removed)" if entry.path in removed else ""
            print(f"damaged {entry.name} {entry.path}: {problem}{fixed}")
        for entry in unverified:
            print(f"unverified {entry.name} {entry.path}: {UNVERIFIED}")
        verb = "removed" if args.fix else "found"
        print(f"{checked} builds checked in {caches.builds.root}: {verb} {len(damaged)} damaged")
    if removal is not None:
        for e in removal.busy:
            note(f"skipped {e.path}: another process is building it", quiet=args.quiet)
    return 1 if damaged and not args.fix else 0
