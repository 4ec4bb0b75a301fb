"""The architecture decision records stay in order: docs/adr/NNNN-title.md numbered 0001,
0002, ... without a hole or a repeat, each titled with its number and saying its status
(`Status: accepted (...)` or `Status: superseded by NNNN`, near its top)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ADRS = ROOT / "docs" / "adr"
_NAME = re.compile(r"(?P<number>\d{4})-[a-z0-9]+(?:-[a-z0-9]+)*\.md")
_TITLE = re.compile(r"# (?P<number>\d{4}) — \S")
_STATUS = re.compile(r"Status: (?:accepted\b|superseded by (?P<by>\d{4})\b)")
STATUS_LINES = 5  # the status is on one of the first lines


def problems(folder: Path) -> list[str]:
    """What is wrong with the records in `folder` (an empty list: nothing)."""
    found: list[str] = []
    numbers: dict[int, str] = {}
    for path in sorted(folder.iterdir()):
        match = _NAME.fullmatch(path.name)
        if match is None:
            found.append(f"{path.name}: not named NNNN-lower-case-title.md")
            continue
        number = int(match["number"])
        if number in numbers:
            found.append(f"{path.name}: number {number:04d} is also {numbers[number]}")
        numbers[number] = path.name
        lines = path.read_text(encoding="utf-8").splitlines()
        title = _TITLE.match(lines[0]) if lines else None
        if title is None or title["number"] != match["number"]:
            found.append(f"{path.name}: the first line is not `# {match['number']} — <title>`")
        statuses = [s for line in lines[:STATUS_LINES] if (s := _STATUS.match(line))]
        if not statuses:
            found.append(
                f"{path.name}: no `Status: accepted (...)` or `Status: superseded by NNNN` "
                f"line in its first {STATUS_LINES} lines"
            )
        elif statuses[0]["by"] is not None:
            by = int(statuses[0]["by"])
            if by == number or not any(folder.glob(f"{by:04d}-*.md")):
                found.append(f"{path.name}: superseded by {by:04d}, which is not another record")
    expected = list(range(1, len(numbers) + 1))
    if sorted(numbers) != expected:
        holes = sorted(set(expected) - set(numbers))
        found.append(f"numbers {sorted(numbers)} are not 1..{len(numbers)}: missing {holes}")
    return found


def test_adrs_are_numbered_without_a_hole_and_each_has_a_status() -> None:
    assert list(ADRS.glob("*.md")), f"no records in {ADRS}"
    assert problems(ADRS) == []


def _record(folder: Path, name: str, text: str) -> None:
    (folder / name).write_text(text, encoding="utf-8")


def test_the_check_finds_a_hole_a_missing_status_and_a_wrong_title(tmp_path: Path) -> None:
    _record(tmp_path, "0001-first.md", "# 0001 — First\n\nStatus: accepted (2026-01-01)\n")
    _record(tmp_path, "0002-second.md", "# 0002 — Second\n\nStatus: superseded by 0004\n")
    _record(
        tmp_path, "0004-fourth.md", "# 0004 — Fourth\n\n## Context\n\nText.\n\nStatus: accepted\n"
    )
    _record(tmp_path, "0005-fifth.md", "# 0003 — Fifth\n\nStatus: superseded by 0007\n")
    assert problems(tmp_path) == [
        "0004-fourth.md: no `Status: accepted (...)` or `Status: superseded by NNNN` line in "
        f"its first {STATUS_LINES} lines",
        "0005-fifth.md: the first line is not `# 0005 — <title>`",
        "0005-fifth.md: superseded by 0007, which is not another record",
        "numbers [1, 2, 4, 5] are not 1..4: missing [3]",
    ]


def test_the_check_accepts_records_in_order(tmp_path: Path) -> None:
    _record(tmp_path, "0001-first.md", "# 0001 — First\n\nStatus: accepted (2026-01-01)\n")
    _record(tmp_path, "0002-second.md", "# 0002 — Second\n\nStatus: superseded by 0001\n")
    assert problems(tmp_path) == []
