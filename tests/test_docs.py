"""The documentation stays true: the examples of README.md and docs/**/*.md run.

- Every ```python block runs. The blocks of one file run in order in one namespace (a
  block may use what an earlier one defined), in a temporary working directory, with
  STENCILCHAIN_CACHE_DIR pointing to a temporary folder and the pre-built backends and the
  metrics registry isolated, so nothing touches the user's cache or other tests.
- A block whose first line is a comment naming a file (`# stencils.py`,
  `# stencilchain.toml`, `# test_smooth.py, continued`) is also written (or appended) to
  that file in the working directory before the file's blocks run. When a page writes
  `test_*.py` files, pytest runs them there, in a subprocess.
- Every `stencilchain ...` command of a ```bash block is parsed by the real command-line
  parser. Those that are cheap also run, in order, after the file's Python blocks: through
  `main()`, with the variables written before the command. A command naming a file that the
  page does not write fails, but for the files `_USERS_FILES` lists (a user's own project).
  `stencilchain config` and `backends` also run once through the installed command.
- A page whose python blocks use a DaCe toolchain is skipped, not failed, where the `dace`
  extra is not installed.
- Every relative link of README.md and docs/**/*.md resolves: to a file or a folder of
  the repository, and a `#fragment` to a heading of the page it points to.
- What README.md and the guides (docs/*.md, docs/guide/*.md) name in code spans and bash
  lines exists: each `stencilchain` subcommand and its `--options`, each `python -m` module
  (and the options of the repository's own), each path of the repository.

Blocks that must not run are ```bash or ```text.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re
import shlex
import subprocess
import sys
import textwrap
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])

_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
_FILE_HEADER = re.compile(r"#\s*(?P<name>[\w.-]+\.(?:py|toml))\b")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*")
# Python under another name would be skipped silently: such blocks must say `python`.
_PYTHON_ALIASES = {"py", "python3", "pycon", "ipython", "py3"}
# Commands that are not run, only parsed: many compiles, or an optional extra or a GPU.
_NOT_RUN = re.compile(r"^demo\b|--backend[ =]run_(dace|\w+_gpu)")
# Files that a page's commands name as the user's own, not written by the page: such commands
# are only parsed. Any other file a command names must be written by a block of its page.
_USERS_FILES = {
    ("docs/guide/caching.md", "model/stencils.py"),  # warming a cache for a model's ranks
    ("docs/guide/caching.md", "stencils.py"),  # the `stencilchain cache` overview
}
# What a python block uses a DaCe toolchain by: `container.dace.`, `run_dace_cpu`, ...
_USES_DACE = re.compile(r"\.dace\.|run_dace_|make_dace_|DaCe")
# Links: inline `[text](target "title")` (also `<target>`), and reference definitions.
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^ {0,3}\[[^\]\n]+\]:[ \t]*<?([^\s>]+)>?", re.MULTILINE)
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class Block:
    """One fenced block: its language, text, and the line of the page its text starts on."""

    page: Path
    line: int
    language: str
    text: str

    @property
    def file_name(self) -> str | None:
        """The file this block is (part of), named by a comment on its first line."""
        first = self.text.split("\n", 1)[0]
        match = _FILE_HEADER.fullmatch(first.split(",")[0].strip())
        return match["name"] if match else None


@dataclasses.dataclass(frozen=True)
class Command:
    """A `stencilchain` command of a bash block: its variables and arguments."""

    block: Block
    environ: dict[str, str]
    argv: list[str]

    def __str__(self) -> str:
        words = [*(f"{k}={v}" for k, v in self.environ.items()), "stencilchain", *self.argv]
        return f"{self.block.page.name}:{self.block.line}: {shlex.join(words)}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        info = match["info"].strip()
        line = text.count("\n", 0, match.start("body")) + 1
        found.append(
            Block(
                page, line, info.split()[0].lower() if info else "", textwrap.dedent(match["body"])
            )
        )
    return found


def commands(block: Block) -> Iterator[Command]:
    text = block.text.replace("\\\n", " ")
    for line in text.splitlines():
        for segment in re.split(r"&&|\|\||;|\|", line):
            words = shlex.split(segment, comments=True)
            environ: dict[str, str] = {}
            while words and _ASSIGNMENT.fullmatch(words[0]):
                name, _, value = words.pop(0).partition("=")
                environ[name] = value
            if words and Path(words[0]).name == "stencilchain":
                yield Command(block, environ, words[1:])


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def dace_skip_reason(page_blocks: list[Block]) -> str | None:
    """Why a page's examples cannot run here: its python blocks use a DaCe toolchain and
    the `dace` extra is not installed. None: they can run."""
    uses = [b for b in page_blocks if b.language == "python" and _USES_DACE.search(b.text)]
    if not uses or importlib.util.find_spec("dace") is not None:
        return None
    return (
        f"{page_id(uses[0].page)}:{uses[0].line}: the examples use the DaCe toolchains, which "
        'need the `dace` extra (pip install -e ".[dace]")'
    )


def link_targets(page: Path) -> list[str]:
    """The targets of the page's links, outside code blocks and code spans."""
    text = _INLINE_CODE.sub("", _FENCE.sub("", page.read_text(encoding="utf-8")))
    return [*_LINK.findall(text), *_REFERENCE.findall(text)]


def anchors(page: Path) -> set[str]:
    """The `#fragments` of the page's headings, as GitHub makes them (lower case, no
    punctuation but `-` and `_`, spaces as `-`, `-1`, `-2`, ... for repeats)."""
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    found: set[str] = set()
    seen: dict[str, int] = {}
    for match in _HEADING.finditer(text):
        slug = re.sub(r"[^\w\- ]", "", match[1].strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_link(page: Path, target: str, root: Path = ROOT) -> str | None:
    """What is wrong with a link of `page` to `target`; None if it resolves (an external
    link is not checked)."""
    if re.match(r"[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):  # https:, mailto:, ...
        return None
    path_part, _, fragment = target.partition("#")
    path = (page.parent / unquote(path_part)).resolve() if path_part else page.resolve()
    if not path.is_relative_to(root.resolve()):
        return f"{target}: outside the repository"
    if not path.exists():
        return f"{target}: no such file or folder"
    if fragment and path.suffix == ".md" and path.is_file() and fragment not in anchors(path):
        return f"{target}: {path.name} has no heading #{fragment}"
    return None


PYTHON_PAGES = [p for p in PAGES if any(b.language == "python" for b in blocks(p))]
ALL_COMMANDS = [c for p in PAGES for b in blocks(p) if b.language == "bash" for c in commands(b)]


@pytest.fixture()
def docs_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Path, dict[str, str]]]:
    """A working directory and a cache of this test's own; the environment it ran with."""
    from stencilchain import backends

    work, cache = tmp_path / "work", tmp_path / "cache"
    work.mkdir()
    for name in list(os.environ):
        if name.startswith("STENCILCHAIN_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("STENCILCHAIN_CACHE_DIR", str(cache))
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    monkeypatch.chdir(work)
    monkeypatch.setattr(backends, "_built", {})  # the pre-built toolchains, built here afresh
    monkeypatch.setattr(backends.METRICS, "_entries", {})
    monkeypatch.setattr(sys, "path", list(sys.path))  # the CLI puts the user's folder first
    environ = dict(os.environ)
    modules = set(sys.modules)
    try:
        yield work, environ
    finally:
        os.environ.clear()  # a block may have set a variable
        os.environ.update(environ)
        for name in set(sys.modules) - modules:
            if name.startswith(("_stencilchain_user_", "docs_", "stencils", "test_", "conftest")):
                del sys.modules[name]


def write_files(page_blocks: list[Block], work: Path) -> list[Path]:
    """The blocks that name a file, written to it (later ones appended)."""
    written: list[Path] = []
    for block in page_blocks:
        name = block.file_name
        if name is None:
            continue
        path = work / name
        if path in written:
            path.write_text(
                path.read_text(encoding="utf-8") + "\n\n" + block.text, encoding="utf-8"
            )
        else:
            path.write_text(block.text, encoding="utf-8")
            written.append(path)
    return written


def run_python(page: Path, page_blocks: list[Block]) -> None:
    """The page's python blocks in order, in one module namespace; tracebacks show the
    page and its line numbers."""
    name = "docs_" + re.sub(r"\W", "_", page_id(page))
    module = types.ModuleType(name)
    module.__file__ = str(page)
    sys.modules[name] = module
    for block in page_blocks:
        if block.language == "python":
            source = "\n" * (block.line - 1) + block.text
            exec(compile(source, str(page), "exec"), module.__dict__)


def run_command(
    command: Command, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from stencilchain.app.cli import main

    with monkeypatch.context() as patch:
        for name, value in command.environ.items():
            patch.setenv(name, value)
        status = main(command.argv)
    out, err = capsys.readouterr()
    assert status == 0, f"{command} exited with {status}:\n{out}\n{err}"


def named_files(command: Command) -> list[str]:
    """The Python files the command names (`stencils.py`, `stencils.py:smooth`)."""
    return [w.split(":")[0] for w in command.argv if w.split(":")[0].endswith(".py")]


def runnable(command: Command, work: Path) -> bool:
    """Whether the command runs (else it is only parsed): it is cheap and names none of the
    user's own files. A file that is neither the user's nor written by the page fails."""
    if _NOT_RUN.search(" ".join(command.argv)):
        return False
    page = page_id(command.block.page)
    users = [f for f in named_files(command) if (page, f) in _USERS_FILES]
    missing = [f for f in named_files(command) if f not in users and not (work / f).is_file()]
    assert not missing, f"{command}: no block of the page writes {', '.join(missing)}"
    return not users


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=page_id)
def test_page_examples_run(
    page: Path,
    docs_environment: tuple[Path, dict[str, str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    work, environ = docs_environment
    page_blocks = blocks(page)
    reason = dace_skip_reason(page_blocks)
    if reason is not None:
        pytest.skip(reason)
    written = write_files(page_blocks, work)
    run_python(page, page_blocks)

    for block in page_blocks:
        if block.language == "bash":
            for command in commands(block):
                if runnable(command, work):
                    run_command(command, monkeypatch, capsys)

    tests = [p.name for p in written if p.name.startswith("test_") and p.suffix == ".py"]
    if tests:
        env = {k: v for k, v in environ.items() if not k.startswith(("PYTEST_", "COV_"))}
        proc = subprocess.run(
            [
                sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                f"--basetemp={work.parent / 'pytest'}", *tests,
            ],
            cwd=work, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert proc.returncode == 0, (
            f"pytest on the tests of {page_id(page)}:\n{proc.stdout}\n{proc.stderr}"
        )


def test_users_files_are_named_by_their_pages() -> None:
    """Every entry of `_USERS_FILES` is a file that a command of its page names."""
    named = {(page_id(c.block.page), f) for c in ALL_COMMANDS for f in named_files(c)}
    assert named >= _USERS_FILES, f"not named by their pages: {sorted(_USERS_FILES - named)}"


def test_a_command_naming_a_missing_file_fails(tmp_path: Path) -> None:
    """A command that would run but names a file its page does not write is an error that
    names the file, not a command silently left out; the user's own files are not run."""
    text = "stencilchain compile stencils.py:smooth\n"
    (command,) = commands(Block(ROOT / "docs" / "guide" / "cli.md", 5, "bash", text))
    with pytest.raises(AssertionError, match=r"cli\.md:5: .*no block of the page writes stencils"):
        runnable(command, tmp_path)
    (tmp_path / "stencils.py").write_text("")
    assert runnable(command, tmp_path)
    (users,) = commands(Block(ROOT / "docs" / "guide" / "caching.md", 5, "bash", text))
    assert not runnable(users, tmp_path / "empty")
    (demo,) = commands(Block(ROOT / "docs" / "guide" / "cli.md", 5, "bash", "stencilchain demo\n"))
    assert not runnable(demo, tmp_path / "empty")


@pytest.mark.parametrize("command", ALL_COMMANDS, ids=str)
def test_documented_command_parses(command: Command) -> None:
    from stencilchain.app.cli import make_parser

    try:
        make_parser().parse_args(command.argv)
    except SystemExit as done:  # --help exits with 0, a usage mistake with 2
        assert done.code in (0, None), f"{command}: not a valid command line"


def test_installed_command_runs(docs_environment: tuple[Path, dict[str, str]]) -> None:
    """`stencilchain config` and `stencilchain backends`, as a user runs them."""
    work, environ = docs_environment
    script = Path(sys.executable).with_name("stencilchain")
    prefix = [str(script)] if script.is_file() else [sys.executable, "-m", "stencilchain.app.cli"]
    for argv in (["config"], ["backends"]):
        proc = subprocess.run(
            [*prefix, *argv], cwd=work, env=environ, capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert environ["STENCILCHAIN_CACHE_DIR"] in proc.stdout  # the temporary cache


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_python_blocks_say_python(page: Path) -> None:
    """A block of Python under another name would not run: it must be ```python."""
    aliases = [b.line for b in blocks(page) if b.language in _PYTHON_ALIASES]
    assert not aliases, f"{page_id(page)}: blocks at lines {aliases} must be ```python"


def test_pages_are_readme_and_every_docs_page() -> None:
    """The pages checked: README.md and every Markdown file under docs/."""
    assert ROOT / "README.md" in PAGES
    assert set(PAGES) >= set((ROOT / "docs").rglob("*.md"))


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_relative_links_resolve(page: Path) -> None:
    broken = [p for t in link_targets(page) if (p := broken_link(page, t)) is not None]
    assert not broken, f"{page_id(page)}: broken links {broken}"


def test_link_check_finds_what_is_broken(tmp_path: Path) -> None:
    """The link check itself: files, folders, fragments, references, and what it ignores."""
    (tmp_path / "docs" / "sub").mkdir(parents=True)
    (tmp_path / "docs" / "other.md").write_text("# Title\n\n## A `code` heading: yes\n")
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "# Page\n\n"
        "[file](other.md) [folder](sub/) [folder](sub) [anchor](other.md#a-code-heading-yes)\n"
        "[self](#page) [web](https://example.org/x.md) [mail](mailto:a@b.c)\n"
        '[titled](other.md "a title") [angle](<other.md>)\n'
        "`[code](missing-in-code.md)`\n\n"
        "```text\n[fenced](missing-in-fence.md)\n```\n\n"
        "[missing](missing.md) [gone](gone/) [bad anchor](other.md#nope) [up](../../x.md)\n\n"
        "[ref]: missing-ref.md\n"
    )
    targets = link_targets(page)
    assert "missing-in-code.md" not in targets and "missing-in-fence.md" not in targets
    broken = [t for t in targets if broken_link(page, t, root=tmp_path)]
    assert broken == [
        "missing.md", "gone/", "other.md#nope", "../../x.md", "missing-ref.md",
    ]  # fmt: skip


def test_dace_pages_skip_without_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """A page using the DaCe toolchains is skipped, with a reason naming the `dace` extra,
    exactly when DaCe is not installed; a page that does not use them always runs."""
    page = ROOT / "docs" / "guide" / "example.md"
    uses = [
        "c.dace.toolchain()", "backends.run_dace_cpu", "make_dace_bindings(cfg)",
        "# a DaCe SDFG",
    ]  # fmt: skip
    plain = [Block(page, 1, "python", "import stencilchain as sc\n")]
    in_bash = [Block(page, 1, "bash", "stencilchain run x.py --backend run_dace_cpu\n")]
    real = importlib.util.find_spec

    def find_spec(name: str, *args: object, **kwargs: object) -> object:
        return None if name == "dace" else real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    for text in uses:
        reason = dace_skip_reason([*plain, Block(page, 7, "python", text)])
        assert reason is not None and "`dace` extra" in reason and ":7:" in reason, text
    assert dace_skip_reason(plain) is None
    assert dace_skip_reason(in_bash) is None  # bash commands are not run for DaCe anyway

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a, **k: object())
    assert dace_skip_reason([Block(page, 1, "python", uses[0])]) is None


def test_index_links_every_guide_page() -> None:
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    missing = [
        p.name
        for p in sorted((ROOT / "docs" / "guide").glob("*.md"))
        if f"guide/{p.name}" not in index
    ]
    assert not missing, f"docs/index.md does not link {missing}"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/index.md)" in readme


def test_documented_variables_exist() -> None:
    """Every `STENCILCHAIN_*` variable the pages name is one of the generated reference
    (docs/configuration.md, checked against the code by tests/containers/test_config.py),
    but the misspelling that the configuration guide shows on purpose."""
    reference = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    known = set(re.findall(r"`(STENCILCHAIN_[A-Z0-9_]+)`", reference))
    typos = {"STENCILCHAIN_BUILD_TYP"}  # docs/guide/configuration.md: an unknown variable
    unknown = {
        f"{page_id(page)}: {name}"
        for page in PAGES
        for name in re.findall(r"STENCILCHAIN_[A-Z0-9_]+\b", page.read_text(encoding="utf-8"))
        if name not in known | typos
    }
    assert not unknown, f"variables that the reference does not list: {sorted(unknown)}"


# --- what the guides name exists ---------------------------------------------------------------
# In the code spans of the text and the lines of its ```bash blocks: `stencilchain` commands and
# their options, `python -m` modules (and, for the repository's own, their options), and paths
# of the repository (those that start with a top-level folder or file of it, or of stencilchain/).
_COMMAND = re.compile(r"(?<![\w./-])stencilchain((?:[ \t]+[^\s`|;&<>()]+)*)")
_MODULE = re.compile(
    r"(?<![\w.-])(?:\S*/)?python3?[ \t]+-m[ \t]+([\w.]+)((?:[ \t]+[^\s`|;&<>()]+)*)"
)
_PATH = re.compile(r"(?:\./)?(?:[\w.-]+/)+[\w.*-]*|[\w-]+\.(?:toml|md|py|yaml|cfg)")
_NOT_IN_THE_REPOSITORY = {".venv", ".git", "build", "dist"}  # made by a user or by a build


def named_code(page: Path) -> list[tuple[int, str]]:
    """The code a page names, with its line: its inline code spans, and its bash lines."""
    text = page.read_text(encoding="utf-8")
    found: list[tuple[int, str]] = []
    prose = _FENCE.sub(lambda m: "\n" * m[0].count("\n"), text)  # fences out, lines kept
    for match in _INLINE_CODE.finditer(prose):
        found.append((prose.count("\n", 0, match.start()) + 1, match[0].strip("`")))
    for block in blocks(page):
        if block.language == "bash":
            joined = block.text.replace("\\\n", " ")
            found += [(block.line + n, line) for n, line in enumerate(joined.splitlines())]
    return found


def _subcommands(parser: Any) -> dict[str, Any]:
    import argparse

    return next(
        (a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {}
    )


def wrong_command(words: list[str]) -> str | None:
    """What is wrong with `stencilchain WORDS`: an unknown subcommand or option; None if both
    exist (arguments are not checked: a page may write FILE or `...`)."""
    from stencilchain.app.cli import make_parser

    parser, path, chosen = make_parser(), ["stencilchain"], False
    for word in words:
        if word.startswith("#"):
            break
        if word.startswith("-"):
            option = word.split("=", 1)[0]
            if option != "-" and option not in parser._option_string_actions:
                return f"{' '.join(path)} has no option {option}"
        elif (choices := _subcommands(parser)) and not chosen:
            if word not in choices:
                return f"{' '.join(path)} has no subcommand {word!r}"
            parser, path = choices[word], [*path, word]
            chosen = not _subcommands(parser)
        else:
            chosen = True
    return None


def repository_entries(root: Path = ROOT) -> set[str]:
    return {p.name for p in root.iterdir()} - _NOT_IN_THE_REPOSITORY


def wrong_module(module: str, words: list[str], root: Path = ROOT) -> str | None:
    """What is wrong with `python -m MODULE WORDS`: a module that does not exist, or, for a
    module of the repository, an option that none of its files spells (`"--quick"`)."""
    top = module.split(".")[0]
    if top not in repository_entries(root) and not (root / f"{top}.py").is_file():
        return None if importlib.util.find_spec(top) else f"no module {module}"
    base = root.joinpath(*module.split("."))
    files = sorted(base.rglob("*.py")) if base.is_dir() else [base.with_suffix(".py")]
    if not files or not files[0].is_file():
        return f"no module {module} in the repository"
    sources = "\n".join(f.read_text(encoding="utf-8") for f in files)
    for word in words:
        if word.startswith("#"):
            break
        option = word.split("=", 1)[0]
        if option.startswith("--") and f'"{option}"' not in sources:
            return f"python -m {module} has no option {option}"
    return None


def wrong_path(path: str, root: Path = ROOT) -> str | None:
    """What is wrong with a path a page names: one that starts with an entry of the repository
    (`benchmarks/`, `tests/...`, `pyproject.toml`) or of stencilchain/ (`steps/cpp/`) must
    exist (a `*` matching something); others (a user's `model/stencils.py`) are not checked."""
    path = path.removeprefix("./")
    first = path.split("/", 1)[0]
    for base in (root, root / "stencilchain"):
        if first in repository_entries(base):
            found = any(base.glob(path.rstrip("/"))) if "*" in path else (base / path).exists()
            return None if found else f"{path}: no such file or folder"
    return None


def wrong_names(page: Path, root: Path = ROOT) -> list[str]:
    """Every command, option, module and path that `page` names and that does not exist."""
    wrong: list[str] = []
    for line, code in named_code(page):
        found = [wrong_command(shlex.split(m[1], posix=False)) for m in _COMMAND.finditer(code)]
        found += [wrong_module(m[1], m[2].split(), root) for m in _MODULE.finditer(code)]
        found += [wrong_path(m[0], root) for m in _PATH.finditer(code)]
        wrong += [f"{page_id(page)}:{line}: {w} (in `{code}`)" for w in found if w]
    return wrong


# The pages that say what is: README.md and the guides (the ADRs record what was decided then).
GUIDES = [p for p in PAGES if p.parent in (ROOT, ROOT / "docs", ROOT / "docs" / "guide")]


@pytest.mark.parametrize("page", GUIDES, ids=page_id)
def test_named_commands_options_and_files_exist(page: Path) -> None:
    wrong = wrong_names(page)
    assert not wrong, "\n".join(wrong)


def test_name_check_finds_what_is_missing(tmp_path: Path) -> None:
    """The check itself: each kind of name, existing and not, in code spans and bash lines."""
    page = ROOT / "docs" / "guide" / "example.md"
    text = (
        "`stencilchain cache prune --max-size 5M` `stencilchain compile FILE --backend X` "
        "`stencilchain cache polish` `stencilchain compile --no-such-flag` `stencilchain` "
        "`python -m benchmarks --quick` `python -m benchmarks --slowly` `python -m pytest -x` "
        "`python -m no_such_module_here` `benchmarks/run.py` `benchmarks/gone.py` "
        "`steps/cpp/*.h` `steps/cpp/*.hpp` `model/stencils.py` `pyproject.toml`\n\n"
        "plain stencilchain polish, tests/gone.py in prose\n\n"
        "```bash\nOMP_NUM_THREADS=2 stencilchain demo --nope && python -m benchmarks.gone\n```\n"
        "```text\nstencilchain polish\n```\n"
    )
    fake = tmp_path / "example.md"
    fake.write_text(text, encoding="utf-8")
    wrong = [w.split(": ", 1)[1].split(" (in ")[0] for w in wrong_names_of(fake, page)]
    assert wrong == [
        "stencilchain cache has no subcommand 'polish'",
        "stencilchain compile has no option --no-such-flag",
        "python -m benchmarks has no option --slowly",
        "no module no_such_module_here",
        "benchmarks/gone.py: no such file or folder",
        "steps/cpp/*.hpp: no such file or folder",
        "stencilchain demo has no option --nope",
        "no module benchmarks.gone in the repository",
    ]


def wrong_names_of(fake: Path, page: Path) -> list[str]:
    """wrong_names of the text of `fake`, as if it were `page` of the repository."""
    original = Path.read_text

    def read_text(self: Path, *args: Any, **kwargs: Any) -> str:
        return original(fake if self == page else self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "read_text", read_text)
        return wrong_names(page)
