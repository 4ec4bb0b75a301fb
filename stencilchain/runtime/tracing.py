"""A timeline of what stencilchain did, in the Chrome trace-event format (Perfetto and
chrome://tracing open it): translations, builds (with the cache's answer and the folder),
loads and, while a trace is on, each program call (toolchain, program, duration).

One trace at a time per process (`start`/`stop`, or `with trace(path):`); while none is on
nothing is recorded and the call path of a bound program is the untraced one: bound
programs that compiled are re-routed when a trace starts and when it stops (ADR 0026).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from stencilchain.steps.stages import CompiledArtifact
from stencilchain.steps.workflow import COMPILATION, INDEX, TRANSLATION, StageReport

# a trace keeps at most this many events: a long run with many calls stays a readable file
MAX_EVENTS = 1_000_000


class Rerouted(Protocol):
    """What re-routes its call path when tracing starts or stops (a bound program)."""

    def _reroute(self) -> None: ...


@dataclasses.dataclass(eq=False)
class Trace:
    """The events of one trace, written to `path` by `save()` (None: kept in memory).

    `pid` names the process lane (default: the process id; a distributed run uses the rank)
    and `process_name` its label. Times are microseconds since the epoch, so traces of the
    ranks of one job line up."""

    path: Path | None = None
    pid: int = dataclasses.field(default_factory=os.getpid)
    process_name: str | None = None
    events: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    dropped: int = 0
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False)
    _offset: float = dataclasses.field(default_factory=lambda: time.time() - time.perf_counter())

    def complete(
        self, name: str, cat: str, start: float, seconds: float, args: dict[str, Any]
    ) -> None:
        """Record an "X" event: `start` is a `time.perf_counter()` value, `seconds` long."""
        event = {
            "name": name,
            "cat": cat,
            "ph": "X",
            "ts": round((start + self._offset) * 1e6, 3),
            "dur": round(seconds * 1e6, 3),
            "pid": self.pid,
            "tid": threading.get_native_id(),
            "args": args,
        }
        with self._lock:
            if len(self.events) < MAX_EVENTS:
                self.events.append(event)
            else:
                self.dropped += 1

    @contextlib.contextmanager
    def span(self, name: str, cat: str, **args: Any) -> Iterator[dict[str, Any]]:
        """Record the time of the `with` block as one event; the block may add to its args."""
        start = time.perf_counter()
        try:
            yield args
        finally:
            self.complete(name, cat, start, time.perf_counter() - start, args)

    def document(self) -> dict[str, Any]:
        """The trace as a trace-event JSON object (events, lane names, what was dropped)."""
        with self._lock:
            events = list(self.events)
        meta: list[dict[str, Any]] = []
        if self.process_name is not None:
            meta.append(_metadata("process_name", self.pid, {"name": self.process_name}))
        for tid in sorted({e["tid"] for e in events}):
            label = "main" if tid == _MAIN_TID else f"thread {tid}"
            meta.append({**_metadata("thread_name", self.pid, {"name": label}), "tid": tid})
        doc: dict[str, Any] = {"traceEvents": meta + events, "displayTimeUnit": "ms"}
        if self.dropped:
            doc["otherData"] = {"dropped_events": self.dropped}
        return doc

    def save(self, path: Path | None = None) -> Path | None:
        """Write the trace to `path` (default: its own; None for neither), atomically."""
        target = path if path is not None else self.path
        if target is None:
            return None
        target = Path(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps(self.document()) + "\n")
        os.replace(temporary, target)
        return target


_MAIN_TID = threading.get_native_id()


def _metadata(name: str, pid: int, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "ph": "M", "pid": pid, "tid": 0, "args": args}


_state_lock = threading.Lock()
_active: Trace | None = None
_routed: weakref.WeakSet[Any] = weakref.WeakSet()


def active() -> Trace | None:
    """The trace being recorded, or None."""
    return _active


def start(trace: Trace) -> Trace:
    """Record into `trace` from now on (replacing the trace that was on, if any)."""
    global _active
    with _state_lock:
        _active = trace
    _reroute_all()
    return trace


def stop() -> Trace | None:
    """Stop recording; returns the trace that was on (not saved: see `Trace.save`)."""
    global _active
    with _state_lock:
        trace, _active = _active, None
    _reroute_all()
    return trace


@contextlib.contextmanager
def trace(
    path: str | os.PathLike[str] | None = None, *, pid: int | None = None, name: str | None = None
) -> Iterator[Trace]:
    """Record a trace of the `with` block, written to `path` (if given) when it ends."""
    recording = Trace(
        Path(path) if path is not None else None,
        os.getpid() if pid is None else pid,
        name,
    )
    previous = _active
    start(recording)
    try:
        yield recording
    finally:
        if previous is None:
            stop()
        else:
            start(previous)
        recording.save()


def register(bound: Rerouted) -> None:
    """Re-route `bound` whenever tracing starts or stops (kept by a weak reference)."""
    with _state_lock:
        _routed.add(bound)


def _reroute_all() -> None:
    with _state_lock:
        bound = list(_routed)
    for each in bound:
        each._reroute()


def traced_call(
    path: Callable[..., Any], recording: Trace, program: str, toolchain: str
) -> Callable[..., Any]:
    """`path` (a bound program's call path) recording each call as a "call" event."""
    args = {"program": program, "toolchain": toolchain}
    clock = time.perf_counter

    def call(*a: Any, **k: Any) -> Any:
        begin = clock()
        try:
            return path(*a, **k)
        finally:
            recording.complete(program, "call", begin, clock() - begin, args)

    return call


def record_stage(
    recording: Trace, report: StageReport, program: str, toolchain: str, family: str
) -> None:
    """Record one finished stage of a compilation (it ended now, `report.seconds` long):
    the cache's answer (hit, miss, off) and, for a build, its folder."""
    args: dict[str, Any] = {"program": program, "toolchain": toolchain, "family": family}
    if report.stage in (TRANSLATION, COMPILATION, INDEX):
        args["cache"] = {True: "hit", False: "miss", None: "off"}[report.cached]
    if isinstance(report.output, CompiledArtifact):
        args["folder"] = str(report.output.build_dir)
    end = time.perf_counter()
    recording.complete(
        f"{report.stage} {program}", report.stage, end - report.seconds, report.seconds, args
    )


def record_load(
    recording: Trace, program: str, toolchain: str, module: Path, start: float, seconds: float
) -> None:
    """Record the import of a compiled program's module."""
    args = {"program": program, "toolchain": toolchain, "module": str(module)}
    recording.complete(f"load {program}", "load", start, seconds, args)
