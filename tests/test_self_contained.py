"""A clone runs with nothing beside it: no tracked file builds a path into the repository's
parent folder (``Path(__file__).parents[k]`` climbing past the root, ``ROOT.parent``, ``../``
out of the tree), so the tests and benches read only what the repository holds."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Path(__file__).resolve().parents[2].parent, Path(__file__).parent.parent, ...
CLIMB = re.compile(
    r"Path\(__file__\)(?:\.resolve\(\)|\.absolute\(\))?"
    r"(?P<steps>(?:\.parents\[\d+\]|\.parent)+)"
)
ROOT_PARENT = re.compile(r"\b(?:ROOT|REPO|REPO_ROOT)\.parent\b")
OUTSIDE_LITERAL = re.compile(r"""["'](?:\.\./)+(?:shared|fixtures)\b""")


def climb_levels(steps: str) -> int:
    """How many folders ``.parents[k]`` / ``.parent`` steps climb from the file itself."""
    levels = 0
    for part in re.findall(r"\.parents\[(\d+)\]|\.parent", steps):
        levels += int(part) + 1 if part else 1
    return levels


def tracked_text_files() -> list[Path]:
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    keep = (".py", ".sh", ".toml", ".yaml", ".yml", ".cfg", ".ini")
    return [ROOT / n for n in names.stdout.splitlines() if n.endswith(keep) or n == ".ci/run"]


def outside_lines(relpath: str, text: str) -> list[str]:
    """The lines of one file (at ``relpath`` in the repository) that build a path outside it."""
    depth = len(Path(relpath).parts)  # a file at ROOT/a/b.py climbs 2 to reach ROOT
    found = []
    for no, line in enumerate(text.splitlines(), 1):
        climbs = [climb_levels(m["steps"]) for m in CLIMB.finditer(line)]
        if any(c > depth for c in climbs) or ROOT_PARENT.search(line) or OUTSIDE_LITERAL.search(line):
            found.append(f"{relpath}:{no}: {line.strip()}")
    return found


def test_climb_levels_counts_each_step() -> None:
    assert climb_levels(".parents[1]") == 2
    assert climb_levels(".parents[1].parent") == 3
    assert climb_levels(".parent.parent") == 2


def test_the_check_catches_each_way_out() -> None:
    assert outside_lines("tests/x.py", 'S = Path(__file__).resolve().parents[1].parent / "elsewhere"')
    assert outside_lines("bench/x.py", 'S = Path(__file__).resolve().parents[2] / "elsewhere"')
    assert outside_lines("tests/a/x.py", "S = REPO.parent / 'fixtures'")
    assert outside_lines("x.sh", 'cp "../' + 'shared/fixtures" .')  # in pieces: this file is checked too
    assert not outside_lines("tests/a/x.py", "ROOT = Path(__file__).resolve().parents[2]")
    assert not outside_lines("bench/x.py", "ROOT = Path(__file__).resolve().parent.parent")


def test_no_tracked_file_reads_beside_the_repository() -> None:
    found = [
        hit
        for path in tracked_text_files()
        if path.is_file() and path != Path(__file__).resolve()  # this file spells the patterns
        for hit in outside_lines(str(path.relative_to(ROOT)), path.read_text(errors="replace"))
    ]
    assert not found, "paths into the repository's parent folder:\n" + "\n".join(found)
