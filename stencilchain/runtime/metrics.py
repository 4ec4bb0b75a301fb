"""Metrics of compiled programs, keyed by toolchain name and program name.

Collected only for toolchains whose config enables them (`metrics`); readable as a table
and as JSON. A container provides the registry (a Singleton a host application may
override or share): `container.metrics()`, or `toolchain.metrics`.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from typing import Any


@dataclasses.dataclass
class ProgramMetrics:
    """Times in seconds; steps maps step name -> time of its last run."""

    steps: dict[str, float] = dataclasses.field(default_factory=dict)
    load_time: float = 0.0
    call_count: int = 0
    call_time: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class MetricsRegistry:
    """Metrics by (toolchain name, program name)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str], ProgramMetrics] = {}

    def entry(self, toolchain: str, program: str) -> ProgramMetrics:
        with self._lock:
            return self._entries.setdefault((toolchain, program), ProgramMetrics())

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def as_json(self) -> str:
        with self._lock:
            rows = [
                {"toolchain": t, "program": p, **m.as_dict()}
                for (t, p), m in sorted(self._entries.items())
            ]
        return json.dumps(rows, indent=2)

    def table(self) -> str:
        header = (
            "toolchain",
            "program",
            "translation",
            "bindings",
            "compilation",
            "load",
            "calls",
            "mean call",
        )
        rows: list[tuple[str, ...]] = [header]
        with self._lock:
            for (t, p), m in sorted(self._entries.items()):
                mean = m.call_time / m.call_count if m.call_count else 0.0
                rows.append(
                    (
                        t,
                        p,
                        *(_ms(m.steps.get(s)) for s in ("translation", "bindings", "compilation")),
                        _ms(m.load_time),
                        str(m.call_count),
                        f"{mean * 1e6:.1f} us",
                    )
                )
        widths = [max(len(r[k]) for r in rows) for k in range(len(header))]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.1f} ms"
