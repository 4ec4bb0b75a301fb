"""BuildRunner: the commands of a build, one by one or side by side, with an explicit
environment, each appended with its output to build.log; a failure is a CompilationError
with the compiler's message and the log's path."""

from __future__ import annotations

import os
import pickle
import sys
import time
from pathlib import Path

import pytest

from stencilchain.errors import CompilationError
from stencilchain.steps.build.runner import LOG_NAME, BuildRunner, JobQueue, compiler_message
from stencilchain.steps.build.tools import (
    IGNORED_ENVIRONMENT,
    BuildEnvironment,
    build_environment,
    search_path,
    which,
)


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_commands_and_their_output_are_appended_to_the_log(tmp_path: Path) -> None:
    with BuildRunner(tmp_path, {"SC_GREETING": "hello"}) as runner:
        assert runner.run(python("import os; print(os.environ['SC_GREETING'])"), "greeting")
        runner.note("a note")
        runner.run(python("print('second')"), "second")
    log = (tmp_path / LOG_NAME).read_text().splitlines()
    assert log[1] == "hello"  # the command ran with the runner's environment only
    assert log[0].startswith("$ ") and "SC_GREETING" in log[0]
    assert log[2:] == ["a note", log[3], "second"] and log[3].startswith("$ ")
    assert not list(tmp_path.glob(f"{LOG_NAME}.*"))  # the jobs' output files are gone


def test_a_failed_command_raises_with_the_compiler_message_and_the_log(tmp_path: Path) -> None:
    failing = python("print('warming up'); print('x.cpp:3: error: no such thing'); exit(3)")
    with BuildRunner(tmp_path, {}) as runner, pytest.raises(CompilationError) as caught:
        runner.run(failing, "compiling x")
    error = caught.value
    assert error.summary == "compiling x failed"
    assert error.compiler_output == "x.cpp:3: error: no such thing"
    assert error.log_path == tmp_path / LOG_NAME
    assert "[exit status 3]" in (tmp_path / LOG_NAME).read_text()
    assert pickle.loads(pickle.dumps(error)).log_path == error.log_path


def test_run_without_check_says_whether_it_succeeded(tmp_path: Path) -> None:
    with BuildRunner(tmp_path, {}) as runner:
        assert runner.run(python("exit(1)"), "may fail", check=False) is False
        assert runner.run(python("pass"), "succeeds", check=False) is True


def test_side_by_side_jobs_run_at_once_and_the_first_failure_is_raised(tmp_path: Path) -> None:
    # each job waits for the other's file: they finish only if they run at the same time
    wait_for = "import pathlib, sys, time\n" + (
        "pathlib.Path(sys.argv[1]).touch()\n"
        "deadline = time.time() + 60\n"
        "while not pathlib.Path(sys.argv[2]).exists() and time.time() < deadline:\n"
        "    time.sleep(0.01)\n"
        "sys.exit(0 if pathlib.Path(sys.argv[2]).exists() else 5)\n"
    )
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    with BuildRunner(tmp_path, {}) as runner:
        runner.start([*python(wait_for), a, b], "job a", cwd=tmp_path)
        runner.start([*python(wait_for), b, a], "job b", cwd=tmp_path)
        runner.wait_all()
        runner.start(python("print('first error'); exit(1)"), "first")
        runner.start(python("print('second error'); exit(2)"), "second")
        with pytest.raises(CompilationError, match="first failed"):
            runner.wait_all()
    log = (tmp_path / LOG_NAME).read_text()
    assert "first error" in log and "second error" in log  # both waited for and logged


def test_leaving_the_runner_stops_running_jobs(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), BuildRunner(tmp_path, {}) as runner:
        job = runner.start(python("import time; time.sleep(60)"), "sleeping")
        raise RuntimeError("something else failed")
    assert job.process.poll() is not None
    assert not list(tmp_path.glob(f"{LOG_NAME}.*"))


def test_a_missing_program_is_a_compilation_error(tmp_path: Path) -> None:
    with BuildRunner(tmp_path, {}) as runner, pytest.raises(CompilationError) as caught:
        runner.run([str(tmp_path / "no-such-compiler"), "-c", "x.cpp"], "compiling x")
    assert "cannot run" in str(caught.value) and "no-such-compiler" in str(caught.value)
    assert "no-such-compiler" in (tmp_path / LOG_NAME).read_text()


def test_output_returns_standard_output_and_logs_only_the_command(tmp_path: Path) -> None:
    with BuildRunner(tmp_path, {}) as runner:
        assert runner.output(python("print('[' + '{}' + ']')"), "report") == "[{}]\n"
        assert runner.output(python("exit(4)"), "report") is None
    log = (tmp_path / LOG_NAME).read_text()
    assert "[{}]" not in log and "[exit status 4]" in log


def test_the_build_environment_is_explicit_and_leaves_os_environ_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CXXFLAGS", "-O0")
    monkeypatch.setenv("PATH", "/usr/bin")
    before = dict(os.environ)
    env = build_environment(None, path_first=["/opt/tools", "/opt/tools", "/opt/more"])
    assert os.environ == before
    assert env["PATH"] == os.pathsep.join(["/opt/tools", "/opt/more", "/usr/bin"])
    assert not set(IGNORED_ENVIRONMENT) & set(env)
    assert build_environment(None)["PATH"] == "/usr/bin"  # a step made by hand: the process's


def test_a_given_build_environment_is_used_instead_of_the_process_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin")
    given = BuildEnvironment.of({"PATH": "/opt/bin", "CXXFLAGS": "-O0", "HOME": "/h"})
    assert given.variables == (("PATH", "/opt/bin"), ("HOME", "/h"))
    assert build_environment(given) == {"PATH": "/opt/bin", "HOME": "/h"}
    assert build_environment(given, ["/t"])["PATH"] == os.pathsep.join(["/t", "/opt/bin"])
    assert build_environment(BuildEnvironment()) == {}  # nothing of os.environ leaks in


def test_compiler_message_starts_at_the_first_error() -> None:
    output = "\n".join(["noise"] * 100 + ["a.cpp:1: error: bad", "note: here"])
    assert compiler_message(output) == "a.cpp:1: error: bad\nnote: here"
    assert compiler_message("\n".join(str(n) for n in range(100)), max_lines=2) == "98\n99"


def test_a_job_that_outlives_its_runner_is_never_left_behind(tmp_path: Path) -> None:
    start = time.perf_counter()
    with BuildRunner(tmp_path, {}) as runner:
        runner.start(python("import time; time.sleep(60)"), "sleeping")
    assert time.perf_counter() - start < 30  # killed on leaving, not waited for


def test_a_failure_without_a_command_is_logged_and_raised_with_the_log(tmp_path: Path) -> None:
    with BuildRunner(tmp_path, {}) as runner:
        error = runner.logged_error("DaCe could not generate the code", "KeyError: 'x'")
    assert (error.summary, error.compiler_output) == (
        "DaCe could not generate the code",
        "KeyError: 'x'",
    )
    assert error.log_path == tmp_path / LOG_NAME
    assert "DaCe could not generate the code: KeyError: 'x'" in error.log_path.read_text()


def test_tools_are_looked_up_on_the_build_environment_path(tmp_path: Path) -> None:
    tool = tmp_path / "bin" / "sc-test-cxx"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    environment = BuildEnvironment((("PATH", str(tool.parent)),))
    assert search_path(environment) == str(tool.parent) and search_path(None) is None
    assert which("sc-test-cxx", "C++ compiler", search_path(environment)) == str(tool)
    with pytest.raises(CompilationError, match="not found"):
        which("sc-test-cxx", "C++ compiler")  # not on this process's PATH
    assert BuildEnvironment().search_path == os.defpath


def test_a_job_queue_runs_at_most_its_jobs_at_once_and_collects_the_failed(
    tmp_path: Path,
) -> None:
    # each command holds a directory while it runs: a second one at once would fail
    hold = (
        "import os, sys, time; os.mkdir(sys.argv[1]); time.sleep(0.05); os.rmdir(sys.argv[1]);"
        " sys.exit(int(sys.argv[2]))"
    )
    slot = str(tmp_path / "slot")
    with BuildRunner(tmp_path, dict(os.environ)) as runner:
        queue = JobQueue(runner, 1)
        for index, status in enumerate((0, 3, 0, 0)):
            queue.submit([*python(hold), slot, str(status)], f"job {index}", f"tag{index}")
        queue.drain()
        assert queue.failed == {"tag1"}
        queue.submit(python("print('after the drain')"), "late", "late")
        queue.drain()
    log = (tmp_path / LOG_NAME).read_text()
    assert log.count("$ ") == 5 and "[exit status 3]" in log and "after the drain" in log
    assert "FileExistsError" not in log  # never two at once
