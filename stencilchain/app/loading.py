"""Finding the user's program: `FILE.py:PROGRAM` (a file path) or `package.module:PROGRAM`.

The file is imported like `python FILE.py` would run it (its folder first on sys.path),
under a module name of its own. PROGRAM may be left out when the file defines one program;
`load_programs` (for `stencilchain compile`) takes a file or module alone as all of its
programs.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from stencilchain.app.errors import FAILURE, CLIError
from stencilchain.containers.config import suggest
from stencilchain.errors import DefinitionError
from stencilchain.program.field_operator import FieldOperator
from stencilchain.program.program import Program
from stencilchain.program.scan_operator import ScanOperator


def load_program(target: str) -> Program:
    """The program that `target` (`FILE.py:PROGRAM`, `FILE.py` or `module:PROGRAM`) names."""
    where, sep, name = target.rpartition(":")
    if not sep or not where:
        where, name = target, ""
    module = _import(where)
    programs = {k: v for k, v in vars(module).items() if isinstance(v, Program)}
    if not name:
        if len(programs) == 1:
            return next(iter(programs.values()))
        found = f"it defines {', '.join(programs)}" if programs else "it defines none"
        raise CLIError(f"{where}: name the program as {where}:PROGRAM ({found})")
    value = getattr(module, name, None)
    if isinstance(value, Program):
        return value
    if value is None:
        known = f"; {suggest(name, programs)}" if programs else "; it defines no @sc.program"
        raise CLIError(f"{where} has no program {name!r}{known}")
    if isinstance(value, (FieldOperator, ScanOperator)):
        kind = "field_operator" if isinstance(value, FieldOperator) else "scan_operator"
        raise CLIError(f"{where}: {name!r} is a @sc.{kind}; name the @sc.program that calls it")
    raise CLIError(f"{where}: {name!r} is not a @sc.program (its type is {type(value).__name__})")


def load_programs(targets: Sequence[str]) -> list[Program]:
    """The programs that `targets` name, in their order: `FILE.py:PROGRAM` or
    `module:PROGRAM` one program, `FILE.py` or `module` every program it defines."""
    programs: list[Program] = []
    for target in targets:
        where, sep, name = target.rpartition(":")
        if sep and where and name:
            programs.append(load_program(target))
            continue
        where = where if sep else target
        module = _import(where)
        found = list({id(v): v for v in vars(module).values() if isinstance(v, Program)}.values())
        if not found:
            raise CLIError(f"{where} defines no @sc.program")
        programs += found
    return programs


def _import(where: str) -> ModuleType:
    path = Path(where).expanduser()
    if where.endswith(".py") or path.exists() or "/" in where:
        return _import_file(path)
    try:
        return importlib.import_module(where)
    except ModuleNotFoundError as error:
        if error.name is not None and where.startswith(error.name):
            raise CLIError(f"no file or module named {where!r}") from error
        raise _import_failed(where, error) from error
    except DefinitionError as error:
        raise CLIError(str(error), FAILURE) from error
    except Exception as error:
        raise _import_failed(where, error) from error


def _import_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise CLIError(f"no such file: {path}")
    path = path.resolve()
    stem = re.sub(r"\W", "_", path.stem)
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:8]
    module_name = f"_stencilchain_user_{stem}_{digest}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise CLIError(f"{path} cannot be imported as Python")
    module = importlib.util.module_from_spec(spec)
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # as `python FILE.py` does: its sibling modules import
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except DefinitionError as error:  # its message starts with the user's file and line
        del sys.modules[module_name]
        raise CLIError(str(error), FAILURE) from error
    except Exception as error:
        del sys.modules[module_name]
        raise _import_failed(str(path), error) from error
    return module


def _import_failed(where: str, error: Exception) -> CLIError:
    """'importing X failed: NameError: ... (file:line)', the line the innermost user frame."""
    if isinstance(error, SyntaxError):
        return CLIError(
            f"importing {where} failed: {error.filename}:{error.lineno}: {error.msg}", FAILURE
        )
    frames = traceback.extract_tb(error.__traceback__)
    package = str(Path(__file__).resolve().parents[1])
    user = [f for f in frames if not str(Path(f.filename).resolve()).startswith(package)]
    frame = user[-1] if user else frames[-1] if frames else None  # the user's line, else the last
    at = f" ({frame.filename}:{frame.lineno})" if frame is not None else ""
    message = str(error).splitlines()[0] if str(error) else ""
    return CLIError(f"importing {where} failed: {type(error).__name__}: {message}{at}", FAILURE)
