"""SFT warm start: an adapter on the base model, from one of two teachers
(``TrainingConfig.sft_teacher``):

- ``reward`` (the default): every answer's training reward as a soft target
  ``softmax(R/τ_sft)`` at a high temperature (``answer_fit``): a high-entropy start that
  leans the way the rewards do, the checkpoint chosen on the valid split (step 0, the base,
  included: the warm start never ends worse on valid than the base).
- ``ideal``: the hindsight-DP completion of each step (TRL ``SFTTrainer``, loss on the
  completion and ``<eos>`` only). Measured: mostly future noise (correlation 0.39 with the
  planted factor); imitating it gave a coin-flip long/flat policy. Kept to compare.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from stocker_core.language_model.checkpoints import StageResult
from stocker_core.language_model.factory import LoadedModel
from stocker_core.language_model.lora import lora_config
from stocker_core.language_model.runtime import (
    Progress,
    StageLog,
    drop_printer,
    library_warnings_silenced,
    quiet_libraries,
    seed_everything,
    stage_callback,
    trainer_precision,
)
from stocker_core.moderator.config import TrainingConfig
from stocker_core.moderator.dataset import trl_records


@contextmanager
def tensorboard_dir(folder: Path) -> Iterator[None]:
    """Transformers' TensorBoard callback writes where ``TENSORBOARD_LOGGING_DIR`` says (else
    inside the trainer's scratch folder, which is deleted): point it beside the model."""
    saved = os.environ.get("TENSORBOARD_LOGGING_DIR")
    os.environ["TENSORBOARD_LOGGING_DIR"] = str(folder)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("TENSORBOARD_LOGGING_DIR", None)
        else:
            os.environ["TENSORBOARD_LOGGING_DIR"] = saved


def run_sft(
    base: LoadedModel,
    rows: Sequence[dict[str, Any]],
    config: TrainingConfig,
    adapter_dir: Path,
    progress: Progress | None = None,
) -> StageResult:
    """Train a LoRA adapter on ``rows`` (prompt -> ideal completion) and save it to ``adapter_dir``."""
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    quiet_libraries()
    seed_everything(config.seed, config.threads)
    started = time.perf_counter()
    records = trl_records(rows, base.prompt_style, with_target=True)
    dataset = Dataset.from_list([{"prompt": r["prompt"], "completion": r["completion"]} for r in records])
    log = StageLog()
    with tempfile.TemporaryDirectory(prefix="stocker-sft-") as scratch:
        args = SFTConfig(
            output_dir=scratch,
            num_train_epochs=config.sft_epochs,
            max_steps=config.sft_max_steps,
            per_device_train_batch_size=config.sft_batch_size,
            learning_rate=config.sft_learning_rate,
            lr_scheduler_type="linear",
            logging_steps=config.logging_steps,
            save_strategy="no",
            report_to=list(config.report_to),
            seed=config.seed,
            data_seed=config.seed,
            activation_checkpointing=False,
            completion_only_loss=True,
            disable_tqdm=True,
            dataloader_num_workers=0,
            **trainer_precision(),
        )
        trainer = SFTTrainer(
            model=base.model,
            args=args,
            train_dataset=dataset,
            processing_class=base.tokenizer,
            peft_config=lora_config(config.lora_spec(), base),
            callbacks=[stage_callback("sft", log, progress)],
        )
        drop_printer(trainer)
        with (
            library_warnings_silenced(),
            tensorboard_dir(adapter_dir.parent / "tensorboard" / adapter_dir.name),
        ):
            trainer.train()
        adapter_dir.mkdir(parents=True, exist_ok=True)
        trainer.model.save_pretrained(adapter_dir)
        steps = int(trainer.state.global_step)
    return StageResult(adapter_dir, log, time.perf_counter() - started, steps)


def run_reward_sft(
    base: LoadedModel,
    rows: Sequence[dict[str, Any]],
    contexts: dict[str, Any],
    config: TrainingConfig,
    adapter_dir: Path,
    valid: tuple[Sequence[dict[str, Any]], dict[str, Any]] | None = None,
    progress: Progress | None = None,
) -> StageResult:
    """A fresh adapter on ``base`` fitted to softmax(R/``sft_temperature``) over the nine answers
    of every row (the reward teacher), the checkpoint chosen on ``valid``; saved to ``adapter_dir``."""
    from peft import get_peft_model

    from stocker_core.moderator.reward_regression import run_answer_fit

    seed_everything(config.seed, config.threads)
    base.model = get_peft_model(base.model, lora_config(config.lora_spec(), base))
    result, _, _ = run_answer_fit(base, rows, contexts, config, adapter_dir, "sft", valid, progress)
    return result
