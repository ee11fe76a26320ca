"""Imports point down only: the import-linter contract in pyproject.toml holds, and it breaks
on a planted upward import (top-level or inside a function, direct or through another module)."""

from __future__ import annotations

import graphlib
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("stocker_core", "stocker_assets")


def _load_drawing_tool():
    """``docs/tools/architecture_drawing.py``: the one reader of the project's imports (the
    architecture page's drawing is made with it; tests/test_architecture_drawing.py)."""
    spec = importlib.util.spec_from_file_location(
        "architecture_drawing", ROOT / "docs" / "tools" / "architecture_drawing.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


drawing_tool = _load_drawing_tool()
_module_names, _imported_modules = drawing_tool.module_names, drawing_tool.imported_modules
LINT = (
    "import sys\n"
    "from importlinter.cli import lint_imports\n"
    "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True))\n"
)


def _lint(root: Path) -> subprocess.CompletedProcess:
    """Run the contract over the packages under ``root`` in a fresh process (so the code
    analysed is the code under ``root``, not what this process already imported)."""
    return subprocess.run(
        [sys.executable, "-c", LINT],
        cwd=root,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def project_copy(tmp_path) -> Path:
    """The project's packages and pyproject.toml copied to a temporary folder."""
    root = tmp_path / "project"
    root.mkdir()
    for package in PACKAGES:
        skip = shutil.ignore_patterns("__pycache__", "static")
        shutil.copytree(ROOT / package, root / package, ignore=skip)
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


def _plant(root: Path, module: str, code: str) -> None:
    """Append ``code`` to ``module`` under ``root`` (creating the module if it is new)."""
    path = root / (module.replace(".", "/") + ".py")
    path.write_text((path.read_text() if path.exists() else "") + "\n" + code + "\n")


def test_the_project_keeps_its_floors():
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 broken" in result.stdout


def test_the_copy_keeps_them_too(project_copy):
    """The control for the planted cases below: the unmodified copy passes."""
    result = _lint(project_copy)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("module", "code", "importer", "imported"),
    [
        # the environment reaching up into the council (what the context package removed)
        (
            "stocker_core.env.observation",
            "def _planted():\n    from stocker_core.council.voting import Council\n\n    return Council",
            "stocker_core.env.observation",
            "stocker_core.council.voting",
        ),
        # the warehouse importing the market calendar at module level
        (
            "stocker_core.warehouse.db",
            "from stocker_core.market.calendar import month_end  # noqa: E402",
            "stocker_core.warehouse.db",
            "stocker_core.market.calendar",
        ),
        # evaluation importing the moderator
        (
            "stocker_core.evaluation.metrics",
            "import stocker_core.moderator.rewards  # noqa: E402",
            "stocker_core.evaluation.metrics",
            "stocker_core.moderator.rewards",
        ),
        # the library importing the Dagster layer
        (
            "stocker_core.config",
            "def _planted():\n    import stocker_assets.definitions\n\n    return stocker_assets",
            "stocker_core.config",
            "stocker_assets.definitions",
        ),
    ],
)
def test_a_planted_upward_import_breaks_the_contract(project_copy, module, code, importer, imported):
    _plant(project_copy, module, code)
    result = _lint(project_copy)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Imports point down only" in result.stdout and " 1 broken" in result.stdout
    assert f"{importer} -> {imported}" in result.stdout


def test_an_upward_import_through_another_module_breaks_it(project_copy):
    """Indirect: env reaches the council through a new module that belongs to no floor."""
    _plant(project_copy, "stocker_core.helpers", "import stocker_core.council.voting")
    _plant(project_copy, "stocker_core.env.observation", "import stocker_core.helpers  # noqa: E402")
    result = _lint(project_copy)
    assert result.returncode == 1, result.stdout
    assert "stocker_core.env.observation -> stocker_core.helpers" in result.stdout
    assert "stocker_core.helpers -> stocker_core.council.voting" in result.stdout


def test_the_definitions_importing_the_engine_breaks_the_dagster_layer(project_copy):
    """Inside stocker_assets: an asset reaching into the run engine (even lazily) breaks the
    second contract; the floors contract still holds."""
    _plant(
        project_copy,
        "stocker_assets.definitions.market.assets",
        "def _planted():\n    from stocker_assets.engine.runner import StepEvent\n\n    return StepEvent",
    )
    result = _lint(project_copy)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 kept, 1 broken" in result.stdout
    assert "stocker_assets.definitions.market.assets -> stocker_assets.engine.runner" in result.stdout


def package_circles(root: Path) -> list[str]:
    """One circle of imports (``a -> b -> a``) for each package whose modules import each
    other in a circle, counting only arrows between modules of that one package."""
    known = _module_names(root)
    graphs: dict[str, dict[str, set[str]]] = {}
    for module, path in known.items():
        package = module.rpartition(".")[0]
        siblings = {t for t in _imported_modules(module, path, known) if t.rpartition(".")[0] == package}
        graphs.setdefault(package, {})[module] = siblings
    circles = []
    for _, graph in sorted(graphs.items()):
        try:
            tuple(graphlib.TopologicalSorter(graph).static_order())
        except graphlib.CycleError as exc:
            circles.append(" -> ".join(exc.args[1]))
    return circles


def test_no_circle_between_modules_of_one_package():
    """Move the shared type down instead (e.g. the data-source interface apart from the builder
    of the built-in sources): a circle inside a package hides which module is the base."""
    assert package_circles(ROOT) == []


def test_a_planted_circle_is_found(project_copy):
    """A function-level import of the bars into the calendar (below them) closes a circle."""
    before = package_circles(project_copy)
    planted = "def _planted():\n    from stocker_core.market import bars\n\n    return bars"
    _plant(project_copy, "stocker_core.market.calendar", planted)
    after = package_circles(project_copy)
    assert len(after) == len(before) + 1, after
    assert any("stocker_core.market.calendar" in circle for circle in after), after
