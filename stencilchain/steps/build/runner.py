"""The processes of one build and its log.

Every command a build runs goes through its BuildRunner: one at a time or side by side,
with the build's explicit environment, and appended with its output to `build.log` in the
build folder, which stays on disk. A failed command raises CompilationError with the
compiler's own message and the log's path.

Compilers die with the process that started them. Each command runs in a process group of
its own under a small `sh` guard: it holds the read end of a pipe whose write end only this
process holds, and when that pipe closes (this process exited or was killed, even by
SIGKILL) it sends SIGTERM to its group: the command, the compilers it started, and Ninja,
which passes the signal on to the compilers it keeps in groups of their own.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from stencilchain.errors import CompilationError

LOG_NAME = "build.log"

# $@: the command. Standard input: the guard pipe. The watcher waits for the pipe to close
# (read returns at end of file) and then terminates the group; the command runs without it.
GUARD = (
    "exec 4<&0 </dev/null\n"
    "(read -r _ <&4; kill -TERM 0) &\n"
    "watcher=$!\n"
    '"$@" 4<&- &\n'
    "command=$!\n"
    "exec 4<&-\n"
    'wait "$command"\n'
    "status=$?\n"
    'kill "$watcher" 2>/dev/null\n'
    'exit "$status"\n'
)
GUARD_SECONDS = 5.0  # how long a stopped job's group has to end on SIGTERM before SIGKILL


@dataclasses.dataclass(frozen=True)
class Job:
    """A started command: its process and the file its output goes to until it is logged."""

    process: subprocess.Popen[bytes]
    output: IO[bytes]
    command: tuple[str, ...]
    what: str


class BuildRunner:
    """Runs the commands of the build in `folder` with the environment `env` (nothing
    else: no variable of this process is changed or read at run time).

    Use it as a context manager: leaving it stops any job still running (after a failure
    elsewhere) and removes the jobs' temporary output files.
    """

    def __init__(self, folder: Path, env: Mapping[str, str]) -> None:
        self.log_path = folder / LOG_NAME
        self._env = dict(env)
        self._running: list[Job] = []
        self._count = 0
        self._guard_read, self._guard_write = os.pipe()  # closed on exec: never inherited

    @property
    def env(self) -> Mapping[str, str]:
        """The environment every command of the build runs with."""
        return self._env

    def __enter__(self) -> BuildRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        for job in self._running:
            _stop(job.process)
            _close(job)
        self._running.clear()
        for fd in (self._guard_read, self._guard_write):
            os.close(fd)  # the guards of jobs still running (there are none) end theirs

    def note(self, text: str) -> None:
        """Append `text` (a line or more) to the log."""
        with self.log_path.open("a") as log:
            log.write(text if text.endswith("\n") else text + "\n")

    def start(self, command: Sequence[str], what: str, *, cwd: Path | None = None) -> Job:
        """Start `command` (`what` names it in errors) beside the jobs already running."""
        self._count += 1
        output = self.log_path.with_name(f"{LOG_NAME}.{self._count}").open("w+b")
        try:
            process = subprocess.Popen(
                self._guarded(command, cwd),
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a group of its own: the guard ends all of it
                **self._options(cwd, stdin=self._guard_read),
            )
        except OSError as error:
            output.close()
            os.unlink(output.name)
            self.note(f"$ {' '.join(command)}\n[cannot run: {error}]")
            raise CompilationError(
                f"{what} failed: cannot run {command[0]}: {error}", "", self.log_path
            ) from error
        job = Job(process, output, tuple(command), what)
        self._running.append(job)
        return job

    def wait(self, job: Job, *, check: bool = True) -> bool:
        """Wait for `job` and log it; whether it succeeded (CompilationError if not and
        `check`)."""
        self._running.remove(job)
        status = job.process.wait()
        job.output.seek(0)
        text = job.output.read().decode(errors="replace")
        _close(job)
        tail = "" if status == 0 else f"[exit status {status}]\n"
        if text and not text.endswith("\n"):
            text += "\n"
        self.note(f"$ {' '.join(job.command)}\n{text}{tail}")
        if status != 0 and check:
            raise self.failure(f"{job.what} failed", text)
        return status == 0

    def wait_all(self) -> None:
        """Wait for every running job; CompilationError naming the first that failed."""
        failed: CompilationError | None = None
        while self._running:
            try:
                self.wait(self._running[0])
            except CompilationError as error:
                failed = failed or error
        if failed is not None:
            raise failed

    def run(
        self, command: Sequence[str], what: str, *, cwd: Path | None = None, check: bool = True
    ) -> bool:
        """Run `command` to its end (other jobs keep running); whether it succeeded."""
        return self.wait(self.start(command, what, cwd=cwd), check=check)

    def output(self, command: Sequence[str], what: str, *, cwd: Path | None = None) -> str | None:
        """The standard output of `command`, or None if it failed; the log gets the command,
        its status and its error output, not the output (data, not a message)."""
        try:
            done = subprocess.run(
                self._guarded(command, cwd),
                capture_output=True,
                check=False,
                start_new_session=True,
                **self._options(cwd, stdin=self._guard_read),
            )
        except OSError as error:
            self.note(f"$ {' '.join(command)}\n[{what}: cannot run: {error}]")
            return None
        tail = "" if done.returncode == 0 else f"[exit status {done.returncode}]\n"
        self.note(f"$ {' '.join(command)}\n{done.stderr.decode(errors='replace')}{tail}")
        return done.stdout.decode(errors="replace") if done.returncode == 0 else None

    def _options(self, cwd: Path | None, *, stdin: int) -> dict[str, Any]:
        """What every process of the build gets: the guard pipe as input, the build's
        environment, the folder."""
        return {"stdin": stdin, "env": self._env, "cwd": cwd}

    def _guarded(self, command: Sequence[str], cwd: Path | None) -> list[str]:
        """`command` under the guard (see GUARD). A program that cannot run is the OSError
        that starting it would have raised, before any process starts."""
        program = command[0]
        if os.sep in program:
            path = program if os.path.isabs(program) else os.path.join(cwd or ".", program)
            if not os.path.isfile(path):
                raise FileNotFoundError(2, "No such file or directory", program)
            if not os.access(path, os.X_OK):
                raise PermissionError(13, "Permission denied", program)
        elif shutil.which(program, path=self._env.get("PATH", os.defpath)) is None:
            raise FileNotFoundError(2, "No such file or directory", program)
        return ["/bin/sh", "-c", GUARD, "sh", *command]

    def failure(self, summary: str, output: str) -> CompilationError:
        """The CompilationError of this build: `summary`, the compiler's message found in
        `output`, and the log."""
        return CompilationError(summary, compiler_message(output), self.log_path)

    def logged_error(self, summary: str, details: str = "") -> CompilationError:
        """The CompilationError of a failure that ran no command (e.g. a code generator's
        exception), noted in the log first."""
        self.note(f"{summary}: {details}" if details else summary)
        return CompilationError(summary, details, self.log_path)


class JobQueue:
    """Commands that `runner` runs at most `jobs` at once, each started as soon as an
    earlier one has ended: `submit` and `poll` never wait, so the caller's own work
    (code generation in Python) goes on beside the compilers; `drain` waits for them all.
    A failed command is logged and its `tag` added to `failed`, nothing is raised."""

    def __init__(self, runner: BuildRunner, jobs: int) -> None:
        self._runner = runner
        self._jobs = max(1, jobs)
        self._pending: collections.deque[tuple[Sequence[str], str, str]] = collections.deque()
        self._running: dict[Job, str] = {}
        self.failed: set[str] = set()

    def submit(self, command: Sequence[str], what: str, tag: str) -> None:
        """Run `command` (`what` names it in the log) once a slot is free."""
        self._pending.append((command, what, tag))
        self.poll()

    def poll(self) -> None:
        """Log the commands that have ended and start waiting ones in the free slots."""
        for job in [job for job in self._running if job.process.poll() is not None]:
            self._finish(job)
        while self._pending and len(self._running) < self._jobs:
            command, what, tag = self._pending.popleft()
            self._running[self._runner.start(command, what)] = tag

    def drain(self) -> None:
        """Wait until every submitted command has run."""
        self.poll()
        while self._running:
            self._finish(next(iter(self._running)))
            self.poll()

    def _finish(self, job: Job) -> None:
        tag = self._running.pop(job)
        if not self._runner.wait(job, check=False):
            self.failed.add(tag)


def compiler_message(output: str, max_lines: int = 60) -> str:
    """The part of a failed command's output that says what went wrong: from its first
    line mentioning an error, else its last lines."""
    lines = output.rstrip().splitlines()
    for index, line in enumerate(lines):
        if re.search(r"\berror\b", line, re.IGNORECASE):
            return "\n".join(lines[index : index + max_lines])
    return "\n".join(lines[-max_lines:])


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End a job still running and everything it started: SIGTERM to its group (Ninja
    passes it on), then SIGKILL if it is not gone in GUARD_SECONDS."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=GUARD_SECONDS)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def _close(job: Job) -> None:
    job.output.close()
    os.unlink(job.output.name)
