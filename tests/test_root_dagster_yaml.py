"""The repository root's dagster.yaml (read by plain `dagster dev` at the root) is a regular
file with the same settings as the CLI's instance template: no symbolic link, which OpenEnv's
`openenv validate .` refuses anywhere in the package."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_root_dagster_yaml_is_a_regular_copy_of_the_template() -> None:
    root = ROOT / "dagster.yaml"
    assert not root.is_symlink() and root.is_file()
    template = ROOT / "stocker_assets" / "dagster.yaml"
    assert yaml.safe_load(root.read_text()) == yaml.safe_load(template.read_text()), (
        "dagster.yaml differs from stocker_assets/dagster.yaml: copy the settings over"
    )
