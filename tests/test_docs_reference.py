"""The configuration and command-line references are generated from the code
(``docs/hooks/reference.py``, an MkDocs hook) and complete: every field of every settings and
training configuration class, with a description, and every ``stocker`` command. A new field,
class or command cannot be left out, and no page names a ``STOCKER_*`` variable that does
not exist."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG_PAGE = ROOT / "docs" / "configuration.md"
CLI_PAGE = ROOT / "docs" / "reference" / "cli.md"

DOCUMENTED = (
    "stocker_core.config:Settings",
    "stocker_core.moderator.config:TrainingConfig",
    "stocker_core.agent.config:AgentConfig",
    "stocker_core.baselines.drl.training:DrlConfig",
    "stocker_core.moderator.learning_check:LearningCheckConfig",
)
"""The classes the configuration page documents; ``test_every_settings_class_is_documented``
finds any ``BaseSettings`` class of the library that is missing here."""

# Variables the pages may name that are not fields: read elsewhere, or a family's prefix.
OUTSIDE_SETTINGS = {"STOCKER_API_KEY", "STOCKER_WEB_SCREENSHOTS"}
PREFIXES = ("STOCKER_MODERATOR_", "STOCKER_AGENT_", "STOCKER_SYNTH_", "STOCKER_")


@pytest.fixture(scope="module")
def reference():
    """The hook module, imported from its file as MkDocs imports it."""
    spec = importlib.util.spec_from_file_location(
        "stocker_docs_reference", ROOT / "docs" / "hooks" / "reference.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_each_documented_class_has_every_field_described(reference) -> None:
    missing = []
    for path in DOCUMENTED:
        fields = reference.class_fields(path)
        assert fields, path
        missing += [f"{path}.{f.name}" for f in fields if not f.text.strip()]
    assert not missing, f"fields without a description or docstring: {missing}"


def test_the_configuration_page_lists_every_field_of_each_class(reference) -> None:
    page = reference.expand(CONFIG_PAGE.read_text(encoding="utf-8"))
    assert "<!-- reference:" not in page
    absent = []
    for path in DOCUMENTED:
        for field in reference.class_fields(path):
            if f'<span id="{field.anchor}"></span>' not in page:
                absent.append(f"{path}.{field.name}")
    assert not absent, f"not on the configuration page: {absent}"
    assert page.count('<span id="stocker_home"></span>') == 1  # each field once
    assert "Not yet sorted into a section above" not in page, "sort the new Settings fields into a section"


def test_a_new_field_lands_in_the_catch_all_table(reference) -> None:
    """``*`` takes what no earlier table of the page showed: a field nobody listed shows up."""
    markdown = (
        "<!-- reference: fields stocker_core.config:Settings home -->\n\n"
        "<!-- reference: fields stocker_core.config:Settings * -->\n"
    )
    page = reference.expand(markdown)
    assert page.count('id="stocker_home"') == 1 and 'id="stocker_source"' in page
    assert "Not yet sorted into a section above" in page
    with pytest.raises(reference.ReferenceMarkerError):
        reference.expand("<!-- reference: fields stocker_core.config:Settings no_such_field -->")


def test_defaults_types_and_run_fields_come_from_the_code(reference) -> None:
    from stocker_core.moderator.config import TrainingConfig

    fields = {f.name: f for f in reference.class_fields("stocker_core.moderator.config:TrainingConfig")}
    assert fields["objective"].default == f"`{TrainingConfig.model_fields['objective'].default}`"
    assert fields["objective"].type.startswith("one of `reward_regression`")
    assert fields["market_relative"].default == "`true`"
    assert fields["lora_dropout"].type == "float, ≥ 0, < 1"
    settings = {f.name: f for f in reference.class_fields("stocker_core.config:Settings")}
    assert settings["hf_model"].variable == "STOCKER_HF_MODEL" and settings["hf_model"].run
    assert not settings["w_perf"].run and settings["w_perf"].default == "`0.7`"


def _settings_classes() -> set[str]:
    """``module:Class`` of every class in ``stocker_core`` that subclasses ``BaseSettings``."""
    found = set()
    for path in (ROOT / "stocker_core").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and any(
                (isinstance(b, ast.Name) and b.id == "BaseSettings")
                or (isinstance(b, ast.Attribute) and b.attr == "BaseSettings")
                for b in node.bases
            ):
                found.add(f"{module}:{node.name}")
    return found


def test_every_settings_class_is_documented() -> None:
    classes = _settings_classes()
    assert "stocker_core.config:Settings" in classes
    assert classes <= set(DOCUMENTED), f"document these on docs/configuration.md: {classes - set(DOCUMENTED)}"
    page = CONFIG_PAGE.read_text(encoding="utf-8")
    for path in DOCUMENTED:
        assert f"<!-- reference: fields {path} * -->" in page, f"{path}: no catch-all table on the page"


def test_every_command_is_in_the_cli_reference(reference) -> None:
    assert "<!-- reference: cli -->" in CLI_PAGE.read_text(encoding="utf-8")
    commands = reference.commands(reference.cli_command())
    names = {" ".join(path) for path, _ in commands}
    assert {"stocker train", "stocker episode run", "stocker ledger verify", "stocker materialize"} <= names
    page = reference.cli_reference()
    for name in names:
        assert re.search(rf"^#+ `{re.escape(name)}`$", page, re.M), name
    run = page[page.index("`stocker episode run`") :]
    assert "`--policy`" in run and "`buy_and_hold`" in run  # options with their defaults


def _documented_variables() -> dict[str, str]:
    found: dict[str, str] = {}
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for name in re.findall(r"\bSTOCKER_[A-Z0-9_]+", path.read_text(encoding="utf-8")):
            found.setdefault(name, str(path.relative_to(ROOT)))
    return found


def test_every_variable_the_docs_name_exists(reference) -> None:
    known = set(OUTSIDE_SETTINGS)
    for path in DOCUMENTED:
        known |= {f.variable for f in reference.class_fields(path) if f.variable}
    unknown = {
        name: where
        for name, where in _documented_variables().items()
        if name not in known and name not in PREFIXES
    }
    assert not unknown, f"pages name variables no settings class has: {unknown}"
