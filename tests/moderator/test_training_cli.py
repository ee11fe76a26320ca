"""``stocker train`` through an app of the moderator's area alone."""

import typer
from typer.testing import CliRunner

from stocker_core.cli import build_app
from stocker_core.moderator import commands as moderator_cli


def _app() -> typer.Typer:
    return build_app([moderator_cli.commands])


def test_print_config_shows_the_defaults():
    result = CliRunner().invoke(_app(), ["train", "--print-config"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert "model: tiny" in lines and "rollout_k: 5" in lines and "reward: excess" in lines


def test_yaml_overrides_and_bad_keys(tmp_path):
    good = tmp_path / "train.yaml"
    good.write_text("model: smollm2\ngrpo_steps: 7\n")
    result = CliRunner().invoke(_app(), ["train", "--config", str(good), "--print-config"])
    assert result.exit_code == 0 and "model: smollm2" in result.output and "grpo_steps: 7" in result.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("grpo_stepz: 7\n")
    result = CliRunner().invoke(_app(), ["train", "--config", str(bad)])
    assert result.exit_code == 2 and "grpo_stepz" in result.output
    missing = CliRunner().invoke(_app(), ["train", "--config", str(tmp_path / "none.yaml")])
    assert missing.exit_code == 2 and "cannot read training config" in missing.output


def test_train_without_episodes_is_bad_input(tmp_path, monkeypatch):
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path))
    result = CliRunner().invoke(_app(), ["train", "--stages", "base"])
    assert result.exit_code == 2 and "materialize the env group" in result.output


def test_budget_smoke_and_a_bad_budget():
    smoke = CliRunner().invoke(_app(), ["train", "--budget", "smoke", "--print-config"])
    assert smoke.exit_code == 0, smoke.output
    assert "grpo_steps: 2" in smoke.output and "max_train_states: 32" in smoke.output
    bad = CliRunner().invoke(_app(), ["train", "--budget", "huge"])
    assert bad.exit_code == 2 and "smoke" in bad.output
