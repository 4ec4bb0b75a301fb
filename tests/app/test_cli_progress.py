"""Progress on a terminal (issue 13): `compile`, `run` and `demo` show the current step on a
pseudo-terminal's stderr, `demo` prints each row as it completes; `--json` and `--quiet`
print exactly what they print into a pipe; `import stencilchain` and runs into pipes
never import `rich`.

The commands run in this process with stdout and/or stderr on a pseudo-terminal, and the
display's one-second delay set to 0 (so that a quick cached compile shows it too).
"""

from __future__ import annotations

import contextlib
import json
import os
import pty
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stencilchain.app import progress
from stencilchain.app.cli import main


@contextlib.contextmanager
def _terminal() -> Iterator[tuple[object, Callable[[], str]]]:
    """A pseudo-terminal: (a text file on its slave side, what was written to it so far).

    A thread drains the master side, so that a long display never blocks on a full buffer."""
    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # the slave side is closed
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    file = os.fdopen(slave, "w", encoding="utf-8", buffering=1)

    def written() -> str:
        file.flush()
        return b"".join(chunks).decode("utf-8", "replace")

    try:
        yield file, written
    finally:
        file.close()
        reader.join(timeout=10)
        os.close(master)


def _settled(written: Callable[[], str]) -> str:
    """What the terminal received, once the reader thread caught up."""
    last = None
    for _ in range(50):
        text = written()
        if text == last:
            return text
        last = text
        time.sleep(0.05)
    return written()


@pytest.fixture()
def no_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "DELAY", 0.0)


def _plain(text: str) -> str:
    return text.replace("\r\n", "\n")


@pytest.mark.usefixtures("no_delay")
def test_compile_shows_its_step_on_a_terminal(
    stencils: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with monkeypatch.context() as patch, _terminal() as (tty, written):
        patch.setattr(sys, "stderr", tty)
        capsys.readouterr()
        assert main(["compile", f"{stencils}:smooth"]) == 0
        shown = _settled(written)
    assert "smooth with run_gtfn_cpu" in shown  # the spinner's step (erased at the end)
    assert "\x1b[" in shown  # drawn in place
    out = capsys.readouterr().out
    assert out.startswith("compiled smooth with run_gtfn_cpu in ")  # stdout as in a pipe
    assert "\x1b" not in out


@pytest.mark.usefixtures("no_delay")
def test_run_shows_its_step_on_a_terminal(
    stencils: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with monkeypatch.context() as patch, _terminal() as (tty, written):
        patch.setattr(sys, "stderr", tty)
        capsys.readouterr()
        assert main(["run", f"{stencils}:smooth", "--shape", "16x16", "--repeat", "2"]) == 0
        shown = _settled(written)
    assert "timing 2 runs of smooth with run_gtfn_cpu" in shown
    assert capsys.readouterr().out.startswith("program")


@pytest.mark.usefixtures("no_delay")
@pytest.mark.parametrize(
    "command",
    [
        ["compile", "{stencils}:smooth", "--json"],
        ["run", "{stencils}:smooth", "--shape", "16x16", "--repeat", "1", "--json"],
        ["demo", "--program", "laplacian_program", "--repeat", "1", "--json"],
    ],
    ids=["compile", "run", "demo"],
)
def test_json_on_a_terminal_is_only_json(
    stencils: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    argv = [a.format(stencils=stencils) for a in command]
    with monkeypatch.context() as patch, _terminal() as (tty, written):
        patch.setattr(sys, "stdout", tty)
        patch.setattr(sys, "stderr", tty)
        assert main(argv) == 0
        shown = _settled(written)
    assert "\x1b" not in shown
    json.loads(_plain(shown))  # nothing but the JSON document


@pytest.mark.usefixtures("no_delay")
def test_quiet_on_a_terminal_prints_nothing(
    stencils: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patch, _terminal() as (tty, written):
        patch.setattr(sys, "stdout", tty)
        patch.setattr(sys, "stderr", tty)
        assert main(["--quiet", "compile", f"{stencils}:smooth"]) == 0
        assert main(["demo", "--quiet", "--program", "laplacian_program", "--repeat", "1"]) == 0
        assert _settled(written) == ""


@pytest.mark.usefixtures("no_delay")
def test_demo_prints_each_row_as_it_completes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    examples = ["laplacian_program", "laplap_program"]
    argv = ["demo", "--repeat", "1", *(a for e in examples for a in ("--program", e))]
    with monkeypatch.context() as patch, _terminal() as (tty, written):
        patch.setattr(sys, "stdout", tty)
        patch.setattr(sys, "stderr", tty)
        assert main(argv) == 0
        shown = _settled(written)
    assert "laplap_program with run_gtfn_cpu" in shown  # the step, on the display
    rows = [
        line.split("\x1b[2K")[-1]
        for line in _plain(shown).split("\n")
        if line.split("\x1b[2K")[-1].startswith(("program ", *examples))
    ]
    assert [r.split()[0] for r in rows] == ["program", *examples]
    assert all("run_gtfn_cpu" in r for r in rows[1:])

    # into a pipe: the table at the end, as before
    capsys.readouterr()
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()] == ["program", *examples]
    assert "\x1b" not in out


def test_rich_is_imported_only_for_a_terminal(stencils: Path, tmp_path: Path) -> None:
    """`import stencilchain`, and commands whose output goes into pipes, never import rich."""
    code = (
        "import sys, stencilchain, stencilchain.app.cli as cli\n"
        "assert 'rich' not in sys.modules, 'import'\n"
        f"assert cli.main(['compile', {str(stencils)!r} + ':smooth']) == 0\n"
        f"assert cli.main(['run', {str(stencils)!r} + ':smooth', '--repeat', '1']) == 0\n"
        "assert 'rich' not in sys.modules, 'commands'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "STENCILCHAIN_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert done.returncode == 0, done.stderr


def test_the_command_line_logs_to_stderr(stencils: Path, tmp_path: Path) -> None:
    """The installed command, into pipes: STENCILCHAIN_LOG_LEVEL=INFO gives the INFO lines on
    stderr; without it, the library's warnings (a damaged translation cache entry) still
    reach stderr, once; --quiet silences them; stdout is the same every time."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STENCILCHAIN_")}
    env["STENCILCHAIN_CACHE_DIR"] = str(tmp_path / "cache")
    command = [sys.executable, "-m", "stencilchain.app.cli", "compile", f"{stencils}:smooth"]

    def run(*extra: str, **variables: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [*command, *extra],
            env={**env, **variables},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        return done

    first = run(STENCILCHAIN_LOG_LEVEL="INFO")
    lines = first.stderr.splitlines()
    assert len(lines) == 2, first.stderr
    assert (
        " INFO " in lines[0] and "smooth (run_gtfn_cpu, gtfn): translation cache miss" in lines[0]
    )
    assert "smooth (run_gtfn_cpu, gtfn): build cache miss, built in" in lines[1]
    assert first.stdout.startswith("compiled smooth with run_gtfn_cpu")

    [entry] = (tmp_path / "cache" / "translations").rglob("*.json")
    entry.write_text(entry.read_text()[:20])  # truncated
    damaged = run()
    [warning] = damaged.stderr.splitlines()
    assert " WARNING " in warning and str(entry) in warning and "treated as a miss" in warning
    assert damaged.stdout.startswith("compiled smooth with run_gtfn_cpu")

    entry.write_text(entry.read_text()[:20])
    assert run("--quiet").stderr == ""
