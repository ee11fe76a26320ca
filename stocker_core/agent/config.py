"""AgentConfig: every knob of the tool-using agent (loop, reward, model, training budget)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from stocker_core.agent.errors import AgentError
from stocker_core.config import config_problems
from stocker_core.language_model.forward_return import MAX_HORIZON
from stocker_core.language_model.lora import LoraFields
from stocker_core.language_model.tiny_model import TinyModelFields

DEFAULT_THETA = 0.015
THETA_GRID = (0.010, 0.015, 0.020)


class AgentConfig(
    TinyModelFields.with_defaults(tiny_hidden_size=96, tiny_intermediate_size=192),
    LoraFields.with_defaults(lora_r=8, lora_alpha=16),
    BaseSettings,
):
    """Settings of the agent; each field can be set as ``STOCKER_AGENT_<FIELD>``.

    Loop: ``max_tool_calls`` per decision, ``max_turns`` (tool turns plus the answer).
    Reward: ``theta`` and ``horizon`` of the result score, ``w_format`` / ``w_tool`` of the
    process score, the reasoning length range. Model and training: ``model`` (``tiny``,
    ``smollm2``, a Hub id or folder), the warm start and RL budgets. The tiny model's sizes and
    the LoRA are the language-model floor's blocks (``language_model.tiny_model``,
    ``language_model.lora``), the tiny model smaller than the moderator's and the adapter of rank 8.
    """

    model_config = SettingsConfigDict(env_prefix="STOCKER_AGENT_", extra="forbid", allow_inf_nan=False)

    # loop
    max_tool_calls: int = Field(default=4, ge=1, le=8, description="tool calls per decision")
    max_turns: int = Field(
        default=6, ge=2, le=12, description="turns per decision: the tool turns and the answer"
    )
    # reward
    theta: float = Field(default=DEFAULT_THETA, gt=0, lt=0.5, description="result score band")
    horizon: int = Field(default=5, ge=1, le=MAX_HORIZON, description="forward return horizon, trading days")
    result_mode: Literal["graded", "band"] = Field(
        default="graded",
        description="graded: the decision's excess over buy-and-hold after costs in units of θ, clipped to "
        "±1; band: 1 when the answer matches the forward return's θ band (BUY above θ, SELL below −θ, "
        "HOLD within), else 0",
    )
    transaction_cost: float = Field(
        default=0.001, ge=0, lt=0.1, description="cost rate charged by the graded result (the environment's)"
    )
    w_result: float = Field(default=1.0, ge=0, description="weight of the result score")
    w_format: float = Field(default=0.5, ge=0, description="weight of the format score")
    w_tool: float = Field(default=0.5, ge=0, description="weight of the tool-use score")
    min_reasoning_words: int = Field(
        default=2, ge=0, description="shortest reasoning the format score accepts"
    )
    max_reasoning_words: int = Field(
        default=120, ge=1, description="longest reasoning the format score accepts"
    )
    # model
    model: str = Field(
        default="tiny",
        description="the agent's base model: tiny (a 2-layer Llama over the agent's word vocabulary), "
        "smollm2 or a Hugging Face id or folder (bf16 on CUDA, always 4-bit there through bitsandbytes; "
        "fp32 on CPU)",
    )
    seed: int = Field(default=0, ge=0, description="seed of the tiny model, the pairs drawn and sampling")
    threads: int = Field(default=1, ge=1, description="torch CPU threads")
    max_new_tokens: int = Field(default=40, ge=4, description="tokens per turn")
    # supervised warm start on scripted traces
    sft_steps: int = Field(default=150, ge=0, description="steps of the supervised warm start")
    sft_batch_size: int = Field(default=16, ge=1, description="traces per warm-start step")
    sft_learning_rate: float = Field(default=3e-3, gt=0, description="learning rate of the warm start")
    # decision fit: every train pair's decision against its three known results
    decision_fit_steps: int = Field(
        default=100, ge=0, description="updates of the decision fit between the warm start and RL (0: none)"
    )
    decision_fit_batch: int = Field(default=64, ge=1, description="traces per decision-fit update")
    decision_fit_learning_rate: float = Field(
        default=1e-3, gt=0, description="learning rate of the decision fit"
    )
    decision_fit_eval_every: int = Field(default=25, ge=1, description="steps between valid checks")
    # RL (group-relative policy gradient with LoRA)
    rl_steps: int = Field(default=60, ge=0, description="updates of the RL stage")
    rl_prompts_per_step: int = Field(default=8, ge=1, description="(ticker, day) prompts per RL step")
    num_generations: int = Field(default=4, ge=2, description="rollouts per prompt (the group)")
    rl_learning_rate: float = Field(default=2e-3, gt=0, description="learning rate of the RL stage")
    temperature: float = Field(default=1.0, gt=0, description="sampling temperature of the RL rollouts")
    exact_decision: bool = Field(
        default=True,
        description="add a loss over the final BUY/SELL/HOLD of each rollout with all three results "
        "known (its tool turns fixed; word-level models)",
    )
    objective: Literal["soft_target", "reward_regression", "policy_gradient"] = Field(
        default="soft_target",
        description="the decision loss: cross-entropy toward softmax(result/target_temperature) "
        "(its gradient does not fade on confident mistakes), least squares toward the centred "
        "results (its argmax is the best decision in expectation) or the exact expected-result gradient",
    )
    target_temperature: float = Field(
        default=0.5, gt=0, description="soft target temperature, in units of the results' spread"
    )
    warm_start_teacher: Literal["format", "scripted"] = Field(
        default="format",
        description="format: the tool script with balanced decisions and no verdict before the answer; "
        "scripted: agent_scripted's trend-following traces (measured to fight the news signal)",
    )
    eval_every: int = Field(default=15, ge=1, description="RL steps between validation points")
    max_train_pairs: int = Field(default=400, ge=1, description="(ticker, date) pairs sampled for training")
    max_valid_pairs: int = Field(default=60, ge=1, description="held-out pairs for the curves")
    tickers: list[str] | None = Field(default=None, description="default: the settings' tickers")

    @model_validator(mode="after")
    def _ranges(self) -> AgentConfig:
        if self.max_turns < 2:
            raise ValueError("max_turns must leave room for a tool turn and the answer")
        if self.min_reasoning_words > self.max_reasoning_words:
            raise ValueError("min_reasoning_words must not exceed max_reasoning_words")
        return self

    def public(self) -> dict[str, Any]:
        """JSON-ready values (for metadata and ``models.runs``)."""
        return self.model_dump(mode="json")


def agent_config(**overrides: Any) -> AgentConfig:
    """Defaults, then ``STOCKER_AGENT_*``, then ``overrides`` (None values ignored);
    AgentError naming each bad field."""
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return AgentConfig(**given)
    except ValidationError as exc:
        problems = config_problems(exc, AgentConfig, "STOCKER_AGENT_", given=given)
        raise AgentError(f"bad agent config: {problems}") from None
