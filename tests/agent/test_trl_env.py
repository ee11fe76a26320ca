"""StockerToolEnv and its dataset (TRL's environment_factory): tools, masking, the two
rewards against a hand replay, in process and on a live server, the dataset's split, and
GRPOTrainer driving it for 2 steps against a live server."""

from __future__ import annotations

import inspect
import json
import os
import sys
from pathlib import Path

import pandas as pd
import pytest

from stocker_core.agent.errors import AgentError
from stocker_core.agent.pairs import agent_splits
from stocker_core.agent.policy import agent_data
from stocker_core.agent.tool_catalog import TOOL_NAMES, tool_schemas
from stocker_core.agent.trl_dataset import build_trl_dataset, trl_rows
from stocker_core.agent.trl_env import StockerToolEnv, TrlEnvError
from stocker_core.config import Settings, get_settings
from stocker_core.env.actions import Action
from stocker_core.env.environment import TradingEnv
from stocker_core.env.episode import load_episode
from stocker_core.env.portfolio import max_affordable
from stocker_core.env.rewards import RewardParams

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "env"))
from server_testing import live_server  # noqa: E402


@pytest.fixture(scope="module")
def sample_settings(tmp_path_factory) -> Settings:
    """The offline sample source (GOOGL 2009-2018) in a fresh home."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("STOCKER_SOURCE", "sample")
        patch.setenv("STOCKER_HOME", str(tmp_path_factory.mktemp("home")))
        patch.delenv("STOCKER_FILES_DIR", raising=False)
        settings = get_settings(fresh=True)
    get_settings(fresh=True)
    return settings


@pytest.fixture(scope="module")
def rows(sample_settings) -> list[dict]:
    return trl_rows(sample_settings, tickers=["GOOGL"], most=6)


def _replay(settings: Settings, row: dict, decision: str | None, horizon: int = 5) -> dict[str, float]:
    """Both rewards by hand: half invested at the first close, held to the day, the decision,
    held ``horizon - 1`` more sessions."""
    params = RewardParams.from_settings(settings)
    env = TradingEnv(load_episode(row["episode_key"], settings), params)
    obs = env.reset()
    cost = params.transaction_cost
    first = obs.close
    shares = max_affordable(obs.cash / 2, obs.close, cost)
    bh_shares = max_affordable(params.starting_cash, first, cost)
    bh_cash = params.starting_cash - bh_shares * first * (1 + cost)
    obs = env.step(Action.buy(shares)).observation
    while obs.date < row["day"]:
        obs = env.step(Action.hold()).observation
    assert obs.date == row["day"]
    day_close, value = obs.close, obs.cash + obs.position * obs.close
    held = obs.position * obs.close / value
    choice = decision or "HOLD"
    if choice == "BUY":
        action = Action.buy(max_affordable(obs.cash, obs.close, cost))
    elif choice == "SELL":
        action = Action.sell(obs.position)
    else:
        action = Action.hold()
    result = env.step(action)
    after = result.observation
    invested = after.position * day_close / (after.cash + after.position * day_close)
    total = result.reward
    for _ in range(horizon - 1):
        result = env.step(Action.hold())
        total += result.reward
    forward = result.observation.close / day_close - 1
    bh = bh_shares * day_close / (bh_cash + bh_shares * day_close)
    excess = (invested - bh) * forward - cost * abs(invested - held)
    penalty = params.invalid_penalty if decision is None else 0.0
    return {"environment": total - penalty, "excess": excess - penalty}


def test_tools_are_the_agents_plus_trade_with_the_same_schemas():
    from transformers.utils import get_json_schema

    members = {
        n
        for n, _ in inspect.getmembers(StockerToolEnv, predicate=inspect.isfunction)
        if not n.startswith("_")
    }
    assert members == {*TOOL_NAMES, "trade", "reset", "get_reward"}  # what TRL turns into tools, plus its two
    env = StockerToolEnv.__new__(StockerToolEnv)
    derived = [get_json_schema(getattr(env, name)) for name in TOOL_NAMES]
    stored = tool_schemas()
    for schema in (*derived, *stored):
        schema["function"].pop("return", None)
    assert derived == stored
    trade = get_json_schema(env.trade)["function"]
    assert (
        trade["parameters"]["required"] == ["decision"]
        and "BUY" in trade["parameters"]["properties"]["decision"]["description"]
    )


def test_dataset_rows_are_train_split_days_inside_their_episodes(sample_settings, rows):
    data = {"GOOGL": agent_data("GOOGL", sample_settings)}
    train = agent_splits(None, data).splits.range_of("GOOGL", "train")
    assert len(rows) == 6 and [r["day"] for r in rows] == sorted(r["day"] for r in rows)
    for row in rows:
        day = pd.Timestamp(row["day"])
        assert train.contains(day) and row["episode_key"] == f"GOOGL|{row['day'][:8]}01"
        text = json.dumps(row["prompt"])
        assert "GOOGL" not in text and row["day"] not in text  # the prompt says nothing of the stock or day
    valid = trl_rows(sample_settings, tickers=["GOOGL"], split="valid", most=3)
    assert all(pd.Timestamp(r["day"]) > pd.Timestamp(rows[-1]["day"]) for r in valid)
    with pytest.raises(Exception, match="test split is reserved"):
        trl_rows(sample_settings, tickers=["GOOGL"], split="test")
    assert build_trl_dataset(sample_settings, tickers=["GOOGL"], most=2).column_names == [
        "prompt",
        "episode_key",
        "day",
    ]


def test_reset_masks_the_prompt_and_the_tool_answers(sample_settings, rows):
    env = StockerToolEnv(sample_settings)
    row = rows[1]
    prompt = env.reset(**row)
    assert "session 0" in prompt and "GOOGL" not in prompt and row["day"] not in prompt
    assert "BUY invests the whole portfolio in STOCK" in prompt and "call trade" in prompt
    answer = json.loads(env.get_price_history(lookback_days=5))
    assert answer["last_date"] == "session 0" and answer["days"] == 5
    assert "GOOGL" not in json.dumps(answer) and row["day"] not in json.dumps(answer)
    bad = json.loads(env.get_indicators(names=["nope"], lookback_days=5))
    assert "error" in bad and env.invalid_tool_calls == 1
    for _ in range(env.config.max_tool_calls - 2):
        env.get_news(days=7)
    assert "cap" in json.loads(env.get_news(days=3))["error"]
    assert "must be one of" in json.loads(env.trade("maybe"))["error"]
    assert json.loads(env.trade("buy")) == {"placed": "BUY"}
    assert "already placed" in json.loads(env.trade("SELL"))["error"]
    assert "no more tools" in json.loads(env.get_news(days=3))["error"]


@pytest.mark.parametrize("reward", ["environment", "excess"])
def test_rewards_match_a_hand_replay(sample_settings, rows, reward):
    env = StockerToolEnv(sample_settings, reward=reward)
    row = rows[2]
    got = {}
    for decision in ("BUY", "SELL", "HOLD", None):
        env.reset(**row)
        if decision:
            env.trade(decision)
        got[decision] = env.get_reward()
        assert got[decision] == pytest.approx(
            _replay(sample_settings, row, decision)[reward], rel=1e-9, abs=1e-12
        )
    assert len({round(v, 12) for v in got.values()}) == 4  # the three decisions and no decision all differ


def test_bad_rows_and_settings_are_refused_in_one_line(sample_settings, rows):
    env = StockerToolEnv(sample_settings)
    with pytest.raises(TrlEnvError, match="episode_key must look like"):
        env.reset(episode_key="GOOGL 2016", day="2016-03-10")
    with pytest.raises(TrlEnvError, match="not a trading day inside"):
        env.reset(episode_key=rows[0]["episode_key"], day="2030-01-02")
    first = rows[0]["episode_key"].split("|")[1]
    session_one = agent_data("GOOGL", sample_settings).trading_days(pd.Timestamp(first).date())[0]
    with pytest.raises(TrlEnvError, match="first session"):
        env.reset(episode_key=rows[0]["episode_key"], day=session_one.date().isoformat())
    with pytest.raises(TrlEnvError, match="unknown reward"):
        StockerToolEnv(sample_settings, reward="profit")  # type: ignore[arg-type]
    with pytest.raises(AgentError, match="no train-split days|no tickers"):
        trl_rows(sample_settings, tickers=[])


def test_server_mode_scores_as_in_process(sample_settings, rows):
    from stocker_core.env.server import create_app

    pytest.importorskip("openenv.core", reason="openenv 0.10 and its extra (README command 2)")
    local = StockerToolEnv(sample_settings, reward="excess")
    app = create_app(sample_settings, api_key="k3y")
    with (
        live_server(app) as url,
        StockerToolEnv(sample_settings, server_url=url, api_key="k3y", reward="excess") as remote,
    ):
        for row, decision in ((rows[3], "SELL"), (rows[4], "BUY")):
            assert remote.reset(**row) == local.reset(**row)
            remote.trade(decision)
            local.trade(decision)
            assert remote.get_reward() == pytest.approx(local.get_reward(), abs=1e-12)
            assert remote.rewards == pytest.approx(local.rewards, abs=1e-12)
        assert app.state.ws.open == 1  # one connection, kept across resets
    with pytest.raises(TrlEnvError, match="cannot read"):
        StockerToolEnv(sample_settings, server_url="http://127.0.0.1:9")


@pytest.mark.slow
def test_grpo_trainer_drives_a_live_server_for_two_steps(sample_settings, rows, tmp_path, monkeypatch):
    """TRL's own GRPOTrainer with environment_factory against `stocker serve`: 2 steps, the
    rewards come from the environments, and the LoRA adapter is saved."""
    pytest.importorskip("openenv.core", reason="openenv 0.10 and its extra (README command 2)")
    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from trl import GRPOConfig, GRPOTrainer

    from stocker_core.agent.trl_model import trl_chat_model
    from stocker_core.env.server import create_app

    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    torch.set_num_threads(1)
    model, tokenizer = trl_chat_model("tiny")
    app = create_app(sample_settings, api_key="")
    envs: list[StockerToolEnv] = []
    with live_server(app) as url:

        def factory() -> StockerToolEnv:
            envs.append(StockerToolEnv(sample_settings, server_url=url))
            return envs[-1]

        args = GRPOConfig(
            output_dir=str(tmp_path / "run"),
            per_device_train_batch_size=2,
            num_generations=2,
            max_completion_length=16,
            max_tool_calling_iterations=2,
            max_steps=2,
            beta=0.0,
            activation_checkpointing=False,
            learning_rate=1e-3,
            logging_steps=1,
            report_to="none",
            save_strategy="no",
            use_cpu=True,
            bf16=False,
            seed=0,
        )
        trainer = GRPOTrainer(
            model=model,
            processing_class=tokenizer,
            args=args,
            train_dataset=Dataset.from_list(rows[:2]),
            environment_factory=factory,
            peft_config=LoraConfig(r=4, lora_alpha=8, target_modules="all-linear", task_type="CAUSAL_LM"),
        )
        trainer.train()
        trainer.save_model(str(tmp_path / "adapter"))
        assert app.state.ws.open == len(envs)  # one WebSocket session per rollout environment
        for env in envs:
            env.__exit__(None, None, None)
    saved = os.listdir(tmp_path / "adapter")
    # the adapter as the agent_trl policy finds it, scored like any policy (by name only)
    from stocker_core.agent.trl_policy import run_dir, write_run
    from stocker_core.env.policies import policy_names
    from stocker_core.evaluation.backtests import backtest, check_policy_names

    trainer.save_model(str(run_dir(sample_settings) / "adapter"))
    write_run(sample_settings, model="tiny", seed=0, horizon=5, max_new_tokens=16)
    monkeypatch.setenv("STOCKER_SOURCE", "sample")
    monkeypatch.setenv("STOCKER_HOME", str(sample_settings.home))
    get_settings(fresh=True)
    try:
        assert "agent_trl" not in policy_names() and check_policy_names(["agent_trl"]) == ["agent_trl"]
        valid = trl_rows(sample_settings, tickers=["GOOGL"], split="valid", most=1)[0]
        episode = load_episode(valid["episode_key"], sample_settings)
        played = {
            r["policy"]: r for r in backtest(episode, ["agent_trl", "hold"], settings=sample_settings).rows()
        }
    finally:
        monkeypatch.undo()
        get_settings(fresh=True)
    # a random tiny model places no decision: it holds every day, as the hold baseline does
    assert played["agent_trl"]["total_reward"] == pytest.approx(played["hold"]["total_reward"])
    assert {"adapter_config.json", "adapter_model.safetensors"} <= set(saved)
    steps = [h for h in trainer.state.log_history if "reward" in h]
    assert [h["step"] for h in steps] == [1, 2]
    # the last step's reward is the mean of what its environments scored (1 prompt x 2 rollouts)
    last = [env.get_reward() for env in envs]
    assert len(envs) == 2 and steps[-1]["rewards/StockerToolEnv/mean"] == pytest.approx(
        sum(last) / 2, rel=1e-5
    )


def test_the_chat_template_renders_the_tools_and_trl_parses_their_calls(sample_settings):
    """The template given to SmolLM2 and the tiny model: the tools are in the prompt and TRL's
    parser turns a <tool_call> completion into a typed call (what GRPOTrainer runs)."""
    from trl.chat_template_utils import add_response_schema, parse_response

    from stocker_core.agent.trl_model import tiny_chat_tokenizer

    tokenizer = add_response_schema(tiny_chat_tokenizer())
    env = StockerToolEnv(sample_settings)
    tools = [getattr(env, name) for name in (*TOOL_NAMES, "trade")]
    messages = [{"role": "user", "content": "Decide BUY, SELL or HOLD for STOCK."}]
    prompt = tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=False)
    assert '"name": "get_macro_events"' in prompt and '"name": "trade"' in prompt
    prefix = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    call = '{"name": "get_price_history", "arguments": {"lookback_days": "5"}}'
    text = f"<tool_call>\n{call}\n</tool_call><|im_end|>"
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    message = parse_response(tokenizer, ids, prefix=prefix, tools=tools)
    call = message["tool_calls"][0]["function"]
    assert call == {"name": "get_price_history", "arguments": {"lookback_days": 5}}  # typed by the schema
    plain = parse_response(tokenizer, tokenizer("HOLD<|im_end|>")["input_ids"], prefix=prefix, tools=tools)
    assert not plain.get("tool_calls") and "HOLD" in plain["content"]
