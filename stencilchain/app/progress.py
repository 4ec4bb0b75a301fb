"""Progress on a terminal: a spinner (and a bar, for several steps) with the current step,
drawn by `rich` on stderr once the work has taken about a second.

Nothing is shown, and `rich` is not even imported, unless stderr is a terminal and the
command prints for a person (not `--quiet`, not `--json`): pipes, logs, scripts and tests
see exactly the results. The display is transient: erased when the work is done, so the
results print on a clean screen. See docs/adr/0018-progress-and-logging.md.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from collections.abc import Callable

    from stencilchain.steps.workflow import StageReport

DELAY = 1.0  # seconds of work before the display appears: quick commands show nothing


class Progress:
    """`⠋ compiling smooth with run_gtfn_cpu ━━━━━━━ 3/10 0:00:04` on stderr, on a terminal.

    `total`: the number of steps (`step` advances one), or None for a spinner alone;
    `label`: the first step's text. `status` changes the current step's text without advancing. `echo` prints a line on
    stdout above the display (e.g. a result as it completes).
    """

    def __init__(
        self,
        total: int | None = None,
        *,
        label: str = "",
        enabled: bool = True,
        stream: TextIO | None = None,
        delay: float | None = None,
    ) -> None:
        self.total = total
        self.stream = sys.stderr if stream is None else stream
        self.count = 0
        self.active = enabled and isatty(self.stream) and os.environ.get("TERM") != "dumb"
        self._lock = threading.RLock()
        self._display: Any = None  # a rich.progress.Progress, made only when active
        self._task: Any = None
        self._started = False
        self._closed = False
        self._timer: threading.Timer | None = None
        if self.active:
            self._display, self._task = _make_display(self.stream, total, label)
            wait = DELAY if delay is None else delay
            if wait <= 0:
                self._start()
            else:
                self._timer = threading.Timer(wait, self._start)
                self._timer.daemon = True
                self._timer.start()

    def status(self, label: str) -> None:
        """Show `label` as the current step."""
        if self.active:
            with self._lock:
                self._display.update(self._task, description=label)

    def step(self, label: str) -> None:
        """Count one step done and show `label`."""
        self.count += 1
        if self.active:
            with self._lock:
                self._display.update(self._task, description=label, completed=self.count)

    def stage(self, program: str, toolchain: str) -> Callable[[StageReport], None]:
        """A workflow hook showing the stage that runs next: binding after the translation,
        compiling after the bindings, loading after the compilation."""
        from stencilchain.steps.workflow import BINDINGS, COMPILATION, TRANSLATION

        following = {
            TRANSLATION: "generating bindings of",
            BINDINGS: "compiling",
            COMPILATION: "loading",
        }

        def hook(report: StageReport) -> None:
            what = following.get(report.stage)
            if what is not None:
                self.status(f"{what} {program} with {toolchain}")

        return hook

    def echo(self, line: str) -> None:
        """Print `line` on stdout, above the display if it is shown."""
        with self._lock:
            shown = self._started and not self._closed
            if shown:
                self._display.stop()  # transient: erased
            print(line, flush=True)
            if shown:
                self._display.start()

    def close(self) -> None:
        """Stop the display and erase it (or never show it)."""
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
            if self._started:
                self._display.stop()

    def _start(self) -> None:
        with self._lock:
            if not self._closed and not self._started:
                self._started = True
                self._display.start()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _make_display(stream: TextIO, total: int | None, label: str) -> tuple[Any, Any]:
    """A rich Progress on `stream` (not started) and its one task."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        ProgressColumn,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.progress import Progress as RichProgress

    columns: list[ProgressColumn] = [
        SpinnerColumn(),
        TextColumn("{task.description}", markup=False),
    ]
    if total is not None and total > 1:
        columns += [BarColumn(), MofNCompleteColumn()]
    columns.append(TimeElapsedColumn())
    display = RichProgress(
        *columns,
        console=Console(file=stream, force_terminal=True),
        transient=True,
        redirect_stdout=False,  # stdout keeps its results, byte for byte
        redirect_stderr=stream is sys.stderr,  # log lines and notes print above the display
    )
    task = display.add_task(label, total=total if total is not None and total > 1 else None)
    return display, task


def isatty(stream: TextIO) -> bool:
    """Whether `stream` is a terminal (False for a closed or odd stream)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
