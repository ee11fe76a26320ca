"""``lora_layers`` reaches every adapter the moderator builds on a pretrained model: the SFT
teacher path (TRL's ``SFTTrainer``, ``sft_teacher: ideal``) adapts the last blocks only, as the
reward-teacher path and the RL stage do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("trl")

from safetensors import safe_open  # noqa: E402
from training_testing import pretrained_folder  # noqa: E402

from stocker_core.language_model.factory import create_base  # noqa: E402
from stocker_core.moderator.config import TrainingConfig  # noqa: E402
from stocker_core.moderator.sft import run_sft  # noqa: E402

WORDS = ["up", "down", "flat", "buy", "sell", "hold"]
BLOCKS = 3


def adapted_blocks(adapter_dir: Path) -> set[int]:
    """The decoder blocks that hold a weight of the saved adapter."""
    with safe_open(str(adapter_dir / "adapter_model.safetensors"), "pt") as saved:
        names = list(saved.keys())
    assert names and all(".layers." in n for n in names), names
    return {int(n.split(".layers.")[1].split(".")[0]) for n in names}


def test_the_sft_teacher_path_adapts_only_the_last_lora_layers_blocks(tmp_path: Path) -> None:
    config = TrainingConfig(
        model=str(pretrained_folder(tmp_path / "base", WORDS, BLOCKS)),
        lora_layers=1,
        sft_teacher="ideal",
        sft_max_steps=1,
        sft_batch_size=2,
        logging_steps=1,
    )
    rows = [
        {"prompt_text": prompt, "target": target, "episode_key": "E", "snapshot": "{}"}
        for prompt, target in [("up up", "buy"), ("down down", "sell"), ("flat up", "hold"), ("up", "buy")]
    ]
    result = run_sft(create_base(config.model_spec()), rows, config, tmp_path / "sft")
    assert adapted_blocks(result.adapter_dir) == {BLOCKS - 1}
    saved = json.loads((result.adapter_dir / "adapter_config.json").read_text())
    assert saved["layers_to_transform"] == [BLOCKS - 1] and saved["modules_to_save"] is None
