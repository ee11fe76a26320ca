"""GRPO on the environment's reward (TRL ``GRPOTrainer``), continuing the SFT LoRA adapter.

CPU settings from TRAINING_NOTES: fp32 (``bf16=False``), no gradient checkpointing,
``beta=0`` (no reference model), a learning rate that moves a LoRA (1e-3 for tiny),
groups of ``num_generations`` completions of a few tokens.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stocker_core.training.config import TrainingConfig
from stocker_core.training.dataset import EpisodeContext, trl_records
from stocker_core.training.models import LoadedModel
from stocker_core.training.rewards import RolloutReward
from stocker_core.training.runtime import (
    Progress,
    StageLog,
    drop_printer,
    library_warnings_silenced,
    quiet_libraries,
    seed_everything,
    stage_callback,
    trainer_precision,
)
from stocker_core.training.sft import StageResult


def rollout_reward(contexts: dict[str, EpisodeContext], config: TrainingConfig) -> RolloutReward:
    """The training reward configured by ``config`` (K, continuation, penalty)."""
    return RolloutReward(
        contexts,
        k=config.rollout_k,
        continuation=config.continuation,
        unparsable_penalty=config.unparsable_penalty,
    )


def run_grpo(
    policy: LoadedModel,
    rows: Sequence[dict[str, Any]],
    contexts: dict[str, EpisodeContext],
    config: TrainingConfig,
    adapter_dir: Path,
    progress: Progress | None = None,
) -> tuple[StageResult, RolloutReward]:
    """Train ``policy`` (a base with a trainable LoRA adapter) with GRPO on ``rows``; save the
    adapter to ``adapter_dir``. Returns the stage result and the reward (with its counters)."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    quiet_libraries()
    seed_everything(config.seed, config.threads)
    started = time.perf_counter()
    dataset = Dataset.from_list(trl_records(rows, policy.prompt_style, with_target=False))
    reward = rollout_reward(contexts, config)
    log = StageLog()
    with tempfile.TemporaryDirectory(prefix="stocker-grpo-") as scratch:
        args = GRPOConfig(
            output_dir=scratch,
            max_steps=config.grpo_steps,
            per_device_train_batch_size=config.grpo_batch_size,
            num_generations=config.num_generations,
            max_completion_length=config.max_completion_length,
            learning_rate=config.grpo_learning_rate,
            beta=config.beta,
            temperature=config.temperature,
            logging_steps=config.logging_steps,
            save_strategy="no",
            report_to=[],
            seed=config.seed,
            data_seed=config.seed,
            activation_checkpointing=False,
            disable_tqdm=True,
            dataloader_num_workers=0,
            log_completions=False,
            **trainer_precision(),
        )
        trainer = GRPOTrainer(
            model=policy.model,
            reward_funcs=[reward],
            args=args,
            train_dataset=dataset,
            processing_class=policy.tokenizer,
            callbacks=[stage_callback("grpo", log, progress)],
        )
        drop_printer(trainer)
        with library_warnings_silenced():
            trainer.train()
        adapter_dir.mkdir(parents=True, exist_ok=True)
        trainer.model.save_pretrained(adapter_dir)
        steps = int(trainer.state.global_step)
    return StageResult(adapter_dir, log, time.perf_counter() - started, steps), reward
