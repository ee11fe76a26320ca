"""``agent_trl``: the model trained with TRL on ``StockerToolEnv`` as an environment policy,
so ``stocker backtest --policies agent_trl`` scores it like any other.

``examples/train_trl_grpo.py`` saves its run in ``$STOCKER_HOME/models/agent_trl/``: the
LoRA adapter with its tokenizer and chat template (``adapter/``) and ``run.json`` (the base
model's name, the horizon, the completion length). Every day of the episodes is decided in
one batched loop when the policy is built, as in training: the masked decision prompt and
the tool schemas through the chat template, greedy generation, tool calls parsed by TRL's
``parse_response`` and answered by the agent's tools, until ``trade`` (or the tool-call cap;
no decision holds). The decision maps to the environment as the agent's do
(``decision_action``: BUY all in, SELL flat, HOLD keep).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from stocker_core.agent.config import AgentConfig, agent_config
from stocker_core.agent.errors import AgentNotTrainedError
from stocker_core.agent.parsing import DECISIONS
from stocker_core.agent.tool_catalog import TOOL_NAMES
from stocker_core.config import Settings
from stocker_core.env.actions import Action
from stocker_core.env.environment import Observation, TradingEnv
from stocker_core.env.policies import register_policy, require_settings

POLICY = "agent_trl"
RUN_FILE = "run.json"

__all__ = ["POLICY", "RUN_FILE", "TrlAgentBatch", "decide_days", "run_dir", "write_run"]


def run_dir(settings: Settings) -> Path:
    """Where the TRL run lives: ``$STOCKER_HOME/models/agent_trl``."""
    return settings.home / "models" / POLICY


def write_run(settings: Settings, **fields: Any) -> Path:
    """Record the run beside its adapter (``run.json``); the adapter's base model folder, when
    it lies in the home, is made home-relative (``warehouse.home_paths``)."""
    from stocker_core.atomic_files import write_text_atomic
    from stocker_core.warehouse.home_paths import relocate_files

    path = run_dir(settings) / RUN_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(fields, indent=2) + "\n")
    relocate_files(path.parent, settings.home)
    return path


@lru_cache(maxsize=2)
def _load(folder: str) -> tuple[Any, Any, dict[str, Any]]:
    from peft import PeftModel
    from transformers import AutoTokenizer

    from stocker_core.agent.trl_model import trl_chat_model

    run = json.loads((Path(folder) / RUN_FILE).read_text())
    model, _ = trl_chat_model(run["model"], seed=int(run.get("seed", 0)))
    tokenizer = AutoTokenizer.from_pretrained(Path(folder) / "adapter")
    tokenizer.padding_side = "left"
    model = PeftModel.from_pretrained(model, Path(folder) / "adapter").eval()
    return model, tokenizer, run


def load_run(settings: Settings) -> tuple[Any, Any, dict[str, Any]]:
    """(model with the adapter, tokenizer, run.json); AgentNotTrainedError without a run."""
    folder = run_dir(settings)
    if not (folder / RUN_FILE).is_file() or not (folder / "adapter" / "adapter_config.json").is_file():
        raise AgentNotTrainedError(
            f"no TRL-trained agent in {folder}: run examples/train_trl_grpo.py first (it saves it there)"
        )
    return _load(str(folder))


def _opening_states(
    items: Sequence[tuple[str, pd.Timestamp]], settings: Settings, config: AgentConfig, horizon: int
) -> list[dict[str, Any]]:
    """Each (ticker, day)'s conversation so far (the system and decision prompts), its tools,
    its mask and its tool calls counted."""
    from stocker_core.agent.masking import agent_mask
    from stocker_core.agent.policy import agent_data
    from stocker_core.agent.tools import AgentTools
    from stocker_core.agent.trl_dataset import SYSTEM_PROMPT
    from stocker_core.agent.trl_env import decision_prompt

    states = []
    for ticker, day in items:
        data = agent_data(ticker, settings)
        mask = agent_mask(data, day) if settings.llm_mask else None
        prompt = decision_prompt(ticker, day, mask, horizon, config.max_tool_calls)
        messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}]
        states.append({"tools": AgentTools(data, day), "mask": mask, "messages": messages, "calls": 0})
    return states


def _next_messages(
    model: Any, tokenizer: Any, conversations: list[list[dict[str, Any]]], tools: list, max_new_tokens: int
) -> list[dict[str, Any]]:
    """The model's next assistant message in each conversation: one greedy batched generation,
    each completion parsed (tool calls included) by TRL's ``parse_response``."""
    import torch
    from trl.chat_template_utils import parse_response

    texts = [
        tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=False)
        for messages in conversations
    ]
    batch = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    with torch.no_grad():
        out = model.generate(
            **batch, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id
        )
    width = batch["input_ids"].shape[1]
    replies = []
    for row in range(len(conversations)):
        prefix = batch["input_ids"][row][batch["attention_mask"][row].bool()].tolist()
        completion = [t for t in out[row, width:].tolist() if t != tokenizer.pad_token_id]
        replies.append(parse_response(tokenizer, completion, prefix=prefix, tools=tools))
    return replies


def _answer_call(call: dict[str, Any], state: dict[str, Any], max_tool_calls: int) -> tuple[str, str | None]:
    """The tool's answer to one call (``trade``, a masked agent tool, or the cap's error) and
    the decision it placed (None unless a valid ``trade``)."""
    from stocker_core.agent.trl_env import masked_tool_answer

    name = call.get("function", {}).get("name")
    arguments = call.get("function", {}).get("arguments") or {}
    if name == "trade":
        choice = str(arguments.get("decision", "")).strip().upper() if isinstance(arguments, dict) else ""
        answer = (
            {"placed": choice} if choice in DECISIONS else {"error": "decision must be BUY, SELL or HOLD"}
        )
        return json.dumps(answer), choice if choice in DECISIONS else None
    if state["calls"] >= max_tool_calls:
        return json.dumps({"error": f"tool call cap ({max_tool_calls}) reached: call trade now"}), None
    state["calls"] += 1
    text, _ = masked_tool_answer(state["tools"], state["mask"], name, arguments)
    return text, None


def decide_days(
    model: Any,
    tokenizer: Any,
    items: Sequence[tuple[str, pd.Timestamp]],
    settings: Settings,
    config: AgentConfig,
    horizon: int,
    max_new_tokens: int = 96,
) -> list[str | None]:
    """The decision (BUY/SELL/HOLD, None when none was placed) of each (ticker, day), all
    decided together: one generation per turn for every unfinished conversation."""
    from stocker_core.agent.trl_env import StockerToolEnv

    schema_source = StockerToolEnv(settings, config=config)
    tools = [getattr(schema_source, name) for name in (*TOOL_NAMES, "trade")]
    states = _opening_states(items, settings, config, horizon)
    decisions: list[str | None] = [None] * len(states)
    active = list(range(len(states)))
    for _ in range(config.max_tool_calls + 1):
        if not active:
            break
        replies = _next_messages(
            model, tokenizer, [states[i]["messages"] for i in active], tools, max_new_tokens
        )
        still = []
        for i, message in zip(active, replies, strict=True):
            state = states[i]
            state["messages"].append(message)
            calls = message.get("tool_calls") or []
            for call in calls:
                text, placed = _answer_call(call, state, config.max_tool_calls)
                decisions[i] = placed if placed is not None else decisions[i]
                name = call.get("function", {}).get("name")
                state["messages"].append({"role": "tool", "name": str(name), "content": text})
            if calls and decisions[i] is None:
                still.append(i)
        active = still
    return decisions


class TrlAgentBatch:
    """``agent_trl``'s decisions for many environments, every (ticker, day) decided once when built."""

    def __init__(self, envs: Sequence[TradingEnv], settings: Settings) -> None:
        from stocker_core.agent.policy import decision_action

        config = agent_config()
        model, tokenizer, run = load_run(settings)
        keys = list(
            dict.fromkeys((env.episode.ticker, pd.Timestamp(d)) for env in envs for d in env.episode.dates)
        )
        decided = decide_days(
            model,
            tokenizer,
            keys,
            settings,
            config,
            int(run.get("horizon", config.horizon)),
            int(run.get("max_new_tokens", 96)),
        )
        self.decisions = dict(zip(keys, decided, strict=True))
        self.days = [[(env.episode.ticker, pd.Timestamp(d)) for d in env.episode.dates] for env in envs]
        self.costs = [env.params.transaction_cost for env in envs]
        self._action = decision_action

    def __call__(self, live: Sequence[int], observations: Sequence[Observation]) -> list[Action]:
        return [
            self._action(self.decisions[self.days[i][o.step]] or "HOLD", o, self.costs[i])
            for i, o in zip(live, observations, strict=True)
        ]


class TrlAgentPolicy:
    """``agent_trl`` in one environment."""

    def __init__(self, env: TradingEnv, settings: Settings) -> None:
        self.batch = TrlAgentBatch([env], settings)

    def act(self, observation: Observation) -> Action:
        return self.batch([0], [observation])[0]


def register_policies() -> None:
    """``agent_trl``: opt in (played only when named; its model is trained outside the
    pipeline), fitted on the train split (called by the composition root)."""
    register_policy(
        POLICY,
        lambda env, seed, settings: TrlAgentPolicy(env, require_settings(POLICY, settings)),
        lambda envs, seeds, settings: TrlAgentBatch(envs, require_settings(POLICY, settings)),
        fitted_on_train=True,
        opt_in=True,
    )
