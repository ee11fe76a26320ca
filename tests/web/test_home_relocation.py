"""A home moves: built in one folder, copied (``cp -a``: ``copytree(symlinks=True)``) to another and
the original deleted, every stored path resolves in the copy — no table column and no text file
of a model folder holds the old absolute path — the web page shows every training image,
``stocker report`` and ``stocker ledger verify`` work, and the trained policies load. A home
written before paths were stored relative (absolute paths into the folder it was built in)
still resolves in its copy, and its tables are rewritten relative on the next write."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import numpy as np
import pytest
from fastapi.testclient import TestClient
from stocker_testing import make_bars
from typer.testing import CliRunner
from web_testing import KEY, build_tiny_home

from stocker_core.config import Settings, get_settings
from stocker_core.warehouse.db import Warehouse

MODEL_TEXT = (".json", ".jsonl", ".md", ".txt", ".yaml", ".html")
LEDGER_CLOCK = "2016-03-01T22:00:00+00:00"  # after a session's close in the sample's GOOGL bars


def _moderator(settings: Settings) -> None:
    """The moderator's base and an SFT adapter (untrained LoRA weights: what is tested is where
    the files go and what they record), finished as the trainer finishes a stage."""
    from peft import get_peft_model

    from stocker_core.language_model.factory import load_base
    from stocker_core.language_model.lora import lora_config
    from stocker_core.language_model.runtime import weights_sha256
    from stocker_core.moderator.config import TrainingConfig
    from stocker_core.moderator.training import StageReport, finish_stage, model_dir, run_base

    config = TrainingConfig()
    finish_stage(run_base(config, settings), settings, None, config, "reloc")
    loaded = load_base(model_dir(settings, "base"))
    folder = model_dir(settings, "sft")
    get_peft_model(loaded.model, lora_config(config.lora_spec(), loaded)).save_pretrained(folder)
    sha = weights_sha256(folder)
    report = StageReport("sft", folder, loaded.name, config.public(), config.seed, [KEY], "", "", 0.1, sha,
                         steps=2, curve_name="loss", curve=[(0, 1.0), (1, 0.5)])  # fmt: skip
    finish_stage(report, settings, None, config, "reloc")


def _agent(settings: Settings) -> None:
    from stocker_core.agent.config import AgentConfig
    from stocker_core.agent.data import AgentData
    from stocker_core.agent.store import model_run_row
    from stocker_core.agent.training import train_agent
    from stocker_core.baselines.drl.store import record_model_runs

    closes = 100 * np.exp(np.cumsum(np.random.default_rng(3).normal(0.0003, 0.015, 300)))
    config = AgentConfig(tiny_hidden_size=32, tiny_intermediate_size=64, tiny_layers=1, tiny_heads=2,
                         sft_steps=2, sft_batch_size=4, rl_steps=1, rl_prompts_per_step=2, num_generations=2,
                         max_train_pairs=4, max_valid_pairs=2, eval_every=1, max_new_tokens=16,
                         decision_fit_steps=0)  # fmt: skip
    result = train_agent(config, settings, data={"SYN": AgentData("SYN", make_bars(closes), source="test")})
    record_model_runs(Warehouse(settings.warehouse_path), [model_run_row(result, "reloc:agent_rl")])


def _drl(settings: Settings) -> None:
    from stocker_core.baselines.drl.store import model_run_row, record_model_runs
    from stocker_core.baselines.drl.training import DrlConfig, train_drl_agents
    from stocker_core.env.episode import load_episode

    config = DrlConfig(algos=("ppo",), timesteps=64, ppo_n_steps=32, ppo_batch_size=16)
    results = train_drl_agents([load_episode(KEY, settings)], settings.home, config)
    record_model_runs(
        Warehouse(settings.warehouse_path), [model_run_row(r, f"reloc:{r.algo}") for r in results]
    )


def _stocker(*args: str):
    from stocker_core.cli import build_app

    get_settings(fresh=True)
    result = CliRunner().invoke(build_app(), list(args))
    assert result.exit_code == 0, result.output
    return result


def _absolute_in_tables(home: Path, needle: str) -> list[str]:
    """``table.column: value`` of every VARCHAR or JSON cell (any table or view) holding ``needle``."""
    con = duckdb.connect(str(home / "stocker.duckdb"), read_only=True, config={"file_search_path": str(home)})
    try:
        columns = con.execute(
            "SELECT table_schema, table_name, column_name FROM information_schema.columns "
            "WHERE data_type IN ('VARCHAR', 'JSON')"
        ).fetchall()
        found = []
        for schema, table, column in columns:
            cell = f'CAST("{column}" AS VARCHAR)'
            sql = f"SELECT {cell} FROM {schema}.{table} WHERE {cell} LIKE ?"
            hits = con.execute(sql, [f"%{needle}%"]).fetchall()
            found += [f"{schema}.{table}.{column}: {value}" for (value,) in hits]
        return found
    finally:
        con.close()


def _absolute_in_files(home: Path, needle: str) -> list[str]:
    """Text files of the home's model and report folders (and its loose files) naming ``needle``."""
    found = []
    for path in sorted(home.rglob("*")):
        if path.is_file() and path.suffix in MODEL_TEXT and needle in path.read_text(errors="replace"):
            found.append(str(path.relative_to(home)))
    return found


def _check_copy(home: Path, gone: Path) -> None:
    """Everything the issue names works in ``home`` although ``gone`` (where it was built) is gone."""
    from stocker_core.agent.store import current_run
    from stocker_core.baselines.drl.agents import load_drl_agent
    from stocker_core.env.environment import TradingEnv
    from stocker_core.env.episode import load_episode
    from stocker_core.env.policies import make_policy
    from stocker_core.env.rewards import RewardParams
    from stocker_core.web.app import create_web_app

    settings = get_settings(fresh=True)
    assert settings.home == home and not gone.exists()
    client = TestClient(create_web_app(settings, api_key=""))
    runs = client.get("/web/api/training").json()["runs"]
    by_name = {r["model_name"]: r for r in runs}
    assert {"moderator_base", "moderator_sft", "agent_rl", "ppo"} <= set(by_name)
    for run in runs:
        assert run["files"] is None or run["run_id"] == "ppo-abc", run  # the tiny home's fake zip
        if run["kind"] != "drl":
            image = client.get(f"/web/api/training/{run['run_id']}/image")
            assert image.status_code == 200 and image.content[:4] == b"\x89PNG", run["run_id"]
    assert by_name["ppo"]["learning"] and by_name["moderator_sft"]["curves"]
    chart = Warehouse(settings.warehouse_path).read_table("market.charts", "SYN")["path"].iloc[0]
    assert Path(chart).parent.parent.parent == home and Path(chart).is_file()
    assert client.get(f"/web/api/charts/SYN/{Path(chart).stem}").status_code == 200

    env = TradingEnv(load_episode(KEY, settings), RewardParams())
    for name in ("moderator_sft", "agent_rl", "ppo"):  # the trained policies load from this home
        policy = make_policy(name, env, settings=settings)
        assert policy.act(env.reset()) is not None, name
    assert Path(current_run(home)["run_dir"]).parent.parent.parent == home
    assert Path(load_drl_agent("ppo", home)[1].model_path).is_file()

    report = Path(_stocker("report").stdout.strip())
    assert report == home / "reports" / "evaluation" / "report.html" and report.is_file()
    assert "ledger intact: 1 entries" in _stocker("ledger", "verify").output


@pytest.mark.slow
def test_a_copied_home_keeps_every_path_command_and_view(tmp_path, monkeypatch):
    built = tmp_path / "built" / "home"
    copy = tmp_path / "elsewhere" / "home"
    monkeypatch.setenv("STOCKER_HOME", str(built))
    monkeypatch.setenv("STOCKER_SOURCE", "sample")
    monkeypatch.setenv("STOCKER_DEFAULT_TICKERS", '["GOOGL"]')
    build_tiny_home(built)  # prices, an episode, votes, a chart, backtests, rolling rows, a report
    settings = get_settings(fresh=True)
    _moderator(settings)
    _agent(settings)
    _drl(settings)
    monkeypatch.setenv("STOCKER_CLOCK", LEDGER_CLOCK)
    _stocker("ledger", "record", "--policies", "buy_and_hold")
    monkeypatch.delenv("STOCKER_CLOCK")
    _stocker("report")

    shutil.copytree(built, copy, symlinks=True)
    shutil.rmtree(built)
    monkeypatch.setenv("STOCKER_HOME", str(copy))
    _check_copy(copy, built)
    assert _absolute_in_tables(copy, str(built)) == []
    assert _absolute_in_files(copy, str(built)) == []
    assert _absolute_in_tables(copy, str(copy)) == [] and _absolute_in_files(copy, str(copy)) == []
    adapter = json.loads((copy / "models" / "moderator_sft" / "adapter_config.json").read_text())
    assert adapter["base_model_name_or_path"] == "models/moderator_base"

    # a home written before paths were relative: absolute paths into the folder it was built in
    with Warehouse(copy / "stocker.duckdb").connect() as con:
        con.execute("UPDATE models.runs SET path = ? || '/' || path", [str(built)])
    for pointer, key in ((copy / "models" / "agent_rl" / "current.json", "run_dir"),
                         (copy / "models" / "drl" / "ppo" / "current.json", "model_path")):  # fmt: skip
        manifest = json.loads(pointer.read_text())
        pointer.write_text(json.dumps({**manifest, key: f"{built}/{manifest[key]}"}))
    runs = Warehouse(copy / "stocker.duckdb").query("SELECT count(*) AS n FROM models.runs")["n"].iloc[0]
    assert len(_absolute_in_tables(copy, str(built))) == runs
    _check_copy(copy, built)  # re-anchored on read; the report's write rewrote the rows relative
    assert _absolute_in_tables(copy, str(built)) == []
